//! The Settings screen's commands: provider keys (stored, never shown back), the secret store,
//! the sandbox report, start hidden and start on login. Each calls one `warren-api` function.

use super::Core;
use tauri::State;
use warren_api::policy::DoctorReport;
use warren_api::settings::{DesktopSettingsView, ProviderKeyView};
use warren_api::SecretBackend;
use warren_types::{ApiError, ErrorCode};

/// Every provider route with whether its key is set and where it is kept.
#[tauri::command]
#[specta::specta]
pub async fn provider_keys(core: State<'_, Core>) -> Result<Vec<ProviderKeyView>, ApiError> {
    super::blocking(&core, warren_api::Warren::provider_keys).await
}

/// Stores (or replaces) the API key of a provider route in the secret store.
#[tauri::command]
#[specta::specta]
pub async fn set_provider_key(
    core: State<'_, Core>,
    reference: String,
    value: String,
) -> Result<ProviderKeyView, ApiError> {
    super::blocking(&core, move |w| w.set_provider_key(&reference, &value)).await
}

/// Where user secrets are kept: the desktop keyring or the encrypted file.
#[tauri::command]
#[specta::specta]
pub async fn secret_backend(core: State<'_, Core>) -> Result<SecretBackend, ApiError> {
    super::blocking(&core, warren_api::Warren::secret_backend).await
}

/// The sandbox support of this machine and the sandbox each agent gets.
#[tauri::command]
#[specta::specta]
pub async fn sandbox_doctor(core: State<'_, Core>) -> Result<DoctorReport, ApiError> {
    super::blocking(&core, warren_api::Warren::doctor).await
}

/// Start hidden and start on login, as they are now.
#[tauri::command]
#[specta::specta]
pub async fn desktop_settings(core: State<'_, Core>) -> Result<DesktopSettingsView, ApiError> {
    super::blocking(&core, warren_api::Warren::desktop_settings_view).await
}

/// Starts the app with its window hidden (tray only) from the next start on, or not.
#[tauri::command]
#[specta::specta]
pub async fn set_start_hidden(
    core: State<'_, Core>,
    on: bool,
) -> Result<DesktopSettingsView, ApiError> {
    super::blocking(&core, move |w| w.set_start_hidden(on)).await
}

/// Turns desktop notifications (approval waiting, turn failed) on or off.
#[tauri::command]
#[specta::specta]
pub async fn set_notifications(
    core: State<'_, Core>,
    on: bool,
) -> Result<DesktopSettingsView, ApiError> {
    super::blocking(&core, move |w| w.set_notifications(on)).await
}

/// Writes or removes the autostart entry that starts this app binary on login.
#[tauri::command]
#[specta::specta]
pub async fn set_start_on_login(
    core: State<'_, Core>,
    on: bool,
) -> Result<DesktopSettingsView, ApiError> {
    let exe = std::env::current_exe()
        .map_err(|e| ApiError::new(ErrorCode::Io, format!("locating the app binary: {e}")))?;
    super::blocking(&core, move |w| w.set_start_on_login(on, &exe)).await
}
