//! Who answers approval requests during a turn: a fixed answer for non-interactive runs, or a
//! broker that parks each request until a front-end (UI, terminal, ACP client) answers it.

use async_trait::async_trait;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use warren_types::ApprovalDecision;

/// One request waiting for an answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PendingApproval {
    /// The agent.
    pub agent: String,
    /// The turn.
    pub turn_id: String,
    /// The tool call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its arguments as JSON text.
    pub arguments: String,
    /// Why it needs approval.
    pub reason: String,
}

/// An answer: the decision and an optional message for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalAnswer {
    /// The decision.
    pub decision: ApprovalDecision,
    /// Message for the model (with a denial).
    pub message: Option<String>,
    /// True when nobody could be asked (the runtime denied it).
    pub no_one_to_ask: bool,
}

impl ApprovalAnswer {
    /// Approve this call.
    pub fn approve() -> Self {
        ApprovalAnswer {
            decision: ApprovalDecision::ApproveOnce,
            message: None,
            no_one_to_ask: false,
        }
    }

    /// Deny with an optional message.
    pub fn deny(message: Option<String>) -> Self {
        ApprovalAnswer {
            decision: ApprovalDecision::Deny,
            message,
            no_one_to_ask: false,
        }
    }

    /// Nobody to ask: the runtime denies.
    pub fn no_one() -> Self {
        ApprovalAnswer {
            decision: ApprovalDecision::Deny,
            message: Some("no one is available to approve this call; the runtime denied it".into()),
            no_one_to_ask: true,
        }
    }
}

/// Answers approval requests; may take as long as a person needs.
#[async_trait]
pub trait AsyncApprover: Send + Sync {
    /// Answers one request.
    async fn ask(&self, request: PendingApproval) -> ApprovalAnswer;
}

/// Always the same answer (`--approve`, `--deny`, or nobody to ask).
pub struct FixedApprover(pub ApprovalAnswer);

#[async_trait]
impl AsyncApprover for FixedApprover {
    async fn ask(&self, _request: PendingApproval) -> ApprovalAnswer {
        self.0.clone()
    }
}

type Parked = HashMap<String, (PendingApproval, oneshot::Sender<ApprovalAnswer>)>;

/// Parks requests until [`ApprovalBroker::answer`] is called for their call id.
#[derive(Clone, Default)]
pub struct ApprovalBroker {
    pending: Arc<Mutex<Parked>>,
}

impl ApprovalBroker {
    /// A broker with nothing pending.
    pub fn new() -> Self {
        Self::default()
    }

    /// The requests waiting now.
    pub fn pending(&self) -> Vec<PendingApproval> {
        let map = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<_> = map.values().map(|(p, _)| p.clone()).collect();
        v.sort_by(|a, b| a.call_id.cmp(&b.call_id));
        v
    }

    /// Answers the request of `call_id`; false when nothing waits under that id.
    pub fn answer(&self, call_id: &str, answer: ApprovalAnswer) -> bool {
        let entry = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(call_id);
        match entry {
            Some((_, tx)) => tx.send(answer).is_ok(),
            None => false,
        }
    }
}

#[async_trait]
impl AsyncApprover for ApprovalBroker {
    async fn ask(&self, request: PendingApproval) -> ApprovalAnswer {
        let (tx, rx) = oneshot::channel();
        let id = request.call_id.clone();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.clone(), (request, tx));
        let answer = rx.await.unwrap_or_else(|_| ApprovalAnswer::no_one());
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
        answer
    }
}
