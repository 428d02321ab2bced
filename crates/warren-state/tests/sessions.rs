//! The session store: history, turns, events and the usage ledger on a real SQLite file.

use chrono::{TimeZone, Utc};
use serde_json::json;
use warren_state::db::open_sessions_db;
use warren_state::sessions::{SessionKind, SessionStore};
use warren_testkit::TestInstall;
use warren_types::{EventKind, TurnEvent, TurnTrigger};

#[tokio::test]
async fn history_turns_events_and_usage_round_trip() {
    let t = TestInstall::empty().unwrap();
    let now = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
    let store = SessionStore::new(open_sessions_db(&t.layout().sessions_db()).await.unwrap());
    let s = store
        .create_session("alice", SessionKind::Chat, "hello there", now)
        .await
        .unwrap();
    assert_eq!(s.agent.as_deref(), Some("alice"));
    store
        .start_turn("t1", &s.id, "alice", &TurnTrigger::User, "hello", now)
        .await
        .unwrap();
    store
        .append_messages(
            &s.id,
            "t1",
            &[
                json!({"role": "user", "content": "hello"}),
                json!({"role": "assistant", "content": "hi"}),
            ],
            now,
        )
        .await
        .unwrap();
    for (seq, kind) in [
        (
            1,
            EventKind::TurnStarted {
                session_id: s.id.clone(),
                trigger: TurnTrigger::User,
                prompt: "hello".into(),
            },
        ),
        (2, EventKind::TextDelta { text: "hi".into() }),
        (3, EventKind::TurnCompleted { text: "hi".into() }),
    ] {
        let e = TurnEvent {
            turn_id: "t1".into(),
            agent: "alice".into(),
            seq,
            time: "2026-03-01T12:00:00Z".into(),
            kind,
            parent: None,
        };
        store.append_event(&e).await.unwrap();
    }
    store
        .finish_turn("t1", "completed", Some("hi"), None, now)
        .await
        .unwrap();
    store
        .record_usage(
            "alice",
            Some(&s.id),
            Some("t1"),
            "openai.main",
            100,
            20,
            0.0125,
            now,
        )
        .await
        .unwrap();
    store
        .record_usage(
            "alice",
            None,
            None,
            "openai.main",
            1,
            1,
            0.01,
            now - chrono::Duration::days(1),
        )
        .await
        .unwrap();

    // A second handle on the same file sees everything.
    let store2 = SessionStore::new(open_sessions_db(&t.layout().sessions_db()).await.unwrap());
    let h = store2.history(&s.id).await.unwrap();
    assert_eq!(h.len(), 2);
    assert_eq!(h[1]["content"], "hi");
    let turns = store2.turns(&s.id).await.unwrap();
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].status, "completed");
    let ev = store2.turn_events("t1").await.unwrap();
    assert_eq!(
        ev.iter().map(|e| e.kind.type_name()).collect::<Vec<_>>(),
        ["turn_started", "text_delta", "turn_completed"]
    );
    let cents = store2.cost_today_cents("alice", now).await.unwrap();
    assert!((cents - 1.25).abs() < 1e-9, "{cents}");
    assert_eq!(store2.turn_usage("t1").await.unwrap().0, 100);
    assert_eq!(store2.list_sessions(Some("alice")).await.unwrap().len(), 1);
    assert!(store2.list_sessions(Some("bob")).await.unwrap().is_empty());
    let days = store2.usage_by_day("2026-02-28").await.unwrap();
    let summary: Vec<(&str, &str, i64, i64, i64)> = days
        .iter()
        .map(|d| {
            (
                d.day.as_str(),
                d.agent.as_str(),
                d.requests,
                d.input_tokens,
                d.output_tokens,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("2026-03-01", "alice", 1, 100, 20),
            ("2026-02-28", "alice", 1, 1, 1)
        ]
    );
    assert!((days[0].cost_usd - 0.0125).abs() < 1e-12);
    assert_eq!(store2.usage_by_day("2026-03-01").await.unwrap().len(), 1);
}

