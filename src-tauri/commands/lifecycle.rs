//! Rename, delete (plan, then archive) and restore from the Agents screen, through the same
//! lifecycle service as `warren agents`. Each calls one `warren-api` function.

use super::Core;
use tauri::State;
use warren_api::lifecycle_view::{
    ArchiveView, LifecycleOutcome, PendingOperationView, ResumeOutcomeView,
};
use warren_types::ApiError;

/// Renames agent `old` to `new_alias` (`dry_run`: only the plan). A running turn makes it
/// `agent_busy`.
#[tauri::command]
#[specta::specta]
pub async fn rename_agent(
    core: State<'_, Core>,
    old: String,
    new_alias: String,
    dry_run: bool,
) -> Result<LifecycleOutcome, ApiError> {
    core.warren
        .rename_agent(&old, &new_alias, dry_run, false)
        .await
}

/// Deletes agent `alias` into an archive (`dry_run`: only the plan, with its blockers).
#[tauri::command]
#[specta::specta]
pub async fn delete_agent(
    core: State<'_, Core>,
    alias: String,
    dry_run: bool,
) -> Result<LifecycleOutcome, ApiError> {
    core.warren.delete_agent(&alias, dry_run, false).await
}

/// The deletion archives, newest last.
#[tauri::command]
#[specta::specta]
pub async fn list_archives(core: State<'_, Core>) -> Result<Vec<ArchiveView>, ApiError> {
    super::blocking(&core, warren_api::Warren::list_archives).await
}

/// Restores the agent of `archive`, as `as_alias` when given; with `dry_run` only its plan
/// (what comes back, where, the grants put back and those that cannot be).
#[tauri::command]
#[specta::specta]
pub async fn restore_agent(
    core: State<'_, Core>,
    archive: String,
    as_alias: Option<String>,
    dry_run: bool,
) -> Result<LifecycleOutcome, ApiError> {
    core.warren
        .restore_agent(&archive, as_alias.as_deref(), dry_run)
        .await
}

/// The unfinished renames, deletes and restores, with the step each stopped at and the error
/// of the last attempt to finish it.
#[tauri::command]
#[specta::specta]
pub async fn pending_operations(
    core: State<'_, Core>,
) -> Result<Vec<PendingOperationView>, ApiError> {
    Ok(core.warren.pending_lifecycle().await)
}

/// Tries again to finish every unfinished rename, delete or restore.
#[tauri::command]
#[specta::specta]
pub async fn resume_operations(core: State<'_, Core>) -> Result<Vec<ResumeOutcomeView>, ApiError> {
    core.warren.resume_lifecycle().await
}
