//! `warren sessions list [--agent A]`: the chat sessions the window's Live screen lists.
//! `--json` → `[{"id", "agent", "kind", "title", "turns", "started_at", "last_activity"}]`,
//! newest activity first.

use super::Ctx;
use crate::output::shown_line;
use std::process::ExitCode;

/// `warren sessions ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// List sessions, newest activity first: id, agent, kind, turns, last activity and title.
    List {
        /// Only this agent's sessions.
        #[arg(long)]
        agent: Option<String>,
    },
}

/// Runs a `warren sessions` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::List { agent } => {
            let r = ctx.block_on(ctx.warren.sessions(agent.as_deref()));
            ctx.out.result(r, |list| {
                if list.is_empty() {
                    return "no sessions stored".into();
                }
                let mut s = format!(
                    "{:<36}  {:<16} {:<5} {:>5}  {:<27}  {}\n",
                    "ID", "AGENT", "KIND", "TURNS", "LAST ACTIVITY", "TITLE"
                );
                for v in list {
                    s.push_str(&format!(
                        "{:<36}  {:<16} {:<5} {:>5}  {:<27}  {}\n",
                        v.id,
                        shown_line(v.agent.as_deref().unwrap_or("(deleted)")),
                        v.kind.as_str(),
                        v.turns,
                        v.last_activity,
                        shown_line(&v.title)
                    ));
                }
                s
            })
        }
    }
}
