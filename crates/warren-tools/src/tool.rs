//! The `Tool` trait, the context a call runs in, and the approval hook.

use crate::error::ToolError;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use warren_policy::{
    Access, ActionLedger, Authorized, Clock, Decision, Denial, Risk, SandboxSupport, SecurityPolicy,
};

/// What a tool call will do, found before anything happens: drives the gate and the budget.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallCheck {
    /// The call changes something (consumes the action budget; refused when `readonly`).
    pub side_effects: bool,
    /// The shell command's risk, for shell calls.
    pub risk: Option<Risk>,
    /// Why it has that risk, if any.
    pub reasons: Vec<String>,
}

/// The description of a tool offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolSpec {
    /// The tool name.
    pub name: Cow<'static, str>,
    /// What it does, for the model.
    pub description: Cow<'static, str>,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

/// A tool an agent can call.
pub trait Tool: Send + Sync {
    /// The tool's name (`file_read`, ...; `server__tool` for an MCP server's tool).
    fn name(&self) -> &str;
    /// Its description and argument schema for the model.
    fn spec(&self) -> ToolSpec;
    /// Validates the arguments and asks the policy, without any side effect.
    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError>;
    /// Runs the call. Re-checks what it touches; never acts before the policy said yes.
    fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError>;
    /// Whether the tool can be called now: a tool whose server stopped is withdrawn (not
    /// offered to the model). Built-in tools always are.
    fn available(&self) -> bool {
        true
    }
}

/// A flag that cancels a running call (its process group is killed).
#[derive(Debug, Clone, Default)]
pub struct CancelToken(Arc<AtomicBool>);

impl CancelToken {
    /// A fresh, uncancelled token.
    pub fn new() -> Self {
        Self::default()
    }
    /// Cancels.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::SeqCst);
    }
    /// Whether cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Size limits of the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    /// Largest file `file_read` / `file_edit` read, and largest `content` `file_write` writes.
    pub max_file_bytes: u64,
    /// Cap on captured shell output (stdout and stderr each).
    pub max_output_bytes: usize,
    /// Most matches listed by the search tools.
    pub max_matches: usize,
}

impl Default for ToolLimits {
    fn default() -> Self {
        ToolLimits {
            max_file_bytes: 1024 * 1024,
            max_output_bytes: 1024 * 1024,
            max_matches: 500,
        }
    }
}

/// Everything a call needs, passed in: the agent's policy, what sandboxes this machine offers,
/// the host environment (captured by the binary, never read here), the budget ledger and clock.
#[derive(Clone)]
pub struct ToolContext {
    /// The agent's effective policy.
    pub policy: Arc<SecurityPolicy>,
    /// The sandboxes available here.
    pub sandbox: SandboxSupport,
    /// The host process environment, from which the shell passes PATH, HOME, LANG, TERM, USER,
    /// TMPDIR and `shell_env_passthrough`.
    pub host_env: BTreeMap<String, String>,
    /// Where actions are counted.
    pub ledger: Arc<dyn ActionLedger>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Cancels the running call.
    pub cancel: CancelToken,
    /// Size limits.
    pub limits: ToolLimits,
    /// The working directory of the calls: the shell's current directory and the base of
    /// relative paths. The policy's workspace unless a session chose another one.
    pub cwd: PathBuf,
}

impl ToolContext {
    /// A context with an in-process action ledger, the system clock, a fresh cancel token and
    /// default limits.
    pub fn new(
        policy: Arc<SecurityPolicy>,
        sandbox: SandboxSupport,
        host_env: BTreeMap<String, String>,
    ) -> Self {
        ToolContext {
            cwd: policy.workspace.clone(),
            policy,
            sandbox,
            host_env,
            ledger: Arc::new(warren_policy::MemoryLedger::new()),
            clock: Arc::new(warren_policy::SystemClock),
            cancel: CancelToken::new(),
            limits: ToolLimits::default(),
        }
    }

    /// This context working in `cwd` (relative paths and the shell start there).
    pub fn in_dir(mut self, cwd: PathBuf) -> Self {
        self.cwd = cwd;
        self
    }

    /// `input` as the policy should see it: unchanged in the workspace, made absolute against
    /// the working directory otherwise (a malformed path is left for the policy to refuse).
    pub fn path<'a>(&self, input: &'a Path) -> Cow<'a, Path> {
        if self.cwd == self.policy.workspace || input.is_absolute() {
            return Cow::Borrowed(input);
        }
        match self.policy.absolute_from(&self.cwd, input) {
            Some(p) => Cow::Owned(p),
            None => Cow::Borrowed(input),
        }
    }

    /// [`SecurityPolicy::check_from`] at the working directory.
    pub fn check(&self, path: &Path, access: Access) -> Decision {
        self.policy.check_from(&self.cwd, path, access)
    }

    /// [`SecurityPolicy::authorize_from`] at the working directory.
    pub fn authorize(&self, path: &Path, access: Access) -> Result<Authorized, Denial> {
        self.policy.authorize_from(&self.cwd, path, access)
    }
}

/// A request for the user's approval.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The agent.
    pub agent: String,
    /// The tool.
    pub tool: String,
    /// Its arguments.
    pub arguments: Value,
    /// Why approval is needed.
    pub reason: String,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    ApproveOnce,
    /// Run this call and similar ones for the rest of the session (the loop remembers).
    ApproveForSession,
    /// Do not run it; optionally tell the model why.
    Deny {
        /// A message for the model.
        message: Option<String>,
    },
    /// Nobody can answer (non-interactive run without `--approve`).
    NoOneToAsk,
}

/// Who answers approval requests: the agent loop plugs the UI in here.
pub trait Approver: Send + Sync {
    /// Answers one request.
    fn decide(&self, request: &ApprovalRequest) -> ApprovalDecision;
}

/// Approves everything (`--approve`).
#[derive(Debug, Clone, Copy, Default)]
pub struct ApproveAll;

impl Approver for ApproveAll {
    fn decide(&self, _: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::ApproveOnce
    }
}

/// Nobody to ask: every request is denied with "no one to ask".
#[derive(Debug, Clone, Copy, Default)]
pub struct NoApprover;

impl Approver for NoApprover {
    fn decide(&self, _: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::NoOneToAsk
    }
}
