//! Purging an agent from a real SQLite file is all or nothing, also when the process is killed
//! in the middle of it: the agent's rows, its `agents` row and its full-text index go together
//! or stay together, and other agents are untouched (their recall answers the same rows with the
//! same scores).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use chrono::Utc;
use sqlx::Connection;
use uuid::Uuid;
use warren_memory::{MemoryEntry, MemoryStore, SqliteStore};

/// Rows of the purged agent: enough that the purge's transaction spills pages into the WAL
/// before it commits, so a kill can land while it is under way.
const BIG: usize = 20_000;
const KEEP: usize = 300;
const CHILD_ENV: &str = "WARREN_TEST_PURGE_CHILD_DB";
const BIG_ID: Uuid = Uuid::from_u128(0xb16);
const KEEP_ID: Uuid = Uuid::from_u128(0x4ee9);

fn rows(n: usize, word: &str) -> Vec<MemoryEntry> {
    let now = Utc::now();
    (0..n)
        .map(|i| MemoryEntry {
            id: Uuid::now_v7(),
            agent_id: Uuid::nil(),
            agent: String::new(),
            key: format!("k{i}"),
            content: format!("{word} fact number {i} about the boiler"),
            category: ["core", "daily"][i % 2].to_string(),
            session_id: (i % 5 == 0).then(|| format!("s{}", i % 3)),
            importance: 0.5,
            created_at: now,
            updated_at: now,
            score: None,
        })
        .collect()
}

/// A file with `big` (BIG rows, word `zqbig`) and `keep` (KEEP rows, word `zqkeep`), the WAL
/// checkpointed into the file.
async fn prepare(path: &Path) {
    let store = SqliteStore::open(path).await.unwrap();
    store
        .import_agent("big", BIG_ID, &rows(BIG, "zqbig"))
        .await
        .unwrap();
    store
        .import_agent("keep", KEEP_ID, &rows(KEEP, "zqkeep"))
        .await
        .unwrap();
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .execute(store.writer())
        .await
        .unwrap();
    store.close().await;
}

/// What a file holds after a purge ran (or was killed), read through a fresh connection that
/// recovers the WAL, with both integrity checks passing.
#[derive(Debug, PartialEq)]
struct State {
    big_agent: bool,
    big_rows: i64,
    big_indexed: i64,
    keep_rows: i64,
    keep_indexed: i64,
    big_index: bool,
}

/// How many entries of an agent's index match `word`, or `None` when it has no index; the
/// index's own integrity check passes first.
async fn indexed(c: &mut sqlx::SqliteConnection, agent: &Uuid, word: &str) -> Option<i64> {
    let t = warren_memory::sqlite::index::index_table(agent);
    let exists: i64 = sqlx::query_scalar("SELECT count(*) FROM sqlite_schema WHERE name = ?")
        .bind(&t)
        .fetch_one(&mut *c)
        .await
        .unwrap();
    if exists == 0 {
        return None;
    }
    sqlx::query(&format!(
        "INSERT INTO {t} ({t}, rank) VALUES ('integrity-check', 0)"
    ))
    .execute(&mut *c)
    .await
    .unwrap();
    Some(
        sqlx::query_scalar(&format!("SELECT count(*) FROM {t} WHERE {t} MATCH ?"))
            .bind(word)
            .fetch_one(&mut *c)
            .await
            .unwrap(),
    )
}

async fn state(path: &Path) -> State {
    let opts = sqlx::sqlite::SqliteConnectOptions::new().filename(path);
    let mut c = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
    let ok: String = sqlx::query_scalar("PRAGMA integrity_check")
        .fetch_one(&mut c)
        .await
        .unwrap();
    assert_eq!(ok, "ok", "{}", path.display());
    let mut n = Vec::new();
    for (sql, arg) in [
        ("SELECT count(*) FROM agents WHERE alias = ?", "big"),
        (
            "SELECT count(*) FROM memories m JOIN agents a ON a.id = m.agent_id WHERE a.alias = ?",
            "big",
        ),
        (
            "SELECT count(*) FROM memories m JOIN agents a ON a.id = m.agent_id WHERE a.alias = ?",
            "keep",
        ),
    ] {
        let q = sqlx::query_scalar::<_, i64>(sql).bind(arg);
        n.push(q.fetch_one(&mut c).await.unwrap());
    }
    let big = indexed(&mut c, &BIG_ID, "zqbig").await;
    let keep = indexed(&mut c, &KEEP_ID, "zqkeep").await;
    c.close().await.unwrap();
    State {
        big_agent: n[0] == 1,
        big_rows: n[1],
        big_indexed: big.unwrap_or(0),
        keep_rows: n[2],
        keep_indexed: keep.unwrap_or(-1),
        big_index: big.is_some(),
    }
}

fn everything() -> State {
    State {
        big_agent: true,
        big_rows: BIG as i64,
        big_indexed: BIG as i64,
        keep_rows: KEEP as i64,
        keep_indexed: KEEP as i64,
        big_index: true,
    }
}

fn nothing() -> State {
    State {
        big_agent: false,
        big_rows: 0,
        big_indexed: 0,
        big_index: false,
        ..everything()
    }
}

fn wal_len(db: &Path) -> u64 {
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(PathBuf::from(wal))
        .map(|m| m.len())
        .unwrap_or(0)
}

/// When to kill the purging child.
#[derive(Debug, Clone, Copy)]
enum Kill {
    /// As soon as the WAL grows past its size when the purge started (its writes are under way).
    OnFirstWrite,
    After(Duration),
    Never,
}

