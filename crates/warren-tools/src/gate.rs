//! One call through every gate, in two steps. [`Registry::prepare`] decides, without running
//! anything: the tool exists and is offered, arguments and paths check out, autonomy and risk,
//! the action budget (charged here). Its answer is allowed, ask (with the reason), or denied.
//! [`Permit::execute`] then runs the call, and refuses one that needed approval and was not
//! approved. A call refused before anything ran gives its budget unit back.

use crate::error::ToolError;
use crate::files::{FileEdit, FileRead, FileWrite};
use crate::git::GitOperations;
use crate::search::{ContentSearch, GlobSearch};
use crate::shell::Shell;
use crate::tool::{ApprovalAnswer, Tool, ToolContext, ToolSpec};
use serde_json::Value;
use std::sync::Arc;
use warren_policy::{ActionLedger, ActionTicket, Gate, RefusalRule};

/// The set of tools an agent can call.
pub struct Registry {
    tools: Vec<Arc<dyn Tool>>,
}

/// What [`Registry::prepare`] decided about a call.
#[derive(Debug)]
pub enum Prepared {
    /// It may run.
    Allowed(Permit),
    /// It may run once the user approves it ([`Permit::approve`]); `reason` says why it needs
    /// approval.
    Ask {
        /// The permit, unusable until approved.
        permit: Permit,
        /// Why approval is needed.
        reason: String,
    },
    /// It may not run.
    Denied {
        /// Why.
        error: ToolError,
        /// The call's own check failed (its arguments or paths): it was not judged, and may
        /// pass once an earlier call of its batch made what it needs.
        at_check: bool,
    },
}

/// A prepared call: the tool, the budget unit charged for it, and whether it still needs
/// approval. Dropped without running, it gives the unit back.
pub struct Permit {
    tool: Arc<dyn Tool>,
    ticket: Option<(ActionTicket, Arc<dyn ActionLedger>)>,
    /// Why it needs approval, until approved.
    ask: Option<String>,
}

impl std::fmt::Debug for Permit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permit")
            .field("tool", &self.tool.name())
            .field("charged", &self.ticket.is_some())
            .field("ask", &self.ask)
            .finish()
    }
}

impl Permit {
    /// The tool's name.
    pub fn tool(&self) -> &str {
        self.tool.name()
    }

    /// Why the call needs approval, while it is not approved.
    pub fn needs_approval(&self) -> Option<&str> {
        self.ask.as_deref()
    }

    /// The call was approved (asked and approved, or approved for the session).
    pub fn approve(mut self) -> Self {
        self.ask = None;
        self
    }

    /// Runs the call. One that needs approval and was not approved does not run: the gate
    /// denies it (fail closed). A call that ran and failed keeps its budget unit (a failing
    /// command still acted); only a refusal before anything ran gives it back.
    pub async fn execute(mut self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        if self.ask.is_some() {
            // Dropping the permit gives the unit back.
            return Err(ToolError::ApprovalDenied {
                tool: self.tool.name().to_string(),
                message: Some(
                    "this call needs approval and was not approved before it ran; it did not run"
                        .into(),
                ),
            });
        }
        // Taken out first: a call abandoned while it runs keeps its unit.
        let ticket = self.ticket.take();
        let result = self.tool.execute(args, ctx).await;
        if let (Err(e), Some((t, ledger))) = (&result, &ticket) {
            if !e.ran() {
                // A ledger failure here must not hide the call's error.
                let _ = ledger.refund(t);
            }
        }
        result
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some((t, ledger)) = self.ticket.take() {
            let _ = ledger.refund(&t);
        }
    }
}

impl Registry {
    /// The built-in tools of this crate: file_read, file_write, file_edit, glob_search,
    /// content_search, shell, git_operations.
    pub fn builtin() -> Self {
        Registry {
            tools: vec![
                Arc::new(FileRead),
                Arc::new(FileWrite),
                Arc::new(FileEdit),
                Arc::new(GlobSearch),
                Arc::new(ContentSearch),
                Arc::new(Shell),
                Arc::new(GitOperations),
            ],
        }
    }

