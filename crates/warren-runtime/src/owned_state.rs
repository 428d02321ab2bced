//! Per-agent queries on `sessions.db` for the lifecycle service: counting, exporting, purging,
//! re-pointing and importing an agent's sessions (with transcripts), usage and receipts. Every
//! table is keyed by the agent's stable id, so a rename is one alias update.

use crate::db::DbError;
use serde::{Deserialize, Serialize};
use sqlx::{Row, SqlitePool};

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
async fn owned_rows(tx: &mut sqlx::SqliteConnection, id: &str) -> Result<i64, sqlx::Error> {
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
    let r = sqlx::query(
        "SELECT (SELECT COUNT(*) FROM sessions WHERE agent_id = ?1),
                (SELECT COUNT(*) FROM usage WHERE agent_id = ?1),
                (SELECT COUNT(*) FROM receipts WHERE agent_id = ?1)",
    )
    .bind(id)
    .fetch_one(pool)
    .await?;
    let n = |i: usize| u64::try_from(r.get::<i64, _>(i)).unwrap_or(0);
    Ok((n(0), n(1), n(2)))
}

/// ACP sessions of an agent id that have not ended and heartbeated at or after `since`
/// (RFC 3339): each is `"<session id> (<title>)"`.
pub async fn live_acp_sessions(
    pool: &SqlitePool,
    id: &str,
    since: &str,
) -> Result<Vec<String>, DbError> {
    let rows = sqlx::query(
        "SELECT id, title FROM sessions WHERE agent_id = ? AND kind = 'acp' AND ended_at IS NULL
         AND heartbeat_at IS NOT NULL AND heartbeat_at >= ? ORDER BY id",
    )
    .bind(id)
    .bind(since)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| format!("{} ({})", r.get::<String, _>(0), r.get::<String, _>(1)))
        .collect())
}

/// One stored message of a transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageRecord {
    /// Position in the session.
    pub seq: i64,
    /// The turn that wrote it.
    pub turn_id: String,
    /// The provider-neutral JSON message, as stored.
    pub body: String,
}

/// One stored event of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventRecord {
    /// Position in the turn.
    pub seq: i64,
    /// Event type name.
    #[serde(rename = "type")]
    pub kind: String,
    /// The event JSON, as stored.
    pub body: String,
}

/// One stored turn with its events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub events: Vec<EventRecord>,
}

/// One session with its transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    pub messages: Vec<MessageRecord>,
    /// The turns in order.
    pub turns: Vec<TurnRecord>,
}

/// Every session of an agent id with messages, turns and events.
pub async fn export_sessions(pool: &SqlitePool, id: &str) -> Result<Vec<SessionRecord>, DbError> {
    let rows = sqlx::query(
        "SELECT id, kind, title, created_at, updated_at, ended_at FROM sessions
         WHERE agent_id = ? ORDER BY created_at, id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let sid: String = r.get(0);
        let messages = sqlx::query(
            "SELECT seq, turn_id, body FROM messages WHERE session_id = ? ORDER BY seq",
        )
        .bind(&sid)
        .fetch_all(pool)
        .await?
        .iter()
        .map(|m| MessageRecord {
            seq: m.get(0),
            turn_id: m.get(1),
            body: m.get(2),
        })
        .collect();
        let mut turns = Vec::new();
        for t in sqlx::query(
            "SELECT id, agent_id, trigger, prompt, status, started_at, ended_at, final_text, error_code
             FROM turns WHERE session_id = ? ORDER BY started_at, id",
        )
        .bind(&sid)
        .fetch_all(pool)
        .await?
        {
            let tid: String = t.get(0);
            let events = sqlx::query("SELECT seq, type, body FROM events WHERE turn_id = ? ORDER BY seq")
                .bind(&tid)
                .fetch_all(pool)
                .await?
                .iter()
                .map(|e| EventRecord {
                    seq: e.get(0),
                    kind: e.get(1),
                    body: e.get(2),
                })
                .collect();
            turns.push(TurnRecord {
                own: t.get::<Option<String>, _>(1).as_deref() == Some(id),
                id: tid,
                trigger: t.get(2),
                prompt: t.get(3),
                status: t.get(4),
                started_at: t.get(5),
                ended_at: t.get(6),
                final_text: t.get(7),
                error_code: t.get(8),
                events,
            });
        }
        out.push(SessionRecord {
            id: sid,
            kind: r.get(1),
            title: r.get(2),
            created_at: r.get(3),
            updated_at: r.get(4),
            ended_at: r.get(5),
            messages,
            turns,
        });
    }
    Ok(out)
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

/// One row of the usage ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UsageRecord {
    /// Ledger row id.
    pub id: i64,
    /// Session, if any.
    pub session_id: Option<String>,
    /// Turn, if any.
    pub turn_id: Option<String>,
    /// Time (RFC 3339).
    pub time: String,
    /// UTC day.
    pub day: String,
    /// Provider reference.
    pub provider: String,
    /// Input tokens.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Cost in USD.
    pub cost_usd: f64,
}

/// The usage ledger rows of an agent id.
pub async fn export_usage(pool: &SqlitePool, id: &str) -> Result<Vec<UsageRecord>, DbError> {
    let rows = sqlx::query(
        "SELECT id, session_id, turn_id, time, day, provider, input_tokens, output_tokens, cost_usd
         FROM usage WHERE agent_id = ? ORDER BY id",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    Ok(rows
        .iter()
        .map(|r| UsageRecord {
            id: r.get(0),
            session_id: r.get(1),
            turn_id: r.get(2),
            time: r.get(3),
            day: r.get(4),
            provider: r.get(5),
            input_tokens: r.get(6),
            output_tokens: r.get(7),
            cost_usd: r.get(8),
        })
        .collect())
}

