//! Memory benchmark over a Zipf corpus: 100,000 rows over 20 agents (5,000 each, three
//! categories), 25–35 words per row drawn from a Zipf distribution (s = 1) over a 10,000-word
//! vocabulary, fixed seed. A recall is two words, limit 10, as an agent whose allowlist is
//! itself, one peer with every category and one peer with `core` only.
//!
//! Every figure is printed beside a floor measured in the same run, interleaved with it:
//! - store, in batches of 500 and one row per call: the same rows written by hand into a
//!   second database loaded in lockstep (same schema, same size): one request of `BEGIN`, a raw
//!   multi-row `INSERT`, the raw insert of the same rows into the agent's full-text index and
//!   `COMMIT`;
//! - recall, on a rare-word mix (two words of ranks 1,000–10,000) and a common-word mix (two
//!   Zipf words), 200 queries each: the two raw query shapes over the agents' indexes
//!   (match-then-filter: every match of each agent's index joined to its row and filtered by the
//!   allowlist; scope-in-index: the grant's categories as FTS5 tokens inside each index's MATCH,
//!   each index's top rows, then the best of them) as hand-written SQL, and Warren's
//!   `recall_for_agents`;
//! - export of one agent (5,000 rows): the best of one raw statement answering them as JSON and
//!   a raw read of the same rows over a blocking connection;
//! - purge of one agent (5,000 rows): the same statements issued by hand on another agent of
//!   the same size; deleting the index's entries one by one instead of dropping the index (what
//!   a shared index costs) for reference;
//! - database bytes per row.
//!
//! First, Warren beside ZeroClaw's SQLite memory and three plain FTS5 layouts on the same
//! corpus, each in a process of its own, three rounds ([`compare`]);
//! `WARREN_BENCH_COMPARE_ONLY=1` stops after it.
//!
//! `WARREN_BENCH_1M=1` adds the same run at 1,000,000 rows over 200 agents. With
//! `WARREN_TEST_POSTGRES_URL` set, the Postgres backend's figures are printed beside.
//! The load average is printed at the start and the end (the machine may be shared).
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "memory/compare.rs"]
mod compare;
#[path = "memory/postgres.rs"]
mod postgres;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::TryStreamExt;
use sqlx::SqlitePool;
use uuid::Uuid;
use warren_memory::sqlite::index::{index_table, match_expr};
use warren_memory::sqlite::rank::ScopeStats;
use warren_memory::text::{fts_terms_expr, query_terms};
use warren_memory::{
    export_agent, AgentRef, MemoryStore, NewMemory, RecallQuery, RecallScope, ScopeEntry,
    SqliteStore,
};

const ROWS_PER_AGENT: usize = 5_000;
const VOCAB: usize = 10_000;
const LOAD_BATCH: usize = 500;
const SEED: u64 = 0x5eed_2026;
const CATEGORIES: [&str; 3] = ["core", "daily", "projects"];
const QUERIES: usize = 200;
const LIMIT: usize = 10;

/// SplitMix64: small, fast, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo) as u64) as usize
    }
}

/// Zipf (s = 1) over ranks 0..n by inverse CDF.
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize) -> Self {
        let mut acc = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|k| {
                acc += 1.0 / k as f64;
                acc
            })
            .collect();
        for c in cdf.iter_mut() {
            *c /= acc;
        }
        Zipf { cdf }
    }
    fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|c| *c < u).min(self.cdf.len() - 1)
    }
}

fn word(rank: usize) -> String {
    format!("w{rank}")
}

/// The rows of agent `a`, load round `round` (generated on demand: the 1M corpus is not kept).
fn batch(zipf: &Zipf, a: usize, round: usize) -> Vec<NewMemory> {
    let mut rng = Rng(SEED ^ ((a as u64) << 32) ^ round as u64);
    (round * LOAD_BATCH..(round + 1) * LOAD_BATCH)
        .map(|i| {
            let n = rng.range(25, 36);
            let text: Vec<String> = (0..n).map(|_| word(zipf.sample(&mut rng))).collect();
            NewMemory::new(format!("a{a}r{i}"), text.join(" "))
                .category(CATEGORIES[i % CATEGORIES.len()])
        })
        .collect()
}

