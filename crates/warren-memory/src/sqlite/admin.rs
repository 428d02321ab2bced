//! The SQLite half of the lifecycle's bulk operations: purging an agent, and re-creating one
//! from exported rows (restore, import).

use std::collections::HashSet;

use chrono::Utc;
use sqlx::Connection;
use uuid::Uuid;

use super::{index, SqliteStore};
use crate::error::MemoryError;
use crate::types::{format_ts, ImportReport, MemoryEntry};

/// Rows per `INSERT` statement of an import (9 parameters each, far below SQLite's 32,766):
/// one statement hands a whole chunk to SQLite's thread, and the same text is reused (prepared
/// once per connection) for every full chunk.
const IMPORT_CHUNK: usize = 500;

/// `PRAGMA cache_size` while an import or a purge writes (negative: KiB, so 16 MiB).
const BULK_CACHE_SIZE: i64 = -16_384;

/// `INSERT ... VALUES (...), (...) ON CONFLICT (agent_id, key) DO NOTHING` for `n` rows.
fn insert_sql(n: usize) -> String {
    let mut sql = String::with_capacity(160 + n * 30);
    sql.push_str(
        "INSERT INTO memories (id, agent_id, key, content, category, session_id, importance, created_at, updated_at) VALUES ",
    );
    for i in 0..n {
        if i > 0 {
            sql.push_str(", ");
        }
        sql.push_str("(?, ?, ?, ?, ?, ?, ?, ?, ?)");
    }
    sql.push_str(" ON CONFLICT (agent_id, key) DO NOTHING");
    sql
}

/// The ids among `n` given ones that a stored row already holds.
fn taken_sql(n: usize) -> String {
    let mut sql = String::with_capacity(40 + n * 3);
    sql.push_str("SELECT id FROM memories WHERE id IN (");
    for i in 0..n {
        sql.push_str(if i == 0 { "?" } else { ", ?" });
    }
    sql.push(')');
    sql
}

impl SqliteStore {
    /// Gives the writing connection a bigger page cache for one bulk transaction: the pages it
    /// touches stay in memory until the commit writes each of them once (the default 2 MB
    /// spills them to the log and reads them back). Returns the connection's own size.
    async fn bulk_cache(
        &self,
        conn: &mut sqlx::SqliteConnection,
        op: &'static str,
    ) -> Result<i64, MemoryError> {
        let before: i64 = sqlx::query_scalar("PRAGMA cache_size")
            .fetch_one(&mut *conn)
            .await
            .map_err(self.err(op))?;
        sqlx::query(&format!("PRAGMA cache_size = {BULK_CACHE_SIZE}"))
            .execute(&mut *conn)
            .await
            .map_err(self.err(op))?;
        Ok(before)
    }

    /// Puts the connection's own page cache size back; a connection where that fails is not
    /// given back to the pool with the bigger cache.
    async fn restore_cache(mut conn: sqlx::pool::PoolConnection<sqlx::Sqlite>, before: i64) {
        let reset = sqlx::query(&format!("PRAGMA cache_size = {before}"))
            .execute(&mut *conn)
            .await;
        if reset.is_err() {
            drop(conn.detach());
        }
    }

    /// Deletes every row of `alias`, its `agents` row and its index in one transaction (all or
    /// nothing). The index goes as a whole (`DROP TABLE`): no entry is deleted one by one and
    /// no other agent's index is touched.
    pub(crate) async fn purge(&self, alias: &str) -> Result<u64, MemoryError> {
        let mut conn = self.writer.acquire().await.map_err(self.err("purge"))?;
        let before = self.bulk_cache(&mut conn, "purge").await?;
        let out = self.purge_in(&mut conn, alias).await;
        Self::restore_cache(conn, before).await;
        out
    }

