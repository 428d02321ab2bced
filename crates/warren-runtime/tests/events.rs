//! The event writer against a real SQLite file that refuses writes for a while: what a failed
//! write left is stored by the next write or on flush, and what must be dropped is counted.

use chrono::{TimeZone, Utc};
use sqlx::Connection;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use warren_policy::SystemClock;
use warren_runtime::events::{Emitter, EventHub, STORE_PENDING};
use warren_state::db::open_sessions_db;
use warren_state::sessions::{SessionKind, SessionStore, TurnEnd};
use warren_testkit::TestInstall;
use warren_types::{EventKind, TurnTrigger};

/// Longer than the sessions database's busy timeout (5 s) plus the writer's gathering window:
/// a write that met a lock held this long has failed.
const LOCKED: Duration = Duration::from_secs(7);

/// An emitter of turn `t1` (alice's) storing through `store`.
fn emitter(store: &SessionStore) -> Emitter {
    Emitter::new(
        "t1",
        "alice",
        EventHub::new(),
        store.clone(),
        Arc::new(SystemClock),
    )
}

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
    let em = emitter(&store);
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

fn ended(status: &str) -> TurnEnd {
    TurnEnd {
        turn_id: "t1".into(),
        status: status.into(),
        final_text: Some("done".into()),
        error_code: None,
        at: Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 5).unwrap(),
    }
}

async fn turn_row(other: &mut sqlx::SqliteConnection) -> (String, Option<String>, Option<String>) {
    sqlx::query_as("SELECT status, ended_at, final_text FROM turns WHERE id = 't1'")
        .fetch_one(other)
        .await
        .unwrap()
}

/// The end of a turn is recorded with its last events; a row that cannot be written (a
/// trigger refuses it) does not take the events with it, and an event refused for good
/// (its `seq` is taken) does not take the row or the other events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finishing_records_the_end_with_the_last_events_and_each_survives_the_other() {
    let t = TestInstall::empty().unwrap();
    let (store, mut em) = turn(&t).await;
    let mut other = raw(&t).await;
    for _ in 0..3 {
        em.emit(delta("x"));
    }
    let (row, events) = em.finish(&ended("completed")).await;
    row.unwrap();
    events.unwrap();
    assert_eq!(stored_seqs(&store).await, vec![1, 2, 3]);
    assert_eq!(
        turn_row(&mut other).await,
        (
            "completed".to_string(),
            Some("2026-03-01T12:00:05.000000Z".to_string()),
            Some("done".to_string())
        )
    );

    // The row refused: the events are stored all the same.
    sqlx::query("DELETE FROM events")
        .execute(&mut other)
        .await
        .unwrap();
    sqlx::query("UPDATE turns SET status = 'running', ended_at = NULL, final_text = NULL")
        .execute(&mut other)
        .await
        .unwrap();
    let mut em = emitter(&store);
    sqlx::query(
        "CREATE TRIGGER refuse_end BEFORE UPDATE ON turns BEGIN SELECT RAISE(ABORT, 'no end'); END",
    )
    .execute(&mut other)
    .await
    .unwrap();
    em.emit(delta("y"));
    em.emit(delta("z"));
    let (row, events) = em.finish(&ended("failed")).await;
    assert!(row.unwrap_err().to_string().contains("no end"));
    events.unwrap();
    assert_eq!(stored_seqs(&store).await, vec![1, 2]);
    assert_eq!(turn_row(&mut other).await.0, "running");
    sqlx::query("DROP TRIGGER refuse_end")
        .execute(&mut other)
        .await
        .unwrap();

    // An event whose seq is taken: the row and the other events are written.
    sqlx::query("DELETE FROM events")
        .execute(&mut other)
        .await
        .unwrap();
    sqlx::query("INSERT INTO events (turn_id, seq, type, body) VALUES ('t1', 2, 'x', '{}')")
        .execute(&mut other)
        .await
        .unwrap();
    let mut em = emitter(&store);
    for _ in 0..3 {
        em.emit(delta("w"));
    }
    let (row, events) = em.finish(&ended("cancelled")).await;
    row.unwrap();
    assert!(events.unwrap_err().starts_with("1 events not stored: "));
    let seqs: Vec<(i64, String)> =
        sqlx::query_as("SELECT seq, type FROM events WHERE turn_id = 't1' ORDER BY seq")
            .fetch_all(&mut other)
            .await
            .unwrap();
    let kinds: Vec<(i64, &str)> = seqs.iter().map(|(n, k)| (*n, k.as_str())).collect();
    assert_eq!(kinds, [(1, "text_delta"), (2, "x"), (3, "text_delta")]);
    assert_eq!(turn_row(&mut other).await.0, "cancelled");
}

/// An emitter dropped without finishing (its turn's task went away) still has its events
/// stored by the writer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_emitter_still_stores_its_events() {
    let t = TestInstall::empty().unwrap();
    let (store, mut em) = turn(&t).await;
    for _ in 0..4 {
        em.emit(delta("x"));
    }
    drop(em);
    let mut seqs = Vec::new();
    for _ in 0..100 {
        seqs = stored_seqs(&store).await;
        if seqs.len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(seqs, vec![1, 2, 3, 4]);
}

/// A finish that goes away while it waits for the writer (its task was dropped there): the
/// writer stores the events itself. On one thread, so the writer cannot hand back before the
/// finish is dropped.
#[tokio::test]
async fn a_finish_dropped_midway_leaves_the_events_to_the_writer() {
    let t = TestInstall::empty().unwrap();
    let (store, mut em) = turn(&t).await;
    for _ in 0..4 {
        em.emit(delta("x"));
    }
    // Polled once: it closes the channel and waits for what the writer hands back; then dropped.
    let end = ended("completed");
    let mut finish = Box::pin(em.finish(&end));
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    assert!(
        finish.as_mut().poll(&mut cx).is_pending(),
        "the finish was not cut short"
    );
    drop(finish);
    let mut seqs = Vec::new();
    for _ in 0..100 {
        seqs = stored_seqs(&store).await;
        if seqs.len() >= 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(seqs, vec![1, 2, 3, 4]);
}
