//! The two traits of the memory layer: `Memory` is what an agent holds (bound to one agent),
//! `MemoryStore` is a backend shared by many agents, with the admin operations the lifecycle uses.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures::stream::BoxStream;
use uuid::Uuid;
use warren_types::MemoryBackendKind;

use crate::error::MemoryError;
use crate::grants::RecallScope;
use crate::types::{
    AgentRef, ExportCursor, ImportReport, ListQuery, MemoryEntry, NewMemory, Page, RecallQuery,
    StoreReceipt,
};

/// An agent's memory handle. Writes and deletes touch only the bound agent's rows; recall sees
/// the bound agent's rows plus what its grants expose.
#[async_trait]
pub trait Memory: Send + Sync {
    /// The bound agent's alias.
    fn agent(&self) -> &str;
    /// The backend behind the handle.
    fn backend(&self) -> MemoryBackendKind;
    /// Stores (or replaces, by key) one row of the bound agent.
    async fn store(&self, new: NewMemory) -> Result<StoreReceipt, MemoryError>;
    /// Stores many rows of the bound agent in one go (one transaction where the backend has them).
    async fn store_batch(&self, rows: Vec<NewMemory>) -> Result<Vec<StoreReceipt>, MemoryError> {
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            out.push(self.store(row).await?);
        }
        Ok(out)
    }
    /// The bound agent's row with this key.
    async fn get(&self, key: &str) -> Result<Option<MemoryEntry>, MemoryError>;
    /// Ranked rows visible to the bound agent (own rows plus granted ones).
    async fn recall(&self, q: &RecallQuery) -> Result<Vec<MemoryEntry>, MemoryError>;
    /// The bound agent's own rows, newest first, paginated.
    async fn list(&self, q: &ListQuery) -> Result<Page, MemoryError>;
    /// Deletes the bound agent's row with this key; `true` when a row was removed.
    async fn forget(&self, key: &str) -> Result<bool, MemoryError>;
    /// Number of the bound agent's rows.
    async fn count(&self) -> Result<u64, MemoryError>;
    /// The categories the bound agent's own rows use, sorted, each once.
    async fn categories(&self) -> Result<Vec<String>, MemoryError>;
}

/// A backend holding the rows of many agents (SQLite, Postgres, Lucid, Qdrant, None).
#[async_trait]
pub trait MemoryStore: Send + Sync {
    /// Which backend this is.
    fn kind(&self) -> MemoryBackendKind;
    /// Where it lives (file path or redacted URL), for messages.
    fn location(&self) -> String;
    /// The agent's UUID, creating its `agents` row on first use.
    async fn ensure_agent(&self, alias: &str) -> Result<AgentRef, MemoryError>;
    /// The UUID the store keeps for the alias, if it knows it.
    async fn agent_id(&self, alias: &str) -> Result<Option<Uuid>, MemoryError>;
    /// The agent's UUID if the store knows the alias.
    async fn lookup_agent(&self, alias: &str) -> Result<Option<AgentRef>, MemoryError> {
        Ok(self.agent_id(alias).await?.map(|id| AgentRef {
            id,
            alias: alias.to_string(),
        }))
    }
    /// Stores rows stamped with `agent`'s UUID (upsert by key), in one transaction. Every row
    /// is validated first (none is written when one is invalid); no rows, no work.
    async fn store_with_agent(
        &self,
        agent: &AgentRef,
        rows: &[NewMemory],
        now: DateTime<Utc>,
    ) -> Result<Vec<StoreReceipt>, MemoryError> {
        for r in rows {
            r.validate()?;
        }
        if rows.is_empty() {
            return Ok(Vec::new());
        }
        self.write_rows(agent, rows, now).await
    }
    /// Writes rows [`MemoryStore::store_with_agent`] has validated (at least one): what it
    /// does after its checks.
    async fn write_rows(
        &self,
        agent: &AgentRef,
        rows: &[NewMemory],
        now: DateTime<Utc>,
    ) -> Result<Vec<StoreReceipt>, MemoryError>;
    /// One row of one agent.
    async fn get_for_agent(
        &self,
        agent: &AgentRef,
        key: &str,
    ) -> Result<Option<MemoryEntry>, MemoryError>;
    /// Ranked recall restricted to the allowlist, filtered inside the query.
    async fn recall_for_agents(
        &self,
        scope: &RecallScope,
        q: &RecallQuery,
    ) -> Result<Vec<MemoryEntry>, MemoryError>;
    /// One agent's rows, newest first.
    async fn list_for_agent(&self, agent: &AgentRef, q: &ListQuery) -> Result<Page, MemoryError>;
    /// Deletes one row of one agent.
    async fn forget_for_agent(&self, agent: &AgentRef, key: &str) -> Result<bool, MemoryError>;
    /// Number of one agent's rows.
    async fn count_for_agent(&self, agent: &AgentRef) -> Result<u64, MemoryError>;
    /// The categories one agent's rows use, sorted, each once (without reading the rows).
    async fn categories_for_agent(&self, agent: &AgentRef) -> Result<Vec<String>, MemoryError>;
    /// Re-points the alias of an agent's UUID (no row rewrite where the backend allows it).
    /// `Ok(false)` when the store does not know `old`.
    async fn rename_agent(&self, old: &str, new: &str) -> Result<bool, MemoryError>;
    /// Up to `limit` rows of an agent after `after`, ordered by `(created_at, id)`.
    async fn export_page(
        &self,
        agent_id: Uuid,
        after: Option<&ExportCursor>,
        limit: usize,
    ) -> Result<Vec<MemoryEntry>, MemoryError>;
    /// Every row of an agent in `(created_at, id)` order as pages of one streamed query, where
    /// the backend streams results (one round trip instead of one per page). `None`, the
    /// default, makes [`crate::export_agent`] read page by page with
    /// [`MemoryStore::export_page`].
    fn export_stream(
        &self,
        _agent_id: Uuid,
    ) -> Option<BoxStream<'static, Result<Vec<MemoryEntry>, MemoryError>>> {
        None
    }
    /// Deletes every row of the alias and its `agents` row; returns the number of rows removed.
    async fn purge_agent(&self, alias: &str) -> Result<u64, MemoryError>;
    /// Closes the store's connections (graceful shutdown); later calls fail.
    async fn close(&self) {}
    /// Re-creates an agent from exported rows, keeping `agent_id` (and row ids) when free.
    async fn import_agent(
        &self,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError>;
}
