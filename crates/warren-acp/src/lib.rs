//! The Agent Client Protocol front-end (rules §9.3): an agent of the runtime served over stdio,
//! JSON-RPC 2.0, one message per line, so editors can drive it (`warren acp`, through
//! `warren-api`). Sessions are recorded in `sessions.db` with the serving process
//! and a heartbeat, so a crashed client's session ends instead of staying live forever.
//!
//! The framing is written here rather than taken from the `agent-client-protocol` crate: that
//! crate's builder API has changed major versions repeatedly and brings a large dependency tree,
//! while the wire format needed here (five methods, newline-delimited JSON) is small and tested.

mod forward;
mod params;
pub mod rpc;
mod server;

pub use server::{serve, PROTOCOL_VERSION};

/// Why serving ACP stopped.
#[derive(Debug, thiserror::Error)]
pub enum AcpError {
    /// The agent cannot be served (unknown, disabled, invalid config).
    #[error(transparent)]
    Host(#[from] warren_runtime::error::HostError),
    /// The sessions database failed.
    #[error(transparent)]
    Db(#[from] warren_state::db::DbError),
    /// Reading the client's stream failed.
    #[error("reading from the ACP client failed: {0}")]
    Io(#[from] std::io::Error),
}
