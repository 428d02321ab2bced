//! A memory file written by the first schema (text UUID keys, text times, one full-text index
//! shared by every agent) opens with the current code: it is migrated once (versions 2 and 3),
//! and recall, export and get answer the same rows.

use futures::TryStreamExt;
use sqlx::Connection;
use uuid::Uuid;
use warren_memory::{
    export_agent, parse_ts, AgentRef, MemoryStore, NewMemory, RecallQuery, RecallScope, ScopeEntry,
    SqliteStore,
};

/// The first schema, as it was shipped (version 1).
const SCHEMA_V1: &str = r#"
CREATE TABLE warren_memory_meta (version INTEGER NOT NULL);
INSERT INTO warren_memory_meta (version) VALUES (1);
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
"#;

const WORDS: [&str; 8] = [
    "harbour", "lantern", "copper", "meadow", "signal", "orchard", "granite", "ferry",
];

fn agent(n: u128, alias: &str) -> AgentRef {
    AgentRef {
        id: Uuid::from_u128(0x1234_5678_9abc_def0_0000_0000_0000_0000 + n),
        alias: alias.to_string(),
    }
}

/// `(alias, key)` of a recall, for comparing answers.
fn answer(rows: &[warren_memory::MemoryEntry]) -> Vec<(String, String)> {
    rows.iter()
        .map(|r| (r.agent.clone(), r.key.clone()))
        .collect()
}

/// The first schema's scope tokens: every row of an agent, and an agent's rows of a category.
fn v1_agent_token(a: &AgentRef) -> String {
    format!("ag{}", a.id.simple())
}

fn v1_category_token(a: &AgentRef, category: &str) -> String {
    let hex: String = category.bytes().map(|b| format!("{b:02x}")).collect();
    format!("ac{}x{hex}", a.id.simple())
}

