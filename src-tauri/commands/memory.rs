//! The Memory browser's commands: search, page through, forget, and what each grant exposes.
//! Each calls one `warren-api` function; all go through the agent's scoped memory handle.

use super::Core;
use tauri::State;
use warren_api::memory_view::{MemoryGrantView, MemoryPage};
use warren_api::{ForgottenMemory, MemoryItem};
use warren_types::ApiError;

/// Ranked recall as `agent` sees it (own rows plus granted ones); empty query = most recent.
#[tauri::command]
#[specta::specta]
pub async fn memory_recall(
    core: State<'_, Core>,
    agent: String,
    query: String,
    limit: u32,
) -> Result<Vec<MemoryItem>, ApiError> {
    super::blocking(&core, move |w| w.browse_recall(&agent, &query, limit)).await
}

/// One page of `agent`'s own rows, newest first.
#[tauri::command]
#[specta::specta]
pub async fn memory_page(
    core: State<'_, Core>,
    agent: String,
    offset: u32,
    limit: u32,
) -> Result<MemoryPage, ApiError> {
    super::blocking(&core, move |w| w.browse_page(&agent, offset, limit)).await
}

/// Removes `agent`'s row with `key` (never another agent's).
#[tauri::command]
#[specta::specta]
pub async fn memory_forget(
    core: State<'_, Core>,
    agent: String,
    key: String,
) -> Result<ForgottenMemory, ApiError> {
    super::blocking(&core, move |w| w.browse_forget(&agent, &key)).await
}

/// The agent's resolved allowlist: itself, then each granted peer with its categories.
#[tauri::command]
#[specta::specta]
pub async fn memory_grants(
    core: State<'_, Core>,
    agent: String,
) -> Result<Vec<MemoryGrantView>, ApiError> {
    super::blocking(&core, move |w| w.browse_grants(&agent)).await
}
