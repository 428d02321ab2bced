//! The `delegate {agent?, prompt}` tool (SPEC §5): runs one task as a SubAgent — the agent
//! itself or one listed in its `delegates` — under a child policy that may never exceed the
//! parent's. The child's turn is a normal turn (stored, with receipts) whose events carry the
//! parent's turn and call id, and it spends the parent's action and cost budgets.

use crate::approval::AsyncApprover;
use crate::events::EventHub;
use crate::sessions::SessionKind;
use crate::turn::{run_turn, TurnInput, TurnStatus};
use crate::turn_kit::TurnKit;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use tokio_util::sync::CancellationToken;
use warren_policy::{
    ensure_no_escalation, ActionLedger, ActionTicket, BudgetError, RefusalRule, SecurityPolicy,
};
use warren_tools::{CallCheck, Tool, ToolContext, ToolError, ToolSpec};
use warren_types::{Config, DelegationMode, EventParent};

thread_local! {
    static CURRENT_CALL: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Runs `f` (a tool invocation on a blocking thread) with `(turn_id, call_id)` visible to a
/// `delegate` call inside it.
pub fn within_call<R>(turn_id: &str, call_id: &str, f: impl FnOnce() -> R) -> R {
    let previous = CURRENT_CALL.with(|c| {
        c.borrow_mut()
            .replace((turn_id.to_string(), call_id.to_string()))
    });
    let out = f();
    CURRENT_CALL.with(|c| *c.borrow_mut() = previous);
    out
}

fn current_call() -> Option<(String, String)> {
    CURRENT_CALL.with(|c| c.borrow().clone())
}

/// What makes a turn a SubAgent's: its checked policy, the shared budgets and the nested hub.
pub struct Lineage {
    /// The child policy, already checked with `ensure_no_escalation`.
    pub policy: SecurityPolicy,
    /// The parent's ledger, charged to the parent's account.
    pub ledger: Arc<dyn ActionLedger>,
    /// The account whose cost budget the child spends.
    pub budget_agent: String,
    /// The hub that stamps the parent call on every event.
    pub hub: EventHub,
}

/// An action ledger that charges every action to one account (the delegating agent), so what
/// a child spends the parent no longer has.
pub struct SharedLedger {
    inner: Arc<dyn ActionLedger>,
    account: String,
}

impl SharedLedger {
    /// Charges `account` in `inner` for every action.
    pub fn new(inner: Arc<dyn ActionLedger>, account: &str) -> Self {
        SharedLedger {
            inner,
            account: account.to_string(),
        }
    }
}

impl ActionLedger for SharedLedger {
    fn try_charge(
        &self,
        _agent: &str,
        limit: u32,
        at: SystemTime,
    ) -> Result<ActionTicket, BudgetError> {
        self.inner.try_charge(&self.account, limit, at)
    }
    fn refund(&self, ticket: &ActionTicket) -> Result<(), BudgetError> {
        self.inner.refund(ticket)
    }
    fn used(&self, _agent: &str, at: SystemTime) -> Result<u32, BudgetError> {
        self.inner.used(&self.account, at)
    }
}

/// The `delegate` tool of one turn.
pub struct DelegateTool {
    kit: TurnKit,
    config: Arc<Config>,
    approver: Arc<dyn AsyncApprover>,
    budget_agent: String,
    hub: EventHub,
    handle: tokio::runtime::Handle,
}

impl DelegateTool {
    /// A tool for a turn built from `config`, whose approvals go to `approver`, whose cost is
    /// charged to `budget_agent` and whose events go to `hub`. Must be created inside a tokio
    /// runtime.
    pub fn new(
        kit: TurnKit,
        config: Arc<Config>,
        approver: Arc<dyn AsyncApprover>,
        budget_agent: String,
        hub: EventHub,
    ) -> Self {
        DelegateTool {
            kit,
            config,
            approver,
            budget_agent,
            hub,
            handle: tokio::runtime::Handle::current(),
        }
    }
}

fn arg(field: &str, message: &str) -> ToolError {
    ToolError::InvalidArgument {
        field: field.to_string(),
        message: message.to_string(),
    }
}

fn refused(reason: String) -> ToolError {
    ToolError::Refused {
        rule: RefusalRule::DelegationRefused,
        reason,
    }
}

/// `(agent, prompt)` from the arguments.
fn parse(args: &Value) -> Result<(Option<String>, String), ToolError> {
    let map = args
        .as_object()
        .ok_or_else(|| arg("(arguments)", "must be a JSON object"))?;
    if let Some(k) = map.keys().find(|k| *k != "agent" && *k != "prompt") {
        return Err(arg(k, "unknown argument (expected agent, prompt)"));
    }
    let agent = match map.get("agent") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(_) => return Err(arg("agent", "must be a non-empty string")),
    };
    let prompt = match map.get("prompt") {
        Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
        Some(Value::String(_)) => return Err(arg("prompt", "must not be empty")),
        Some(_) => return Err(arg("prompt", "must be a string")),
        None => return Err(arg("prompt", "is required")),
    };
    Ok((agent, prompt))
}

