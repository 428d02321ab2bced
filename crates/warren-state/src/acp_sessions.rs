//! Liveness of ACP sessions (rules §9.3): each is recorded in `sessions.db` with the serving
//! process id and a heartbeat. A session is live only while its process exists and its
//! heartbeat is fresh; anything else is marked ended by [`AcpSessions::reap`], so a crashed
//! client can never block a delete forever.

use crate::db::{agent_id, row_error, DbError};
use crate::sessions::{rfc3339, SessionInfo, SessionKind, SessionStore};
use chrono::{DateTime, Utc};
use std::time::Duration;

/// How often a serving process refreshes its sessions' heartbeat.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_secs(5);
/// How soon a serving process tries again after a heartbeat failed.
pub const HEARTBEAT_RETRY: Duration = Duration::from_secs(1);
/// A session whose heartbeat is older than this is ended.
pub const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(15);

/// Whether process `pid` exists and is not a zombie (Linux `/proc`).
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses: `pid (comm) S ...`.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// An open ACP session as `reap` reads it.
#[derive(sqlx::FromRow)]
struct OpenSession {
    /// Session id.
    id: String,
    /// The serving process, when recorded.
    pid: Option<i64>,
    /// The last heartbeat (RFC 3339), if any.
    heartbeat_at: Option<String>,
}

/// ACP session records over the session store.
#[derive(Clone)]
pub struct AcpSessions {
    store: SessionStore,
}

impl AcpSessions {
    /// Over `store`.
    pub fn new(store: SessionStore) -> Self {
        AcpSessions { store }
    }

    /// Creates an ACP session of `agent` served by process `pid`.
    pub async fn open(
        &self,
        agent: &str,
        pid: u32,
        title: &str,
        now: DateTime<Utc>,
    ) -> Result<SessionInfo, DbError> {
        self.store
            .create_served_session(agent, SessionKind::Acp, title, pid, now)
            .await
    }

    /// Refreshes the heartbeat of the open sessions served by `pid`.
    pub async fn heartbeat(&self, pid: u32, now: DateTime<Utc>) -> Result<u64, DbError> {
        Ok(sqlx::query(
            "UPDATE sessions SET heartbeat_at = ? WHERE kind = 'acp' AND pid = ? AND ended_at IS NULL",
        )
        .bind(rfc3339(now))
        .bind(i64::from(pid))
        .execute(self.store.pool())
        .await?
        .rows_affected())
    }

    /// Marks the sessions served by `pid` ended (clean shutdown).
    pub async fn end_all(&self, pid: u32, now: DateTime<Utc>) -> Result<u64, DbError> {
        Ok(sqlx::query(
            "UPDATE sessions SET ended_at = ? WHERE kind = 'acp' AND pid = ? AND ended_at IS NULL",
        )
        .bind(rfc3339(now))
        .bind(i64::from(pid))
        .execute(self.store.pool())
        .await?
        .rows_affected())
    }

    /// Ends every open ACP session whose process is gone or whose heartbeat is older than
    /// `timeout` at `now`; returns the ids it ended. `alive` answers for a pid (tests pass
    /// their own; production passes [`process_alive`]).
    pub async fn reap(
        &self,
        now: DateTime<Utc>,
        timeout: Duration,
        alive: &(dyn Fn(u32) -> bool + Sync),
    ) -> Result<Vec<String>, DbError> {
        let rows = sqlx::query_as::<_, OpenSession>(
            "SELECT id, pid, heartbeat_at FROM sessions WHERE kind = 'acp' AND ended_at IS NULL",
        )
        .fetch_all(self.store.pool())
        .await
        .map_err(|e| row_error(e, |_| "sessions"))?;
        let limit = chrono::Duration::from_std(timeout).unwrap_or(chrono::Duration::MAX);
        let mut ended = Vec::new();
        for OpenSession {
            id,
            pid,
            heartbeat_at,
        } in rows
        {
            let beat = heartbeat_at
                .as_deref()
                .and_then(|b| DateTime::parse_from_rfc3339(b).ok())
                .map(|b| b.with_timezone(&Utc));
            let fresh = beat.is_some_and(|b| now - b <= limit);
            let running = pid.and_then(|p| u32::try_from(p).ok()).is_some_and(alive);
            if fresh && running {
                continue;
            }
            // The last sign of life is when it ended, when known.
            let at = beat.filter(|b| *b <= now).unwrap_or(now);
            sqlx::query("UPDATE sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL")
                .bind(rfc3339(at))
                .bind(&id)
                .execute(self.store.pool())
                .await?;
            ended.push(id);
        }
        Ok(ended)
    }

    /// The live ACP sessions of `agent` (after reaping the dead ones): what blocks a delete.
    pub async fn live_for_agent(
        &self,
        agent: &str,
        now: DateTime<Utc>,
    ) -> Result<Vec<SessionInfo>, DbError> {
        self.reap(now, HEARTBEAT_TIMEOUT, &process_alive).await?;
        let aid = agent_id(self.store.pool(), agent).await?;
        let ids: Vec<String> = sqlx::query_scalar(
            "SELECT id FROM sessions WHERE kind = 'acp' AND ended_at IS NULL AND agent_id = ? ORDER BY created_at",
        )
        .bind(aid)
        .fetch_all(self.store.pool())
        .await?;
        let mut out = Vec::new();
        for id in ids {
            if let Some(s) = self.store.session(&id).await? {
                out.push(s);
            }
        }
        Ok(out)
    }
}