struct Mixes {
    rare: Vec<String>,
    common: Vec<String>,
}

fn mixes(zipf: &Zipf) -> Mixes {
    let mut rng = Rng(SEED.rotate_left(17));
    let rare = (0..QUERIES)
        .map(|_| {
            format!(
                "{} {}",
                word(rng.range(1_000, VOCAB)),
                word(rng.range(1_000, VOCAB))
            )
        })
        .collect();
    let common = (0..QUERIES)
        .map(|_| {
            format!(
                "{} {}",
                word(zipf.sample(&mut rng)),
                word(zipf.sample(&mut rng))
            )
        })
        .collect();
    Mixes { rare, common }
}

/// Own agent (all), a plain grant (all), a category grant (`core`).
fn scope(agents: &[AgentRef]) -> RecallScope {
    RecallScope {
        entries: vec![
            ScopeEntry {
                agent: agents[0].clone(),
                categories: None,
            },
            ScopeEntry {
                agent: agents[1].clone(),
                categories: None,
            },
            ScopeEntry {
                agent: agents[2].clone(),
                categories: Some(vec!["core".into()]),
            },
        ],
    }
}

/// Loads `agents` × 5,000 rows through Warren in batches of 500, round by round.
async fn load(store: &dyn MemoryStore, agents: usize, zipf: &Zipf) -> (Vec<AgentRef>, Duration) {
    let mut refs = Vec::new();
    for a in 0..agents {
        refs.push(store.ensure_agent(&format!("agent{a}")).await.unwrap());
    }
    let mut took = Duration::ZERO;
    for round in 0..ROWS_PER_AGENT / LOAD_BATCH {
        for (a, agent) in refs.iter().enumerate() {
            let rows = batch(zipf, a, round);
            let t = Instant::now();
            store
                .store_with_agent(agent, &rows, Utc::now())
                .await
                .unwrap();
            took += t.elapsed();
        }
    }
    (refs, took)
}

/// The floor of a store: the same rows written by hand in one request to SQLite's thread, as
/// Warren sends them: `BEGIN`, one raw multi-row `INSERT` (same columns and values as Warren's
/// statement, without its upsert clause, `RETURNING` or receipts), one raw `INSERT ... SELECT`
/// of the same rows into the agent's index, `COMMIT`.
async fn raw_insert(pool: &SqlitePool, agent: &AgentRef, rows: &[NewMemory]) {
    let mut sql = String::from(
        "BEGIN; INSERT INTO memories (id, agent_id, key, content, category, session_id, \
         importance, created_at, updated_at) VALUES ",
    );
    for i in 0..rows.len() {
        sql.push_str(if i == 0 { "" } else { ", " });
        sql.push_str("(?, ?, ?, ?, ?, ?, ?, ?, ?)");
    }
    let table = index_table(&agent.id);
    sql.push_str(&format!(
        "; INSERT INTO {table} (rowid, body, scope) SELECT seq, key || ' ' || content, \
         'c' || lower(hex(category)) FROM memories WHERE agent_id = ? AND key IN ("
    ));
    for i in 0..rows.len() {
        sql.push_str(if i == 0 { "?" } else { ", ?" });
    }
    sql.push_str("); COMMIT");
    let ts = Utc::now().timestamp_micros();
    let mut q = sqlx::query(&sql);
    for r in rows {
        q = q
            .bind(Uuid::now_v7())
            .bind(agent.id)
            .bind(&r.key)
            .bind(&r.content)
            .bind(&r.category)
            .bind(&r.session_id)
            .bind(r.importance)
            .bind(ts)
            .bind(ts);
    }
    q = q.bind(agent.id);
    for r in rows {
        q = q.bind(&r.key);
    }
    q.execute(pool).await.unwrap();
}

