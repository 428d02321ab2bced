//! Warren's SQLite memory beside ZeroClaw's and three plain FTS5 layouts, on the same corpus
//! (100,000 rows, 20 agents, the 3-agent scope, limit 10).
//!
//! Each layout runs in a process of its own (this bench started again with
//! `WARREN_MEMORY_LAYOUT` set), so that its peak RSS is its own; the parent runs the five
//! layouts in turn for three rounds (rotating which goes first) and prints the medians.
//! A child loads the corpus (not timed; ZeroClaw's and the plain layouts in transactions of 500
//! rows, Warren through `store_with_agent` in batches of 500), stores 200 rows one per call
//! (20 of them to agent 3, which then holds 5,020 rows), measures the recall mixes (200 queries
//! each after 20 warm-up queries), reads the database's bytes per row, exports agent 3 and
//! purges it.
//!
//! - `zeroclaw`: ZeroClaw's SQLite memory as its own code creates it (the schema of a real
//!   install's `brain.db`, its connection pragmas, its triggers keeping `memories_fts` in sync)
//!   and its statements: recall is its keyword path (`"w1" OR "w2"` over the external-content
//!   index joined to `memories`, `agent_id IN (...)`, `bm25` order, twice the limit, then the
//!   rows fetched by id; it has no per-grant category filter), a store its upsert (no
//!   embedder), export its `export_agent` query, purge its `purge_agent` statement; each call
//!   goes through `spawn_blocking` to its one connection behind a mutex, as in ZeroClaw.
//! - `ext-join`: a plain table with an agent column and an external-content FTS5 index over
//!   `key, content`; recall joins the matches to the rows and filters by agent and category.
//! - `agent-token`: the same table with a contentless index whose second column holds the
//!   agent (and agent + category) as tokens: the scope is part of the MATCH.
//! - `rowid-range`: the table's rowids are `agent << 32 | n`; the external-content index is
//!   asked once per agent of the scope with its rowid range.
//! - `warren`: `SqliteStore`.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::TryStreamExt;
use rusqlite::{params, Connection};
use uuid::Uuid;
use warren_memory::{export_agent, MemoryStore, NewMemory, RecallQuery, SqliteStore};

use super::{batch, mixes, msf, ratio, scope, Table, Zipf, LIMIT, LOAD_BATCH, ROWS_PER_AGENT};

const AGENTS: usize = 20;
const SINGLES: usize = 200;
const ROUNDS: usize = 3;
const LAYOUTS: [&str; 5] = [
    "zeroclaw",
    "ext-join",
    "agent-token",
    "rowid-range",
    "warren",
];
/// The agent exported and purged (5,000 rows loaded plus 20 single stores).
const TARGET: usize = 3;

/// One child's figures.
#[derive(Clone, Copy, Default)]
struct Figures {
    rare: f64,
    common: f64,
    store: f64,
    export: f64,
    purge: f64,
    bytes: f64,
    rss_mib: f64,
}

