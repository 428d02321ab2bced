//! The host runs several agents at once, one turn at a time per agent: a second prompt to a
//! busy agent waits and then runs, and every event names the agent whose turn it belongs to.

use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use warren_runtime::approval::ApprovalAnswer;
use warren_runtime::host::{Host, HostEnv};
use warren_runtime::turn::TurnStatus;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::{EventKind, ProviderFamily, TurnEvent, TurnTrigger};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_run_at_once_and_a_busy_agent_queues_the_next_prompt() {
    let fa = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let fb = FakeLlm::start(ProviderFamily::Anthropic).unwrap();
    fa.script([
        Reply::tool_call("file_write", json!({"path": "a.txt", "content": "a"})),
        Reply::text("alice first"),
        Reply::text("alice second"),
    ]);
    fb.script([Reply::text("bob answers")]);
    let text = format!(
        r#"
[risk_profiles.sup]
level = "supervised"

[agents.alice]
risk_profile = "sup"
model_provider = "openai.a"

[agents.bob]
risk_profile = "sup"
model_provider = "anthropic.b"

{}
{}
"#,
        fa.config_block("a"),
        fb.config_block("b")
    );
    let t = TestInstall::with_config(&text).unwrap();
    let env = HostEnv {
        home: Some(t.root().join("home")),
        vars: BTreeMap::new(),
    };
    let host = Arc::new(Host::open(t.layout(), env).await.unwrap());
    let mut rx = host.subscribe();

    // Alice's first turn stops at an approval (nobody answers yet): she is busy.
    let h = host.clone();
    let alice1 =
        tokio::spawn(async move { h.run("alice", None, "first", TurnTrigger::User, None).await });
    let mut waited = 0;
    while host.approvals().pending().is_empty() {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += 1;
        assert!(waited < 500, "alice never asked for approval");
    }

    // Bob runs a whole turn while alice's is open.
    let bob = host
        .run("bob", None, "hello", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(bob.status, TurnStatus::Completed);
    assert_eq!(bob.text, "bob answers");

    // A second prompt to alice waits for her first turn.
    let h = host.clone();
    let alice2 = tokio::spawn(async move {
        h.run("alice", None, "second", TurnTrigger::User, None)
            .await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!alice2.is_finished(), "the second prompt must wait");
    assert_eq!(
        fa.request_count(),
        1,
        "alice's second turn has not called the model"
    );

    let pending = host.approvals().pending();
    assert_eq!(pending.len(), 1);
    assert!(host.approvals().answer(
        &pending[0].turn_id,
        &pending[0].call_id,
        ApprovalAnswer::approve()
    ));
    let a1 = alice1.await.unwrap().unwrap();
    let a2 = alice2.await.unwrap().unwrap();
    assert_eq!(
        (a1.status.clone(), a1.text.as_str()),
        (TurnStatus::Completed, "alice first")
    );
    assert_eq!(
        (a2.status.clone(), a2.text.as_str()),
        (TurnStatus::Completed, "alice second")
    );
    assert_eq!(
        std::fs::read_to_string(t.root().join("agents/alice/workspace/a.txt")).unwrap(),
        "a"
    );

    let mut events: Vec<TurnEvent> = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    // Attribution: every event of a turn names that turn's agent.
    for (turn, agent) in [
        (&a1.turn_id, "alice"),
        (&a2.turn_id, "alice"),
        (&bob.turn_id, "bob"),
    ] {
        let of_turn: Vec<&TurnEvent> = events.iter().filter(|e| &e.turn_id == turn).collect();
        assert!(of_turn.len() >= 3);
        assert!(of_turn.iter().all(|e| e.agent == agent), "turn {turn}");
    }
    // Order: bob's whole turn sits inside alice's first; alice's second starts after her first ends.
    let pos = |turn: &str, terminal: bool| {
        events
            .iter()
            .position(|e| {
                e.turn_id == turn
                    && if terminal {
                        e.kind.is_terminal()
                    } else {
                        matches!(e.kind, EventKind::TurnStarted { .. })
                    }
            })
            .unwrap()
    };
    assert!(pos(&a1.turn_id, false) < pos(&bob.turn_id, false));
    assert!(pos(&bob.turn_id, true) < pos(&a1.turn_id, true));
    assert!(pos(&a1.turn_id, true) < pos(&a2.turn_id, false));
    assert_eq!(fb.request_count(), 1);
    assert_eq!(fa.request_count(), 3);
}

/// "Approve for the session" holds for later turns of that session, and only that session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_for_the_session_covers_later_turns_of_that_session_only() {
    use warren_runtime::approval::FixedApprover;
    use warren_types::ApprovalDecision;
    let fa = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let write = |name: &str| Reply::tool_call("file_write", json!({"path": name, "content": "x"}));
    fa.script([
        write("one.txt"),
        Reply::text("first done"),
        write("two.txt"),
        Reply::text("second done"),
        write("three.txt"),
        Reply::text("third done"),
    ]);
    let text = format!(
        "[risk_profiles.sup]\nlevel = \"supervised\"\n[agents.alice]\nrisk_profile = \"sup\"\nmodel_provider = \"openai.a\"\n{}",
        fa.config_block("a")
    );
    let t = TestInstall::with_config(&text).unwrap();
    let env = HostEnv {
        home: Some(t.root().join("home")),
        vars: BTreeMap::new(),
    };
    let host = Arc::new(Host::open(t.layout(), env).await.unwrap());
    let session = host
        .sessions()
        .create_session(
            "alice",
            warren_state::sessions::SessionKind::Chat,
            "s",
            chrono::Utc::now(),
        )
        .await
        .unwrap()
        .id;
    let for_session = ApprovalAnswer {
        decision: ApprovalDecision::ApproveSession,
        message: None,
        no_one_to_ask: false,
    };
    let mut rx = host.subscribe();
    let first = host
        .run(
            "alice",
            Some(&session),
            "one",
            TurnTrigger::User,
            Some(Arc::new(FixedApprover(for_session))),
        )
        .await
        .unwrap();
    assert_eq!(first.status, TurnStatus::Completed);

    // The next turn of the same session is asked nothing: an approver that denies everything
    // proves no question reached it.
    let deny_all: Arc<dyn warren_runtime::approval::AsyncApprover> =
        Arc::new(FixedApprover(ApprovalAnswer::deny(Some("asked".into()))));
    let second = host
        .run(
            "alice",
            Some(&session),
            "two",
            TurnTrigger::User,
            Some(deny_all.clone()),
        )
        .await
        .unwrap();
    assert_eq!(second.status, TurnStatus::Completed);
    let ws = t.root().join("agents/alice/workspace");
    assert!(ws.join("one.txt").exists() && ws.join("two.txt").exists());

    // A new session asks again (and here is denied).
    let third = host
        .run("alice", None, "three", TurnTrigger::User, Some(deny_all))
        .await
        .unwrap();
    assert_eq!(third.status, TurnStatus::Completed);
    assert!(!ws.join("three.txt").exists());

    let mut asked = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if matches!(e.kind, EventKind::ApprovalRequested { .. }) {
            asked.push(e.turn_id.clone());
        }
    }
    assert_eq!(asked, vec![first.turn_id, third.turn_id]);
}