impl DelegateTool {
    /// The child policy for `target`, checked against the parent's on every axis.
    fn child_policy(
        &self,
        parent: &SecurityPolicy,
        target: &str,
    ) -> Result<SecurityPolicy, ToolError> {
        if parent.risk.delegation != DelegationMode::Allow {
            return Err(refused(format!(
                "risk profile `{}` does not allow delegation (delegation = \"forbidden\")",
                parent.risk_profile_name
            )));
        }
        let own = self.config.agents.get(&parent.alias);
        if target != parent.alias && !own.is_some_and(|a| a.delegates.iter().any(|d| d == target)) {
            return Err(refused(format!(
                "`{target}` is not in the delegates of `{}`; add it to agents.{}.delegates",
                parent.alias, parent.alias
            )));
        }
        match self.config.agents.get(target) {
            None => return Err(refused(format!("agent `{target}` does not exist"))),
            Some(a) if !a.enabled => return Err(refused(format!("agent `{target}` is disabled"))),
            Some(_) => {}
        }
        let mut child = SecurityPolicy::for_agent(&self.config, target, &self.kit.policy_env())
            .map_err(|e| refused(format!("the policy of `{target}` cannot be built: {e}")))?;
        child.delegation_depth = parent.delegation_depth + 1;
        ensure_no_escalation(&child, parent).map_err(|e| refused(e.to_string()))?;
        Ok(child)
    }
}

impl Tool for DelegateTool {
    fn name(&self) -> &'static str {
        "delegate"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name(),
            description: "Hand one task to a SubAgent: yourself (no agent) or an agent in your delegates. It works under a policy no wider than yours, spends your budgets, and returns its final answer.",
            parameters: json!({"type": "object", "properties": {
                "agent": {"type": "string", "description": "the agent to delegate to (default: yourself)"},
                "prompt": {"type": "string", "description": "the task"}},
                "required": ["prompt"], "additionalProperties": false}),
        }
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        parse(args).map(|_| CallCheck {
            side_effects: true,
            risk: None,
            reasons: Vec::new(),
        })
    }

    fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (agent, prompt) = parse(args)?;
        let parent = ctx.policy.clone();
        let target = agent.unwrap_or_else(|| parent.alias.clone());
        let policy = self.child_policy(&parent, &target)?;
        let (turn_id, call_id) = current_call().unwrap_or_default();
        let lineage = Lineage {
            policy,
            ledger: Arc::new(SharedLedger::new(ctx.ledger.clone(), &parent.alias)),
            budget_agent: self.budget_agent.clone(),
            hub: self.hub.nested(EventParent {
                turn_id,
                call_id,
                agent: parent.alias.clone(),
            }),
        };
        let cancel = CancellationToken::new();
        let watched = ctx.cancel.clone();
        let watcher = {
            let cancel = cancel.clone();
            self.handle.spawn(async move {
                while !watched.is_cancelled() {
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                cancel.cancel();
            })
        };
        let kit = self.kit.clone();
        let outcome = self.handle.block_on(async {
            let env = kit
                .build(&self.config, &target, self.approver.clone(), Some(lineage))
                .await
                .map_err(|e| refused(format!("the SubAgent `{target}` cannot start: {e}")))?;
            let title = format!("delegated by {}: {prompt}", parent.alias);
            let now = self.kit.clock.now().into();
            let session = kit
                .sessions
                .create_session(&target, SessionKind::Chat, &title, now)
                .await
                .map_err(|e| ToolError::Io {
                    path: "sessions.db".into(),
                    source: std::io::Error::other(e.to_string()),
                })?;
            let input = TurnInput {
                session_id: session.id.clone(),
                prompt: prompt.clone(),
                trigger: "delegate".into(),
            };
            Ok::<_, ToolError>((run_turn(&env, input, cancel).await, session.id))
        });
        watcher.abort();
        let (outcome, session_id) = outcome?;
        match outcome.status {
            TurnStatus::Completed => Ok(json!({
                "agent": target,
                "session_id": session_id,
                "turn_id": outcome.turn_id,
                "text": outcome.text,
            })),
            TurnStatus::Cancelled => Err(ToolError::Cancelled),
            TurnStatus::Failed { code, message } => Err(ToolError::Io {
                path: format!("delegate:{target}").into(),
                source: std::io::Error::other(format!(
                    "the SubAgent's turn {} failed ({code}): {message}",
                    outcome.turn_id
                )),
            }),
        }
    }
}
