//! Plain data of the memory layer: rows, queries, pages and receipts.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::MemoryError;

/// The category `MEMORY.md` holds on Markdown and the default of a store without one.
pub const CORE_CATEGORY: &str = "core";
/// Longest accepted key, in bytes.
pub const MAX_KEY_LEN: usize = 512;
/// Longest accepted category, in bytes.
pub const MAX_CATEGORY_LEN: usize = 128;
/// Longest accepted session id, in bytes.
pub const MAX_SESSION_LEN: usize = 256;

/// An agent as a memory store knows it: its stable UUID and its current alias.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AgentRef {
    /// Stable identity, survives renames.
    pub id: Uuid,
    /// Current alias.
    pub alias: String,
}

/// One stored memory row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEntry {
    /// Row id.
    pub id: Uuid,
    /// Owning agent's UUID.
    pub agent_id: Uuid,
    /// Owning agent's alias.
    pub agent: String,
    /// Key, unique per agent.
    pub key: String,
    /// The remembered text.
    pub content: String,
    /// Category (`core`, `daily`, or any custom name).
    pub category: String,
    /// Session the row was stored in, if any.
    pub session_id: Option<String>,
    /// Importance in `[0, 1]`.
    pub importance: f64,
    /// When the key was first stored (UTC).
    pub created_at: DateTime<Utc>,
    /// When the row last changed (UTC).
    pub updated_at: DateTime<Utc>,
    /// Relevance of a recall (higher is better); `None` outside keyword/vector recall.
    pub score: Option<f64>,
}

/// A row to store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewMemory {
    /// Key, unique per agent; storing an existing key replaces its row.
    pub key: String,
    /// The text to remember.
    pub content: String,
    /// Category; `core` when not given by the caller.
    pub category: String,
    /// Session id, if any.
    pub session_id: Option<String>,
    /// Importance in `[0, 1]`.
    pub importance: f64,
}

impl NewMemory {
    /// The entry this row became once stored for `agent` under `id` (no score).
    pub fn stored_as(
        &self,
        agent: &AgentRef,
        id: Uuid,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    ) -> MemoryEntry {
        MemoryEntry {
            id,
            agent_id: agent.id,
            agent: agent.alias.clone(),
            key: self.key.clone(),
            content: self.content.clone(),
            category: self.category.clone(),
            session_id: self.session_id.clone(),
            importance: self.importance,
            created_at,
            updated_at,
            score: None,
        }
    }

    /// A row in category `core` with no session and importance 0.5.
    pub fn new(key: impl Into<String>, content: impl Into<String>) -> Self {
        NewMemory {
            key: key.into(),
            content: content.into(),
            category: CORE_CATEGORY.to_string(),
            session_id: None,
            importance: 0.5,
        }
    }

    /// Sets the category.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.category = category.into();
        self
    }

    /// Sets the session.
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session_id = Some(session.into());
        self
    }

    /// Checks the row before any backend sees it.
    pub fn validate(&self) -> Result<(), MemoryError> {
        check_text("key", &self.key, MAX_KEY_LEN)?;
        check_text("category", &self.category, MAX_CATEGORY_LEN)?;
        if let Some(s) = &self.session_id {
            check_text("session", s, MAX_SESSION_LEN)?;
        }
        if self.content.contains('\0') {
            return Err(MemoryError::InvalidInput {
                field: "content",
                reason: "contains a NUL byte".into(),
            });
        }
        if !(0.0..=1.0).contains(&self.importance) {
            return Err(MemoryError::InvalidInput {
                field: "importance",
                reason: format!("{} is outside [0, 1]", self.importance),
            });
        }
        Ok(())
    }
}

fn check_text(field: &'static str, value: &str, max: usize) -> Result<(), MemoryError> {
    let bad = |reason: String| Err(MemoryError::InvalidInput { field, reason });
    if value.trim().is_empty() {
        return bad("is empty".into());
    }
    if value.len() > max {
        return bad(format!("is {} bytes long (at most {max})", value.len()));
    }
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return bad(format!("contains the control character {c:?}"));
    }
    Ok(())
}

/// What `store` answers: the stored row plus warnings (for example a failed Lucid mirror).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoreReceipt {
    /// The row as stored.
    pub entry: MemoryEntry,
    /// Problems that did not prevent the local store.
    pub warnings: Vec<String>,
}