    async fn purge_in(
        &self,
        conn: &mut sqlx::SqliteConnection,
        alias: &str,
    ) -> Result<u64, MemoryError> {
        let op = "purge";
        let mut tx = conn.begin().await.map_err(self.err(op))?;
        let found: Option<Uuid> = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
            .bind(alias)
            .fetch_optional(&mut *tx)
            .await
            .map_err(self.err(op))?;
        let Some(id) = found else {
            tx.rollback().await.map_err(self.err(op))?;
            return Ok(0);
        };
        index::drop(&mut tx, &id).await.map_err(self.err(op))?;
        let done = sqlx::query("DELETE FROM memories WHERE agent_id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(self.err(op))?;
        sqlx::query("DELETE FROM agents WHERE id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await
            .map_err(self.err(op))?;
        tx.commit().await.map_err(self.err(op))?;
        Ok(done.rows_affected())
    }

    /// Re-creates an agent from exported rows (see [`crate::traits::MemoryStore::import_agent`]),
    /// in one transaction: chunks of [`IMPORT_CHUNK`] rows, each one statement finding the ids
    /// already taken and one multi-row `INSERT`. A row whose id is taken (or given to an earlier
    /// row of the call) gets a new id; a row whose key the agent has is skipped.
    pub(crate) async fn import_rows(
        &self,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        let mut conn = self.writer.acquire().await.map_err(self.err("import"))?;
        let before = self.bulk_cache(&mut conn, "import").await?;
        let out = self.import_in(&mut conn, alias, agent_id, rows).await;
        Self::restore_cache(conn, before).await;
        out
    }

    async fn import_in(
        &self,
        conn: &mut sqlx::SqliteConnection,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        let op = "import";
        let mut tx = conn.begin().await.map_err(self.err(op))?;
        let existing: Option<Uuid> = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
            .bind(alias)
            .fetch_optional(&mut *tx)
            .await
            .map_err(self.err(op))?;
        let mut id = None;
        if let Some(existing) = existing {
            if existing == agent_id {
                id = Some(agent_id);
            } else if Self::agent_row_count(&mut tx, existing)
                .await
                .map_err(self.err(op))?
                > 0
            {
                tx.rollback().await.map_err(self.err(op))?;
                return Err(self.taken(alias));
            } else {
                sqlx::query("DELETE FROM agents WHERE id = ?")
                    .bind(existing)
                    .execute(&mut *tx)
                    .await
                    .map_err(self.err(op))?;
                index::drop(&mut tx, &existing)
                    .await
                    .map_err(self.err(op))?;
            }
        }
        let id = match id {
            Some(id) => id,
            None => {
                let holder: Option<String> =
                    sqlx::query_scalar("SELECT alias FROM agents WHERE id = ?")
                        .bind(agent_id)
                        .fetch_optional(&mut *tx)
                        .await
                        .map_err(self.err(op))?;
                let id = if holder.is_none() {
                    agent_id
                } else {
                    Uuid::new_v4()
                };
                sqlx::query("INSERT INTO agents (id, alias, created_at) VALUES (?, ?, ?)")
                    .bind(id)
                    .bind(alias)
                    .bind(format_ts(Utc::now()))
                    .execute(&mut *tx)
                    .await
                    .map_err(self.err(op))?;
                index::create(&mut tx, &id).await.map_err(self.err(op))?;
                id
            }
        };
        // Rows appended from here on get a `seq` above every stored one: the index takes them
        // in one statement at the end.
        let last: i64 = sqlx::query_scalar("SELECT coalesce(max(seq), 0) FROM memories")
            .fetch_one(&mut *tx)
            .await
            .map_err(self.err(op))?;
        let (mut imported, mut skipped) = (0u64, 0u64);
        // Row ids given to earlier chunks of this call (two rows of one batch never share one).
        let mut given: HashSet<Uuid> = HashSet::with_capacity(rows.len());
        for chunk in rows.chunks(IMPORT_CHUNK) {
            let (insert, taken_q) = (insert_sql(chunk.len()), taken_sql(chunk.len()));
            // Full chunks share one prepared statement per connection; the shorter last chunk of
            // a call is prepared for itself and not kept (its size varies from call to call).
            let keep = chunk.len() == IMPORT_CHUNK;
            // The ids of this chunk already held by a stored row, in one statement.
            let mut q = sqlx::query_scalar::<_, Uuid>(&taken_q).persistent(keep);
            for r in chunk {
                q = q.bind(r.id);
            }
            let taken: HashSet<Uuid> = q
                .fetch_all(&mut *tx)
                .await
                .map_err(self.err(op))?
                .into_iter()
                .collect();
            let mut q = sqlx::query(&insert).persistent(keep);
            for r in chunk {
                let row_id = if taken.contains(&r.id) || !given.insert(r.id) {
                    Uuid::new_v4()
                } else {
                    r.id
                };
                q = q
                    .bind(row_id)
                    .bind(id)
                    .bind(&r.key)
                    .bind(&r.content)
                    .bind(&r.category)
                    .bind(&r.session_id)
                    .bind(r.importance)
                    .bind(super::rows::micros(r.created_at))
                    .bind(super::rows::micros(r.updated_at));
            }
            // A key the agent already has is left as it is (`DO NOTHING`).
            let done = q.execute(&mut *tx).await.map_err(self.err(op))?;
            let n = chunk.len() as u64;
            let written = done.rows_affected().min(n);
            imported += written;
            skipped += n - written;
        }
        index::put_after(&mut tx, &id, last)
            .await
            .map_err(self.err(op))?;
        tx.commit().await.map_err(self.err(op))?;
        Ok(ImportReport {
            agent_id: id,
            kept_agent_id: id == agent_id,
            imported,
            skipped,
        })
    }
}