impl Figures {
    fn line(&self, layout: &str) -> String {
        format!(
            "COMPARE {layout} {} {} {} {} {} {} {}",
            self.rare, self.common, self.store, self.export, self.purge, self.bytes, self.rss_mib
        )
    }
    fn parse(line: &str) -> Option<(String, Figures)> {
        let mut it = line.strip_prefix("COMPARE ")?.split_whitespace();
        let layout = it.next()?.to_string();
        let mut v = it.map(|x| x.parse::<f64>().ok());
        let mut next = || v.next().flatten();
        Some((
            layout,
            Figures {
                rare: next()?,
                common: next()?,
                store: next()?,
                export: next()?,
                purge: next()?,
                bytes: next()?,
                rss_mib: next()?,
            },
        ))
    }
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

fn p50(mut v: Vec<Duration>) -> f64 {
    v.sort();
    msf(v[v.len() / 2])
}

/// The rows stored one per call: 20 to agent 3, the rest to agent 4.
fn single(i: usize) -> (usize, NewMemory) {
    let a = if i < 20 { TARGET } else { TARGET + 1 };
    (
        a,
        NewMemory::new(format!("s{i}"), format!("single row number {i} w1 w2 w3")),
    )
}

/// The parent: three rounds of the five layouts, each in its own process; the table rows.
pub fn run(t: &mut Table) {
    let exe = std::env::current_exe().unwrap();
    let mut got: Vec<(String, Vec<Figures>)> = LAYOUTS
        .iter()
        .map(|l| (l.to_string(), Vec::new()))
        .collect();
    for round in 0..ROUNDS {
        for k in 0..LAYOUTS.len() {
            let layout = LAYOUTS[(round + k) % LAYOUTS.len()];
            let out = Command::new(&exe)
                .env("WARREN_MEMORY_LAYOUT", layout)
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            let parsed = text.lines().find_map(Figures::parse);
            let Some((name, f)) = parsed else {
                panic!(
                    "layout {layout} gave no figures: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
            };
            println!("compare round {round}: {}", f.line(&name));
            if let Some((_, v)) = got.iter_mut().find(|(l, _)| *l == name) {
                v.push(f);
            }
        }
    }
    let median = |v: &[Figures], pick: fn(&Figures) -> f64| {
        let mut x: Vec<f64> = v.iter().map(pick).collect();
        x.sort_by(f64::total_cmp);
        x[x.len() / 2]
    };
    type Pick = fn(&Figures) -> f64;
    let figures: [(&str, Pick, &str, f64); 7] = [
        ("rare-word recall p50 (ms)", |f| f.rare, "ms", 1.3),
        ("common-word recall p50 (ms)", |f| f.common, "ms", 1.3),
        ("one store at 100k rows p50 (ms)", |f| f.store, "ms", 1.3),
        ("export of 5,020 rows (ms)", |f| f.export, "ms", 1.6),
        ("purge of 5,020 rows (ms)", |f| f.purge, "ms", 1.6),
        ("database bytes per row", |f| f.bytes, "", 0.0),
        ("peak RSS of the process (MiB)", |f| f.rss_mib, "MiB", 0.0),
    ];
    for (name, pick, _, bound) in figures {
        let m: Vec<(String, f64)> = got
            .iter()
            .map(|(l, v)| (l.clone(), median(v, pick)))
            .collect();
        let of = |l: &str| m.iter().find(|(n, _)| n == l).map_or(f64::NAN, |x| x.1);
        let (best_name, best) = m
            .iter()
            .filter(|(l, _)| l != "warren" && l != "zeroclaw")
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .cloned()
            .unwrap();
        let all: Vec<String> = m.iter().map(|(l, v)| format!("{l} {v:.3}")).collect();
        let warren = of("warren");
        let note = if bound > 0.0 {
            format!(
                "Warren {} of the best floor ({best_name}), <= {bound}x; ZeroClaw {}",
                ratio(warren, best),
                ratio(of("zeroclaw"), best)
            )
        } else if name.starts_with("peak") {
            format!(
                "Warren {} of ZeroClaw's (<= 1x)",
                ratio(warren, of("zeroclaw"))
            )
        } else {
            format!("Warren {warren:.0} (<= 600); best floor {best_name}")
        };
        t.row(format!("compare 100k/20: {name}"), all.join(", "), note);
    }
}

/// The child: runs one layout and prints its figures as one `COMPARE` line.
pub fn child(layout: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let f = match layout {
        "warren" => warren(&path),
        "zeroclaw" => plain(&mut Hopped::new(ZeroClaw::open(&path))),
        "ext-join" => plain(&mut Plain::open(&path, Shape::ExtJoin)),
        "agent-token" => plain(&mut Plain::open(&path, Shape::AgentToken)),
        "rowid-range" => plain(&mut Plain::open(&path, Shape::RowidRange)),
        other => panic!("unknown layout {other}"),
    };
    println!("{}", f.line(layout));
}

/// What a synchronous layout does.
trait Layout {
    fn load_batch(&mut self, a: usize, rows: &[NewMemory]);
    fn store_one(&mut self, a: usize, row: &NewMemory);
    fn recall(&mut self, q: &str) -> usize;
    fn export(&mut self, a: usize) -> usize;
    fn purge(&mut self, a: usize) -> usize;
    fn bytes(&mut self, rows: usize) -> f64;
}

/// A layout whose every call goes through `tokio::task::spawn_blocking` to a connection behind
/// a mutex, as ZeroClaw's SQLite memory runs its statements (its process runs tokio).
struct Hopped {
    rt: tokio::runtime::Runtime,
    inner: Arc<std::sync::Mutex<Box<dyn Layout + Send>>>,
}

impl Hopped {
    fn new(l: impl Layout + Send + 'static) -> Self {
        Hopped {
            rt: tokio::runtime::Runtime::new().unwrap(),
            inner: Arc::new(std::sync::Mutex::new(Box::new(l))),
        }
    }
    fn hop<T: Send + 'static>(&self, f: impl FnOnce(&mut dyn Layout) -> T + Send + 'static) -> T {
        let inner = self.inner.clone();
        let task = self
            .rt
            .spawn_blocking(move || f(&mut **inner.lock().unwrap()));
        self.rt.block_on(task).unwrap()
    }
}

impl Layout for Hopped {
    fn load_batch(&mut self, a: usize, rows: &[NewMemory]) {
        let rows = rows.to_vec();
        self.hop(move |l| l.load_batch(a, &rows));
    }
    fn store_one(&mut self, a: usize, row: &NewMemory) {
        let row = row.clone();
        self.hop(move |l| l.store_one(a, &row));
    }
    fn recall(&mut self, q: &str) -> usize {
        let q = q.to_string();
        self.hop(move |l| l.recall(&q))
    }
    fn export(&mut self, a: usize) -> usize {
        self.hop(move |l| l.export(a))
    }
    fn purge(&mut self, a: usize) -> usize {
        self.hop(move |l| l.purge(a))
    }
    fn bytes(&mut self, rows: usize) -> f64 {
        self.hop(move |l| l.bytes(rows))
    }
}

fn bytes_per_row(conn: &Connection, rows: usize) -> f64 {
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let bytes: i64 = conn
        .query_row(
            "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size",
            [],
            |r| r.get(0),
        )
        .unwrap();
    bytes as f64 / rows as f64
}

fn plain(l: &mut dyn Layout) -> Figures {
    let zipf = Zipf::new(super::VOCAB);
    for round in 0..ROWS_PER_AGENT / LOAD_BATCH {
        for a in 0..AGENTS {
            l.load_batch(a, &batch(&zipf, a, round));
        }
    }
    let mut store = Vec::new();
    for i in 0..SINGLES {
        let (a, row) = single(i);
        let t = Instant::now();
        l.store_one(a, &row);
        store.push(t.elapsed());
    }
    let qs = mixes(&zipf);
    let mut lat = |queries: &[String]| {
        for q in queries.iter().take(20) {
            l.recall(q);
        }
        let mut v = Vec::new();
        for q in queries {
            let t = Instant::now();
            let n = l.recall(q);
            v.push(t.elapsed());
            assert!(n <= 2 * LIMIT);
        }
        p50(v)
    };
    let (rare, common) = (lat(&qs.rare), lat(&qs.common));
    let bytes = l.bytes(AGENTS * ROWS_PER_AGENT + SINGLES);
    let t = Instant::now();
    assert_eq!(l.export(TARGET), ROWS_PER_AGENT + 20);
    let export = msf(t.elapsed());
    let t = Instant::now();
    assert_eq!(l.purge(TARGET), ROWS_PER_AGENT + 20);
    let purge = msf(t.elapsed());
    Figures {
        rare,
        common,
        store: p50(store),
        export,
        purge,
        bytes,
        rss_mib: peak_rss_mib(),
    }
}

fn warren(path: &Path) -> Figures {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = Arc::new(SqliteStore::open(path).await.unwrap());
        let zipf = Zipf::new(super::VOCAB);
        let mut agents = Vec::new();
        for a in 0..AGENTS {
            agents.push(store.ensure_agent(&format!("agent{a}")).await.unwrap());
        }
        for round in 0..ROWS_PER_AGENT / LOAD_BATCH {
            for (a, agent) in agents.iter().enumerate() {
                store
                    .store_with_agent(agent, &batch(&zipf, a, round), Utc::now())
                    .await
                    .unwrap();
            }
        }
        let mut took = Vec::new();
        for i in 0..SINGLES {
            let (a, row) = single(i);
            let t = Instant::now();
            store
                .store_with_agent(&agents[a], std::slice::from_ref(&row), Utc::now())
                .await
                .unwrap();
            took.push(t.elapsed());
        }
        let sc = scope(&agents);
        let qs = mixes(&zipf);
        let mut recall = [0.0; 2];
        for (k, queries) in [&qs.rare, &qs.common].into_iter().enumerate() {
            let mut v = Vec::new();
            for (i, q) in queries.iter().take(20).chain(queries.iter()).enumerate() {
                let t = Instant::now();
                let n = store
                    .recall_for_agents(&sc, &RecallQuery::new(q.clone()).limit(LIMIT))
                    .await
                    .unwrap()
                    .len();
                if i >= 20 {
                    v.push(t.elapsed());
                }
                assert!(n <= LIMIT);
            }
            recall[k] = p50(v);
        }
        let bytes = {
            let conn = Connection::open(path).unwrap();
            bytes_per_row(&conn, AGENTS * ROWS_PER_AGENT + SINGLES)
        };
        let t = Instant::now();
        let rows = export_agent(store.clone(), agents[TARGET].id)
            .try_collect::<Vec<_>>()
            .await
            .unwrap();
        let export = msf(t.elapsed());
        assert_eq!(rows.len(), ROWS_PER_AGENT + 20);
        drop(rows);
        let t = Instant::now();
        let n = store.purge_agent(&agents[TARGET].alias).await.unwrap();
        let purge = msf(t.elapsed());
        assert_eq!(n as usize, ROWS_PER_AGENT + 20);
        store.close().await;
        Figures {
            rare: recall[0],
            common: recall[1],
            store: p50(took),
            export,
            purge,
            bytes,
            rss_mib: peak_rss_mib(),
        }
    })
}