#[tokio::test]
async fn a_first_schema_file_migrates_once_and_answers_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let (ann, ben, cat) = (agent(1, "ann"), agent(2, "ben"), agent(3, "cat"));
    let rows_per_agent = 300;

    // Write a version 1 file the way the first code did: text UUIDs, text times.
    {
        let opts = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true);
        let mut c = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
        sqlx::raw_sql(SCHEMA_V1).execute(&mut c).await.unwrap();
        for a in [&ann, &ben, &cat] {
            sqlx::query("INSERT INTO agents (id, alias, created_at) VALUES (?, ?, ?)")
                .bind(a.id.to_string())
                .bind(&a.alias)
                .bind("2026-01-01T00:00:00.000000Z")
                .execute(&mut c)
                .await
                .unwrap();
        }
        let mut n = 0u64;
        for (ai, a) in [&ann, &ben, &cat].into_iter().enumerate() {
            for i in 0..rows_per_agent {
                n += 1;
                let words: Vec<&str> = (0..(3 + i % 5))
                    .map(|j| WORDS[(i * 7 + j * 3 + ai) % WORDS.len()])
                    .collect();
                let session = (i % 4 == 0).then(|| format!("s{}", i % 3));
                sqlx::query(
                    "INSERT INTO memories (id, agent_id, key, content, category, session_id, \
                     importance, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                )
                .bind(Uuid::from_u128(0xabcd_0000 + u128::from(n)).to_string())
                .bind(a.id.to_string())
                .bind(format!("k{i:03}"))
                .bind(format!("{} note {i}", words.join(" ")))
                .bind(["core", "daily", "projects"][i % 3])
                .bind(session)
                .bind((i % 10) as f64 / 10.0)
                .bind(format!("2026-02-03T04:05:{:02}.{:06}Z", i % 60, n * 7))
                .bind(format!("2026-03-03T04:05:{:02}.{:06}Z", i % 60, n * 11))
                .execute(&mut c)
                .await
                .unwrap();
            }
        }
        // A row deleted under version 1 must stay deleted in the index too.
        sqlx::query("DELETE FROM memories WHERE key = 'k007'")
            .execute(&mut c)
            .await
            .unwrap();
        c.close().await.unwrap();
    }

    // The answers of the first schema's own recall (scope inside the FTS expression), computed
    // on the old file before the new code touches it.
    let scope = RecallScope {
        entries: vec![
            ScopeEntry {
                agent: ann.clone(),
                categories: None,
            },
            ScopeEntry {
                agent: ben.clone(),
                categories: Some(vec!["core".into()]),
            },
        ],
    };
    let queries = [
        "harbour",
        "copper meadow",
        "ferry signal granite",
        "note 17",
        "harbour lantern",
    ];
    let mut expected = Vec::new();
    {
        let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(&path);
        let mut c = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
        for q in queries {
            let terms = warren_memory::text::query_terms(q);
            let expr = format!(
                "body : ({}) AND scope : ({} OR {})",
                warren_memory::text::fts_terms_expr(&terms),
                v1_agent_token(&ann),
                v1_category_token(&ben, "core")
            );
            let got: Vec<(String, String)> = sqlx::query_as(
                "SELECT a.alias, m.key FROM (SELECT rowid AS seq, rank FROM memories_fts \
                 WHERE memories_fts MATCH ? ORDER BY rank LIMIT 1000) f \
                 JOIN memories m ON m.seq = f.seq JOIN agents a ON a.id = m.agent_id",
            )
            .bind(expr)
            .fetch_all(&mut c)
            .await
            .unwrap();
            let mut got = got;
            got.sort();
            assert!(!got.is_empty(), "{q}: the old file answers");
            expected.push(got);
        }
        c.close().await.unwrap();
    }

    let store = SqliteStore::open(&path).await.unwrap();
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM warren_memory_meta ORDER BY version")
            .fetch_all(store.pool())
            .await
            .unwrap();
    assert_eq!(
        versions,
        vec![1, 2, 3, 4],
        "versions 2, 3 and 4 applied once"
    );
    // The shared index is gone; each agent has its own.
    let tables: Vec<String> = sqlx::query_scalar(
        "SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL%' \
         ORDER BY name",
    )
    .fetch_all(store.pool())
    .await
    .unwrap();
    let mut want: Vec<String> = [&ann, &ben, &cat]
        .iter()
        .map(|a| warren_memory::sqlite::index::index_table(&a.id))
        .collect();
    want.sort();
    assert_eq!(tables, want);
    let triggers: i64 =
        sqlx::query_scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'trigger'")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(triggers, 0);
    let kinds: (String, String, String, String) = sqlx::query_as(
        "SELECT typeof(id), typeof(agent_id), typeof(created_at), typeof(updated_at) \
         FROM memories LIMIT 1",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(
        kinds,
        (
            "blob".into(),
            "blob".into(),
            "integer".into(),
            "integer".into()
        )
    );

    // The same rows match, ranked by BM25 over each agent's own rows (best first).
    for (q, want) in queries.iter().zip(&expected) {
        let rows = store
            .recall_for_agents(&scope, &RecallQuery::new(*q).limit(1000))
            .await
            .unwrap();
        let mut got = answer(&rows);
        got.sort();
        assert_eq!(&got, want, "{q}: same rows after the migration");
        let scores: Vec<f64> = rows.iter().map(|r| r.score.unwrap_or(f64::NAN)).collect();
        assert!(
            scores.windows(2).all(|w| w[0] >= w[1]),
            "{q}: ranked, best first: {scores:?}"
        );
        // A limit keeps the best of them (rows of equal score may be either).
        let top = store
            .recall_for_agents(&scope, &RecallQuery::new(*q).limit(3))
            .await
            .unwrap();
        let top: Vec<f64> = top.iter().map(|r| r.score.unwrap_or(f64::NAN)).collect();
        assert_eq!(top, scores[..scores.len().min(3)], "{q}");
    }

    // Every field of a row survives, times to the microsecond.
    let row = store.get_for_agent(&ben, "k004").await.unwrap().unwrap();
    assert_eq!(row.agent_id, ben.id);
    assert_eq!(row.category, "daily");
    assert_eq!(row.session_id.as_deref(), Some("s1"));
    assert_eq!(row.importance, 0.4);
    assert_eq!(row.id, Uuid::from_u128(0xabcd_0000 + 305));
    assert_eq!(
        Some(row.created_at),
        parse_ts(&format!("2026-02-03T04:05:04.{:06}Z", 305 * 7))
    );
    assert_eq!(
        Some(row.updated_at),
        parse_ts(&format!("2026-03-03T04:05:04.{:06}Z", 305 * 11))
    );
    assert!(store.get_for_agent(&ann, "k007").await.unwrap().is_none());
    let nothing = store
        .recall_for_agents(&scope, &RecallQuery::new("k007").limit(10))
        .await
        .unwrap();
    assert!(nothing.is_empty(), "{:?}", answer(&nothing));

    // Export sees every row of the agent, in order.
    let store = std::sync::Arc::new(store);
    let out: Vec<_> = export_agent(store.clone(), cat.id)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(out.len(), rows_per_agent - 1);
    assert!(out
        .windows(2)
        .all(|w| (w[0].created_at, w[0].id) < (w[1].created_at, w[1].id)));

    // New rows go on working next to the migrated ones, and a second open migrates nothing.
    store
        .store_with_agent(
            &ann,
            &[NewMemory::new("fresh", "harbour lantern after the move")],
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    store.close().await;
    let again = SqliteStore::open(&path).await.unwrap();
    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM warren_memory_meta ORDER BY version")
            .fetch_all(again.pool())
            .await
            .unwrap();
    assert_eq!(versions, vec![1, 2, 3, 4], "no second migration");
    let hits = again
        .recall_for_agents(&scope, &RecallQuery::new("harbour lantern").limit(1000))
        .await
        .unwrap();
    assert!(hits.iter().any(|r| r.key == "fresh"));
    assert_eq!(hits.len(), expected[4].len() + 1);
    again.close().await;
}

const MIGRATE_CHILD_ENV: &str = "WARREN_TEST_MIGRATE_CHILD_DB";
const BIG_ROWS: i64 = 8_000;

/// A first-schema file with three agents of [`BIG_ROWS`] rows each (written in one statement
/// per agent, indexed by the first schema's trigger), big enough that migrating it takes a
/// while.
async fn big_v1_file(path: &std::path::Path) -> Vec<AgentRef> {
    let opts = sqlx::sqlite::SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal);
    let mut c = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
    sqlx::raw_sql(SCHEMA_V1).execute(&mut c).await.unwrap();
    let agents = vec![agent(1, "ann"), agent(2, "ben"), agent(3, "cat")];
    for (n, a) in agents.iter().enumerate() {
        sqlx::query("INSERT INTO agents (id, alias, created_at) VALUES (?, ?, ?)")
            .bind(a.id.to_string())
            .bind(&a.alias)
            .bind("2026-01-01T00:00:00.000000Z")
            .execute(&mut c)
            .await
            .unwrap();
        sqlx::query(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) \
             INSERT INTO memories (id, agent_id, key, content, category, session_id, importance, \
             created_at, updated_at) \
             SELECT printf('%08x-0000-4000-8000-%012x', ?, i), ?, 'k' || i, \
                    'harbour lantern note ' || i || ' zq' || ?, \
                    CASE i % 3 WHEN 0 THEN 'core' WHEN 1 THEN 'daily' ELSE 'projects' END, \
                    NULL, 0.5, '2026-02-03T04:05:06.000000Z', '2026-02-03T04:05:06.000000Z' \
             FROM n",
        )
        .bind(BIG_ROWS)
        .bind(n as i64 + 1)
        .bind(a.id.to_string())
        .bind(&a.alias)
        .execute(&mut c)
        .await
        .unwrap();
    }
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .execute(&mut c)
        .await
        .unwrap();
    c.close().await.unwrap();
    agents
}

