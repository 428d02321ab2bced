//! The config file itself, for the window's broken-config panel: open it with the system's
//! opener, and check it again after the user fixed it (starting the runtime it stopped).

use super::Core;
use crate::runtime::TrayRuntime;
use tauri::State;
use warren_types::{ApiError, ValidationReport};

/// Opens `config.toml` with the desktop's opener; returns its path.
#[tauri::command]
#[specta::specta]
pub async fn open_config_file(core: State<'_, Core>) -> Result<String, ApiError> {
    super::blocking(&core, warren_api::Warren::open_config_file).await
}

/// Validates `config.toml` again; when it loads, starts the runtime it stopped at start.
#[tauri::command]
#[specta::specta]
pub async fn check_config_again(
    core: State<'_, Core>,
    tray: State<'_, TrayRuntime>,
) -> Result<ValidationReport, ApiError> {
    let report = super::blocking(&core, warren_api::Warren::validate_config).await?;
    if report.ok {
        tray.restart_if_stopped()?;
    }
    Ok(report)
}
