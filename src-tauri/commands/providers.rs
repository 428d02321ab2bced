//! Provider routes from the window: preview an added or changed route (the validator's
//! findings and the config diff), save it (its key into the secret store, never into
//! `config.toml`), remove one nothing uses, and test one with a small call. The same
//! `warren-api` functions as `warren providers add | rm | test`.

use super::Core;
use tauri::State;
use warren_api::profiles::ProfilePreview;
use warren_api::providers::{ProviderInput, ProviderTestView};
use warren_api::settings::ProviderKeyView;
use warren_types::ApiError;

/// What saving `input` would change in `config.toml`, with the validator's findings.
#[tauri::command]
#[specta::specta]
pub async fn preview_provider(
    core: State<'_, Core>,
    input: ProviderInput,
) -> Result<ProfilePreview, ApiError> {
    core.warren.preview_provider(&input)
}

/// Adds or changes a route; `key` (when given) goes to the secret store once the edited config
/// validated.
#[tauri::command]
#[specta::specta]
pub async fn save_provider(
    core: State<'_, Core>,
    input: ProviderInput,
    key: Option<String>,
) -> Result<ProviderKeyView, ApiError> {
    core.warren.save_provider(&input, key.as_deref())
}

/// Removes a route no agent and no fallback list uses (its stored key is kept).
#[tauri::command]
#[specta::specta]
pub async fn remove_provider(core: State<'_, Core>, reference: String) -> Result<(), ApiError> {
    core.warren.remove_provider(&reference)
}

/// Calls the route once with a tiny prompt and reports the answer or the vendor's error.
#[tauri::command]
#[specta::specta]
pub async fn test_provider(
    core: State<'_, Core>,
    reference: String,
) -> Result<ProviderTestView, ApiError> {
    core.warren.test_provider(&reference).await
}
