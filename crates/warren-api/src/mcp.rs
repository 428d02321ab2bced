//! `warren mcp list`: an agent's MCP servers, started the way a turn starts them (confined to
//! the agent's sandbox), with their status and tools; stopped again before the answer.

use crate::policy::path_var;
use crate::Warren;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use warren_policy::sandbox::SandboxSupport;
use warren_runtime::mcp::{configured_specs, other_workspaces, McpSet, ServerStatus};
use warren_tools::ToolContext;
use warren_types::ApiError;

/// One tool of an MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpToolView {
    /// The name the model sees (`server__tool`).
    pub name: String,
    /// The server's description of it.
    pub description: String,
}

/// How Warren talks to a server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum McpTransport {
    /// A child process on stdin/stdout, inside the agent's sandbox.
    Stdio,
    /// A streamable-HTTP endpoint (`url`).
    Http,
}

impl McpTransport {
    /// The word the CLI prints.
    pub fn as_str(self) -> &'static str {
        match self {
            McpTransport::Stdio => "stdio",
            McpTransport::Http => "http",
        }
    }
}

/// Whether a server answered when it was started.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum McpServerStatus {
    /// It started and listed its tools.
    Running,
    /// It could not start or list its tools (`error` says why).
    Failed,
}

impl McpServerStatus {
    /// The word the CLI prints.
    pub fn as_str(self) -> &'static str {
        match self {
            McpServerStatus::Running => "running",
            McpServerStatus::Failed => "failed",
        }
    }
}

/// One MCP server of an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpServerView {
    /// Its name in `[mcp_servers]`.
    pub name: String,
    /// How Warren talks to it.
    pub transport: McpTransport,
    /// The command line or URL.
    pub target: String,
    /// Whether it started.
    pub status: McpServerStatus,
    /// Why it failed.
    pub error: Option<String>,
    /// The sandbox a stdio server ran under.
    pub sandbox: Option<String>,
    /// Its tools.
    pub tools: Vec<McpToolView>,
}

impl Warren {
    /// Starts each MCP server of `alias` as its turns would, lists its status and tools, and
    /// stops it.
    pub async fn mcp_list(&self, alias: &str) -> Result<Vec<McpServerView>, ApiError> {
        let host = &self.env;
        let cfg = self.load()?.config;
        let policy = self.policy_for(&cfg, alias, host)?;
        let support = SandboxSupport::probe(path_var(host));
        let ctx = ToolContext::new(Arc::new(policy), support, host.vars.clone());
        let specs = configured_specs(&cfg, alias, None);
        let others = other_workspaces(self.layout(), &cfg, alias);
        let set = McpSet::start(&specs, &ctx, &others).await;
        let tools = set.tools();
        Ok(set
            .servers
            .iter()
            .zip(&specs)
            .map(|(s, spec)| {
                let (status, error) = match s.status() {
                    ServerStatus::Running => (McpServerStatus::Running, None),
                    ServerStatus::Failed(m) => (McpServerStatus::Failed, Some(m)),
                };
                let target = match (&spec.config.command, &spec.config.url) {
                    (Some(c), _) => std::iter::once(c.as_str())
                        .chain(spec.config.args.iter().map(String::as_str))
                        .collect::<Vec<_>>()
                        .join(" "),
                    (None, Some(u)) => u.clone(),
                    (None, None) => String::new(),
                };
                McpServerView {
                    name: s.name().to_string(),
                    transport: if spec.config.command.is_some() {
                        McpTransport::Stdio
                    } else {
                        McpTransport::Http
                    },
                    target,
                    status,
                    error,
                    sandbox: s.sandbox().map(String::from),
                    tools: tools
                        .iter()
                        .filter(|t| t.server().name() == s.name())
                        .map(|t| {
                            let spec = warren_tools::Tool::spec(t);
                            McpToolView {
                                name: spec.name.into_owned(),
                                description: spec.description.into_owned(),
                            }
                        })
                        .collect(),
                }
            })
            .collect())
    }
}
