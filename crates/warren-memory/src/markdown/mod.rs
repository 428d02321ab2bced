//! The Markdown backend: per-agent files in the workspace, and `AgentScopedMarkdownMemory`,
//! which composes cross-agent recall from the bound agent's store plus one per granted peer.

mod files;
pub mod format;
mod store;

pub use store::{markdown_agent_id, MarkdownStore};

use std::sync::Arc;

use async_trait::async_trait;
use warren_types::MemoryBackendKind;

use crate::error::MemoryError;
use crate::traits::Memory;
use crate::types::{Clock, ListQuery, MemoryEntry, NewMemory, Page, RecallQuery, StoreReceipt};

/// An agent's handle on the Markdown backend. Stores, lists and forgets touch only the bound
/// agent's files; recall adds granted peers' rows, each prefixed with `[<alias>] `.
pub struct AgentScopedMarkdownMemory {
    own: Arc<MarkdownStore>,
    peers: Vec<Arc<MarkdownStore>>,
    allowed: Vec<String>,
    clock: Arc<dyn Clock>,
}

impl AgentScopedMarkdownMemory {
    /// Builds the handle. `allowed` is the set of peer aliases the agent was granted; a peer
    /// store whose alias is not in it is ignored at recall time, however it was passed in.
    pub fn new(
        own: Arc<MarkdownStore>,
        peers: Vec<Arc<MarkdownStore>>,
        allowed: Vec<String>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        AgentScopedMarkdownMemory {
            own,
            peers,
            allowed,
            clock,
        }
    }

    /// The bound agent's store.
    pub fn own_store(&self) -> &Arc<MarkdownStore> {
        &self.own
    }

    fn visible_peers(&self) -> impl Iterator<Item = &Arc<MarkdownStore>> {
        self.peers.iter().filter(|p| {
            p.alias() != self.own.alias() && self.allowed.iter().any(|a| a == p.alias())
        })
    }
}

#[async_trait]
impl Memory for AgentScopedMarkdownMemory {
    fn agent(&self) -> &str {
        self.own.alias()
    }

    fn backend(&self) -> MemoryBackendKind {
        MemoryBackendKind::Markdown
    }

    async fn store(&self, new: NewMemory) -> Result<StoreReceipt, MemoryError> {
        let mut rows = self.own.store(&[new], self.clock.now()).await?;
        let entry = rows.pop().ok_or_else(|| MemoryError::File {
            path: self.own.core_file(),
            reason: "the store returned no row".into(),
        })?;
        Ok(StoreReceipt {
            entry,
            warnings: Vec::new(),
        })
    }

    async fn store_batch(&self, rows: Vec<NewMemory>) -> Result<Vec<StoreReceipt>, MemoryError> {
        let stored = self.own.store(&rows, self.clock.now()).await?;
        Ok(stored
            .into_iter()
            .map(|entry| StoreReceipt {
                entry,
                warnings: Vec::new(),
            })
            .collect())
    }

    async fn get(&self, key: &str) -> Result<Option<MemoryEntry>, MemoryError> {
        self.own.get(key).await
    }

    async fn recall(&self, q: &RecallQuery) -> Result<Vec<MemoryEntry>, MemoryError> {
        let mut rows = self.own.recall(q).await?;
        for peer in self.visible_peers() {
            for mut r in peer.recall(q).await? {
                r.content = format!("[{}] {}", peer.alias(), r.content);
                rows.push(r);
            }
        }
        rows.sort_by(|a, b| {
            b.score
                .unwrap_or(0.0)
                .total_cmp(&a.score.unwrap_or(0.0))
                .then(b.updated_at.cmp(&a.updated_at))
        });
        rows.truncate(q.limit);
        Ok(rows)
    }

    async fn list(&self, q: &ListQuery) -> Result<Page, MemoryError> {
        self.own.list(q).await
    }

    async fn forget(&self, key: &str) -> Result<bool, MemoryError> {
        self.own.forget(key).await
    }

    async fn count(&self) -> Result<u64, MemoryError> {
        self.own.count().await
    }

    async fn categories(&self) -> Result<Vec<String>, MemoryError> {
        self.own.categories().await
    }
}
