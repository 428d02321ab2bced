//! The usage ledger and the receipt chain of an agent: export, purge, import.

use crate::db::{row_error, DbError};
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;

/// One row of the usage ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, sqlx::FromRow)]
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
    sqlx::query_as::<_, UsageRecord>(
        "SELECT id, session_id, turn_id, time, day, provider, input_tokens, output_tokens, cost_usd
         FROM usage WHERE agent_id = ? ORDER BY id",
    )
    .bind(id)
    .fetch_all(pool)
    .await
    .map_err(|e| row_error(e, |_| "usage"))
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

/// One stored receipt: the receipt log's own record, exported and restored as it is.
pub use crate::receipts::Receipt as ReceiptRecord;

/// The authenticated head of a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow)]
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
    let receipts = sqlx::query_as::<_, ReceiptRecord>(
        "SELECT seq, id, tool, args_hash, result_hash, time, prev_mac, mac FROM receipts
         WHERE agent_id = ? ORDER BY seq",
    )
    .bind(id)
    .fetch_all(pool)
    .await
    .map_err(|e| row_error(e, |_| "receipts"))?;
    let head = sqlx::query_as::<_, ReceiptHead>(
        "SELECT last_seq, last_mac, head_mac FROM receipt_heads WHERE agent_id = ?",
    )
    .bind(id)
    .fetch_optional(pool)
    .await
    .map_err(|e| row_error(e, |_| "receipt_heads"))?;
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
        n += crate::receipts::insert_or_keep(&mut tx, id, r).await?;
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
