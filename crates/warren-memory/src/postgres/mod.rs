//! The Postgres backend: the same `agents` + `memories` tables as SQLite under a configurable
//! schema, `ts_rank` full-text ranking, the allowlist in the `WHERE` clause of the ranked query.

pub mod schema;

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use sqlx::postgres::PgPoolOptions;
use sqlx::{PgPool, Postgres, QueryBuilder};
use uuid::Uuid;
use warren_types::MemoryBackendKind;

use crate::error::{redact_url, MemoryError};
use crate::export::EXPORT_PAGE;
use crate::grants::RecallScope;
use crate::scope_sql::push_scope;
use crate::text::query_terms;
use crate::traits::MemoryStore;
use crate::types::{
    AgentRef, ExportCursor, ImportReport, ListQuery, MemoryEntry, NewMemory, Page, RecallQuery,
    StoreReceipt,
};

const BACKEND: &str = "postgres";
/// Rows per statement of an import (passed as nine column arrays).
const PG_IMPORT_CHUNK: usize = 1000;
const COLUMNS: &str = "m.id, m.agent_id, a.alias, m.key, m.content, m.category, m.session_id, \
                       m.importance, m.created_at, m.updated_at";

/// The Postgres memory store (shared by every agent on the `postgres` backend).
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    location: String,
    /// Quoted schema name, safe to splice into SQL (validated at open).
    s: String,
}

/// One memory row as [`COLUMNS`] selects it, with the keyword rank of a recall when the query
/// has one (`rank`; absent elsewhere).
#[derive(sqlx::FromRow)]
struct EntryRow {
    id: Uuid,
    agent_id: Uuid,
    alias: String,
    key: String,
    content: String,
    category: String,
    session_id: Option<String>,
    importance: f64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    #[sqlx(default)]
    rank: Option<f32>,
}

impl From<EntryRow> for MemoryEntry {
    fn from(r: EntryRow) -> Self {
        MemoryEntry {
            id: r.id,
            agent_id: r.agent_id,
            agent: r.alias,
            key: r.key,
            content: r.content,
            category: r.category,
            session_id: r.session_id,
            importance: r.importance,
            created_at: r.created_at,
            updated_at: r.updated_at,
            score: r.rank.map(f64::from),
        }
    }
}

impl PostgresStore {
    /// Connects (5 s timeout), creates the schema if needed and runs the migrations. An
    /// unreachable server is reported as `Unavailable`, naming the redacted URL and schema.
    pub async fn open(url: &str, schema: &str) -> Result<Self, MemoryError> {
        crate::error::register_url_password(url);
        let location = format!("{} (schema {schema})", redact_url(url));
        if !schema::valid_schema_name(schema) {
            return Err(MemoryError::Config {
                backend: BACKEND,
                reason: format!(
                    "schema {schema:?} is not a valid name (lowercase letters, digits, `_`)"
                ),
            });
        }
        let unavailable = |e: sqlx::Error| MemoryError::Unavailable {
            backend: BACKEND,
            location: location.clone(),
            reason: e.to_string(),
        };
        let pool = PgPoolOptions::new()
            .max_connections(5)
            .acquire_timeout(Duration::from_secs(5))
            .connect(url)
            .await
            .map_err(unavailable)?;
        let mut conn = pool.acquire().await.map_err(unavailable)?;
        schema::migrate(conn.as_mut(), schema)
            .await
            .map_err(unavailable)?;
        drop(conn);
        Ok(PostgresStore {
            pool,
            location,
            s: format!("\"{schema}\""),
        })
    }

