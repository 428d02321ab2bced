//! MCP servers as tools (docs/mcp.md). A stdio server runs as a child process inside the
//! agent's sandbox ([`warren_policy::sandbox::confine`] under the agent's policy, plus
//! read-only access to the server's own program files); a streamable-HTTP server is reached at
//! its URL. Each tool of a server is registered in the agent's [`warren_tools::Registry`] as
//! `server__tool`, so every call goes through the same gates as a built-in tool. Servers live
//! as long as the turn environment that started them.

mod program;
mod server;
mod tool;

pub use server::{McpServer, ServerStatus};
pub use tool::McpTool;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use warren_config::InstallLayout;
use warren_tools::ToolContext;
use warren_types::{Config, McpServerConfig};

/// Separates the server's name from its tool's name in the name the model sees.
pub const SEPARATOR: &str = "__";

/// How long a server may take to start and list its tools.
pub const START_TIMEOUT: Duration = Duration::from_secs(30);

/// One server to start: its name and how to reach it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// The name its tools are prefixed with.
    pub name: String,
    /// Where it comes from, for messages: `config` or `session`.
    pub origin: &'static str,
    /// The command or URL.
    pub config: McpServerConfig,
}

/// The servers of one turn environment, started or failed.
#[derive(Clone, Default)]
pub struct McpSet {
    /// Every server asked for, in order, including those that failed to start.
    pub servers: Vec<Arc<McpServer>>,
}

impl McpSet {
    /// Starts every server in `specs` for the agent of `ctx` (concurrently); a server that
    /// cannot start is kept with its error, its tools absent. `other_workspaces` are the
    /// workspaces of the other agents, which no server's program files may overlap.
    pub async fn start(
        specs: &[ServerSpec],
        ctx: &ToolContext,
        other_workspaces: &[PathBuf],
    ) -> McpSet {
        let starts = specs
            .iter()
            .map(|s| McpServer::start(s.clone(), ctx, other_workspaces));
        McpSet {
            servers: futures::future::join_all(starts)
                .await
                .into_iter()
                .map(Arc::new)
                .collect(),
        }
    }

    /// The tools of the running servers, ready to register.
    pub fn tools(&self) -> Vec<McpTool> {
        self.servers
            .iter()
            .flat_map(|s| McpTool::all_of(s.clone()))
            .collect()
    }

    /// Servers that stopped (or never started) and were not reported yet, each with the
    /// message to report; each is reported once.
    pub fn take_failures(&self) -> Vec<(String, String)> {
        self.servers
            .iter()
            .filter_map(|s| s.take_failure().map(|m| (s.name().to_string(), m)))
            .collect()
    }

    /// The names of the servers in this set.
    pub fn names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.name().to_string()).collect()
    }
}

/// The configured servers of `alias` (in the order of its `mcp_servers`), keeping only those
/// named in `within` when given (a SubAgent's parent's servers).
pub fn configured_specs(
    config: &Config,
    alias: &str,
    within: Option<&[String]>,
) -> Vec<ServerSpec> {
    let Some(agent) = config.agents.get(alias) else {
        return Vec::new();
    };
    agent
        .mcp_servers
        .iter()
        .filter(|n| within.is_none_or(|w| w.contains(n)))
        .filter_map(|n| {
            config.mcp_servers.get(n).map(|c| ServerSpec {
                name: n.clone(),
                origin: "config",
                config: c.clone(),
            })
        })
        .collect()
}

/// The workspaces of every agent but `alias`, resolved where they exist: no server's program
/// files may overlap them.
pub fn other_workspaces(layout: &InstallLayout, config: &Config, alias: &str) -> Vec<PathBuf> {
    config
        .agents
        .iter()
        .filter(|(a, _)| a.as_str() != alias)
        .map(|(a, c)| {
            let p = layout.workspace_for(a, c.workspace.path.as_deref());
            std::fs::canonicalize(&p).unwrap_or(p)
        })
        .collect()
}

/// The model-visible name of `tool` on `server`, when it is a usable tool name (letters,
/// digits, `_`, `-`, at most 64 characters in all).
pub fn qualified_name(server: &str, tool: &str) -> Option<String> {
    let name = format!("{server}{SEPARATOR}{tool}");
    let ok = !tool.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    ok.then_some(name)
}
