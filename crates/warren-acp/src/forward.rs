//! One prompt's output to the client, in order: its turn events as `session/update`
//! notifications and its approvals as `session/request_permission` requests. Both pass through
//! the prompt's [`Forwarder`], which writes every event published before an approval was asked
//! (among them the `tool_call` that announces the call) before the request itself, so an editor
//! never sees a permission request for a call it does not know yet.

use crate::rpc::{Answer, Peer};
use serde_json::{json, Value};
use std::collections::HashSet;
use tokio::sync::{mpsc, oneshot};
use warren_runtime::approval::{ApprovalAnswer, ApprovalWait, AsyncApprover, PendingApproval};
use warren_types::{ApprovalDecision, EventKind, TurnEvent};

/// An approval waiting to be asked: the request, and where its answer is handed back.
pub(super) type Ask = (PendingApproval, oneshot::Sender<Answer>);

/// ACP's tool kind of a Warren tool.
fn tool_kind(name: &str) -> &'static str {
    match name {
        "file_read" => "read",
        "file_write" | "file_edit" => "edit",
        "glob_search" | "content_search" | "memory_recall" => "search",
        "shell" | "git_operations" => "execute",
        _ => "other",
    }
}

fn raw_input(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}

/// The `tool_call` update that announces a call.
fn announce(id: &str, name: &str, arguments: &str) -> Value {
    json!({
        "sessionUpdate": "tool_call",
        "toolCallId": id,
        "title": name,
        "kind": tool_kind(name),
        "status": "pending",
        "rawInput": raw_input(arguments),
    })
}

/// The `session/update` of one turn event, if it has one.
fn update_of(e: &TurnEvent) -> Option<Value> {
    Some(match &e.kind {
        EventKind::TextDelta { text } => json!({
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }),
        EventKind::Notice { message, .. } => json!({
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": message},
        }),
        EventKind::ToolCall {
            id,
            name,
            arguments,
        } => announce(id, name, arguments),
        EventKind::ApprovalResolved { id, decision, .. } if *decision != ApprovalDecision::Deny => {
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "in_progress"})
        }
        EventKind::ToolResult { id, ok, output, .. } => json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": id,
            "status": if *ok { "completed" } else { "failed" },
            "content": [{"type": "content", "content": {"type": "text", "text": output}}],
            "rawOutput": {"ok": ok, "output": output},
        }),
        _ => return None,
    })
}

/// Writes one prompt's events and approval requests to the client.
pub(super) struct Forwarder {
    peer: Peer,
    session: String,
    /// The turn of this prompt, once its `turn_started` was seen.
    turn: Option<String>,
    /// Tool calls already announced with a `tool_call` update.
    announced: HashSet<String>,
}

impl Forwarder {
    /// For a prompt of `session`.
    pub(super) fn new(peer: Peer, session: String) -> Self {
        Forwarder {
            peer,
            session,
            turn: None,
            announced: HashSet::new(),
        }
    }

    fn update(&self, update: Value) {
        self.peer.notify(
            "session/update",
            json!({"sessionId": self.session, "update": update}),
        );
    }

    /// Forwards one event of the host (those of other turns and of SubAgents are skipped).
    pub(super) fn event(&mut self, e: TurnEvent) {
        if e.parent.is_some() {
            return;
        }
        if let EventKind::TurnStarted { session_id, .. } = &e.kind {
            if *session_id == self.session {
                self.turn = Some(e.turn_id.clone());
            }
        }
        if self.turn.as_deref() != Some(e.turn_id.as_str()) {
            return;
        }
        if let EventKind::ToolCall { id, .. } = &e.kind {
            if !self.announced.insert(id.clone()) {
                return;
            }
        }
        if let Some(update) = update_of(&e) {
            self.update(update);
        }
    }

    /// Asks one approval. The caller has forwarded every event published before it; a call
    /// still unknown to the client (a SubAgent's) is announced first.
    pub(super) fn ask(&mut self, (p, reply): Ask) {
        if self.announced.insert(p.call_id.clone()) {
            self.update(announce(&p.call_id, &p.tool, &p.arguments));
        }
        let params = json!({
            "sessionId": self.session,
            "toolCall": {
                "toolCallId": p.call_id,
                "title": format!("{} — {}", p.tool, p.reason),
                "kind": tool_kind(&p.tool),
                "status": "pending",
                "rawInput": raw_input(&p.arguments),
            },
            "options": [
                {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "allow_session", "name": "Allow for this session", "kind": "allow_always"},
                {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
            ],
        });
        // The approver may be gone (its turn was cancelled); the request is out regardless.
        let _ = reply.send(
            self.peer
                .start_request("session/request_permission", params),
        );
    }
}

/// Asks the client through `session/request_permission`, via the prompt's [`Forwarder`].
pub(super) struct AcpApprover {
    /// Where the prompt's forwarder takes approvals.
    pub(super) asks: mpsc::UnboundedSender<Ask>,
}

impl AsyncApprover for AcpApprover {
    fn ask(&self, p: PendingApproval) -> ApprovalWait<'_> {
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            if self.asks.send((p, tx)).is_err() {
                return ApprovalAnswer::no_one();
            }
            let Ok(answer) = rx.await else {
                return ApprovalAnswer::no_one();
            };
            match Peer::answer(answer).await {
                Ok(r) => match (
                    r["outcome"]["outcome"].as_str(),
                    r["outcome"]["optionId"].as_str(),
                ) {
                    (Some("selected"), Some("allow_once")) => ApprovalAnswer::approve(),
                    (Some("selected"), Some("allow_session")) => ApprovalAnswer::approve_session(),
                    (Some("selected"), Some("reject_once")) => ApprovalAnswer::deny(None),
                    (Some("cancelled"), _) => ApprovalAnswer::deny(Some(
                        "the client cancelled the permission request".into(),
                    )),
                    _ => ApprovalAnswer::deny(Some(format!(
                        "the client's answer was not understood: {r}"
                    ))),
                },
                Err(_) => ApprovalAnswer::no_one(),
            }
        })
    }
}