    /// The connection pool.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    fn err(&self, operation: &'static str) -> impl Fn(sqlx::Error) -> MemoryError + '_ {
        move |e| MemoryError::Backend {
            backend: BACKEND,
            location: self.location.clone(),
            operation,
            reason: e.to_string(),
        }
    }

    fn taken(&self, alias: &str) -> MemoryError {
        MemoryError::AliasTaken {
            backend: BACKEND,
            location: self.location.clone(),
            alias: alias.to_string(),
        }
    }

    fn tables_clause(&self) -> String {
        format!(
            " FROM {s}.memories m JOIN {s}.agents a ON a.id = m.agent_id",
            s = self.s
        )
    }

    async fn rows_of(tx: &mut sqlx::PgConnection, s: &str, id: Uuid) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar(&format!(
            "SELECT count(*) FROM {s}.memories WHERE agent_id = $1"
        ))
        .bind(id)
        .fetch_one(tx)
        .await
    }
}

type ExportPage = Result<Vec<MemoryEntry>, MemoryError>;

/// The state of [`PostgresStore::export_stream`]'s pages.
enum Export {
    Start {
        sql: String,
        pool: PgPool,
        location: String,
        agent_id: Uuid,
    },
    Running(tokio::sync::mpsc::Receiver<ExportPage>),
}

/// Streams one query's rows from the server (one round trip, one snapshot) and hands them over
/// in pages of [`EXPORT_PAGE`], at most two pages ahead of the reader; stops at the first error
/// (sent once) or when the reader goes away.
async fn export_task(
    sql: String,
    pool: PgPool,
    location: String,
    agent_id: Uuid,
    tx: tokio::sync::mpsc::Sender<ExportPage>,
) {
    let fail = |e: sqlx::Error| MemoryError::Backend {
        backend: BACKEND,
        location: location.clone(),
        operation: "export",
        reason: e.to_string(),
    };
    let mut rows = sqlx::query_as::<_, EntryRow>(&sql)
        .bind(agent_id)
        .fetch(&pool);
    let mut page = Vec::with_capacity(EXPORT_PAGE);
    loop {
        match rows.try_next().await {
            Ok(Some(row)) => page.push(MemoryEntry::from(row)),
            Ok(None) => break,
            Err(e) => {
                let _ = tx.send(Err(fail(e))).await;
                return;
            }
        }
        if page.len() == EXPORT_PAGE {
            let full = std::mem::replace(&mut page, Vec::with_capacity(EXPORT_PAGE));
            if tx.send(Ok(full)).await.is_err() {
                return;
            }
        }
    }
    if !page.is_empty() {
        let _ = tx.send(Ok(page)).await;
    }
}

#[async_trait]
impl MemoryStore for PostgresStore {
    fn kind(&self) -> MemoryBackendKind {
        MemoryBackendKind::Postgres
    }

    fn location(&self) -> String {
        self.location.clone()
    }

    async fn ensure_agent(&self, alias: &str) -> Result<AgentRef, MemoryError> {
        let id: Uuid = sqlx::query_scalar(&format!(
            "WITH ins AS (INSERT INTO {s}.agents (id, alias) VALUES ($1, $2) \
             ON CONFLICT (alias) DO NOTHING RETURNING id) \
             SELECT id FROM ins UNION ALL SELECT id FROM {s}.agents WHERE alias = $2 LIMIT 1",
            s = self.s
        ))
        .bind(Uuid::new_v4())
        .bind(alias)
        .fetch_one(&self.pool)
        .await
        .map_err(self.err("register agent"))?;
        Ok(AgentRef {
            id,
            alias: alias.to_string(),
        })
    }

    async fn agent_id(&self, alias: &str) -> Result<Option<Uuid>, MemoryError> {
        sqlx::query_scalar(&format!(
            "SELECT id FROM {}.agents WHERE alias = $1",
            self.s
        ))
        .bind(alias)
        .fetch_optional(&self.pool)
        .await
        .map_err(self.err("look up agent"))
    }

