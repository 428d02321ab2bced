//! `warren mcp list | add | remove | enable | disable | test`: an agent's MCP servers started
//! in its sandbox, and the configured servers edited through the same validated, atomic edits
//! as the window's MCP servers page. `add --json` → the server as saved (`{"name", "command",
//! "args", "env", "url", "agents"}`); `remove --json` → `{"removed", "agents_losing"}`;
//! `enable | disable --json` → `{"agent", "mcp_servers"}`; `test --json` → one server as `list`
//! shows it (exit 1 when it failed to start).

use super::Ctx;
use crate::output::shown_line;
use std::process::ExitCode;
use warren_api::mcp::McpServerView;
use warren_api::mcp_servers::{McpEditPreview, McpEnvVar, McpServerInput};
use warren_api::{ApiError, ErrorCode};

/// `warren mcp ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Start an agent's MCP servers in its sandbox, list their status and tools, stop them.
    List {
        /// The agent's alias.
        #[arg(long)]
        agent: String,
    },
    /// Add a stdio server to `[mcp_servers]` (or change one with --replace).
    Add(AddArgs),
    /// Remove a server; the agents that used it are named.
    Remove {
        /// The server's name.
        name: String,
        /// Print the change and the agents that would lose it; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Let an agent use a server (adds it to the agent's `mcp_servers`).
    Enable {
        /// The server's name.
        name: String,
        /// The agent's alias.
        #[arg(long)]
        agent: String,
    },
    /// Stop an agent using a server (removes it from the agent's `mcp_servers`).
    Disable {
        /// The server's name.
        name: String,
        /// The agent's alias.
        #[arg(long)]
        agent: String,
    },
    /// Start one server in an agent's sandbox, show its tools or its error, stop it.
    Test {
        /// The server's name.
        name: String,
        /// The agent whose sandbox it starts in.
        #[arg(long)]
        agent: String,
    },
}

/// `warren mcp add`.
#[derive(clap::Args)]
pub struct AddArgs {
    /// The server's name (1 to 32 of a-z, 0-9, `_`, `-`).
    name: String,
    /// The program (a name on PATH, or a path).
    #[arg(long)]
    command: String,
    /// One argument (repeat for more, in order).
    #[arg(long = "arg", allow_hyphen_values = true)]
    args: Vec<String>,
    /// An environment variable as NAME=VALUE (repeat for more).
    #[arg(long = "env")]
    env: Vec<String>,
    /// An agent that uses it (repeat for more).
    #[arg(long = "agent")]
    agents: Vec<String>,
    /// Change the server of that name instead of adding one (its agents are set to --agent's
    /// when given, else kept).
    #[arg(long)]
    replace: bool,
    /// Print the change and the validator's findings; write nothing.
    #[arg(long)]
    dry_run: bool,
}

fn env_var(text: &str) -> Result<McpEnvVar, ApiError> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => Ok(McpEnvVar {
            name: name.trim().to_string(),
            value: value.to_string(),
        }),
        _ => Err(ApiError::new(
            ErrorCode::InvalidArgument,
            format!("--env `{text}`: expected NAME=VALUE"),
        )),
    }
}

fn render_preview(ctx: &Ctx, r: Result<McpEditPreview, ApiError>) -> ExitCode {
    let invalid = matches!(&r, Ok(p) if !p.errors.is_empty());
    let code = ctx.out.result(r, |p| {
        let mut s = String::new();
        for l in &p.diff {
            let mark = match l.kind {
                warren_api::profiles::DiffKind::Add => "+ ",
                warren_api::profiles::DiffKind::Remove => "- ",
                _ => "  ",
            };
            s.push_str(&format!("{mark}{}\n", l.text));
        }
        if !p.agents_losing.is_empty() {
            s.push_str(&format!(
                "agents losing it: {}\n",
                p.agents_losing.join(", ")
            ));
        }
        for e in &p.errors {
            s.push_str(&format!("error: {}: {}\n", e.path, e.message));
        }
        s
    });
    if invalid {
        ExitCode::from(2)
    } else {
        code
    }
}

