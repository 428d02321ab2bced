//! `cargo bench -p warren-api --bench import`: imports a ZeroClaw install of 100,000 memory rows
//! over 20 agents and prints rows per second and the process's peak resident memory during the
//! import. The floor, measured in the same run, is a plain read of every source row (the same
//! columns, streamed; the import cannot beat it). The source has ZeroClaw's own schema, indexes
//! included.
//!
//! Targets: at least 20,000 rows/s, at most 100 MB peak.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::str::FromStr;
use std::time::Instant;

const AGENTS: usize = 20;
const ROWS: usize = 100_000;

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        })
        .unwrap_or(0)
}

async fn make_source(root: &Path) {
    std::fs::create_dir_all(root.join("data/memory")).unwrap();
    let mut cfg = String::from(
        "schema_version = 3\n\n[risk_profiles.p]\nlevel = \"supervised\"\nworkspace_only = true\n",
    );
    for i in 0..AGENTS {
        cfg.push_str(&format!(
            "\n[agents.agent{i:02}]\nrisk_profile = \"p\"\nenabled = true\n\n[agents.agent{i:02}.memory]\nbackend = \"sqlite\"\n"
        ));
        let ws = root.join(format!("agents/agent{i:02}/workspace"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("IDENTITY.md"), format!("agent {i}\n")).unwrap();
    }
    std::fs::write(root.join("config.toml"), cfg).unwrap();
    let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&format!(
        "sqlite://{}",
        root.join("data/memory/brain.db").display()
    ))
    .unwrap()
    .create_if_missing(true);
    let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
    sqlx::query("CREATE TABLE agents (id TEXT PRIMARY KEY, alias TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL)")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(
        "CREATE TABLE memories (id TEXT PRIMARY KEY, key TEXT NOT NULL, content TEXT NOT NULL, \
         category TEXT NOT NULL DEFAULT 'core', embedding BLOB, created_at TEXT NOT NULL, \
         updated_at TEXT NOT NULL, session_id TEXT, namespace TEXT DEFAULT 'default', \
         importance REAL DEFAULT 0.5, superseded_by TEXT, agent_id TEXT NOT NULL REFERENCES agents(id), \
         kind TEXT, pinned INTEGER NOT NULL DEFAULT 0, tenant_id TEXT, UNIQUE (agent_id, key))",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("CREATE INDEX idx_memories_agent_id ON memories(agent_id)")
        .execute(&pool)
        .await
        .unwrap();
    let mut ids = Vec::new();
    for i in 0..AGENTS {
        let id = uuid::Uuid::new_v4().to_string();
        sqlx::query("INSERT INTO agents VALUES (?, ?, '2026-08-17T13:05:00+00:00')")
            .bind(&id)
            .bind(format!("agent{i:02}"))
            .execute(&pool)
            .await
            .unwrap();
        ids.push(id);
    }
    let mut tx = pool.begin().await.unwrap();
    for n in 0..ROWS {
        let agent = &ids[n % AGENTS];
        let (cat, session) = match n % 3 {
            0 => ("core", None),
            1 => ("daily", None),
            _ => ("conversation", Some(format!("session-{}", n % 50))),
        };
        sqlx::query(
            "INSERT INTO memories (id, key, content, category, created_at, updated_at, session_id, agent_id) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(uuid::Uuid::new_v4().to_string())
        .bind(format!("key_{n}"))
        .bind(format!(
            "Memory number {n}: the heat pump chapter needs a diagram of the refrigerant cycle and a table of COP values."
        ))
        .bind(cat)
        .bind("2026-08-17T09:05:00.806122517-04:00")
        .bind("2026-08-18T10:15:00.000000001-04:00")
        .bind(session)
        .bind(agent)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    pool.close().await;
}

async fn floor(root: &Path) -> f64 {
    use futures::TryStreamExt;
    let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&format!(
        "sqlite://{}",
        root.join("data/memory/brain.db").display()
    ))
    .unwrap()
    .read_only(true)
    .immutable(true);
    let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
    let t = Instant::now();
    type Raw = (
        i64,
        String,
        String,
        String,
        String,
        Option<String>,
        Option<f64>,
        String,
        String,
    );
    let mut rows = sqlx::query_as::<_, Raw>(
        "SELECT rowid, id, key, content, category, session_id, importance, created_at, updated_at \
         FROM memories",
    )
    .fetch(&pool);
    let mut n = 0usize;
    while let Some(r) = rows.try_next().await.unwrap() {
        n += usize::from(!r.2.is_empty());
    }
    drop(rows);
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(n, ROWS);
    pool.close().await;
    ROWS as f64 / secs
}

/// CPU seconds used by the process so far (user + system, every thread).
fn cpu_secs() -> f64 {
    // Fields 14 and 15 of /proc/self/stat, in clock ticks (100 per second on Linux); the
    // command name (field 2) is in parentheses and may hold spaces.
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            Some(ticks / 100.0)
        })
        .unwrap_or(0.0)
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("zeroclaw");
    let home = dir.path().join("warren");
    std::fs::create_dir_all(&home).unwrap();
    rt.block_on(make_source(&src));
    let read_rate = rt.block_on(floor(&src));
    let mut env = warren_api::HostEnv::default();
    env.vars
        .insert("WARREN_SECRET_BACKEND".into(), "file".into());
    let w = warren_api::Warren::open_with_env(warren_config::InstallLayout::new(&home), env);
    let opts = warren_api::import::ImportOptions {
        path: Some(src),
        ..Default::default()
    };
    // The peak is measured from here: the kernel's high-water mark is reset to the current size.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let before = peak_rss_kb();
    let events = std::sync::atomic::AtomicU64::new(0);
    let last = std::sync::Mutex::new(None);
    let progress = |p: &warren_api::import::ImportProgress| {
        events.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        *last.lock().unwrap() = Some(p.clone());
    };
    let load_before = load();
    let cpu_before = cpu_secs();
    let t = Instant::now();
    let rep = rt.block_on(w.import_zeroclaw(&opts, &progress)).unwrap();
    let secs = t.elapsed().as_secs_f64();
    let cpu = cpu_secs() - cpu_before;
    assert_eq!(rep.imported.memory_rows, ROWS as u64);
    let last = last.lock().unwrap().clone().unwrap();
    assert_eq!(
        (last.overall_done, last.overall_total),
        (ROWS as u64, ROWS as u64)
    );
    let rate = ROWS as f64 / secs;
    let peak_mb = peak_rss_kb() as f64 / 1024.0;
    // The rows are searchable: a word of one row finds it.
    let hits = rt.block_on(async {
        let config = w.load().unwrap().config;
        let stores = warren_memory::MemoryStores::new(w.layout().clone());
        let h = stores.handle_for(&config, "agent07").await.unwrap();
        h.recall(&warren_memory::RecallQuery::new("99987").limit(5))
            .await
            .unwrap()
    });
    assert!(hits.iter().any(|h| h.key == "key_99987"), "{hits:?}");
    println!("import zeroclaw: {ROWS} rows over {AGENTS} agents in {secs:.2} s = {rate:.0} rows/s (target >= 20000)");
    println!("  floor (plain read of the source rows, same run): {read_rate:.0} rows/s; import = {:.1}% of it", 100.0 * rate / read_rate);
    println!("  peak resident memory of the process during the import: {peak_mb:.1} MB (at its start {:.1} MB; target <= 100 MB)", before as f64 / 1024.0);
    println!(
        "  CPU time of the import: {cpu:.2} s = {:.0} rows per CPU second (user + system, all threads)",
        ROWS as f64 / cpu.max(0.01)
    );
    println!(
        "  progress reports: {}; load average before / after: {load_before} / {}",
        events.load(std::sync::atomic::Ordering::Relaxed),
        load()
    );
    if rate < 20_000.0 || peak_mb > 100.0 {
        println!("  BELOW TARGET");
    }
}