/// Another connection (the action ledger's, another process) holds the write lock when a turn's
/// write starts, and commits while that write waits. Each write of a turn's path must then go
/// on after it, not fail: one that read first (the agent's id) and took the write lock only at
/// its first write would find its snapshot stale once the other write landed, and SQLite
/// refuses it at once (`SQLITE_BUSY`). Each write below that reads first fails that way when
/// its transaction begins deferred.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_writes_wait_behind_another_connections_write_instead_of_failing() {
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    type Write = Box<
        dyn Fn(
            Arc<SessionStore>,
            String,
        )
            -> Pin<Box<dyn Future<Output = Result<(), warren_state::db::DbError>> + Send>>,
    >;

    let t = TestInstall::empty().unwrap();
    let path = t.layout().sessions_db();
    let store = Arc::new(SessionStore::new(open_sessions_db(&path).await.unwrap()));
    let now = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
    // alice is known: each write below reads her id before writing.
    let s = store
        .create_session("alice", SessionKind::Chat, "first", now)
        .await
        .unwrap();
    store
        .start_turn("t0", &s.id, "alice", &TurnTrigger::User, "p", now)
        .await
        .unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch("CREATE TABLE other_writer (n INTEGER)")
        .unwrap();

    let writes: Vec<(&str, Write)> = vec![
        (
            "create_session",
            Box::new(move |st, _| {
                Box::pin(async move {
                    st.create_session("alice", SessionKind::Chat, "second", now)
                        .await
                        .map(|_| ())
                })
            }),
        ),
        (
            "start_turn",
            Box::new(move |st, session| {
                Box::pin(async move {
                    st.start_turn("t1", &session, "alice", &TurnTrigger::User, "p", now)
                        .await
                })
            }),
        ),
        (
            "record_usage",
            Box::new(move |st, session| {
                Box::pin(async move {
                    st.record_usage(
                        "alice",
                        Some(&session),
                        Some("t1"),
                        "openai.main",
                        1,
                        2,
                        0.01,
                        now,
                    )
                    .await
                })
            }),
        ),
        (
            "append_messages",
            Box::new(move |st, session| {
                Box::pin(async move {
                    st.append_messages(
                        &session,
                        "t1",
                        &[json!({"role": "user", "content": "hi"})],
                        now,
                    )
                    .await
                })
            }),
        ),
        (
            "finish_turn",
            Box::new(move |st, _| {
                Box::pin(async move {
                    st.finish_turn("t1", "completed", Some("done"), None, now)
                        .await
                })
            }),
        ),
    ];
    for (n, (name, write)) in writes.iter().enumerate() {
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        other
            .execute("INSERT INTO other_writer VALUES (?1)", [n as i64])
            .unwrap();
        let task = tokio::spawn(write(store.clone(), s.id.clone()));
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        assert!(
            !task.is_finished(),
            "{name} did not wait for the write lock"
        );
        other.execute_batch("COMMIT").unwrap();
        task.await
            .unwrap()
            .unwrap_or_else(|e| panic!("{name} failed after the other write: {e}"));
    }
    // Everything landed: the other connection's rows and each write's own.
    let n: i64 = other
        .query_row("SELECT count(*) FROM other_writer", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 5);
    let sessions: i64 = other
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(sessions, 2);
    let turn: (String, i64) = other
        .query_row(
            "SELECT status, (SELECT count(*) FROM messages WHERE turn_id = 't1') FROM turns WHERE id = 't1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(turn, ("completed".to_string(), 1));
    let usage: i64 = other
        .query_row("SELECT count(*) FROM usage WHERE turn_id = 't1'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(usage, 1);
}

#[tokio::test]
async fn corrupted_database_is_a_clear_error() {
    let t = TestInstall::empty().unwrap();
    let p = t.layout().sessions_db();
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(
        &p,
        b"this is not a database, just text that is long enough to matter......",
    )
    .unwrap();
    let err = open_sessions_db(&p).await.expect_err("must fail");
    let msg = err.to_string();
    assert!(
        msg.contains("sessions database") && msg.contains("sessions.db"),
        "{msg}"
    );
}

#[tokio::test]
async fn daily_spend_counts_own_usage_at_once_and_another_process_soon() {
    let t = TestInstall::empty().unwrap();
    let db = t.layout().sessions_db();
    let store = SessionStore::new(open_sessions_db(&db).await.unwrap());
    let other = SessionStore::new(open_sessions_db(&db).await.unwrap());
    let now = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
    let usage = |s: &SessionStore, usd: f64| {
        let s = s.clone();
        async move {
            s.record_usage("alice", None, None, "openai.main", 1, 1, usd, now)
                .await
                .unwrap();
        }
    };
    usage(&store, 0.01).await;
    // The first read caches the day's spend.
    assert!((store.cost_today_cents("alice", now).await.unwrap() - 1.0).abs() < 1e-9);
    // This store's own usage is counted at once, without waiting for the cache to expire.
    usage(&store, 0.02).await;
    let cents = store.cost_today_cents("alice", now).await.unwrap();
    assert!((cents - 3.0).abs() < 1e-9, "{cents}");
    // Usage recorded through another handle (another process) is seen once the cache expires.
    usage(&other, 0.04).await;
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let cents = store.cost_today_cents("alice", now).await.unwrap();
    assert!((cents - 7.0).abs() < 1e-9, "{cents}");
    // Another day is its own total.
    let tomorrow = now + chrono::Duration::days(1);
    assert_eq!(
        store.cost_today_cents("alice", tomorrow).await.unwrap(),
        0.0
    );
}

/// A column whose stored value no longer has the type Warren wrote (edited by hand, or by
/// another tool) is an error naming the table and column, not a panic.
#[tokio::test]
async fn an_undecodable_column_is_an_error_naming_it() {
    use sqlx::Connection;
    let t = TestInstall::empty().unwrap();
    let now = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
    let path = t.layout().sessions_db();
    let store = SessionStore::new(open_sessions_db(&path).await.unwrap());
    let s = store
        .create_session("alice", SessionKind::Chat, "hello", now)
        .await
        .unwrap();
    store
        .start_turn("t1", &s.id, "alice", &TurnTrigger::User, "hello", now)
        .await
        .unwrap();
    store
        .append_messages(
            &s.id,
            "t1",
            &[json!({"role": "user", "content": "hi"})],
            now,
        )
        .await
        .unwrap();
    store
        .record_usage("alice", Some(&s.id), Some("t1"), "p.m", 1, 2, 0.5, now)
        .await
        .unwrap();

    // A raw connection of its own writes values of the wrong type: blobs in text columns.
    let mut raw = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    for sql in [
        "UPDATE sessions SET title = X'00FF' WHERE id = ?",
        "UPDATE turns SET prompt = X'00FF' WHERE session_id = ?",
        "UPDATE messages SET body = X'00FF' WHERE session_id = ?",
    ] {
        sqlx::query(sql)
            .bind(&s.id)
            .execute(&mut raw)
            .await
            .unwrap();
    }
    sqlx::query("UPDATE usage SET input_tokens = 'many' WHERE turn_id = 't1'")
        .execute(&mut raw)
        .await
        .unwrap();
    raw.close().await.unwrap();

    let e = store.list_sessions(Some("alice")).await.unwrap_err();
    assert!(e.to_string().contains("`title` of table `sessions`"), "{e}");
    let e = store.session(&s.id).await.unwrap_err();
    assert!(e.to_string().contains("`title` of table `sessions`"), "{e}");
    let e = store.turns(&s.id).await.unwrap_err();
    assert!(e.to_string().contains("`prompt` of table `turns`"), "{e}");
    let e = store.history(&s.id).await.unwrap_err();
    assert!(e.to_string().contains("`body` of table `messages`"), "{e}");
    // A text value makes SQLite's SUM a REAL: the integer total no longer decodes.
    let e = store.turn_usage("t1").await.unwrap_err();
    assert!(
        e.to_string().contains("`input_tokens` of table `usage`"),
        "{e}"
    );
    assert!(e.to_string().contains("REAL"), "{e}");
}

/// The lifecycle's exports of an agent's usage and sessions, its live ACP sessions and the ACP
/// reaper read undecodable columns as an error naming the table and column, not a panic.
#[tokio::test]
async fn owned_state_exports_name_an_undecodable_column() {
    use sqlx::Connection;
    use warren_state::acp_sessions::AcpSessions;
    use warren_state::owned_state;
    let t = TestInstall::empty().unwrap();
    let now = Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap();
    let path = t.layout().sessions_db();
    let pool = open_sessions_db(&path).await.unwrap();
    let store = SessionStore::new(pool.clone());
    let s = store
        .create_session("alice", SessionKind::Chat, "hello", now)
        .await
        .unwrap();
    store
        .start_turn("t1", &s.id, "alice", &TurnTrigger::User, "hello", now)
        .await
        .unwrap();
    store
        .append_event(&TurnEvent {
            turn_id: "t1".into(),
            agent: "alice".into(),
            seq: 1,
            time: "2026-03-01T12:00:00Z".into(),
            kind: EventKind::TextDelta { text: "hi".into() },
            parent: None,
        })
        .await
        .unwrap();
    store
        .record_usage("alice", Some(&s.id), Some("t1"), "p.m", 1, 2, 0.5, now)
        .await
        .unwrap();
    let acp = AcpSessions::new(store.clone());
    acp.open("alice", 1, "editor", now).await.unwrap();
    let id = owned_state::agent_id_of(&pool, "alice")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        owned_state::export_usage(&pool, &id).await.unwrap().len(),
        1
    );
    assert_eq!(
        owned_state::export_sessions(&pool, &id)
            .await
            .unwrap()
            .len(),
        2
    );

    let mut raw = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    for sql in [
        "UPDATE usage SET provider = X'00FF'",
        "UPDATE events SET body = X'00FF'",
        "UPDATE sessions SET heartbeat_at = X'00FF' WHERE kind = 'acp'",
    ] {
        sqlx::query(sql).execute(&mut raw).await.unwrap();
    }
    raw.close().await.unwrap();

    let e = owned_state::export_usage(&pool, &id).await.unwrap_err();
    assert!(e.to_string().contains("`provider` of table `usage`"), "{e}");
    let e = owned_state::export_sessions(&pool, &id).await.unwrap_err();
    assert!(e.to_string().contains("`body` of table `events`"), "{e}");
    let e = acp
        .reap(now, std::time::Duration::from_secs(15), &|_| true)
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("`heartbeat_at` of table `sessions`"),
        "{e}"
    );
}
