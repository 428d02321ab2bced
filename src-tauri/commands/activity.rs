//! The Usage and Logs screens' commands: usage and cost by agent and day, the newest log lines,
//! and opening the log folder. Each calls one `warren-api` function.

use super::Core;
use tauri::State;
use warren_api::logs_view::{LogLine, LogQuery};
use warren_api::usage::UsageDay;
use warren_types::ApiError;

/// Usage per agent and UTC day for the last `days` days, newest first.
#[tauri::command]
#[specta::specta]
pub async fn usage_by_day(core: State<'_, Core>, days: u32) -> Result<Vec<UsageDay>, ApiError> {
    core.warren.usage_by_day(days).await
}

/// The newest lines of the JSON logs matching the agent and level filters.
#[tauri::command]
#[specta::specta]
pub async fn tail_logs(core: State<'_, Core>, query: LogQuery) -> Result<Vec<LogLine>, ApiError> {
    super::blocking(&core, move |w| w.tail_logs(&query)).await
}

/// Opens `<install>/logs/` in the file manager; returns the folder.
#[tauri::command]
#[specta::specta]
pub async fn open_logs_folder(core: State<'_, Core>) -> Result<String, ApiError> {
    super::blocking(&core, warren_api::Warren::open_logs_folder).await
}
