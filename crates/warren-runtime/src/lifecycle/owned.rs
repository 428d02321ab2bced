//! Owned state (rules §8): everything keyed by an agent. Each kind is an [`OwnedState`]
//! participant that the lifecycle drives the same way: count, rename, export, purge, park (keep
//! data whose export failed away from the alias) and restore. Memory, sessions (with
//! transcripts), usage and receipts are built in; cron jobs and ACP sessions of the runtime plug
//! in through [`super::Lifecycle::with_participant`].

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use sqlx::SqlitePool;
use std::path::Path;
use std::sync::Arc;
use uuid::Uuid;
use warren_memory::{AgentMemoryAdmin, MemoryEntry, MemoryStores};
use warren_types::{Config, MemoryBackendKind};

use warren_state::owned_state as db;

/// What a participant is told about the agent it acts on.
pub struct AgentState<'a> {
    /// The alias the data is recorded under (the old alias during a rename).
    pub alias: &'a str,
    /// The current config (install-wide store settings).
    pub config: &'a Config,
    /// The agent's effective memory backend.
    pub memory_backend: MemoryBackendKind,
    /// The agent's workspace directory.
    pub workspace: &'a Path,
    /// The agent's id in `sessions.db`, when it has one.
    pub sessions_agent_id: Option<&'a str>,
    /// Ids of the agent's `[cron.<id>]` jobs (a delete has already taken them out of
    /// `config`); their scheduler cursors are owned state.
    pub cron_jobs: &'a [String],
}

/// Why a participant step failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {operation} failed: {reason}")]
pub struct OwnedStateError {
    /// The participant kind.
    pub kind: String,
    /// The operation.
    pub operation: &'static str,
    /// What went wrong.
    pub reason: String,
}

impl OwnedStateError {
    /// Builds an error of `kind` during `operation`.
    pub fn new(kind: &str, operation: &'static str, reason: impl ToString) -> Self {
        OwnedStateError {
            kind: kind.to_string(),
            operation,
            reason: reason.to_string(),
        }
    }
}

