//! Warren's agent host, the engine above the stored state (`warren-state`): the turn loop with
//! the turn kit that builds one and delegation to other agents (`turn`), approvals and events,
//! MCP servers, the memory tools, the host that opens agents and its error (`error`), the cron
//! scheduler and the lifecycle service (rename, delete, restore). The ACP server that serves an agent to an editor is `warren-acp`,
//! above this crate.

pub mod approval;
pub mod bounded;
pub mod cron;
pub mod delegate_memory;
pub mod error;
pub mod events;
pub mod host;
pub mod lifecycle;
pub mod mcp;
pub mod memory_tools;
pub mod provider_models;
pub mod provider_probe;
pub mod turn;
