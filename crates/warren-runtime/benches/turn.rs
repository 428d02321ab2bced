//! Turn-loop figures: runtime overhead per tool round with an instant fake provider and a
//! `file_read` tool, and event throughput to a subscriber (with the batched event store).
//! Run with `cargo bench -p warren-runtime --bench turn`; prints medians.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;
use warren_policy::SystemClock;
use warren_runtime::events::{Emitter, EventHub};
use warren_runtime::host::{Host, HostEnv};
use warren_state::db::open_sessions_db;
use warren_state::sessions::SessionStore;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::{EventKind, ProviderFamily, TurnTrigger};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

async fn tool_rounds() {
    const ROUNDS: usize = 20;
    const TURNS: usize = 15;
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = TestInstall::with_config(&format!(
        "[risk_profiles.y]\nlevel = \"full\"\n[runtime_profiles.r]\nmax_tool_iterations = 50\n[agents.a]\nrisk_profile = \"y\"\nruntime_profile = \"r\"\nmodel_provider = \"openai.m\"\n{}",
        fake.config_block("m")
    ))
    .unwrap();
    std::fs::create_dir_all(t.root().join("agents/a/workspace")).unwrap();
    std::fs::write(t.root().join("agents/a/workspace/f.txt"), "hello").unwrap();
    let mut vars = BTreeMap::new();
    vars.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    let host = Host::open(t.layout(), HostEnv { home: None, vars })
        .await
        .unwrap();
    let mut per_round = Vec::new();
    let mut bare = Vec::new();
    for _ in 0..TURNS {
        // Provider-only baseline: the same number of requests answered with text.
        fake.push(Reply::text("ok"));
        let start = Instant::now();
        host.run("a", None, "x", TurnTrigger::User, None)
            .await
            .unwrap();
        bare.push(start.elapsed().as_secs_f64() * 1000.0);
        for _ in 0..ROUNDS {
            fake.push(Reply::tool_call("file_read", json!({"path": "f.txt"})));
        }
        fake.push(Reply::text("done"));
        let start = Instant::now();
        host.run("a", None, "read", TurnTrigger::User, None)
            .await
            .unwrap();
        per_round.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    let (tool_turn, text_turn) = (median(per_round), median(bare));
    println!(
        "turn: a text-only turn (session, one provider call, stores)       {text_turn:>8.3} ms"
    );
    println!("turn: a turn of {ROUNDS} file_read rounds + final answer               {tool_turn:>8.3} ms");
    println!(
        "turn: per tool round (incl. the local provider round trip)        {:>8.3} ms  (target < 1 ms)",
        (tool_turn - text_turn) / ROUNDS as f64
    );
}

async fn event_throughput() {
    const N: u32 = 200_000;
    let t = TestInstall::empty().unwrap();
    let store = SessionStore::new(open_sessions_db(&t.layout().sessions_db()).await.unwrap());
    let s = store
        .create_session(
            "a",
            warren_state::sessions::SessionKind::Chat,
            "bench",
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    store
        .start_turn(
            "bench-turn",
            &s.id,
            "a",
            &TurnTrigger::User,
            "x",
            chrono::Utc::now(),
        )
        .await
        .unwrap();
    let hub = EventHub::new();
    let mut rx = hub.subscribe();
    let counter = tokio::spawn(async move {
        let mut n = 0u32;
        let start = Instant::now();
        while let Some(e) = rx.recv().await {
            n += 1;
            assert_eq!(e.seq, n, "lost or reordered event");
            if n == N {
                break;
            }
        }
        (n, start.elapsed())
    });
    let mut em = Emitter::new("bench-turn", "a", hub, store.clone(), Arc::new(SystemClock));
    let start = Instant::now();
    for _ in 0..N {
        em.emit(EventKind::TextDelta {
            text: "token ".into(),
        });
    }
    let emitted = start.elapsed();
    let (received, _) = counter.await.unwrap();
    let delivered = start.elapsed();
    em.flush().await.unwrap();
    let stored = start.elapsed();
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM events WHERE turn_id = 'bench-turn'")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(count, i64::from(N));
    println!("events: {received} of {N} delivered to a subscriber, none lost");
    println!(
        "events: emit rate                    {:>12.0} events/s",
        f64::from(N) / emitted.as_secs_f64()
    );
    println!(
        "events: delivered to subscriber      {:>12.0} events/s  (target >= 50,000)",
        f64::from(N) / delivered.as_secs_f64()
    );
    println!(
        "events: stored in sessions.db        {:>12.0} events/s",
        f64::from(N) / stored.as_secs_f64()
    );
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        event_throughput().await;
        tool_rounds().await;
    });
}
