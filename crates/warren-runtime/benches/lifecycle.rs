//! Lifecycle figures (criterion) on an agent with 100,000 SQLite memory rows: the memory step
//! of a rename (an O(1) alias update; target under 50 ms), a whole rename, a whole delete
//! (export + fsync + purge of every kind; target under 3 s) and the restore that follows.
//! Run with `cargo bench -p warren-runtime --bench lifecycle`; prints a table of medians.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use criterion::Criterion;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use warren_config::InstallLayout;
use warren_memory::{MemoryStore, MemoryStores, NewMemory, SqliteStore};
use warren_runtime::lifecycle::{Lifecycle, RunOptions};
use warren_state::db::open_sessions_db;

const ROWS: usize = 100_000;
const GO: RunOptions = RunOptions {
    dry_run: false,
    force: false,
};

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

async fn seed(root: &Path) {
    std::fs::write(
        root.join("config.toml"),
        "schema_version = 1\n\n[risk_profiles.p]\nlevel = \"supervised\"\n\n[agents.big]\nrisk_profile = \"p\"\n\n[agents.other]\nrisk_profile = \"p\"\ndelegates = [\"big\"]\n",
    )
    .unwrap();
    let layout = InstallLayout::new(root);
    std::fs::create_dir_all(layout.default_workspace("big")).unwrap();
    std::fs::write(layout.default_workspace("big").join("notes.md"), "notes\n").unwrap();
    let store = SqliteStore::open(&layout.memory_db()).await.unwrap();
    let agent = store.ensure_agent("big").await.unwrap();
    let now = Utc::now();
    let mut batch = Vec::with_capacity(1000);
    for i in 0..ROWS {
        batch.push(
            NewMemory::new(
                format!("key-{i:06}"),
                format!("row {i}: the quick brown fox remembers fact number {i} about the project"),
            )
            .category(if i % 3 == 0 { "core" } else { "daily" }),
        );
        if batch.len() == 1000 {
            store.store_with_agent(&agent, &batch, now).await.unwrap();
            batch.clear();
        }
    }
}

async fn service(root: &Path) -> Lifecycle {
    let layout = InstallLayout::new(root);
    let pool = open_sessions_db(&layout.sessions_db()).await.unwrap();
    Lifecycle::new(layout.clone(), Arc::new(MemoryStores::new(layout)), pool)
}

fn main() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let t = Instant::now();
    rt.block_on(seed(&root));
    eprintln!(
        "seeded {ROWS} memory rows in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let lc = rt.block_on(service(&root));
    let layout = InstallLayout::new(&root);
    let stores = MemoryStores::new(layout.clone());
    let cfg = warren_config::load_config(&layout).unwrap().config;

    // One-shot breakdown of a delete's memory work, to see where the time goes.
    rt.block_on(async {
        use futures::StreamExt;
        let admin = stores
            .admin_for_backend(&cfg, warren_types::MemoryBackendKind::Sqlite, "big")
            .await
            .unwrap();
        let t = Instant::now();
        let mut s = admin.export().await.unwrap();
        let mut rows = Vec::new();
        while let Some(r) = s.next().await {
            rows.push(r.unwrap());
        }
        let export = t.elapsed();
        let t = Instant::now();
        let bytes = serde_json::to_vec_pretty(&rows).unwrap();
        let encode = t.elapsed();
        let t = Instant::now();
        warren_config::write_atomic(&root.join("probe.json"), &bytes).unwrap();
        let write = t.elapsed();
        let id = admin.agent_id().await.unwrap().unwrap();
        let t = Instant::now();
        let purged = admin.purge().await.unwrap();
        let purge = t.elapsed();
        let t = Instant::now();
        admin.import(id, &rows).await.unwrap();
        let import = t.elapsed();
        println!(
            "memory breakdown ({purged} rows, {} MB): export {:.0} ms, encode {:.0} ms, write+fsync {:.0} ms, purge {:.0} ms, import {:.0} ms",
            bytes.len() / 1_000_000,
            export.as_secs_f64() * 1e3,
            encode.as_secs_f64() * 1e3,
            write.as_secs_f64() * 1e3,
            purge.as_secs_f64() * 1e3,
            import.as_secs_f64() * 1e3
        );
    });

    let memory_step = Arc::new(Mutex::new(Vec::new()));
    let whole_rename = Arc::new(Mutex::new(Vec::new()));
    let deletes = Arc::new(Mutex::new(Vec::new()));
    let restores = Arc::new(Mutex::new(Vec::new()));
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));

    c.bench_function("rename: memory step (100k rows)", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (stores, cfg, out) = (&stores, &cfg, memory_step.clone());
            async move {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    let (from, to) = if i % 2 == 0 {
                        ("big", "huge")
                    } else {
                        ("huge", "big")
                    };
                    let admin = stores
                        .admin_for_backend(cfg, warren_types::MemoryBackendKind::Sqlite, from)
                        .await
                        .unwrap();
                    let t = Instant::now();
                    assert!(admin.rename_to(to).await.unwrap());
                    let d = t.elapsed();
                    out.lock().unwrap().push(d);
                    total += d;
                }
                if iters % 2 == 1 {
                    let admin = stores
                        .admin_for_backend(cfg, warren_types::MemoryBackendKind::Sqlite, "huge")
                        .await
                        .unwrap();
                    admin.rename_to("big").await.unwrap();
                }
                total
            }
        });
    });

    c.bench_function("rename: whole operation (100k rows)", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (lc, out) = (&lc, whole_rename.clone());
            async move {
                let mut total = Duration::ZERO;
                for i in 0..iters {
                    let (from, to) = if i % 2 == 0 {
                        ("big", "huge")
                    } else {
                        ("huge", "big")
                    };
                    let t = Instant::now();
                    assert!(lc.rename(from, to, GO).await.unwrap().ok);
                    let d = t.elapsed();
                    out.lock().unwrap().push(d);
                    total += d;
                }
                if iters % 2 == 1 {
                    lc.rename("huge", "big", GO).await.unwrap();
                }
                total
            }
        });
    });

    c.bench_function("delete: export + purge (100k rows)", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let (lc, del, res) = (&lc, deletes.clone(), restores.clone());
            async move {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    let r = lc.delete("big", GO).await.unwrap();
                    let d = t.elapsed();
                    assert!(r.ok, "{r:?}");
                    assert_eq!(r.plan.counts["memory"], ROWS as u64);
                    del.lock().unwrap().push(d);
                    total += d;
                    // Bring it back for the next round (timed separately).
                    let archive = r.archive.unwrap();
                    let t = Instant::now();
                    let back = lc
                        .restore(&archive.display().to_string(), None, false)
                        .await
                        .unwrap();
                    res.lock().unwrap().push(t.elapsed());
                    assert!(back.ok, "{back:?}");
                }
                total
            }
        });
    });

    let rows = [
        ("rename, memory step (target < 50 ms)", &memory_step),
        ("rename, whole operation", &whole_rename),
        ("delete, export + purge (target < 3 s)", &deletes),
        ("restore from the archive", &restores),
    ];
    println!("\nlifecycle figures, agent with {ROWS} SQLite memory rows (medians)");
    println!("{:<42} {:>12} {:>8}", "step", "median", "runs");
    for (name, v) in rows {
        let v = v.lock().unwrap();
        let m = median(&v);
        println!(
            "{:<42} {:>9.2} ms {:>8}",
            name,
            m.as_secs_f64() * 1000.0,
            v.len()
        );
    }
}
