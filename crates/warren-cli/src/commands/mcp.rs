//! `warren mcp list`.

use super::Ctx;
use crate::output::shown_line;
use std::process::ExitCode;

/// `warren mcp ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Start an agent's MCP servers in its sandbox, list their status and tools, stop them.
    List {
        /// The agent's alias.
        #[arg(long)]
        agent: String,
    },
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
                let mut t = String::new();
                for s in servers {
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
                }
                t
            })
        }
    }
}
