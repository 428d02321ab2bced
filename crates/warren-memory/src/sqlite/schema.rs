//! SQLite schema and its migrations.
//!
//! Since version 4 the recency index, `memories_agent_changed`, holds only the rows changed
//! since they were stored (`updated_at <> created_at`): a row that was never changed is found
//! in `memories_agent_created`, where its creation time is its last change. A store of a new
//! row then writes one index page fewer (nine pages to the write-ahead log become eight), and
//! a listing by last change merges the two indexes (see `list_for_agent`).
//!
//! Versions 1 and 2 kept one contentless FTS5 index, `memories_fts`, for every agent, filled by
//! triggers on `memories`, with the agent as a token of a `scope` column. Since version 3 each
//! agent has an index of its own, written by the store's statements (see [`super::index`]).
//!
//! Since version 2 the keys are 16-byte UUID blobs (agents, rows and the row's agent) and the
//! row times are integer microseconds since the Unix epoch (UTC): the same order as the
//! version 1 text, in a third of the bytes of every row and of every index holding them.

use sqlx::SqliteConnection;
use uuid::Uuid;

use super::index;

/// The schema version this code writes.
pub const VERSION: i64 = 4;

/// Ordered migrations written in SQL; index + 1 is the schema version they lead to. Version 3
/// is [`migrate_3`], version 4 [`MIGRATION_4`].
pub const MIGRATIONS: &[&str] = &[
    r#"
CREATE TABLE agents (
    id          TEXT PRIMARY KEY NOT NULL,
    alias       TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);
CREATE TABLE memories (
    seq         INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    agent_id    TEXT NOT NULL REFERENCES agents(id),
    key         TEXT NOT NULL,
    content     TEXT NOT NULL,
    category    TEXT NOT NULL,
    session_id  TEXT,
    importance  REAL NOT NULL DEFAULT 0.5,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    embedding   BLOB,
    UNIQUE (agent_id, key)
);
CREATE INDEX memories_agent_updated ON memories (agent_id, updated_at);
CREATE INDEX memories_agent_created ON memories (agent_id, created_at, id);
CREATE VIRTUAL TABLE memories_fts USING fts5(
    body, scope, content = '', contentless_delete = 1, tokenize = 'unicode61'
);
INSERT INTO memories_fts (memories_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)');
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, body, scope) VALUES (
        new.seq,
        new.key || ' ' || new.content,
        'ag' || replace(new.agent_id, '-', '') || ' ac' || replace(new.agent_id, '-', '')
            || 'x' || lower(hex(new.category))
            || CASE WHEN new.session_id IS NULL THEN '' ELSE ' se' || lower(hex(new.session_id)) END
    );
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.seq;
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, content, category, session_id, agent_id ON memories
BEGIN
    DELETE FROM memories_fts WHERE rowid = old.seq;
    INSERT INTO memories_fts (rowid, body, scope) VALUES (
        new.seq,
        new.key || ' ' || new.content,
        'ag' || replace(new.agent_id, '-', '') || ' ac' || replace(new.agent_id, '-', '')
            || 'x' || lower(hex(new.category))
            || CASE WHEN new.session_id IS NULL THEN '' ELSE ' se' || lower(hex(new.session_id)) END
    );
END;
"#,
    MIGRATION_2,
];

/// Version 2: blob keys and integer times (see the module documentation), the same rows and
/// `seq` values, so the FTS index (keyed by `seq`, with the same scope tokens) is kept as is.
const MIGRATION_2: &str = r#"
CREATE TABLE agents_v2 (
    id          BLOB PRIMARY KEY NOT NULL,
    alias       TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);
INSERT INTO agents_v2 (id, alias, created_at)
    SELECT unhex(replace(id, '-', '')), alias, created_at FROM agents;
