//! One call through every gate, in the order the agent loop uses: the tool exists and is
//! offered, arguments and paths check out, autonomy and risk, the action budget, approval, then
//! execution. A failed side-effecting call gives its budget unit back.

use crate::error::ToolError;
use crate::files::{FileEdit, FileRead, FileWrite};
use crate::git::GitOperations;
use crate::search::{ContentSearch, GlobSearch};
use crate::shell::Shell;
use crate::tool::{ApprovalDecision, ApprovalRequest, Approver, Tool, ToolContext, ToolSpec};
use serde_json::Value;
use warren_policy::{Gate, RefusalRule};

/// The set of tools an agent can call.
pub struct Registry {
    tools: Vec<Box<dyn Tool>>,
}

impl Registry {
    /// The built-in tools of this crate: file_read, file_write, file_edit, glob_search,
    /// content_search, shell, git_operations.
    pub fn builtin() -> Self {
        Registry {
            tools: vec![
                Box::new(FileRead),
                Box::new(FileWrite),
                Box::new(FileEdit),
                Box::new(GlobSearch),
                Box::new(ContentSearch),
                Box::new(Shell),
                Box::new(GitOperations),
            ],
        }
    }

    /// Adds a tool (git, memory, delegate live in other crates).
    pub fn register(&mut self, tool: Box<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(tool);
    }

    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .map(|t| t.as_ref())
    }

    /// Specs of the tools the policy offers, for the model.
    pub fn specs_for(&self, ctx: &ToolContext) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .filter(|t| t.available() && ctx.policy.tool_offered(t.name()))
            .map(|t| t.spec())
            .collect()
    }

    /// Runs one call through every gate. `approver` answers when the policy says to ask.
    pub fn invoke(
        &self,
        name: &str,
        args: &Value,
        ctx: &ToolContext,
        approver: &dyn Approver,
    ) -> Result<Value, ToolError> {
        let tool = self
            .get(name)
            .ok_or_else(|| ToolError::UnknownTool(name.to_string()))?;
        let policy = &ctx.policy;
        if !policy.tool_offered(name) {
            return Err(ToolError::Refused {
                rule: RefusalRule::ToolNotAllowed,
                reason: format!(
                    "tool `{name}` is not allowed by risk profile `{}`",
                    policy.risk_profile_name
                ),
            });
        }
        let check = tool.check(args, ctx)?;
        let gate = policy.gate(name, check.side_effects, check.risk);
        if let Gate::Refuse { rule, reason } = gate {
            return Err(ToolError::Refused { rule, reason });
        }
        let ticket = if check.side_effects {
            Some(ctx.ledger.try_charge(
                &policy.alias,
                policy.runtime.max_actions_per_hour,
                ctx.clock.now(),
            )?)
        } else {
            None
        };
        let refund = |e: ToolError| {
            if let Some(t) = &ticket {
                // The unit goes back; a ledger failure here must not hide the call's error.
                let _ = ctx.ledger.refund(t);
            }
            e
        };
        if let Gate::Ask { reason } = gate {
            let mut why = reason.clone();
            if !check.reasons.is_empty() {
                why = format!("{why}: {}", check.reasons.join("; "));
            }
            let request = ApprovalRequest {
                agent: policy.alias.clone(),
                tool: name.to_string(),
                arguments: args.clone(),
                reason: why.clone(),
            };
            match approver.decide(&request) {
                ApprovalDecision::ApproveOnce | ApprovalDecision::ApproveForSession => {}
                ApprovalDecision::Deny { message } => {
                    return Err(refund(ToolError::ApprovalDenied {
                        tool: name.to_string(),
                        message,
                    }))
                }
                ApprovalDecision::NoOneToAsk => {
                    return Err(refund(ToolError::NoApprover {
                        tool: name.to_string(),
                        reason: why,
                    }))
                }
            }
        }
        // A call that ran and failed keeps its unit (a failing command still acted); only a
        // refusal before anything ran gives it back.
        tool.execute(args, ctx)
            .map_err(|e| if ran(&e) { e } else { refund(e) })
    }
}

/// Whether a failed `execute` may have started its side effect. Only failures decided before
/// anything was written or run say no: bad arguments, a policy or shell-analysis denial, a
/// gate refusal, the file tools' preconditions (missing, not a file, no match, ...) and an MCP
/// server found stopped before the call was sent.
/// Every other failure — a command that ran and failed, a timeout, an I/O error, and any
/// variant added later — keeps the charged unit.
fn ran(e: &ToolError) -> bool {
    !matches!(
        e,
        ToolError::UnknownTool(_)
            | ToolError::InvalidArgument { .. }
            | ToolError::Denied(_)
            | ToolError::Shell(_)
            | ToolError::Refused { .. }
            | ToolError::ApprovalDenied { .. }
            | ToolError::NoApprover { .. }
            | ToolError::Budget(_)
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
