//! The `delegate {agent?, prompt}` tool (rules §5): runs one task as a SubAgent — the agent
//! itself or one listed in its `delegates` — under a child policy that may never exceed the
//! parent's, and a memory reach no wider than the parent's (see `delegate_memory`). The child's turn is a normal turn (stored, with receipts) whose events carry the
//! parent's turn and call id, and it spends the parent's action and cost budgets. The parent's
//! `tool_result` for the call names the child turn (`sub_turn_id`), so a replay of the parent
//! can find it.

use super::kit::{SessionParts, TurnKit};
use super::{run_turn, TurnInput, TurnStatus};
use crate::approval::AsyncApprover;
use crate::delegate_memory::MemoryReach;
use crate::events::EventHub;
use async_trait::async_trait;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::SystemTime;
use warren_policy::{
    ensure_no_escalation, ActionLedger, ActionTicket, BudgetError, RefusalRule, SecurityPolicy,
};
use warren_state::sessions::SessionKind;
use warren_tools::{CallCheck, Tool, ToolContext, ToolError, ToolSpec};
use warren_types::{Config, DelegationMode, EventParent};

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
    /// The memory the child may reach: never more than the parent's.
    pub memory: MemoryReach,
    /// The configured MCP servers the parent has: the child gets those of its own list that
    /// are among them, never another.
    pub mcp_servers: Vec<String>,
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
    memory: MemoryReach,
    mcp_servers: Vec<String>,
}

impl DelegateTool {
    /// A tool for a turn built from `config`, whose approvals go to `approver`, whose cost is
    /// charged to `budget_agent`, whose events go to `hub` and whose memory reach is `memory`
    /// (the bound on every child's).
    pub fn new(
        kit: TurnKit,
        config: Arc<Config>,
        approver: Arc<dyn AsyncApprover>,
        budget_agent: String,
        hub: EventHub,
        memory: MemoryReach,
    ) -> Self {
        DelegateTool {
            kit,
            config,
            approver,
            budget_agent,
            hub,
            memory,
            mcp_servers: Vec::new(),
        }
    }

    /// The configured MCP servers of the delegating turn: the bound on every child's.
    pub fn with_mcp_servers(mut self, names: Vec<String>) -> Self {
        self.mcp_servers = names;
        self
    }
}

/// How long a SubAgent turn waits for its target's lock (a turn or a lifecycle operation of
/// the target in progress) before the delegation is refused.
const SUBAGENT_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

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
        // A SubAgent turn is a turn of the target: an alias in an unfinished rename, delete or
        // restore runs none until the operation is finished.
        warren_state::lifecycle::refuse_if_pending(&self.kit.policy_env().layout, target)
            .map_err(|e| refused(e.to_string()))?;
        let mut child = SecurityPolicy::for_agent(&self.config, target, &self.kit.policy_env())
            .map_err(|e| refused(format!("the policy of `{target}` cannot be built: {e}")))?;
        child.delegation_depth = parent.delegation_depth + 1;
        ensure_no_escalation(&child, parent).map_err(|e| refused(e.to_string()))?;
        Ok(child)
    }
}

