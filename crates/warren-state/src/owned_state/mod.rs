//! Per-agent queries on `sessions.db` for the lifecycle service: counting, exporting, purging,
//! re-pointing and importing an agent's sessions (with transcripts), usage and receipts. Every
//! table is keyed by the agent's stable id, so a rename is one alias update.

use crate::db::{row_error, DbError};
use sqlx::SqlitePool;

mod ledgers;
mod sessions;

pub use ledgers::*;
pub use sessions::*;

/// The id of `alias` in `sessions.db`, if it has one.
pub async fn agent_id_of(pool: &SqlitePool, alias: &str) -> Result<Option<String>, DbError> {
    Ok(sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
        .bind(alias)
        .fetch_optional(pool)
        .await?)
}

/// The alias currently held by an agent id.
pub async fn alias_of(pool: &SqlitePool, id: &str) -> Result<Option<String>, DbError> {
    Ok(sqlx::query_scalar("SELECT alias FROM agents WHERE id = ?")
        .bind(id)
        .fetch_optional(pool)
        .await?)
}

/// What [`rename_alias`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AliasMove {
    /// The row now carries the new alias.
    Moved,
    /// No row had the old alias (nothing recorded yet, or already moved).
    Absent,
    /// The new alias already owns data under another id; nothing changed.
    Conflict,
}

/// Rows attributed to an agent id, per table.
pub(crate) async fn owned_rows(
    tx: &mut sqlx::SqliteConnection,
    id: &str,
) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT (SELECT COUNT(*) FROM sessions WHERE agent_id = ?1)
              + (SELECT COUNT(*) FROM turns WHERE agent_id = ?1)
              + (SELECT COUNT(*) FROM usage WHERE agent_id = ?1)
              + (SELECT COUNT(*) FROM receipts WHERE agent_id = ?1)
              + (SELECT COUNT(*) FROM receipt_heads WHERE agent_id = ?1)
              + (SELECT COUNT(*) FROM actions WHERE agent_id = ?1)",
    )
    .bind(id)
    .fetch_one(&mut *tx)
    .await
}

/// Moves the alias of `old`'s id row to `new` (sessions, usage and receipts follow). An empty
/// row already holding `new` is dropped first.
pub async fn rename_alias(pool: &SqlitePool, old: &str, new: &str) -> Result<AliasMove, DbError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let target: Option<String> = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
        .bind(new)
        .fetch_optional(&mut *tx)
        .await?;
    let source: Option<String> = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
        .bind(old)
        .fetch_optional(&mut *tx)
        .await?;
    if source.is_none() {
        return Ok(AliasMove::Absent);
    }
    if let Some(target) = target {
        if owned_rows(&mut tx, &target).await? > 0 {
            return Ok(AliasMove::Conflict);
        }
        sqlx::query("DELETE FROM agents WHERE id = ?")
            .bind(&target)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query("UPDATE agents SET alias = ? WHERE alias = ?")
        .bind(new)
        .bind(old)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(AliasMove::Moved)
}

/// Number of sessions, usage rows and receipts of an agent id.
pub async fn counts(pool: &SqlitePool, id: &str) -> Result<(u64, u64, u64), DbError> {
    // Each column is the count of rows of the table of that name.
    #[derive(sqlx::FromRow)]
    struct Counts {
        sessions: i64,
        usage: i64,
        receipts: i64,
    }
    let counts = sqlx::query_as::<_, Counts>(
        "SELECT (SELECT COUNT(*) FROM sessions WHERE agent_id = ?1) AS sessions,
                (SELECT COUNT(*) FROM usage WHERE agent_id = ?1) AS usage,
                (SELECT COUNT(*) FROM receipts WHERE agent_id = ?1) AS receipts",
    )
    .bind(id)
    .fetch_one(pool)
    .await
    .map_err(|e| {
        row_error(e, |column| match column {
            "sessions" => "sessions",
            "usage" => "usage",
            _ => "receipts",
        })
    })?;
    let n = |count: i64| u64::try_from(count).unwrap_or(0);
    Ok((n(counts.sessions), n(counts.usage), n(counts.receipts)))
}

/// ACP sessions of an agent id that have not ended and heartbeated at or after `since`
/// (RFC 3339): `(description, pid)` with the description `"<session id> (<title>)"`.
pub async fn live_acp_sessions(
    pool: &SqlitePool,
    id: &str,
    since: &str,
) -> Result<Vec<(String, Option<i64>)>, DbError> {
    #[derive(sqlx::FromRow)]
    struct LiveSession {
        id: String,
        title: String,
        pid: Option<i64>,
    }
    let rows = sqlx::query_as::<_, LiveSession>(
        "SELECT id, title, pid FROM sessions WHERE agent_id = ? AND kind = 'acp' AND ended_at IS NULL
         AND heartbeat_at IS NOT NULL AND heartbeat_at >= ? ORDER BY id",
    )
    .bind(id)
    .bind(since)
    .fetch_all(pool)
    .await
    .map_err(|e| row_error(e, |_| "sessions"))?;
    Ok(rows
        .into_iter()
        .map(|s| (format!("{} ({})", s.id, s.title), s.pid))
        .collect())
}

/// Gives `alias` an id row for a restore: the wanted id when free (or when it is parked under
/// `tombstone`), else a new one. Returns the id used. Refuses when `alias` owns data.
pub async fn claim_agent_row(
    pool: &SqlitePool,
    alias: &str,
    wanted: &str,
    tombstone: &str,
) -> Result<Result<String, String>, DbError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let current: Option<String> = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
        .bind(alias)
        .fetch_optional(&mut *tx)
        .await?;
    if let Some(current) = current {
        if current == wanted {
            return Ok(Ok(current));
        }
        if owned_rows(&mut tx, &current).await? > 0 {
            return Ok(Err(current));
        }
        sqlx::query("DELETE FROM agents WHERE id = ?")
            .bind(&current)
            .execute(&mut *tx)
            .await?;
    }
    let holder: Option<String> = sqlx::query_scalar("SELECT alias FROM agents WHERE id = ?")
        .bind(wanted)
        .fetch_optional(&mut *tx)
        .await?;
    let id = match holder {
        None => {
            sqlx::query("INSERT INTO agents (id, alias) VALUES (?, ?)")
                .bind(wanted)
                .bind(alias)
                .execute(&mut *tx)
                .await?;
            wanted.to_string()
        }
        Some(h) if h == tombstone => {
            sqlx::query("UPDATE agents SET alias = ? WHERE id = ?")
                .bind(alias)
                .bind(wanted)
                .execute(&mut *tx)
                .await?;
            wanted.to_string()
        }
        Some(_) => {
            let fresh = uuid::Uuid::new_v4().to_string();
            sqlx::query("INSERT INTO agents (id, alias) VALUES (?, ?)")
                .bind(&fresh)
                .bind(alias)
                .execute(&mut *tx)
                .await?;
            fresh
        }
    };
    tx.commit().await?;
    Ok(Ok(id))
}

/// After a delete: drops the id row when nothing refers to it any more, else parks it under
/// `tombstone` so a new agent with the old alias never inherits what was kept. Returns whether
/// the row was parked.
pub async fn release_agent_row(
    pool: &SqlitePool,
    id: &str,
    tombstone: &str,
) -> Result<bool, DbError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let parked = owned_rows(&mut tx, id).await? > 0;
    if parked {
        sqlx::query("UPDATE agents SET alias = ? WHERE id = ?")
            .bind(tombstone)
            .bind(id)
            .execute(&mut *tx)
            .await?;
    } else {
        sqlx::query("DELETE FROM agents WHERE id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(parked)
}
