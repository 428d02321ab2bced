//! A tool round against its floor, in one run: Warren's turn loop (an instant fake provider
//! speaking OpenAI's wire protocol, the `file_read` tool) beside a minimal program doing the
//! same work with no runtime around it: the same HTTP requests (Warren's own, replayed byte
//! for byte) to the same fake provider through a client built the same way, the same file
//! read, and the same rows (the very rows Warren wrote, copied) into a database with the same
//! schema and durability settings (WAL, `synchronous = NORMAL`), one transaction a round.
//!
//! Prints Warren's round, the floor's and their difference (target: at most 1 ms, median), and
//! the same for a text-only turn. Warren and the floor alternate turn by turn.
//! `cargo bench -p warren-runtime --bench round`; `WARREN_BENCH_ONLY=warren` (or `floor`)
//! runs one side alone, for `strace -c -f` or a profiler.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use rusqlite::types::Value as SqlValue;
use serde_json::{json, Value};
use warren_runtime::host::{Host, HostEnv};
use warren_testkit::fake_llm::{FakeLlm, RecordedRequest, Reply};
use warren_testkit::TestInstall;
use warren_types::{ProviderFamily, TurnTrigger};

const ROUNDS: usize = 20;
const TURNS: usize = 30;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// The rows one turn added to sessions.db, table by table, in the order they were written,
/// with the number of `receipt_heads` updates (one a receipt).
#[derive(Clone, Default)]
struct TurnRows {
    tables: Vec<(String, Vec<String>, Vec<Vec<SqlValue>>)>,
}

impl TurnRows {
    fn count(&self) -> usize {
        self.tables.iter().map(|(_, _, rows)| rows.len()).sum()
    }
}

