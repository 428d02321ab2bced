//! The network log: every connection an agent's sandboxed commands and MCP servers made or were
//! refused through Warren's proxy (`network` by domain), kept in sessions.db's `network` table
//! and attributed to the agent's stable id (a rename keeps its history).
//!
//! The proxy reports each connection when it ends; a writer task puts them in the database in
//! the order they ended, so the proxy never waits for SQLite.

use crate::db::{agent_id, column, DbError};
use serde::Serialize;
use sqlx::SqlitePool;
use std::sync::Arc;
use tokio::sync::mpsc;
use warren_net::{ConnectionRecord, ConnectionSink};

/// The sink the proxy reports to: hands each record to the writer task.
pub struct NetworkLog {
    tx: mpsc::UnboundedSender<Message>,
}

enum Message {
    Record(Box<ConnectionRecord>),
    Flush(tokio::sync::oneshot::Sender<()>),
}

impl NetworkLog {
    /// Starts the writer task on the current tokio runtime, writing to `pool`.
    pub fn start(pool: SqlitePool) -> Arc<NetworkLog> {
        let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
        tokio::spawn(async move {
            while let Some(m) = rx.recv().await {
                match m {
                    Message::Record(r) => {
                        if let Err(e) = write(&pool, &r).await {
                            tracing::warn!(agent = %r.agent, host = %r.host, "network log: {e}");
                        }
                    }
                    Message::Flush(done) => {
                        let _ = done.send(());
                    }
                }
            }
        });
        Arc::new(NetworkLog { tx })
    }

    /// Waits until every record handed over so far is written (a short-lived process, such
    /// as `warren tool`, before it exits).
    pub async fn flush(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        if self.tx.send(Message::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

impl ConnectionSink for NetworkLog {
    fn record(&self, record: ConnectionRecord) {
        // The writer ends only with the runtime; a record after that has nowhere to go.
        let _ = self.tx.send(Message::Record(Box::new(record)));
    }
}

/// The network proxy of this process, resolving with the system's resolver and recording to
/// `log`; its tasks run on the current tokio runtime.
pub fn proxy_recording_to(log: Arc<NetworkLog>) -> warren_net::Proxy {
    warren_net::Proxy::new(
        tokio::runtime::Handle::current(),
        Arc::new(warren_net::SystemResolver),
        log,
    )
}

/// A proxy for a short-lived process of Warren (`warren tool`, `warren mcp list`): recording
/// to the install's sessions database at `sessions_db`. Flush the log before the process ends.
pub async fn for_process(
    sessions_db: &std::path::Path,
) -> Result<(warren_net::Proxy, Arc<NetworkLog>), DbError> {
    let pool = crate::db::open_sessions_db(sessions_db).await?;
    let log = NetworkLog::start(pool);
    Ok((proxy_recording_to(log.clone()), log))
}

async fn write(pool: &SqlitePool, r: &ConnectionRecord) -> Result<(), DbError> {
    let id = agent_id(pool, &r.agent).await?;
    sqlx::query(
        "INSERT INTO network (agent_id, time_ms, host, port, allowed, rule, address, bytes_up, bytes_down, duration_ms, kind)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(id)
    .bind(r.started_unix_ms)
    .bind(&r.host)
    .bind(i64::from(r.port))
    .bind(r.allowed)
    .bind(&r.rule)
    .bind(r.address.map(|a| a.to_string()))
    .bind(i64::try_from(r.bytes_up).unwrap_or(i64::MAX))
    .bind(i64::try_from(r.bytes_down).unwrap_or(i64::MAX))
    .bind(i64::try_from(r.duration_ms).unwrap_or(i64::MAX))
    .bind(r.kind)
    .execute(pool)
    .await?;
    Ok(())
}

/// One recorded connection, as `warren logs --network` and the window show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetworkEntry {
    /// The agent's alias now.
    pub agent: String,
    /// When it started (milliseconds since the Unix epoch).
    pub time_ms: i64,
    /// The host as asked for.
    pub host: String,
    /// The port.
    pub port: u16,
    /// Whether it was let through.
    pub allowed: bool,
    /// The rule that decided, in words.
    pub rule: String,
    /// The address connected to, when one was.
    pub address: Option<String>,
    /// Bytes sent by the agent's program.
    pub bytes_up: u64,
    /// Bytes received by it.
    pub bytes_down: u64,
    /// How long it lasted.
    pub duration_ms: u64,
    /// `connect` (an HTTPS tunnel) or `http` (a plain HTTP request).
    pub kind: String,
}

/// The most recent `limit` connections, newest first, of `agent` (every agent when `None`),
/// only refused ones when `refused_only`.
pub async fn recent(
    pool: &SqlitePool,
    agent: Option<&str>,
    refused_only: bool,
    limit: u32,
) -> Result<Vec<NetworkEntry>, DbError> {
    let rows = sqlx::query(
        "SELECT a.alias AS agent, n.time_ms, n.host, n.port, n.allowed, n.rule, n.address,
                n.bytes_up, n.bytes_down, n.duration_ms, n.kind
         FROM network n JOIN agents a ON a.id = n.agent_id
         WHERE (?1 IS NULL OR a.alias = ?1) AND (?2 = 0 OR n.allowed = 0)
         ORDER BY n.time_ms DESC, n.rowid DESC LIMIT ?3",
    )
    .bind(agent)
    .bind(refused_only)
    .bind(i64::from(limit))
    .fetch_all(pool)
    .await?;
    let t = "network";
    let count = |v: i64| u64::try_from(v).unwrap_or(0);
    rows.iter()
        .map(|r| {
            Ok(NetworkEntry {
                agent: column(r, "agents", "agent")?,
                time_ms: column(r, t, "time_ms")?,
                host: column(r, t, "host")?,
                port: u16::try_from(column::<i64>(r, t, "port")?).unwrap_or(0),
                allowed: column(r, t, "allowed")?,
                rule: column(r, t, "rule")?,
                address: column(r, t, "address")?,
                bytes_up: count(column(r, t, "bytes_up")?),
                bytes_down: count(column(r, t, "bytes_down")?),
                duration_ms: count(column(r, t, "duration_ms")?),
                kind: column(r, t, "kind")?,
            })
        })
        .collect()
}
