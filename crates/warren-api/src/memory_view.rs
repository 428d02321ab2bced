//! The desktop Memory browser: an agent's own rows page by page, and what its grants expose
//! (its own categories and each granted peer with the categories the resolved allowlist lets
//! it read).

use crate::memory::{memory_error, MemoryItem};
use crate::Warren;
use serde::Serialize;
use std::future::Future;
use warren_memory::resolve_grants;
use warren_types::{ApiError, ErrorCode};

/// One page of an agent's own rows, newest first.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MemoryPage {
    /// The rows of this page.
    pub items: Vec<MemoryItem>,
    /// The agent's rows in total.
    pub total: u32,
    /// Offset of the next page, when there is one.
    pub next_offset: Option<u32>,
}

/// One entry of an agent's resolved memory allowlist.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MemoryGrantView {
    /// The agent whose rows are visible.
    pub agent: String,
    /// True for the agent itself (it always sees all of its own rows).
    pub own: bool,
    /// The categories visible; `null` means every category.
    pub categories: Option<Vec<String>>,
    /// For the agent itself: the categories its rows use now.
    pub present_categories: Vec<String>,
}

/// Runs a memory call to completion on this worker thread, letting the runtime move its other
/// tasks elsewhere. The memory stores' futures are not provably `Send`, which a Tauri
/// command's future must be; the desktop calls the `browse_*` functions, which hold no
/// future across an await. Needs the multi-threaded tokio runtime (Tauri's).
fn run_here<F: Future>(f: F) -> F::Output {
    let rt = tokio::runtime::Handle::current();
    tokio::task::block_in_place(|| rt.block_on(f))
}

fn clamp(n: u64) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl Warren {
    /// [`Warren::recall_memory`] for the desktop (`limit` at least 1).
    pub fn browse_recall(
        &self,
        agent: &str,
        query: &str,
        limit: u32,
    ) -> Result<Vec<MemoryItem>, ApiError> {
        if limit == 0 {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "the recall limit must be at least 1",
            ));
        }
        run_here(self.recall_memory(agent, query, limit as usize))
    }

    /// [`Warren::forget_memory`] for the desktop.
    pub fn browse_forget(
        &self,
        agent: &str,
        key: &str,
    ) -> Result<crate::ForgottenMemory, ApiError> {
        run_here(self.forget_memory(agent, key))
    }

    /// [`Warren::memory_page`] for the desktop.
    pub fn browse_page(
        &self,
        agent: &str,
        offset: u32,
        limit: u32,
    ) -> Result<MemoryPage, ApiError> {
        run_here(self.memory_page(agent, offset, limit))
    }

    /// [`Warren::memory_grants`] for the desktop.
    pub fn browse_grants(&self, agent: &str) -> Result<Vec<MemoryGrantView>, ApiError> {
        run_here(self.memory_grants(agent))
    }

    /// One page of `agent`'s own rows (`limit` at least 1).
    pub async fn memory_page(
        &self,
        agent: &str,
        offset: u32,
        limit: u32,
    ) -> Result<MemoryPage, ApiError> {
        if limit == 0 {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "the page size must be at least 1",
            ));
        }
        let page = self
            .memory_of(agent)
            .await?
            .list(&warren_memory::ListQuery {
                offset: offset.into(),
                limit: Some(limit.into()),
                ..Default::default()
            })
            .await
            .map_err(memory_error)?;
        Ok(MemoryPage {
            items: page.entries.into_iter().map(crate::memory::item).collect(),
            total: clamp(page.total),
            next_offset: page.next_offset.map(clamp),
        })
    }

    /// What `agent` may recall: itself with every category (and the categories it uses), then
    /// each granted peer with all or only the listed categories. Grants are not transitive.
    pub async fn memory_grants(&self, agent: &str) -> Result<Vec<MemoryGrantView>, ApiError> {
        let config = self.load()?.config;
        let grants = resolve_grants(&config, agent).map_err(memory_error)?;
        let present = self
            .memory_of(agent)
            .await?
            .categories()
            .await
            .map_err(memory_error)?;
        Ok(grants
            .into_iter()
            .map(|g| {
                let own = g.alias == agent;
                MemoryGrantView {
                    own,
                    present_categories: if own { present.clone() } else { Vec::new() },
                    agent: g.alias,
                    categories: g.categories,
                }
            })
            .collect())
    }
}
