//! What the backend process holds for the window (one install, opened once at start) and how
//! a command runs synchronous service work off the async executor. The commands, the event
//! bridge, the tray and notifications all read it; it depends on none of them.

use serde::Serialize;
use specta::Type;
use warren_api::live::Live;
use warren_api::Warren;
use warren_types::ApiError;

/// What the backend process holds for the window: one install, opened once at start.
pub struct Core {
    /// The service handle every command calls (shared with work a command hands to a
    /// blocking thread).
    pub warren: std::sync::Arc<Warren>,
    /// The outcome of the first-start install, shown by the Agents screen.
    pub start: Result<InstallInfo, ApiError>,
    /// The live view the bridge task feeds (see `events.rs`).
    pub live: Live,
}

/// Runs `f` on the install on a blocking thread: the service functions read and write files
/// (config.toml, the install's state) and databases synchronously, which must not hold up the
/// async executor the window's other commands and events run on.
pub async fn blocking<T: Send + 'static>(
    core: &Core,
    f: impl FnOnce(&Warren) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let warren = core.warren.clone();
    tauri::async_runtime::spawn_blocking(move || f(&warren))
        .await
        .map_err(|e| {
            ApiError::new(
                warren_types::ErrorCode::Internal,
                format!("the command did not finish: {e}"),
            )
        })?
}

/// Where the install lives and whether this start created it.
#[derive(Debug, Clone, Serialize, Type)]
pub struct InstallInfo {
    /// The install root.
    pub root: String,
    /// `<install>/config.toml`.
    pub config_path: String,
    /// True when this start created the default install.
    pub created_default: bool,
}
