//! One module per command area; each `run` parses nothing more than clap gave it, calls one
//! `warren-api` function and renders the result.

pub mod acp;
pub mod agents;
pub mod approvals;
pub mod choices;
pub mod config;
pub mod cron;
pub mod doctor;
pub mod import;
pub mod init;
pub mod lifecycle;
pub mod mcp;
pub mod memory;
pub mod policy;
pub mod profiles;
pub mod providers;
pub mod receipts;
pub mod run;
pub mod secrets;
pub mod serve;
pub mod sessions;
pub mod settings;
pub mod tool;
pub mod usage;

use crate::output::Output;

/// What every command gets: the service handle and the renderer.
pub struct Ctx {
    /// The install.
    pub warren: warren_api::Warren,
    /// The renderer.
    pub out: Output,
}

impl Ctx {
    /// Runs an async service function on a multi-threaded runtime (turns run tools on
    /// blocking threads while events stream).
    pub fn block_on_multi<F: std::future::Future>(&self, fut: F) -> F::Output {
        match tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
        {
            Ok(rt) => rt.block_on(fut),
            Err(e) => {
                eprintln!("error: cannot start the async runtime: {e}");
                std::process::exit(1)
            }
        }
    }

    /// Runs an async service function to completion on a single-threaded runtime.
    pub fn block_on<F: std::future::Future>(&self, fut: F) -> F::Output {
        match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt.block_on(fut),
            Err(e) => {
                eprintln!("error: cannot start the async runtime: {e}");
                std::process::exit(1)
            }
        }
    }
}