fn render_server(s: &McpServerView) -> String {
    let mut t = String::new();
    let sandbox = s
        .sandbox
        .as_deref()
        .map(|b| format!(", sandbox {b}"))
        .unwrap_or_default();
    t.push_str(&format!(
        "{} [{}{}] {}: {}\n",
        s.name,
        s.transport.as_str(),
        sandbox,
        s.target,
        s.status.as_str()
    ));
    if let Some(e) = &s.error {
        t.push_str(&format!("  error: {}\n", shown_line(e)));
    }
    for tool in &s.tools {
        t.push_str(&format!(
            "  {}  {}\n",
            shown_line(&tool.name),
            shown_line(&tool.description)
        ));
    }
    t
}

fn agent_servers(
    ctx: &Ctx,
    agent: &str,
    r: Result<Vec<String>, ApiError>,
    verb: &str,
    name: &str,
) -> ExitCode {
    let r = r.map(|list| serde_json::json!({ "agent": agent, "mcp_servers": list }));
    ctx.out
        .result(r, |_| format!("{verb} `{name}` for `{agent}`"))
}

/// Runs a `warren mcp` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::List { agent } => {
            let r = ctx.block_on_multi(ctx.warren.mcp_list(&agent));
            ctx.out.result(r, |servers| {
                if servers.is_empty() {
                    return format!("agent `{agent}` has no MCP servers\n");
                }
                servers.iter().map(render_server).collect()
            })
        }
        Cmd::Add(a) => {
            let env: Result<Vec<McpEnvVar>, ApiError> =
                a.env.iter().map(String::as_str).map(env_var).collect();
            let env = match env {
                Ok(e) => e,
                Err(e) => return ctx.out.fail(&e),
            };
            let input = McpServerInput {
                name: a.name,
                command: a.command,
                args: a.args,
                env,
                agents: (!a.agents.is_empty() || !a.replace).then_some(a.agents),
                existing: a.replace,
            };
            if a.dry_run {
                return render_preview(ctx, ctx.warren.preview_mcp_server(&input));
            }
            ctx.out.result(ctx.warren.save_mcp_server(&input), |s| {
                if s.agents.is_empty() {
                    format!("saved MCP server `{}` (no agent uses it yet)", s.name)
                } else {
                    format!(
                        "saved MCP server `{}`, used by {}",
                        s.name,
                        s.agents.join(", ")
                    )
                }
            })
        }
        Cmd::Remove { name, dry_run } => {
            if dry_run {
                return render_preview(ctx, ctx.warren.preview_remove_mcp_server(&name));
            }
            let r = ctx
                .warren
                .remove_mcp_server(&name)
                .map(|lost| serde_json::json!({ "removed": name, "agents_losing": lost }));
            ctx.out.result(r, |v| {
                let lost: Vec<&str> = v["agents_losing"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
                    .unwrap_or_default();
                if lost.is_empty() {
                    format!("removed MCP server `{name}`")
                } else {
                    format!(
                        "removed MCP server `{name}`; agents that lost it: {}",
                        lost.join(", ")
                    )
                }
            })
        }
        Cmd::Enable { name, agent } => {
            let r = ctx.warren.set_agent_mcp_server(&agent, &name, true);
            agent_servers(ctx, &agent, r, "enabled", &name)
        }
        Cmd::Disable { name, agent } => {
            let r = ctx.warren.set_agent_mcp_server(&agent, &name, false);
            agent_servers(ctx, &agent, r, "disabled", &name)
        }
        Cmd::Test { name, agent } => match ctx.block_on_multi(ctx.warren.mcp_test(&agent, &name)) {
            Err(e) => ctx.out.fail(&e),
            Ok(s) => {
                let failed = s.error.is_some();
                ctx.out.ok(&s, || render_server(&s));
                if failed {
                    ExitCode::from(1)
                } else {
                    ExitCode::SUCCESS
                }
            }
        },
    }
}
