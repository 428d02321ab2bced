//! Approvals across processes (`warren approvals list | answer`): every request a turn waits
//! on, in whichever process of the install runs it (the desktop app, `warren serve`, an ACP
//! session), through the install's approvals inbox.

use crate::Warren;
use serde::Serialize;
use std::time::{Duration, Instant};
use warren_state::approval_inbox::{Inbox, InboxAnswer, InboxError};
use warren_types::{ApiError, ApprovalDecision, ErrorCode, PendingApproval};

/// One request waiting for an answer, in whichever process of the install.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WaitingApproval {
    /// The request (its fields at the top level).
    #[serde(flatten)]
    pub request: PendingApproval,
    /// Since when it waits (RFC 3339, UTC).
    pub since: String,
    /// The process whose turn waits.
    pub pid: u32,
}

/// How long `answer_waiting_approval` waits for the turn to take an answer.
const TAKE_WAIT: Duration = Duration::from_secs(10);

fn inbox_error(e: InboxError) -> ApiError {
    match e {
        InboxError::NotWaiting { .. } => ApiError::new(ErrorCode::NotFound, e.to_string()),
        InboxError::Refused { .. } => ApiError::new(ErrorCode::Denied, e.to_string()),
        InboxError::Io { .. } => ApiError::new(ErrorCode::Io, e.to_string()),
    }
}

impl Warren {
    /// Every approval request waiting in a live process of this install, oldest first.
    pub fn waiting_approvals(&self) -> Result<Vec<WaitingApproval>, ApiError> {
        let list = Inbox::for_install(self.layout())
            .list()
            .map_err(inbox_error)?;
        Ok(list
            .into_iter()
            .map(|r| WaitingApproval {
                request: r.request,
                since: r.since,
                pid: r.pid,
            })
            .collect())
    }

    /// Answers the request of call `call_id` in turn `turn_id`, wherever its turn runs, and
    /// returns once the turn took the answer. `not_found` when nothing waits under that pair.
    pub async fn answer_waiting_approval(
        &self,
        turn_id: &str,
        call_id: &str,
        decision: ApprovalDecision,
        message: Option<String>,
    ) -> Result<(), ApiError> {
        let inbox = Inbox::for_install(self.layout());
        inbox
            .answer(turn_id, call_id, &InboxAnswer { decision, message })
            .await
            .map_err(inbox_error)?;
        let start = Instant::now();
        while inbox.is_waiting(turn_id, call_id) {
            if start.elapsed() > TAKE_WAIT {
                return Err(ApiError::new(
                    ErrorCode::Internal,
                    format!(
                        "the turn waiting on call `{call_id}` did not take the answer within {} s",
                        TAKE_WAIT.as_secs()
                    ),
                ));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Ok(())
    }

    /// Answers the newest request waiting (the last of [`Warren::waiting_approvals`]) and
    /// returns it; `not_found` when nothing waits.
    pub async fn answer_latest_approval(
        &self,
        decision: ApprovalDecision,
        message: Option<String>,
    ) -> Result<WaitingApproval, ApiError> {
        let newest = self
            .waiting_approvals()?
            .into_iter()
            .max_by(|a, b| a.since.cmp(&b.since))
            .ok_or_else(|| ApiError::new(ErrorCode::NotFound, "no approval is waiting"))?;
        let r = &newest.request;
        self.answer_waiting_approval(&r.turn_id, &r.call_id, decision, message)
            .await?;
        Ok(newest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::live::PendingApprovalView;

    /// A request, read from the flat JSON every view of it keeps.
    fn request() -> PendingApproval {
        serde_json::from_value(serde_json::json!({
            "agent": "alice", "turn_id": "t1", "call_id": "c1",
            "tool": "shell", "arguments": "{}", "reason": "supervised",
        }))
        .unwrap()
    }

    fn keys(v: &serde_json::Value) -> Vec<&str> {
        let mut k: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        k.sort_unstable();
        k
    }

    /// The request's keys and `extra`, sorted.
    fn flat(extra: &[&'static str]) -> Vec<&'static str> {
        let mut k = vec!["agent", "arguments", "call_id", "reason", "tool", "turn_id"];
        k.extend_from_slice(extra);
        k.sort_unstable();
        k
    }

    #[test]
    fn a_waiting_request_is_one_flat_object_in_json() {
        let waiting = serde_json::to_value(WaitingApproval {
            request: request(),
            since: "2026-01-01T00:00:00Z".into(),
            pid: 7,
        })
        .unwrap();
        let view = serde_json::to_value(PendingApprovalView {
            request: request(),
            requested_at: "2026-01-01T00:00:00Z".into(),
        })
        .unwrap();
        assert_eq!(waiting["call_id"], "c1");
        assert_eq!(waiting["pid"], 7);
        assert_eq!(view["tool"], "shell");
        assert_eq!(keys(&waiting), flat(&["pid", "since"]), "{waiting}");
        assert_eq!(keys(&view), flat(&["requested_at"]), "{view}");
    }
}