/// A recall request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallQuery {
    /// Free text; empty means "most recent rows".
    pub query: String,
    /// At most this many rows (applied after scoping and ranking).
    pub limit: usize,
    /// Only rows of this category.
    pub category: Option<String>,
    /// Only rows of this session.
    pub session: Option<String>,
}

impl RecallQuery {
    /// A query with limit 10 and no filters.
    pub fn new(query: impl Into<String>) -> Self {
        RecallQuery {
            query: query.into(),
            limit: 10,
            category: None,
            session: None,
        }
    }

    /// Sets the limit.
    pub fn limit(mut self, limit: usize) -> Self {
        self.limit = limit;
        self
    }

    /// Sets the category filter.
    pub fn category(mut self, category: impl Into<String>) -> Self {
        self.category = Some(category.into());
        self
    }

    /// Sets the session filter.
    pub fn session(mut self, session: impl Into<String>) -> Self {
        self.session = Some(session.into());
        self
    }
}

/// A list request over the bound agent's own rows, newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListQuery {
    /// Only rows of this category.
    pub category: Option<String>,
    /// Only rows of this session.
    pub session: Option<String>,
    /// Rows to skip.
    pub offset: u64,
    /// Page size; `None` returns every remaining row (no hidden cap).
    pub limit: Option<u64>,
}

/// One page of a list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page {
    /// The rows of this page.
    pub entries: Vec<MemoryEntry>,
    /// Rows matching the filters in total.
    pub total: u64,
    /// Offset of the next page, when there is one.
    pub next_offset: Option<u64>,
}

impl Page {
    /// Builds a page from the rows, the total and the request.
    pub fn new(entries: Vec<MemoryEntry>, total: u64, q: &ListQuery) -> Self {
        let end = q.offset + entries.len() as u64;
        Page {
            next_offset: (end < total).then_some(end),
            entries,
            total,
        }
    }
}

/// Position in an export: the last row seen, ordered by `(created_at, id)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportCursor {
    /// `created_at` of the last row.
    pub created_at: DateTime<Utc>,
    /// Id of the last row.
    pub id: Uuid,
}

impl ExportCursor {
    /// The cursor just after `entry`.
    pub fn after(entry: &MemoryEntry) -> Self {
        ExportCursor {
            created_at: entry.created_at,
            id: entry.id,
        }
    }
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportReport {
    /// The agent's UUID in the store after the import.
    pub agent_id: Uuid,
    /// Whether the requested UUID could be kept.
    pub kept_agent_id: bool,
    /// Rows written.
    pub imported: u64,
    /// Rows whose key already existed for the agent (left as they were).
    pub skipped: u64,
}

/// Formats a UTC time the way the SQL stores keep it: fixed width, so text order = time order.
pub fn format_ts(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// Parses a time written by [`format_ts`] (or any RFC 3339 time).
pub fn parse_ts(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// A source of the current time, passed in so tests control it.
pub trait Clock: Send + Sync {
    /// Now, in UTC.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_field() {
        let ok = NewMemory::new("k", "c");
        assert!(ok.validate().is_ok());
        let cases = [
            (NewMemory::new("", "c"), "key"),
            (NewMemory::new("a\nb", "c"), "key"),
            (NewMemory::new("k", "c").category(" "), "category"),
            (NewMemory::new("k", "c").session(""), "session"),
            (NewMemory::new("k", "a\0b"), "content"),
            (NewMemory::new("k".repeat(MAX_KEY_LEN + 1), "c"), "key"),
        ];
        for (row, want) in cases {
            match row.validate() {
                Err(MemoryError::InvalidInput { field, .. }) => assert_eq!(field, want),
                other => panic!("{row:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn timestamps_sort_as_text() {
        let a = parse_ts("2026-01-02T03:04:05Z").unwrap_or_default();
        let b = a + chrono::Duration::microseconds(1);
        assert!(format_ts(a) < format_ts(b));
        assert_eq!(parse_ts(&format_ts(b)), Some(b));
    }

    #[test]
    fn page_offsets() {
        let q = ListQuery {
            offset: 2,
            limit: Some(2),
            ..ListQuery::default()
        };
        let p = Page::new(vec![], 3, &q);
        assert_eq!(p.next_offset, Some(2));
        assert_eq!(Page::new(vec![], 2, &q).next_offset, None);
    }
}
