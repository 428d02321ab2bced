//! Mapping SQLite rows to `MemoryEntry`.

use uuid::Uuid;

use crate::types::MemoryEntry;
use chrono::{DateTime, Utc};

/// The selected columns, decoded by name into an [`EntryRow`].
pub const ENTRY_COLUMNS: &str = "m.id, m.agent_id, a.alias, m.key, m.content, m.category, \
     m.session_id, m.importance, m.created_at, m.updated_at";

/// One row selected with [`ENTRY_COLUMNS`], with FTS5's `rank` when a keyword recall selects
/// it (absent elsewhere).
#[derive(sqlx::FromRow)]
pub struct EntryRow {
    id: Uuid,
    agent_id: Uuid,
    alias: String,
    key: String,
    content: String,
    category: String,
    session_id: Option<String>,
    importance: f64,
    created_at: i64,
    updated_at: i64,
    #[sqlx(default)]
    rank: Option<f64>,
    /// The row's `seq`, when the statement selects it (recall ties).
    #[sqlx(default)]
    seq: Option<i64>,
}

impl EntryRow {
    /// Recall order: best rank first (FTS5's rank is lower for better rows), then the most
    /// recently created row (`seq`, the order each statement uses).
    pub fn order(&self, other: &Self) -> std::cmp::Ordering {
        let rank = |r: &Self| r.rank.unwrap_or(f64::INFINITY);
        rank(self)
            .total_cmp(&rank(other))
            .then(other.seq.cmp(&self.seq))
    }

    /// A row of the ranked recall statement read over a blocking connection (the columns of
    /// [`ENTRY_COLUMNS`], then `rank` and `seq`).
    pub(crate) fn from_blocking(r: &rusqlite::Row<'_>) -> Result<Self, ReadError> {
        let uuid = |i: usize| -> Result<Uuid, ReadError> {
            let b = r.get_ref(i)?.as_blob().map_err(rusqlite::Error::from)?;
            Uuid::from_slice(b).map_err(|e| ReadError::Row(format!("bad id: {e}")))
        };
        Ok(EntryRow {
            id: uuid(0)?,
            agent_id: uuid(1)?,
            alias: r.get(2)?,
            key: r.get(3)?,
            content: r.get(4)?,
            category: r.get(5)?,
            session_id: r.get(6)?,
            importance: r.get(7)?,
            created_at: r.get(8)?,
            updated_at: r.get(9)?,
            rank: r.get(10)?,
            seq: r.get(11)?,
        })
    }

    /// The entry; FTS5's rank (lower is better) becomes the score (higher is better).
    pub fn into_entry(self) -> Result<MemoryEntry, String> {
        Ok(MemoryEntry {
            id: self.id,
            agent_id: self.agent_id,
            agent: self.alias,
            key: self.key,
            content: self.content,
            category: self.category,
            session_id: self.session_id,
            importance: self.importance,
            created_at: ts_from_micros(self.created_at)?,
            updated_at: ts_from_micros(self.updated_at)?,
            score: self.rank.map(|r| -r),
        })
    }
}

/// A row time as stored: microseconds since the Unix epoch (UTC).
pub fn micros(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

/// The time of a stored row.
pub fn ts_from_micros(us: i64) -> Result<DateTime<Utc>, String> {
    DateTime::from_timestamp_micros(us).ok_or_else(|| format!("bad timestamp {us}"))
}

/// What went wrong reading rows over a blocking connection (an export page, a ranked recall):
/// the statement, or a row that does not decode.
#[derive(Debug)]
pub(crate) enum ReadError {
    Sql(rusqlite::Error),
    Row(String),
    /// The connection could not be prepared (the ranking functions not registered).
    Setup(String),
}

impl From<rusqlite::Error> for ReadError {
    fn from(e: rusqlite::Error) -> Self {
        ReadError::Sql(e)
    }
}