CREATE TABLE memories_v2 (
    seq         INTEGER PRIMARY KEY,
    id          BLOB NOT NULL UNIQUE,
    agent_id    BLOB NOT NULL REFERENCES agents(id),
    key         TEXT NOT NULL,
    content     TEXT NOT NULL,
    category    TEXT NOT NULL,
    session_id  TEXT,
    importance  REAL NOT NULL DEFAULT 0.5,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    embedding   BLOB,
    UNIQUE (agent_id, key)
);
INSERT INTO memories_v2 (seq, id, agent_id, key, content, category, session_id, importance,
                         created_at, updated_at, embedding)
    SELECT seq, unhex(replace(id, '-', '')), unhex(replace(agent_id, '-', '')), key, content,
           category, session_id, importance,
           unixepoch(substr(created_at, 1, 19)) * 1000000
               + CASE WHEN substr(created_at, 20, 1) = '.'
                      THEN CAST(substr(substr(created_at, 21, 6) || '000000', 1, 6) AS INTEGER)
                      ELSE 0 END,
           unixepoch(substr(updated_at, 1, 19)) * 1000000
               + CASE WHEN substr(updated_at, 20, 1) = '.'
                      THEN CAST(substr(substr(updated_at, 21, 6) || '000000', 1, 6) AS INTEGER)
                      ELSE 0 END,
           embedding
    FROM memories ORDER BY seq;
DROP TABLE memories;
DROP TABLE agents;
ALTER TABLE agents_v2 RENAME TO agents;
ALTER TABLE memories_v2 RENAME TO memories;
CREATE INDEX memories_agent_updated ON memories (agent_id, updated_at);
CREATE INDEX memories_agent_created ON memories (agent_id, created_at, id);
CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts (rowid, body, scope) VALUES (
        new.seq,
        new.key || ' ' || new.content,
        'ag' || lower(hex(new.agent_id)) || ' ac' || lower(hex(new.agent_id))
            || 'x' || lower(hex(new.category))
            || CASE WHEN new.session_id IS NULL THEN '' ELSE ' se' || lower(hex(new.session_id)) END
    );
END;
CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
    DELETE FROM memories_fts WHERE rowid = old.seq;
END;
CREATE TRIGGER memories_fts_update AFTER UPDATE OF key, content, category, session_id, agent_id ON memories
BEGIN
    DELETE FROM memories_fts WHERE rowid = old.seq;
    INSERT INTO memories_fts (rowid, body, scope) VALUES (
        new.seq,
        new.key || ' ' || new.content,
        'ag' || lower(hex(new.agent_id)) || ' ac' || lower(hex(new.agent_id))
            || 'x' || lower(hex(new.category))
            || CASE WHEN new.session_id IS NULL THEN '' ELSE ' se' || lower(hex(new.session_id)) END
    );
END;
"#;

/// Version 3: the shared index and its triggers go; every agent gets its own index, filled
/// from its stored rows (the same `seq` keys, the same words and the same category and session
/// filters, now per agent).
async fn migrate_3(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    sqlx::Executor::execute(
        &mut *conn,
        sqlx::raw_sql(
            "DROP TRIGGER IF EXISTS memories_fts_insert; \
             DROP TRIGGER IF EXISTS memories_fts_delete; \
             DROP TRIGGER IF EXISTS memories_fts_update; \
             DROP TABLE IF EXISTS memories_fts;",
        ),
    )
    .await?;
    let agents: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM agents ORDER BY id")
        .fetch_all(&mut *conn)
        .await?;
    for id in agents {
        index::create(conn, &id).await?;
        index::put_after(conn, &id, i64::MIN).await?;
    }
    Ok(())
}

/// Version 4: the recency index keeps only the rows changed since they were stored (see the
/// module documentation); ties are ordered by id, as in `memories_agent_created`.
const MIGRATION_4: &str = "DROP INDEX IF EXISTS memories_agent_updated; \
     CREATE INDEX memories_agent_changed ON memories (agent_id, updated_at, id) \
     WHERE updated_at <> created_at;";

