//! Pause and resume agents (Agents screen; the tray has pause all / resume all). Each calls one
//! `warren-api` function and returns the agents paused afterwards.

use super::Core;
use tauri::State;
use warren_types::ApiError;

/// The agents paused now.
#[tauri::command]
#[specta::specta]
pub async fn paused_agents(core: State<'_, Core>) -> Result<Vec<String>, ApiError> {
    core.warren.paused_agents().await
}

/// Pauses (`paused = true`) or resumes one agent.
#[tauri::command]
#[specta::specta]
pub async fn set_agent_paused(
    core: State<'_, Core>,
    agent: String,
    paused: bool,
) -> Result<Vec<String>, ApiError> {
    core.warren.set_agent_paused(&agent, paused).await
}

/// Pauses every agent, or resumes every paused one.
#[tauri::command]
#[specta::specta]
pub async fn set_all_paused(core: State<'_, Core>, paused: bool) -> Result<Vec<String>, ApiError> {
    core.warren.set_all_paused(paused).await
}
