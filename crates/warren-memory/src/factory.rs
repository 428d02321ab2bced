//! The factory (rules §7): `MemoryStores` is the registry the runtime holds. It opens each
//! shared store once (one pool per store, shared by every agent on it), one Markdown store per
//! workspace, and hands out per-agent handles and admin views.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex as StdMutex};

use futures::stream::{self, BoxStream, StreamExt};
use uuid::Uuid;
use warren_config::InstallLayout;
use warren_types::{Config, MemoryBackendKind};

use crate::embed::{Embedder, LocalEmbedder, DEFAULT_LOCAL_DIMENSIONS};
use crate::error::MemoryError;
use crate::export::export_agent;
use crate::grants::{check_grants, resolve_grants, RecallScope, ScopeEntry};
use crate::lucid::LucidStore;
use crate::markdown::{AgentScopedMarkdownMemory, MarkdownStore};
use crate::none::NoneStore;
use crate::postgres::PostgresStore;
use crate::qdrant::QdrantStore;
use crate::scoped::AgentScopedMemory;
use crate::sqlite::SqliteStore;
use crate::traits::{Memory, MemoryStore};
use crate::types::{Clock, ImportReport, MemoryEntry, SystemClock};
use crate::unavailable::UnavailableMemory;

/// Default Postgres schema.
pub const DEFAULT_PG_SCHEMA: &str = "warren";
/// Default Qdrant collection.
pub const DEFAULT_QDRANT_COLLECTION: &str = "warren_memory";

/// Looks up an environment variable's value (the binary passes the process environment in).
pub type EnvLookup = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// The registry of open memory stores of one install.
pub struct MemoryStores {
    layout: InstallLayout,
    clock: Arc<dyn Clock>,
    embedder: Option<Arc<dyn Embedder>>,
    env: EnvLookup,
    shared: tokio::sync::Mutex<HashMap<String, Arc<dyn MemoryStore>>>,
    sqlite: tokio::sync::Mutex<HashMap<PathBuf, Arc<SqliteStore>>>,
    /// Keyed by alias and workspace: a store is labelled with its alias, so a renamed agent
    /// whose workspace stays put gets a store of its own name, never the old one.
    markdown: StdMutex<HashMap<(String, PathBuf), Arc<MarkdownStore>>>,
}

/// A handle plus, when the store could not be opened, the reason memory is unavailable.
pub struct MemoryHandle {
    /// The handle (an `UnavailableMemory` when `unavailable` is set).
    pub memory: Arc<dyn Memory>,
    /// Why memory is unavailable, if it is.
    pub unavailable: Option<MemoryError>,
}

impl MemoryHandle {
    /// The handle of an agent whose store could not be opened: an `UnavailableMemory` that
    /// answers every call with `e`, and `e` for the caller to report (logged here).
    pub fn unavailable(config: &Config, alias: &str, e: MemoryError) -> Self {
        tracing::warn!(agent = alias, "memory unavailable: {e}");
        let backend = config
            .effective_memory_backend(alias)
            .unwrap_or(config.memory.backend);
        MemoryHandle {
            memory: Arc::new(UnavailableMemory::new(alias, backend, e.clone())),
            unavailable: Some(e),
        }
    }
}

impl MemoryStores {
    /// A registry for the install at `layout`, with the system clock, the config's embedder
    /// and no environment.
    pub fn new(layout: InstallLayout) -> Self {
        MemoryStores {
            layout,
            clock: Arc::new(SystemClock),
            embedder: None,
            env: Arc::new(|_| None),
            shared: tokio::sync::Mutex::new(HashMap::new()),
            sqlite: tokio::sync::Mutex::new(HashMap::new()),
            markdown: StdMutex::new(HashMap::new()),
        }
    }

