//! What deserves a desktop notification (rules §9.2): a new approval request waiting, or an
//! agent's turn failing. The desktop app feeds every state change of the live bridge to one
//! [`Notifier`] and shows what it returns while its window is not in front.

use crate::live::{AgentStatus, StateChange};
use std::collections::{BTreeMap, BTreeSet};

/// One notification to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The title line.
    pub summary: String,
    /// The text under it.
    pub body: String,
}

/// Turns state changes into notifications: each approval request once, each failure once (an
/// agent that keeps failing is reported again only after it recovered).
#[derive(Debug, Default)]
pub struct Notifier {
    seen_approvals: BTreeSet<String>,
    last_status: BTreeMap<String, AgentStatus>,
}

impl Notifier {
    /// A notifier that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The notifications `change` calls for (usually none).
    pub fn on_change(&mut self, change: &StateChange) -> Vec<Notification> {
        match change {
            StateChange::Approvals(pending) => {
                let mut out = Vec::new();
                for p in pending.iter().map(|v| &v.request) {
                    if self.seen_approvals.insert(p.call_id.clone()) {
                        out.push(Notification {
                            summary: format!("{} is waiting for approval", p.agent),
                            body: format!("{}: {}", p.tool, p.reason),
                        });
                    }
                }
                // Forget answered requests so the set does not grow without bound.
                let live: BTreeSet<&String> = pending.iter().map(|p| &p.request.call_id).collect();
                self.seen_approvals.retain(|id| live.contains(id));
                out
            }
            StateChange::Status(s) => {
                let before = self.last_status.insert(s.agent.clone(), s.status);
                if s.status == AgentStatus::Error && before != Some(AgentStatus::Error) {
                    vec![Notification {
                        summary: format!("{}'s turn failed", s.agent),
                        body: "Open its Live view for the error.".to_string(),
                    }]
                } else {
                    Vec::new()
                }
            }
            StateChange::AgentsChanged { .. } | StateChange::Budget { .. } => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::{AgentStatusEntry, PendingApprovalView};

    fn pending(id: &str) -> PendingApprovalView {
        PendingApprovalView {
            request: warren_types::PendingApproval {
                agent: "writer".into(),
                turn_id: "t".into(),
                call_id: id.into(),
                tool: "file_write".into(),
                arguments: "{}".into(),
                reason: "`file_write` is not in auto_approve".into(),
            },
            requested_at: "2026-01-01T00:00:00Z".into(),
        }
    }

    fn status(s: AgentStatus) -> StateChange {
        StateChange::Status(AgentStatusEntry {
            agent: "writer".into(),
            status: s,
        })
    }

    #[test]
    fn each_request_once_and_each_failure_once() {
        let mut n = Notifier::new();
        let first = n.on_change(&StateChange::Approvals(vec![pending("c1")]));
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].summary, "writer is waiting for approval");
        assert!(first[0].body.starts_with("file_write: "));
        // The same list again, then with a second request: only the new one.
        assert!(n
            .on_change(&StateChange::Approvals(vec![pending("c1")]))
            .is_empty());
        let second = n.on_change(&StateChange::Approvals(vec![pending("c1"), pending("c2")]));
        assert_eq!(second.len(), 1);
        assert!(n.on_change(&StateChange::Approvals(vec![])).is_empty());

        assert!(n.on_change(&status(AgentStatus::Working)).is_empty());
        assert_eq!(n.on_change(&status(AgentStatus::Error)).len(), 1);
        assert!(n.on_change(&status(AgentStatus::Error)).is_empty());
        assert!(n.on_change(&status(AgentStatus::Working)).is_empty());
        assert_eq!(n.on_change(&status(AgentStatus::Error)).len(), 1);
        assert!(n
            .on_change(&StateChange::AgentsChanged {
                finished: Vec::new()
            })
            .is_empty());
    }
}
