//! Who answers approval requests during a turn: a fixed answer for non-interactive runs, or a
//! broker that parks each request until a front-end (UI, terminal, ACP client) answers it.

use crate::approval_inbox::Inbox;
use async_trait::async_trait;
use futures::future::BoxFuture;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
/// The one approval answer type, shared with the tool gate.
pub use warren_tools::ApprovalAnswer;

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

/// Answers approval requests; may take as long as a person needs.
#[async_trait]
pub trait AsyncApprover: Send + Sync {
    /// Answers one request.
    async fn ask(&self, request: PendingApproval) -> ApprovalAnswer;

    /// Takes `request` in now and returns the wait for its answer. The turn loop calls this
    /// before it announces the request, so an answer sent on the announcement always finds
    /// it. The default asks when the wait is first polled, which is enough for an approver
    /// that is not answered from outside.
    fn register(&self, request: PendingApproval) -> BoxFuture<'_, ApprovalAnswer> {
        self.ask(request)
    }
}

/// Always the same answer (`--approve`, `--deny`, or nobody to ask).
pub struct FixedApprover(pub ApprovalAnswer);

#[async_trait]
impl AsyncApprover for FixedApprover {
    async fn ask(&self, _request: PendingApproval) -> ApprovalAnswer {
        self.0.clone()
    }
}

/// A request's key: its turn and its call id (call ids are only unique within a turn).
type Key = (String, String);

type Parked = HashMap<Key, (PendingApproval, oneshot::Sender<ApprovalAnswer>)>;

/// Parks requests until [`ApprovalBroker::answer`] is called for their turn and call id, or,
/// with an inbox, until another process of the install answers through it.
#[derive(Clone, Default)]
pub struct ApprovalBroker {
    pending: Arc<Mutex<Parked>>,
    inbox: Option<Arc<Inbox>>,
}

/// Takes a parked request out when its wait ends, answered or dropped (a cancelled turn).
struct Unpark {
    pending: Arc<Mutex<Parked>>,
    inbox: Option<Arc<Inbox>>,
    key: Key,
}

impl Drop for Unpark {
    fn drop(&mut self) {
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&self.key);
        if let Some(inbox) = &self.inbox {
            inbox.withdraw(&self.key.0, &self.key.1);
        }
    }
}

/// How often a parked request looks for an answer left in the inbox by another process.
const INBOX_POLL: std::time::Duration = std::time::Duration::from_millis(200);

impl ApprovalBroker {
    /// A broker with nothing pending, answered in this process only.
    pub fn new() -> Self {
        Self::default()
    }

    /// A broker that also publishes every parked request to the install's approvals inbox
    /// and takes answers other processes leave there.
    pub fn with_inbox(inbox: Inbox) -> Self {
        ApprovalBroker {
            pending: Arc::default(),
            inbox: Some(Arc::new(inbox)),
        }
    }

    /// The requests waiting now.
    pub fn pending(&self) -> Vec<PendingApproval> {
        let map = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<_> = map.values().map(|(p, _)| p.clone()).collect();
        v.sort_by(|a, b| (&a.turn_id, &a.call_id).cmp(&(&b.turn_id, &b.call_id)));
        v
    }

    /// Answers the request of call `call_id` in turn `turn_id`; false when nothing waits
    /// under that pair.
    pub fn answer(&self, turn_id: &str, call_id: &str, answer: ApprovalAnswer) -> bool {
        let entry = self
            .pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&(turn_id.to_string(), call_id.to_string()));
        match entry {
            Some((_, tx)) => tx.send(answer).is_ok(),
            None => false,
        }
    }
}

#[async_trait]
impl AsyncApprover for ApprovalBroker {
    async fn ask(&self, request: PendingApproval) -> ApprovalAnswer {
        self.register(request).await
    }

    fn register(&self, request: PendingApproval) -> BoxFuture<'_, ApprovalAnswer> {
        let (tx, mut rx) = oneshot::channel();
        let key = (request.turn_id.clone(), request.call_id.clone());
        if let Some(inbox) = &self.inbox {
            // Without the inbox the request is still answerable here; another process just
            // cannot see it.
            if let Err(e) = inbox.publish(&request) {
                tracing::warn!(error = %e, "approval request not published to the inbox");
            }
        }
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.clone(), (request, tx));
        let unpark = Unpark {
            pending: self.pending.clone(),
            inbox: self.inbox.clone(),
            key: key.clone(),
        };
        let inbox = self.inbox.clone();
        Box::pin(async move {
            let answer = match inbox {
                None => rx.await.unwrap_or_else(|_| ApprovalAnswer::no_one()),
                Some(inbox) => {
                    let mut tick = tokio::time::interval(INBOX_POLL);
                    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
                    loop {
                        tokio::select! {
                            a = &mut rx => break a.unwrap_or_else(|_| ApprovalAnswer::no_one()),
                            _ = tick.tick() => {
                                if let Some(a) = inbox.take_answer(&key.0, &key.1) {
                                    break a;
                                }
                            }
                        }
                    }
                }
            };
            drop(unpark);
            answer
        })
    }
}
