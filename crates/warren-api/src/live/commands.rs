//! What a front-end does to running turns through the live view: answering an approval,
//! cancelling every running turn when the app quits.

use super::Live;
use crate::Warren;
use std::time::Duration;
use warren_types::ApiError;

impl Warren {
    /// Answers the waiting approval request of call `call_id` in turn `turn_id` (a turn run
    /// with the host's broker). A request is parked before it is announced, so one seen in an
    /// event or a snapshot is answerable at once. False when nothing waits under that pair.
    pub async fn answer_approval(
        &self,
        turn_id: &str,
        call_id: &str,
        decision: warren_types::ApprovalDecision,
        message: Option<String>,
    ) -> Result<bool, ApiError> {
        let host = self.host().await?;
        let answer = crate::approval::ApprovalAnswer {
            decision,
            message: message.filter(|m| !m.trim().is_empty()),
            no_one_to_ask: false,
        };
        Ok(host.approvals().answer(turn_id, call_id, answer))
    }
}

impl Warren {
    /// Cancels every turn `live` sees running (the app is quitting) and waits, up to `wait`,
    /// until each has ended and been recorded. Returns the agents whose turns were cancelled.
    pub async fn cancel_running_turns(&self, live: &Live, wait: Duration) -> Vec<String> {
        let running = live.running_agents();
        if running.is_empty() {
            return running;
        }
        let Ok(host) = self.host().await else {
            return Vec::new();
        };
        for agent in &running {
            host.cancel(agent);
        }
        let deadline = tokio::time::Instant::now() + wait;
        for agent in &running {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            // The turn lock is released once the turn's end is stored.
            if host.quiesce(agent, left, false).await.is_none() {
                tracing::warn!(agent = %agent, "a cancelled turn did not end before quitting");
            }
        }
        running
    }
}
