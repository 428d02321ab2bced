//! The lifecycle service's error type: every variant names the agent, file or step involved.

use std::path::PathBuf;
use warren_config::ConfigError;
use warren_memory::MemoryError;

use crate::db::DbError;

/// Why a rename, delete or restore was refused or stopped.
#[derive(Debug, thiserror::Error)]
pub enum LifecycleError {
    /// The config could not be loaded, edited or saved.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The alias is not an agent of the config.
    #[error("agent `{0}` does not exist")]
    UnknownAgent(String),
    /// The new alias breaks the alias rules.
    #[error("invalid agent alias `{alias}`: {reason}")]
    InvalidAlias {
        /// The alias.
        alias: String,
        /// Which rule.
        reason: String,
    },
    /// The target alias (or a path it needs) is taken.
    #[error("{0}")]
    Taken(String),
    /// The agent is still running a turn after the wait.
    #[error("agent `{alias}` is busy with a turn (waited {waited_secs} s); retry later or pass --force to cancel it")]
    Busy {
        /// The agent.
        alias: String,
        /// How long the service waited.
        waited_secs: u64,
    },
    /// A delete is blocked; each blocker is listed.
    #[error("agent `{alias}` cannot be deleted while these exist: {}", blockers.join("; "))]
    Blocked {
        /// The agent.
        alias: String,
        /// Each blocker (hard reference or live ACP session).
        blockers: Vec<String>,
    },
    /// No such archive.
    #[error("no deletion archive at {0}")]
    UnknownArchive(PathBuf),
    /// An archive or journal file is unreadable or malformed.
    #[error("{path}: {reason}")]
    BadFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A filesystem step failed.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The sessions database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// The memory store failed.
    #[error(transparent)]
    Memory(#[from] MemoryError),
    /// An unfinished rename, delete or restore involves the alias: turns, `agents create` and
    /// other lifecycle commands on it wait until it is finished.
    #[error("agent `{alias}` is part of an unfinished {operation} (journal {}); {hint}", journal.display())]
    Pending {
        /// The alias asked for.
        alias: String,
        /// The operation in flight (`rename alice → ann`).
        operation: String,
        /// Its journal file.
        journal: PathBuf,
        /// How to finish it.
        hint: String,
    },
    /// A restore found an agent under its alias: nothing is merged into it.
    #[error("cannot restore {} as `{alias}`: an agent `{alias}` exists now; nothing is merged into it and the archive is kept. {}", archive.display(), if *started { "The restore stays unfinished and blocks the alias: take `[agents.<alias>]` out of config.toml and run the restore again" } else { "Restore under another name with --as NEW" })]
    RestoreConflict {
        /// The alias.
        alias: String,
        /// The archive.
        archive: PathBuf,
        /// Whether steps of the restore had already run (its journal stays open).
        started: bool,
    },
    /// The test hook stopped the operation after a journaled step; the journal resumes it.
    #[error("interrupted after step `{step}` of {op} (journal {journal})")]
    Interrupted {
        /// The operation.
        op: String,
        /// The last completed step.
        step: String,
        /// The journal file that resumes it.
        journal: PathBuf,
    },
}

impl LifecycleError {
    /// An I/O error with its path.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        LifecycleError::Io {
            action,
            path: path.into(),
            source,
        }
    }
}
