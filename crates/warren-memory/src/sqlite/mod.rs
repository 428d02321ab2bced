//! The SQLite backend: one install-wide file (WAL), `agents` + `memories` tables, and one FTS5
//! index per agent ([`index`]) for BM25 recall. A recall asks the index of each agent in its
//! allowlist for that agent's best rows (the grant's categories and the filters evaluated inside
//! the index), then keeps the best of those: only rows the agent may see are ranked, and the
//! work follows the size of the allowlist's memory, not of the file. The allowlist is checked
//! again in plain SQL on the rows returned.

mod admin;
mod export;
pub mod index;
pub mod rank;
mod recall;
mod rows;
pub mod schema;
mod write;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Connection, QueryBuilder, Row, Sqlite, SqlitePool};
use uuid::Uuid;
use warren_types::MemoryBackendKind;

use crate::error::MemoryError;
use crate::grants::{RecallScope, ScopeEntry};
use crate::scope_sql::push_scope;
use crate::text::query_terms;
use crate::traits::MemoryStore;
use crate::types::{
    format_ts, AgentRef, ExportCursor, ImportReport, ListQuery, MemoryEntry, NewMemory, Page,
    RecallQuery, StoreReceipt,
};
use rows::{micros, ts_from_micros, EntryRow, ENTRY_COLUMNS};

/// Agents per recall statement (SQLite allows 500 terms in a compound `SELECT`): a larger
/// allowlist is asked in groups of this many and the groups' best rows merged.
const RECALL_GROUP: usize = 200;

/// Rows per `INSERT` statement of a store: a batch is one transaction of such statements, each
/// followed by one statement indexing the rows it wrote.
pub const STORE_CHUNK: usize = 500;

/// The most text (keys and contents, bytes) a store may hold for the blocking writer to stay
/// open after it. FTS5 collects a transaction's terms in a hash table per index and connection
/// that grows with the terms and never shrinks, and every later write of that index on that
/// connection sorts and clears the whole table: after one 500-row batch, each one-row store
/// on the same connection took 10 to 20 µs more (a third of its time in the memory bench). A
/// larger store closes the connection when it is done (the next store opens it again, well
/// under a millisecond), so the tables stay at their first size (1,024 terms).
const SMALL_STORE_TEXT: usize = 4096;

const BACKEND: &str = "sqlite";

