//! The network log as `warren logs --network` and the window show it: the connections each
//! agent's sandboxed commands and MCP servers made, or were refused, through Warren's proxy
//! (profiles whose `network` is by domain).

use crate::activity::storage;
use crate::Warren;
use serde::{Deserialize, Serialize};
use warren_types::ApiError;

/// One connection through the proxy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct NetworkConnectionView {
    /// The agent (its alias now).
    pub agent: String,
    /// When it started, RFC 3339 in UTC.
    pub time: String,
    /// The host as the program asked for it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Whether it was let through.
    pub allowed: bool,
    /// The rule that decided, in words (`allow "crates.io"`, `no allow pattern matches`,
    /// `private address 127.0.0.1 (allow_private is off)`).
    pub rule: String,
    /// The address connected to, when one was.
    pub address: Option<String>,
    /// Bytes the program sent.
    pub bytes_up: u64,
    /// Bytes it received.
    pub bytes_down: u64,
    /// How long the connection lasted, in milliseconds.
    pub duration_ms: u64,
    /// `connect` (an HTTPS tunnel) or `http` (one plain HTTP request).
    pub kind: String,
}

/// The most connections one query returns.
pub const MAX_NETWORK_ROWS: u32 = 5000;

impl Warren {
    /// The newest `limit` connections (1 to 5000) of `agent` (every agent when `None`), only
    /// the refused ones when `refused_only`, newest first.
    pub async fn network_log(
        &self,
        agent: Option<&str>,
        refused_only: bool,
        limit: u32,
    ) -> Result<Vec<NetworkConnectionView>, ApiError> {
        if let Some(a) = agent {
            let config = self.load()?.config;
            if !config.agents.contains_key(a) {
                return Err(crate::errors::unknown_agent(&config, a));
            }
        }
        if limit == 0 || limit > MAX_NETWORK_ROWS {
            return Err(ApiError::new(
                warren_types::ErrorCode::InvalidArgument,
                format!("the number of connections must be 1 to {MAX_NETWORK_ROWS}, not {limit}"),
            ));
        }
        let host = self.host().await?;
        let rows =
            warren_runtime::network_log::recent(host.sessions().pool(), agent, refused_only, limit)
                .await
                .map_err(storage("the network log".to_string()))?;
        Ok(rows
            .into_iter()
            .map(|r| NetworkConnectionView {
                time: chrono::DateTime::<chrono::Utc>::from_timestamp_millis(r.time_ms)
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
                    .unwrap_or_default(),
                agent: r.agent,
                host: r.host,
                port: r.port,
                allowed: r.allowed,
                rule: r.rule,
                address: r.address,
                bytes_up: r.bytes_up,
                bytes_down: r.bytes_down,
                duration_ms: r.duration_ms,
                kind: r.kind,
            })
            .collect())
    }
}