/// ZeroClaw's memory database, as `zeroclaw-memory`'s SQLite store creates and uses it.
struct ZeroClaw {
    conn: Connection,
    agents: Vec<String>,
}

/// The schema of a ZeroClaw install's `brain.db` (read from the file ZeroClaw wrote).
const ZEROCLAW_SCHEMA: &str = "
CREATE TABLE embedding_cache (content_hash TEXT PRIMARY KEY, embedding BLOB NOT NULL,
    created_at TEXT NOT NULL, accessed_at TEXT NOT NULL);
CREATE INDEX idx_cache_accessed ON embedding_cache(accessed_at);
CREATE TABLE memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE agents (id TEXT PRIMARY KEY, alias TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL);
CREATE TABLE memories (
    id            TEXT PRIMARY KEY,
    key           TEXT NOT NULL,
    content       TEXT NOT NULL,
    category      TEXT NOT NULL DEFAULT 'core',
    embedding     BLOB,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    session_id    TEXT,
    namespace     TEXT DEFAULT 'default',
    importance    REAL DEFAULT 0.5,
    superseded_by TEXT,
    agent_id      TEXT NOT NULL REFERENCES agents(id), kind TEXT, pinned INTEGER NOT NULL DEFAULT 0,
    tenant_id TEXT,
    UNIQUE (agent_id, key)
);
CREATE INDEX idx_memories_category  ON memories(category);
CREATE INDEX idx_memories_key       ON memories(key);
CREATE INDEX idx_memories_session   ON memories(session_id);
CREATE INDEX idx_memories_namespace ON memories(namespace);
CREATE INDEX idx_memories_agent_id  ON memories(agent_id);
CREATE VIRTUAL TABLE memories_fts USING fts5(key, content, content=memories, content_rowid=rowid);
CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, content)
    VALUES ('delete', old.rowid, old.key, old.content);
