//! The Profiles screen's commands: list, preview (validator findings and a diff), save,
//! delete and restore (Undo) risk and runtime profiles. Each calls one `warren-api` function.

use super::Core;
use tauri::State;
use warren_api::profiles::{ProfileEdit, ProfileKind, ProfilePreview, ProfileView, RemovedProfile};
use warren_types::ApiError;

/// Every risk and runtime profile with the agents using it.
#[tauri::command]
#[specta::specta]
pub async fn list_profiles(core: State<'_, Core>) -> Result<Vec<ProfileView>, ApiError> {
    super::blocking(&core, warren_api::Warren::list_profiles).await
}

/// What saving `edit` would change, and the validator's findings; writes nothing.
#[tauri::command]
#[specta::specta]
pub async fn preview_profile_edit(
    core: State<'_, Core>,
    edit: ProfileEdit,
) -> Result<ProfilePreview, ApiError> {
    super::blocking(&core, move |w| w.preview_profile_edit(&edit)).await
}

/// Saves `edit` when the config still validates (comments are kept).
#[tauri::command]
#[specta::specta]
pub async fn save_profile_edit(
    core: State<'_, Core>,
    edit: ProfileEdit,
) -> Result<ProfileView, ApiError> {
    super::blocking(&core, move |w| w.save_profile_edit(&edit)).await
}

/// Removes a profile that no agent uses; returns it as it was, for Undo.
#[tauri::command]
#[specta::specta]
pub async fn delete_profile(
    core: State<'_, Core>,
    kind: ProfileKind,
    name: String,
) -> Result<RemovedProfile, ApiError> {
    super::blocking(&core, move |w| w.delete_profile(kind, &name)).await
}

/// Puts back a profile a delete removed, comments included (Undo).
#[tauri::command]
#[specta::specta]
pub async fn restore_profile(
    core: State<'_, Core>,
    removed: RemovedProfile,
) -> Result<ProfileView, ApiError> {
    super::blocking(&core, move |w| w.restore_profile(&removed)).await
}

/// Adds a profile with default values.
#[tauri::command]
#[specta::specta]
pub async fn create_profile(
    core: State<'_, Core>,
    kind: ProfileKind,
    name: String,
) -> Result<ProfileView, ApiError> {
    super::blocking(&core, move |w| w.create_profile(kind, &name)).await
}
