//! MCP servers in the window: the agent detail view's section (each server of the agent started
//! the way its turns start them, inside its sandbox, with status, sandbox and tools, then
//! stopped; enable or disable one for the agent; Test one) and the Settings page's form (add,
//! change or remove a stdio server, previewed as a diff). The same `warren-api` functions as
//! `warren mcp`.

use super::Core;
use tauri::State;
use warren_api::mcp::McpServerView;
use warren_api::mcp_servers::{McpEditPreview, McpServerEntry, McpServerInput, McpServersOverview};
use warren_types::ApiError;

/// Starts `agent`'s MCP servers, lists their status and tools, and stops them.
#[tauri::command]
#[specta::specta]
pub async fn mcp_servers(
    core: State<'_, Core>,
    agent: String,
) -> Result<Vec<McpServerView>, ApiError> {
    core.warren.mcp_list(&agent).await
}

/// Every configured MCP server with the agents that use it, and every agent.
#[tauri::command]
#[specta::specta]
pub async fn mcp_overview(core: State<'_, Core>) -> Result<McpServersOverview, ApiError> {
    super::blocking(&core, warren_api::Warren::mcp_servers_overview).await
}

/// What saving `input` would change in `config.toml`, with the findings at their fields.
#[tauri::command]
#[specta::specta]
pub async fn preview_mcp_server(
    core: State<'_, Core>,
    input: McpServerInput,
) -> Result<McpEditPreview, ApiError> {
    super::blocking(&core, move |w| w.preview_mcp_server(&input)).await
}

/// Adds or changes a stdio server and the agents using it (validated, atomic).
#[tauri::command]
#[specta::specta]
pub async fn save_mcp_server(
    core: State<'_, Core>,
    input: McpServerInput,
) -> Result<McpServerEntry, ApiError> {
    super::blocking(&core, move |w| w.save_mcp_server(&input)).await
}

/// What removing `name` would change, and which agents would lose it.
#[tauri::command]
#[specta::specta]
pub async fn preview_remove_mcp_server(
    core: State<'_, Core>,
    name: String,
) -> Result<McpEditPreview, ApiError> {
    super::blocking(&core, move |w| w.preview_remove_mcp_server(&name)).await
}

/// Removes a server and the name from every agent's list; returns the agents that lost it.
#[tauri::command]
#[specta::specta]
pub async fn remove_mcp_server(
    core: State<'_, Core>,
    name: String,
) -> Result<Vec<String>, ApiError> {
    super::blocking(&core, move |w| w.remove_mcp_server(&name)).await
}

/// Enables or disables `server` for `agent` (its `mcp_servers`, validated and atomic).
#[tauri::command]
#[specta::specta]
pub async fn set_agent_mcp_server(
    core: State<'_, Core>,
    agent: String,
    server: String,
    enabled: bool,
) -> Result<Vec<String>, ApiError> {
    super::blocking(&core, move |w| {
        w.set_agent_mcp_server(&agent, &server, enabled)
    })
    .await
}

/// Starts `server` in `agent`'s sandbox, reports its status, error and tools, and stops it.
#[tauri::command]
#[specta::specta]
pub async fn test_mcp_server(
    core: State<'_, Core>,
    agent: String,
    server: String,
) -> Result<McpServerView, ApiError> {
    core.warren.mcp_test(&agent, &server).await
}
