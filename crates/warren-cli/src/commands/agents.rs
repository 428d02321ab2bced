//! `warren agents list | show | create` (rename, delete, archives, restore: see `lifecycle`).

use super::Ctx;
use std::process::ExitCode;
use warren_types::{CreateAgentRequest, MemoryBackendKind};

/// `warren agents ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// List agents.
    List,
    /// Show one agent with its grants and the references to it.
    Show {
        /// The agent's alias.
        alias: String,
    },
    /// Create an agent (comments in the config are kept).
    Create {
        /// The new alias.
        alias: String,
        /// Risk profile name.
        #[arg(long)]
        risk_profile: String,
        /// Runtime profile name.
        #[arg(long)]
        runtime_profile: Option<String>,
        /// Provider reference, "family.alias".
        #[arg(long)]
        model_provider: Option<String>,
        /// Memory backend: sqlite, postgres, lucid, markdown, qdrant or none.
        #[arg(long, value_parser = clap::builder::ValueParser::new(|s: &str| {
            MemoryBackendKind::from_name(s).ok_or_else(|| format!(
                "unknown memory backend `{s}` (expected sqlite, postgres, lucid, markdown, qdrant or none)"))
        }))]
        memory_backend: Option<MemoryBackendKind>,
        /// Give the new agent the workspace folder already at its path (refused otherwise
        /// when that folder is not empty).
        #[arg(long)]
        adopt_workspace: bool,
    },
    /// Rename an agent: every reference, its workspace and its owned state follow.
    Rename(super::lifecycle::RenameArgs),
    /// Delete an agent into an archive under data/agents/_deleted/.
    Delete(super::lifecycle::DeleteArgs),
    /// List deletion archives with their manifests.
    Archives,
    /// Restore an agent from a deletion archive.
    Restore(super::lifecycle::RestoreArgs),
    /// Pause an agent (or every agent with --all): it runs no new turn until resumed.
    Pause(PauseArgs),
    /// Resume a paused agent (or every paused agent with --all).
    Resume(PauseArgs),
}

/// Which agents `pause` / `resume` act on.
#[derive(clap::Args)]
pub struct PauseArgs {
    /// The agent's alias.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    alias: Option<String>,
    /// Every agent.
    #[arg(long)]
    all: bool,
}

fn pause(ctx: &Ctx, a: PauseArgs, paused: bool) -> ExitCode {
    let r = ctx.block_on(async {
        match &a.alias {
            Some(alias) if !a.all => ctx.warren.set_agent_paused(alias, paused).await,
            _ => ctx.warren.set_all_paused(paused).await,
        }
    });
    ctx.out.result(r, |set| {
        if set.is_empty() {
            "no agent is paused".into()
        } else {
            format!("paused: {}", set.join(", "))
        }
    })
}

/// Runs a `warren agents` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::Rename(a) => super::lifecycle::rename(ctx, a),
        Cmd::Delete(a) => super::lifecycle::delete(ctx, a),
        Cmd::Archives => super::lifecycle::archives(ctx),
        Cmd::Restore(a) => super::lifecycle::restore(ctx, a),
        Cmd::Pause(a) => pause(ctx, a, true),
        Cmd::Resume(a) => pause(ctx, a, false),
        Cmd::List => ctx.out.result(ctx.warren.list_agents(), |agents| {
            if agents.is_empty() {
                return "no agents".into();
            }
            let mut s = format!(
                "{:<24} {:<8} {:<14} {:<14} {:<20} {}\n",
                "ALIAS", "ENABLED", "RISK", "RUNTIME", "PROVIDER", "MEMORY"
            );
            for a in agents {
                s.push_str(&format!(
                    "{:<24} {:<8} {:<14} {:<14} {:<20} {}\n",
                    a.alias,
                    if a.enabled { "yes" } else { "no" },
                    a.risk_profile,
                    a.runtime_profile.as_deref().unwrap_or("-"),
                    a.model_provider.as_deref().unwrap_or("-"),
                    a.memory_backend.as_str()
                ));
            }
            s
        }),
        Cmd::Show { alias } => ctx.out.result(ctx.warren.show_agent(&alias), |d| {
            let s = &d.summary;
            let mut t = format!(
                "agent:          {}\nenabled:        {}\nrisk profile:   {}\nruntime:        {}\nprovider:       {}\nmemory:         {}\nworkspace:      {}\n",
                s.alias,
                s.enabled,
                s.risk_profile,
                s.runtime_profile.as_deref().unwrap_or("(defaults)"),
                s.model_provider.as_deref().unwrap_or("-"),
                s.memory_backend.as_str(),
                s.workspace
            );
            t.push_str(&format!("delegates:      {}\n", list(&d.delegates)));
            for g in &d.workspace_grants {
                t.push_str(&format!("workspace grant: {} ({})\n", g.agent, g.access));
            }
            for g in &d.memory_grants {
                match &g.categories {
                    Some(c) => t.push_str(&format!("memory grant:   {} [{}]\n", g.agent, c.join(", "))),
                    None => t.push_str(&format!("memory grant:   {} (all categories)\n", g.agent)),
                }
            }
            t.push_str(&format!("referenced by:  {}\n", list(&d.referenced_by)));
            t
        }),
        Cmd::Create {
            alias,
            risk_profile,
            runtime_profile,
            model_provider,
            memory_backend,
            adopt_workspace,
        } => {
            let req = CreateAgentRequest {
                alias,
                risk_profile,
                runtime_profile,
                model_provider,
                memory_backend,
            };
            ctx.out.result(ctx.warren.create_agent_with(req, adopt_workspace), |a| {
                format!("created agent `{}` (workspace {})", a.alias, a.workspace)
            })
        }
    }
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.join(", ")
    }
}
