//! Approval requests through the turn loop: answers reach exactly the call they name, and a
//! call that could not be judged when its batch was scanned is judged again before it runs.

use crate::turn::setup;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use warren_runtime::approval::{ApprovalAnswer, ApprovalWait, AsyncApprover, PendingApproval};
use warren_runtime::turn::TurnStatus;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_types::{EventKind, ProviderFamily, TurnTrigger};

/// Two supervised agents, `alice` and `bob`, each on its own provider.
fn two_agents(alice: &FakeLlm, bob: &FakeLlm) -> String {
    format!(
        r#"
[risk_profiles.sup]
level = "supervised"
allowed_commands = ["*"]
auto_approve = ["file_read"]

[runtime_profiles.rt]
max_tool_iterations = 5

[agents.alice]
risk_profile = "sup"
runtime_profile = "rt"
model_provider = "openai.a"

[agents.bob]
risk_profile = "sup"
runtime_profile = "rt"
model_provider = "openai.b"

{}
{}
"#,
        alice.config_block("a"),
        bob.config_block("b"),
    )
}

/// Waits (bounded) until `n` requests are parked in the broker.
async fn wait_pending(host: &warren_runtime::host::Host, n: usize) -> Vec<PendingApproval> {
    for _ in 0..1000 {
        let p = host.approvals().pending();
        if p.len() >= n {
            return p;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    host.approvals().pending()
}

fn write_reply(path: &str) -> Reply {
    Reply::tool_call("file_write", json!({"path": path, "content": "hello"}))
}

fn recovered_write_reply(path: &str) -> Reply {
    Reply::text(&format!(
        "<tool_call>{{\"name\": \"file_write\", \"arguments\": {{\"path\": \"{path}\", \"content\": \"hello\"}}}}</tool_call>"
    ))
}

/// Runs alice and bob at once, both waiting for approval, and answers alice's request only
/// (approve), then bob's (deny). Returns the ids the two requests carried.
async fn answer_one_of_two(alice_reply: Reply, bob_reply: Reply) -> (String, String) {
    let (fa, fb) = (
        FakeLlm::start(ProviderFamily::Openai).unwrap(),
        FakeLlm::start(ProviderFamily::Openai).unwrap(),
    );
    fa.script([alice_reply, Reply::text("alice done")]);
    fb.script([bob_reply, Reply::text("bob done")]);
    let s = setup(&two_agents(&fa, &fb)).await;
    let root = s.ws.parent().unwrap().parent().unwrap().to_path_buf();
    let (alice_ws, bob_ws) = (root.join("alice/workspace"), root.join("bob/workspace"));
    let host = Arc::new(s.host);
    let (ha, hb) = (host.clone(), host.clone());
    let run_a = tokio::spawn(async move {
        ha.run("alice", None, "write", TurnTrigger::User, None)
            .await
    });
    let run_b =
        tokio::spawn(async move { hb.run("bob", None, "write", TurnTrigger::User, None).await });
    let pending = wait_pending(&host, 2).await;
    if pending.len() < 2 && run_a.is_finished() && run_b.is_finished() {
        panic!(
            "the turns ended without waiting: {:?} {:?}",
            run_a.await.unwrap(),
            run_b.await.unwrap()
        );
    }
    assert_eq!(pending.len(), 2, "both requests wait at once: {pending:?}");
    let a = pending.iter().find(|p| p.agent == "alice").unwrap().clone();
    let b = pending.iter().find(|p| p.agent == "bob").unwrap().clone();
    assert!(host
        .approvals()
        .answer(&a.turn_id, &a.call_id, ApprovalAnswer::approve()));
    let out_a = run_a.await.unwrap().unwrap();
    assert_eq!(out_a.status, TurnStatus::Completed, "{out_a:?}");
    assert_eq!(out_a.turn_id, a.turn_id);
    assert_eq!(
        std::fs::read_to_string(alice_ws.join("a.txt")).unwrap(),
        "hello"
    );
    // Bob's request is still waiting, untouched by alice's answer.
    let left = host.approvals().pending();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].agent, "bob");
    assert!(!bob_ws.join("b.txt").exists());
    assert!(host.approvals().answer(
        &b.turn_id,
        &b.call_id,
        ApprovalAnswer::deny(Some("no".into()))
    ));
    let out_b = run_b.await.unwrap().unwrap();
    assert_eq!(out_b.status, TurnStatus::Completed, "{out_b:?}");
    assert!(!bob_ws.join("b.txt").exists());
    // An answer naming a turn that is not waiting reaches nothing.
    assert!(!host
        .approvals()
        .answer("no-such-turn", &a.call_id, ApprovalAnswer::approve()));
    (a.call_id, b.call_id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_reaches_only_the_turn_it_names_when_call_ids_collide() {
    let (a, b) = answer_one_of_two(write_reply("a.txt"), write_reply("b.txt")).await;
    // Both providers number their calls alike: the ids really collide.
    assert_eq!(a, b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovered_calls_of_two_turns_get_distinct_ids() {
    let (a, b) = answer_one_of_two(
        recovered_write_reply("a.txt"),
        recovered_write_reply("b.txt"),
    )
    .await;
    assert!(a.starts_with("text-") && b.starts_with("text-"), "{a} {b}");
    assert_ne!(a, b);
}

/// Approves calls of one tool, denies every other, and records every request's tool.
struct Only {
    tool: &'static str,
    asked: Mutex<Vec<String>>,
}

impl Only {
    fn new(tool: &'static str) -> Arc<Self> {
        Arc::new(Only {
            tool,
            asked: Mutex::new(Vec::new()),
        })
    }
}

impl AsyncApprover for Only {
    fn ask(&self, request: PendingApproval) -> ApprovalWait<'_> {
        Box::pin(async move {
            self.asked.lock().unwrap().push(request.tool.clone());
            if request.tool == self.tool {
                ApprovalAnswer::approve()
            } else {
                ApprovalAnswer::deny(Some("not approved".into()))
            }
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_of_a_file_written_earlier_in_the_batch_is_asked_and_denied() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_calls([
            (
                "file_write",
                json!({"path": "new.txt", "content": "original"}),
            ),
            (
                "file_edit",
                json!({"path": "new.txt", "old_text": "original", "new_text": "edited"}),
            ),
        ]),
        Reply::text("done"),
    ]);
    let s = setup(&crate::turn::config(
        "sup",
        "max_tool_iterations = 5",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    let mut rx = s.host.subscribe();
    let approver = Only::new("file_write");
    let out = s
        .host
        .run(
            "alice",
            None,
            "write then edit",
            TurnTrigger::User,
            Some(approver.clone()),
        )
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert_eq!(
        *approver.asked.lock().unwrap(),
        vec!["file_write".to_string(), "file_edit".to_string()]
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("new.txt")).unwrap(),
        "original",
        "the denied edit did not run"
    );
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    let requested = events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::ApprovalRequested { .. }))
        .count();
    assert_eq!(requested, 2);
}

/// A git call whose repository a sibling shell call creates cannot be checked when the batch
/// is scanned (the directory is missing); it is judged again before it runs, and asked about.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_call_on_a_repository_made_earlier_in_the_batch_is_asked_before_it_runs() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_calls([
            (
                "shell",
                json!({"command": "git init -q repo && echo x > repo/f.txt"}),
            ),
            (
                "git_operations",
                json!({"operation": "add", "path": "repo", "paths": ["f.txt"]}),
            ),
        ]),
        Reply::text("done"),
    ]);
    let s = setup(&crate::turn::config(
        "sup",
        "max_tool_iterations = 5",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    let approver = Only::new("shell");
    let out = s
        .host
        .run(
            "alice",
            None,
            "init and add",
            TurnTrigger::User,
            Some(approver.clone()),
        )
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert!(
        s.ws.join("repo/f.txt").exists(),
        "the approved shell call ran"
    );
    assert_eq!(
        *approver.asked.lock().unwrap(),
        vec!["shell".to_string(), "git_operations".to_string()]
    );
    // The denied `add` staged nothing: a fresh repository has no index until something is added.
    assert!(!s.ws.join("repo/.git/index").exists());
}
