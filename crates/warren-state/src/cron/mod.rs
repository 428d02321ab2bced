//! The cron store (rules §1.1 `[cron.<id>]`): jobs created at runtime and the run history
//! (`data/cron.db`), the scheduler's cursors for config jobs, and the UTC cron expressions
//! (parsing, checking, next fire times). The scheduler that runs the jobs is the runtime's.

mod store;

#[cfg(test)]
mod schedule_tests;
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

/// Parses a UTC cron expression (5 fields, or 6–7 with seconds and year). A bad expression
/// is reported with the name of its first bad field (see [`check_schedule`]).
pub fn parse_schedule(expr: &str) -> Result<cron::Schedule, String> {
    check_schedule(expr).map_err(|e| e.to_string())
}

/// Why a cron expression was refused: the field of the expression that is wrong (when one
/// alone is) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScheduleError {
    /// `second`, `minute`, `hour`, `day of month`, `month`, `day of week` or `year`; None when
    /// the number of fields is wrong or no single field is to blame.
    pub field: Option<&'static str>,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for ScheduleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.field {
            Some(field) => write!(f, "{field} field: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// The names of the fields of a 7-field expression, in order.
const FIELDS: [&str; 7] = [
    "second",
    "minute",
    "hour",
    "day of month",
    "month",
    "day of week",
    "year",
];

/// Checks a UTC cron expression: 5 fields (`minute hour day-of-month month day-of-week`),
/// 6 with a leading `second`, or 7 with a trailing `year`. When the expression does not parse,
/// each field is tried alone (the others `*`) so the error names the first bad one.
pub fn check_schedule(expr: &str) -> Result<cron::Schedule, ScheduleError> {
    let count = expr.split_whitespace().count();
    if !(5..=7).contains(&count) {
        return Err(ScheduleError {
            field: None,
            message: format!(
                "expected 5 fields (minute hour day-of-month month day-of-week), 6 with a \
                 leading second or 7 with a trailing year; found {count}"
            ),
        });
    }
    let normalized = warren_config::normalize_cron(expr);
    let whole = match cron::Schedule::from_str(&normalized) {
        Ok(s) => return Ok(s),
        Err(e) => e.to_string(),
    };
    let fields: Vec<&str> = normalized.split_whitespace().collect();
    // A 5-field expression got a `0` second in front: its first field is the minute.
    let user_fields = if count == 5 {
        &fields[1..]
    } else {
        &fields[..]
    };
    let offset = fields.len() - user_fields.len();
    for (i, value) in fields.iter().enumerate().skip(offset) {
        let mut probe: Vec<&str> = vec!["0", "*", "*", "*", "*", "*"];
        if fields.len() == 7 {
            probe.push("*");
        }
        probe[i] = value;
        if let Err(e) = cron::Schedule::from_str(&probe.join(" ")) {
            return Err(ScheduleError {
                field: Some(FIELDS[i]),
                message: format!("`{value}`: {e}"),
            });
        }
    }
    Err(ScheduleError {
        field: None,
        message: whole,
    })
}

/// The next `n` times `schedule` fires strictly after `after` (UTC).
pub fn next_times(
    schedule: &cron::Schedule,
    after: chrono::DateTime<chrono::Utc>,
    n: usize,
) -> Vec<chrono::DateTime<chrono::Utc>> {
    schedule.after(&after).take(n).collect()
}
