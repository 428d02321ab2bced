//! `warren memory store | recall | list | forget` (rules §9.1) and the desktop Memory screen: an
//! agent's memory, always through its scoped handle (own rows plus what its grants expose).

use std::sync::Arc;

use crate::Warren;
use serde::Serialize;
use warren_memory::{ListQuery, Memory, MemoryEntry, MemoryError, NewMemory, RecallQuery};
use warren_types::{ApiError, ErrorCode};

/// One memory row as front-ends show it; `--json` prints an array of these.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MemoryItem {
    /// Alias of the agent owning the row.
    pub agent: String,
    /// Key, unique per agent.
    pub key: String,
    /// The remembered text.
    pub content: String,
    /// Category.
    pub category: String,
    /// Session the row was stored in.
    pub session: Option<String>,
    /// Relevance of a keyword recall (higher is better); `null` for lists and empty queries.
    pub score: Option<f64>,
    /// First stored, RFC 3339 UTC.
    pub created_at: String,
    /// Last changed (stored again under its key), RFC 3339 UTC; lists are newest change first.
    pub updated_at: String,
}

/// What `store` answers: the row and warnings (for example a failed Lucid mirror).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StoredMemory {
    /// The stored row.
    pub item: MemoryItem,
    /// Problems that did not prevent the store.
    pub warnings: Vec<String>,
}

/// What `forget` answers.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForgottenMemory {
    /// The agent.
    pub agent: String,
    /// The removed key.
    pub key: String,
}

/// Maps a memory error to the API error with its stable code.
pub(crate) fn memory_error(e: MemoryError) -> ApiError {
    ApiError::from(e)
}

pub(crate) fn item(e: MemoryEntry) -> MemoryItem {
    MemoryItem {
        agent: e.agent,
        key: e.key,
        content: e.content,
        category: e.category,
        session: e.session_id,
        score: e.score,
        created_at: e
            .created_at
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        updated_at: e
            .updated_at
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
    }
}

impl Warren {
    pub(crate) async fn memory_of(&self, agent: &str) -> Result<Arc<dyn Memory>, ApiError> {
        let config = self.load()?.config;
        if !config.agents.contains_key(agent) {
            return Err(crate::errors::unknown_agent(&config, agent));
        }
        let host = self.host().await?;
        host.memory()
            .handle_for(&config, agent)
            .await
            .map_err(memory_error)
    }

    /// Stores (or replaces, by key) a row of `agent`; category `core` when not given. Refused
    /// with `lifecycle_pending` while an unfinished rename, delete or restore involves `agent`.
    pub async fn store_memory(
        &self,
        agent: &str,
        key: &str,
        content: &str,
        category: Option<&str>,
        session: Option<&str>,
    ) -> Result<StoredMemory, ApiError> {
        self.refuse_if_lifecycle_pending(agent)?;
        let mut row = NewMemory::new(key, content);
        if let Some(c) = category {
            row = row.category(c);
        }
        if let Some(s) = session {
            row = row.session(s);
        }
        let receipt = self
            .memory_of(agent)
            .await?
            .store(row)
            .await
            .map_err(memory_error)?;
        Ok(StoredMemory {
            item: item(receipt.entry),
            warnings: receipt.warnings,
        })
    }

    /// Ranked recall as `agent` sees it (own rows plus granted ones); an empty query gives the
    /// most recent rows.
    pub async fn recall_memory(
        &self,
        agent: &str,
        query: &str,
        limit: usize,
    ) -> Result<Vec<MemoryItem>, ApiError> {
        if limit == 0 {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "--limit must be at least 1",
            ));
        }
        let rows = self
            .memory_of(agent)
            .await?
            .recall(&RecallQuery::new(query).limit(limit))
            .await
            .map_err(memory_error)?;
        Ok(rows.into_iter().map(item).collect())
    }

    /// `agent`'s own rows, newest first; `limit = None` lists them all.
    pub async fn list_memory(
        &self,
        agent: &str,
        offset: u64,
        limit: Option<u64>,
    ) -> Result<Vec<MemoryItem>, ApiError> {
        let page = self
            .memory_of(agent)
            .await?
            .list(&ListQuery {
                offset,
                limit,
                ..ListQuery::default()
            })
            .await
            .map_err(memory_error)?;
        Ok(page.entries.into_iter().map(item).collect())
    }

    /// Removes `agent`'s row with `key` (never another agent's); `not_found` when absent.
    pub async fn forget_memory(&self, agent: &str, key: &str) -> Result<ForgottenMemory, ApiError> {
        self.refuse_if_lifecycle_pending(agent)?;
        let removed = self
            .memory_of(agent)
            .await?
            .forget(key)
            .await
            .map_err(memory_error)?;
        if !removed {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("agent `{agent}` has no memory with key `{key}`"),
            ));
        }
        Ok(ForgottenMemory {
            agent: agent.to_string(),
            key: key.to_string(),
        })
    }
}
