//! One tool of an MCP server, registered as `server__tool` and called through the gate.

use super::{qualified_name, McpServer};
use async_trait::async_trait;
use serde_json::{json, Value};
use std::sync::Arc;
use warren_tools::{CallCheck, Tool, ToolContext, ToolError, ToolSpec};

/// A tool of an MCP server. Every call counts as a call with side effects: the server's own
/// annotations (`readOnlyHint`, ...) are its claims, not something Warren can check, so a call
/// spends the action budget, is refused under a readonly profile, and needs approval unless
/// the tool's name is in `auto_approve`.
pub struct McpTool {
    server: Arc<McpServer>,
    /// The server's name for it.
    tool: String,
    /// `server__tool`.
    name: String,
    description: String,
    parameters: Value,
}

impl McpTool {
    /// The tools of `server` with a usable name (`server__tool`, at most 64 characters of
    /// letters, digits, `_` and `-`); none when it is not running.
    pub fn all_of(server: Arc<McpServer>) -> Vec<McpTool> {
        if !server.is_running() {
            return Vec::new();
        }
        server
            .tools()
            .iter()
            .filter_map(|t| {
                let name = qualified_name(server.name(), &t.name)?;
                let mut parameters = Value::Object((*t.input_schema).clone());
                if parameters.get("type").is_none() {
                    parameters["type"] = json!("object");
                }
                let about = t.description.as_deref().unwrap_or("").trim().to_string();
                Some(McpTool {
                    server: server.clone(),
                    tool: t.name.to_string(),
                    name,
                    description: format!("[MCP server `{}`] {about}", server.name()),
                    parameters,
                })
            })
            .collect()
    }

    /// The server it belongs to.
    pub fn server(&self) -> &McpServer {
        &self.server
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name.clone().into(),
            description: self.description.clone().into(),
            parameters: self.parameters.clone(),
        }
    }

    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        if !args.is_object() {
            return Err(ToolError::InvalidArgument {
                field: "arguments".into(),
                message: "must be a JSON object".into(),
            });
        }
        if let super::ServerStatus::Failed(message) = self.server.status() {
            return Err(ToolError::McpServerGone {
                server: self.server.name().to_string(),
                message,
            });
        }
        Ok(CallCheck {
            side_effects: true,
            risk: None,
            reasons: Vec::new(),
        })
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        self.server.call(&self.tool, args, ctx).await
    }

    fn available(&self) -> bool {
        self.server.is_running()
    }
}
