//! The memory a turn may reach (rules §5): a top-level turn reads its own store plus its
//! `read_memory_from` grants and writes its own store; a SubAgent reads only the intersection of
//! its parent's reach and the target's own allowlist (categories exact), and writes a store only
//! when the parent could write it — which, memory grants being read-only, means only when the
//! child runs as the parent itself. A child for another agent therefore has a read-only memory:
//! its `memory_store` and `memory_forget` calls are refused before anything runs.

use async_trait::async_trait;
use std::sync::Arc;
use warren_memory::{
    check_grants, resolve_grants, AgentScopedMarkdownMemory, AgentScopedMemory, GrantSpec,
    ListQuery, Memory, MemoryEntry, MemoryError, MemoryHandle, MemoryStores, NewMemory, Page,
    RecallQuery, RecallScope, ScopeEntry, StoreReceipt, SystemClock,
};
use warren_types::{Config, MemoryBackendKind};

/// What memory one turn may read and which store it may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryReach {
    /// Readable agents with their categories (`None` = all), by alias.
    pub readable: Vec<GrantSpec>,
    /// The alias whose store the turn writes, or `None` for a read-only memory.
    pub writable: Option<String>,
}

impl MemoryReach {
    /// The reach of a top-level turn of `alias`: its own allowlist, its own store.
    pub fn own(config: &Config, alias: &str) -> Result<Self, MemoryError> {
        Ok(MemoryReach {
            readable: resolve_grants(config, alias)?,
            writable: Some(alias.to_string()),
        })
    }

    /// The reach of a SubAgent for `target` started under `self`: the intersection of both
    /// allowlists (per agent, categories intersected exactly), and the target's store only
    /// when the parent may already write it.
    pub fn for_child(&self, config: &Config, target: &str) -> Result<Self, MemoryError> {
        let wanted = resolve_grants(config, target)?;
        let readable = wanted
            .into_iter()
            .filter_map(|g| {
                let mine = self.readable.iter().find(|p| p.alias == g.alias)?;
                let categories = match (&mine.categories, g.categories) {
                    (None, c) => c,
                    (Some(p), None) => Some(p.clone()),
                    (Some(p), Some(c)) => Some(c.into_iter().filter(|x| p.contains(x)).collect()),
                };
                Some(GrantSpec {
                    alias: g.alias,
                    categories,
                })
            })
            .collect();
        Ok(MemoryReach {
            readable,
            writable: self.writable.clone().filter(|w| w == target),
        })
    }

    /// The categories of `alias` this reach reads: `Some(None)` all, `None` nothing.
    fn categories_of(&self, alias: &str) -> Option<Option<Vec<String>>> {
        self.readable
            .iter()
            .find(|g| g.alias == alias)
            .map(|g| g.categories.clone())
    }

    /// Whether a row may be shown under this reach.
    fn allows(&self, row: &MemoryEntry) -> bool {
        match self.categories_of(&row.agent) {
            Some(None) => true,
            Some(Some(list)) => list.iter().any(|c| c == &row.category),
            None => false,
        }
    }
}

/// The memory handle of a turn of `alias` under `reach`. A full own reach gets the factory's
/// handle unchanged; anything narrower gets a handle that reads only the reach and writes only
/// when the reach says so.
pub async fn handle_within(
    stores: &MemoryStores,
    config: &Config,
    alias: &str,
    reach: &MemoryReach,
) -> MemoryHandle {
    let full = MemoryReach::own(config, alias);
    if full.as_ref().is_ok_and(|f| f == reach) {
        return stores.handle_or_unavailable(config, alias).await;
    }
    match narrowed(stores, config, alias, reach).await {
        Ok(inner) => MemoryHandle {
            memory: Arc::new(ReachMemory {
                inner,
                alias: alias.to_string(),
                reach: reach.clone(),
            }),
            unavailable: None,
        },
        Err(e) => MemoryHandle::unavailable(config, alias, e),
    }
}

/// A backend handle whose recall scope is exactly the reach (the bound agent first, with no
/// category when the reach does not include it).
async fn narrowed(
    stores: &MemoryStores,
    config: &Config,
    alias: &str,
    reach: &MemoryReach,
) -> Result<Arc<dyn Memory>, MemoryError> {
    let backend = check_grants(config, alias)?;
    if backend == MemoryBackendKind::Markdown {
        let own = stores.markdown_store(config, alias);
        let peers: Vec<_> = reach
            .readable
            .iter()
            .filter(|g| g.alias != alias)
            .map(|g| stores.markdown_store(config, &g.alias))
            .collect();
        let allowed = peers.iter().map(|p| p.alias().to_string()).collect();
        return Ok(Arc::new(AgentScopedMarkdownMemory::new(
            own,
            peers,
            allowed,
            Arc::new(SystemClock),
        )));
    }
    let store = stores.shared_store(config, backend).await?;
    let mut entries = vec![ScopeEntry {
        agent: store.ensure_agent(alias).await?,
        categories: reach.categories_of(alias).unwrap_or(Some(Vec::new())),
    }];
    let peers: Vec<GrantSpec> = reach
        .readable
        .iter()
        .filter(|g| g.alias != alias)
        .cloned()
        .collect();
    for g in peers {
        entries.push(ScopeEntry {
            agent: store.ensure_agent(&g.alias).await?,
            categories: g.categories,
        });
    }
    let mut handle = AgentScopedMemory::new(store, RecallScope { entries }, Arc::new(SystemClock));
    let sql = matches!(
        backend,
        MemoryBackendKind::Sqlite | MemoryBackendKind::Postgres | MemoryBackendKind::Lucid
    );
    if sql && config.memory.embeddings.provider.is_some() {
        handle = handle.with_embedder(stores.embedder(config)?);
    }
    Ok(Arc::new(handle))
}

