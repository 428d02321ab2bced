//! `UnavailableMemory`: the handle an agent gets when its store cannot be opened (corrupted
//! SQLite file, Postgres or Qdrant down). Every call answers with the original error, so the
//! agent loop keeps running and reports memory as unavailable instead of failing to start.

use async_trait::async_trait;
use warren_types::MemoryBackendKind;

use crate::error::MemoryError;
use crate::traits::Memory;
use crate::types::{ListQuery, MemoryEntry, NewMemory, Page, RecallQuery, StoreReceipt};

/// A memory handle whose store could not be opened.
pub struct UnavailableMemory {
    alias: String,
    backend: MemoryBackendKind,
    error: MemoryError,
}

impl UnavailableMemory {
    /// A handle for `alias` that answers every call with `error`.
    pub fn new(alias: impl Into<String>, backend: MemoryBackendKind, error: MemoryError) -> Self {
        UnavailableMemory {
            alias: alias.into(),
            backend,
            error,
        }
    }

    /// Why memory is unavailable.
    pub fn error(&self) -> &MemoryError {
        &self.error
    }
}

#[async_trait]
impl Memory for UnavailableMemory {
    fn agent(&self) -> &str {
        &self.alias
    }
    fn backend(&self) -> MemoryBackendKind {
        self.backend
    }
    async fn store(&self, _: NewMemory) -> Result<StoreReceipt, MemoryError> {
        Err(self.error.clone())
    }
    async fn get(&self, _: &str) -> Result<Option<MemoryEntry>, MemoryError> {
        Err(self.error.clone())
    }
    async fn recall(&self, _: &RecallQuery) -> Result<Vec<MemoryEntry>, MemoryError> {
        Err(self.error.clone())
    }
    async fn list(&self, _: &ListQuery) -> Result<Page, MemoryError> {
        Err(self.error.clone())
    }
    async fn forget(&self, _: &str) -> Result<bool, MemoryError> {
        Err(self.error.clone())
    }
    async fn count(&self) -> Result<u64, MemoryError> {
        Err(self.error.clone())
    }
    async fn categories(&self) -> Result<Vec<String>, MemoryError> {
        Err(self.error.clone())
    }
}
