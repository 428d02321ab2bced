//! The event writer against a real SQLite file that refuses writes for a while: what a failed
//! write left is stored by the next write or on flush, and what must be dropped is counted.

use chrono::{TimeZone, Utc};
use sqlx::Connection;
use std::sync::Arc;
use std::time::Duration;
use warren_policy::SystemClock;
use warren_runtime::events::{Emitter, EventHub, STORE_PENDING};
use warren_state::db::open_sessions_db;
use warren_state::sessions::{SessionKind, SessionStore};
use warren_testkit::TestInstall;
use warren_types::{EventKind, TurnTrigger};

/// Longer than the sessions database's busy timeout (5 s) plus the writer's gathering window:
/// a write that met a lock held this long has failed.
const LOCKED: Duration = Duration::from_secs(7);

async fn turn(t: &TestInstall) -> (SessionStore, Emitter) {
    let now = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
    let store = SessionStore::new(open_sessions_db(&t.layout().sessions_db()).await.unwrap());
    let s = store
        .create_session("alice", SessionKind::Chat, "hello", now)
        .await
        .unwrap();
    store
        .start_turn("t1", &s.id, "alice", &TurnTrigger::User, "hello", now)
        .await
        .unwrap();
    let em = Emitter::new(
        "t1",
        "alice",
        EventHub::new(),
        store.clone(),
        Arc::new(SystemClock),
    );
    (store, em)
}

async fn raw(t: &TestInstall) -> sqlx::SqliteConnection {
    let url = format!("sqlite://{}", t.layout().sessions_db().display());
    sqlx::SqliteConnection::connect(&url).await.unwrap()
}

fn delta(text: &str) -> EventKind {
    EventKind::TextDelta { text: text.into() }
}

async fn stored_seqs(store: &SessionStore) -> Vec<u32> {
    let events = store.turn_events("t1").await.unwrap();
    events.iter().map(|e| e.seq).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_of_a_write_that_met_a_lock_are_stored_later() {
    let t = TestInstall::empty().unwrap();
    let (store, mut em) = turn(&t).await;
    let mut other = raw(&t).await;

    // Another connection holds the write lock past the busy timeout: the write of 1 and 2 fails.
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut other)
        .await
        .unwrap();
    em.emit(delta("a"));
    em.emit(delta("b"));
    tokio::time::sleep(LOCKED).await;
    sqlx::query("COMMIT").execute(&mut other).await.unwrap();
    // The next write stores them with its own event.
    em.emit(delta("c"));
    let mut seqs = Vec::new();
    for _ in 0..100 {
        seqs = stored_seqs(&store).await;
        if seqs.len() >= 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(seqs, vec![1, 2, 3]);

    // A write that fails with nothing after it is tried again on flush.
    sqlx::query("BEGIN EXCLUSIVE")
        .execute(&mut other)
        .await
        .unwrap();
    em.emit(delta("d"));
    tokio::time::sleep(LOCKED).await;
    sqlx::query("COMMIT").execute(&mut other).await.unwrap();
    em.flush().await.unwrap();
    assert_eq!(stored_seqs(&store).await, vec![1, 2, 3, 4]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_kept_for_a_retry_are_bounded_and_the_dropped_ones_counted() {
    let t = TestInstall::empty().unwrap();
    let (store, mut em) = turn(&t).await;
    let mut other = raw(&t).await;

    // While a trigger makes SQLite refuse every event row, more events arrive than are kept.
    sqlx::query(
        "CREATE TRIGGER refuse BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'refused'); END",
    )
    .execute(&mut other)
    .await
    .unwrap();
    let extra = 100;
    for _ in 0..STORE_PENDING + extra {
        em.emit(delta("x"));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(stored_seqs(&store).await.is_empty());
    sqlx::query("DROP TRIGGER refuse")
        .execute(&mut other)
        .await
        .unwrap();

    // Flush stores the newest STORE_PENDING and reports the oldest as not stored.
    let e = em.flush().await.unwrap_err();
    assert!(
        e.starts_with(&format!("{extra} events not stored: ")),
        "{e}"
    );
    assert!(e.contains("refused"), "{e}");
    let seqs = stored_seqs(&store).await;
    let first = u32::try_from(extra).unwrap() + 1;
    let last = u32::try_from(STORE_PENDING + extra).unwrap();
    assert_eq!(seqs, (first..=last).collect::<Vec<_>>());
}

/// An event SQLite refuses for good (its `seq` is taken) costs only itself: the events written
/// with it in one batch are stored, and flush counts the one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_refused_for_good_does_not_take_its_batch_with_it() {
    let t = TestInstall::empty().unwrap();
    let (_store, mut em) = turn(&t).await;
    let mut other = raw(&t).await;
    sqlx::query("INSERT INTO events (turn_id, seq, type, body) VALUES ('t1', 3, 'x', '{}')")
        .execute(&mut other)
        .await
        .unwrap();
    for _ in 0..5 {
        em.emit(delta("x"));
    }
    let e = em.flush().await.unwrap_err();
    assert!(e.starts_with("1 events not stored: "), "{e}");
    let seqs: Vec<i64> =
        sqlx::query_scalar("SELECT seq FROM events WHERE turn_id = 't1' ORDER BY seq")
            .fetch_all(&mut other)
            .await
            .unwrap();
    assert_eq!(seqs, [1, 2, 3, 4, 5]);
    let types: Vec<String> = sqlx::query_scalar(
        "SELECT type FROM events WHERE turn_id = 't1' AND seq <> 3 ORDER BY seq",
    )
    .fetch_all(&mut other)
    .await
    .unwrap();
    assert!(types.iter().all(|t| t != "x"), "{types:?}");
}