/// Deletes the usage rows (and the action budget window) of an agent id.
pub async fn purge_usage(pool: &SqlitePool, id: &str) -> Result<u64, DbError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query("DELETE FROM actions WHERE agent_id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    let done = sqlx::query("DELETE FROM usage WHERE agent_id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected())
}

/// Re-creates usage rows under an agent id (keeping ledger ids when free).
pub async fn import_usage(
    pool: &SqlitePool,
    id: &str,
    rows: &[UsageRecord],
) -> Result<u64, DbError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let mut n = 0;
    for u in rows {
        let holder: Option<Option<String>> =
            sqlx::query_scalar("SELECT agent_id FROM usage WHERE id = ?")
                .bind(u.id)
                .fetch_optional(&mut *tx)
                .await?;
        let row_id = match holder {
            None => Some(u.id),
            Some(h) if h.as_deref() == Some(id) => continue,
            Some(_) => None,
        };
        sqlx::query(
            "INSERT INTO usage (id, agent_id, session_id, turn_id, time, day, provider, input_tokens, output_tokens, cost_usd)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(row_id)
        .bind(id)
        .bind(&u.session_id)
        .bind(&u.turn_id)
        .bind(&u.time)
        .bind(&u.day)
        .bind(&u.provider)
        .bind(u.input_tokens)
        .bind(u.output_tokens)
        .bind(u.cost_usd)
        .execute(&mut *tx)
        .await?;
        n += 1;
    }
    tx.commit().await?;
    Ok(n)
}

/// One stored receipt (see [`crate::receipts::Receipt`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptRecord {
    /// Position in the chain.
    pub seq: i64,
    /// Receipt id.
    pub id: String,
    /// Tool name.
    pub tool: String,
    /// SHA-256 of the arguments.
    pub args_hash: String,
    /// SHA-256 of the result.
    pub result_hash: String,
    /// Time.
    pub time: String,
    /// Previous MAC.
    pub prev_mac: String,
    /// This record's MAC.
    pub mac: String,
}

/// The authenticated head of a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReceiptHead {
    /// Last sequence number.
    pub last_seq: i64,
    /// Last MAC.
    pub last_mac: String,
    /// MAC over the head.
    pub head_mac: String,
}

/// An agent's receipt chain as stored (MACs are bound to the agent id, not the alias).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReceiptsRecord {
    /// Receipts in chain order.
    pub receipts: Vec<ReceiptRecord>,
    /// The authenticated head.
    pub head: Option<ReceiptHead>,
}

/// The receipt chain of an agent id.
pub async fn export_receipts(pool: &SqlitePool, id: &str) -> Result<ReceiptsRecord, DbError> {
    let receipts = sqlx::query(
        "SELECT seq, id, tool, args_hash, result_hash, time, prev_mac, mac FROM receipts
         WHERE agent_id = ? ORDER BY seq",
    )
    .bind(id)
    .fetch_all(pool)
    .await?
    .iter()
    .map(|r| ReceiptRecord {
        seq: r.get(0),
        id: r.get(1),
        tool: r.get(2),
        args_hash: r.get(3),
        result_hash: r.get(4),
        time: r.get(5),
        prev_mac: r.get(6),
        mac: r.get(7),
    })
    .collect();
    let head =
        sqlx::query("SELECT last_seq, last_mac, head_mac FROM receipt_heads WHERE agent_id = ?")
            .bind(id)
            .fetch_optional(pool)
            .await?
            .map(|h| ReceiptHead {
                last_seq: h.get(0),
                last_mac: h.get(1),
                head_mac: h.get(2),
            });
    Ok(ReceiptsRecord { receipts, head })
}

/// Deletes the receipt chain of an agent id; returns the receipts removed.
pub async fn purge_receipts(pool: &SqlitePool, id: &str) -> Result<u64, DbError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query("DELETE FROM receipt_heads WHERE agent_id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    let done = sqlx::query("DELETE FROM receipts WHERE agent_id = ?")
        .bind(id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(done.rows_affected())
}

/// Re-creates a receipt chain under an agent id (it verifies only under the original id).
pub async fn import_receipts(
    pool: &SqlitePool,
    id: &str,
    rec: &ReceiptsRecord,
) -> Result<u64, DbError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    let mut n = 0;
    for r in &rec.receipts {
        let done = sqlx::query(
            "INSERT OR IGNORE INTO receipts (agent_id, seq, id, tool, args_hash, result_hash, time, prev_mac, mac)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(r.seq)
        .bind(&r.id)
        .bind(&r.tool)
        .bind(&r.args_hash)
        .bind(&r.result_hash)
        .bind(&r.time)
        .bind(&r.prev_mac)
        .bind(&r.mac)
        .execute(&mut *tx)
        .await?;
        n += done.rows_affected();
    }
    if let Some(h) = &rec.head {
        sqlx::query(
            "INSERT OR IGNORE INTO receipt_heads (agent_id, last_seq, last_mac, head_mac) VALUES (?, ?, ?, ?)",
        )
        .bind(id)
        .bind(h.last_seq)
        .bind(&h.last_mac)
        .bind(&h.head_mac)
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(n)
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
