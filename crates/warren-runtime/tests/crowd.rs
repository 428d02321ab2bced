//! Many agents at once, at a small size: every agent's turn completes and sessions.db holds
//! each row once (the property the many-agents benchmark checks at 50 agents).

use std::time::Duration;
use warren_testkit::crowd::{Crowd, RowCounts};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_running_at_once_lose_and_double_no_row() {
    const AGENTS: usize = 4;
    const ROUNDS: usize = 6;
    let crowd = Crowd::open(AGENTS).await.unwrap();
    let run = crowd.run(ROUNDS, Duration::from_millis(5)).await;
    for (i, outcome) in run.outcomes.iter().enumerate() {
        assert!(outcome.is_ok(), "agent a{i}: {outcome:?}");
    }
    // Every round but each turn's first is timed.
    assert_eq!(run.rounds.len(), AGENTS * ROUNDS);

    let counts = crowd.check_rows().unwrap();
    assert_eq!(counts.len(), AGENTS);
    for (alias, c) in &counts {
        assert_eq!(
            c,
            &RowCounts {
                completed_turns: 1,
                tool_calls: ROUNDS,
                receipts: ROUNDS,
                usage: ROUNDS + 1,
                // A read has no side effect: the action ledger charges none.
                actions: 0,
            },
            "{alias}"
        );
    }

    // Each turn's end raised its agent's receipt anchor to the chain's length.
    let anchors: serde_json::Value = serde_json::from_slice(
        &std::fs::read(warren_state::receipts::anchor_path(
            &crowd.install().layout(),
        ))
        .unwrap(),
    )
    .unwrap();
    let seqs: Vec<i64> = anchors
        .as_object()
        .unwrap()
        .values()
        .map(|a| a["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, vec![ROUNDS as i64; AGENTS], "{anchors}");

    // The check finds a lost row: one receipt taken out of the middle of a chain.
    let db = rusqlite::Connection::open(crowd.install().layout().sessions_db()).unwrap();
    let deleted = db
        .execute(
            "DELETE FROM receipts WHERE seq = 2 AND agent_id = (SELECT id FROM agents WHERE alias = 'a0')",
            [],
        )
        .unwrap();
    assert_eq!(deleted, 1);
    let err = crowd.check_rows().unwrap_err();
    assert!(
        err.contains("a0") && err.contains("lost or doubled"),
        "{err}"
    );
}