#[async_trait]
impl Tool for DelegateTool {
    fn name(&self) -> &'static str {
        "delegate"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Hand one task to a SubAgent: yourself (no agent) or an agent in your delegates. It works under a policy no wider than yours, spends your budgets, and returns its final answer.".into(),
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

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (agent, prompt) = parse(args)?;
        let parent = ctx.policy.clone();
        let target = agent.unwrap_or_else(|| parent.alias.clone());
        let policy = self.child_policy(&parent, &target)?;
        // A SubAgent turn is a turn of the target: it holds the target's lock as any turn does
        // (so no turn of the target, and no rename, delete or restore of it, runs meanwhile),
        // and a paused or pending target runs none. Delegating to oneself runs under the lock
        // the parent's turn already holds.
        let layout = self.kit.policy_env().layout.clone();
        let _target_lock = if target == parent.alias {
            None
        } else {
            let wait =
                warren_state::agent_lock::acquire(&layout, &target, Some(SUBAGENT_LOCK_WAIT));
            let lock = tokio::select! {
                r = wait => r.map_err(|e| refused(format!("the lock of `{target}`: {e}")))?,
                () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            };
            Some(lock.ok_or_else(|| {
                refused(format!(
                    "`{target}` is busy with another turn or a lifecycle operation (waited {} s); delegate again when it is done",
                    SUBAGENT_LOCK_WAIT.as_secs()
                ))
            })?)
        };
        warren_state::lifecycle::refuse_if_pending(&layout, &target)
            .map_err(|e| refused(e.to_string()))?;
        let paused =
            warren_state::pause::paused_agents(&layout).map_err(|e| refused(e.to_string()))?;
        if paused.contains(&target) {
            return Err(refused(format!(
                "`{target}` is paused; it runs no turns, SubAgent turns included, until resumed"
            )));
        }
        let memory = self.memory.for_child(&self.config, &target).map_err(|e| {
            refused(format!(
                "the memory of the SubAgent `{target}` cannot be bounded: {e}"
            ))
        })?;
        let lineage = Lineage {
            memory,
            mcp_servers: self.mcp_servers.clone(),
            policy,
            ledger: Arc::new(SharedLedger::new(ctx.ledger.clone(), &parent.alias)),
            budget_agent: self.budget_agent.clone(),
            hub: self.hub.nested(EventParent {
                turn_id: ctx.call.turn_id.clone(),
                call_id: ctx.call.call_id.clone(),
                agent: parent.alias.clone(),
            }),
        };
        let env = self
            .kit
            .build(
                &self.config,
                &target,
                self.approver.clone(),
                Some(lineage),
                SessionParts::default(),
            )
            .await
            .map_err(|e| refused(format!("the SubAgent `{target}` cannot start: {e}")))?;
        let title = format!("delegated by {}: {prompt}", parent.alias);
        let now = self.kit.clock.now().into();
        let session = self
            .kit
            .sessions
            .create_session(&target, SessionKind::Chat, &title, now)
            .await
            .map_err(|e| ToolError::Io {
                path: "sessions.db".into(),
                source: std::io::Error::other(e.to_string()),
            })?;
        let session_id = session.id.clone();
        let input = TurnInput {
            session_id: session.id,
            prompt,
            trigger: warren_types::TurnTrigger::Delegate,
        };
        // Cancelling the parent's call cancels the child's turn.
        let outcome = run_turn(&env, input, ctx.cancel.child_token()).await;
        // The parent's result names the child turn, however the call ends.
        let _ = ctx.call.sub_turn.set(outcome.turn_id.clone());
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

#[cfg(test)]
mod tests {
    use crate::host::{Host, HostEnv};
    use crate::turn::TurnStatus;
    use serde_json::json;
    use std::collections::BTreeMap;
    use warren_testkit::fake_llm::{FakeLlm, Reply};
    use warren_testkit::TestInstall;
    use warren_types::{EventKind, ProviderFamily, TurnEvent, TurnTrigger};

