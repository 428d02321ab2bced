//! The agent detail view's cron section: list, check (field errors and the next five run
//! times), add, edit, enable/disable, run now and remove. Each calls one `warren-api` function.

use super::Core;
use tauri::State;
use warren_api::cron::{CronCheck, CronJobEdit, CronJobRequest, CronJobView, CronRunView};
use warren_types::ApiError;

/// The cron jobs that run as `agent` (config jobs are read-only).
#[tauri::command]
#[specta::specta]
pub async fn cron_jobs(core: State<'_, Core>, agent: String) -> Result<Vec<CronJobView>, ApiError> {
    core.warren.cron_jobs(Some(&agent)).await
}

/// The field errors of a new job and its next five run times; saves nothing.
#[tauri::command]
#[specta::specta]
pub async fn check_cron_job(
    core: State<'_, Core>,
    req: CronJobRequest,
) -> Result<CronCheck, ApiError> {
    super::blocking(&core, move |w| w.check_cron_job(&req)).await
}

/// The field errors of an edit and the next five run times; saves nothing.
#[tauri::command]
#[specta::specta]
pub async fn check_cron_edit(
    core: State<'_, Core>,
    id: String,
    edit: CronJobEdit,
) -> Result<CronCheck, ApiError> {
    core.warren
        .check_cron_edit(&id, &edit)
        .await
        .map(|(_, check)| check)
}

/// Creates a runtime job.
#[tauri::command]
#[specta::specta]
pub async fn add_cron_job(
    core: State<'_, Core>,
    req: CronJobRequest,
) -> Result<CronJobView, ApiError> {
    core.warren.add_cron_job(&req).await
}

/// Changes a runtime job (schedule, prompt, on/off).
#[tauri::command]
#[specta::specta]
pub async fn edit_cron_job(
    core: State<'_, Core>,
    id: String,
    edit: CronJobEdit,
) -> Result<CronJobView, ApiError> {
    core.warren.edit_cron_job(&id, &edit).await
}

/// Removes a runtime job (its history stays).
#[tauri::command]
#[specta::specta]
pub async fn remove_cron_job(core: State<'_, Core>, id: String) -> Result<CronJobView, ApiError> {
    core.warren.remove_cron_job(&id).await
}

/// Runs a job now as a turn with trigger `cron` (it shows in the Live timeline) and returns
/// the recorded run once the turn ended.
#[tauri::command]
#[specta::specta]
pub async fn run_cron_job(core: State<'_, Core>, id: String) -> Result<CronRunView, ApiError> {
    core.warren.run_cron_job(&id).await
}
