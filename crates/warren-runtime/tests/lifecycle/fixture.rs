//! A hermetic install with three agents referencing each other in every way, memory rows,
//! workspace files, sessions with transcripts, usage and receipts; plus a snapshot of every
//! piece of state for before/after comparisons.

use chrono::{DateTime, TimeZone, Utc};
use serde_json::json;
use sqlx::{Row, SqlitePool};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use warren_config::InstallLayout;
use warren_memory::{Clock, MemoryStores, NewMemory};
use warren_runtime::lifecycle::Lifecycle;
use warren_state::db::open_sessions_db;
use warren_state::receipts::ReceiptLog;
use warren_state::secrets::FileSecretStore;
use warren_state::sessions::{SessionKind, SessionStore};
use warren_types::{MemoryBackendKind, TurnEvent, TurnTrigger};

pub const CONFIG: &str = r#"schema_version = 1

[risk_profiles.p]
level = "supervised"

# Alice researches.
[agents.alice]
risk_profile = "p" # the default profile
delegates = ["bob"]

[agents.alice.workspace]
read_memory_from = ["bob"]

# Bob writes; he reads Alice's notes.
[agents.bob]
risk_profile = "p"
delegates = ["alice", "carol"]

[agents.bob.workspace]
read_memory_from = [{ agent = "alice", categories = ["core"] }, "carol"]

[agents.bob.workspace.access]
alice = "read" # look, don't touch
carol = "read_write"

[agents.carol]
risk_profile = "p"
delegates = ["alice"]

[agents.carol.workspace]
read_memory_from = ["alice"]
access = { alice = "write", bob = "read" }

# Alice's morning digest.
[cron.digest]
agent = "alice"
schedule = "0 7 * * *"
prompt = "digest"

# Carol's paused job.
[cron.sweep]
agent = "carol"
schedule = "0 3 * * *"
prompt = "sweep"
enabled = false
"#;

pub struct Fixed(pub DateTime<Utc>);

impl Clock for Fixed {
    fn now(&self) -> DateTime<Utc> {
        self.0
    }
}

pub fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

pub fn stores(layout: &InstallLayout) -> Arc<MemoryStores> {
    Arc::new(MemoryStores::new(layout.clone()).with_clock(Arc::new(Fixed(t0()))))
}

/// The lifecycle service of an install, with a fixed clock.
pub async fn lifecycle(root: &Path) -> Lifecycle {
    lifecycle_parts(root).await.0
}

/// [`lifecycle`] with its memory stores, to close them when done (before copying the install).
pub async fn lifecycle_parts(root: &Path) -> (Lifecycle, Arc<MemoryStores>) {
    let layout = InstallLayout::new(root);
    let pool = open_sessions_db(&layout.sessions_db()).await.unwrap();
    let mem = stores(&layout);
    let lc = Lifecycle::new(layout.clone(), mem.clone(), pool).with_clock(Arc::new(Fixed(
        Utc.with_ymd_and_hms(2026, 3, 2, 9, 30, 0).unwrap(),
    )));
    (lc, mem)
}

/// Builds the three-agent install under `root`.
pub async fn build(root: &Path) {
    build_with(root, CONFIG).await;
}