/// The largest rowid of every table of `db`.
fn rowid_marks(db: &rusqlite::Connection) -> BTreeMap<String, i64> {
    let tables: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    tables
        .into_iter()
        .map(|t| {
            let max: i64 = db
                .query_row(
                    &format!("SELECT COALESCE(MAX(rowid), 0) FROM \"{t}\""),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            (t, max)
        })
        .collect()
}

/// The rows added since `marks`.
fn rows_since(db: &rusqlite::Connection, marks: &BTreeMap<String, i64>) -> TurnRows {
    let mut out = TurnRows::default();
    for (table, mark) in marks {
        let mut stmt = db
            .prepare(&format!(
                "SELECT * FROM \"{table}\" WHERE rowid > ?1 ORDER BY rowid"
            ))
            .unwrap();
        let columns: Vec<String> = stmt
            .column_names()
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        let n = columns.len();
        let rows: Vec<Vec<SqlValue>> = stmt
            .query_map([mark], |r| {
                (0..n).map(|i| r.get::<_, SqlValue>(i)).collect()
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        if !rows.is_empty() {
            out.tables.push((table.clone(), columns, rows));
        }
    }
    // Parents first (foreign keys are checked at once).
    out.tables.sort_by_key(|(t, _, _)| match t.as_str() {
        "agents" => 0,
        "sessions" => 1,
        "turns" => 2,
        _ => 3,
    });
    out
}

/// The rows a turn wrote, without the agent's row (written once, on first use) and the
/// receipt chain's head (an upsert [`write_rows`] repeats per receipt).
fn turn_rows(db: &rusqlite::Connection, marks: &BTreeMap<String, i64>) -> TurnRows {
    let mut rows = rows_since(db, marks);
    rows.tables
        .retain(|(t, _, _)| t != "agents" && t != "receipt_heads");
    rows
}

/// The floor's database: sessions.db's schema and its agents and sessions, on its own file.
fn floor_db(source: &Path, at: &Path) -> rusqlite::Connection {
    let src = rusqlite::Connection::open(source).unwrap();
    let db = rusqlite::Connection::open(at).unwrap();
    db.pragma_update(None, "journal_mode", "WAL").unwrap();
    db.pragma_update(None, "synchronous", "NORMAL").unwrap();
    db.pragma_update(None, "foreign_keys", true).unwrap();
    let schema: Vec<String> = src
        .prepare("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for sql in schema {
        db.execute_batch(&sql).unwrap();
    }
    for table in ["agents"] {
        let marks = BTreeMap::from([(table.to_string(), 0)]);
        for (t, columns, rows) in rows_since(&src, &marks).tables {
            for row in rows {
                insert(&db, &t, &columns, row);
            }
        }
    }
    db
}

fn insert(db: &rusqlite::Connection, table: &str, columns: &[String], row: Vec<SqlValue>) {
    let sql = format!(
        "INSERT INTO \"{table}\" ({}) VALUES ({})",
        columns.join(", "),
        vec!["?"; columns.len()].join(", ")
    );
    db.prepare_cached(&sql)
        .unwrap()
        .execute(rusqlite::params_from_iter(row))
        .unwrap();
}

/// The rows of `turn` made unique for the floor's `n`-th copy: ids and turn ids get a suffix,
/// sequence numbers an offset, autoincrement ids are left to SQLite.
fn copy_rows(turn: &TurnRows, n: usize) -> TurnRows {
    let mut out = turn.clone();
    for (table, columns, rows) in &mut out.tables {
        for row in rows.iter_mut() {
            for (c, v) in columns.iter().zip(row.iter_mut()) {
                let key = matches!(
                    (table.as_str(), c.as_str()),
                    (_, "turn_id" | "session_id") | ("turns" | "sessions" | "receipts", "id")
                );
                if key {
                    if let SqlValue::Text(s) = v {
                        *s = format!("{s}-floor{n}");
                    }
                } else if c == "seq" && table == "receipts" {
                    if let SqlValue::Integer(i) = v {
                        *i += 1_000_000 * (n as i64 + 1);
                    }
                } else if table == "usage" && c == "id" {
                    *v = SqlValue::Null;
                }
            }
        }
    }
    out
}

/// Writes `rows` in one transaction; each receipt also moves its chain head, as Warren's
/// receipt log does, and the last share ends the turn.
fn write_rows(db: &mut rusqlite::Connection, rows: &TurnRows) {
    let tx = db.transaction().unwrap();
    for (table, columns, all) in &rows.tables {
        for row in all {
            insert(&tx, table, columns, row.clone());
            if table == "receipts" {
                tx.prepare_cached(
                    "INSERT INTO receipt_heads (agent_id, last_seq, last_mac, head_mac) VALUES (?1, ?2, ?3, ?3)
                     ON CONFLICT(agent_id) DO UPDATE SET last_seq = excluded.last_seq, last_mac = excluded.last_mac",
                )
                .unwrap()
                .execute(rusqlite::params![row[0], row[1], row[8]])
                .unwrap();
            }
        }
    }
    tx.commit().unwrap();
}

/// The floor's client side of one provider call: Warren's request replayed through Warren's
/// own HTTP client (same TLS setup, pool and `TCP_NODELAY`, without the provider layer around
/// it), the SSE answer read to its end and every frame parsed.
async fn provider_call(client: &reqwest::Client, url: &str, req: &RecordedRequest) -> usize {
    let body = serde_json::to_vec(&req.body).unwrap();
    let mut b = client.post(url).body(body);
    for (k, v) in &req.headers {
        if !matches!(k.as_str(), "host" | "content-length" | "connection") {
            b = b.header(k.as_str(), v.as_str());
        }
    }
    let mut r = b.send().await.unwrap();
    assert!(r.status().is_success(), "{}", r.status());
    let mut frames = 0;
    let mut pending = Vec::new();
    while let Some(chunk) = r.chunk().await.unwrap() {
        pending.extend_from_slice(&chunk);
        while let Some(end) = pending.windows(2).position(|w| w == b"\n\n") {
            let frame: Vec<u8> = pending.drain(..end + 2).collect();
            if let Some(data) = frame.strip_prefix(b"data: ") {
                let data = &data[..data.len() - 2];
                if data != b"[DONE]" {
                    let _: Value = serde_json::from_slice(data).unwrap();
                    frames += 1;
                }
            }
        }
    }
    frames
}

struct Side {
    warren_text: Vec<f64>,
    warren_tool: Vec<f64>,
    floor_text: Vec<f64>,
    floor_tool: Vec<f64>,
}

fn main() {
    let only = std::env::var("WARREN_BENCH_ONLY").unwrap_or_default();
    let (run_warren, run_floor) = (only != "floor", only != "warren");
    println!("load average at start: {}", loadavg());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let side = rt.block_on(bench(run_warren, run_floor));
    let per_round = |tool: &[f64], text: &[f64]| {
        (median(tool.to_vec()) - median(text.to_vec())) / ROUNDS as f64
    };
    println!("\n{TURNS} turns of each kind, alternated (medians):");
    if run_warren {
        println!(
            "  Warren: text-only turn {:>8.3} ms   turn of {ROUNDS} file_read rounds {:>8.3} ms",
            median(side.warren_text.clone()),
            median(side.warren_tool.clone())
        );
    }
    if run_floor {
        println!(
            "  floor:  text-only turn {:>8.3} ms   turn of {ROUNDS} file_read rounds {:>8.3} ms",
            median(side.floor_text.clone()),
            median(side.floor_tool.clone())
        );
    }
    if run_warren && run_floor {
        let w = per_round(&side.warren_tool, &side.warren_text);
        let f = per_round(&side.floor_tool, &side.floor_text);
        println!("  per tool round: Warren {w:.3} ms, floor {f:.3} ms, difference {:.3} ms (target <= 1 ms)", w - f);
        let (wt, ft) = (median(side.warren_text.clone()), median(side.floor_text));
        println!(
            "  text-only turn: Warren {wt:.3} ms, floor {ft:.3} ms, difference {:.3} ms",
            wt - ft
        );
    }
    println!("load average at end: {}", loadavg());
}

async fn bench(run_warren: bool, run_floor: bool) -> Side {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = TestInstall::with_config(&format!(
        "[risk_profiles.y]\nlevel = \"full\"\n[runtime_profiles.r]\nmax_tool_iterations = 50\n[agents.a]\nrisk_profile = \"y\"\nruntime_profile = \"r\"\nmodel_provider = \"openai.m\"\n{}",
        fake.config_block("m")
    ))
    .unwrap();
    let workspace = t.root().join("agents/a/workspace");
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(workspace.join("f.txt"), "hello").unwrap();
    let mut vars = BTreeMap::new();
    vars.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    let host = Host::open(t.layout(), HostEnv { home: None, vars })
        .await
        .unwrap();
    let sessions_db: PathBuf = t.layout().sessions_db();

    let text_turn = |prompt: &'static str| {
        fake.push(Reply::text("ok"));
        host.run("a", None, prompt, TurnTrigger::User, None)
    };
    let tool_turn = || {
        for _ in 0..ROUNDS {
            fake.push(Reply::tool_call("file_read", json!({"path": "f.txt"})));
        }
        fake.push(Reply::text("done"));
        host.run("a", None, "read", TurnTrigger::User, None)
    };

    // Warm-up, and what the floor replays: one turn of each kind, its requests and its rows.
    let capture = |before: usize| fake.requests()[before..].to_vec();
    let db = rusqlite::Connection::open(&sessions_db).unwrap();
    let (marks, before) = (rowid_marks(&db), fake.request_count());
    text_turn("x").await.unwrap();
    let (text_requests, text_rows) = (capture(before), turn_rows(&db, &marks));
    let (marks, before) = (rowid_marks(&db), fake.request_count());
    tool_turn().await.unwrap();
    let (tool_requests, tool_rows) = (capture(before), turn_rows(&db, &marks));
    drop(db);
    assert_eq!(text_requests.len(), 1);
    assert_eq!(tool_requests.len(), ROUNDS + 1);
    println!(
        "one text-only turn wrote {} rows, one turn of {ROUNDS} rounds {} rows ({} per round) to sessions.db",
        text_rows.count(),
        tool_rows.count(),
        tool_rows.count() / ROUNDS
    );
    for (table, _, rows) in &tool_rows.tables {
        println!("  {table}: {}", rows.len());
    }

    let client = warren_llm::service_client(warren_llm::ProxyMode::Direct).unwrap();
    let url = format!(
        "http://{}{}",
        fake.addr(),
        warren_testkit::fake_llm::wire_path(ProviderFamily::Openai)
    );
    let floor_dir = tempfile::tempdir().unwrap();
    let mut floor = floor_db(&sessions_db, &floor_dir.path().join("floor.db"));
    let file = workspace.join("f.txt");

    let mut side = Side {
        warren_text: Vec::new(),
        warren_tool: Vec::new(),
        floor_text: Vec::new(),
        floor_tool: Vec::new(),
    };
    // The requests replayed by the floor are recorded above; the timed turns keep none (their
    // bodies grow with every round, and the server would hold them all).
    fake.keep_requests(false);
    for n in 0..TURNS {
        if run_warren {
            let start = Instant::now();
            text_turn("x").await.unwrap();
            side.warren_text
                .push(start.elapsed().as_secs_f64() * 1000.0);
            let start = Instant::now();
            tool_turn().await.unwrap();
            side.warren_tool
                .push(start.elapsed().as_secs_f64() * 1000.0);
        }
        if run_floor {
            let rows = copy_rows(&text_rows, 2 * n);
            fake.push(Reply::text("ok"));
            let start = Instant::now();
            provider_call(&client, &url, &text_requests[0]).await;
            write_rows(&mut floor, &rows);
            side.floor_text.push(start.elapsed().as_secs_f64() * 1000.0);

            let rows = copy_rows(&tool_rows, 2 * n + 1);
            for _ in 0..ROUNDS {
                fake.push(Reply::tool_call("file_read", json!({"path": "f.txt"})));
            }
            fake.push(Reply::text("done"));
            let start = Instant::now();
            // One transaction a round, and the final answer's own.
            let mut parts = split(&rows, ROUNDS + 1).into_iter();
            for req in &tool_requests[..ROUNDS] {
                provider_call(&client, &url, req).await;
                let text = std::fs::read_to_string(&file).unwrap();
                assert_eq!(text, "hello");
                write_rows(&mut floor, &parts.next().unwrap());
            }
            provider_call(&client, &url, &tool_requests[ROUNDS]).await;
            write_rows(&mut floor, &parts.next().unwrap());
            side.floor_tool.push(start.elapsed().as_secs_f64() * 1000.0);
        }
    }
    side
}

/// `rows` cut into `parts` consecutive shares, table by table (the turn's own row in the first).
fn split(rows: &TurnRows, parts: usize) -> Vec<TurnRows> {
    (0..parts)
        .map(|part| TurnRows {
            tables: rows
                .tables
                .iter()
                .map(|(table, columns, all)| {
                    let (from, to) = if table == "turns" || table == "sessions" {
                        if part == 0 {
                            (0, all.len())
                        } else {
                            (0, 0)
                        }
                    } else {
                        (all.len() * part / parts, all.len() * (part + 1) / parts)
                    };
                    (table.clone(), columns.clone(), all[from..to].to_vec())
                })
                .collect(),
        })
        .collect()
}