END;
CREATE TRIGGER memories_au AFTER UPDATE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, key, content)
    VALUES ('delete', old.rowid, old.key, old.content);
    INSERT INTO memories_fts(rowid, key, content) VALUES (new.rowid, new.key, new.content);
END;
CREATE TABLE schema_version (component TEXT PRIMARY KEY, version INTEGER NOT NULL,
    applied_at TEXT NOT NULL);
CREATE INDEX idx_memories_namespace_category ON memories(namespace, category);
";

/// ZeroClaw's upsert of one row (`store_row_with_metadata`, no embedder).
const ZEROCLAW_UPSERT: &str = "INSERT INTO memories (
    id, key, content, category, embedding, created_at, updated_at,
    session_id, namespace, importance, agent_id, kind, pinned, tenant_id)
 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
    COALESCE(?11, (SELECT id FROM agents WHERE alias = 'default' LIMIT 1)), ?12, ?13, ?14)
 ON CONFLICT(agent_id, key) DO UPDATE SET
    content = excluded.content, category = excluded.category, embedding = excluded.embedding,
    updated_at = excluded.updated_at, session_id = excluded.session_id,
    namespace = excluded.namespace, importance = excluded.importance, kind = excluded.kind,
    pinned = excluded.pinned, tenant_id = excluded.tenant_id";

