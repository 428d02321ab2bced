//! `warren receipts verify --agent A`.

use super::Ctx;
use std::process::ExitCode;

/// `warren receipts ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Verify an agent's receipt chain; exit 1 when a record was edited, removed or reordered.
    Verify {
        /// The agent.
        #[arg(long)]
        agent: String,
    },
}

/// Runs a `warren receipts` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::Verify { agent } => match ctx.block_on(ctx.warren.verify_receipts(&agent)) {
            Err(e) => ctx.out.fail(&e),
            Ok(v) if v.ok => ctx.out.ok(&v, || {
                format!(
                    "receipts of `{}`: {} checked, chain intact",
                    v.agent, v.checked
                )
            }),
            Ok(v) => {
                if ctx.out.json() {
                    ctx.out.ok(&v, String::new);
                } else {
                    eprintln!("receipts of `{}`: chain broken", v.agent);
                    for p in &v.problems {
                        eprintln!("  {p}");
                    }
                }
                ExitCode::from(1)
            }
        },
    }
}