/// A handle narrowed to a reach: every row it returns passes the reach (a second guard after
/// the store's own scoped query), and writes fail unless the reach names the bound store.
struct ReachMemory {
    inner: Arc<dyn Memory>,
    alias: String,
    reach: MemoryReach,
}

impl ReachMemory {
    fn ensure_writable(&self) -> Result<(), MemoryError> {
        if self.reach.writable.as_deref() == Some(self.alias.as_str()) {
            return Ok(());
        }
        Err(MemoryError::InvalidInput {
            field: "agent",
            reason: format!(
                "the memory of `{}` is read-only in this SubAgent: its parent cannot write it",
                self.alias
            ),
        })
    }
}

#[async_trait]
impl Memory for ReachMemory {
    fn agent(&self) -> &str {
        &self.alias
    }

    fn backend(&self) -> MemoryBackendKind {
        self.inner.backend()
    }

    async fn store(&self, new: NewMemory) -> Result<StoreReceipt, MemoryError> {
        self.ensure_writable()?;
        self.inner.store(new).await
    }

    async fn store_batch(&self, rows: Vec<NewMemory>) -> Result<Vec<StoreReceipt>, MemoryError> {
        self.ensure_writable()?;
        self.inner.store_batch(rows).await
    }

    async fn get(&self, key: &str) -> Result<Option<MemoryEntry>, MemoryError> {
        Ok(self.inner.get(key).await?.filter(|r| self.reach.allows(r)))
    }

    async fn recall(&self, q: &RecallQuery) -> Result<Vec<MemoryEntry>, MemoryError> {
        // Markdown cannot narrow the bound agent's own rows in its query: over-fetch, filter,
        // then cut to the limit (the SQL stores already filtered inside theirs).
        let wide = match self.inner.backend() {
            MemoryBackendKind::Markdown => RecallQuery {
                limit: q.limit.saturating_mul(4).max(100),
                ..q.clone()
            },
            _ => q.clone(),
        };
        let mut rows: Vec<_> = self
            .inner
            .recall(&wide)
            .await?
            .into_iter()
            .filter(|r| self.reach.allows(r))
            .collect();
        rows.truncate(q.limit);
        Ok(rows)
    }

    async fn list(&self, q: &ListQuery) -> Result<Page, MemoryError> {
        match self.reach.categories_of(&self.alias) {
            Some(None) => self.inner.list(q).await,
            Some(Some(list)) => {
                let all = self
                    .inner
                    .list(&ListQuery {
                        offset: 0,
                        limit: None,
                        ..q.clone()
                    })
                    .await?;
                let rows: Vec<_> = all
                    .entries
                    .into_iter()
                    .filter(|r| list.contains(&r.category))
                    .collect();
                let total = rows.len() as u64;
                let start = usize::try_from(q.offset).unwrap_or(usize::MAX);
                let take = q
                    .limit
                    .map_or(usize::MAX, |l| usize::try_from(l).unwrap_or(usize::MAX));
                let page = rows.into_iter().skip(start).take(take).collect();
                Ok(Page::new(page, total, q))
            }
            None => Ok(Page::new(Vec::new(), 0, q)),
        }
    }

    async fn forget(&self, key: &str) -> Result<bool, MemoryError> {
        self.ensure_writable()?;
        self.inner.forget(key).await
    }

    async fn count(&self) -> Result<u64, MemoryError> {
        match self.reach.categories_of(&self.alias) {
            Some(None) => self.inner.count().await,
            Some(Some(_)) => Ok(self.list(&ListQuery::default()).await?.total),
            None => Ok(0),
        }
    }

    async fn categories(&self) -> Result<Vec<String>, MemoryError> {
        match self.reach.categories_of(&self.alias) {
            Some(None) => self.inner.categories().await,
            Some(Some(list)) => Ok(self
                .inner
                .categories()
                .await?
                .into_iter()
                .filter(|c| list.contains(c))
                .collect()),
            None => Ok(Vec::new()),
        }
    }
}