impl ZeroClaw {
    fn open(path: &Path) -> Self {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "PRAGMA foreign_keys = ON; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
             PRAGMA mmap_size = 8388608; PRAGMA cache_size = -2000; PRAGMA temp_store = MEMORY;",
        )
        .unwrap();
        conn.execute_batch(ZEROCLAW_SCHEMA).unwrap();
        let mut agents = Vec::new();
        for a in 0..AGENTS {
            let id = Uuid::new_v4().to_string();
            conn.execute(
                "INSERT INTO agents (id, alias, created_at) VALUES (?1, ?2, ?3)",
                params![id, format!("agent{a}"), chrono::Local::now().to_rfc3339()],
            )
            .unwrap();
            agents.push(id);
        }
        ZeroClaw { conn, agents }
    }

    fn upsert(&self, a: usize, r: &NewMemory) {
        let now = chrono::Local::now().to_rfc3339();
        self.conn
            .prepare_cached(ZEROCLAW_UPSERT)
            .unwrap()
            .execute(params![
                Uuid::new_v4().to_string(),
                r.key,
                r.content,
                r.category,
                None::<Vec<u8>>,
                now,
                now,
                r.session_id,
                "default",
                r.importance,
                self.agents[a],
                None::<String>,
                0i64,
                None::<String>,
            ])
            .unwrap();
    }
}

impl Layout for ZeroClaw {
    fn load_batch(&mut self, a: usize, rows: &[NewMemory]) {
        self.conn.execute_batch("BEGIN").unwrap();
        for r in rows {
            self.upsert(a, r);
        }
        self.conn.execute_batch("COMMIT").unwrap();
    }
    fn store_one(&mut self, a: usize, row: &NewMemory) {
        self.upsert(a, row);
    }
    fn recall(&mut self, q: &str) -> usize {
        // `fts5_search_scoped` with the allowlist, then the rows by id.
        let fts: String = q
            .split_whitespace()
            .map(|t| format!("\"{}\"", t.replace('"', "\"\"")))
            .collect::<Vec<_>>()
            .join(" OR ");
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT m.id, bm25(memories_fts) as score FROM memories_fts f \
                 JOIN memories m ON m.rowid = f.rowid WHERE memories_fts MATCH ?1 \
                 AND m.agent_id IN (?2, ?3, ?4) ORDER BY score LIMIT ?5",
            )
            .unwrap();
        let ids: Vec<String> = st
            .query_map(
                params![
                    fts,
                    self.agents[0],
                    self.agents[1],
                    self.agents[2],
                    (2 * LIMIT) as i64
                ],
                |r| r.get(0),
            )
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        if ids.is_empty() {
            return 0;
        }
        let ph: Vec<String> = (1..=ids.len()).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "SELECT m.id, m.key, m.content, m.category, m.created_at, m.session_id, m.namespace, \
             m.importance, m.superseded_by, m.kind, m.pinned, a.alias, m.agent_id, m.tenant_id \
             FROM memories m LEFT JOIN agents a ON a.id = m.agent_id \
             WHERE m.superseded_by IS NULL AND m.id IN ({})",
            ph.join(", ")
        );
        let mut st = self.conn.prepare(&sql).unwrap();
        let rows: Vec<(String, String, String)> = st
            .query_map(rusqlite::params_from_iter(ids.iter()), |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows.len()
    }
    fn export(&mut self, a: usize) -> usize {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT m.id, m.key, m.content, m.category, m.created_at, m.session_id, \
                 m.namespace, m.importance, m.superseded_by, m.kind, m.pinned, a.alias, \
                 m.agent_id, m.tenant_id FROM memories m LEFT JOIN agents a ON a.id = m.agent_id \
                 WHERE m.agent_id = (SELECT id FROM agents WHERE alias = ?1 LIMIT 1) \
                 ORDER BY m.created_at ASC",
            )
            .unwrap();
        type Row = (
            String,
            String,
            String,
            String,
            String,
            Option<String>,
            Option<String>,
            Option<f64>,
            Option<String>,
            Option<String>,
            i64,
            Option<String>,
            String,
            Option<String>,
        );
        let rows: Vec<Row> = st
            .query_map([format!("agent{a}")], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                    r.get(7)?,
                    r.get(8)?,
                    r.get(9)?,
                    r.get(10)?,
                    r.get(11)?,
                    r.get(12)?,
                    r.get(13)?,
                ))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows.len()
    }
    fn purge(&mut self, a: usize) -> usize {
        self.conn
            .execute(
                "DELETE FROM memories WHERE agent_id = \
                 (SELECT id FROM agents WHERE alias = ?1 LIMIT 1)",
                [format!("agent{a}")],
            )
            .unwrap()
    }
    fn bytes(&mut self, rows: usize) -> f64 {
        bytes_per_row(&self.conn, rows)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    ExtJoin,
    AgentToken,
    RowidRange,
}

