//! The SQLite backend: one install-wide file (WAL), `agents` + `memories` tables, FTS5 BM25
//! recall with the agent scope evaluated inside the FTS index.

mod admin;
mod rows;
pub mod schema;

pub use rows::{fts_match_expr, fts_scope_expr};

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, QueryBuilder, Row, Sqlite, SqlitePool};
use uuid::Uuid;
use warren_types::MemoryBackendKind;

use crate::error::MemoryError;
use crate::grants::RecallScope;
use crate::text::{fts_terms_expr, query_terms};
use crate::traits::MemoryStore;
use crate::types::{
    format_ts, AgentRef, ExportCursor, ImportReport, ListQuery, MemoryEntry, NewMemory, Page,
    RecallQuery, StoreReceipt,
};
use rows::{entry_from_row, push_scope_sql, ENTRY_COLUMNS};

const BACKEND: &str = "sqlite";

/// The SQLite memory store (shared by every agent on the `sqlite` backend).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating if missing) the database file and runs the migrations. A corrupted file
    /// or an unwritable directory is reported as `Unavailable`, naming the file.
    pub async fn open(path: &Path) -> Result<Self, MemoryError> {
        let unavailable = |reason: String| MemoryError::Unavailable {
            backend: BACKEND,
            location: path.display().to_string(),
            reason,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| unavailable(format!("cannot create {}: {e}", parent.display())))?;
        }
        let opts = SqliteConnectOptions::from_str("sqlite://")
            .map_err(|e| unavailable(e.to_string()))?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let describe = |e: sqlx::Error| {
            let text = e.to_string();
            if text.contains("not a database") || text.contains("malformed") {
                unavailable(format!(
                    "{text} (the file is corrupted or is not a SQLite database)"
                ))
            } else {
                unavailable(text)
            }
        };
        let mut conn = sqlx::SqliteConnection::connect_with(&opts)
            .await
            .map_err(describe)?;
        schema::migrate(&mut conn).await.map_err(describe)?;
        conn.close().await.map_err(describe)?;
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .connect_with(opts)
            .await
            .map_err(describe)?;
        Ok(SqliteStore {
            pool,
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection pool (benchmarks compare query plans on it).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    pub(crate) fn err(&self, operation: &'static str) -> impl Fn(sqlx::Error) -> MemoryError + '_ {
        move |e| MemoryError::Backend {
            backend: BACKEND,
            location: self.path.display().to_string(),
            operation,
            reason: e.to_string(),
        }
    }

    fn bad_row(&self, operation: &'static str) -> impl Fn(String) -> MemoryError + '_ {
        move |reason| MemoryError::Backend {
            backend: BACKEND,
            location: self.path.display().to_string(),
            operation,
            reason: format!("unreadable row: {reason}"),
        }
    }

    pub(crate) fn taken(&self, alias: &str) -> MemoryError {
        MemoryError::AliasTaken {
            backend: BACKEND,
            location: self.path.display().to_string(),
            alias: alias.to_string(),
        }
    }

    /// Recall that ranks every keyword match first and filters by agent afterwards: the
    /// baseline the benchmark compares [`MemoryStore::recall_for_agents`] against.
    pub async fn recall_rank_then_filter(
        &self,
        scope: &RecallScope,
        q: &RecallQuery,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        let terms = query_terms(&q.query);
        let mut qb = QueryBuilder::<Sqlite>::new(
            "WITH ranked AS MATERIALIZED (SELECT rowid AS r, bm25(memories_fts, 1.0, 0.0) AS s \
             FROM memories_fts WHERE memories_fts MATCH ",
        );
        qb.push_bind(format!("body : ({})", fts_terms_expr(&terms)));
        qb.push(" ORDER BY s) SELECT ");
        qb.push(ENTRY_COLUMNS);
        qb.push(", ranked.s FROM ranked JOIN memories m ON m.seq = ranked.r JOIN agents a ON a.id = m.agent_id WHERE ");
        if !push_scope_sql(&mut qb, scope, q.category.as_deref()) {
            return Ok(Vec::new());
        }
        qb.push(" ORDER BY ranked.s, m.updated_at DESC LIMIT ");
        qb.push_bind(q.limit as i64);
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(self.err("recall"))?;
        rows.iter()
            .map(|r| entry_from_row(r, true))
            .collect::<Result<_, _>>()
            .map_err(self.bad_row("recall"))
    }

    pub(crate) async fn agent_row_count(
        conn: &mut sqlx::SqliteConnection,
        id: &str,
    ) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar("SELECT count(*) FROM memories WHERE agent_id = ?")
            .bind(id)
            .fetch_one(conn)
            .await
    }
}

#[async_trait]
impl MemoryStore for SqliteStore {
    fn kind(&self) -> MemoryBackendKind {
        MemoryBackendKind::Sqlite
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }

    async fn ensure_agent(&self, alias: &str) -> Result<AgentRef, MemoryError> {
        if let Some(found) = self.lookup_agent(alias).await? {
            return Ok(found);
        }
        let id = Uuid::new_v4();
        sqlx::query(
            "INSERT INTO agents (id, alias, created_at) VALUES (?, ?, ?) ON CONFLICT (alias) DO NOTHING",
        )
        .bind(id.to_string())
        .bind(alias)
        .bind(format_ts(Utc::now()))
        .execute(&self.pool)
        .await
        .map_err(self.err("register agent"))?;
        // Another handle may have won the race: read back whichever row exists.
        self.lookup_agent(alias)
            .await?
            .ok_or_else(|| MemoryError::Backend {
                backend: BACKEND,
                location: self.location(),
                operation: "register agent",
                reason: format!("agent `{alias}` vanished right after being registered"),
            })
    }

    async fn lookup_agent(&self, alias: &str) -> Result<Option<AgentRef>, MemoryError> {
        let id: Option<String> = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
            .bind(alias)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.err("look up agent"))?;
        id.map(|s| {
            Uuid::parse_str(&s)
                .map(|id| AgentRef {
                    id,
                    alias: alias.to_string(),
                })
                .map_err(|e| self.bad_row("look up agent")(e.to_string()))
        })
        .transpose()
    }

    async fn store_with_agent(
        &self,
        agent: &AgentRef,
        rows: &[NewMemory],
        now: DateTime<Utc>,
    ) -> Result<Vec<StoreReceipt>, MemoryError> {
        for r in rows {
            r.validate()?;
        }
        let ts = format_ts(now);
        // Multi-row upserts: one statement per chunk instead of one per row (a statement is a
        // hop to SQLite's thread). RETURNING order is unspecified, so rows come back by key.
        const CHUNK: usize = 200;
        let mut tx = self.pool.begin().await.map_err(self.err("store"))?;
        let mut out = Vec::with_capacity(rows.len());
        for chunk in rows.chunks(CHUNK) {
            let mut sql = String::from(
                "INSERT INTO memories (id, agent_id, key, content, category, session_id, importance, created_at, updated_at) VALUES ",
            );
            for i in 0..chunk.len() {
                sql.push_str(if i == 0 {
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?)"
                } else {
                    ", (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                });
            }
            sql.push_str(
                " ON CONFLICT (agent_id, key) DO UPDATE SET content = excluded.content, \
                 category = excluded.category, session_id = excluded.session_id, \
                 importance = excluded.importance, updated_at = excluded.updated_at \
                 RETURNING key, id, created_at",
            );
            let agent_id = agent.id.to_string();
            let mut q = sqlx::query(&sql);
            for r in chunk {
                q = q
                    .bind(Uuid::new_v4().to_string())
                    .bind(agent_id.clone())
                    .bind(&r.key)
                    .bind(&r.content)
                    .bind(&r.category)
                    .bind(&r.session_id)
                    .bind(r.importance)
                    .bind(&ts)
                    .bind(&ts);
            }
            let returned = q.fetch_all(&mut *tx).await.map_err(self.err("store"))?;
            let mut by_key = std::collections::HashMap::with_capacity(returned.len());
            for row in &returned {
                let key: String = row.try_get(0).map_err(self.err("store"))?;
                let id: String = row.try_get(1).map_err(self.err("store"))?;
                let created: String = row.try_get(2).map_err(self.err("store"))?;
                by_key.insert(key, (id, created));
            }
            for r in chunk {
                let (id, created) = by_key.get(&r.key).ok_or_else(|| {
                    self.bad_row("store")(format!("no row came back for key `{}`", r.key))
                })?;
                out.push(StoreReceipt {
                    entry: MemoryEntry {
                        id: Uuid::parse_str(id)
                            .map_err(|e| self.bad_row("store")(e.to_string()))?,
                        agent_id: agent.id,
                        agent: agent.alias.clone(),
                        key: r.key.clone(),
                        content: r.content.clone(),
                        category: r.category.clone(),
                        session_id: r.session_id.clone(),
                        importance: r.importance,
                        created_at: crate::types::parse_ts(created).unwrap_or(now),
                        updated_at: now,
                        score: None,
                    },
                    warnings: Vec::new(),
                });
            }
        }
        tx.commit().await.map_err(self.err("store"))?;
        Ok(out)
    }

    async fn get_for_agent(
        &self,
        agent: &AgentRef,
        key: &str,
    ) -> Result<Option<MemoryEntry>, MemoryError> {
        let sql = format!(
            "SELECT {ENTRY_COLUMNS} FROM memories m JOIN agents a ON a.id = m.agent_id \
             WHERE m.agent_id = ? AND m.key = ?"
        );
        let row = sqlx::query(&sql)
            .bind(agent.id.to_string())
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.err("get"))?;
        row.map(|r| entry_from_row(&r, false))
            .transpose()
            .map_err(self.bad_row("get"))
    }

    async fn recall_for_agents(
        &self,
        scope: &RecallScope,
        q: &RecallQuery,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        if q.limit == 0 {
            return Ok(Vec::new());
        }
        let terms = query_terms(&q.query);
        let category = q.category.as_deref();
        let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
        let mut qb = QueryBuilder::<Sqlite>::new("SELECT ");
        qb.push(ENTRY_COLUMNS);
        if terms.is_empty() {
            qb.push(", NULL FROM memories m JOIN agents a ON a.id = m.agent_id WHERE ");
        } else {
            // Scope, category and session are part of the MATCH expression: FTS5 ranks only
            // the rows the agent may see, and the top rows are picked before any join.
            let Some(expr) = fts_match_expr(&terms, scope, category, q.session.as_deref()) else {
                return Ok(Vec::new());
            };
            qb.push(
                ", f.rank FROM (SELECT rowid AS seq, rank FROM memories_fts \
                 WHERE memories_fts MATCH ",
            );
            qb.push_bind(expr);
            qb.push(" ORDER BY rank LIMIT ");
            qb.push_bind(limit);
            qb.push(
                ") f JOIN memories m ON m.seq = f.seq \
                 JOIN agents a ON a.id = m.agent_id WHERE ",
            );
        }
        // The same allowlist again as plain SQL (exact comparison): defence in depth.
        if !push_scope_sql(&mut qb, scope, category) {
            return Ok(Vec::new());
        }
        if let Some(c) = category {
            qb.push(" AND m.category = ");
            qb.push_bind(c.to_string());
        }
        if let Some(s) = &q.session {
            qb.push(" AND m.session_id = ");
            qb.push_bind(s.clone());
        }
        if terms.is_empty() {
            qb.push(" ORDER BY m.updated_at DESC, m.seq DESC LIMIT ");
        } else {
            qb.push(" ORDER BY f.rank, m.updated_at DESC LIMIT ");
        }
        qb.push_bind(limit);
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(self.err("recall"))?;
        rows.iter()
            .map(|r| entry_from_row(r, !terms.is_empty()))
            .collect::<Result<_, _>>()
            .map_err(self.bad_row("recall"))
    }

    async fn list_for_agent(&self, agent: &AgentRef, q: &ListQuery) -> Result<Page, MemoryError> {
        let filters = |qb: &mut QueryBuilder<'_, Sqlite>| {
            qb.push(" WHERE m.agent_id = ");
            qb.push_bind(agent.id.to_string());
            if let Some(c) = &q.category {
                qb.push(" AND m.category = ");
                qb.push_bind(c.clone());
            }
            if let Some(s) = &q.session {
                qb.push(" AND m.session_id = ");
                qb.push_bind(s.clone());
            }
        };
        let mut count = QueryBuilder::<Sqlite>::new("SELECT count(*) FROM memories m");
        filters(&mut count);
        let total: i64 = count
            .build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(self.err("list"))?;
        let mut qb = QueryBuilder::<Sqlite>::new("SELECT ");
        qb.push(ENTRY_COLUMNS);
        qb.push(" FROM memories m JOIN agents a ON a.id = m.agent_id");
        filters(&mut qb);
        qb.push(" ORDER BY m.updated_at DESC, m.seq DESC LIMIT ");
        qb.push_bind(q.limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX)));
        qb.push(" OFFSET ");
        qb.push_bind(i64::try_from(q.offset).unwrap_or(i64::MAX));
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(self.err("list"))?;
        let entries = rows
            .iter()
            .map(|r| entry_from_row(r, false))
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.bad_row("list"))?;
        Ok(Page::new(entries, total.max(0) as u64, q))
    }

    async fn forget_for_agent(&self, agent: &AgentRef, key: &str) -> Result<bool, MemoryError> {
        let done = sqlx::query("DELETE FROM memories WHERE agent_id = ? AND key = ?")
            .bind(agent.id.to_string())
            .bind(key)
            .execute(&self.pool)
            .await
            .map_err(self.err("forget"))?;
        Ok(done.rows_affected() > 0)
    }

    async fn count_for_agent(&self, agent: &AgentRef) -> Result<u64, MemoryError> {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM memories WHERE agent_id = ?")
            .bind(agent.id.to_string())
            .fetch_one(&self.pool)
            .await
            .map_err(self.err("count"))?;
        Ok(n.max(0) as u64)
    }

    async fn categories_for_agent(&self, agent: &AgentRef) -> Result<Vec<String>, MemoryError> {
        sqlx::query_scalar(
            "SELECT DISTINCT category FROM memories WHERE agent_id = ? ORDER BY category",
        )
        .bind(agent.id.to_string())
        .fetch_all(&self.pool)
        .await
        .map_err(self.err("categories"))
    }

    async fn rename_agent(&self, old: &str, new: &str) -> Result<bool, MemoryError> {
        let mut tx = self.pool.begin().await.map_err(self.err("rename"))?;
        let target: Option<String> = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
            .bind(new)
            .fetch_optional(&mut *tx)
            .await
            .map_err(self.err("rename"))?;
        if let Some(target) = target {
            if Self::agent_row_count(&mut tx, &target)
                .await
                .map_err(self.err("rename"))?
                > 0
            {
                tx.rollback().await.map_err(self.err("rename"))?;
                return Err(self.taken(new));
            }
            // An empty registry row (created for a grant) does not block the rename.
            sqlx::query("DELETE FROM agents WHERE id = ?")
                .bind(&target)
                .execute(&mut *tx)
                .await
                .map_err(self.err("rename"))?;
        }
        let done = sqlx::query("UPDATE agents SET alias = ? WHERE alias = ?")
            .bind(new)
            .bind(old)
            .execute(&mut *tx)
            .await
            .map_err(self.err("rename"))?;
        tx.commit().await.map_err(self.err("rename"))?;
        Ok(done.rows_affected() > 0)
    }

    async fn export_page(
        &self,
        agent_id: Uuid,
        after: Option<&ExportCursor>,
        limit: usize,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        let mut qb = QueryBuilder::<Sqlite>::new("SELECT ");
        qb.push(ENTRY_COLUMNS);
        qb.push(" FROM memories m JOIN agents a ON a.id = m.agent_id WHERE m.agent_id = ");
        qb.push_bind(agent_id.to_string());
        if let Some(c) = after {
            let ts = format_ts(c.created_at);
            // A row-value comparison is an index range on (agent_id, created_at, id); the
            // equivalent OR form makes SQLite rescan the agent's rows for every page.
            qb.push(" AND (m.created_at, m.id) > (");
            qb.push_bind(ts);
            qb.push(", ");
            qb.push_bind(c.id.to_string());
            qb.push(")");
        }
        qb.push(" ORDER BY m.created_at, m.id LIMIT ");
        qb.push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
        let rows = qb
            .build()
            .fetch_all(&self.pool)
            .await
            .map_err(self.err("export"))?;
        rows.iter()
            .map(|r| entry_from_row(r, false))
            .collect::<Result<_, _>>()
            .map_err(self.bad_row("export"))
    }

    async fn close(&self) {
        self.pool.close().await;
    }

    async fn purge_agent(&self, alias: &str) -> Result<u64, MemoryError> {
        let mut tx = self.pool.begin().await.map_err(self.err("purge"))?;
        let id: Option<String> = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
            .bind(alias)
            .fetch_optional(&mut *tx)
            .await
            .map_err(self.err("purge"))?;
        let Some(id) = id else {
            tx.rollback().await.map_err(self.err("purge"))?;
            return Ok(0);
        };
        let done = sqlx::query("DELETE FROM memories WHERE agent_id = ?")
            .bind(&id)
            .execute(&mut *tx)
            .await
            .map_err(self.err("purge"))?;
        sqlx::query("DELETE FROM agents WHERE id = ?")
            .bind(&id)
            .execute(&mut *tx)
            .await
            .map_err(self.err("purge"))?;
        tx.commit().await.map_err(self.err("purge"))?;
        Ok(done.rows_affected())
    }

    async fn import_agent(
        &self,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        self.import_rows(alias, agent_id, rows).await
    }
}
