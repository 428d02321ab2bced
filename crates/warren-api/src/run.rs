//! Running one prompt for an agent (`warren run`, the desktop chat).

use crate::{errors::host_error, Warren};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use warren_runtime::turn::TurnStatus;
use warren_types::AsyncApprover;
use warren_types::{ApiError, TurnTrigger};

/// What to run.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunRequest {
    /// The agent.
    pub agent: String,
    /// Continue this session (a new one when absent).
    pub session: Option<String>,
    /// The prompt.
    pub prompt: String,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// With a final answer.
    Completed,
    /// With an error (see `error_code`).
    Failed,
    /// Cancelled by the user or a shutdown.
    Cancelled,
}

impl RunStatus {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for RunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// How the turn ended.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RunResult {
    /// The turn id.
    pub turn_id: String,
    /// The session the turn belongs to.
    pub session: String,
    /// How it ended.
    pub status: RunStatus,
    /// The final text when completed.
    pub text: String,
    /// The error code when failed.
    pub error_code: Option<warren_types::TurnFailure>,
    /// The error message when failed.
    pub error_message: Option<String>,
}

impl Warren {
    /// Runs one prompt to the end of its turn. Events stream to the host's subscribers;
    /// approvals go to `approver` (or to the host's approval broker when `None`).
    pub async fn run_prompt(
        &self,
        req: RunRequest,
        trigger: TurnTrigger,
        approver: Option<Arc<dyn AsyncApprover>>,
    ) -> Result<RunResult, ApiError> {
        let host = self.host().await?;
        let trigger_name = trigger.as_str();
        let out = host
            .run(
                &req.agent,
                req.session.as_deref(),
                &req.prompt,
                trigger,
                approver,
            )
            .await
            .map_err(|e| self.hint_unknown_agent(host_error(e), &req.agent))?;
        let session = host
            .sessions()
            .turns_session(&out.turn_id)
            .await
            .map_err(|e| ApiError::new(warren_types::ErrorCode::Storage, e.to_string()))?
            .unwrap_or_default();
        let (status, code, message) = match out.status {
            TurnStatus::Completed => (RunStatus::Completed, None, None),
            TurnStatus::Cancelled => (RunStatus::Cancelled, None, None),
            TurnStatus::Failed { code, message } => (RunStatus::Failed, Some(code), Some(message)),
        };
        if let Some(code) = &code {
            // Info, not a warning: the caller shows the failure itself (once).
            tracing::info!(agent = %req.agent, turn = %out.turn_id, trigger = trigger_name, code = %code, "turn failed");
        } else {
            tracing::info!(agent = %req.agent, turn = %out.turn_id, trigger = trigger_name, status = status.as_str(), "turn ended");
        }
        Ok(RunResult {
            turn_id: out.turn_id,
            session,
            status,
            text: out.text,
            error_code: code,
            error_message: message,
        })
    }

    /// Cancels the running turn of `agent`; false when none runs.
    pub async fn cancel_turn(&self, agent: &str) -> Result<bool, ApiError> {
        Ok(self.host().await?.cancel(agent))
    }
}

#[cfg(test)]
mod tests {
    use super::RunStatus;

    #[test]
    fn run_statuses_are_their_documented_codes() {
        let table = [
            (RunStatus::Completed, "completed"),
            (RunStatus::Failed, "failed"),
            (RunStatus::Cancelled, "cancelled"),
        ];
        crate::test_support::assert_codes(&table);
        for (s, code) in table {
            assert_eq!(s.as_str(), code);
        }
    }
}
