//! `warren serve`: the headless runtime (cron, ACP session liveness) until SIGTERM or Ctrl-C.
//! Refused (exit 1, `runtime_owned`) while another process, `warren serve` or the desktop app,
//! runs the install's runtime.

use super::Ctx;
use std::process::ExitCode;

/// Resolves on SIGTERM or SIGINT.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
        }
        Err(e) => {
            eprintln!("warning: cannot watch SIGTERM ({e}); stop with Ctrl-C");
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// Runs `warren serve`.
pub fn run(ctx: &Ctx) -> ExitCode {
    let owner = match ctx.warren.acquire_runtime("warren serve") {
        Ok(o) => o,
        Err(e) => return ctx.out.fail(&e),
    };
    let result = ctx.block_on_multi(ctx.warren.serve(&owner, shutdown_signal(), |agents, jobs| {
        eprintln!(
            "warren serve: ready (pid {}, {agents} agents, {jobs} cron jobs)",
            std::process::id()
        );
    }));
    drop(owner);
    ctx.out.result(result, |r| {
        format!(
            "warren serve: stopped ({} cron runs started, {} cancelled at shutdown)",
            r.runs_started, r.cancelled_at_shutdown
        )
    })
}
