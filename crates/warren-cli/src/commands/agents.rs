//! `warren agents list | show | create | set | grant | memory-grant` (rename, delete, archives, restore: see `lifecycle`).

use super::choices::{Access, Backend};
use super::Ctx;
use std::process::ExitCode;
use warren_api::{AgentChange, AgentEdit, AgentField};
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
        /// Risk profile name (default: the one the window's create form starts with,
        /// `balanced` when the install has it).
        #[arg(long)]
        risk_profile: Option<String>,
        /// Runtime profile name.
        #[arg(long)]
        runtime_profile: Option<String>,
        /// Provider reference, "family.alias".
        #[arg(long)]
        model_provider: Option<String>,
        /// Memory backend.
        #[arg(long, value_enum)]
        memory_backend: Option<Backend>,
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
    /// List the unfinished renames, deletes and restores (with --finish: try again to finish
    /// them).
    Unfinished(super::lifecycle::UnfinishedArgs),
    /// Pause an agent (or every agent with --all): it runs no new turn until resumed.
    Pause(PauseArgs),
    /// Resume a paused agent (or every paused agent with --all).
    Resume(PauseArgs),
    /// Change one setting: risk_profile, runtime_profile, model_provider, memory_backend,
    /// enabled, delegates (comma-separated or a JSON list) or unrestricted_filesystem.
    Set(SetArgs),
    /// Grant access on a sibling's workspace: read, write, read_write, or none to remove it.
    Grant(GrantArgs),
    /// Grant reading a sibling's memory (every category, or only --categories), or remove it.
    MemoryGrant(MemoryGrantArgs),
}

/// `warren agents set A KEY VALUE`.
#[derive(clap::Args)]
pub struct SetArgs {
    /// The agent's alias.
    alias: String,
    /// The setting.
    key: String,
    /// The new value (JSON when it parses as JSON, else text).
    #[arg(required_unless_present = "unset", conflicts_with = "unset")]
    value: Option<String>,
    /// Remove the key so its default applies.
    #[arg(long)]
    unset: bool,
    /// Print the change and the validator's findings; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `warren agents grant A PEER ACCESS`.
#[derive(clap::Args)]
pub struct GrantArgs {
    /// The agent receiving the grant.
    alias: String,
    /// The sibling whose workspace it gets access to.
    peer: String,
    /// The access (none removes the grant).
    access: Access,
    /// Print the change and the validator's findings; write nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `warren agents memory-grant A PEER [--categories C,D] [--remove]`.
#[derive(clap::Args)]
pub struct MemoryGrantArgs {
    /// The agent receiving the grant.
    alias: String,
    /// The sibling whose memory it may read.
    peer: String,
    /// Only rows in these categories (exact names, comma-separated); default every category.
    #[arg(long, value_delimiter = ',', conflicts_with = "remove")]
    categories: Option<Vec<String>>,
    /// Remove the grant.
    #[arg(long)]
    remove: bool,
    /// Print the change and the validator's findings; write nothing.
    #[arg(long)]
    dry_run: bool,
}

fn edit(ctx: &Ctx, alias: String, change: AgentChange, dry_run: bool) -> ExitCode {
    let edit = AgentEdit {
        alias,
        changes: vec![change],
    };
    if dry_run {
        return super::settings::render_preview(
            ctx,
            ctx.warren
                .preview_agent_edit(&edit)
                .map(warren_api::profiles::ProfilePreview::from),
        );
    }
    ctx.out.result(ctx.warren.save_agent_edit(&edit), |d| {
        format!(
            "saved `{}`; it applies from the agent's next turn",
            d.summary.alias
        )
    })
}

fn set(ctx: &Ctx, a: SetArgs) -> ExitCode {
    let Some(field) = AgentField::from_name(&a.key) else {
        let names: Vec<&str> = AgentField::ALL.iter().map(|f| f.name()).collect();
        return ctx.out.fail(&warren_api::ApiError::new(
            warren_api::ErrorCode::InvalidArgument,
            format!(
                "unknown setting `{}`{} (expected one of: {})",
                a.key,
                warren_types::did_you_mean_hint(&a.key, &names),
                names.join(", ")
            ),
        ));
    };
    let value = match a.value.as_deref() {
        None => None,
        Some(raw) => match super::settings::parse_value(raw, field == AgentField::Delegates) {
            Ok(v) => Some(v),
            Err(e) => return ctx.out.fail(&e),
        },
    };
    edit(ctx, a.alias, AgentChange::Set { field, value }, a.dry_run)
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
        Cmd::Unfinished(a) => super::lifecycle::unfinished(ctx, a),
        Cmd::Pause(a) => pause(ctx, a, true),
        Cmd::Resume(a) => pause(ctx, a, false),
        Cmd::Set(a) => set(ctx, a),
        Cmd::Grant(a) => edit(
            ctx,
            a.alias,
            AgentChange::Grant {
                peer: a.peer,
                access: a.access.into(),
            },
            a.dry_run,
        ),
        Cmd::MemoryGrant(a) => edit(
            ctx,
            a.alias,
            AgentChange::MemoryGrant {
                peer: a.peer,
                categories: a.categories,
                remove: a.remove,
            },
            a.dry_run,
        ),
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
            if d.referenced_by.is_empty() {
                t.push_str("referenced by:  nothing\n");
            } else {
                t.push_str("referenced by:\n");
                for r in &d.referenced_by {
                    t.push_str(&format!("  {}\n", r.in_words()));
                }
            }
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
            // An empty risk profile is the install's default (the same as the window's).
            let req = CreateAgentRequest {
                alias,
                risk_profile: risk_profile.unwrap_or_default(),
                runtime_profile,
                model_provider,
                memory_backend: memory_backend.map(MemoryBackendKind::from),
            };
            ctx.out.result(ctx.warren.create_agent_with(req, adopt_workspace), |a| {
                format!(
                    "created agent `{}` with risk profile `{}` (workspace {})",
                    a.alias, a.risk_profile, a.workspace
                )
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
