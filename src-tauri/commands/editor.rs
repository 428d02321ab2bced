//! The agent settings editor and the Permissions screen: one agent's settings previewed and
//! saved through the real validator, the permission map of every agent on every other, the
//! explanation of one cell and the path tester. Each calls one `warren-api` function; the
//! policy ones use the host facts the app was opened with, as `doctor` does.

use super::Core;
use tauri::State;
use warren_api::permission_map::{PermissionAspect, PermissionExplanation, PermissionMap};
use warren_api::policy::PolicyCheck;
use warren_api::{AgentEdit, AgentEditPreview, AgentSettingsView};
use warren_types::{AgentDetail, ApiError};

/// One agent's settings, the choices for each, and the settings its memory backend disallows.
#[tauri::command]
#[specta::specta]
pub async fn agent_settings(
    core: State<'_, Core>,
    alias: String,
) -> Result<AgentSettingsView, ApiError> {
    super::blocking(&core, move |w| w.agent_settings(&alias)).await
}

/// What saving `edit` would change in `config.toml`, and the validator's findings, each with
/// the place of the form it belongs beside; writes nothing.
#[tauri::command]
#[specta::specta]
pub async fn preview_agent_edit(
    core: State<'_, Core>,
    edit: AgentEdit,
) -> Result<AgentEditPreview, ApiError> {
    super::blocking(&core, move |w| w.preview_agent_edit(&edit)).await
}

/// Saves `edit` when the config still validates (comments are kept); a refused edit leaves
/// the file as it was.
#[tauri::command]
#[specta::specta]
pub async fn save_agent_edit(
    core: State<'_, Core>,
    edit: AgentEdit,
) -> Result<AgentDetail, ApiError> {
    super::blocking(&core, move |w| w.save_agent_edit(&edit)).await
}

/// What every agent may do to every other agent.
#[tauri::command]
#[specta::specta]
pub async fn permission_map(core: State<'_, Core>) -> Result<PermissionMap, ApiError> {
    super::blocking(&core, warren_api::Warren::permission_map).await
}

/// Why `agent` may or may not do `aspect` to `peer`: the rule, the grants, the enforcement.
#[tauri::command]
#[specta::specta]
pub async fn explain_permission(
    core: State<'_, Core>,
    agent: String,
    peer: String,
    aspect: PermissionAspect,
) -> Result<PermissionExplanation, ApiError> {
    super::blocking(&core, move |w| w.explain_permission(&agent, &peer, aspect)).await
}

/// Decides one access of `agent` on `path` exactly as its tools would (`warren policy check`).
#[tauri::command]
#[specta::specta]
pub async fn policy_check(
    core: State<'_, Core>,
    agent: String,
    write: bool,
    path: String,
) -> Result<PolicyCheck, ApiError> {
    super::blocking(&core, move |w| w.policy_check(&agent, write, &path)).await
}
