//! The error of the host and of the turns it builds: one type for opening an install's
//! runtime, building a turn's environment (the turn kit) and acting on an agent.

use warren_config::ConfigError;
use warren_llm::LlmError;
use warren_state::db::DbError;
use warren_state::pause::PauseError;
use warren_state::receipts::ReceiptError;
use warren_state::secrets::SecretError;

/// Why the host could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The config is missing or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No such agent.
    #[error("agent `{0}` does not exist")]
    UnknownAgent(String),
    /// The agent is disabled in the config.
    #[error("agent `{0}` is disabled")]
    Disabled(String),
    /// The agent has no `model_provider`.
    #[error("agent `{0}` has no model_provider; add one to its [agents.{0}] table")]
    NoProvider(String),
    /// The policy could not be built.
    #[error("policy of `{alias}`: {message}")]
    Policy {
        /// The agent.
        alias: String,
        /// What failed.
        message: String,
    },
    /// The provider route could not be built.
    #[error(transparent)]
    Provider(#[from] LlmError),
    /// The sessions database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// The secret store could not be opened.
    #[error("secret store: {0}")]
    Secrets(#[from] SecretError),
    /// The receipt log failed.
    #[error(transparent)]
    Receipts(#[from] ReceiptError),
    /// No such session, or it belongs to another agent.
    #[error("session `{0}` does not exist for this agent")]
    UnknownSession(String),
    /// The agent's lock file could not be used.
    #[error("agent lock file: {0}")]
    Lock(std::io::Error),
    /// The agent is paused: it runs no new turns until resumed.
    #[error("agent `{0}` is paused; resume it to run turns")]
    Paused(String),
    /// The paused-agents file (`<install>/data/paused.json`) could not be read or written.
    #[error("paused agents: {0}")]
    PauseState(String),
    /// An unfinished rename, delete or restore involves the agent (`lifecycle_pending`).
    #[error("{0}")]
    LifecyclePending(String),
}

impl From<PauseError> for HostError {
    fn from(e: PauseError) -> Self {
        match e {
            PauseError::Config(e) => HostError::Config(e),
            PauseError::UnknownAgent(alias) => HostError::UnknownAgent(alias),
            PauseError::State(message) => HostError::PauseState(message),
        }
    }
}