/// Loads the corpus into Warren's store and, batch by batch in lockstep (alternating which goes
/// first), the same rows by raw `INSERT` into `floor` (another database of the same schema).
/// Returns Warren's agents and the time each side took.
async fn load_pair(
    store: &SqliteStore,
    floor: &SqliteStore,
    agents: usize,
    zipf: &Zipf,
) -> (Vec<AgentRef>, Vec<AgentRef>, Duration, Duration) {
    let (mut ours, mut raw) = (Vec::new(), Vec::new());
    for a in 0..agents {
        ours.push(store.ensure_agent(&format!("agent{a}")).await.unwrap());
        raw.push(floor.ensure_agent(&format!("agent{a}")).await.unwrap());
    }
    let (mut took, mut took_raw) = (Duration::ZERO, Duration::ZERO);
    for round in 0..ROWS_PER_AGENT / LOAD_BATCH {
        for a in 0..agents {
            let rows = batch(zipf, a, round);
            for k in 0..2 {
                let start = Instant::now();
                if (round + a + k) % 2 == 0 {
                    store
                        .store_with_agent(&ours[a], &rows, Utc::now())
                        .await
                        .unwrap();
                    took += start.elapsed();
                } else {
                    raw_insert(floor.writer(), &raw[a], &rows).await;
                    took_raw += start.elapsed();
                }
            }
        }
    }
    (ours, raw, took, took_raw)
}

