//! The `Tool` trait, the context a call runs in, and the answer to an approval request.

use crate::error::ToolError;
use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
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
///
/// `check` is synchronous and cheap (it runs when the turn loop prepares a call); `execute` is
/// async: a tool that does blocking file, git or process work runs it with [`blocking`].
#[async_trait]
pub trait Tool: Send + Sync {
    /// The tool's name (`file_read`, ...; `server__tool` for an MCP server's tool).
    fn name(&self) -> &str;
    /// Its description and argument schema for the model.
    fn spec(&self) -> ToolSpec;
    /// Validates the arguments and asks the policy, without any side effect.
    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError>;
    /// Runs the call. Re-checks what it touches; never acts before the policy said yes. It is
    /// only ever reached through a [`crate::Permit`], after the gates and the approval.
    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError>;
    /// Whether the tool can be called now: a tool whose server stopped is withdrawn (not
    /// offered to the model). Built-in tools always are.
    fn available(&self) -> bool {
        true
    }
}

/// Runs a tool's blocking body (file, git or process work) on the blocking thread pool, with
/// its own copies of the arguments and the context.
pub async fn blocking<F>(args: &Value, ctx: &ToolContext, body: F) -> Result<Value, ToolError>
where
    F: FnOnce(&Value, &ToolContext) -> Result<Value, ToolError> + Send + 'static,
{
    let (args, ctx) = (args.clone(), ctx.clone());
    tokio::task::spawn_blocking(move || body(&args, &ctx))
        .await
        .map_err(|e| ToolError::Io {
            path: "(tool)".into(),
            source: std::io::Error::other(format!("the tool's thread ended abnormally: {e}")),
        })?
}

/// Cancels a running call: a shell or git child is killed, an MCP request abandoned, a
/// SubAgent turn cancelled. The one cancel token of the runtime (a turn's token and the token
/// of its tool calls are the same type; the calls' token is a child of the turn's).
pub use tokio_util::sync::CancellationToken as CancelToken;

/// Who is calling: the identity of the call in its turn. Empty outside a turn (`warren tool`,
/// tests).
#[derive(Debug, Clone, Default)]
pub struct CallIdentity {
    /// The turn the call belongs to.
    pub turn_id: String,
    /// The call's id in that turn.
    pub call_id: String,
    /// The agent making it.
    pub agent: String,
    /// The turn a call ran on the caller's behalf (a `delegate` call's SubAgent turn), set by
    /// the tool so the call's result can name it even when the call failed or was cancelled.
    pub sub_turn: Arc<OnceLock<String>>,
}

impl CallIdentity {
    /// The identity of call `call_id` of `agent` in turn `turn_id`.
    pub fn new(turn_id: &str, call_id: &str, agent: &str) -> Self {
        CallIdentity {
            turn_id: turn_id.to_string(),
            call_id: call_id.to_string(),
            agent: agent.to_string(),
            sub_turn: Arc::default(),
        }
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
    /// The call being made (set by the turn loop for each call).
    pub call: CallIdentity,
    /// Warren's network proxy, for profiles whose network is by domain (without it such a
    /// profile's commands get no network at all).
    pub network: Option<warren_net::Proxy>,
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
            call: CallIdentity::default(),
            network: None,
        }
    }

    /// This context for one call, with its identity.
    pub fn for_call(&self, call: CallIdentity) -> Self {
        let mut ctx = self.clone();
        ctx.call = call;
        ctx
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

/// The one approval answer: the turn loop's approvers give it, the tool gate's
/// [`crate::Registry::invoke`] takes it.
pub use warren_types::ApprovalAnswer;