    /// Uses `clock` for every timestamp.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Uses `embedder` instead of the one `[memory.embeddings]` names.
    pub fn with_embedder(mut self, embedder: Arc<dyn Embedder>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Resolves `api_key_env`-style settings through `env`.
    pub fn with_env(mut self, env: EnvLookup) -> Self {
        self.env = env;
        self
    }

    /// The install layout.
    pub fn layout(&self) -> &InstallLayout {
        &self.layout
    }

    /// The embedder for Qdrant: the injected one, else `[memory.embeddings]` (`local` default).
    pub fn embedder(&self, config: &Config) -> Result<Arc<dyn Embedder>, MemoryError> {
        if let Some(e) = &self.embedder {
            return Ok(e.clone());
        }
        let dims = config
            .memory
            .embeddings
            .dimensions
            .map_or(DEFAULT_LOCAL_DIMENSIONS, |d| d as usize);
        match config.memory.embeddings.provider.as_deref() {
            None | Some("local") => Ok(Arc::new(LocalEmbedder::new(dims))),
            Some(other) => Err(MemoryError::Config {
                backend: "embeddings",
                reason: format!(
                    "provider `{other}` needs an embedder supplied by the runtime; `local` is built in"
                ),
            }),
        }
    }

    /// The SQLite file of the `sqlite` and `lucid` backends under `config`.
    pub fn sqlite_path(&self, config: &Config) -> PathBuf {
        self.layout
            .memory_sqlite(config.memory.sqlite.path.as_deref())
    }

    async fn sqlite_store(&self, config: &Config) -> Result<Arc<SqliteStore>, MemoryError> {
        let path = self.sqlite_path(config);
        let mut map = self.sqlite.lock().await;
        if let Some(s) = map.get(&path) {
            return Ok(s.clone());
        }
        let s = Arc::new(SqliteStore::open(&path).await?);
        map.insert(path, s.clone());
        Ok(s)
    }

    /// The shared store of a backend (opened on first use, then reused by every agent).
    pub async fn shared_store(
        &self,
        config: &Config,
        kind: MemoryBackendKind,
    ) -> Result<Arc<dyn MemoryStore>, MemoryError> {
        let m = &config.memory;
        let key = match kind {
            MemoryBackendKind::Sqlite => format!("sqlite|{}", self.sqlite_path(config).display()),
            MemoryBackendKind::Lucid => format!(
                "lucid|{}|{}",
                self.sqlite_path(config).display(),
                m.lucid.command.as_deref().unwrap_or("")
            ),
            MemoryBackendKind::Postgres => format!(
                "postgres|{}|{}",
                m.postgres.url.as_deref().unwrap_or(""),
                m.postgres.schema.as_deref().unwrap_or(DEFAULT_PG_SCHEMA)
            ),
            MemoryBackendKind::Qdrant => format!(
                "qdrant|{}|{}",
                m.qdrant.url.as_deref().unwrap_or(""),
                m.qdrant
                    .collection
                    .as_deref()
                    .unwrap_or(DEFAULT_QDRANT_COLLECTION)
            ),
            MemoryBackendKind::None => "none".into(),
            MemoryBackendKind::Markdown => {
                return Err(MemoryError::Config {
                    backend: "markdown",
                    reason: "the markdown backend keeps one store per workspace, not a shared one"
                        .into(),
                })
            }
        };
        let mut shared = self.shared.lock().await;
        if let Some(s) = shared.get(&key) {
            return Ok(s.clone());
        }
        let missing = |backend: &'static str, what: &str| MemoryError::Config {
            backend,
            reason: format!("`{what}` is required for the {backend} backend"),
        };
        let store: Arc<dyn MemoryStore> = match kind {
            MemoryBackendKind::Sqlite => self.sqlite_store(config).await?,
            MemoryBackendKind::Lucid => {
                let cmd = m
                    .lucid
                    .command
                    .as_deref()
                    .ok_or_else(|| missing("lucid", "memory.lucid.command"))?;
                Arc::new(LucidStore::new(self.sqlite_store(config).await?, cmd)?)
            }
            MemoryBackendKind::Postgres => {
                let url = m
                    .postgres
                    .url
                    .as_deref()
                    .ok_or_else(|| missing("postgres", "memory.postgres.url"))?;
                let schema = m.postgres.schema.as_deref().unwrap_or(DEFAULT_PG_SCHEMA);
                Arc::new(PostgresStore::open(url, schema).await?)
            }
            MemoryBackendKind::Qdrant => {
                let url = m
                    .qdrant
                    .url
                    .as_deref()
                    .ok_or_else(|| missing("qdrant", "memory.qdrant.url"))?;
                let collection = m
                    .qdrant
                    .collection
                    .as_deref()
                    .unwrap_or(DEFAULT_QDRANT_COLLECTION);
                let api_key = match m.qdrant.api_key_env.as_deref() {
                    None => None,
                    Some(var) => Some((self.env)(var).ok_or_else(|| MemoryError::Config {
                        backend: "qdrant",
                        reason: format!("api_key_env names `{var}`, which is not set"),
                    })?),
                };
                Arc::new(QdrantStore::open(url, collection, api_key, self.embedder(config)?).await?)
            }
            MemoryBackendKind::None | MemoryBackendKind::Markdown => Arc::new(NoneStore),
        };
        shared.insert(key, store.clone());
        Ok(store)
    }

