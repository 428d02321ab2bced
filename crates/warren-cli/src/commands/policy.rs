//! `warren policy show | check`.

use super::Ctx;
use std::process::ExitCode;
use warren_api::policy::HostEnv;

/// `warren policy ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// The effective policy of an agent: roots and tiers, workspace_only, the sandbox and why.
    Show {
        /// The agent's alias.
        #[arg(long)]
        agent: String,
    },
    /// Whether an agent may read or write a path; prints the deciding rule (exit 0 allowed, 1 denied).
    #[command(group(clap::ArgGroup::new("access").required(true).args(["read", "write"])))]
    Check {
        /// The agent's alias.
        #[arg(long)]
        agent: String,
        /// Check read access.
        #[arg(long)]
        read: bool,
        /// Check write access.
        #[arg(long)]
        write: bool,
        /// The path (relative paths are inside the agent's workspace; `~` is your home).
        path: String,
    },
}

/// The host facts the policy services need, captured here in the binary.
pub fn host_env() -> HostEnv {
    HostEnv {
        home: std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(Into::into),
        vars: std::env::vars().collect(),
    }
}

/// Runs a `warren policy` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    let host = host_env();
    match cmd {
        Cmd::Show { agent } => ctx.out.result(ctx.warren.policy_show(&agent, &host), |p| {
            let mut t = format!(
                "agent:           {}\nrisk profile:    {} ({})\nworkspace:       {}\nworkspace_only:  {}\n",
                p.agent, p.risk_profile, p.level, p.workspace, p.workspace_only
            );
            t.push_str("roots:\n");
            for r in &p.roots {
                let name = r.name.as_deref().map(|n| format!(" {n}")).unwrap_or_default();
                let missing = if r.exists { "" } else { " (missing)" };
                t.push_str(&format!("  {:<11} {}{}  [{}{}]\n", r.tier, r.path, missing, r.source, name));
            }
            for f in &p.forbidden_paths {
                t.push_str(&format!("  forbidden   {f}\n"));
            }
            for s in &p.runtime_state {
                t.push_str(&format!("  protected   {s}\n"));
            }
            t.push_str(&format!("allowed commands: {}\n", p.allowed_commands.join(" ")));
            t.push_str(&format!(
                "budget:          {} actions/hour, shell timeout {}s\n",
                p.max_actions_per_hour, p.shell_timeout_secs
            ));
            let s = &p.sandbox;
            t.push_str(&format!(
                "sandbox:         {} -> {} ({})\n",
                s.configured,
                s.effective.as_deref().unwrap_or("UNAVAILABLE"),
                s.error.as_deref().unwrap_or(&s.reason)
            ));
            for n in &s.notes {
                t.push_str(&format!("  note: {n}\n"));
            }
            t
        }),
        Cmd::Check {
            agent,
            read: _,
            write,
            path,
        } => match ctx.warren.policy_check(&agent, write, &path, &host) {
            Ok(c) => {
                let code = ctx.out.ok(&c, || {
                    format!(
                        "{} {} {} (rule {})",
                        if c.allowed { "allowed" } else { "denied" },
                        c.access,
                        c.path,
                        c.rule
                    )
                });
                if c.allowed {
                    code
                } else {
                    ExitCode::from(1)
                }
            }
            Err(e) => ctx.out.fail(&e),
        },
    }
}
