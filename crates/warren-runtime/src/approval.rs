//! Who answers approval requests during a turn: a fixed answer for non-interactive runs, or a
//! broker that parks each request until a front-end (UI, terminal, ACP client) answers it.

use crate::approval_inbox::Inbox;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
pub use warren_types::approval::{
    ApprovalAnswer, ApprovalWait, AsyncApprover, FixedApprover, PendingApproval,
};

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

impl AsyncApprover for ApprovalBroker {
    fn ask(&self, request: PendingApproval) -> ApprovalWait<'_> {
        self.register(request)
    }

    fn register(&self, request: PendingApproval) -> ApprovalWait<'_> {
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
