//! The Settings screen's memory backends: the `[memory]` settings, a preview of a change (the
//! validator's findings and the config diff), a connection check of every backend the change
//! would use, and saving once that check passes. The same functions as `warren memory backends`.

use super::Core;
use tauri::State;
use warren_api::memory_settings::{MemoryCheckView, MemorySettingsInput, MemorySettingsView};
use warren_api::profiles::ProfilePreview;
use warren_types::ApiError;

/// The `[memory]` settings and the backends in use.
#[tauri::command]
#[specta::specta]
pub async fn memory_settings(core: State<'_, Core>) -> Result<MemorySettingsView, ApiError> {
    super::blocking(&core, warren_api::Warren::memory_settings).await
}

/// What saving `input` would change in `config.toml`.
#[tauri::command]
#[specta::specta]
pub async fn preview_memory_settings(
    core: State<'_, Core>,
    input: MemorySettingsInput,
) -> Result<ProfilePreview, ApiError> {
    super::blocking(&core, move |w| w.preview_memory_settings(&input)).await
}

/// Opens every backend the settings with `input` would use and reports each.
#[tauri::command]
#[specta::specta]
pub async fn check_memory_settings(
    core: State<'_, Core>,
    input: MemorySettingsInput,
) -> Result<Vec<MemoryCheckView>, ApiError> {
    core.warren.check_memory_settings(&input).await
}

/// Saves `input` once every backend it would use opens.
#[tauri::command]
#[specta::specta]
pub async fn save_memory_settings(
    core: State<'_, Core>,
    input: MemorySettingsInput,
) -> Result<MemorySettingsView, ApiError> {
    core.warren.save_memory_settings(&input).await
}
