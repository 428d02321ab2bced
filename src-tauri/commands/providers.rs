//! Provider routes from the window: preview an added or changed route (the validator's
//! findings and the config diff), save it (its key into the secret store, never into
//! `config.toml`), remove one nothing uses, and test one with a small call. The same
//! `warren-api` functions as `warren providers add | rm | test | models`. Also the first-run
//! flow's state (shown or not, completed or skipped) and its Ollama probe.

use super::Core;
use tauri::State;
use warren_api::first_run::{FirstRunView, SetupOutcome};
use warren_api::profiles::ProfilePreview;
use warren_api::provider_models::{OllamaStatus, ProviderModelsView};
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
    super::blocking(&core, move |w| w.preview_provider(&input)).await
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
    super::blocking(&core, move |w| w.save_provider(&input, key.as_deref())).await
}

/// Removes a route no agent and no fallback list uses (its stored key is kept).
#[tauri::command]
#[specta::specta]
pub async fn remove_provider(core: State<'_, Core>, reference: String) -> Result<(), ApiError> {
    super::blocking(&core, move |w| w.remove_provider(&reference)).await
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

/// The models the route offers, from the vendor's own list (with the route's key).
#[tauri::command]
#[specta::specta]
pub async fn provider_models(
    core: State<'_, Core>,
    reference: String,
) -> Result<ProviderModelsView, ApiError> {
    core.warren.provider_models(&reference).await
}

/// Whether Ollama runs at `uri` (or the configured / default address), with its models.
#[tauri::command]
#[specta::specta]
pub async fn detect_ollama(
    core: State<'_, Core>,
    uri: Option<String>,
) -> Result<OllamaStatus, ApiError> {
    core.warren.detect_ollama(uri.as_deref()).await
}

/// Whether the first-run flow shows now, and why.
#[tauri::command]
#[specta::specta]
pub async fn first_run(core: State<'_, Core>) -> Result<FirstRunView, ApiError> {
    super::blocking(&core, warren_api::Warren::first_run).await
}

/// Records how the first-run flow ended (completed or skipped).
#[tauri::command]
#[specta::specta]
pub async fn finish_first_run(
    core: State<'_, Core>,
    outcome: SetupOutcome,
) -> Result<FirstRunView, ApiError> {
    super::blocking(&core, move |w| w.finish_first_run(outcome)).await
}