    /// Closes every open shared store (graceful shutdown of the runtime).
    pub async fn close(&self) {
        let shared: Vec<_> = self.shared.lock().await.drain().map(|(_, s)| s).collect();
        for s in shared {
            s.close().await;
        }
        let sqlite: Vec<_> = self.sqlite.lock().await.drain().map(|(_, s)| s).collect();
        for s in sqlite {
            s.close().await;
        }
    }

    /// The Markdown store of an agent's workspace (one per workspace path).
    pub fn markdown_store(&self, config: &Config, alias: &str) -> Arc<MarkdownStore> {
        let custom = config
            .agents
            .get(alias)
            .and_then(|a| a.workspace.path.as_deref());
        self.markdown_store_at(alias, &self.layout.workspace_for(alias, custom))
    }

    /// The Markdown store at an explicit workspace path.
    pub fn markdown_store_at(&self, alias: &str, workspace: &Path) -> Arc<MarkdownStore> {
        let mut map = match self.markdown.lock() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        map.entry((alias.to_string(), workspace.to_path_buf()))
            .or_insert_with(|| Arc::new(MarkdownStore::new(alias, workspace)))
            .clone()
    }

    /// The memory handle of `alias` (rules §7): grants checked, scope resolved, store shared.
    pub async fn handle_for(
        &self,
        config: &Config,
        alias: &str,
    ) -> Result<Arc<dyn Memory>, MemoryError> {
        let backend = check_grants(config, alias)?;
        let grants = resolve_grants(config, alias)?;
        if backend == MemoryBackendKind::Markdown {
            let own = self.markdown_store(config, alias);
            let peers = grants[1..]
                .iter()
                .map(|g| self.markdown_store(config, &g.alias))
                .collect();
            let allowed = grants[1..].iter().map(|g| g.alias.clone()).collect();
            return Ok(Arc::new(AgentScopedMarkdownMemory::new(
                own,
                peers,
                allowed,
                self.clock.clone(),
            )));
        }
        let store = self.shared_store(config, backend).await?;
        let mut entries = Vec::with_capacity(grants.len());
        for g in grants {
            entries.push(ScopeEntry {
                agent: store.ensure_agent(&g.alias).await?,
                categories: g.categories,
            });
        }
        let mut handle = AgentScopedMemory::new(store, RecallScope { entries }, self.clock.clone());
        // Hybrid recall on the SQL stores when embeddings are configured (Qdrant is vector
        // search already; `none` has nothing to rank).
        let sql = matches!(
            backend,
            MemoryBackendKind::Sqlite | MemoryBackendKind::Postgres | MemoryBackendKind::Lucid
        );
        if sql && (self.embedder.is_some() || config.memory.embeddings.provider.is_some()) {
            handle = handle.with_embedder(self.embedder(config)?);
        }
        Ok(Arc::new(handle))
    }

    /// Like [`MemoryStores::handle_for`], but never fails: when the store cannot be opened the
    /// agent gets an `UnavailableMemory` and the caller gets the reason to report.
    pub async fn handle_or_unavailable(&self, config: &Config, alias: &str) -> MemoryHandle {
        match self.handle_for(config, alias).await {
            Ok(memory) => MemoryHandle {
                memory,
                unavailable: None,
            },
            Err(e) => MemoryHandle::unavailable(config, alias, e),
        }
    }

    /// The admin view of an agent's memory as the config describes it.
    pub async fn admin_for(
        &self,
        config: &Config,
        alias: &str,
    ) -> Result<AgentMemoryAdmin, MemoryError> {
        let kind =
            config
                .effective_memory_backend(alias)
                .ok_or_else(|| MemoryError::UnknownAgent {
                    alias: alias.to_string(),
                })?;
        if kind == MemoryBackendKind::Markdown {
            return Ok(AgentMemoryAdmin::Markdown(
                self.markdown_store(config, alias),
            ));
        }
        self.admin_for_backend(config, kind, alias).await
    }