/// The 1-, 5- and 15-minute load averages.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// CPU time used so far by every thread of this process (Linux scheduler statistics): beside a
/// wall time, it shows how much of that time the work itself took while other processes
/// competed for the cores.
fn cpu_time() -> Duration {
    let mut ns = 0u64;
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            let stat = std::fs::read_to_string(task.path().join("schedstat")).unwrap_or_default();
            ns += stat
                .split_whitespace()
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    Duration::from_nanos(ns)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn msf(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// p50 / p95 of a sorted list of latencies.
#[derive(Clone, Copy)]
struct Lat {
    p50: f64,
    p95: f64,
}

impl Lat {
    fn of(mut v: Vec<Duration>) -> Lat {
        v.sort();
        Lat {
            p50: msf(percentile(&v, 0.5)),
            p95: msf(percentile(&v, 0.95)),
        }
    }
    fn show(&self) -> String {
        format!("{:.3} / {:.3} ms", self.p50, self.p95)
    }
}

/// Latency of each query (after one warm-up pass over the first 20).
async fn latencies<F, Fut>(queries: &[String], mut run: F) -> Vec<Duration>
where
    F: FnMut(String) -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    for q in queries.iter().take(20) {
        run(q.clone()).await;
    }
    let mut out = Vec::with_capacity(queries.len());
    for q in queries {
        let t = Instant::now();
        let n = run(q.clone()).await;
        out.push(t.elapsed());
        assert!(n <= LIMIT);
    }
    out
}

struct Table(Vec<(String, String, String)>);

impl Table {
    fn row(&mut self, name: impl Into<String>, value: impl Into<String>, note: impl Into<String>) {
        self.0.push((name.into(), value.into(), note.into()));
    }
    fn print(&self) {
        println!("\n{:<62} {:>30}  target / ratio", "memory figure", "value");
        println!("{}", "-".repeat(128));
        for (n, v, t) in &self.0 {
            println!("{n:<62} {v:>30}  {t}");
        }
    }
}

const COLS: &str = "m.id, m.agent_id, a.alias, m.key, m.content, m.category, m.session_id, \
                    m.importance, m.created_at, m.updated_at";

/// The allowlist as SQL over `m`, the ids inlined (a raw statement).
fn scope_sql(scope: &RecallScope) -> String {
    let parts: Vec<String> = scope
        .entries
        .iter()
        .map(|e| {
            let id = format!("x'{}'", e.agent.id.simple());
            match &e.categories {
                None => format!("(m.agent_id = {id})"),
                Some(c) => format!(
                    "(m.agent_id = {id} AND m.category IN ({}))",
                    c.iter()
                        .map(|c| format!("'{c}'"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        })
        .collect();
    format!("({})", parts.join(" OR "))
}

/// `warren_bm25(<t>, ?2, ?3, ?4, ...)`: Warren's ranking function with the scope's statistics
/// bound from parameter 2 on (parameter 1 is the words' expression).
fn ranked(t: &str, stats: &ScopeStats) -> String {
    let mut f = format!("warren_bm25({t}, ?2, ?3");
    for k in 0..stats.docs.len() {
        f.push_str(&format!(", ?{}", 4 + k));
    }
    f.push(')');
    f
}

fn bind_stats<'q>(
    mut q: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    stats: &ScopeStats,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>> {
    q = q.bind(stats.rows).bind(stats.avgdl());
    for d in &stats.docs {
        q = q.bind(*d);
    }
    q
}

/// Raw match-then-filter: the scope's statistics (the same statement Warren runs), then every
/// match of each agent's index ranked, joined to its row, filtered by the allowlist, sorted,
/// limited.
async fn floor_match_then_filter(
    store: &SqliteStore,
    scope: &RecallScope,
    scope_sql: &str,
    q: &str,
) -> Vec<f64> {
    let stats = store.recall_stats(scope, q).await.unwrap();
    let body = format!("body : ({})", fts_terms_expr(&query_terms(q)));
    let parts: Vec<String> = scope
        .entries
        .iter()
        .map(|e| {
            let t = index_table(&e.agent.id);
            format!(
                "SELECT rowid AS seq, {} AS rank FROM {t} WHERE {t} MATCH ?1",
                ranked(&t, &stats)
            )
        })
        .collect();
    let sql = format!(
        "SELECT {COLS}, f.rank FROM ({}) f \
         CROSS JOIN memories m ON m.seq = f.seq CROSS JOIN agents a ON a.id = m.agent_id \
         WHERE {scope_sql} ORDER BY 11 LIMIT {LIMIT}",
        parts.join(" UNION ALL ")
    );
    let query = bind_stats(sqlx::query(&sql).bind(body), &stats);
    let rows: Vec<sqlx::sqlite::SqliteRow> = query.fetch_all(store.pool()).await.unwrap();
    use sqlx::Row;
    rows.iter().map(|r| r.get::<f64, _>(10)).collect()
}

/// Raw scope-in-index: the scope's statistics, then each agent's index ranks the rows of the
/// categories its grant allows (FTS5 tokens inside the MATCH) and gives its top rows; the best
/// of those, then the join.
async fn floor_scope_in_index(store: &SqliteStore, scope: &RecallScope, q: &str) -> Vec<f64> {
    let stats = store.recall_stats(scope, q).await.unwrap();
    let terms = query_terms(q);
    let first = 4 + stats.docs.len();
    let parts: Vec<String> = scope
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let t = index_table(&e.agent.id);
            format!(
                "SELECT * FROM (SELECT rowid AS seq, {} AS rank FROM {t} WHERE {t} MATCH ?{} \
                 ORDER BY rank LIMIT {LIMIT})",
                ranked(&t, &stats),
                first + i
            )
        })
        .collect();
    let sql = format!(
        "SELECT {COLS}, f.rank FROM (SELECT * FROM ({}) ORDER BY rank LIMIT {LIMIT}) f \
         CROSS JOIN memories m ON m.seq = f.seq CROSS JOIN agents a ON a.id = m.agent_id \
         ORDER BY 11",
        parts.join(" UNION ALL ")
    );
    // ?1 is not used by this shape; it is bound so the statistics keep their numbers.
    let mut query = bind_stats(sqlx::query(&sql).bind(""), &stats);
    for e in &scope.entries {
        query = query.bind(match_expr(&terms, e.categories.as_deref(), None));
    }
    let rows: Vec<sqlx::sqlite::SqliteRow> = query.fetch_all(store.pool()).await.unwrap();
    use sqlx::Row;
    rows.iter().map(|r| r.get::<f64, _>(10)).collect()
}

fn scores(v: &[f64]) -> Vec<String> {
    v.iter().map(|s| format!("{:.9}", s.abs())).collect()
}

/// Figures of one SQLite run, for the 1M comparison.
struct Run {
    rare: Lat,
    common: Lat,
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}x", a / b.max(1e-9))
}

fn med(mut v: Vec<Duration>) -> f64 {
    v.sort();
    msf(v[v.len() / 2])
}

fn sqlite_run(rt: &tokio::runtime::Runtime, agents_n: usize, t: &mut Table) -> Run {
    let label = format!("sqlite {}k/{agents_n}", agents_n * ROWS_PER_AGENT / 1000);
    let zipf = Zipf::new(VOCAB);
    let qs = mixes(&zipf);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let store = Arc::new(rt.block_on(SqliteStore::open(&path)).unwrap());
    let floor = rt
        .block_on(SqliteStore::open(&dir.path().join("floor.db")))
        .unwrap();
    let (agents, raw_agents, took, took_raw) =
        rt.block_on(load_pair(&store, &floor, agents_n, &zipf));
    let total = (agents_n * ROWS_PER_AGENT) as f64;
    let (rate, raw_rate) = (total / took.as_secs_f64(), total / took_raw.as_secs_f64());
    t.row(
        format!("{label}: store, batches of {LOAD_BATCH}, raw INSERT (rows/s)"),
        format!("{raw_rate:.0}"),
        "floor",
    );
    t.row(
        format!("{label}: store, batches of {LOAD_BATCH}, Warren (rows/s)"),
        format!("{rate:.0}"),
        format!(">= 15,000; {} of the floor's time", ratio(raw_rate, rate)),
    );

    // One row per call, interleaved with one raw INSERT per row into the floor database (both
    // at the corpus's size).
    let single_agent = rt.block_on(store.ensure_agent("single")).unwrap();
    let raw_single = rt.block_on(floor.ensure_agent("single")).unwrap();
    let singles = 2_000;
    let (mut ours, mut raw) = (Duration::ZERO, Duration::ZERO);
    let (mut ours_cpu, mut raw_cpu) = (Duration::ZERO, Duration::ZERO);
    rt.block_on(async {
        for i in 0..singles {
            let row = NewMemory::new(format!("s{i}"), format!("single row number {i} w1 w2 w3"));
            for k in 0..2 {
                let cpu = cpu_time();
                let start = Instant::now();
                if (i + k) % 2 == 0 {
                    store
                        .store_with_agent(&single_agent, std::slice::from_ref(&row), Utc::now())
                        .await
                        .unwrap();
                    ours += start.elapsed();
                    ours_cpu += cpu_time().saturating_sub(cpu);
                } else {
                    raw_insert(floor.writer(), &raw_single, std::slice::from_ref(&row)).await;
                    raw += start.elapsed();
                    raw_cpu += cpu_time().saturating_sub(cpu);
                }
            }
        }
    });
    let (rate, raw_rate) = (
        singles as f64 / ours.as_secs_f64(),
        singles as f64 / raw.as_secs_f64(),
    );
    let per_cpu = |d: Duration| singles as f64 / d.as_secs_f64();
    t.row(
        format!("{label}: store, one row per call, raw INSERT (rows/s)"),
        format!("{raw_rate:.0} ({:.0} per CPU s)", per_cpu(raw_cpu)),
        "floor",
    );
    t.row(
        format!("{label}: store, one row per call, Warren (rows/s)"),
        format!("{rate:.0} ({:.0} per CPU s)", per_cpu(ours_cpu)),
        format!(
            "{}; {} of the floor's time",
            if agents_n > 20 {
                ">= 1,500"
            } else {
                ">= 2,000"
            },
            ratio(raw_rate, rate)
        ),
    );
    drop(raw_agents);
    rt.block_on(floor.close());
    drop(floor);

    // A restarted process: the store is opened again (statistics refreshed on open).
    rt.block_on(store.close());
    drop(store);
    let store = Arc::new(rt.block_on(SqliteStore::open(&path)).unwrap());
    let pool = store.pool().clone();
    let bytes: i64 = rt
        .block_on(
            sqlx::query_scalar(
                "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size",
            )
            .fetch_one(&pool),
        )
        .unwrap();
    t.row(
        format!("{label}: database bytes per row"),
        format!("{:.0}", bytes as f64 / (total + singles as f64)),
        "<= 600",
    );

    let sc = scope(&agents);
    let ssql = scope_sql(&sc);
    let mut run = Run {
        rare: Lat { p50: 0.0, p95: 0.0 },
        common: Lat { p50: 0.0, p95: 0.0 },
    };
    for (mix, queries) in [("rare", &qs.rare), ("common", &qs.common)] {
        // The three are interleaved query by query (rotating which goes first), so the page
        // cache and the machine's load treat them alike.
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        rt.block_on(async {
            for (i, q) in queries.iter().take(20).chain(queries.iter()).enumerate() {
                let mut took = [Duration::ZERO; 3];
                for k in 0..3 {
                    let which = (i + k) % 3;
                    let start = Instant::now();
                    let n = match which {
                        0 => floor_match_then_filter(&store, &sc, &ssql, q).await.len(),
                        1 => floor_scope_in_index(&store, &sc, q).await.len(),
                        _ => store
                            .recall_for_agents(&sc, &RecallQuery::new(q.clone()).limit(LIMIT))
                            .await
                            .unwrap()
                            .len(),
                    };
                    took[which] = start.elapsed();
                    assert!(n <= LIMIT);
                }
                if i >= 20 {
                    a.push(took[0]);
                    b.push(took[1]);
                    c.push(took[2]);
                }
            }
        });
        let (mtf, sii, warren) = (Lat::of(a), Lat::of(b), Lat::of(c));
        // Warren answers what the raw shapes answer (scores of the top rows, in order).
        let agree = rt.block_on(async {
            let mut same = 0;
            for q in queries.iter() {
                let w = store
                    .recall_for_agents(&sc, &RecallQuery::new(q.clone()).limit(LIMIT))
                    .await
                    .unwrap();
                let w: Vec<f64> = w.iter().map(|r| r.score.unwrap_or(0.0)).collect();
                let a = floor_match_then_filter(&store, &sc, &ssql, q).await;
                let b = floor_scope_in_index(&store, &sc, q).await;
                same += usize::from(scores(&w) == scores(&a) && scores(&a) == scores(&b));
            }
            same
        });
        let best = if mtf.p50 <= sii.p50 { mtf } else { sii };
        t.row(
            format!("{label}: {mix} words, raw match-then-filter p50/p95"),
            mtf.show(),
            "floor",
        );
        t.row(
            format!("{label}: {mix} words, raw scope-in-index p50/p95"),
            sii.show(),
            "floor",
        );
        t.row(
            format!("{label}: {mix} words, Warren recall p50/p95"),
            warren.show(),
            format!(
                "{} / {} of the best shape (<= 1.3x / 1.5x)",
                ratio(warren.p50, best.p50),
                ratio(warren.p95, best.p95)
            ),
        );
        t.row(
            format!("{label}: {mix} words, same top-{LIMIT} scores as both shapes"),
            format!("{agree}/{}", queries.len()),
            "all",
        );
        if mix == "rare" {
            run.rare = warren;
        } else {
            run.common = warren;
        }
    }

    export_figures(rt, &store, &path, &agents, &label, t);
    purge_figures(rt, &store, &agents, &label, t);
    rt.block_on(store.close());
    run
}

/// Export of one agent (5,000 rows) on five agents, each read four ways in a rotating order:
/// Warren's stream, one raw statement answering the rows as one JSON array, a raw read over a
/// blocking connection on a blocking thread (the floor is the better of these two), and sqlx's
/// row-by-row fetch for reference.
fn export_figures(
    rt: &tokio::runtime::Runtime,
    store: &Arc<SqliteStore>,
    path: &Path,
    agents: &[AgentRef],
    label: &str,
    t: &mut Table,
) {
    let pool = store.pool().clone();
    let blocking = Arc::new(Mutex::new(
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap(),
    ));
    let mut took: [Vec<Duration>; 4] = Default::default();
    let mut cpu: [Vec<Duration>; 4] = Default::default();
    for i in 0..5 {
        let id = agents[3 + i].id;
        for k in 0..4 {
            let which = (i + k) % 4;
            let cpu0 = cpu_time();
            let start = Instant::now();
            let n = match which {
                0 => rt
                    .block_on(export_agent(store.clone(), id).try_collect::<Vec<_>>())
                    .unwrap()
                    .len(),
                1 => {
                    let page: String = rt
                        .block_on(
                            sqlx::query_scalar(
                                "SELECT json_group_array(json_array(lower(hex(id)), key, content, \
                                 category, session_id, importance, created_at, updated_at)) FROM \
                                 (SELECT * FROM memories WHERE agent_id = ? ORDER BY created_at, id)",
                            )
                            .bind(id)
                            .fetch_one(&pool),
                        )
                        .unwrap();
                    assert!(page.len() > ROWS_PER_AGENT);
                    ROWS_PER_AGENT
                }
                2 => {
                    let conn = blocking.clone();
                    let _inside = rt.enter();
                    rt.block_on(tokio::task::spawn_blocking(move || {
                        let conn = conn.lock().unwrap();
                        let mut st = conn
                            .prepare_cached(
                                "SELECT id, key, content, category, session_id, importance, \
                                 created_at, updated_at FROM memories WHERE agent_id = ? \
                                 ORDER BY created_at, id",
                            )
                            .unwrap();
                        type Raw = (
                            Vec<u8>,
                            String,
                            String,
                            String,
                            Option<String>,
                            f64,
                            i64,
                            i64,
                        );
                        let rows: Vec<Raw> = st
                            .query_map([id.as_bytes().as_slice()], |r| {
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
                            })
                            .unwrap()
                            .collect::<Result<_, _>>()
                            .unwrap();
                        rows.len()
                    }))
                    .unwrap()
                }
                _ => rt
                    .block_on(
                        sqlx::query(&format!(
                            "SELECT {COLS} FROM memories m JOIN agents a ON a.id = m.agent_id \
                             WHERE m.agent_id = ? ORDER BY m.created_at, m.id"
                        ))
                        .bind(id)
                        .fetch_all(&pool),
                    )
                    .unwrap()
                    .len(),
            };
            took[which].push(start.elapsed());
            cpu[which].push(cpu_time().saturating_sub(cpu0));
            assert_eq!(n, ROWS_PER_AGENT);
        }
    }
    let [w, json, raw, rows] = took.map(med);
    let [wc, jsonc, rawc, rowsc] = cpu.map(med);
    t.row(
        format!("{label}: export 5,000 rows, raw one-statement JSON"),
        format!("{json:.3} ms (CPU {jsonc:.1} ms)"),
        "floor",
    );
    t.row(
        format!("{label}: export 5,000 rows, raw blocking read"),
        format!("{raw:.3} ms (CPU {rawc:.1} ms)"),
        "floor",
    );
    t.row(
        format!("{label}: export 5,000 rows, sqlx row-by-row fetch"),
        format!("{rows:.3} ms (CPU {rowsc:.1} ms)"),
        "reference",
    );
    t.row(
        format!("{label}: export 5,000 rows, Warren (entries)"),
        format!("{w:.3} ms (CPU {wc:.1} ms)"),
        format!("<= 15 ms; {} of the best floor", ratio(w, json.min(raw))),
    );
}

/// Purge of one agent (5,000 rows): Warren's `purge_agent` on agents 12..15, and the same
/// statements issued by hand in one transaction on agents 8..11 (equally sized, alternating
/// which goes first); then, for reference, agents 16 and 17 purged by deleting their index
/// entries one by one (as a shared index must) instead of dropping the index.
fn purge_figures(
    rt: &tokio::runtime::Runtime,
    store: &Arc<SqliteStore>,
    agents: &[AgentRef],
    label: &str,
    t: &mut Table,
) {
    let writer = store.writer().clone();
    // `drop_index`: Warren's statements (a 16 MiB page cache for the transaction, the index
    // dropped); otherwise the index's entries are deleted row by row first.
    let by_hand = |alias: String, drop_index: bool| {
        let writer = writer.clone();
        async move {
            use sqlx::Connection;
            let mut conn = writer.acquire().await.unwrap();
            let cache: i64 = sqlx::query_scalar("PRAGMA cache_size")
                .fetch_one(&mut *conn)
                .await
                .unwrap();
            sqlx::query("PRAGMA cache_size = -16384")
                .execute(&mut *conn)
                .await
                .unwrap();
            let mut tx = conn.begin().await.unwrap();
            let id: Uuid = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
                .bind(&alias)
                .fetch_one(&mut *tx)
                .await
                .unwrap();
            let table = index_table(&id);
            if !drop_index {
                sqlx::query(&format!(
                    "DELETE FROM {table} WHERE rowid IN \
                     (SELECT seq FROM memories WHERE agent_id = ?)"
                ))
                .bind(id)
                .execute(&mut *tx)
                .await
                .unwrap();
            }
            sqlx::query(&format!("DROP TABLE {table}"))
                .execute(&mut *tx)
                .await
                .unwrap();
            let n = sqlx::query("DELETE FROM memories WHERE agent_id = ?")
                .bind(id)
                .execute(&mut *tx)
                .await
                .unwrap()
                .rows_affected();
            sqlx::query("DELETE FROM agents WHERE id = ?")
                .bind(id)
                .execute(&mut *tx)
                .await
                .unwrap();
            tx.commit().await.unwrap();
            sqlx::query(&format!("PRAGMA cache_size = {cache}"))
                .execute(&mut *conn)
                .await
                .unwrap();
            n
        }
    };
    let (mut floor, mut ours) = (Vec::new(), Vec::new());
    let (mut floor_cpu, mut ours_cpu) = (Vec::new(), Vec::new());
    for i in 0..4 {
        for k in 0..2 {
            let cpu = cpu_time();
            let start = Instant::now();
            let n = if (i + k) % 2 == 0 {
                rt.block_on(by_hand(agents[8 + i].alias.clone(), true))
            } else {
                rt.block_on(store.purge_agent(&agents[12 + i].alias))
                    .unwrap()
            };
            let wall = start.elapsed();
            let cpu = cpu_time().saturating_sub(cpu);
            if (i + k) % 2 == 0 {
                floor.push(wall);
                floor_cpu.push(cpu);
            } else {
                ours.push(wall);
                ours_cpu.push(cpu);
            }
            assert_eq!(n as usize, ROWS_PER_AGENT);
        }
    }
    let mut one_by_one = Vec::new();
    for a in &agents[16..18] {
        let start = Instant::now();
        let n = rt.block_on(by_hand(a.alias.clone(), false));
        one_by_one.push(start.elapsed());
        assert_eq!(n as usize, ROWS_PER_AGENT);
    }
    let (f, w) = (med(floor), med(ours));
    let (fc, wc) = (med(floor_cpu), med(ours_cpu));
    t.row(
        format!("{label}: purge 5,000 rows, same statements by hand"),
        format!("{f:.3} ms (CPU {fc:.1} ms)"),
        "floor",
    );
    t.row(
        format!("{label}: purge 5,000 rows, Warren"),
        format!("{w:.3} ms (CPU {wc:.1} ms)"),
        format!("<= 60 ms; {} of the floor", ratio(w, f)),
    );
    let p: Vec<String> = one_by_one
        .iter()
        .map(|d| format!("{:.0}", msf(*d)))
        .collect();
    t.row(
        format!("{label}: purge 5,000 rows, index entries deleted one by one"),
        format!("{} ms", p.join(" / ")),
        "reference",
    );
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is taken from the command line.
    if let Ok(layout) = std::env::var("WARREN_MEMORY_LAYOUT") {
        compare::child(&layout);
        return;
    }
    let mut t = Table(Vec::new());
    println!("load average at the start: {}", loadavg());
    compare::run(&mut t);
    println!("load average after the comparison: {}", loadavg());
    if std::env::var("WARREN_BENCH_COMPARE_ONLY").as_deref() == Ok("1") {
        t.print();
        return;
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let small = sqlite_run(&rt, 20, &mut t);
    println!("load average after the 100k run: {}", loadavg());
    match std::env::var("WARREN_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => postgres::run(&rt, &url, &mut t),
        _ => println!("postgres figures skipped: WARREN_TEST_POSTGRES_URL not set"),
    }
    if std::env::var("WARREN_BENCH_1M").as_deref() == Ok("1") {
        let big = sqlite_run(&rt, 200, &mut t);
        t.row(
            "1M/200 vs 100k/20: rare words, Warren recall p50",
            ratio(big.rare.p50, small.rare.p50),
            "<= 2x",
        );
        t.row(
            "1M/200 vs 100k/20: common words, Warren recall p50",
            ratio(big.common.p50, small.common.p50),
            "<= 2x",
        );
    } else {
        println!("1M-row run skipped: set WARREN_BENCH_1M=1");
    }
    println!("load average at the end: {}", loadavg());
    t.print();
}
