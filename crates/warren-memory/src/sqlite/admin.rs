//! The SQLite half of restore: re-creating an agent from exported rows.

use chrono::Utc;
use uuid::Uuid;

use super::SqliteStore;
use crate::error::MemoryError;
use crate::types::{format_ts, ImportReport, MemoryEntry};

impl SqliteStore {
    /// Re-creates an agent from exported rows (see [`crate::traits::MemoryStore::import_agent`]).
    pub(crate) async fn import_rows(
        &self,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        let op = "import";
        let mut tx = self.pool.begin().await.map_err(self.err(op))?;
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
                id
            }
        };
        let (mut imported, mut skipped) = (0u64, 0u64);
        for r in rows {
            let taken: Option<i64> = sqlx::query_scalar("SELECT seq FROM memories WHERE id = ?")
                .bind(r.id)
                .fetch_optional(&mut *tx)
                .await
                .map_err(self.err(op))?;
            let row_id = if taken.is_some() {
                Uuid::new_v4()
            } else {
                r.id
            };
            let done = sqlx::query(
                "INSERT INTO memories (id, agent_id, key, content, category, session_id, importance, created_at, updated_at) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id, key) DO NOTHING",
            )
            .bind(row_id)
            .bind(id)
            .bind(&r.key)
            .bind(&r.content)
            .bind(&r.category)
            .bind(&r.session_id)
            .bind(r.importance)
            .bind(super::rows::micros(r.created_at))
            .bind(super::rows::micros(r.updated_at))
            .execute(&mut *tx)
            .await
            .map_err(self.err(op))?;
            if done.rows_affected() > 0 {
                imported += 1;
            } else {
                skipped += 1;
            }
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
