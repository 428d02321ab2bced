//! The Lucid backend: the SQLite store plus a mirror of each stored row to an external `lucid`
//! command. The local row is written first and always kept; a mirror failure becomes a warning
//! on the store receipt (and a log line), never an error. Recall is served locally.
//!
//! Mirror contract: the configured command (split on whitespace, no shell) is run with one
//! extra argument, `store`, and receives one JSON object on stdin:
//! `{"key", "content", "category", "session", "created_at", "updated_at"}` (no agent: the
//! mirror carries no agent scoping). Exit status 0 means mirrored.

use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use tokio::io::AsyncWriteExt;
use uuid::Uuid;
use warren_types::MemoryBackendKind;

use crate::error::MemoryError;
use crate::grants::RecallScope;
use crate::sqlite::SqliteStore;
use crate::traits::MemoryStore;
use crate::types::{
    format_ts, AgentRef, ExportCursor, ImportReport, ListQuery, MemoryEntry, NewMemory, Page,
    RecallQuery, StoreReceipt,
};

/// How long one mirror call may take.
pub const MIRROR_TIMEOUT: Duration = Duration::from_secs(10);

/// SQLite plus an external mirror command.
pub struct LucidStore {
    local: Arc<SqliteStore>,
    command: Vec<String>,
}

impl LucidStore {
    /// Wraps the SQLite store; `command` is `[memory.lucid] command`.
    pub fn new(local: Arc<SqliteStore>, command: &str) -> Result<Self, MemoryError> {
        let command: Vec<String> = command.split_whitespace().map(String::from).collect();
        if command.is_empty() {
            return Err(MemoryError::Config {
                backend: "lucid",
                reason: "command is empty".into(),
            });
        }
        Ok(LucidStore { local, command })
    }

    /// Sends one row to the mirror; `Err` carries a human sentence naming the command and key.
    pub async fn mirror(&self, e: &MemoryEntry) -> Result<(), String> {
        let cmd = self.command.join(" ");
        let fail = |why: String| format!("lucid mirror `{cmd}` failed for key `{}`: {why}", e.key);
        let body = serde_json::json!({
            "key": e.key,
            "content": e.content,
            "category": e.category,
            "session": e.session_id,
            "created_at": format_ts(e.created_at),
            "updated_at": format_ts(e.updated_at),
        })
        .to_string();
        let mut child = tokio::process::Command::new(&self.command[0])
            .args(&self.command[1..])
            .arg("store")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| fail(format!("cannot start: {err}")))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A mirror that exits without reading stdin is judged by its exit status below.
            let _ = stdin.write_all(body.as_bytes()).await;
        }
        let out = tokio::time::timeout(MIRROR_TIMEOUT, child.wait_with_output())
            .await
            .map_err(|_| fail(format!("no answer within {}s", MIRROR_TIMEOUT.as_secs())))?
            .map_err(|err| fail(err.to_string()))?;
        if out.status.success() {
            Ok(())
        } else {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let excerpt: String = stderr.trim().chars().take(300).collect();
            Err(fail(format!("{}: {excerpt}", out.status)))
        }
    }
}

#[async_trait]
impl MemoryStore for LucidStore {
    fn kind(&self) -> MemoryBackendKind {
        MemoryBackendKind::Lucid
    }
    fn location(&self) -> String {
        format!(
            "{} + mirror `{}`",
            self.local.location(),
            self.command.join(" ")
        )
    }
    async fn ensure_agent(&self, alias: &str) -> Result<AgentRef, MemoryError> {
        self.local.ensure_agent(alias).await
    }
    async fn agent_id(&self, alias: &str) -> Result<Option<Uuid>, MemoryError> {
        self.local.agent_id(alias).await
    }
    async fn write_rows(
        &self,
        agent: &AgentRef,
        rows: &[NewMemory],
        now: DateTime<Utc>,
    ) -> Result<Vec<StoreReceipt>, MemoryError> {
        let mut out = self.local.write_rows(agent, rows, now).await?;
        for receipt in &mut out {
            if let Err(w) = self.mirror(&receipt.entry).await {
                tracing::warn!(agent = %agent.alias, "{w}");
                receipt.warnings.push(w);
            }
        }
        Ok(out)
    }
    async fn get_for_agent(
        &self,
        agent: &AgentRef,
        key: &str,
    ) -> Result<Option<MemoryEntry>, MemoryError> {
        self.local.get_for_agent(agent, key).await
    }
    async fn recall_for_agents(
        &self,
        scope: &RecallScope,
        q: &RecallQuery,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        self.local.recall_for_agents(scope, q).await
    }
    async fn list_for_agent(&self, agent: &AgentRef, q: &ListQuery) -> Result<Page, MemoryError> {
        self.local.list_for_agent(agent, q).await
    }
    async fn forget_for_agent(&self, agent: &AgentRef, key: &str) -> Result<bool, MemoryError> {
        self.local.forget_for_agent(agent, key).await
    }
    async fn count_for_agent(&self, agent: &AgentRef) -> Result<u64, MemoryError> {
        self.local.count_for_agent(agent).await
    }
    async fn categories_for_agent(&self, agent: &AgentRef) -> Result<Vec<String>, MemoryError> {
        self.local.categories_for_agent(agent).await
    }
    async fn rename_agent(&self, old: &str, new: &str) -> Result<bool, MemoryError> {
        self.local.rename_agent(old, new).await
    }
    async fn export_page(
        &self,
        agent_id: Uuid,
        after: Option<&ExportCursor>,
        limit: usize,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        self.local.export_page(agent_id, after, limit).await
    }
    async fn close(&self) {
        self.local.close().await;
    }
    async fn purge_agent(&self, alias: &str) -> Result<u64, MemoryError> {
        self.local.purge_agent(alias).await
    }
    async fn import_agent(
        &self,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        self.local.import_agent(alias, agent_id, rows).await
    }
}
