//! Postgres schema (same tables as SQLite, under a configurable schema) and its migrations.
//! Full-text search uses a stored `tsvector` (`simple` configuration, like SQLite's
//! `unicode61`: no stemming, language-neutral) with a GIN index.

use sqlx::PgConnection;

/// Ordered migrations; `{s}` is replaced by the quoted schema name.
pub const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE {s}.agents (
    id          UUID PRIMARY KEY,
    alias       TEXT NOT NULL UNIQUE,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE {s}.memories (
    seq         BIGSERIAL NOT NULL,
    id          UUID PRIMARY KEY,
    agent_id    UUID NOT NULL REFERENCES {s}.agents (id),
    key         TEXT NOT NULL,
    content     TEXT NOT NULL,
    category    TEXT NOT NULL,
    session_id  TEXT,
    importance  DOUBLE PRECISION NOT NULL DEFAULT 0.5,
    created_at  TIMESTAMPTZ NOT NULL,
    updated_at  TIMESTAMPTZ NOT NULL,
    embedding   REAL[],
    tsv         TSVECTOR GENERATED ALWAYS AS (to_tsvector('simple', key || ' ' || content)) STORED,
    UNIQUE (agent_id, key)
);
CREATE INDEX memories_tsv ON {s}.memories USING GIN (tsv);
CREATE INDEX memories_agent_category ON {s}.memories (agent_id, category);
CREATE INDEX memories_agent_updated ON {s}.memories (agent_id, updated_at);
CREATE INDEX memories_agent_created ON {s}.memories (agent_id, created_at, id);
"#];

/// Checks a schema name: lowercase letters, digits and `_`, starting with a letter or `_`.
pub fn valid_schema_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_lowercase() || c == '_')
        && name.len() <= 63
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// Creates the schema if needed and applies the pending migrations under an advisory lock, so
/// two processes starting at once do not race (the runner of [`crate::migrate`]). A schema
/// migrated by a newer Warren is used as it is.
pub async fn migrate(conn: &mut PgConnection, schema: &str) -> Result<i64, sqlx::Error> {
    crate::migrate::run(
        conn,
        &MemorySchema {
            name: schema,
            s: format!("\"{schema}\""),
        },
    )
    .await
}

/// The memory schema `name` of a PostgreSQL database: its version in
/// `<schema>.warren_memory_meta`, its steps [`MIGRATIONS`].
struct MemorySchema<'a> {
    name: &'a str,
    /// The quoted name.
    s: String,
}

#[async_trait::async_trait]
impl crate::migrate::Schema<sqlx::Postgres> for MemorySchema<'_> {
    fn latest(&self) -> i64 {
        MIGRATIONS.len() as i64
    }

    async fn prepare(&self, tx: &mut PgConnection) -> Result<(), sqlx::Error> {
        let s = &self.s;
        sqlx::query("SELECT pg_advisory_xact_lock(hashtext($1))")
            .bind(format!("warren-memory:{}", self.name))
            .execute(&mut *tx)
            .await?;
        let create = format!(
            "CREATE SCHEMA IF NOT EXISTS {s}; \
             CREATE TABLE IF NOT EXISTS {s}.warren_memory_meta (version BIGINT NOT NULL)"
        );
        // Through the executor (a boxed `Send` future), not `RawSql::execute`, whose future is
        // not shown `Send` for every lifetime: a turn that opens the store stays `Send`.
        sqlx::Executor::execute(&mut *tx, sqlx::raw_sql(&create)).await?;
        Ok(())
    }

    async fn version(&self, tx: &mut PgConnection) -> Result<i64, sqlx::Error> {
        let current: Option<i64> = sqlx::query_scalar(&format!(
            "SELECT max(version) FROM {}.warren_memory_meta",
            self.s
        ))
        .fetch_one(&mut *tx)
        .await?;
        Ok(current.unwrap_or(0))
    }

    async fn step(&self, tx: &mut PgConnection, version: i64) -> Result<(), sqlx::Error> {
        let s = &self.s;
        let Some(sql) = usize::try_from(version - 1)
            .ok()
            .and_then(|i| MIGRATIONS.get(i))
        else {
            return Err(sqlx::Error::Protocol(format!(
                "no migration leads to version {version}"
            )));
        };
        let sql = sql.replace("{s}", s);
        sqlx::Executor::execute(&mut *tx, sqlx::raw_sql(&sql)).await?;
        sqlx::query(&format!(
            "INSERT INTO {s}.warren_memory_meta (version) VALUES ($1)"
        ))
        .bind(version)
        .execute(&mut *tx)
        .await?;
        Ok(())
    }

    fn newer(&self, _version: i64) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names() {
        for ok in ["warren", "_x", "w1_test"] {
            assert!(valid_schema_name(ok), "{ok}");
        }
        for bad in ["", "1w", "Warren", "a-b", "a\"b", "a;drop", &"a".repeat(64)] {
            assert!(!valid_schema_name(bad), "{bad}");
        }
    }
}