    /// Adds a tool (git, memory, delegate live in other crates).
    pub fn register(&mut self, tool: Box<dyn Tool>) {
        self.tools.retain(|t| t.name() != tool.name());
        self.tools.push(Arc::from(tool));
    }

    /// Looks a tool up by name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool> {
        self.tools
            .iter()
            .find(|t| t.name() == name)
            .map(std::convert::AsRef::as_ref)
    }

    /// Specs of the tools the policy offers, for the model.
    pub fn specs_for(&self, ctx: &ToolContext) -> Vec<ToolSpec> {
        self.tools
            .iter()
            .filter(|t| t.available() && ctx.policy.tool_offered(t.name()))
            .map(|t| t.spec())
            .collect()
    }

    /// Decides a call without running it: the tool exists and is offered, its arguments and
    /// paths check out, autonomy and risk allow it (or say to ask), and the action budget has
    /// a unit for it (charged now; the permit gives it back if the call never runs). Blocking:
    /// the check reads the file system and the budget may be a database.
    pub fn prepare(&self, name: &str, args: &Value, ctx: &ToolContext) -> Prepared {
        let denied = |error: ToolError| Prepared::Denied {
            error,
            at_check: false,
        };
        let Some(tool) = self.tools.iter().find(|t| t.name() == name).cloned() else {
            return denied(ToolError::UnknownTool(name.to_string()));
        };
        let policy = &ctx.policy;
        if !policy.tool_offered(name) {
            return denied(ToolError::Refused {
                rule: RefusalRule::ToolNotAllowed,
                reason: format!(
                    "tool `{name}` is not allowed by risk profile `{}`",
                    policy.risk_profile_name
                ),
            });
        }
        let check = match tool.check(args, ctx) {
            Ok(c) => c,
            Err(error) => {
                return Prepared::Denied {
                    error,
                    at_check: true,
                }
            }
        };
        let gate = policy.gate(name, check.side_effects, check.risk);
        if let Gate::Refuse { rule, reason } = gate {
            return denied(ToolError::Refused { rule, reason });
        }
        let ticket = if check.side_effects {
            match ctx.ledger.try_charge(
                &policy.alias,
                policy.runtime.max_actions_per_hour,
                ctx.clock.now(),
            ) {
                Ok(t) => Some((t, ctx.ledger.clone())),
                Err(e) => return denied(e.into()),
            }
        } else {
            None
        };
        match gate {
            Gate::Ask { reason } => {
                let reason = if check.reasons.is_empty() {
                    reason
                } else {
                    format!("{reason}: {}", check.reasons.join("; "))
                };
                Prepared::Ask {
                    permit: Permit {
                        tool,
                        ticket,
                        ask: Some(reason.clone()),
                    },
                    reason,
                }
            }
            _ => Prepared::Allowed(Permit {
                tool,
                ticket,
                ask: None,
            }),
        }
    }

    /// One call through every gate for a caller outside the turn loop (`warren tool`,
    /// benches, tests): [`Registry::prepare`], then `answer` for a call that needs approval,
    /// then [`Permit::execute`].
    pub async fn invoke(
        &self,
        name: &str,
        args: &Value,
        ctx: &ToolContext,
        answer: &ApprovalAnswer,
    ) -> Result<Value, ToolError> {
        match self.prepare(name, args, ctx) {
            Prepared::Denied { error, .. } => Err(error),
            Prepared::Allowed(permit) => permit.execute(args, ctx).await,
            Prepared::Ask { permit, reason } => {
                if answer.approves() {
                    permit.approve().execute(args, ctx).await
                } else if answer.no_one_to_ask {
                    Err(ToolError::NoApprover {
                        tool: name.to_string(),
                        reason,
                    })
                } else {
                    Err(ToolError::ApprovalDenied {
                        tool: name.to_string(),
                        message: answer.message.clone(),
                    })
                }
            }
        }
    }
}