/// The SQLite memory store (shared by every agent on the `sqlite` backend).
#[derive(Debug, Clone)]
pub struct SqliteStore {
    /// Reads (recall, list, get, counts).
    pool: SqlitePool,
    /// Every write, over one connection: writers of this process queue here instead of waiting
    /// on SQLite's lock, and the connection's page cache stays warm between writes.
    writer: SqlitePool,
    /// Export pages, read without a per-row hand-off.
    reader: Arc<export::BlockingReader>,
    /// Stores of up to one chunk, written on the calling task's thread (see [`write`]).
    blocking_writer: Arc<write::BlockingWriter>,
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
            if is_corrupt(&e) {
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
        // Planner statistics of Warren's own tables (bounded work: at most 1,000 rows of each
        // index are read); the recall statements fix their join order and do not depend on
        // them. FTS5's tables are left without statistics (see `forget_fts_statistics`): with
        // one index per agent, `PRAGMA optimize` would analyse two of them per agent at every
        // open.
        sqlx::Executor::execute(
            &mut conn,
            sqlx::raw_sql("PRAGMA analysis_limit = 1000; ANALYZE memories; ANALYZE agents;"),
        )
        .await
        .map_err(describe)?;
        schema::forget_fts_statistics(&mut conn)
            .await
            .map_err(describe)?;
        conn.close().await.map_err(describe)?;
        // Connections to a local file never go stale: no idle or lifetime reaping, so neither
        // pool runs a background maintenance task, and no ping before each use (a round trip
        // to the connection's thread for every store and recall).
        let writer = SqlitePoolOptions::new()
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .test_before_acquire(false)
            .connect_with(opts.clone())
            .await
            .map_err(describe)?;
        // Reading connections rank recalls with `warren_bm25` (see [`rank`]).
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .idle_timeout(None)
            .max_lifetime(None)
            .test_before_acquire(false)
            .after_connect(|conn, _| {
                Box::pin(async move {
                    let mut handle = conn.lock_handle().await?;
                    let db = handle.as_raw_handle().as_ptr();
                    // SAFETY: the handle is locked for this call: no other use of the
                    // connection runs while the functions are registered.
                    unsafe { rank::register(db) }.map_err(sqlx::Error::Protocol)
                })
            })
            .connect_with(opts)
            .await
            .map_err(describe)?;
        Ok(SqliteStore {
            pool,
            writer,
            reader: Arc::new(export::BlockingReader::new(path)),
            blocking_writer: Arc::new(write::BlockingWriter::new(path)),
            path: path.to_path_buf(),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The ranking statistics a recall of `query` over `scope` uses (benchmarks rank their raw
    /// query shapes with the same figures).
    pub async fn recall_stats(
        &self,
        scope: &RecallScope,
        query: &str,
    ) -> Result<rank::ScopeStats, MemoryError> {
        let asked: Vec<(&ScopeEntry, Option<Vec<String>>)> =
            scope.entries.iter().map(|e| (e, None)).collect();
        self.scope_stats(&asked, &query_terms(query)).await
    }

    /// The pool of reading connections (benchmarks run raw queries on it).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The pool of the one writing connection (benchmarks run raw writes on it).
    pub fn writer(&self) -> &SqlitePool {
        &self.writer
    }

    pub(crate) fn err(&self, operation: &'static str) -> impl Fn(sqlx::Error) -> MemoryError + '_ {
        move |e| MemoryError::Backend {
            backend: BACKEND,
            location: self.path.display().to_string(),
            operation,
            reason: e.to_string(),
        }
    }

    /// A query error of rows decoded into [`EntryRow`]: a column that does not decode is an
    /// unreadable row (as a bad timestamp is), anything else a backend error.
    fn read_err(&self, operation: &'static str) -> impl Fn(sqlx::Error) -> MemoryError + '_ {
        move |e| match e {
            sqlx::Error::ColumnDecode { .. } | sqlx::Error::ColumnNotFound(_) => {
                self.bad_row(operation)(e.to_string())
            }
            other => self.err(operation)(other),
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

    /// `INSERT ... VALUES (...), ... ON CONFLICT (agent_id, key) DO UPDATE ... RETURNING` for
    /// `n` rows (nine parameters each, bound by [`Self::bind_rows`]).
    fn upsert_sql(n: usize) -> String {
        let mut sql = String::with_capacity(400 + n * 30);
        sql.push_str(
            "INSERT INTO memories (id, agent_id, key, content, category, session_id, importance, created_at, updated_at) VALUES ",
        );
        for i in 0..n {
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
             RETURNING key, id, created_at, seq",
        );
        sql
    }

    fn bind_rows<'q>(
        mut q: sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
        agent: &AgentRef,
        chunk: &'q [NewMemory],
        ts: i64,
    ) -> sqlx::query::Query<'q, Sqlite, sqlx::sqlite::SqliteArguments<'q>> {
        for r in chunk {
            q = q
                // Time-ordered ids: the id index grows at its end, and an agent's rows stored
                // together sit together in it (a purge rewrites few pages).
                .bind(Uuid::now_v7())
                .bind(agent.id)
                .bind(&r.key)
                .bind(&r.content)
                .bind(&r.category)
                .bind(&r.session_id)
                .bind(r.importance)
                .bind(ts)
                .bind(ts);
        }
        q
    }

    /// The receipts of a chunk from the rows its upsert returned (key, id, creation time,
    /// `seq`; by key: `RETURNING` order is unspecified, and a key given twice in the chunk is
    /// inserted, then updated, so both receipts name the one row); appends them to `out` and
    /// returns the rows' `seq` values.
    fn receipts(
        &self,
        returned: impl Iterator<Item = Result<write::Returned, sqlx::Error>>,
        agent: &AgentRef,
        chunk: &[NewMemory],
        now: DateTime<Utc>,
        out: &mut Vec<StoreReceipt>,
    ) -> Result<Vec<i64>, MemoryError> {
        let mut by_key = std::collections::HashMap::with_capacity(chunk.len());
        let mut seqs = Vec::with_capacity(chunk.len());
        for row in returned {
            let (key, id, created, seq) = row.map_err(self.err("store"))?;
            by_key.insert(key, (id, created));
            seqs.push(seq);
        }
        seqs.sort_unstable();
        seqs.dedup();
        for r in chunk {
            let (id, created) = by_key.get(&r.key).ok_or_else(|| {
                self.bad_row("store")(format!("no row came back for key `{}`", r.key))
            })?;
            out.push(StoreReceipt {
                entry: r.stored_as(agent, *id, ts_from_micros(*created).unwrap_or(now), now),
                warnings: Vec::new(),
            });
        }
        Ok(seqs)
    }

    /// Upserts one chunk of rows in one multi-row statement, indexes them in one more, inside
    /// the caller's transaction, and appends their receipts.
    async fn store_chunk(
        &self,
        conn: &mut sqlx::SqliteConnection,
        agent: &AgentRef,
        chunk: &[NewMemory],
        now: DateTime<Utc>,
        out: &mut Vec<StoreReceipt>,
    ) -> Result<(), MemoryError> {
        let sql = Self::upsert_sql(chunk.len());
        // Full chunks repeat: their statement stays prepared; other lengths are prepared for
        // the call and not kept.
        let q = sqlx::query(&sql).persistent(chunk.len() == STORE_CHUNK);
        let returned = Self::bind_rows(q, agent, chunk, micros(now))
            .fetch_all(&mut *conn)
            .await
            .map_err(self.err("store"))?;
        let decoded = returned.iter().map(|row| {
            Ok((
                row.try_get(0)?,
                row.try_get(1)?,
                row.try_get(2)?,
                row.try_get(3)?,
            ))
        });
        let seqs = self.receipts(decoded, agent, chunk, now, out)?;
        index::put_seqs(conn, &agent.id, &seqs)
            .await
            .map_err(self.err("store"))?;
        Ok(())
    }

    /// Stores up to [`STORE_CHUNK`] rows in one transaction over the blocking writing
    /// connection, on this task's thread ([`write`]): the upsert, then the statement indexing
    /// the same keys.
    async fn store_in_one_request(
        &self,
        agent: &AgentRef,
        chunk: &[NewMemory],
        now: DateTime<Utc>,
    ) -> Result<Vec<StoreReceipt>, MemoryError> {
        use rusqlite::types::Value;
        let ts = micros(now);
        let agent_id = Value::Blob(agent.id.as_bytes().to_vec());
        let mut values = Vec::with_capacity(chunk.len() * 9);
        for r in chunk {
            values.extend([
                // Time-ordered ids, as in `bind_rows`.
                Value::Blob(Uuid::now_v7().as_bytes().to_vec()),
                agent_id.clone(),
                Value::Text(r.key.clone()),
                Value::Text(r.content.clone()),
                Value::Text(r.category.clone()),
                r.session_id.clone().map_or(Value::Null, Value::Text),
                Value::Real(r.importance),
                Value::Integer(ts),
                Value::Integer(ts),
            ]);
        }
        let mut index_values = Vec::with_capacity(chunk.len() + 1);
        index_values.push(agent_id);
        index_values.extend(chunk.iter().map(|r| Value::Text(r.key.clone())));
        let upsert = Self::upsert_sql(chunk.len());
        let keep = chunk.len() == 1;
        let text: usize = chunk.iter().map(|r| r.key.len() + r.content.len()).sum();
        let close_after = text > SMALL_STORE_TEXT;
        let index = index::put_keys_sql(&agent.id, chunk.len());
        if self.writer.is_closed() {
            return Err(self.err("store")(sqlx::Error::PoolClosed));
        }
        let blocker = self.blocking_writer.clone();
        let written = crate::blocking::run(move || {
            blocker.store(&upsert, values, &index, index_values, keep, close_after)
        })
        .await;
        let returned = match written {
            Some(Ok(rows)) => rows,
            Some(Err(e)) => return Err(self.blocking_err("store", e)),
            None => {
                return Err(self.bad_row("store")(
                    "the writing thread stopped before the store finished".into(),
                ))
            }
        };
        let mut out = Vec::with_capacity(chunk.len());
        self.receipts(
            returned
                .into_iter()
                .map(|(k, id, created, seq)| Ok((k, id, created, seq))),
            agent,
            chunk,
            now,
            &mut out,
        )?;
        Ok(out)
    }

    /// An error of a blocking connection's statement, as the store reports it.
    fn blocking_err(&self, operation: &'static str, e: rows::ReadError) -> MemoryError {
        match e {
            rows::ReadError::Sql(e) => MemoryError::Backend {
                backend: BACKEND,
                location: self.location(),
                operation,
                reason: e.to_string(),
            },
            rows::ReadError::Row(reason) => self.bad_row(operation)(reason),
            rows::ReadError::Setup(reason) => MemoryError::Backend {
                backend: BACKEND,
                location: self.location(),
                operation,
                reason,
            },
        }
    }

    /// Recall without words: the allowlist's most recent rows.
    async fn recall_recent(
        &self,
        scope: &RecallScope,
        q: &RecallQuery,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        let category = q.category.as_deref();
        let mut qb = QueryBuilder::<Sqlite>::new("SELECT ");
        qb.push(ENTRY_COLUMNS);
        qb.push(", NULL FROM memories m JOIN agents a ON a.id = m.agent_id WHERE ");
        if !push_scope(&mut qb, scope, category) {
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
        qb.push(" ORDER BY m.updated_at DESC, m.seq DESC LIMIT ");
        qb.push_bind(i64::try_from(q.limit).unwrap_or(i64::MAX));
        let rows = qb
            .build_query_as::<EntryRow>()
            .fetch_all(&self.pool)
            .await
            .map_err(self.read_err("recall"))?;
        rows.into_iter()
            .map(EntryRow::into_entry)
            .collect::<Result<_, _>>()
            .map_err(self.bad_row("recall"))
    }

    /// The best rows of up to [`RECALL_GROUP`] agents in one statement: each agent's index
    /// gives the rows that match the words (and the categories and session asked, inside the
    /// index) with their BM25 rank, the best `limit` of all of them are kept (a bounded sort,
    /// no row read yet), and only those are joined to their rows. The allowlist is checked
    /// again in plain SQL on the rows returned.
    ///
    /// The indexes are not asked to sort (`ORDER BY rank` inside FTS5 prepares a statement of
    /// its own and sorts every match of each index); `LIMIT -1` keeps SQLite from flattening
    /// the union into the outer sort, which would ask them to.
    async fn recall_group(
        &self,
        group: &[(&ScopeEntry, Option<Vec<String>>)],
        terms: &[String],
        stats: &rank::ScopeStats,
        q: &RecallQuery,
    ) -> Result<Vec<EntryRow>, MemoryError> {
        let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
        let st = recall::rank_stmt(group, terms, stats, q.session.as_deref(), limit);
        // The text names the agents' tables: kept prepared while it repeats (an agent recalling
        // again), like any other statement of the connection's cache.
        let args = st.args().map_err(self.err("recall"))?;
        sqlx::query_as_with::<_, EntryRow, _>(&st.sql, args)
            .fetch_all(&self.pool)
            .await
            .map_err(self.read_err("recall"))
    }

    /// Both statements of a recall of up to [`RECALL_GROUP`] agents over the blocking
    /// connection, run on this task's thread ([`crate::blocking::run`]). `None` when anything failed (a peer's
    /// index gone, the connection unusable): the caller then takes the sqlx path, which
    /// handles a missing index and reports the error.
    async fn recall_blocking(
        &self,
        asked: &[(&ScopeEntry, Option<Vec<String>>)],
        terms: &[String],
        q: &RecallQuery,
    ) -> Option<Vec<EntryRow>> {
        if self.pool.is_closed() {
            return None;
        }
        let group: Vec<(ScopeEntry, Option<Vec<String>>)> = asked
            .iter()
            .map(|(e, c)| ((*e).clone(), c.clone()))
            .collect();
        let terms = terms.to_vec();
        let session = q.session.clone();
        let limit = i64::try_from(q.limit).unwrap_or(i64::MAX);
        let reader = self.reader.clone();
        let read = crate::blocking::run(move || {
            let group: Vec<(&ScopeEntry, Option<Vec<String>>)> =
                group.iter().map(|(e, c)| (e, c.clone())).collect();
            reader
                .with(|conn| recall::run_blocking(conn, &group, &terms, session.as_deref(), limit))
        })
        .await;
        match read {
            Some(Ok(rows)) => Some(rows),
            _ => None,
        }
    }

    /// The statistics of every index a recall asks, added up (see [`rank`]): rows and tokens
    /// from each index's averages record, and for each word the rows holding it, in one
    /// statement per [`RECALL_GROUP`] agents. An index that is gone (a peer purged elsewhere)
    /// counts as empty.
    async fn scope_stats(
        &self,
        asked: &[(&ScopeEntry, Option<Vec<String>>)],
        terms: &[String],
    ) -> Result<rank::ScopeStats, MemoryError> {
        let mut stats = rank::ScopeStats {
            rows: 0.0,
            tokens: 0.0,
            docs: vec![0.0; terms.len()],
        };
        for group in asked.chunks(RECALL_GROUP) {
            let st = recall::stats_stmt(group, terms);
            let args = st.args().map_err(self.err("recall"))?;
            let rows = match sqlx::query_with(&st.sql, args).fetch_all(&self.pool).await {
                Ok(rows) => rows,
                // A group naming an index that is gone: each index asked on its own.
                Err(_) if group.len() > 1 => {
                    let mut all = Vec::new();
                    for one in group.chunks(1) {
                        let part = Box::pin(self.scope_stats(one, terms)).await?;
                        all.push(part);
                    }
                    for part in all {
                        stats.add(&part);
                    }
                    continue;
                }
                Err(e) => {
                    let gone = !index::exists(&self.pool, &group[0].0.agent.id)
                        .await
                        .map_err(self.err("recall"))?;
                    if gone {
                        continue;
                    }
                    return Err(self.err("recall")(e));
                }
            };
            for row in rows {
                let block: Option<Vec<u8>> = row.try_get(0).map_err(self.err("recall"))?;
                let docs = (0..terms.len())
                    .map(|k| row.try_get::<i64, _>(k + 1))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(self.err("recall"))?;
                recall::add_stats_row(&mut stats, block.as_deref(), docs.into_iter())
                    .map_err(self.bad_row("recall"))?;
            }
        }
        Ok(stats)
    }

    /// A recall whose statement failed, asked again of the agents whose index still exists: a
    /// peer purged by another process since the allowlist was resolved has no rows to give
    /// (its index went with them) and does not fail the others' recall. When every index
    /// exists, the first error stands.
    async fn recall_present(
        &self,
        group: &[(&ScopeEntry, Option<Vec<String>>)],
        terms: &[String],
        stats: &rank::ScopeStats,
        q: &RecallQuery,
        first: MemoryError,
    ) -> Result<Vec<EntryRow>, MemoryError> {
        let names: Vec<String> = group
            .iter()
            .map(|(e, _)| index::index_table(&e.agent.id))
            .collect();
        let mut qb = QueryBuilder::<Sqlite>::new(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN (",
        );
        let mut list = qb.separated(", ");
        for n in &names {
            list.push_bind(n.clone());
        }
        qb.push(")");
        let present: Vec<String> = qb
            .build_query_scalar()
            .fetch_all(&self.pool)
            .await
            .map_err(self.err("recall"))?;
        if present.len() == names.len() {
            return Err(first);
        }
        let left: Vec<(&ScopeEntry, Option<Vec<String>>)> = group
            .iter()
            .zip(&names)
            .filter(|(_, n)| present.contains(n))
            .map(|((e, c), _)| (*e, c.clone()))
            .collect();
        if left.is_empty() {
            return Ok(Vec::new());
        }
        self.recall_group(&left, terms, stats, q).await
    }

    /// Re-creates an agent's index from its stored rows when the index is missing (an agent
    /// registered, or rows stored, by a program that did not keep the per-agent indexes).
    /// The agent, when the store knows it and its index exists: both read in one trip over
    /// the blocking reading connection, on this task's thread. `None` for anything else (not
    /// known, no index, the read failed): [`MemoryStore::ensure_agent`] then takes its full
    /// path, which creates what is missing and reports errors.
    async fn known_agent(&self, alias: &str) -> Option<AgentRef> {
        if self.pool.is_closed() {
            return None;
        }
        let reader = self.reader.clone();
        let name = alias.to_string();
        let found = crate::blocking::run(move || {
            use rusqlite::OptionalExtension;
            reader.with(|conn| {
                let id: Option<Vec<u8>> = conn
                    .prepare_cached("SELECT id FROM agents WHERE alias = ?1")?
                    .query_row([&name], |r| r.get(0))
                    .optional()?;
                let Some(id) = id.and_then(|b| Uuid::from_slice(&b).ok()) else {
                    return Ok(None);
                };
                let indexed: i64 = conn
                    .prepare_cached(
                        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
                    )?
                    .query_row([index::index_table(&id)], |r| r.get(0))?;
                Ok((indexed > 0).then_some(id))
            })
        })
        .await;
        match found {
            Some(Ok(Some(id))) => Some(AgentRef {
                id,
                alias: alias.to_string(),
            }),
            _ => None,
        }
    }

    async fn ensure_index(&self, agent: &AgentRef) -> Result<(), MemoryError> {
        if index::exists(&self.pool, &agent.id)
            .await
            .map_err(self.err("register agent"))?
        {
            return Ok(());
        }
        let mut tx = self
            .writer
            .begin_with("BEGIN IMMEDIATE")
            .await
            .map_err(self.err("register agent"))?;
        // Another process may have rebuilt it meanwhile: asked again under the write lock.
        if !index::exists(&mut *tx, &agent.id)
            .await
            .map_err(self.err("register agent"))?
        {
            index::create(&mut tx, &agent.id)
                .await
                .map_err(self.err("register agent"))?;
            index::put_after(&mut tx, &agent.id, i64::MIN)
                .await
                .map_err(self.err("register agent"))?;
        }
        tx.commit().await.map_err(self.err("register agent"))?;
        Ok(())
    }

    pub(crate) async fn agent_row_count(
        conn: &mut sqlx::SqliteConnection,
        id: Uuid,
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
        // The common case, an agent known with its index, in one read on this thread.
        if let Some(found) = self.known_agent(alias).await {
            return Ok(found);
        }
        if let Some(found) = self.lookup_agent(alias).await? {
            self.ensure_index(&found).await?;
            return Ok(found);
        }
        let id = Uuid::new_v4();
        // The agent and its index exist together or not at all.
        let mut tx = self
            .writer
            .begin()
            .await
            .map_err(self.err("register agent"))?;
        let added = sqlx::query(
            "INSERT INTO agents (id, alias, created_at) VALUES (?, ?, ?) ON CONFLICT (alias) DO NOTHING",
        )
        .bind(id)
        .bind(alias)
        .bind(format_ts(Utc::now()))
        .execute(&mut *tx)
        .await
        .map_err(self.err("register agent"))?;
        if added.rows_affected() > 0 {
            index::create(&mut tx, &id)
                .await
                .map_err(self.err("register agent"))?;
        }
        tx.commit().await.map_err(self.err("register agent"))?;
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

    async fn agent_id(&self, alias: &str) -> Result<Option<Uuid>, MemoryError> {
        sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
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
        if rows.len() <= STORE_CHUNK {
            return self.store_in_one_request(agent, rows, now).await;
        }
        let mut out = Vec::with_capacity(rows.len());
        // The rows and their index entries commit together or not at all.
        let mut tx = self.writer.begin().await.map_err(self.err("store"))?;
        for chunk in rows.chunks(STORE_CHUNK) {
            self.store_chunk(&mut tx, agent, chunk, now, &mut out)
                .await?;
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
        let row = sqlx::query_as::<_, EntryRow>(&sql)
            .bind(agent.id)
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.read_err("get"))?;
        row.map(EntryRow::into_entry)
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
        if terms.is_empty() {
            return self.recall_recent(scope, q).await;
        }
        let category = q.category.as_deref();
        // Each agent's entry with the categories its grant and the filter leave; an entry
        // that admits nothing is not asked.
        // An agent named twice in the scope is asked once, with the union of what its entries
        // allow (all categories if one of them does).
        let mut asked: Vec<(&ScopeEntry, Option<Vec<String>>)> = Vec::new();
        for e in &scope.entries {
            let Some(cats) = e.effective_categories(category) else {
                continue;
            };
            match asked.iter_mut().find(|(a, _)| a.agent.id == e.agent.id) {
                Some((_, have)) => *have = crate::grants::union_categories(have.take(), cats),
                None => asked.push((e, cats)),
            }
        }
        if asked.is_empty() {
            return Ok(Vec::new());
        }
        if asked.len() <= RECALL_GROUP {
            if let Some(rows) = self.recall_blocking(&asked, &terms, q).await {
                return rows
                    .into_iter()
                    .map(EntryRow::into_entry)
                    .collect::<Result<_, _>>()
                    .map_err(self.bad_row("recall"));
            }
        }
        let stats = self.scope_stats(&asked, &terms).await?;
        let mut best: Vec<EntryRow> = Vec::new();
        for group in asked.chunks(RECALL_GROUP) {
            let mut rows = match self.recall_group(group, &terms, &stats, q).await {
                Ok(rows) => rows,
                Err(e) => self.recall_present(group, &terms, &stats, q, e).await?,
            };
            if asked.len() <= RECALL_GROUP {
                best = rows;
                break;
            }
            best.append(&mut rows);
        }
        if asked.len() > RECALL_GROUP {
            best.sort_by(rows::EntryRow::order);
            best.truncate(q.limit);
        }
        best.into_iter()
            .map(EntryRow::into_entry)
            .collect::<Result<_, _>>()
            .map_err(self.bad_row("recall"))
    }

    async fn list_for_agent(&self, agent: &AgentRef, q: &ListQuery) -> Result<Page, MemoryError> {
        let filters = |qb: &mut QueryBuilder<'_, Sqlite>| {
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
        let mut count = QueryBuilder::<Sqlite>::new("SELECT count(*) FROM memories m");
        filters(&mut count);
        let total: i64 = count
            .build_query_scalar()
            .fetch_one(&self.pool)
            .await
            .map_err(self.err("list"))?;
        // By last change, newest first: the rows never changed come from
        // `memories_agent_created` (their creation is their last change), the others from
        // `memories_agent_changed`; SQLite merges the two ordered scans (no sort).
        let mut qb = QueryBuilder::<Sqlite>::new("SELECT ");
        qb.push(ENTRY_COLUMNS);
        qb.push(", m.created_at AS changed FROM memories m JOIN agents a ON a.id = m.agent_id");
        filters(&mut qb);
        qb.push(" AND m.updated_at = m.created_at UNION ALL SELECT ");
        qb.push(ENTRY_COLUMNS);
        qb.push(", m.updated_at AS changed FROM memories m JOIN agents a ON a.id = m.agent_id");
        filters(&mut qb);
        // A compound statement orders by result column: `changed`, then the id (the first).
        let changed = ENTRY_COLUMNS.split(',').count() + 1;
        qb.push(format!(
            " AND m.updated_at <> m.created_at ORDER BY {changed} DESC, 1 DESC LIMIT "
        ));
        qb.push_bind(q.limit.map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX)));
        qb.push(" OFFSET ");
        qb.push_bind(i64::try_from(q.offset).unwrap_or(i64::MAX));
        let rows = qb
            .build_query_as::<EntryRow>()
            .fetch_all(&self.pool)
            .await
            .map_err(self.read_err("list"))?;
        let entries = rows
            .into_iter()
            .map(EntryRow::into_entry)
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.bad_row("list"))?;
        Ok(Page::new(entries, total.max(0) as u64, q))
    }

    async fn forget_for_agent(&self, agent: &AgentRef, key: &str) -> Result<bool, MemoryError> {
        let mut tx = self.writer.begin().await.map_err(self.err("forget"))?;
        let seq: Option<i64> =
            sqlx::query_scalar("DELETE FROM memories WHERE agent_id = ? AND key = ? RETURNING seq")
                .bind(agent.id)
                .bind(key)
                .fetch_optional(&mut *tx)
                .await
                .map_err(self.err("forget"))?;
        if let Some(seq) = seq {
            index::remove(&mut tx, &agent.id, seq)
                .await
                .map_err(self.err("forget"))?;
        }
        tx.commit().await.map_err(self.err("forget"))?;
        Ok(seq.is_some())
    }

    async fn count_for_agent(&self, agent: &AgentRef) -> Result<u64, MemoryError> {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM memories WHERE agent_id = ?")
            .bind(agent.id)
            .fetch_one(&self.pool)
            .await
            .map_err(self.err("count"))?;
        Ok(n.max(0) as u64)
    }

    async fn categories_for_agent(&self, agent: &AgentRef) -> Result<Vec<String>, MemoryError> {
        sqlx::query_scalar(
            "SELECT DISTINCT category FROM memories WHERE agent_id = ? ORDER BY category",
        )
        .bind(agent.id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err("categories"))
    }

    async fn rename_agent(&self, old: &str, new: &str) -> Result<bool, MemoryError> {
        let mut tx = self.writer.begin().await.map_err(self.err("rename"))?;
        let target: Option<Uuid> = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
            .bind(new)
            .fetch_optional(&mut *tx)
            .await
            .map_err(self.err("rename"))?;
        if let Some(target) = target {
            if Self::agent_row_count(&mut tx, target)
                .await
                .map_err(self.err("rename"))?
                > 0
            {
                tx.rollback().await.map_err(self.err("rename"))?;
                return Err(self.taken(new));
            }
            // An empty registry row (created for a grant) does not block the rename.
            sqlx::query("DELETE FROM agents WHERE id = ?")
                .bind(target)
                .execute(&mut *tx)
                .await
                .map_err(self.err("rename"))?;
            index::drop(&mut tx, &target)
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
        if self.pool.is_closed() {
            return Err(self.err("export")(sqlx::Error::PoolClosed));
        }
        let reader = self.reader.clone();
        let after = after.map(|c| (micros(c.created_at), c.id));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // A page (1,000 rows, a millisecond or two) is read on this task's thread, like a store.
        let read = crate::blocking::run(move || reader.page(agent_id, after, limit)).await;
        match read {
            Some(Ok(rows)) => Ok(rows),
            Some(Err(e)) => Err(self.blocking_err("export", e)),
            None => Err(MemoryError::Backend {
                backend: BACKEND,
                location: self.location(),
                operation: "export",
                reason: "the reading thread failed".into(),
            }),
        }
    }

    async fn close(&self) {
        self.reader.close();
        self.blocking_writer.close();
        self.writer.close().await;
        self.pool.close().await;
    }

    async fn purge_agent(&self, alias: &str) -> Result<u64, MemoryError> {
        self.purge(alias).await
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

/// Whether SQLite answered `SQLITE_CORRUPT` (11) or `SQLITE_NOTADB` (26), extended codes
/// included (the primary code is the low byte): the file is damaged or is not a database.
fn is_corrupt(e: &sqlx::Error) -> bool {
    e.as_database_error()
        .and_then(sqlx::error::DatabaseError::code)
        .and_then(|c| c.parse::<i32>().ok())
        .is_some_and(|c| matches!(c & 0xff, 11 | 26))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Another connection (another process) holds the write lock when a one-row store starts and
    /// commits while the store waits: the store waits its turn and lands, after the other write.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_store_waits_behind_another_connections_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memory.db");
        let store = Arc::new(SqliteStore::open(&path).await.unwrap());
        let ann = store.ensure_agent("ann").await.unwrap();
        let first = vec![NewMemory::new("first", "stored before")];
        store
            .store_with_agent(&ann, &first, Utc::now())
            .await
            .unwrap();
        let other = rusqlite::Connection::open(&path).unwrap();
        other
            .execute_batch(
                "BEGIN IMMEDIATE; UPDATE memories SET importance = 0.9 WHERE key = 'first'",
            )
            .unwrap();
        let task = {
            let (store, ann) = (store.clone(), ann.clone());
            tokio::spawn(async move {
                let row = vec![NewMemory::new("second", "stored while another wrote")];
                store.store_with_agent(&ann, &row, Utc::now()).await
            })
        };
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(
            !task.is_finished(),
            "the store did not wait for the write lock"
        );
        other.execute_batch("COMMIT").unwrap();
        task.await.unwrap().unwrap();
        let rows: Vec<(String, f64)> = other
            .prepare("SELECT key, importance FROM memories ORDER BY seq")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            vec![("first".to_string(), 0.9), ("second".to_string(), 0.5)]
        );
        store.close().await;
    }

    /// A store of more than [`SMALL_STORE_TEXT`] bytes of text closes the blocking writer
    /// when it is done (its FTS5 term tables would stay at their grown size on that
    /// connection); a small one keeps it open for the next. Both stores land.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_large_store_does_not_leave_its_connection_behind() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(&dir.path().join("memory.db"))
            .await
            .unwrap();
        let ann = store.ensure_agent("ann").await.unwrap();
        let small = vec![NewMemory::new("one", "a small row")];
        store
            .store_with_agent(&ann, &small, Utc::now())
            .await
            .unwrap();
        assert!(store.blocking_writer.is_open());
        let large: Vec<NewMemory> = (0..200)
            .map(|i| NewMemory::new(format!("k{i}"), format!("word{i} and other words {i}")))
            .collect();
        assert!(
            large
                .iter()
                .map(|r| r.key.len() + r.content.len())
                .sum::<usize>()
                > SMALL_STORE_TEXT
        );
        store
            .store_with_agent(&ann, &large, Utc::now())
            .await
            .unwrap();
        assert!(!store.blocking_writer.is_open());
        store
            .store_with_agent(&ann, &small, Utc::now())
            .await
            .unwrap();
        assert!(store.blocking_writer.is_open());
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM memories")
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(n, 201);
        store.close().await;
    }
}