/// A plain layout: one table of rows (the columns Warren keeps) and one FTS5 index.
struct Plain {
    conn: Connection,
    shape: Shape,
}

/// The row columns read back by a recall and an export.
type RowOut = (
    Vec<u8>,
    String,
    String,
    String,
    Option<String>,
    f64,
    i64,
    i64,
);

fn row_out(r: &rusqlite::Row<'_>) -> rusqlite::Result<RowOut> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
    ))
}

const ROW_COLS: &str =
    "m.id, m.key, m.content, m.category, m.session_id, m.importance, m.created_at, m.updated_at";

impl Plain {
    fn open(path: &Path, shape: Shape) -> Self {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
             CREATE TABLE memories (seq INTEGER PRIMARY KEY, id BLOB NOT NULL UNIQUE,
                 agent INTEGER NOT NULL, key TEXT NOT NULL, content TEXT NOT NULL,
                 category TEXT NOT NULL, session_id TEXT, importance REAL NOT NULL,
                 created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
                 UNIQUE (agent, key));",
        )
        .unwrap();
        conn.execute_batch(match shape {
            Shape::ExtJoin | Shape::RowidRange => {
                "CREATE VIRTUAL TABLE fts USING fts5(key, content, content = memories, \
                 content_rowid = seq)"
            }
            Shape::AgentToken => {
                "CREATE VIRTUAL TABLE fts USING fts5(body, scope, content = '', \
                 contentless_delete = 1)"
            }
        })
        .unwrap();
        Plain { conn, shape }
    }

    fn insert(&self, a: usize, r: &NewMemory) {
        let ts = Utc::now().timestamp_micros();
        let seq: Option<i64> = if self.shape == Shape::RowidRange {
            let lo = (a as i64) << 32;
            Some(
                self.conn
                    .prepare_cached(
                        "SELECT coalesce(max(seq) + 1, ?1) FROM memories \
                         WHERE seq BETWEEN ?1 AND ?2",
                    )
                    .unwrap()
                    .query_row(params![lo, lo + (1 << 32) - 1], |x| x.get(0))
                    .unwrap(),
            )
        } else {
            None
        };
        self.conn
            .prepare_cached(
                "INSERT INTO memories (seq, id, agent, key, content, category, session_id, \
                 importance, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)",
            )
            .unwrap()
            .execute(params![
                seq,
                Uuid::now_v7().as_bytes().as_slice(),
                a as i64,
                r.key,
                r.content,
                r.category,
                r.session_id,
                r.importance,
                ts
            ])
            .unwrap();
        let rowid = self.conn.last_insert_rowid();
        match self.shape {
            Shape::ExtJoin | Shape::RowidRange => self
                .conn
                .prepare_cached("INSERT INTO fts (rowid, key, content) VALUES (?1, ?2, ?3)")
                .unwrap()
                .execute(params![rowid, r.key, r.content])
                .unwrap(),
            Shape::AgentToken => self
                .conn
                .prepare_cached("INSERT INTO fts (rowid, body, scope) VALUES (?1, ?2, ?3)")
                .unwrap()
                .execute(params![
                    rowid,
                    format!("{} {}", r.key, r.content),
                    format!("ag{a} ag{a}c{}", r.category)
                ])
                .unwrap(),
        };
    }
}

