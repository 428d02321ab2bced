//! Warren's agent host, the engine above the stored state (`warren-state`): the turn loop and
//! the turn kit that builds one, approvals and events, delegation to other agents, MCP servers,
//! the memory tools, the host that opens agents, the cron scheduler and the lifecycle service
//! (rename, delete, restore). The ACP server that serves an agent to an editor is `warren-acp`,
//! above this crate.

pub mod approval;
pub mod bounded;
pub mod cron;
pub mod delegate;
pub mod delegate_memory;
pub mod events;
pub mod host;
pub mod lifecycle;
pub mod mcp;
pub mod memory_tools;
pub mod provider_models;
pub mod provider_probe;
pub mod turn;
pub mod turn_kit;