/// The versions recorded in a file, read without migrating it.
async fn versions(path: &std::path::Path) -> Vec<i64> {
    let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(path);
    let mut c = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
    let v = sqlx::query_scalar("SELECT version FROM warren_memory_meta ORDER BY version")
        .fetch_all(&mut c)
        .await
        .unwrap();
    c.close().await.unwrap();
    v
}

/// Opening an old file in a process that is killed while it migrates: the file holds the
/// versions that committed, whole (each version is one transaction), and the next open
/// finishes the migration with every row found by its words through its agent's index.
#[tokio::test]
async fn a_migration_killed_part_way_is_finished_by_the_next_open() {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template.db");
    let agents = big_v1_file(&template).await;
    let exe = std::env::current_exe().unwrap();
    let mut mid = 0;
    for (i, delay) in [0u64, 30, 100, 250, 600].into_iter().enumerate() {
        let db = dir.path().join(format!("attempt{i}.db"));
        std::fs::copy(&template, &db).unwrap();
        let mut child = std::process::Command::new(&exe)
            .args([
                "migration::migrate_child",
                "--exact",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(MIGRATE_CHILD_ENV, &db)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // The child says when it starts opening the file; the kill comes `delay` after that.
        let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("@@opening") {
            line.clear();
            let n = std::io::BufRead::read_line(&mut out, &mut line).unwrap();
            assert!(
                n > 0,
                "attempt {i}: the child ended before opening the file"
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(delay));
        let finished = child.try_wait().unwrap().is_some();
        let _ = child.kill();
        let _ = child.wait();
        let left = versions(&db).await;
        assert!(
            [vec![1], vec![1, 2], vec![1, 2, 3], vec![1, 2, 3, 4]].contains(&left),
            "attempt {i}: {left:?}"
        );
        if !finished && left.len() < 4 {
            mid += 1;
        }
        println!("attempt {i} (+{delay} ms): finished {finished}, versions {left:?}");
        let store = SqliteStore::open(&db).await.unwrap();
        assert_eq!(versions(&db).await, vec![1, 2, 3, 4], "attempt {i}");
        for a in &agents {
            let hits = store
                .recall_for_agents(
                    &RecallScope::own(a.clone()),
                    &RecallQuery::new(format!("zq{}", a.alias)).limit(100_000),
                )
                .await
                .unwrap();
            assert_eq!(hits.len() as i64, BIG_ROWS, "attempt {i}: {}", a.alias);
            assert!(hits.iter().all(|r| r.agent == a.alias));
        }
        store.close().await;
    }
    assert!(
        mid >= 1,
        "no attempt was killed while the file was being migrated"
    );
}

/// The child side of [`a_migration_killed_part_way_is_finished_by_the_next_open`]: opens the
/// file named by the environment (which migrates it). Does nothing when run without it.
#[tokio::test]
#[ignore = "run by a_migration_killed_part_way_is_finished_by_the_next_open in a child process"]
async fn migrate_child() {
    let Some(db) = std::env::var_os(MIGRATE_CHILD_ENV) else {
        return;
    };
    println!("@@opening");
    let store = SqliteStore::open(std::path::Path::new(&db)).await.unwrap();
    store.close().await;
}

/// Two stores opening an old file at the same moment (two processes) migrate it once: the
/// versions are recorded once and every row is indexed once.
#[tokio::test]
async fn two_opens_at_once_migrate_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let agents = big_v1_file(&path).await;
    let (a, b) = tokio::join!(SqliteStore::open(&path), SqliteStore::open(&path));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(versions(&path).await, vec![1, 2, 3, 4]);
    for store in [&a, &b] {
        let hits = store
            .recall_for_agents(
                &RecallScope::own(agents[0].clone()),
                &RecallQuery::new("zqann").limit(100_000),
            )
            .await
            .unwrap();
        assert_eq!(hits.len() as i64, BIG_ROWS);
        let mut keys: Vec<&str> = hits.iter().map(|r| r.key.as_str()).collect();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len() as i64, BIG_ROWS, "no row indexed twice");
    }
    a.close().await;
    b.close().await;
}

/// A file written by a newer version of Warren is refused with the versions named, and left as
/// it was.
#[tokio::test]
async fn a_file_of_a_newer_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let store = SqliteStore::open(&path).await.unwrap();
    sqlx::query("INSERT INTO warren_memory_meta (version) VALUES (5)")
        .execute(store.writer())
        .await
        .unwrap();
    store.close().await;
    let err = SqliteStore::open(&path).await.unwrap_err().to_string();
    assert!(err.contains("schema version 5"), "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert_eq!(versions(&path).await, vec![1, 2, 3, 4, 5]);
}

/// A file at the current version opens again without a step run again: the versions recorded
/// stay 1 to 4 (a step run twice would record its version twice, or fail on the tables
/// it creates), and its rows stay.
#[tokio::test]
async fn a_current_file_opens_again_without_a_step_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let who = store.ensure_agent("alice").await.unwrap();
    store
        .store_with_agent(
            &who,
            &[NewMemory::new("k", "zqkept row").category("core")],
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    store.close().await;
    assert_eq!(versions(&path).await, vec![1, 2, 3, 4]);
    for _ in 0..2 {
        let store = SqliteStore::open(&path).await.unwrap();
        let hits = store
            .recall_for_agents(&RecallScope::own(who.clone()), &RecallQuery::new("zqkept"))
            .await
            .unwrap();
        assert_eq!(hits.len(), 1);
        store.close().await;
        assert_eq!(versions(&path).await, vec![1, 2, 3, 4]);
    }
}

/// A PostgreSQL schema as Warren's runner has always left it (the schema, its
/// `warren_memory_meta` with version 1, the tables of migration 1) opens as it is: nothing is
/// run again (migration 1 would fail on its tables) and its rows stay.
#[tokio::test]
async fn a_postgres_schema_made_by_the_runner_opens_without_a_step_run_again() {
    use crate::support::{pg_url, PgSchema};
    use warren_memory::postgres::schema::MIGRATIONS;
    use warren_memory::PostgresStore;
    let Some(url) = pg_url() else { return };
    let pg = PgSchema::fresh(&url);
    let s = format!("\"{}\"", pg.name);
    {
        let mut c = sqlx::PgConnection::connect(&url).await.unwrap();
        let made = format!(
            "CREATE SCHEMA {s}; CREATE TABLE {s}.warren_memory_meta (version BIGINT NOT NULL); \
             {} INSERT INTO {s}.warren_memory_meta (version) VALUES (1); \
             INSERT INTO {s}.agents (id, alias) VALUES ('00000000-0000-0000-0000-000000000007', 'alice');",
            MIGRATIONS[0].replace("{s}", &s)
        );
        sqlx::raw_sql(&made).execute(&mut c).await.unwrap();
        c.close().await.unwrap();
    }
    for _ in 0..2 {
        let store = PostgresStore::open(&url, &pg.name).await.unwrap();
        let versions: Vec<i64> = sqlx::query_scalar(&format!(
            "SELECT version FROM {s}.warren_memory_meta ORDER BY version"
        ))
        .fetch_all(store.pool())
        .await
        .unwrap();
        assert_eq!(versions, vec![1]);
        let alias: String = sqlx::query_scalar(&format!("SELECT alias FROM {s}.agents"))
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(alias, "alice");
        store.pool().close().await;
    }
}
