//! Memory benchmarks (criterion) over the Zipf corpus of the memory issue: 100,000 rows over 20
//! agents (5,000 each, three categories), 25–35 words per row drawn from a Zipf distribution
//! over a 10,000-word vocabulary with a fixed seed; queries are two words from the same
//! distribution. Prints a table of the headline figures at the end. Postgres figures are added
//! when `WARREN_TEST_POSTGRES_URL` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use criterion::{Criterion, Throughput};
use futures::TryStreamExt;
use warren_memory::{
    export_agent, AgentRef, MemoryStore, NewMemory, PostgresStore, RecallQuery, RecallScope,
    ScopeEntry, SqliteStore,
};

const AGENTS: usize = 20;
const ROWS_PER_AGENT: usize = 5_000;
const VOCAB: usize = 10_000;
const LOAD_BATCH: usize = 500;
const SEED: u64 = 0x5eed_2026;
const CATEGORIES: [&str; 3] = ["core", "daily", "projects"];

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

struct Corpus {
    /// (agent index, row) in load order: rounds of LOAD_BATCH rows per agent.
    batches: Vec<(usize, Vec<NewMemory>)>,
    zipf_queries: Vec<String>,
    mid_queries: Vec<String>,
}

fn corpus() -> Corpus {
    let mut rng = Rng(SEED);
    let zipf = Zipf::new(VOCAB);
    let mut per_agent: Vec<Vec<NewMemory>> = vec![Vec::new(); AGENTS];
    for (a, rows) in per_agent.iter_mut().enumerate() {
        for i in 0..ROWS_PER_AGENT {
            let n = rng.range(25, 36);
            let text: Vec<String> = (0..n).map(|_| word(zipf.sample(&mut rng))).collect();
            rows.push(
                NewMemory::new(format!("a{a}r{i}"), text.join(" "))
                    .category(CATEGORIES[i % CATEGORIES.len()]),
            );
        }
    }
    let mut batches = Vec::new();
    for round in 0..ROWS_PER_AGENT / LOAD_BATCH {
        for (a, rows) in per_agent.iter().enumerate() {
            batches.push((
                a,
                rows[round * LOAD_BATCH..(round + 1) * LOAD_BATCH].to_vec(),
            ));
        }
    }
    let zipf_queries = (0..400)
        .map(|_| {
            format!(
                "{} {}",
                word(zipf.sample(&mut rng)),
                word(zipf.sample(&mut rng))
            )
        })
        .collect();
    let mid_queries = (0..200)
        .map(|_| {
            format!(
                "{} {}",
                word(rng.range(100, 1000)),
                word(rng.range(100, 1000))
            )
        })
        .collect();
    Corpus {
        batches,
        zipf_queries,
        mid_queries,
    }
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

async fn load(store: &dyn MemoryStore, c: &Corpus) -> (Vec<AgentRef>, Duration) {
    let mut agents = Vec::new();
    for a in 0..AGENTS {
        agents.push(store.ensure_agent(&format!("agent{a}")).await.unwrap());
    }
    let start = Instant::now();
    for (a, rows) in &c.batches {
        store
            .store_with_agent(&agents[*a], rows, Utc::now())
            .await
            .unwrap();
    }
    (agents, start.elapsed())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

/// Latency of each query, sorted.
async fn latencies<F, Fut>(queries: &[String], mut run: F) -> Vec<Duration>
where
    F: FnMut(RecallQuery) -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    for q in queries.iter().take(20) {
        run(RecallQuery::new(q.clone()).limit(10)).await;
    }
    let mut out = Vec::with_capacity(queries.len());
    for q in queries {
        let t = Instant::now();
        let n = run(RecallQuery::new(q.clone()).limit(10)).await;
        out.push(t.elapsed());
        assert!(n <= 10);
    }
    out.sort();
    out
}

struct Table(Vec<(String, String, &'static str)>);

impl Table {
    fn row(&mut self, name: impl Into<String>, value: impl Into<String>, target: &'static str) {
        self.0.push((name.into(), value.into(), target));
    }
    fn print(&self) {
        println!("\n{:<58} {:>16}  target", "memory figure", "value");
        println!("{}", "-".repeat(90));
        for (n, v, t) in &self.0 {
            println!("{n:<58} {v:>16}  {t}");
        }
    }
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut crit = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    let mut table = Table(Vec::new());
    let c = corpus();
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(
        rt.block_on(SqliteStore::open(&dir.path().join("memory.db")))
            .unwrap(),
    );

    // Store: the corpus in batches, then one row at a time.
    let (agents, took) = rt.block_on(load(&*store, &c));
    let total = (AGENTS * ROWS_PER_AGENT) as f64;
    table.row(
        format!("sqlite store, batches of {LOAD_BATCH} (rows/s, 100k corpus)"),
        format!("{:.0}", total / took.as_secs_f64()),
        ">= 10,000",
    );
    let single_agent = rt.block_on(store.ensure_agent("single")).unwrap();
    let singles = 2_000;
    let t = Instant::now();
    rt.block_on(async {
        for i in 0..singles {
            let row = NewMemory::new(format!("s{i}"), format!("single row number {i} w1 w2 w3"));
            store
                .store_with_agent(&single_agent, &[row], Utc::now())
                .await
                .unwrap();
        }
    });
    table.row(
        "sqlite store, one row per transaction (rows/s)",
        format!("{:.0}", singles as f64 / t.elapsed().as_secs_f64()),
        ">= 1,000",
    );

    // Recall: scoped inside the index vs rank-all-then-filter, same queries, same run.
    let sc = scope(&agents);
    let scoped = |qs: &[String]| {
        rt.block_on(latencies(qs, |q| {
            let (s, sc) = (store.clone(), sc.clone());
            async move { s.recall_for_agents(&sc, &q).await.unwrap().len() }
        }))
    };
    let baseline = |qs: &[String]| {
        rt.block_on(latencies(qs, |q| {
            let (s, sc) = (store.clone(), sc.clone());
            async move { s.recall_rank_then_filter(&sc, &q).await.unwrap().len() }
        }))
    };
    let zipf = scoped(&c.zipf_queries);
    let mid = scoped(&c.mid_queries);
    let base = baseline(&c.zipf_queries);
    let base_mid = baseline(&c.mid_queries);
    // Both plans must agree on what they return (top rows by score).
    let agree = rt.block_on(async {
        let mut same = 0;
        for q in &c.zipf_queries {
            let q = RecallQuery::new(q.clone()).limit(10);
            let a: Vec<_> = store.recall_for_agents(&sc, &q).await.unwrap();
            let b: Vec<_> = store.recall_rank_then_filter(&sc, &q).await.unwrap();
            let sa: Vec<_> = a
                .iter()
                .map(|r| format!("{:.9}", r.score.unwrap_or(0.0)))
                .collect();
            let sb: Vec<_> = b
                .iter()
                .map(|r| format!("{:.9}", r.score.unwrap_or(0.0)))
                .collect();
            same += usize::from(sa == sb);
        }
        same
    });
    table.row(
        "recall_for_agents, 3-agent allowlist, Zipf queries: p50",
        ms(percentile(&zipf, 0.5)),
        "< 15 ms",
    );
    table.row(
        "recall_for_agents, Zipf queries: p95",
        ms(percentile(&zipf, 0.95)),
        "< 50 ms",
    );
    table.row(
        "recall_for_agents, mid-frequency words (ranks 100-1000): p50",
        ms(percentile(&mid, 0.5)),
        "< 2 ms",
    );
    table.row(
        "rank all matches then filter by agent, Zipf: p50",
        ms(percentile(&base, 0.5)),
        "baseline",
    );
    table.row(
        "rank all matches then filter by agent, Zipf: p95",
        ms(percentile(&base, 0.95)),
        "baseline",
    );
    table.row(
        "rank all matches then filter by agent, mid: p50",
        ms(percentile(&base_mid, 0.5)),
        "baseline",
    );
    let speedup = |a: &[Duration], b: &[Duration], p: f64| {
        percentile(b, p).as_secs_f64() / percentile(a, p).as_secs_f64().max(1e-9)
    };
    table.row(
        "speed-up, scoped vs rank-then-filter, Zipf p50",
        format!("{:.1}x", speedup(&zipf, &base, 0.5)),
        ">= 2x",
    );
    table.row(
        "speed-up, scoped vs rank-then-filter, Zipf p95",
        format!("{:.1}x", speedup(&zipf, &base, 0.95)),
        "report",
    );
    table.row(
        "queries where both plans return the same scores",
        format!("{agree}/{}", c.zipf_queries.len()),
        "all",
    );

    // Count and export of one agent.
    let count_t = {
        let t = Instant::now();
        let n = rt.block_on(store.count_for_agent(&agents[0])).unwrap();
        assert_eq!(n as usize, ROWS_PER_AGENT);
        t.elapsed()
    };
    let export_t = {
        let t = Instant::now();
        let rows: Vec<_> = rt
            .block_on(export_agent(store.clone(), agents[0].id).try_collect::<Vec<_>>())
            .unwrap();
        assert_eq!(rows.len(), ROWS_PER_AGENT);
        t.elapsed()
    };
    table.row("count of one agent (5,000 rows)", ms(count_t), "report");
    table.row(
        "export of one agent (5,000 rows, streamed)",
        ms(export_t),
        "report",
    );

    // Criterion measurements of the same operations (medians in criterion's report).
    {
        let mut g = crit.benchmark_group("memory_store");
        g.throughput(Throughput::Elements(LOAD_BATCH as u64));
        let bench_agent = rt.block_on(store.ensure_agent("bench")).unwrap();
        let mut n = 0u64;
        g.bench_function("sqlite_batch_500", |b| {
            b.iter(|| {
                n += 1;
                let rows: Vec<_> = (0..LOAD_BATCH)
                    .map(|i| NewMemory::new(format!("b{n}_{i}"), "w1 w5 w9 w40 w300 w2000"))
                    .collect();
                rt.block_on(store.store_with_agent(&bench_agent, &rows, Utc::now()))
                    .unwrap();
            })
        });
        g.throughput(Throughput::Elements(1));
        g.bench_function("sqlite_single", |b| {
            b.iter(|| {
                n += 1;
                let row = NewMemory::new(format!("one{n}"), "w1 w5 w9 w40 w300 w2000");
                rt.block_on(store.store_with_agent(&bench_agent, &[row], Utc::now()))
                    .unwrap();
            })
        });
        g.finish();
        let mut g = crit.benchmark_group("memory_recall");
        let mut i = 0usize;
        let qs = &c.zipf_queries;
        g.bench_function("sqlite_scoped_zipf", |b| {
            b.iter(|| {
                i += 1;
                let q = RecallQuery::new(qs[i % qs.len()].clone()).limit(10);
                rt.block_on(store.recall_for_agents(&sc, &q)).unwrap()
            })
        });
        g.bench_function("sqlite_rank_then_filter_zipf", |b| {
            b.iter(|| {
                i += 1;
                let q = RecallQuery::new(qs[i % qs.len()].clone()).limit(10);
                rt.block_on(store.recall_rank_then_filter(&sc, &q)).unwrap()
            })
        });
        g.bench_function("sqlite_scoped_mid", |b| {
            b.iter(|| {
                i += 1;
                let q = RecallQuery::new(c.mid_queries[i % c.mid_queries.len()].clone()).limit(10);
                rt.block_on(store.recall_for_agents(&sc, &q)).unwrap()
            })
        });
        g.bench_function("sqlite_count_agent", |b| {
            b.iter(|| rt.block_on(store.count_for_agent(&agents[0])).unwrap())
        });
        g.bench_function("sqlite_export_agent_5000", |b| {
            b.iter(|| {
                rt.block_on(export_agent(store.clone(), agents[0].id).try_collect::<Vec<_>>())
                    .unwrap()
            })
        });
        g.finish();
    }

    // The same recall on Postgres.
    match std::env::var("WARREN_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => {
            let schema = format!("wm_bench_{}", std::process::id());
            let pg = rt.block_on(PostgresStore::open(&url, &schema)).unwrap();
            let (pg_agents, took) = rt.block_on(load(&pg, &c));
            rt.block_on(sqlx::query("ANALYZE").execute(pg.pool()))
                .unwrap();
            table.row(
                format!("postgres store, batches of {LOAD_BATCH} (rows/s)"),
                format!("{:.0}", total / took.as_secs_f64()),
                "report",
            );
            let psc = scope(&pg_agents);
            let pg = Arc::new(pg);
            let run = |qs: &[String]| {
                rt.block_on(latencies(qs, |q| {
                    let (s, sc) = (pg.clone(), psc.clone());
                    async move { s.recall_for_agents(&sc, &q).await.unwrap().len() }
                }))
            };
            let pz = run(&c.zipf_queries);
            let pm = run(&c.mid_queries);
            table.row(
                "postgres recall_for_agents, Zipf: p50",
                ms(percentile(&pz, 0.5)),
                "report",
            );
            table.row(
                "postgres recall_for_agents, Zipf: p95",
                ms(percentile(&pz, 0.95)),
                "report",
            );
            table.row(
                "postgres recall_for_agents, mid-frequency: p50",
                ms(percentile(&pm, 0.5)),
                "report",
            );
            rt.block_on(async {
                sqlx::query(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
                    .execute(pg.pool())
                    .await
                    .unwrap();
            });
        }
        _ => println!("postgres figures skipped: WARREN_TEST_POSTGRES_URL not set"),
    }

    crit.final_summary();
    table.print();
}
