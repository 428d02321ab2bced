//! `AgentScopedMemory`: the handle every agent on a shared store holds. It stamps the bound
//! agent's UUID on every store, runs every recall under the resolved allowlist, and only ever
//! writes or deletes the bound agent's rows.

use std::sync::Arc;

use async_trait::async_trait;
use warren_types::MemoryBackendKind;

use crate::embed::Embedder;
use crate::error::MemoryError;
use crate::grants::RecallScope;
use crate::traits::{Memory, MemoryStore};
use crate::types::{
    AgentRef, Clock, ListQuery, MemoryEntry, NewMemory, Page, RecallQuery, StoreReceipt,
};

/// A per-agent handle over a shared [`MemoryStore`].
pub struct AgentScopedMemory {
    store: Arc<dyn MemoryStore>,
    me: AgentRef,
    scope: RecallScope,
    clock: Arc<dyn Clock>,
    embedder: Option<Arc<dyn Embedder>>,
}

impl AgentScopedMemory {
    /// Binds `store` to the agent first in `scope` (the bound agent always comes first).
    pub fn new(store: Arc<dyn MemoryStore>, scope: RecallScope, clock: Arc<dyn Clock>) -> Self {
        let me = scope
            .entries
            .first()
            .map(|e| e.agent.clone())
            .unwrap_or_else(|| AgentRef {
                id: uuid::Uuid::nil(),
                alias: String::new(),
            });
        AgentScopedMemory {
            store,
            me,
            scope,
            clock,
            embedder: None,
        }
    }

    /// Turns on hybrid recall (keyword rank blended with vector similarity).
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// The bound agent.
    pub fn agent_ref(&self) -> &AgentRef {
        &self.me
    }

    /// The allowlist recalls run under.
    pub fn scope(&self) -> &RecallScope {
        &self.scope
    }

    /// The shared store behind the handle.
    pub fn store(&self) -> &Arc<dyn MemoryStore> {
        &self.store
    }

    fn check_bound(&self) -> Result<(), MemoryError> {
        if self.me.id.is_nil() {
            return Err(MemoryError::InvalidInput {
                field: "scope",
                reason: "a scoped handle needs its own agent first in the allowlist".into(),
            });
        }
        Ok(())
    }
}

#[async_trait]
impl Memory for AgentScopedMemory {
    fn agent(&self) -> &str {
        &self.me.alias
    }

    fn backend(&self) -> MemoryBackendKind {
        self.store.kind()
    }

    async fn store(&self, new: NewMemory) -> Result<StoreReceipt, MemoryError> {
        let mut out = self.store_batch(vec![new]).await?;
        out.pop().ok_or_else(|| MemoryError::Backend {
            backend: self.store.kind().as_str(),
            location: self.store.location(),
            operation: "store",
            reason: "the store returned no row".into(),
        })
    }

    async fn store_batch(&self, rows: Vec<NewMemory>) -> Result<Vec<StoreReceipt>, MemoryError> {
        self.check_bound()?;
        self.store
            .store_with_agent(&self.me, &rows, self.clock.now())
            .await
    }

    async fn get(&self, key: &str) -> Result<Option<MemoryEntry>, MemoryError> {
        self.check_bound()?;
        self.store.get_for_agent(&self.me, key).await
    }

    async fn recall(&self, q: &RecallQuery) -> Result<Vec<MemoryEntry>, MemoryError> {
        self.check_bound()?;
        let rows = match &self.embedder {
            Some(e) if !crate::text::query_terms(&q.query).is_empty() => {
                crate::hybrid::recall(&*self.store, &**e, &self.scope, q).await?
            }
            _ => self.store.recall_for_agents(&self.scope, q).await?,
        };
        // The store filtered inside its query; this check only guards against a faulty backend.
        Ok(rows.into_iter().filter(|r| self.scope.allows(r)).collect())
    }

    async fn list(&self, q: &ListQuery) -> Result<Page, MemoryError> {
        self.check_bound()?;
        self.store.list_for_agent(&self.me, q).await
    }

    async fn forget(&self, key: &str) -> Result<bool, MemoryError> {
        self.check_bound()?;
        self.store.forget_for_agent(&self.me, key).await
    }

    async fn count(&self) -> Result<u64, MemoryError> {
        self.check_bound()?;
        self.store.count_for_agent(&self.me).await
    }

    async fn categories(&self) -> Result<Vec<String>, MemoryError> {
        self.check_bound()?;
        self.store.categories_for_agent(&self.me).await
    }
}
