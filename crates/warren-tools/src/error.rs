//! Typed tool errors with stable codes.

use serde::Serialize;
use std::path::PathBuf;
use warren_policy::{BudgetError, Denial, OpenError, RefusalRule, SandboxError, ShellError};
use warren_types::ToolErrorCode;

/// Why a tool call did not succeed. [`ToolError::code`] is stable; front-ends match on it.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// No tool of that name.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// An argument is missing, of the wrong type or malformed.
    #[error("argument `{field}`: {message}")]
    InvalidArgument {
        /// The argument name.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// The policy denied a path.
    #[error(transparent)]
    Denied(#[from] Denial),
    /// The shell command was refused before running.
    #[error(transparent)]
    Shell(#[from] ShellError),
    /// The gate refused the call (tool not allowed, readonly, high risk blocked).
    #[error("{reason}")]
    Refused {
        /// The deciding rule.
        rule: RefusalRule,
        /// A human explanation.
        reason: String,
    },
    /// The user denied the approval.
    #[error("the user denied `{tool}`{}", message.as_ref().map(|m| format!(": {m}")).unwrap_or_default())]
    ApprovalDenied {
        /// The tool.
        tool: String,
        /// The user's message for the model.
        message: Option<String>,
    },
    /// The call needed approval and there is no one to ask.
    #[error(
        "`{tool}` needs approval ({reason}) and there is no one to ask: the runtime denied it"
    )]
    NoApprover {
        /// The tool.
        tool: String,
        /// Why approval was needed.
        reason: String,
    },
    /// The action budget is spent.
    #[error(transparent)]
    Budget(#[from] BudgetError),
    /// The sandbox cannot be used.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The container runtime cannot run the command (no image, unmountable path).
    #[error("docker runtime: {0}")]
    Container(String),
    /// The path does not exist.
    #[error("{0} does not exist")]
    NotFound(PathBuf),
    /// A file or argument is over its size limit.
    #[error("{what} is {size} bytes, over the limit of {limit} bytes")]
    TooLarge {
        /// What is too large.
        what: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The path is a directory or another non-regular file where a file is needed.
    #[error("{0} is not a regular file")]
    NotAFile(PathBuf),
    /// Writing through a symbolic link is refused.
    #[error("{0} is a symbolic link; writing through it is refused")]
    SymlinkLeaf(PathBuf),
    /// A path changed (a symbolic link appeared on it, or it moved) between the policy's decision
    /// and the open: nothing was opened.
    #[error("{0} changed while it was being opened (a symbolic link appeared on the path); nothing was read or written")]
    PathChanged(PathBuf),
    /// A write under a grant that does not allow reading failed because of what is (or is not)
    /// at the path; the answer is the same whatever it is, so it reveals nothing.
    #[error("{0} cannot be written here (a write-only grant does not say why)")]
    NotWritable(PathBuf),
    /// A directory was needed.
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    /// `old_text` was not found.
    #[error("old_text was not found in {0}")]
    EditNoMatch(PathBuf),
    /// `old_text` occurs more than once.
    #[error("old_text occurs {count} times in {path}; give more context so it is unique")]
    EditAmbiguous {
        /// The file.
        path: PathBuf,
        /// How many times.
        count: usize,
    },
    /// The file is not UTF-8 text.
    #[error("{0} is not UTF-8 text")]
    NotText(PathBuf),
    /// The shell command exited with a failure.
    #[error("command exited with {}: {}", exit_code.map(|c| c.to_string()).unwrap_or_else(|| "a signal".into()), tail(stderr))]
    CommandFailed {
        /// The exit code (`None` when killed by a signal).
        exit_code: Option<i32>,
        /// Captured standard output (capped).
        stdout: String,
        /// Captured standard error (capped).
        stderr: String,
    },
    /// The shell command ran past `shell_timeout_secs`; its process group was killed.
    #[error("command timed out after {0}s; its process group was killed")]
    Timeout(u32),
    /// The call was cancelled; its process group was killed.
    #[error("cancelled")]
    Cancelled,
    /// No git repository at the path, searching up to the authorized root only.
    #[error("{path} is not in a git repository (searched up to {boundary}, the authorized root)")]
    NotARepository {
        /// The directory asked about.
        path: PathBuf,
        /// Where the search stopped.
        boundary: PathBuf,
    },
    /// Git metadata (`.git` file, gitdir, commondir, worktree metadata) is a symbolic link or
    /// passes through one; it is refused without being followed.
    #[error("git metadata {path} ({what}) is a symbolic link; refused without following it")]
    GitSymlink {
        /// The symbolic link.
        path: PathBuf,
        /// What the metadata is (`.git`, `gitdir named by ...`, ...).
        what: String,
    },
    /// Git metadata is malformed or resolves somewhere it may not.
    #[error("git metadata {path}: {reason}")]
    GitMetadata {
        /// The metadata file or directory.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A git write operation under `[runtime] kind = "docker"`: git does not enter the
    /// container, so it is refused before any process starts.
    #[error("git_operations `{operation}` is refused: [runtime] kind = \"docker\" runs commands in a container that git does not enter; git write operations are refused there (use the shell tool inside the container)")]
    GitWriteInContainer {
        /// The refused operation.
        operation: String,
    },
    /// A needed object is not in the repository (for instance a partial clone's promised
    /// object); Warren never fetches it.
    #[error("{repo}: {detail}; the object is not in the repository (a partial clone's missing object?) and Warren never fetches objects: transports are disabled")]
    GitMissingObject {
        /// The repository.
        repo: PathBuf,
        /// libgit2's message (names the object).
        detail: String,
    },
    /// libgit2 failed.
    #[error("git: {repo}: {message}")]
    Git {
        /// The repository.
        repo: PathBuf,
        /// What failed.
        message: String,
    },
    /// An MCP server's tool was called and reported a failure (or its answer was unusable).
    #[error("MCP server `{server}`: {message}")]
    McpCall {
        /// The server.
        server: String,
        /// What it said.
        message: String,
    },
    /// The MCP server is not running (it failed to start, exited or was stopped); its tools
    /// are withdrawn.
    #[error("MCP server `{server}` is not running: {message}")]
    McpServerGone {
        /// The server.
        server: String,
        /// Why.
        message: String,
    },
    /// A filesystem operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn tail(s: &str) -> String {
    let t = s.trim();
    let start = t.len().saturating_sub(400);
    let start = (start..=t.len())
        .find(|i| t.is_char_boundary(*i))
        .unwrap_or(t.len());
    t[start..].to_string()
}

impl ToolError {
    /// The stable code.
    pub fn code(&self) -> ToolErrorCode {
        use ToolErrorCode as C;
        match self {
            ToolError::UnknownTool(_) => C::UnknownTool,
            ToolError::InvalidArgument { .. } => C::InvalidArgument,
            ToolError::Denied(_) => C::Denied,
            ToolError::Shell(e) => match e {
                ShellError::Empty | ShellError::Parse(_) => C::InvalidArgument,
                ShellError::Path { .. } | ShellError::DynamicPath { .. } => C::Denied,
                ShellError::CommandNotAllowed { .. }
                | ShellError::UnknownProgram { .. }
                | ShellError::WarrenProgram { .. } => C::CommandNotAllowed,
                ShellError::SandboxRequired { .. } => C::SandboxRequired,
            },
            ToolError::Refused { rule, .. } => match rule {
                RefusalRule::ToolNotAllowed => C::ToolNotAllowed,
                RefusalRule::ReadonlyAutonomy => C::Readonly,
                RefusalRule::HighRiskBlocked => C::HighRiskBlocked,
                RefusalRule::DelegationRefused => C::DelegationRefused,
            },
            ToolError::ApprovalDenied { .. } => C::ApprovalDenied,
            ToolError::NoApprover { .. } => C::NoApprover,
            ToolError::Budget(BudgetError::Exhausted { .. }) => C::BudgetExhausted,
            ToolError::Budget(BudgetError::Store(_)) => C::Internal,
            ToolError::Sandbox(SandboxError::Unavailable { .. }) => C::SandboxUnavailable,
            ToolError::Sandbox(SandboxError::Rule { .. }) => C::SandboxError,
            ToolError::Sandbox(SandboxError::Reaper(_)) => C::SandboxError,
            ToolError::Sandbox(SandboxError::Changed { .. }) => C::SandboxPathChanged,
            ToolError::Container(_) => C::ContainerError,
            ToolError::NotFound(_) => C::NotFound,
            ToolError::TooLarge { .. } => C::TooLarge,
            ToolError::NotAFile(_) => C::NotAFile,
            ToolError::SymlinkLeaf(_) => C::SymlinkLeaf,
            ToolError::PathChanged(_) => C::PathChanged,
            ToolError::NotWritable(_) => C::NotWritable,
            ToolError::NotADirectory(_) => C::NotADirectory,
            ToolError::EditNoMatch(_) => C::EditNoMatch,
            ToolError::EditAmbiguous { .. } => C::EditAmbiguous,
            ToolError::NotText(_) => C::NotText,
            ToolError::CommandFailed { .. } => C::CommandFailed,
            ToolError::Timeout(_) => C::Timeout,
            ToolError::Cancelled => C::Cancelled,
            ToolError::Io { .. } => C::Io,
            ToolError::McpCall { .. } => C::McpCallFailed,
            ToolError::McpServerGone { .. } => C::McpServerGone,
            ToolError::NotARepository { .. } => C::NotARepository,
            ToolError::GitSymlink { .. } => C::GitMetadataSymlink,
            ToolError::GitMetadata { .. } => C::GitMetadata,
            ToolError::GitWriteInContainer { .. } => C::GitWriteInContainer,
            ToolError::GitMissingObject { .. } => C::GitMissingObject,
            ToolError::Git { .. } => C::GitError,
        }
    }

    /// Whether the call may have started its side effect, so it keeps its budget unit and gets
    /// a receipt. Only failures decided before anything was written or run say no: bad
    /// arguments, a policy or shell-analysis denial, a gate refusal or an unanswered approval,
    /// the budget, a sandbox that is not available, the file tools' preconditions (missing, not
    /// a file, no match, ...) and an MCP server found stopped before the call was sent. Every
    /// other failure — a command that ran and failed, a timeout, a cancellation, an I/O error,
    /// and any variant added later — may have acted.
    pub fn ran(&self) -> bool {
        !matches!(
            self,
            ToolError::UnknownTool(_)
                | ToolError::InvalidArgument { .. }
                | ToolError::Denied(_)
                | ToolError::Shell(_)
                | ToolError::Refused { .. }
                | ToolError::ApprovalDenied { .. }
                | ToolError::NoApprover { .. }
                | ToolError::Budget(_)
                | ToolError::Sandbox(SandboxError::Unavailable { .. })
                | ToolError::NotFound(_)
                | ToolError::TooLarge { .. }
                | ToolError::NotAFile(_)
                | ToolError::SymlinkLeaf(_)
                | ToolError::PathChanged(_)
                | ToolError::NotWritable(_)
                | ToolError::NotADirectory(_)
                | ToolError::EditNoMatch(_)
                | ToolError::EditAmbiguous { .. }
                | ToolError::NotText(_)
                | ToolError::McpServerGone { .. }
        )
    }

    /// The deciding policy rule, for denials.
    pub fn rule(&self) -> Option<&'static str> {
        match self {
            ToolError::Denied(d) => Some(d.rule.code()),
            ToolError::Shell(ShellError::Path { denial, .. }) => Some(denial.rule.code()),
            ToolError::Refused { rule, .. } => Some(rule.code()),
            _ => None,
        }
    }

    /// A JSON view `{code, message, rule?}`.
    pub fn to_json(&self) -> serde_json::Value {
        #[derive(Serialize)]
        struct J<'a> {
            code: ToolErrorCode,
            message: String,
            #[serde(skip_serializing_if = "Option::is_none")]
            rule: Option<&'a str>,
        }
        serde_json::to_value(J {
            code: self.code(),
            message: self.to_string(),
            rule: self.rule(),
        })
        .unwrap_or(serde_json::Value::Null)
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ToolError::Io {
            path: path.into(),
            source,
        }
    }

    /// An `invalid_argument` error naming the argument.
    pub fn arg(field: &str, message: impl Into<String>) -> Self {
        ToolError::InvalidArgument {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

impl From<OpenError> for ToolError {
    fn from(e: OpenError) -> Self {
        match e {
            OpenError::Denied(d) => ToolError::Denied(d),
            OpenError::NotFound(p) => ToolError::NotFound(p),
            OpenError::SymlinkLeaf(p) => ToolError::SymlinkLeaf(p),
            OpenError::Changed(p) => ToolError::PathChanged(p),
            OpenError::NotAFile(p) => ToolError::NotAFile(p),
            OpenError::NotADirectory(p) => ToolError::NotADirectory(p),
            OpenError::Io { path, source } => ToolError::Io { path, source },
        }
    }
}
