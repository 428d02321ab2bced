//! Errors that cross the `warren-api` boundary: a stable `code` and a human `message`.

use serde::{Deserialize, Serialize};

/// Stable machine-readable error codes. Front-ends match on these, never on message text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The config file failed to parse or validate.
    InvalidConfig,
    /// An argument given by the caller is malformed.
    InvalidArgument,
    /// A named thing (agent, profile, archive) does not exist.
    NotFound,
    /// A name is already taken.
    AlreadyExists,
    /// The security policy denied the action.
    Denied,
    /// The agent is busy with a turn.
    AgentBusy,
    /// The agent is paused and runs no new turns.
    AgentPaused,
    /// An unfinished rename, delete or restore involves the agent; it is refused until the
    /// operation is finished.
    LifecyclePending,
    /// The configured sandbox is not available on this machine.
    SandboxUnavailable,
    /// Another process (`warren serve` or the desktop app) runs this install's runtime.
    RuntimeOwned,
    /// A storage backend failed or is unreachable.
    Storage,
    /// A filesystem operation failed.
    Io,
    /// Anything else.
    Internal,
}

impl ErrorCode {
    /// The snake_case name used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidConfig => "invalid_config",
            ErrorCode::InvalidArgument => "invalid_argument",
            ErrorCode::NotFound => "not_found",
            ErrorCode::AlreadyExists => "already_exists",
            ErrorCode::Denied => "denied",
            ErrorCode::AgentBusy => "agent_busy",
            ErrorCode::AgentPaused => "agent_paused",
            ErrorCode::LifecyclePending => "lifecycle_pending",
            ErrorCode::SandboxUnavailable => "sandbox_unavailable",
            ErrorCode::RuntimeOwned => "runtime_owned",
            ErrorCode::Storage => "storage",
            ErrorCode::Io => "io",
            ErrorCode::Internal => "internal",
        }
    }
}

/// The error shape every `warren-api` function returns: `{code, message, details}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ApiError {
    /// Stable code.
    pub code: ErrorCode,
    /// Human-readable message naming what is wrong and where.
    pub message: String,
    /// Individual problems (for example every config validation error), each `path: message`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

impl ApiError {
    /// Builds an error with no details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
            details: Vec::new(),
        }
    }

    /// Attaches detail lines.
    pub fn with_details(mut self, details: Vec<String>) -> Self {
        self.details = details;
        self
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for ApiError {}

/// A code string that names no variant of its enum: a stored value this version does not know
/// (written by a newer Warren, or edited by hand).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCode {
    /// What the code stands for (`turn trigger`, `turn status`, ...).
    pub kind: &'static str,
    /// The string as found.
    pub value: String,
}

impl UnknownCode {
    /// An unknown `kind` code `value`.
    pub fn new(kind: &'static str, value: &str) -> Self {
        UnknownCode {
            kind,
            value: value.to_string(),
        }
    }
}

impl std::fmt::Display for UnknownCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "unknown {} `{}`", self.kind, self.value)
    }
}

impl std::error::Error for UnknownCode {}
