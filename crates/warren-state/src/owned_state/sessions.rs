//! Sessions with their transcripts (messages, turns, events): export, purge, import.

use crate::db::{row_error, DbError};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;

/// One stored message of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct MessageRecord {
    /// Position in the session.
    pub seq: i64,
    /// The turn that wrote it.
    pub turn_id: String,
    /// The provider-neutral JSON message, as stored.
    pub body: String,
}

/// One stored event of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct EventRecord {
    /// Position in the turn.
    pub seq: i64,
    /// Event type name.
    #[serde(rename = "type")]
    #[sqlx(rename = "type")]
    pub kind: String,
    /// The event JSON, as stored.
    pub body: String,
}

/// One stored turn with its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct TurnRecord {
    /// Turn id.
    pub id: String,
    /// Whether the turn was the agent's own (false: another agent's turn in this session).
    pub own: bool,
    /// `user`, `cron`, `acp`, `delegate`.
    pub trigger: String,
    /// The prompt.
    pub prompt: String,
    /// Final status.
    pub status: String,
    /// Start time.
    pub started_at: String,
    /// End time.
    pub ended_at: Option<String>,
    /// Final text.
    pub final_text: Option<String>,
    /// Error code.
    pub error_code: Option<String>,
    /// The turn's events in order.
    #[sqlx(skip)]
    pub events: Vec<EventRecord>,
}

/// One session with its transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
pub struct SessionRecord {
    /// Session id.
    pub id: String,
    /// `chat`, `acp` or `cron`.
    pub kind: String,
    /// Title.
    pub title: String,
    /// Creation time.
    pub created_at: String,
    /// Last activity.
    pub updated_at: String,
    /// End time (ACP).
    pub ended_at: Option<String>,
    /// The message history in order.
    #[sqlx(skip)]
    pub messages: Vec<MessageRecord>,
    /// The turns in order.
    #[sqlx(skip)]
    pub turns: Vec<TurnRecord>,
}

/// Every session of an agent id with messages, turns and events.
pub async fn export_sessions(pool: &SqlitePool, id: &str) -> Result<Vec<SessionRecord>, DbError> {
    let mut sessions = sqlx::query_as::<_, SessionRecord>(
        "SELECT id, kind, title, created_at, updated_at, ended_at FROM sessions
         WHERE agent_id = ? ORDER BY created_at, id",
    )
    .bind(id)
    .fetch_all(pool)
    .await
    .map_err(|e| row_error(e, |_| "sessions"))?;
    for session in &mut sessions {
        session.messages = sqlx::query_as::<_, MessageRecord>(
            "SELECT seq, turn_id, body FROM messages WHERE session_id = ? ORDER BY seq",
        )
        .bind(&session.id)
        .fetch_all(pool)
        .await
        .map_err(|e| row_error(e, |_| "messages"))?;
        // `own`: the turn was written by this agent id (a NULL attribution is not).
        session.turns = sqlx::query_as::<_, TurnRecord>(
            "SELECT id, agent_id IS ?2 AS own, trigger, prompt, status, started_at, ended_at,
                    final_text, error_code
             FROM turns WHERE session_id = ?1 ORDER BY started_at, id",
        )
        .bind(&session.id)
        .bind(id)
        .fetch_all(pool)
        .await
        .map_err(|e| row_error(e, |_| "turns"))?;
        for turn in &mut session.turns {
            turn.events = sqlx::query_as::<_, EventRecord>(
                "SELECT seq, type, body FROM events WHERE turn_id = ? ORDER BY seq",
            )
            .bind(&turn.id)
            .fetch_all(pool)
            .await
            .map_err(|e| row_error(e, |_| "events"))?;
        }
    }
    Ok(sessions)
}

/// Deletes every session of an agent id with its messages, turns and events, and clears the
/// attribution of the agent's turns in other agents' sessions. Returns the sessions removed.
pub async fn purge_sessions(pool: &SqlitePool, id: &str) -> Result<u64, DbError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let owned = "SELECT id FROM sessions WHERE agent_id = ?1";
    for sql in [
        format!("DELETE FROM events WHERE turn_id IN (SELECT id FROM turns WHERE session_id IN ({owned}))"),
        format!("DELETE FROM turns WHERE session_id IN ({owned})"),
        format!("DELETE FROM messages WHERE session_id IN ({owned})"),
        "UPDATE turns SET agent_id = NULL WHERE agent_id = ?1".to_string(),
    ] {
        sqlx::query(&sql).bind(id).execute(&mut *tx).await?;
    }
    let done = sqlx::query("DELETE FROM sessions WHERE agent_id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected())
}

/// Re-creates exported sessions under an agent id; rows that already exist are left alone.
/// Returns the sessions inserted.
pub async fn import_sessions(
    pool: &SqlitePool,
    id: &str,
    sessions: &[SessionRecord],
) -> Result<u64, DbError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let mut n = 0;
    for s in sessions {
        let done = sqlx::query(
            "INSERT OR IGNORE INTO sessions (id, agent_id, kind, title, created_at, updated_at, ended_at)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&s.id)
        .bind(id)
        .bind(&s.kind)
        .bind(&s.title)
        .bind(&s.created_at)
        .bind(&s.updated_at)
        .bind(&s.ended_at)
        .execute(&mut *tx)
        .await?;
        n += done.rows_affected();
        for t in &s.turns {
            sqlx::query(
                "INSERT OR IGNORE INTO turns (id, session_id, agent_id, trigger, prompt, status, started_at, ended_at, final_text, error_code)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(&t.id)
            .bind(&s.id)
            .bind(t.own.then_some(id))
            .bind(&t.trigger)
            .bind(&t.prompt)
            .bind(&t.status)
            .bind(&t.started_at)
            .bind(&t.ended_at)
            .bind(&t.final_text)
            .bind(&t.error_code)
            .execute(&mut *tx)
            .await?;
            for e in &t.events {
                sqlx::query(
                    "INSERT OR IGNORE INTO events (turn_id, seq, type, body) VALUES (?, ?, ?, ?)",
                )
                .bind(&t.id)
                .bind(e.seq)
                .bind(&e.kind)
                .bind(&e.body)
                .execute(&mut *tx)
                .await?;
            }
        }
        for m in &s.messages {
            sqlx::query("INSERT OR IGNORE INTO messages (session_id, seq, turn_id, body) VALUES (?, ?, ?, ?)")
                .bind(&s.id)
                .bind(m.seq)
                .bind(&m.turn_id)
                .bind(&m.body)
                .execute(&mut *tx)
                .await?;
        }
    }
    tx.commit().await?;
    Ok(n)
}
