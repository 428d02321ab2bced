//! The Live screen's commands: chat, the per-agent frame stream (a typed channel), approvals,
//! abort, meters, the status strip, the agent's sessions and the stored turns. Each calls one
//! `warren-api` function.

use super::Core;
use serde::Serialize;
use specta::Type;
use tauri::ipc::Channel;
use tauri::State;
use warren_api::live::{AgentStatusEntry, LiveFrame, LiveSnapshot, PendingApprovalView};
use warren_api::sessions_view::SessionView;
use warren_api::{AgentMeters, RunRequest, RunResult, RuntimeStatus, TurnSummary};
use warren_types::{ApiError, ApprovalDecision, TurnEvent, TurnTrigger};

/// A live subscription: its id (to end it) and the snapshot taken when it began.
#[derive(Debug, Clone, Serialize, Type)]
pub struct LiveSubscription {
    /// Pass to `live_unsubscribe`.
    pub id: u32,
    /// The agent's stream up to the first frame the channel will carry.
    pub snapshot: LiveSnapshot,
}

/// Sends `agent`'s frames to `frames` from now on and returns the snapshot taken in the same
/// step: frames at or below its `last_seq` are already in it.
#[tauri::command]
#[specta::specta]
pub async fn live_subscribe(
    core: State<'_, Core>,
    agent: String,
    frames: Channel<LiveFrame>,
) -> Result<LiveSubscription, ApiError> {
    let sink = Box::new(move |f: &LiveFrame| frames.send(f.clone()).is_ok());
    let (id, snapshot) = core.live.subscribe(&agent, sink);
    Ok(LiveSubscription { id, snapshot })
}

/// Ends a live subscription.
#[tauri::command]
#[specta::specta]
pub async fn live_unsubscribe(core: State<'_, Core>, id: u32) -> Result<(), ApiError> {
    core.live.unsubscribe(id);
    Ok(())
}

/// An agent's stream as of now (after a view noticed lost frames).
#[tauri::command]
#[specta::specta]
pub async fn live_snapshot(core: State<'_, Core>, agent: String) -> Result<LiveSnapshot, ApiError> {
    Ok(core.live.snapshot(&agent))
}

/// The status of every agent that ran since the app started.
#[tauri::command]
#[specta::specta]
pub async fn agent_statuses(core: State<'_, Core>) -> Result<Vec<AgentStatusEntry>, ApiError> {
    Ok(core.live.statuses())
}

/// The approval requests waiting, across agents.
#[tauri::command]
#[specta::specta]
pub async fn pending_approvals(
    core: State<'_, Core>,
) -> Result<Vec<PendingApprovalView>, ApiError> {
    Ok(core.live.pending_approvals())
}

/// Answers the approval request of call `call_id` in turn `turn_id`; false when nothing
/// waits under that pair (call ids are only unique within a turn).
#[tauri::command]
#[specta::specta]
pub async fn answer_approval(
    core: State<'_, Core>,
    turn_id: String,
    call_id: String,
    decision: ApprovalDecision,
    message: Option<String>,
) -> Result<bool, ApiError> {
    core.warren
        .answer_approval(&turn_id, &call_id, decision, message)
        .await
}

/// Runs a prompt as a turn of the agent (approvals go to the window) and returns how it ended.
#[tauri::command]
#[specta::specta]
pub async fn send_prompt(core: State<'_, Core>, req: RunRequest) -> Result<RunResult, ApiError> {
    core.warren.run_prompt(req, TurnTrigger::User, None).await
}

/// Cancels the agent's running turn; false when none runs.
#[tauri::command]
#[specta::specta]
pub async fn cancel_turn(core: State<'_, Core>, agent: String) -> Result<bool, ApiError> {
    core.warren.cancel_turn(&agent).await
}

/// The agent's budgets and what it used of them.
#[tauri::command]
#[specta::specta]
pub async fn agent_meters(core: State<'_, Core>, agent: String) -> Result<AgentMeters, ApiError> {
    core.warren.agent_meters(&agent).await
}

/// The status strip's figures.
#[tauri::command]
#[specta::specta]
pub async fn runtime_status(core: State<'_, Core>) -> Result<RuntimeStatus, ApiError> {
    core.warren.runtime_status(&core.live).await
}

/// The agent's stored turns, newest first.
#[tauri::command]
#[specta::specta]
pub async fn agent_turns(
    core: State<'_, Core>,
    agent: String,
) -> Result<Vec<TurnSummary>, ApiError> {
    core.warren.agent_turns(&agent).await
}

/// The agent's sessions, newest activity first.
#[tauri::command]
#[specta::specta]
pub async fn agent_sessions(
    core: State<'_, Core>,
    agent: String,
) -> Result<Vec<SessionView>, ApiError> {
    core.warren.sessions(Some(&agent)).await
}

/// The stored turns of one session, oldest first (to show it again and continue it).
#[tauri::command]
#[specta::specta]
pub async fn session_turns(
    core: State<'_, Core>,
    session_id: String,
) -> Result<Vec<TurnSummary>, ApiError> {
    core.warren.session_turns(&session_id).await
}

/// The stored events of one turn, to replay it.
#[tauri::command]
#[specta::specta]
pub async fn turn_events(
    core: State<'_, Core>,
    turn_id: String,
) -> Result<Vec<TurnEvent>, ApiError> {
    core.warren.turn_events(&turn_id).await
}