/// Runs the purge of `big` in a child process (this test binary, running [`purge_child`]) and
/// kills it as `kill` says. Returns whether the child was killed before it reported the purge
/// done, and whether the WAL had grown by then.
fn run_child(db: &Path, kill: Kill) -> (bool, bool) {
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "purge::purge_child",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, db)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wait_line = |want: &str, limit: Duration| -> bool {
        let deadline = Instant::now() + limit;
        while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            if line.contains(want) {
                return true;
            }
        }
        false
    };
    assert!(
        wait_line("@@purging", Duration::from_secs(120)),
        "the child never started purging"
    );
    let started = wal_len(db);
    let mut done = false;
    match kill {
        Kill::Never => {
            done = wait_line("@@purged", Duration::from_secs(300));
            assert!(done, "the child never finished purging");
        }
        Kill::After(d) => std::thread::sleep(d),
        Kill::OnFirstWrite => {
            let deadline = Instant::now() + Duration::from_secs(120);
            while wal_len(db) <= started && Instant::now() < deadline {
                if let Ok(line) = rx.try_recv() {
                    if line.contains("@@purged") {
                        done = true;
                        break;
                    }
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }
    let grown = wal_len(db) > started;
    if !done {
        child.kill().unwrap();
    }
    child.wait().unwrap();
    // Lines the child printed before it died.
    let finished = done || rx.try_iter().any(|l| l.contains("@@purged"));
    drop(rx);
    let _ = reader.join();
    (!finished, grown)
}

#[tokio::test]
async fn a_purge_is_all_or_nothing_when_the_process_dies() {
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template.db");
    prepare(&template).await;
    let before = state(&template).await;
    assert_eq!(before, everything());

    let mut interrupted = 0;
    let kills = [
        Kill::OnFirstWrite,
        Kill::OnFirstWrite,
        Kill::After(Duration::from_millis(0)),
        Kill::After(Duration::from_millis(30)),
        Kill::After(Duration::from_millis(150)),
        Kill::Never,
    ];
    for (i, kill) in kills.into_iter().enumerate() {
        let db = dir.path().join(format!("attempt{i}.db"));
        std::fs::copy(&template, &db).unwrap();
        let (killed_early, grown) = run_child(&db, kill);
        let after = state(&db).await;
        println!(
            "attempt {i} ({kill:?}): killed before done {killed_early}, WAL grown {grown}, rows left {}",
            after.big_rows
        );
        // All or nothing, whatever the moment of the kill.
        assert!(
            after == everything() || after == nothing(),
            "attempt {i} ({kill:?}): {after:?}"
        );
        if matches!(kill, Kill::Never) {
            assert_eq!(after, nothing(), "a finished purge");
        }
        if killed_early && grown && after == everything() {
            interrupted += 1;
        }
    }
    // At least one kill landed after the purge had started writing and before it committed:
    // its writes were rolled back when the file was opened again.
    assert!(
        interrupted >= 1,
        "no attempt was killed in the middle of the purge"
    );
}

/// The child side of [`a_purge_is_all_or_nothing_when_the_process_dies`]: purges `big` in the
/// file named by the environment. Does nothing when run without it.
#[tokio::test]
#[ignore = "run by a_purge_is_all_or_nothing_when_the_process_dies in a child process"]
async fn purge_child() {
    let Some(db) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let store = SqliteStore::open(Path::new(&db)).await.unwrap();
    println!("@@purging");
    let n = store.purge_agent("big").await.unwrap();
    println!("@@purged {n}");
}

/// A purge leaves the other agents' recall and their indexes' integrity as they were.
#[tokio::test]
async fn a_purge_keeps_the_index_and_the_other_agents() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    prepare(&db).await;
    let store = SqliteStore::open(&db).await.unwrap();
    let keep = store.lookup_agent("keep").await.unwrap().unwrap();
    let scope = warren_memory::RecallScope {
        entries: vec![warren_memory::ScopeEntry {
            agent: keep.clone(),
            categories: None,
        }],
    };
    let q = warren_memory::RecallQuery::new("zqkeep boiler").limit(50);
    let before = store.recall_for_agents(&scope, &q).await.unwrap();
    assert_eq!(before.len(), 50);
    assert_eq!(store.purge_agent("big").await.unwrap(), BIG as u64);
    assert_eq!(store.purge_agent("big").await.unwrap(), 0, "already gone");
    let after = store.recall_for_agents(&scope, &q).await.unwrap();
    let keys = |v: &[MemoryEntry]| {
        v.iter()
            .map(|r| (r.key.clone(), format!("{:.9}", r.score.unwrap_or(f64::NAN))))
            .collect::<Vec<_>>()
    };
    // BM25's statistics are each agent's own: the same rows with the same scores.
    assert_eq!(keys(&before), keys(&after));
    // New rows of a new agent are indexed and found after the purge.
    let fresh = store.ensure_agent("fresh").await.unwrap();
    store
        .store_with_agent(
            &fresh,
            &[warren_memory::NewMemory::new(
                "n",
                "zqfresh after the purge",
            )],
            Utc::now(),
        )
        .await
        .unwrap();
    store.close().await;
    let s = state(&db).await;
    assert_eq!(s, nothing());
    let c = SqliteStore::open(&db).await.unwrap();
    let f = c.lookup_agent("fresh").await.unwrap().unwrap();
    let hits = c
        .recall_for_agents(
            &warren_memory::RecallScope {
                entries: vec![warren_memory::ScopeEntry {
                    agent: f,
                    categories: None,
                }],
            },
            &warren_memory::RecallQuery::new("zqfresh"),
        )
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    c.close().await;
}
