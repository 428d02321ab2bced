//! The Network screen's commands: the connections agents made or were refused through Warren's
//! proxy, and "Allow this domain" (a preview of the risk profile edit, then the save). Each
//! calls one `warren-api` function; the config edits run on a blocking thread.

use super::Core;
use tauri::State;
use warren_api::network_view::{AllowDomainPreview, NetworkConnectionView};
use warren_api::profiles::ProfileView;
use warren_types::ApiError;

/// The newest `limit` connections of `agent` (every agent when none), only the refused ones
/// with `refused_only`, newest first.
#[tauri::command]
#[specta::specta]
pub async fn network_log(
    core: State<'_, Core>,
    agent: Option<String>,
    refused_only: bool,
    limit: u32,
) -> Result<Vec<NetworkConnectionView>, ApiError> {
    core.warren
        .network_log(agent.as_deref(), refused_only, limit)
        .await
}

/// What allowing `host` for `agent` would change in its risk profile; writes nothing.
#[tauri::command]
#[specta::specta]
pub async fn preview_allow_domain(
    core: State<'_, Core>,
    agent: String,
    host: String,
    port: u16,
) -> Result<AllowDomainPreview, ApiError> {
    super::blocking(&core, move |w| w.preview_allow_domain(&agent, &host, port)).await
}

/// Adds `host` to the `allow` list of `agent`'s risk profile (comments are kept).
#[tauri::command]
#[specta::specta]
pub async fn allow_domain(
    core: State<'_, Core>,
    agent: String,
    host: String,
    port: u16,
) -> Result<ProfileView, ApiError> {
    super::blocking(&core, move |w| w.allow_domain(&agent, &host, port)).await
}
