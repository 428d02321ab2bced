//! The Postgres backend on the same corpus (100,000 rows over 20 agents, in a fresh schema that
//! is dropped afterwards): store rates, recall on both mixes with the plan of each mix's first
//! query, export and purge of one agent, each beside a raw floor measured in the same run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::TryStreamExt;
use sqlx::PgPool;
use uuid::Uuid;
use warren_memory::text::query_terms;
use warren_memory::{export_agent, AgentRef, MemoryStore, NewMemory, PostgresStore, RecallQuery};

use super::{
    latencies, load, med, mixes, ratio, scope, Lat, Table, Zipf, LIMIT, ROWS_PER_AGENT, VOCAB,
};

const COLS: &str = "m.id, m.agent_id, a.alias, m.key, m.content, m.category, m.session_id, \
                    m.importance, m.created_at, m.updated_at";

/// The plan Postgres chooses for Warren's recall statement (same text, same parameters), as its
/// nodes from the top, repeated nodes counted.
async fn plan(pool: &PgPool, s: &str, agents: &[AgentRef], q: &str) -> String {
    let tsq = query_terms(q)
        .iter()
        .map(|t| format!("'{t}'"))
        .collect::<Vec<_>>()
        .join(" | ");
    let sql = format!(
        "EXPLAIN SELECT {COLS}, ts_rank(m.tsv, to_tsquery('simple', $1)) AS rank \
         FROM {s}.memories m JOIN {s}.agents a ON a.id = m.agent_id \
         WHERE m.tsv @@ to_tsquery('simple', $2) AND ((m.agent_id = $3) OR (m.agent_id = $4) \
         OR (m.agent_id = $5 AND m.category = ANY($6))) \
         ORDER BY rank DESC, m.updated_at DESC LIMIT $7"
    );
    let lines: Vec<String> = sqlx::query_scalar(&sql)
        .bind(&tsq)
        .bind(&tsq)
        .bind(agents[0].id)
        .bind(agents[1].id)
        .bind(agents[2].id)
        .bind(vec!["core".to_string()])
        .bind(LIMIT as i64)
        .fetch_all(pool)
        .await
        .unwrap();
    let mut nodes: Vec<(String, usize)> = Vec::new();
    for l in &lines {
        let l = l.trim_start().trim_start_matches("->").trim();
        let Some((node, _)) = l.split_once("  (cost") else {
            continue;
        };
        match nodes.last_mut() {
            Some((last, n)) if last == node => *n += 1,
            _ => nodes.push((node.to_string(), 1)),
        }
    }
    nodes
        .iter()
        .map(|(node, n)| {
            if *n > 1 {
                format!("{node} x{n}")
            } else {
                node.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" > ")
}

pub fn run(rt: &tokio::runtime::Runtime, url: &str, t: &mut Table) {
    let label = "postgres 100k/20";
    let zipf = Zipf::new(VOCAB);
    let qs = mixes(&zipf);
    let schema = format!("wm_bench_{}", std::process::id());
    let s = format!("\"{schema}\"");
    let pg = Arc::new(rt.block_on(PostgresStore::open(url, &schema)).unwrap());
    let pool = pg.pool().clone();
    let (agents, took) = rt.block_on(load(&*pg, 20, &zipf));
    rt.block_on(sqlx::query("ANALYZE").execute(&pool)).unwrap();
    t.row(
        format!("{label}: store, batches of 500, Warren (rows/s)"),
        format!("{:.0}", (20 * ROWS_PER_AGENT) as f64 / took.as_secs_f64()),
        "report",
    );

    // One row per call, interleaved with a raw INSERT per row into another agent.
    let one = rt.block_on(pg.ensure_agent("single")).unwrap();
    let other = rt.block_on(pg.ensure_agent("single-raw")).unwrap();
    let singles = 500;
    let (mut ours, mut raw) = (Duration::ZERO, Duration::ZERO);
    let insert = format!(
        "INSERT INTO {s}.memories (id, agent_id, key, content, category, session_id, importance, \
         created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)"
    );
    rt.block_on(async {
        for i in 0..singles {
            let row = NewMemory::new(format!("s{i}"), format!("single row number {i} w1 w2 w3"));
            for k in 0..2 {
                let start = Instant::now();
                if (i + k) % 2 == 0 {
                    pg.store_with_agent(&one, std::slice::from_ref(&row), Utc::now())
                        .await
                        .unwrap();
                    ours += start.elapsed();
                } else {
                    sqlx::query(&insert)
                        .bind(Uuid::new_v4())
                        .bind(other.id)
                        .bind(&row.key)
                        .bind(&row.content)
                        .bind(&row.category)
                        .bind(&row.session_id)
                        .bind(row.importance)
                        .bind(Utc::now())
                        .execute(&pool)
                        .await
                        .unwrap();
                    raw += start.elapsed();
                }
            }
        }
    });
    let (rate, raw_rate) = (
        singles as f64 / ours.as_secs_f64(),
        singles as f64 / raw.as_secs_f64(),
    );
    t.row(
        format!("{label}: store, one row per call, raw INSERT (rows/s)"),
        format!("{raw_rate:.0}"),
        "floor",
    );
    t.row(
        format!("{label}: store, one row per call, Warren (rows/s)"),
        format!("{rate:.0}"),
        format!("report; {} of the floor's time", ratio(raw_rate, rate)),
    );

    let sc = scope(&agents);
    for (mix, queries) in [("rare", &qs.rare), ("common", &qs.common)] {
        let lat = Lat::of(rt.block_on(latencies(queries, |q| {
            let (store, sc) = (pg.clone(), sc.clone());
            async move {
                store
                    .recall_for_agents(&sc, &RecallQuery::new(q).limit(LIMIT))
                    .await
                    .unwrap()
                    .len()
            }
        })));
        t.row(
            format!("{label}: {mix} words, Warren recall p50/p95"),
            lat.show(),
            "report",
        );
        t.row(
            format!("{label}: {mix} words, plan of the first query"),
            "plan",
            rt.block_on(plan(&pool, &s, &agents, &queries[0])),
        );
    }

    // Export: Warren's stream (one streamed query) and one raw query fetching the same rows,
    // alternating which goes first, on three agents.
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    let all_rows = format!(
        "SELECT {COLS} FROM {s}.memories m JOIN {s}.agents a ON a.id = m.agent_id \
         WHERE m.agent_id = $1 ORDER BY m.created_at, m.id"
    );
    for i in 0..3 {
        let id = agents[3 + i].id;
        for k in 0..2 {
            let start = Instant::now();
            let n = if (i + k) % 2 == 0 {
                let n = rt
                    .block_on(export_agent(pg.clone(), id).try_collect::<Vec<_>>())
                    .unwrap()
                    .len();
                ours.push(start.elapsed());
                n
            } else {
                let n = rt
                    .block_on(sqlx::query(&all_rows).bind(id).fetch_all(&pool))
                    .unwrap()
                    .len();
                floor.push(start.elapsed());
                n
            };
            assert_eq!(n, ROWS_PER_AGENT);
        }
    }
    let (w, f) = (med(ours), med(floor));
    t.row(
        format!("{label}: export 5,000 rows, raw one query"),
        format!("{f:.3} ms"),
        "floor",
    );
    t.row(
        format!("{label}: export 5,000 rows, Warren"),
        format!("{w:.3} ms"),
        format!("report; {} of the floor", ratio(w, f)),
    );

    // Purge: Warren's one statement on agents 12..14, and by hand (a transaction of two
    // deletes) on agents 8..10, alternating which goes first.
    let (mut ours, mut floor) = (Vec::new(), Vec::new());
    for i in 0..3 {
        for k in 0..2 {
            let start = Instant::now();
            let n = if (i + k) % 2 == 0 {
                let n = rt.block_on(pg.purge_agent(&agents[12 + i].alias)).unwrap();
                ours.push(start.elapsed());
                n
            } else {
                let id = agents[8 + i].id;
                let n = rt.block_on(async {
                    let mut tx = pool.begin().await.unwrap();
                    let n = sqlx::query(&format!("DELETE FROM {s}.memories WHERE agent_id = $1"))
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .unwrap()
                        .rows_affected();
                    sqlx::query(&format!("DELETE FROM {s}.agents WHERE id = $1"))
                        .bind(id)
                        .execute(&mut *tx)
                        .await
                        .unwrap();
                    tx.commit().await.unwrap();
                    n
                });
                floor.push(start.elapsed());
                n
            };
            assert_eq!(n as usize, ROWS_PER_AGENT);
        }
    }
    let (w, f) = (med(ours), med(floor));
    t.row(
        format!("{label}: purge 5,000 rows, two deletes by hand"),
        format!("{f:.3} ms"),
        "floor",
    );
    t.row(
        format!("{label}: purge 5,000 rows, Warren (one statement)"),
        format!("{w:.3} ms"),
        format!("report; {} of the floor", ratio(w, f)),
    );
    rt.block_on(async {
        sqlx::query(&format!("DROP SCHEMA {s} CASCADE"))
            .execute(&pool)
            .await
            .unwrap();
        pg.close().await;
    });
}