    fn sub_turns(events: &[TurnEvent]) -> Vec<(String, Option<String>)> {
        events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ToolResult {
                    id, sub_turn_id, ..
                } => Some((id.clone(), sub_turn_id.clone())),
                _ => None,
            })
            .collect()
    }

    async fn host(fake: &FakeLlm) -> (TestInstall, Host) {
        let t = TestInstall::with_config(&format!(
            r#"
[risk_profiles.lead]
level = "full"
allowed_commands = ["*"]
delegation = "allow"

[agents.alice]
risk_profile = "lead"
model_provider = "openai.main"
delegates = ["bob"]
[agents.alice.workspace.access]
bob = "read_write"

[agents.bob]
risk_profile = "lead"
model_provider = "openai.main"

{}"#,
            fake.config_block("main")
        ))
        .unwrap();
        let mut vars = BTreeMap::new();
        vars.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
        let env = HostEnv {
            home: Some(t.root().join("home")),
            vars,
        };
        let h = Host::open(t.layout(), env).await.unwrap();
        (t, h)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_delegate_result_names_the_child_turn_that_nests_under_its_call() {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            // alice delegates, then reads a file, then answers.
            Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "say hi"})),
            // bob: one tool call of his own, then his answer.
            Reply::tool_call("file_read", json!({"path": "missing.txt"})),
            Reply::text("hi from bob"),
            Reply::tool_call("file_read", json!({"path": "other.txt"})),
            Reply::text("bob said hi"),
        ]);
        let (_t, h) = host(&fake).await;
        let mut rx = h.subscribe();
        let out = h
            .run("alice", None, "go", TurnTrigger::User, None)
            .await
            .unwrap();
        assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
        let mut events = Vec::new();
        while let Ok(e) = rx.try_recv() {
            events.push(e);
        }
        let parent: Vec<_> = events
            .iter()
            .filter(|e| e.turn_id == out.turn_id)
            .cloned()
            .collect();
        let child: Vec<_> = events
            .iter()
            .filter(|e| e.agent == "bob")
            .cloned()
            .collect();
        let child_turn = child
            .first()
            .unwrap_or_else(|| panic!("bob ran no turn: {events:?}"))
            .turn_id
            .clone();
        assert_ne!(child_turn, out.turn_id);
        let delegate_call = parent
            .iter()
            .find_map(|e| match &e.kind {
                EventKind::ToolCall { id, name, .. } if name == "delegate" => Some(id.clone()),
                _ => None,
            })
            .unwrap();
        // Live: every child event names the parent's turn and its delegate call, and the
        // delegate result names the child turn; other results name none.
        assert!(child.iter().all(|e| e.turn_id == child_turn
            && e.parent.as_ref().is_some_and(|p| p.turn_id == out.turn_id
                && p.call_id == delegate_call
                && p.agent == "alice")));
        let results = sub_turns(&parent);
        assert_eq!(results.len(), 2, "{results:?}");
        assert_eq!(
            results[0],
            (delegate_call.clone(), Some(child_turn.clone())),
            "the delegate result names the child turn"
        );
        assert_eq!(results[1].1, None, "a file_read names no child turn");
        assert_eq!(
            sub_turns(&child),
            vec![(
                child
                    .iter()
                    .find_map(|e| match &e.kind {
                        EventKind::ToolCall { id, .. } => Some(id.clone()),
                        _ => None,
                    })
                    .unwrap(),
                None
            )],
            "the child's own tool call is in its stream"
        );
        // Stored: the parent's replay finds the child turn, whose events nest under the call.
        let stored = h.sessions().turn_events(&out.turn_id).await.unwrap();
        assert_eq!(
            sub_turns(&stored)[0],
            (delegate_call.clone(), Some(child_turn.clone()))
        );
        let stored_child = h.sessions().turn_events(&child_turn).await.unwrap();
        assert_eq!(stored_child, child);
        assert!(matches!(
            stored_child.last().map(|e| &e.kind),
            Some(EventKind::TurnCompleted { text }) if text == "hi from bob"
        ));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_parent_cancelled_during_the_child_turn_still_names_it() {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "take long"})),
            Reply::text("too late").delay(std::time::Duration::from_secs(5)),
        ]);
        let (_t, h) = host(&fake).await;
        let mut rx = h.subscribe();
        let mut events = Vec::new();
        let (out, ()) = tokio::join!(h.run("alice", None, "go", TurnTrigger::User, None), async {
            while let Some(e) = rx.recv().await {
                let child_started =
                    e.agent == "bob" && matches!(e.kind, EventKind::TurnStarted { .. });
                events.push(e);
                if child_started {
                    assert!(h.cancel("alice"));
                    break;
                }
            }
        });
        let out = out.unwrap();
        assert_eq!(out.status, TurnStatus::Cancelled, "{out:?}");
        while let Ok(e) = rx.try_recv() {
            events.push(e);
        }
        let child_turn = events
            .iter()
            .find(|e| e.agent == "bob")
            .unwrap()
            .turn_id
            .clone();
        let stored = h.sessions().turn_events(&out.turn_id).await.unwrap();
        let results: Vec<_> = stored
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ToolResult {
                    ok, sub_turn_id, ..
                } => Some((*ok, sub_turn_id.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(
            results,
            vec![(false, Some(child_turn.clone()))],
            "the interrupted delegate result names the cancelled child turn"
        );
        let child = h.sessions().turn_events(&child_turn).await.unwrap();
        assert!(matches!(
            child.last().map(|e| &e.kind),
            Some(EventKind::TurnCancelled {})
        ));
    }
}
