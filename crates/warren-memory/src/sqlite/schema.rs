//! SQLite schema and its migrations. `memories_fts` is a contentless FTS5 index with two
//! columns: `body` (key + content) and `scope`, which holds one token per agent (`ag<uuid>`)
//! and one per (agent, category) (`ac<uuid>x<hex category>`), plus `se<hex session>`, so a
//! recall's allowlist and filters are an FTS5 expression evaluated inside the index, before
//! ranking and before the limit. The table's `rank` is BM25 over `body` only.

use sqlx::{Connection, SqliteConnection};

/// Ordered migrations; index + 1 is the schema version they lead to.
pub const MIGRATIONS: &[&str] = &[r#"
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
"#];

/// Applies the migrations not yet applied, each in its own transaction; returns the version.
pub async fn migrate(conn: &mut SqliteConnection) -> Result<i64, sqlx::Error> {
    sqlx::query("CREATE TABLE IF NOT EXISTS warren_memory_meta (version INTEGER NOT NULL)")
        .execute(&mut *conn)
        .await?;
    let current: Option<i64> = sqlx::query_scalar("SELECT max(version) FROM warren_memory_meta")
        .fetch_one(&mut *conn)
        .await?;
    let current = current.unwrap_or(0);
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let version = i as i64 + 1;
        if version <= current {
            continue;
        }
        let mut tx = conn.begin().await?;
        sqlx::raw_sql(sql).execute(&mut *tx).await?;
        sqlx::query("INSERT INTO warren_memory_meta (version) VALUES (?)")
            .bind(version)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
    }
    Ok(MIGRATIONS.len() as i64)
}
