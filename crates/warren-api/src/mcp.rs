//! `warren mcp list | test`: an agent's MCP servers, started the way a turn starts them
//! (confined to the agent's sandbox), with their status and tools; stopped again before the
//! answer. And the start of one server for `warren tool`, so its tools meet the loop's gates.

use crate::policy::path_var;
use crate::Warren;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use warren_policy::sandbox::SandboxSupport;
use warren_runtime::mcp::{
    configured_specs, other_workspaces, McpSet, ServerSpec, ServerStatus, SEPARATOR,
};
use warren_tools::{Registry, ToolContext};
use warren_types::{ApiError, Config, ErrorCode};

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

fn view_of(set: &McpSet, specs: &[ServerSpec]) -> Vec<McpServerView> {
    let tools = set.tools();
    set.servers
        .iter()
        .zip(specs)
        .map(|(s, spec)| {
            let (status, error) = match s.status() {
                ServerStatus::Running => (McpServerStatus::Running, None),
                // A server's error can quote its own stderr: the credentials it was handed are
                // secrets of the process and never leave in an answer.
                ServerStatus::Failed(m) => (
                    McpServerStatus::Failed,
                    Some(warren_types::redact::redact(&m).into_owned()),
                ),
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
        .collect()
}

impl Warren {
    /// Starts `specs` for `alias` as its turns would (inside its sandbox, with its
    /// environment rules).
    async fn start_for(
        &self,
        cfg: &Config,
        alias: &str,
        specs: &[ServerSpec],
    ) -> Result<McpSet, ApiError> {
        let host = &self.env;
        let policy = self.policy_for(cfg, alias, host)?;
        policy
            .prepare()
            .map_err(|e| ApiError::new(warren_types::ErrorCode::Storage, e.to_string()))?;
        let support = SandboxSupport::probe(path_var(host));
        let mut ctx = ToolContext::new(Arc::new(policy), support, host.vars.clone());
        // A profile whose network is by domain starts its servers behind this process's proxy.
        match warren_state::network_log::for_process(&self.layout().sessions_db()).await {
            Ok((proxy, _log)) => ctx.network = Some(proxy),
            Err(e) => tracing::warn!("no network proxy for the MCP servers: {e}"),
        }
        let others = other_workspaces(self.layout(), cfg, alias);
        Ok(McpSet::start(specs, &ctx, &others).await)
    }

    /// Starts each MCP server of `alias` as its turns would, lists its status and tools, and
    /// stops it.
    pub async fn mcp_list(&self, alias: &str) -> Result<Vec<McpServerView>, ApiError> {
        let cfg = self.load()?.config;
        let specs = configured_specs(&cfg, alias, None);
        let set = self.start_for(&cfg, alias, &specs).await?;
        Ok(view_of(&set, &specs))
    }

    /// Test of one configured server for `alias`: started in the agent's sandbox as its turns
    /// would start it (whether or not the agent uses it yet), its status, error and tools, then
    /// stopped.
    pub async fn mcp_test(&self, alias: &str, server: &str) -> Result<McpServerView, ApiError> {
        let cfg = self.load()?.config;
        if !cfg.agents.contains_key(alias) {
            return Err(crate::errors::unknown_agent(&cfg, alias));
        }
        let config = cfg.mcp_servers.get(server).cloned().ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("MCP server `{server}` is not defined in [mcp_servers]"),
            )
        })?;
        let specs = [ServerSpec {
            name: server.to_string(),
            origin: "config",
            config,
        }];
        let set = self.start_for(&cfg, alias, &specs).await?;
        view_of(&set, &specs)
            .into_iter()
            .next()
            .ok_or_else(|| ApiError::new(ErrorCode::Internal, "the server was not started"))
    }
}

/// The configured server of `alias` that offers `tool` (`server__tool`) when the name is not a
/// built-in tool's: started for one `warren tool` call, its tools registered in the registry
/// like a turn registers them, so the call meets the same gates. `Err` when that server could
/// not start (the tool is then absent).
pub(crate) async fn register_mcp_tool(
    registry: &mut Registry,
    cfg: &Config,
    layout: &warren_config::InstallLayout,
    alias: &str,
    tool: &str,
    ctx: &ToolContext,
) -> Result<Option<McpSet>, warren_tools::ToolError> {
    if registry.get(tool).is_some() {
        return Ok(None);
    }
    let Some((server, _)) = tool.split_once(SEPARATOR) else {
        return Ok(None);
    };
    let names = [server.to_string()];
    let specs = configured_specs(cfg, alias, Some(&names[..]));
    if specs.is_empty() {
        return Ok(None);
    }
    let others = other_workspaces(layout, cfg, alias);
    let set = McpSet::start(&specs, ctx, &others).await;
    for s in &set.servers {
        if let ServerStatus::Failed(message) = s.status() {
            return Err(warren_tools::ToolError::McpServerGone {
                server: s.name().to_string(),
                message,
            });
        }
    }
    for t in set.tools() {
        registry.register(Box::new(t));
    }
    Ok(Some(set))
}
