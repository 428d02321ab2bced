//! `warren acp --agent A`: the Agent Client Protocol over stdin/stdout for an editor.

use super::Ctx;
use std::process::ExitCode;

/// Arguments of `warren acp`.
#[derive(clap::Args)]
pub struct Args {
    /// The agent the editor talks to.
    #[arg(long)]
    agent: String,
}

/// Runs `warren acp`: serves until the client closes stdin.
pub fn run(ctx: &Ctx, args: Args) -> ExitCode {
    let result = ctx.block_on_multi(async {
        // Unfinished renames, deletes and restores are finished before any turn runs.
        ctx.warren.resume_pending().await;
        ctx.warren
            .serve_acp(
                &args.agent,
                std::process::id(),
                tokio::io::stdin(),
                tokio::io::stdout(),
            )
            .await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // stdout belongs to the protocol: the error goes to stderr only.
        Err(e) => {
            eprintln!("error: {}", e.message);
            ExitCode::from(crate::output::exit_code(&e))
        }
    }
}