/// One kind of owned state. Every method must be idempotent: the journal may run it again
/// after a crash.
#[async_trait(?Send)]
pub trait OwnedState: Send + Sync {
    /// The kind, also the archive file name (`cascade/<kind>.json`).
    fn kind(&self) -> &'static str;
    /// Rows (or items) the agent owns.
    async fn count(&self, agent: &AgentState<'_>) -> Result<u64, OwnedStateError>;
    /// Things that must stop a delete (for example live ACP sessions), one line each.
    async fn blockers(&self, _agent: &AgentState<'_>) -> Result<Vec<String>, OwnedStateError> {
        Ok(Vec::new())
    }
    /// Re-points the agent's data from `agent.alias` to `new`.
    async fn rename(&self, agent: &AgentState<'_>, new: &str) -> Result<(), OwnedStateError>;
    /// The agent's data as a JSON document, and how many items it holds.
    async fn export(&self, agent: &AgentState<'_>) -> Result<(Vec<u8>, u64), OwnedStateError>;
    /// Deletes the agent's data (only called once the export is durable); returns the count.
    async fn purge(&self, agent: &AgentState<'_>) -> Result<u64, OwnedStateError>;
    /// What [`OwnedState::purge`] would return now. Journaled before the purge, so a rerun
    /// after a crash right after the purge (which then finds nothing) keeps the count.
    async fn purge_count(&self, agent: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        self.count(agent).await
    }
    /// Brings data back under `agent.alias`: from an export, and/or from what was parked under
    /// `tombstone`. Returns the items restored.
    async fn restore(
        &self,
        agent: &AgentState<'_>,
        export: Option<&[u8]>,
        tombstone: &str,
    ) -> Result<u64, OwnedStateError>;
}

fn encode<T: Serialize>(kind: &str, v: &T) -> Result<Vec<u8>, OwnedStateError> {
    serde_json::to_vec_pretty(v).map_err(|e| OwnedStateError::new(kind, "export", e))
}

fn decode<T: for<'de> Deserialize<'de>>(kind: &str, b: &[u8]) -> Result<T, OwnedStateError> {
    serde_json::from_slice(b).map_err(|e| OwnedStateError::new(kind, "restore", e))
}

/// `cascade/memory.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryExport {
    /// The agent's UUID in the store.
    pub agent_id: Option<Uuid>,
    /// The backend the rows came from.
    pub backend: MemoryBackendKind,
    /// Every row.
    pub rows: Vec<MemoryEntry>,
}

/// Memory rows, on whichever backend the agent uses.
pub struct MemoryState {
    stores: Arc<MemoryStores>,
}

impl MemoryState {
    /// The participant over the install's memory stores.
    pub fn new(stores: Arc<MemoryStores>) -> Self {
        MemoryState { stores }
    }

    async fn admin(
        &self,
        a: &AgentState<'_>,
        alias: &str,
    ) -> Result<AgentMemoryAdmin, OwnedStateError> {
        if a.memory_backend == MemoryBackendKind::Markdown {
            return Ok(AgentMemoryAdmin::Markdown(
                self.stores.markdown_store_at(alias, a.workspace),
            ));
        }
        self.stores
            .admin_for_backend(a.config, a.memory_backend, alias)
            .await
            .map_err(|e| OwnedStateError::new("memory", "open", e))
    }
}

#[async_trait(?Send)]
impl OwnedState for MemoryState {
    fn kind(&self) -> &'static str {
        "memory"
    }
    async fn count(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        if a.memory_backend == MemoryBackendKind::None {
            return Ok(0);
        }
        let admin = self.admin(a, a.alias).await?;
        admin
            .count()
            .await
            .map_err(|e| OwnedStateError::new("memory", "count", e))
    }
    async fn rename(&self, a: &AgentState<'_>, new: &str) -> Result<(), OwnedStateError> {
        if a.memory_backend == MemoryBackendKind::None {
            return Ok(());
        }
        let admin = self.admin(a, a.alias).await?;
        let err = |e| OwnedStateError::new("memory", "rename", e);
        if admin.agent_id().await.map_err(err)?.is_none() {
            // Nothing recorded under the old alias (never used, or already moved).
            return Ok(());
        }
        admin.rename_to(new).await.map(|_| ()).map_err(err)
    }
    async fn export(&self, a: &AgentState<'_>) -> Result<(Vec<u8>, u64), OwnedStateError> {
        use futures::StreamExt;
        let err = |e| OwnedStateError::new("memory", "export", e);
        let (agent_id, rows) = if a.memory_backend == MemoryBackendKind::None {
            (None, Vec::new())
        } else {
            let admin = self.admin(a, a.alias).await?;
            let id = admin.agent_id().await.map_err(err)?;
            let mut stream = admin.export().await.map_err(err)?;
            let mut rows = Vec::new();
            while let Some(r) = stream.next().await {
                rows.push(r.map_err(err)?);
            }
            (id, rows)
        };
        let n = rows.len() as u64;
        let doc = MemoryExport {
            agent_id,
            backend: a.memory_backend,
            rows,
        };
        Ok((encode("memory", &doc)?, n))
    }
    async fn purge(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        match a.memory_backend {
            // Markdown memory is files in the workspace: it goes to the archive with it.
            MemoryBackendKind::Markdown | MemoryBackendKind::None => Ok(0),
            _ => {
                let admin = self.admin(a, a.alias).await?;
                admin
                    .purge()
                    .await
                    .map_err(|e| OwnedStateError::new("memory", "purge", e))
            }
        }
    }
    async fn purge_count(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        match a.memory_backend {
            // Nothing is purged: the files go to the archive with the workspace.
            MemoryBackendKind::Markdown | MemoryBackendKind::None => Ok(0),
            _ => self.count(a).await,
        }
    }
    async fn restore(
        &self,
        a: &AgentState<'_>,
        export: Option<&[u8]>,
        tombstone: &str,
    ) -> Result<u64, OwnedStateError> {
        if a.memory_backend == MemoryBackendKind::None {
            return Ok(0);
        }
        let err = |e| OwnedStateError::new("memory", "restore", e);
        let mut n = 0;
        if a.memory_backend != MemoryBackendKind::Markdown {
            let parked = self.admin(a, tombstone).await?;
            if parked.agent_id().await.map_err(err)?.is_some() {
                n += parked.count().await.map_err(err)?;
                parked.rename_to(a.alias).await.map_err(err)?;
            }
        }
        let Some(bytes) = export else {
            return Ok(n);
        };
        let doc: MemoryExport = decode("memory", bytes)?;
        let admin = self.admin(a, a.alias).await?;
        if a.memory_backend == MemoryBackendKind::Markdown && admin.count().await.map_err(err)? > 0
        {
            // The files came back with the workspace.
            return Ok(doc.rows.len() as u64);
        }
        if doc.backend != a.memory_backend && !doc.rows.is_empty() {
            return Err(OwnedStateError::new(
                "memory",
                "restore",
                format!(
                    "the rows were exported from the {} backend but the agent now uses {}",
                    doc.backend.as_str(),
                    a.memory_backend.as_str()
                ),
            ));
        }
        let id = doc.agent_id.unwrap_or_else(Uuid::new_v4);
        let report = admin.import(id, &doc.rows).await.map_err(err)?;
        Ok(n + report.imported + report.skipped)
    }
}

/// Which `sessions.db` table group a [`SessionsDbState`] handles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionsDbKind {
    /// Chat, cron and ACP sessions with messages, turns and events.
    Sessions,
    /// The usage ledger.
    Usage,
    /// The receipt chain.
    Receipts,
}

/// Sessions, usage or receipts in `sessions.db`. All three hang off one agent id row, so the
/// rename (one alias update) is done by the `Sessions` participant alone.
pub struct SessionsDbState {
    pool: SqlitePool,
    which: SessionsDbKind,
}

impl SessionsDbState {
    /// A participant for one table group.
    pub fn new(pool: SqlitePool, which: SessionsDbKind) -> Self {
        SessionsDbState { pool, which }
    }