/// [`build`] with another config text (the same agents, another memory backend).
async fn build_with(root: &Path, config: &str) {
    std::fs::write(root.join("config.toml"), config).unwrap();
    let layout = InstallLayout::new(root);
    let cfg = warren_config::load_config(&layout).unwrap().config;
    let mem = stores(&layout);
    let pool = open_sessions_db(&layout.sessions_db()).await.unwrap();
    let sessions = SessionStore::new(pool.clone());
    let receipts = ReceiptLog::new(pool.clone(), &FileSecretStore::for_install(&layout)).unwrap();
    for alias in ["alice", "bob", "carol"] {
        let ws = layout.default_workspace(alias);
        std::fs::create_dir_all(ws.join("notes")).unwrap();
        std::fs::write(ws.join("README.md"), format!("{alias}'s workspace\n")).unwrap();
        std::fs::write(ws.join("notes/today.txt"), format!("{alias} did things\n")).unwrap();
        let handle = mem.handle_for(&cfg, alias).await.unwrap();
        for i in 1..=3 {
            handle
                .store(NewMemory::new(
                    format!("{alias}-k{i}"),
                    format!("{alias} remembers fact number {i}"),
                ))
                .await
                .unwrap();
        }
        let s = sessions
            .create_session(alias, SessionKind::Chat, &format!("hello {alias}"), t0())
            .await
            .unwrap();
        let turn = format!("turn-{alias}");
        sessions
            .start_turn(&turn, &s.id, alias, &TurnTrigger::User, "hello", t0())
            .await
            .unwrap();
        sessions
            .append_messages(
                &s.id,
                &turn,
                &[
                    json!({"role": "user", "content": format!("hello {alias}")}),
                    json!({"role": "assistant", "content": "hi"}),
                ],
                t0(),
            )
            .await
            .unwrap();
        for (seq, kind) in [(1, "text_delta"), (2, "turn_completed")] {
            let event: TurnEvent = serde_json::from_value(json!({
                "turn_id": turn, "agent": alias, "seq": seq,
                "time": "2026-03-01T12:00:00Z", "type": kind, "text": "hi",
            }))
            .unwrap();
            sessions.append_event(&event).await.unwrap();
        }
        sessions
            .finish_turn(&turn, "completed", Some("hi"), None, t0())
            .await
            .unwrap();
        sessions
            .record_usage(
                alias,
                Some(&s.id),
                Some(&turn),
                "openai.fast",
                10,
                5,
                0.25,
                t0(),
            )
            .await
            .unwrap();
        for tool in ["file_read", "shell"] {
            receipts
                .append(alias, tool, &json!({"path": "README.md"}), "ok")
                .await
                .unwrap();
        }
    }
    pool.close().await;
    mem.close().await;
}

/// A copy of an install in a new temp dir. A store handle dropped just before (its pool closes
/// in the background) may remove a `-shm` file mid-copy: such a copy is thrown away and made
/// again.
pub fn copy(from: &Path) -> tempfile::TempDir {
    for attempt in 1..=5 {
        let dir = tempfile::tempdir().unwrap();
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", from.display()))
            .arg(dir.path())
            .status()
            .unwrap();
        if status.success() {
            return dir;
        }
        assert!(attempt < 5, "copying {} failed", from.display());
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    unreachable!()
}

fn files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let mut entries: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().path()).collect(),
        Err(_) => return,
    };
    entries.sort();
    for p in entries {
        let rel = p.strip_prefix(root).unwrap().display().to_string();
        if rel == "data/memory"
            || rel.starts_with("data/sessions.db")
            || rel == "data/config.lock"
            || rel == "data/locks"
            || rel == "logs"
            || rel.starts_with("data/secrets")
            || rel.contains(".tmp-")
        {
            continue;
        }
        if p.is_dir() {
            out.push(format!("{rel}/"));
            files(root, &p, out);
        } else {
            let body = std::fs::read_to_string(&p).unwrap_or_else(|_| "<binary>".into());
            out.push(format!("{rel}:\n{body}"));
        }
    }
}

async fn dump(pool: &SqlitePool, table: &str, skip: &[&str]) -> Vec<String> {
    let cols: Vec<String> = sqlx::query(&format!("PRAGMA table_info({table})"))
        .fetch_all(pool)
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<String, _>(1))
        .filter(|c| !skip.contains(&c.as_str()))
        .collect();
    let expr = cols
        .iter()
        .map(|c| format!("quote({c})"))
        .collect::<Vec<_>>()
        .join(" || ',' || ");
    let mut rows: Vec<String> = sqlx::query_scalar(&format!("SELECT {expr} FROM {table}"))
        .fetch_all(pool)
        .await
        .unwrap();
    rows.sort();
    rows.into_iter().map(|r| format!("{table}: {r}")).collect()
}

async fn open(path: &Path) -> SqlitePool {
    let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(path);
    SqlitePool::connect_with(opts).await.unwrap()
}