    async fn write_rows(
        &self,
        agent: &AgentRef,
        rows: &[NewMemory],
        now: DateTime<Utc>,
    ) -> Result<Vec<StoreReceipt>, MemoryError> {
        // Chunks of rows as column arrays, one upsert statement each. A key given twice in a
        // call is written once, with its last values (what writing the rows one by one leaves);
        // both receipts name the one row.
        let sql = format!(
            "INSERT INTO {s}.memories (id, agent_id, key, content, category, session_id, importance, created_at, updated_at) \
             SELECT u.id, $1, u.key, u.content, u.category, u.session_id, u.importance, $8, $8 \
             FROM UNNEST($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[]) \
                  AS u(id, key, content, category, session_id, importance) \
             ON CONFLICT (agent_id, key) DO UPDATE SET content = excluded.content, \
             category = excluded.category, session_id = excluded.session_id, \
             importance = excluded.importance, updated_at = excluded.updated_at \
             RETURNING key, id, created_at, updated_at",
            s = self.s
        );
        let mut tx = self.pool.begin().await.map_err(self.err("store"))?;
        let mut out = Vec::with_capacity(rows.len());
        for chunk in rows.chunks(PG_IMPORT_CHUNK) {
            let mut last: HashMap<&str, &NewMemory> = HashMap::with_capacity(chunk.len());
            for r in chunk {
                last.insert(r.key.as_str(), r);
            }
            let unique: Vec<&NewMemory> = chunk
                .iter()
                .filter(|r| {
                    last.get(r.key.as_str())
                        .is_some_and(|l| std::ptr::eq(*l, *r))
                })
                .collect();
            let returned: Vec<(String, Uuid, DateTime<Utc>, DateTime<Utc>)> = sqlx::query_as(&sql)
                .bind(agent.id)
                .bind(unique.iter().map(|_| Uuid::new_v4()).collect::<Vec<_>>())
                .bind(unique.iter().map(|r| r.key.as_str()).collect::<Vec<_>>())
                .bind(
                    unique
                        .iter()
                        .map(|r| r.content.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    unique
                        .iter()
                        .map(|r| r.category.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    unique
                        .iter()
                        .map(|r| r.session_id.as_deref())
                        .collect::<Vec<_>>(),
                )
                .bind(unique.iter().map(|r| r.importance).collect::<Vec<_>>())
                .bind(now)
                .fetch_all(&mut *tx)
                .await
                .map_err(self.err("store"))?;
            let by_key: HashMap<String, (Uuid, DateTime<Utc>, DateTime<Utc>)> = returned
                .into_iter()
                .map(|(k, id, c, u)| (k, (id, c, u)))
                .collect();
            for r in chunk {
                let Some((id, created_at, updated_at)) = by_key.get(&r.key) else {
                    return Err(self.err("store")(sqlx::Error::Protocol(format!(
                        "no row came back for key `{}`",
                        r.key
                    ))));
                };
                out.push(StoreReceipt {
                    entry: r.stored_as(agent, *id, *created_at, *updated_at),
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
            "SELECT {COLUMNS}{} WHERE m.agent_id = $1 AND m.key = $2",
            self.tables_clause()
        );
        let row = sqlx::query_as::<_, EntryRow>(&sql)
            .bind(agent.id)
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.err("get"))?;
        Ok(row.map(MemoryEntry::from))
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
        let mut qb = QueryBuilder::<Postgres>::new("SELECT ");
        qb.push(COLUMNS);
        if terms.is_empty() {
            qb.push(self.tables_clause());
            qb.push(" WHERE ");
        } else {
            let tsq = terms
                .iter()
                .map(|t| format!("'{}'", t.replace('\\', "\\\\").replace('\'', "''")))
                .collect::<Vec<_>>()
                .join(" | ");
            // The query inline (not a FROM item): the planner sees a constant and can combine
            // the GIN index with the agent index (a bitmap AND) instead of a join per row.
            qb.push(", ts_rank(m.tsv, to_tsquery('simple', ");
            qb.push_bind(tsq.clone());
            qb.push(")) AS rank");
            qb.push(self.tables_clause());
            qb.push(" WHERE m.tsv @@ to_tsquery('simple', ");
            qb.push_bind(tsq);
            qb.push(") AND ");
        }
        if !push_scope(&mut qb, scope, q.category.as_deref()) {
            return Ok(Vec::new());
        }
        if let Some(s) = &q.session {
            qb.push(" AND m.session_id = ");
            qb.push_bind(s.clone());
        }
        if terms.is_empty() {
            qb.push(" ORDER BY m.updated_at DESC, m.seq DESC LIMIT ");
        } else {
            qb.push(" ORDER BY rank DESC, m.updated_at DESC LIMIT ");
        }
        qb.push_bind(i64::try_from(q.limit).unwrap_or(i64::MAX));
        let rows = qb
            .build_query_as::<EntryRow>()
            .fetch_all(&self.pool)
            .await
            .map_err(self.err("recall"))?;
        Ok(rows.into_iter().map(MemoryEntry::from).collect())
    }

    async fn list_for_agent(&self, agent: &AgentRef, q: &ListQuery) -> Result<Page, MemoryError> {
        let filters = |qb: &mut QueryBuilder<'_, Postgres>| {
            qb.push(" WHERE m.agent_id = ");
            qb.push_bind(agent.id);
            if let Some(c) = &q.category {
                qb.push(" AND m.category = ");
                qb.push_bind(c.clone());
            }
            if let Some(s) = &q.session {
                qb.push(" AND m.session_id = ");
                qb.push_bind(s.clone());
            }
        };
        let mut count =
            QueryBuilder::<Postgres>::new(format!("SELECT count(*) FROM {}.memories m", self.s));
        filters(&mut count);
        let total: i64 = count
            .build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(self.err("list"))?;
        let mut qb = QueryBuilder::<Postgres>::new("SELECT ");
        qb.push(COLUMNS);
        qb.push(self.tables_clause());
        filters(&mut qb);
        qb.push(" ORDER BY m.updated_at DESC, m.seq DESC");
        if let Some(l) = q.limit {
            qb.push(" LIMIT ");
            qb.push_bind(i64::try_from(l).unwrap_or(i64::MAX));
        }
        qb.push(" OFFSET ");
        qb.push_bind(i64::try_from(q.offset).unwrap_or(i64::MAX));
        let rows = qb
            .build_query_as::<EntryRow>()
            .fetch_all(&self.pool)
            .await
            .map_err(self.err("list"))?;
        let entries: Vec<MemoryEntry> = rows.into_iter().map(MemoryEntry::from).collect();
        Ok(Page::new(entries, total.max(0) as u64, q))
    }

    async fn forget_for_agent(&self, agent: &AgentRef, key: &str) -> Result<bool, MemoryError> {
        let done = sqlx::query(&format!(
            "DELETE FROM {}.memories WHERE agent_id = $1 AND key = $2",
            self.s
        ))
        .bind(agent.id)
        .bind(key)
        .execute(&self.pool)
        .await
        .map_err(self.err("forget"))?;
        Ok(done.rows_affected() > 0)
    }

    async fn count_for_agent(&self, agent: &AgentRef) -> Result<u64, MemoryError> {
        let mut conn = self.pool.acquire().await.map_err(self.err("count"))?;
        let n = Self::rows_of(&mut conn, &self.s, agent.id)
            .await
            .map_err(self.err("count"))?;
        Ok(n.max(0) as u64)
    }

    async fn categories_for_agent(&self, agent: &AgentRef) -> Result<Vec<String>, MemoryError> {
        let mut categories: Vec<String> = sqlx::query_scalar(&format!(
            "SELECT DISTINCT category FROM {}.memories WHERE agent_id = $1",
            self.s
        ))
        .bind(agent.id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err("categories"))?;
        // Byte order, as the other backends sort, whatever the database's collation.
        categories.sort();
        Ok(categories)
    }

    async fn rename_agent(&self, old: &str, new: &str) -> Result<bool, MemoryError> {
        let s = &self.s;
        let mut tx = self.pool.begin().await.map_err(self.err("rename"))?;
        let target: Option<Uuid> =
            sqlx::query_scalar(&format!("SELECT id FROM {s}.agents WHERE alias = $1"))
                .bind(new)
                .fetch_optional(&mut *tx)
                .await
                .map_err(self.err("rename"))?;
        if let Some(target) = target {
            if Self::rows_of(&mut tx, s, target)
                .await
                .map_err(self.err("rename"))?
                > 0
            {
                tx.rollback().await.map_err(self.err("rename"))?;
                return Err(self.taken(new));
            }
            sqlx::query(&format!("DELETE FROM {s}.agents WHERE id = $1"))
                .bind(target)
                .execute(&mut *tx)
                .await
                .map_err(self.err("rename"))?;
        }
        let done = sqlx::query(&format!(
            "UPDATE {s}.agents SET alias = $1 WHERE alias = $2"
        ))
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
        let mut qb = QueryBuilder::<Postgres>::new("SELECT ");
        qb.push(COLUMNS);
        qb.push(self.tables_clause());
        qb.push(" WHERE m.agent_id = ");
        qb.push_bind(agent_id);
        if let Some(c) = after {
            qb.push(" AND (m.created_at, m.id) > (");
            qb.push_bind(c.created_at);
            qb.push(", ");
            qb.push_bind(c.id);
            qb.push(")");
        }
        qb.push(" ORDER BY m.created_at, m.id LIMIT ");
        qb.push_bind(i64::try_from(limit).unwrap_or(i64::MAX));
        let rows = qb
            .build_query_as::<EntryRow>()
            .fetch_all(&self.pool)
            .await
            .map_err(self.err("export"))?;
        Ok(rows.into_iter().map(MemoryEntry::from).collect())
    }

    async fn close(&self) {
        self.pool.close().await;
    }

    fn export_stream(
        &self,
        agent_id: Uuid,
    ) -> Option<BoxStream<'static, Result<Vec<MemoryEntry>, MemoryError>>> {
        let sql = format!(
            "SELECT {COLUMNS}{} WHERE m.agent_id = $1 ORDER BY m.created_at, m.id",
            self.tables_clause()
        );
        let start = Export::Start {
            sql,
            pool: self.pool.clone(),
            location: self.location.clone(),
            agent_id,
        };
        let pages = stream::unfold(start, |state| async move {
            let mut rx = match state {
                Export::Running(rx) => rx,
                // The task starts on the first poll, inside the caller's runtime.
                Export::Start {
                    sql,
                    pool,
                    location,
                    agent_id,
                } => {
                    let (tx, rx) = tokio::sync::mpsc::channel(2);
                    tokio::spawn(export_task(sql, pool, location, agent_id, tx));
                    rx
                }
            };
            rx.recv().await.map(|page| (page, Export::Running(rx)))
        });
        Some(pages.boxed())
    }

    async fn purge_agent(&self, alias: &str) -> Result<u64, MemoryError> {
        // One statement, atomic by itself: the agent's row and its rows go together. The
        // foreign key is checked at the end of the statement, when both deletes are done.
        let n: i64 = sqlx::query_scalar(&format!(
            "WITH a AS (DELETE FROM {s}.agents WHERE alias = $1 RETURNING id), \
             d AS (DELETE FROM {s}.memories m USING a WHERE m.agent_id = a.id RETURNING 1) \
             SELECT count(*) FROM d",
            s = self.s
        ))
        .bind(alias)
        .fetch_one(&self.pool)
        .await
        .map_err(self.err("purge"))?;
        Ok(n.max(0) as u64)
    }

    async fn import_agent(
        &self,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        let (s, op) = (&self.s, "import");
        let mut tx = self.pool.begin().await.map_err(self.err(op))?;
        let existing: Option<Uuid> =
            sqlx::query_scalar(&format!("SELECT id FROM {s}.agents WHERE alias = $1"))
                .bind(alias)
                .fetch_optional(&mut *tx)
                .await
                .map_err(self.err(op))?;
        let mut id = None;
        if let Some(existing) = existing {
            if existing == agent_id {
                id = Some(agent_id);
            } else if Self::rows_of(&mut tx, s, existing)
                .await
                .map_err(self.err(op))?
                > 0
            {
                tx.rollback().await.map_err(self.err(op))?;
                return Err(self.taken(alias));
            } else {
                sqlx::query(&format!("DELETE FROM {s}.agents WHERE id = $1"))
                    .bind(existing)
                    .execute(&mut *tx)
                    .await
                    .map_err(self.err(op))?;
            }
        }
        let id = match id {
            Some(id) => id,
            None => {
                let holder: Option<String> =
                    sqlx::query_scalar(&format!("SELECT alias FROM {s}.agents WHERE id = $1"))
                        .bind(agent_id)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(self.err(op))?;
                let id = if holder.is_none() {
                    agent_id
                } else {
                    Uuid::new_v4()
                };
                sqlx::query(&format!(
                    "INSERT INTO {s}.agents (id, alias) VALUES ($1, $2)"
                ))
                .bind(id)
                .bind(alias)
                .execute(&mut *tx)
                .await
                .map_err(self.err(op))?;
                id
            }
        };
        // Chunks of rows as column arrays: one statement finds the ids already taken, one
        // `INSERT ... SELECT FROM UNNEST` writes the chunk (in the given order, so of two rows
        // with one key the first is kept, as row by row).
        let taken_sql = format!("SELECT id FROM {s}.memories WHERE id = ANY($1)");
        let insert_sql = format!(
            "INSERT INTO {s}.memories (id, agent_id, key, content, category, session_id, importance, created_at, updated_at) \
             SELECT u.id, $1, u.key, u.content, u.category, u.session_id, u.importance, u.created_at, u.updated_at \
             FROM UNNEST($2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], \
                         $8::timestamptz[], $9::timestamptz[]) \
                  WITH ORDINALITY AS u(id, key, content, category, session_id, importance, created_at, updated_at, ord) \
             ORDER BY u.ord ON CONFLICT (agent_id, key) DO NOTHING"
        );
        let (mut imported, mut skipped) = (0u64, 0u64);
        // Row ids given to earlier rows of this call (two rows of one batch never share one).
        let mut given: HashSet<Uuid> = HashSet::with_capacity(rows.len());
        for chunk in rows.chunks(PG_IMPORT_CHUNK) {
            let ids: Vec<Uuid> = chunk.iter().map(|r| r.id).collect();
            let taken: HashSet<Uuid> = sqlx::query_scalar::<_, Uuid>(&taken_sql)
                .bind(&ids)
                .fetch_all(&mut *tx)
                .await
                .map_err(self.err(op))?
                .into_iter()
                .collect();
            let ids: Vec<Uuid> = ids
                .into_iter()
                .map(|i| {
                    if taken.contains(&i) || !given.insert(i) {
                        Uuid::new_v4()
                    } else {
                        i
                    }
                })
                .collect();
            let done = sqlx::query(&insert_sql)
                .bind(id)
                .bind(&ids)
                .bind(chunk.iter().map(|r| r.key.as_str()).collect::<Vec<_>>())
                .bind(chunk.iter().map(|r| r.content.as_str()).collect::<Vec<_>>())
                .bind(
                    chunk
                        .iter()
                        .map(|r| r.category.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    chunk
                        .iter()
                        .map(|r| r.session_id.as_deref())
                        .collect::<Vec<_>>(),
                )
                .bind(chunk.iter().map(|r| r.importance).collect::<Vec<_>>())
                .bind(chunk.iter().map(|r| r.created_at).collect::<Vec<_>>())
                .bind(chunk.iter().map(|r| r.updated_at).collect::<Vec<_>>())
                .execute(&mut *tx)
                .await
                .map_err(self.err(op))?;
            let n = chunk.len() as u64;
            let written = done.rows_affected().min(n);
            imported += written;
            skipped += n - written;
        }
        tx.commit().await.map_err(self.err(op))?;
        Ok(ImportReport {
            agent_id: id,
            kept_agent_id: id == agent_id,
            imported,
            skipped,
        })
    }
}