    fn err(&self, op: &'static str) -> impl Fn(warren_state::db::DbError) -> OwnedStateError + '_ {
        move |e| OwnedStateError::new(self.kind(), op, e)
    }
}

#[async_trait(?Send)]
impl OwnedState for SessionsDbState {
    fn kind(&self) -> &'static str {
        match self.which {
            SessionsDbKind::Sessions => "sessions",
            SessionsDbKind::Usage => "usage",
            SessionsDbKind::Receipts => "receipts",
        }
    }
    async fn count(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        let Some(id) = a.sessions_agent_id else {
            return Ok(0);
        };
        let (s, u, r) = db::counts(&self.pool, id)
            .await
            .map_err(self.err("count"))?;
        Ok(match self.which {
            SessionsDbKind::Sessions => s,
            SessionsDbKind::Usage => u,
            SessionsDbKind::Receipts => r,
        })
    }
    async fn rename(&self, a: &AgentState<'_>, new: &str) -> Result<(), OwnedStateError> {
        if self.which != SessionsDbKind::Sessions {
            return Ok(());
        }
        match db::rename_alias(&self.pool, a.alias, new)
            .await
            .map_err(self.err("rename"))?
        {
            db::AliasMove::Moved | db::AliasMove::Absent => Ok(()),
            db::AliasMove::Conflict => Err(OwnedStateError::new(
                "sessions",
                "rename",
                format!("`{new}` already owns sessions, usage or receipts under another id"),
            )),
        }
    }
    async fn export(&self, a: &AgentState<'_>) -> Result<(Vec<u8>, u64), OwnedStateError> {
        let id = a.sessions_agent_id.unwrap_or("");
        let e = self.err("export");
        match self.which {
            SessionsDbKind::Sessions => {
                let v = db::export_sessions(&self.pool, id).await.map_err(e)?;
                Ok((encode("sessions", &v)?, v.len() as u64))
            }
            SessionsDbKind::Usage => {
                let v = db::export_usage(&self.pool, id).await.map_err(e)?;
                Ok((encode("usage", &v)?, v.len() as u64))
            }
            SessionsDbKind::Receipts => {
                let v = db::export_receipts(&self.pool, id).await.map_err(e)?;
                let doc = serde_json::json!({ "agent_id": id, "chain": v });
                Ok((encode("receipts", &doc)?, v.receipts.len() as u64))
            }
        }
    }
    async fn purge(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        let Some(id) = a.sessions_agent_id else {
            return Ok(0);
        };
        let e = self.err("purge");
        match self.which {
            SessionsDbKind::Sessions => db::purge_sessions(&self.pool, id).await.map_err(e),
            SessionsDbKind::Usage => db::purge_usage(&self.pool, id).await.map_err(e),
            SessionsDbKind::Receipts => db::purge_receipts(&self.pool, id).await.map_err(e),
        }
    }
    async fn restore(
        &self,
        a: &AgentState<'_>,
        export: Option<&[u8]>,
        _tombstone: &str,
    ) -> Result<u64, OwnedStateError> {
        let (Some(id), Some(bytes)) = (a.sessions_agent_id, export) else {
            return Ok(0);
        };
        let e = self.err("restore");
        match self.which {
            SessionsDbKind::Sessions => {
                let v: Vec<db::SessionRecord> = decode("sessions", bytes)?;
                db::import_sessions(&self.pool, id, &v).await.map_err(e)
            }
            SessionsDbKind::Usage => {
                let v: Vec<db::UsageRecord> = decode("usage", bytes)?;
                db::import_usage(&self.pool, id, &v).await.map_err(e)
            }
            SessionsDbKind::Receipts => {
                #[derive(Deserialize)]
                struct Doc {
                    agent_id: String,
                    chain: db::ReceiptsRecord,
                }
                let doc: Doc = decode("receipts", bytes)?;
                if doc.chain.receipts.is_empty() {
                    return Ok(0);
                }
                if doc.agent_id != id {
                    return Err(OwnedStateError::new(
                        "receipts",
                        "restore",
                        format!(
                            "the chain is authenticated under agent id {} but the agent came back as {id}; the receipts stay in the archive",
                            doc.agent_id
                        ),
                    ));
                }
                db::import_receipts(&self.pool, id, &doc.chain)
                    .await
                    .map_err(e)
            }
        }
    }
}