impl Layout for Plain {
    fn load_batch(&mut self, a: usize, rows: &[NewMemory]) {
        self.conn.execute_batch("BEGIN").unwrap();
        for r in rows {
            self.insert(a, r);
        }
        self.conn.execute_batch("COMMIT").unwrap();
    }
    fn store_one(&mut self, a: usize, row: &NewMemory) {
        self.conn.execute_batch("BEGIN").unwrap();
        self.insert(a, row);
        self.conn.execute_batch("COMMIT").unwrap();
    }
    fn recall(&mut self, q: &str) -> usize {
        let words: Vec<&str> = q.split_whitespace().collect();
        let any = words
            .iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" OR ");
        // The scope: agents 0 and 1 with every category, agent 2 with `core` only.
        let (sql, expr) = match self.shape {
            Shape::ExtJoin => (
                format!(
                    "SELECT {ROW_COLS} FROM fts JOIN memories m ON m.seq = fts.rowid \
                     WHERE fts MATCH ?1 AND (m.agent IN (0, 1) OR (m.agent = 2 AND \
                     m.category = 'core')) ORDER BY bm25(fts) LIMIT {LIMIT}"
                ),
                any,
            ),
            Shape::AgentToken => (
                format!(
                    "SELECT {ROW_COLS} FROM fts JOIN memories m ON m.seq = fts.rowid \
                     WHERE fts MATCH ?1 ORDER BY bm25(fts, 1.0, 0.0) LIMIT {LIMIT}"
                ),
                format!("body : ({any}) AND scope : (ag0 OR ag1 OR ag2ccore)"),
            ),
            Shape::RowidRange => {
                let part = |a: i64| {
                    format!(
                        "SELECT rowid AS seq, bm25(fts) AS r FROM fts WHERE fts MATCH ?1 \
                         AND rowid BETWEEN {} AND {}",
                        a << 32,
                        (a << 32) + (1 << 32) - 1
                    )
                };
                (
                    format!(
                        "SELECT {ROW_COLS} FROM ({} UNION ALL {} UNION ALL {}) f \
                         CROSS JOIN memories m ON m.seq = f.seq \
                         WHERE m.agent <> 2 OR m.category = 'core' ORDER BY f.r LIMIT {LIMIT}",
                        part(0),
                        part(1),
                        part(2)
                    ),
                    any,
                )
            }
        };
        let mut st = self.conn.prepare_cached(&sql).unwrap();
        let rows: Vec<RowOut> = st
            .query_map([expr], row_out)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows.len()
    }
    fn export(&mut self, a: usize) -> usize {
        let (sql, lo, hi) = match self.shape {
            Shape::RowidRange => (
                format!(
                    "SELECT {ROW_COLS} FROM memories m WHERE m.seq BETWEEN ?1 AND ?2 \
                     ORDER BY m.created_at, m.id"
                ),
                (a as i64) << 32,
                ((a as i64) << 32) + (1 << 32) - 1,
            ),
            _ => (
                format!(
                    "SELECT {ROW_COLS} FROM memories m WHERE m.agent = ?1 AND ?2 = ?2 \
                     ORDER BY m.created_at, m.id"
                ),
                a as i64,
                0,
            ),
        };
        let mut st = self.conn.prepare_cached(&sql).unwrap();
        let rows: Vec<RowOut> = st
            .query_map(params![lo, hi], row_out)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        rows.len()
    }
    fn purge(&mut self, a: usize) -> usize {
        self.conn.execute_batch("BEGIN").unwrap();
        let n = match self.shape {
            Shape::RowidRange => {
                let (lo, hi) = ((a as i64) << 32, ((a as i64) << 32) + (1 << 32) - 1);
                self.conn
                    .execute("DELETE FROM fts WHERE rowid BETWEEN ?1 AND ?2", [lo, hi])
                    .unwrap();
                self.conn
                    .execute("DELETE FROM memories WHERE seq BETWEEN ?1 AND ?2", [lo, hi])
                    .unwrap()
            }
            _ => {
                self.conn
                    .execute(
                        "DELETE FROM fts WHERE rowid IN (SELECT seq FROM memories WHERE agent = ?1)",
                        [a as i64],
                    )
                    .unwrap();
                self.conn
                    .execute("DELETE FROM memories WHERE agent = ?1", [a as i64])
                    .unwrap()
            }
        };
        self.conn.execute_batch("COMMIT").unwrap();
        n
    }
    fn bytes(&mut self, rows: usize) -> f64 {
        bytes_per_row(&self.conn, rows)
    }
}
