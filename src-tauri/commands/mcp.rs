//! The agent detail view's MCP section: each server of the agent started the way its turns
//! start them (inside its sandbox), with status, sandbox and tools, then stopped.

use super::Core;
use tauri::State;
use warren_api::mcp::McpServerView;
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
