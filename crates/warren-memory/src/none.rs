//! The `none` backend: stores nothing, recalls nothing. It is still wrapped in
//! `AgentScopedMemory` so the runtime path is the same for every agent.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use uuid::Uuid;
use warren_types::MemoryBackendKind;

use crate::error::MemoryError;
use crate::grants::RecallScope;
use crate::traits::MemoryStore;
use crate::types::{
    AgentRef, ExportCursor, ImportReport, ListQuery, MemoryEntry, NewMemory, Page, RecallQuery,
    StoreReceipt,
};

/// A store that keeps nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoneStore;

/// The agent UUID a `none` store reports for an alias (stable, derived from the alias).
fn none_id(alias: &str) -> Uuid {
    Uuid::new_v5(
        &Uuid::NAMESPACE_OID,
        format!("warren-none:{alias}").as_bytes(),
    )
}

#[async_trait]
impl MemoryStore for NoneStore {
    fn kind(&self) -> MemoryBackendKind {
        MemoryBackendKind::None
    }
    fn location(&self) -> String {
        "nowhere".into()
    }
    async fn ensure_agent(&self, alias: &str) -> Result<AgentRef, MemoryError> {
        Ok(AgentRef {
            id: none_id(alias),
            alias: alias.to_string(),
        })
    }
    async fn agent_id(&self, alias: &str) -> Result<Option<Uuid>, MemoryError> {
        Ok(Some(none_id(alias)))
    }
    async fn write_rows(
        &self,
        agent: &AgentRef,
        rows: &[NewMemory],
        now: DateTime<Utc>,
    ) -> Result<Vec<StoreReceipt>, MemoryError> {
        Ok(rows
            .iter()
            .map(|r| StoreReceipt {
                entry: r.stored_as(agent, Uuid::new_v4(), now, now),
                warnings: vec!["memory backend is `none`: nothing was kept".into()],
            })
            .collect())
    }
    async fn get_for_agent(
        &self,
        _: &AgentRef,
        _: &str,
    ) -> Result<Option<MemoryEntry>, MemoryError> {
        Ok(None)
    }
    async fn recall_for_agents(
        &self,
        _: &RecallScope,
        _: &RecallQuery,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        Ok(Vec::new())
    }
    async fn list_for_agent(&self, _: &AgentRef, q: &ListQuery) -> Result<Page, MemoryError> {
        Ok(Page::new(Vec::new(), 0, q))
    }
    async fn forget_for_agent(&self, _: &AgentRef, _: &str) -> Result<bool, MemoryError> {
        Ok(false)
    }
    async fn count_for_agent(&self, _: &AgentRef) -> Result<u64, MemoryError> {
        Ok(0)
    }
    async fn categories_for_agent(&self, _: &AgentRef) -> Result<Vec<String>, MemoryError> {
        Ok(Vec::new())
    }
    async fn rename_agent(&self, _: &str, _: &str) -> Result<bool, MemoryError> {
        Ok(false)
    }
    async fn export_page(
        &self,
        _: Uuid,
        _: Option<&ExportCursor>,
        _: usize,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        Ok(Vec::new())
    }
    async fn purge_agent(&self, _: &str) -> Result<u64, MemoryError> {
        Ok(0)
    }
    async fn import_agent(
        &self,
        alias: &str,
        _: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        Ok(ImportReport {
            agent_id: none_id(alias),
            kept_agent_id: false,
            imported: 0,
            skipped: rows.len() as u64,
        })
    }
}