/// Pausing from many writers at once loses no update (the read-modify-write is locked).
#[test]
fn concurrent_pauses_lose_nothing() {
    let t = TestInstall::empty().unwrap();
    let layout = t.layout();
    let threads: Vec<_> = (0..8)
        .map(|i| {
            let layout = layout.clone();
            std::thread::spawn(move || {
                for j in 0..10 {
                    warren_state::pause::set_paused_agents(
                        &layout,
                        &[format!("agent{i}x{j}")],
                        true,
                    )
                    .unwrap();
                }
            })
        })
        .collect();
    for th in threads {
        th.join().unwrap();
    }
    let set = warren_state::pause::paused_agents(&layout).unwrap();
    assert_eq!(set.len(), 80, "{set:?}");
}

/// Waits until a process blocks on the flock of `path` (a `->` line of `/proc/locks` on its
/// inode); panics after 20 seconds.
fn wait_for_a_waiter_on(path: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(path).unwrap().ino().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let locks = std::fs::read_to_string("/proc/locks").unwrap();
        if locks.lines().any(|l| {
            l.contains("->")
                && l.split_whitespace()
                    .any(|f| f.rsplit(':').next() == Some(ino.as_str()))
        }) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "nothing waited for {}:\n{locks}",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Reading the paused agents waits for a change being made under `data/paused.lock` (the
/// rename's pause participant reads this way, so a pause in flight is carried, not missed).
#[test]
fn reading_the_paused_agents_waits_for_a_change_in_progress() {
    let t = TestInstall::empty().unwrap();
    let layout = t.layout();
    std::fs::create_dir_all(layout.data_dir()).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(layout.paused_lock_path())
        .unwrap();
    lock.lock().unwrap();
    let reading = {
        let layout = layout.clone();
        std::thread::spawn(move || warren_state::pause::paused_agents(&layout))
    };
    wait_for_a_waiter_on(&layout.paused_lock_path());
    // The writer holding the lock finishes its change, then lets go.
    std::fs::write(layout.paused_path(), br#"["alice"]"#).unwrap();
    lock.unlock().unwrap();
    let set = reading.join().unwrap().unwrap();
    assert_eq!(set.into_iter().collect::<Vec<_>>(), ["alice"]);
}

/// A read needs no write access: before anything was paused through the lock (no lock file
/// yet) the paused set is read as it is, and no lock file is created by reading.
#[test]
fn reading_the_paused_agents_creates_no_lock_file() {
    let t = TestInstall::empty().unwrap();
    let layout = t.layout();
    std::fs::create_dir_all(layout.data_dir()).unwrap();
    std::fs::write(layout.paused_path(), br#"["bob"]"#).unwrap();
    let set = warren_state::pause::paused_agents(&layout).unwrap();
    assert_eq!(set.into_iter().collect::<Vec<_>>(), ["bob"]);
    assert!(
        !layout.paused_lock_path().exists(),
        "reading created {}",
        layout.paused_lock_path().display()
    );
}

/// Pausing through the host refuses an alias the config does not have; resuming does not ask.
#[test]
fn the_host_pauses_only_agents_of_the_config() {
    let t = TestInstall::with_config("[risk_profiles.p]\n[agents.alice]\nrisk_profile = \"p\"\n")
        .unwrap();
    let layout = t.layout();
    let e = warren_state::pause::pause_configured_agents(&layout, Some(&["bob".to_string()]))
        .unwrap_err();
    assert!(
        matches!(e, warren_state::pause::PauseError::UnknownAgent(ref a) if a == "bob"),
        "{e}"
    );
    assert!(!layout.paused_path().exists());
    let set = warren_state::pause::pause_configured_agents(&layout, None).unwrap();
    assert_eq!(set.into_iter().collect::<Vec<_>>(), ["alice"]);
}