/// Every piece of state of an install, as text: config, files (workspaces, archives, journal)
/// and every row of both databases; on Postgres memory, the rows of the install's schema
/// instead of `memory.db`.
pub async fn snapshot(root: &Path) -> String {
    let mut out = vec![std::fs::read_to_string(root.join("config.toml")).unwrap()];
    files(root, root, &mut out);
    let layout = InstallLayout::new(root);
    let cfg = warren_config::load_config(&layout).unwrap().config;
    let mut schema = None;
    if cfg.memory.backend == MemoryBackendKind::Postgres {
        let pg = &cfg.memory.postgres;
        let name = pg.schema.clone().unwrap();
        out.extend(pg_dump(pg.url.as_deref().unwrap(), &name).await);
        schema = Some(name);
    } else {
        let mem = open(&layout.memory_db()).await;
        out.extend(dump(&mem, "agents", &["created_at"]).await);
        out.extend(dump(&mem, "memories", &[]).await);
        mem.close().await;
    }
    let ses = open(&layout.sessions_db()).await;
    for t in [
        "agents",
        "sessions",
        "messages",
        "turns",
        "events",
        "usage",
        "receipts",
        "receipt_heads",
    ] {
        out.extend(dump(&ses, t, &[]).await);
    }
    ses.close().await;
    let text = out
        .join("\n")
        .replace(&root.display().to_string(), "<root>");
    match schema {
        // Each install has its own schema: its name is the one expected difference.
        Some(name) => text.replace(&name, "<schema>"),
        None => text,
    }
}

/// Rows of `alias` in the memory store.
pub async fn memory_rows(root: &Path, alias: &str) -> Vec<String> {
    let mem = open(&InstallLayout::new(root).memory_db()).await;
    let mut rows: Vec<String> = sqlx::query_scalar(
        "SELECT m.key || '=' || m.content FROM memories m JOIN agents a ON a.id = m.agent_id WHERE a.alias = ?",
    )
    .bind(alias)
    .fetch_all(&mem)
    .await
    .unwrap();
    mem.close().await;
    rows.sort();
    rows
}

/// The alias rows of `sessions.db`.
pub async fn session_aliases(root: &Path) -> Vec<String> {
    let ses = open(&InstallLayout::new(root).sessions_db()).await;
    let mut v: Vec<String> = sqlx::query_scalar("SELECT alias FROM agents")
        .fetch_all(&ses)
        .await
        .unwrap();
    ses.close().await;
    v.sort();
    v
}

/// The Postgres server of the tests, or `None` after printing the skip line.
pub fn pg_url() -> Option<String> {
    match std::env::var("WARREN_TEST_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => Some(u),
        _ => {
            println!("skipped: WARREN_TEST_POSTGRES_URL not set");
            None
        }
    }
}

/// A fresh Postgres schema, dropped with everything in it when the guard goes away.
pub struct PgSchema {
    url: String,
    name: String,
}

impl PgSchema {
    /// A new, unique schema name on the server at `url` (created by the first store opened).
    pub fn fresh(url: &str) -> PgSchema {
        PgSchema {
            url: url.to_string(),
            name: format!(
                "wl_fault_{}",
                &uuid::Uuid::new_v4().simple().to_string()[..16]
            ),
        }
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// [`CONFIG`] with its memory in this schema.
    fn config(&self) -> String {
        let section = format!(
            "[memory]\nbackend = \"postgres\"\n\n[memory.postgres]\nurl = \"{}\"\nschema = \"{}\"\n",
            self.url, self.name
        );
        let head = "schema_version = 1\n";
        assert!(CONFIG.starts_with(head));
        CONFIG.replacen(head, &format!("{head}\n{section}"), 1)
    }
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        let (url, name) = (self.url.clone(), self.name.clone());
        // From a thread with its own runtime: the guard may go away inside or outside tokio.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                use sqlx::Connection;
                if let Ok(mut c) = sqlx::PgConnection::connect(&url).await {
                    // Never hang the run on a lock left by a failed test.
                    let _ = sqlx::query("SET lock_timeout = '5s'").execute(&mut c).await;
                    let dropped = sqlx::query(&format!("DROP SCHEMA IF EXISTS \"{name}\" CASCADE"))
                        .execute(&mut c)
                        .await;
                    if let Err(e) = dropped {
                        eprintln!("could not drop test schema {name}: {e}");
                    }
                }
            });
        })
        .join();
    }
}

