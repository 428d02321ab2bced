//! The approval vocabulary shared by the agent loop and every front-end that answers for it (the
//! terminal of `warren run`, the desktop's broker, an ACP client): a request, its answer, and the
//! approver that turns one into the other.

use crate::events::ApprovalDecision;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// One request waiting for an answer: which call of which turn asks, and why. Every view of a
/// waiting request (the approvals inbox's record, `warren approvals list`, the window's list)
/// carries these fields, flattened into its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PendingApproval {
    /// The agent.
    pub agent: String,
    /// The turn.
    pub turn_id: String,
    /// The tool call id (unique within its turn; what an answer names).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its arguments as JSON text.
    pub arguments: String,
    /// Why it needs approval.
    pub reason: String,
}

/// The answer to an approval request: the decision and an optional message for the model.
/// The one approval answer of Warren: approvers give it, the tool gate takes it.
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

    /// Approve this call and the same kind of call for the rest of the session.
    pub fn approve_session() -> Self {
        ApprovalAnswer {
            decision: ApprovalDecision::ApproveSession,
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

    /// Whether the call may run.
    pub fn approves(&self) -> bool {
        self.decision != ApprovalDecision::Deny
    }
}

/// The wait for one answer.
pub type ApprovalWait<'a> = Pin<Box<dyn Future<Output = ApprovalAnswer> + Send + 'a>>;

/// Answers approval requests; may take as long as a person needs.
pub trait AsyncApprover: Send + Sync {
    /// Answers one request.
    fn ask(&self, request: PendingApproval) -> ApprovalWait<'_>;

    /// Takes `request` in now and returns the wait for its answer. The turn loop calls this
    /// before it announces the request, so an answer sent on the announcement always finds
    /// it. The default asks when the wait is first polled, which is enough for an approver
    /// that is not answered from outside.
    fn register(&self, request: PendingApproval) -> ApprovalWait<'_> {
        self.ask(request)
    }
}

/// Always the same answer (`--approve`, `--deny`, or nobody to ask).
pub struct FixedApprover(pub ApprovalAnswer);

impl AsyncApprover for FixedApprover {
    fn ask(&self, _request: PendingApproval) -> ApprovalWait<'_> {
        let answer = self.0.clone();
        Box::pin(async move { answer })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> PendingApproval {
        PendingApproval {
            agent: "alice".into(),
            turn_id: "t1".into(),
            call_id: "c1".into(),
            tool: "shell".into(),
            arguments: "{}".into(),
            reason: "medium risk".into(),
        }
    }

    fn block_on<F: Future>(f: F) -> F::Output {
        // A one-shot executor for futures that are ready on first poll.
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut f = std::pin::pin!(f);
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(v) => v,
            std::task::Poll::Pending => panic!("a fixed answer is ready at once"),
        }
    }

    #[test]
    fn a_fixed_approver_gives_its_answer_to_every_request() {
        let deny = FixedApprover(ApprovalAnswer::deny(Some("no".into())));
        let a = block_on(deny.register(request()));
        assert!(!a.approves());
        assert_eq!(a.message.as_deref(), Some("no"));
        assert!(
            block_on(FixedApprover(ApprovalAnswer::approve_session()).ask(request())).approves()
        );
        let none = ApprovalAnswer::no_one();
        assert!(none.no_one_to_ask && !none.approves());
    }
}
