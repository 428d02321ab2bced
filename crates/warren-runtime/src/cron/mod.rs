//! Cron (rules §1.1 `[cron.<id>]`): jobs from the config plus jobs created at runtime
//! (`data/cron.db`), UTC cron expressions, run history, and the missed-run policy — after a
//! sleep or downtime a job runs once, not once per missed tick. Each run is a normal turn with
//! trigger `cron`, its events stored with its session.

mod scheduler;
mod store;

pub use scheduler::{Scheduler, TickReport};
pub use store::{CronCounts, CronExport, CronJob, CronRun, CronStore};

use std::path::PathBuf;
use std::str::FromStr;

/// Why a cron operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CronError {
    /// `cron.db` could not be opened or migrated.
    #[error("cron database {path}: {source}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// The driver error.
        source: sqlx::Error,
    },
    /// A query failed.
    #[error("cron database query failed: {0}")]
    Query(#[from] sqlx::Error),
    /// The agent ids in `sessions.db` could not be read.
    #[error("agent ids: {0}")]
    Agents(String),
    /// A cron expression does not parse.
    #[error("{field}: invalid cron expression `{schedule}`: {message}")]
    Schedule {
        /// Where it came from (`cron.<id>.schedule` or `schedule`).
        field: String,
        /// The expression.
        schedule: String,
        /// The parser's complaint.
        message: String,
    },
    /// A job without a prompt.
    #[error("prompt: a cron job needs a non-empty prompt")]
    EmptyPrompt,
    /// No such runtime job.
    #[error("cron job `{0}` does not exist")]
    UnknownJob(String),
}

/// Parses a UTC cron expression (5 fields, or 6–7 with seconds and year).
pub fn parse_schedule(expr: &str) -> Result<cron::Schedule, String> {
    cron::Schedule::from_str(&warren_config::normalize_cron(expr)).map_err(|e| e.to_string())
}
