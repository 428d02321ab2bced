//! Approvals across processes (`warren approvals list | answer`): every request a turn waits
//! on, in whichever process of the install runs it (the desktop app, `warren serve`, an ACP
//! session), through the install's approvals inbox.

use crate::Warren;
use serde::Serialize;
use std::time::{Duration, Instant};
use warren_state::approval_inbox::{Inbox, InboxAnswer, InboxError};
use warren_types::{ApiError, ApprovalDecision, ErrorCode};

/// One request waiting for an answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WaitingApproval {
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
                agent: r.agent,
                turn_id: r.turn_id,
                call_id: r.call_id,
                tool: r.tool,
                arguments: r.arguments,
                reason: r.reason,
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
        self.answer_waiting_approval(&newest.turn_id, &newest.call_id, decision, message)
            .await?;
        Ok(newest)
    }
}