/// A test install in its own temp dir; on Postgres memory, with its own schema as well.
pub struct Install {
    dir: tempfile::TempDir,
    pg: Option<PgSchema>,
}

impl Install {
    /// [`build`] in a fresh temp dir: on SQLite memory, or with the URL of a Postgres server,
    /// on Postgres memory in a fresh schema.
    pub async fn build(pg_url: Option<&str>) -> Install {
        let dir = tempfile::tempdir().unwrap();
        let pg = pg_url.map(PgSchema::fresh);
        match &pg {
            None => build(dir.path()).await,
            Some(pg) => build_with(dir.path(), &pg.config()).await,
        }
        Install { dir, pg }
    }

    /// The install's root.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The server URL and schema of its Postgres memory, when it has one.
    pub fn pg(&self) -> Option<(&str, &str)> {
        self.pg.as_ref().map(|p| (p.url.as_str(), p.name.as_str()))
    }

    /// A [`copy`] of the install; on Postgres memory its rows are copied to a new schema and
    /// the copy's config points there, so the two installs never share a row.
    pub async fn copy(&self) -> Install {
        let dir = copy(self.path());
        let Some(from) = &self.pg else {
            return Install { dir, pg: None };
        };
        let to = PgSchema::fresh(&from.url);
        clone_schema(&from.url, &from.name, &to.name).await;
        let cfg = dir.path().join("config.toml");
        let text = std::fs::read_to_string(&cfg).unwrap();
        assert!(text.contains(&from.name), "{text}");
        std::fs::write(&cfg, text.replace(&from.name, &to.name)).unwrap();
        Install { dir, pg: Some(to) }
    }
}

/// Creates schema `to` with the store's own migrations and copies every row (every stored
/// column, same ids and timestamps) and the insertion counter of schema `from` into it.
async fn clone_schema(url: &str, from: &str, to: &str) {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(url).await.unwrap();
    warren_memory::postgres::schema::migrate(&mut c, to)
        .await
        .unwrap();
    for table in ["agents", "memories"] {
        let cols: Vec<String> = sqlx::query_scalar(
            "SELECT column_name::text FROM information_schema.columns \
             WHERE table_schema = $1 AND table_name = $2 AND is_generated = 'NEVER' \
             ORDER BY ordinal_position",
        )
        .bind(from)
        .bind(table)
        .fetch_all(&mut c)
        .await
        .unwrap();
        let cols = cols
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>()
            .join(", ");
        sqlx::query(&format!(
            "INSERT INTO \"{to}\".{table} ({cols}) SELECT {cols} FROM \"{from}\".{table}"
        ))
        .execute(&mut c)
        .await
        .unwrap();
    }
    sqlx::query(&format!(
        "SELECT setval('\"{to}\".memories_seq_seq', last_value, is_called) \
         FROM \"{from}\".memories_seq_seq"
    ))
    .execute(&mut c)
    .await
    .unwrap();
    c.close().await.unwrap();
}

/// The rows of a Postgres memory schema, ordered: agents (without the server-set creation
/// time) and memories with their agent's alias and every column but the insertion counter and
/// the derived search vector.
async fn pg_dump(url: &str, schema: &str) -> Vec<String> {
    use sqlx::Connection;
    let mut c = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query("SET TIME ZONE 'UTC'")
        .execute(&mut c)
        .await
        .unwrap();
    let s = format!("\"{schema}\"");
    let agents: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT (to_jsonb(a) - 'created_at')::text FROM {s}.agents a ORDER BY a.alias"
    ))
    .fetch_all(&mut c)
    .await
    .unwrap();
    let memories: Vec<String> = sqlx::query_scalar(&format!(
        "SELECT a.alias || ' ' || (to_jsonb(m) - 'seq' - 'tsv')::text \
         FROM {s}.memories m JOIN {s}.agents a ON a.id = m.agent_id ORDER BY a.alias, m.key"
    ))
    .fetch_all(&mut c)
    .await
    .unwrap();
    c.close().await.unwrap();
    let agents = agents.into_iter().map(|r| format!("pg agents: {r}"));
    agents
        .chain(memories.into_iter().map(|r| format!("pg memories: {r}")))
        .collect()
}