/// Removes the planner statistics of FTS5's own tables (the next connections plan without
/// them). `PRAGMA optimize` on a new file records an index's `_data` table with its first two rows;
/// with that figure the planner scans the whole table for FTS5's
/// `DELETE ... WHERE id >= ? AND id <= ?`, which drops a merged segment, so once the index
/// has grown every merge (a few per hundred stores) read all of it. Without statistics it
/// uses the rowid range, as for every other statement FTS5 runs on these tables.
pub async fn forget_fts_statistics(conn: &mut SqliteConnection) -> Result<(), sqlx::Error> {
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_schema WHERE name IN ('sqlite_stat1', 'sqlite_stat4')",
    )
    .fetch_all(&mut *conn)
    .await?;
    for t in tables {
        sqlx::query(&format!("DELETE FROM {t} WHERE tbl LIKE ? ESCAPE '\\'"))
            .bind(index::INDEX_TABLES_LIKE)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

/// Applies the migrations not yet applied, each in its own transaction (the runner of
/// [`crate::migrate`]); returns the version.
///
/// Each step takes the write lock first (`BEGIN IMMEDIATE`) and reads the version inside its
/// transaction, so two processes opening an old file at once migrate it once: the second finds
/// the step done. A file written by a newer version of Warren is refused, not written.
pub async fn migrate(conn: &mut SqliteConnection) -> Result<i64, sqlx::Error> {
    sqlx::query("CREATE TABLE IF NOT EXISTS warren_memory_meta (version INTEGER NOT NULL)")
        .execute(&mut *conn)
        .await?;
    // Rebuilding a table (version 2) drops and renames tables that reference each other: the
    // references are checked once the rebuild is done instead of row by row.
    sqlx::query("PRAGMA foreign_keys = OFF")
        .execute(&mut *conn)
        .await?;
    crate::migrate::run(conn, &MemoryFile).await?;
    sqlx::query("PRAGMA foreign_keys = ON")
        .execute(&mut *conn)
        .await?;
    Ok(VERSION)
}

/// The memory file's schema: its version in `warren_memory_meta`, its steps [`MIGRATIONS`],
/// [`migrate_3`] and [`MIGRATION_4`].
struct MemoryFile;

#[async_trait::async_trait]
impl crate::migrate::Schema<sqlx::Sqlite> for MemoryFile {
    fn latest(&self) -> i64 {
        VERSION
    }

    fn begin(&self) -> &'static str {
        "BEGIN IMMEDIATE"
    }

    async fn version(&self, tx: &mut SqliteConnection) -> Result<i64, sqlx::Error> {
        let current: Option<i64> =
            sqlx::query_scalar("SELECT max(version) FROM warren_memory_meta")
                .fetch_one(&mut *tx)
                .await?;
        Ok(current.unwrap_or(0))
    }

    async fn step(&self, tx: &mut SqliteConnection, version: i64) -> Result<(), sqlx::Error> {
        let sql = match version {
            3 => None,
            4 => Some(MIGRATION_4),
            v => usize::try_from(v - 1)
                .ok()
                .and_then(|i| MIGRATIONS.get(i))
                .copied(),
        };
        match sql {
            // Through the executor (a boxed `Send` future), not `RawSql::execute`, whose future
            // is not shown `Send` for every lifetime: a turn that opens the store stays `Send`.
            Some(sql) => {
                sqlx::Executor::execute(&mut *tx, sqlx::raw_sql(sql)).await?;
            }
            None => migrate_3(tx).await?,
        }
        let broken: Vec<String> =
            sqlx::query_scalar("SELECT \"table\" FROM pragma_foreign_key_check")
                .fetch_all(&mut *tx)
                .await?;
        if let Some(table) = broken.first() {
            return Err(sqlx::Error::Protocol(format!(
                "migration to version {version} left rows of `{table}` without their agent"
            )));
        }
        sqlx::query("INSERT INTO warren_memory_meta (version) VALUES (?)")
            .bind(version)
            .execute(&mut *tx)
            .await?;
        Ok(())
    }

    fn newer(&self, version: i64) -> Option<String> {
        Some(format!(
            "the memory file is at schema version {version}, written by a newer Warren \
             (this one reads up to version {VERSION})"
        ))
    }
}