    /// The admin view of `alias` on a shared backend, whether or not the config still (or
    /// already) lists the agent: the lifecycle uses it for rename, delete and restore.
    pub async fn admin_for_backend(
        &self,
        config: &Config,
        kind: MemoryBackendKind,
        alias: &str,
    ) -> Result<AgentMemoryAdmin, MemoryError> {
        Ok(AgentMemoryAdmin::Shared {
            store: self.shared_store(config, kind).await?,
            alias: alias.to_string(),
        })
    }
}

/// Builds one agent's handle with a registry of its own (convenient for one-shot commands; a
/// long-running process keeps one [`MemoryStores`] and calls [`MemoryStores::handle_for`]).
pub async fn create_memory_for_agent(
    config: &Config,
    layout: &InstallLayout,
    alias: &str,
) -> Result<Arc<dyn Memory>, MemoryError> {
    MemoryStores::new(layout.clone())
        .handle_for(config, alias)
        .await
}

/// Lifecycle operations on one agent's memory, whatever the backend.
pub enum AgentMemoryAdmin {
    /// An agent on a shared store.
    Shared {
        /// The store.
        store: Arc<dyn MemoryStore>,
        /// The agent's alias in the store.
        alias: String,
    },
    /// An agent on the Markdown backend (files in its workspace).
    Markdown(Arc<MarkdownStore>),
}

impl AgentMemoryAdmin {
    /// The agent's UUID in the store, when it has one.
    pub async fn agent_id(&self) -> Result<Option<Uuid>, MemoryError> {
        match self {
            AgentMemoryAdmin::Shared { store, alias } => store.agent_id(alias).await,
            AgentMemoryAdmin::Markdown(s) => {
                Ok(Some(crate::markdown::markdown_agent_id(s.alias())))
            }
        }
    }

    /// Number of the agent's rows.
    pub async fn count(&self) -> Result<u64, MemoryError> {
        match self {
            AgentMemoryAdmin::Shared { store, alias } => match store.lookup_agent(alias).await? {
                Some(a) => store.count_for_agent(&a).await,
                None => Ok(0),
            },
            AgentMemoryAdmin::Markdown(s) => s.count().await,
        }
    }

    /// Every row of the agent, streamed page by page.
    pub async fn export(
        &self,
    ) -> Result<BoxStream<'static, Result<MemoryEntry, MemoryError>>, MemoryError> {
        match self {
            AgentMemoryAdmin::Shared { store, alias } => match store.lookup_agent(alias).await? {
                Some(a) => Ok(export_agent(store.clone(), a.id).boxed()),
                None => Ok(stream::empty().boxed()),
            },
            AgentMemoryAdmin::Markdown(s) => {
                Ok(stream::iter(s.all().await?.into_iter().map(Ok)).boxed())
            }
        }
    }

    /// Re-points the alias (O(1) on SQL stores). Markdown files move with the workspace, so
    /// there is nothing to do there; returns whether the store changed.
    pub async fn rename_to(&self, new: &str) -> Result<bool, MemoryError> {
        match self {
            AgentMemoryAdmin::Shared { store, alias } => store.rename_agent(alias, new).await,
            AgentMemoryAdmin::Markdown(_) => Ok(false),
        }
    }

    /// Deletes every row of the agent; returns how many were removed.
    pub async fn purge(&self) -> Result<u64, MemoryError> {
        match self {
            AgentMemoryAdmin::Shared { store, alias } => store.purge_agent(alias).await,
            AgentMemoryAdmin::Markdown(s) => s.purge().await,
        }
    }

    /// Restores exported rows under this alias, keeping `agent_id` when it is free.
    pub async fn import(
        &self,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        match self {
            AgentMemoryAdmin::Shared { store, alias } => {
                store.import_agent(alias, agent_id, rows).await
            }
            AgentMemoryAdmin::Markdown(s) => {
                let (imported, skipped) = s.import(rows).await?;
                Ok(ImportReport {
                    agent_id: crate::markdown::markdown_agent_id(s.alias()),
                    kept_agent_id: false,
                    imported,
                    skipped,
                })
            }
        }
    }
}
