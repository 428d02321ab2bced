//! The turn loop against fake provider servers over real HTTP, with real tools on real files.

use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use warren_runtime::approval::{ApprovalAnswer, FixedApprover};
use warren_runtime::host::Host;
use warren_runtime::turn::TurnStatus;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::turn::{drain, TurnHarness};
use warren_testkit::TestInstall;
use warren_types::{EventKind, NoticeCode, ProviderFamily, TurnEvent, TurnFailure, TurnTrigger};

pub struct Setup {
    pub _install: TestInstall,
    pub host: Host,
    pub ws: PathBuf,
}

pub fn config(risk: &str, runtime: &str, provider: &str, providers: &str) -> String {
    format!(
        r#"
[risk_profiles.yolo]
level = "full"
allowed_commands = ["*"]
block_high_risk_commands = false

[risk_profiles.sup]
level = "supervised"
allowed_commands = ["*"]
auto_approve = ["file_read"]

[runtime_profiles.rt]
{runtime}

[agents.alice]
risk_profile = "{risk}"
runtime_profile = "rt"
model_provider = "{provider}"

{providers}
"#
    )
}

pub async fn setup(config_text: &str) -> Setup {
    let (t, host) = TurnHarness::open(config_text).await.into_parts();
    let ws = t.root().join("agents/alice/workspace");
    Setup {
        _install: t,
        host,
        ws,
    }
}

fn fixed(a: ApprovalAnswer) -> Option<Arc<dyn warren_runtime::approval::AsyncApprover>> {
    Some(Arc::new(FixedApprover(a)))
}

fn types(events: &[TurnEvent]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.type_name()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_runs_both_calls_in_order_and_stores_a_replayable_turn() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_calls([
            ("file_write", json!({"path": "a.txt", "content": "first"})),
            ("file_write", json!({"path": "b.txt", "content": "second"})),
        ]),
        Reply::text("Both files are written."),
    ]);
    let s = setup(&config(
        "yolo",
        "max_tool_iterations = 5",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run("alice", None, "write two files", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert_eq!(out.text, "Both files are written.");
    assert_eq!(
        std::fs::read_to_string(s.ws.join("a.txt")).unwrap(),
        "first"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("b.txt")).unwrap(),
        "second"
    );
    let events = drain(&mut rx);
    let seqs: Vec<u32> = events.iter().map(|e| e.seq).collect();
    assert_eq!(
        seqs,
        (1..=events.len() as u32).collect::<Vec<_>>(),
        "seq without gaps"
    );
    assert!(events
        .iter()
        .all(|e| e.agent == "alice" && e.turn_id == out.turn_id));
    let calls: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    let results: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult {
                id,
                ok: true,
                receipt_id: Some(_),
                ..
            } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls, results,
        "one result per call, in call order, each with a receipt"
    );
    assert_eq!(types(&events).first(), Some(&"turn_started"));
    assert_eq!(types(&events).last(), Some(&"turn_completed"));
    // The second request carried both results in call order.
    let reqs = fake.requests();
    let msgs = reqs[1].body["messages"].as_array().unwrap();
    let tool_ids: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        tool_ids,
        calls.iter().map(String::as_str).collect::<Vec<_>>()
    );
    // Stored events replay the same stream.
    let stored = s.host.sessions().turn_events(&out.turn_id).await.unwrap();
    assert_eq!(stored, events);
    assert!(s.host.receipts().verify("alice").await.unwrap().ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_tools_overlap_in_time() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let cmd = |n: &str| format!("date +%s%N > {n}.start; sleep 0.6; date +%s%N > {n}.end");
    fake.script([
        Reply::tool_calls([
            ("shell", json!({"command": cmd("a")})),
            ("shell", json!({"command": cmd("b")})),
        ]),
        Reply::text("done"),
    ]);
    let s = setup(&config(
        "yolo",
        "parallel_tools = true",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    let out = s
        .host
        .run("alice", None, "go", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let read = |f: &str| -> u128 {
        std::fs::read_to_string(s.ws.join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let (a0, a1, b0, b1) = (
        read("a.start"),
        read("a.end"),
        read("b.start"),
        read("b.end"),
    );
    assert!(
        a0 < b1 && b0 < a1,
        "intervals do not overlap: a=[{a0},{a1}] b=[{b0},{b1}]"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequential_by_default() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let cmd = |n: &str| format!("date +%s%N > {n}.start; sleep 0.2; date +%s%N > {n}.end");
    fake.script([
        Reply::tool_calls([
            ("shell", json!({"command": cmd("a")})),
            ("shell", json!({"command": cmd("b")})),
        ]),
        Reply::text("done"),
    ]);
    let s = setup(&config(
        "yolo",
        "parallel_tools = false",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    s.host
        .run("alice", None, "go", TurnTrigger::User, None)
        .await
        .unwrap();
    let read = |f: &str| -> u128 {
        std::fs::read_to_string(s.ws.join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    assert!(read("a.end") <= read("b.start"), "b started before a ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_tool_rounds_reject_two_calls_before_running_any() {
    for family in [ProviderFamily::Openai, ProviderFamily::Anthropic] {
        let fake = FakeLlm::start(family).unwrap();
        fake.script([
            Reply::tool_calls([
                ("file_write", json!({"path": "x.txt", "content": "x"})),
                ("file_write", json!({"path": "y.txt", "content": "y"})),
            ])
            .usage(111, 22),
            Reply::text("ok"),
        ]);
        let provider = format!("{}.main", family.as_str());
        let s = setup(&config(
            "yolo",
            "single_tool_rounds = true",
            &provider,
            &fake.config_block("main"),
        ))
        .await;
        let mut rx = s.host.subscribe();
        let out = s
            .host
            .run("alice", None, "write", TurnTrigger::User, None)
            .await
            .unwrap();
        match &out.status {
            TurnStatus::Failed { code, .. } => assert_eq!(*code, TurnFailure::MultipleToolCalls),
            other => panic!("{family:?}: {other:?}"),
        }
        assert!(
            !s.ws.join("x.txt").exists() && !s.ws.join("y.txt").exists(),
            "a tool ran"
        );
        let events = drain(&mut rx);
        assert!(
            !types(&events).contains(&"tool_call"),
            "{:?}",
            types(&events)
        );
        let reqs = fake.requests();
        match family {
            ProviderFamily::Openai => assert_eq!(reqs[0].body["parallel_tool_calls"], false),
            _ => assert_eq!(
                reqs[0].body["tool_choice"]["disable_parallel_tool_use"],
                true
            ),
        }
        // The usage of the rejected response counts.
        let (inp, outp, _) = s.host.sessions().turn_usage(&out.turn_id).await.unwrap();
        assert_eq!((inp, outp), (111, 22));
        // The next turn in the same session carries no trace of the rejected response.
        let session = s
            .host
            .sessions()
            .list_sessions(Some("alice"))
            .await
            .unwrap()[0]
            .id
            .clone();
        let out2 = s
            .host
            .run("alice", Some(&session), "again", TurnTrigger::User, None)
            .await
            .unwrap();
        assert_eq!(out2.status, TurnStatus::Completed);
        let body = reqs_body_text(&fake, 1);
        assert!(
            !body.contains("x.txt"),
            "{family:?}: rejected response leaked into history: {body}"
        );
        assert!(body.contains("write") && body.contains("again"));
    }
}

fn reqs_body_text(fake: &FakeLlm, i: usize) -> String {
    fake.requests()[i].body.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn single_tool_rounds_on_a_route_with_ollama_fall_back_to_batch_with_one_notice() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let ollama = FakeLlm::start(ProviderFamily::Ollama).unwrap();
    fake.script([
        Reply::tool_calls([
            ("file_write", json!({"path": "x.txt", "content": "x"})),
            ("file_write", json!({"path": "y.txt", "content": "y"})),
        ]),
        Reply::tool_call("file_read", json!({"path": "x.txt"})),
        Reply::text("done"),
    ]);
    let providers = format!(
        "{}fallbacks = [\"ollama.local\"]\n\n{}",
        fake.config_block("main"),
        ollama.config_block("local")
    );
    let s = setup(&config(
        "yolo",
        "single_tool_rounds = true",
        "openai.main",
        &providers,
    ))
    .await;
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run("alice", None, "write", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert!(s.ws.join("x.txt").exists() && s.ws.join("y.txt").exists());
    let events = drain(&mut rx);
    let notices = events
        .iter()
        .filter(|e| {
            matches!(
                &e.kind,
                EventKind::Notice {
                    code: warren_types::NoticeCode::SingleToolRoundsUnsupported,
                    ..
                }
            )
        })
        .count();
    assert_eq!(notices, 1, "one notice per turn, not per round");
    assert!(
        fake.requests()[0].body.get("parallel_tool_calls").is_none(),
        "no control sent in batch mode"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn iteration_cap_makes_one_last_call_without_tools() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("file_read", json!({"path": "nothing.txt"})),
        Reply::tool_call("file_read", json!({"path": "nothing.txt"})),
        Reply::text("I looked twice and found nothing."),
    ]);
    let s = setup(&config(
        "yolo",
        "max_tool_iterations = 2",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    let out = s
        .host
        .run("alice", None, "look", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed);
    assert!(out.text.starts_with("I looked twice"));
    assert!(
        out.text.contains("Stopped at the cap of 2 tool rounds"),
        "{}",
        out.text
    );
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[0].body.get("tools").is_some());
    assert_eq!(
        reqs[2].body["tool_choice"], "none",
        "the summary call must forbid tool calls"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_the_process_group_and_leaves_valid_history() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call(
            "shell",
            json!({"command": format!("echo $$ > pid; sleep 30.{}", std::process::id())}),
        ),
        Reply::text("after cancel"),
    ]);
    let s = setup(&config(
        "yolo",
        "shell_timeout_secs = 60",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    let host = Arc::new(s.host);
    let mut rx = host.subscribe();
    let h = host.clone();
    let run =
        tokio::spawn(async move { h.run("alice", None, "sleep", TurnTrigger::User, None).await });
    // Wait until the shell has started.
    let pid_file = s.ws.join("pid");
    for _ in 0..200 {
        if pid_file.exists()
            && !std::fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .is_empty()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let marker = format!("sleep 30.{}", std::process::id());
    assert!(
        !warren_testkit::procs::running_with(&marker).is_empty(),
        "the shell's sleep is running"
    );
    assert!(host.cancel("alice"));
    let out = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(out.status, TurnStatus::Cancelled);
    // The shell's process group is gone (found by its command line: under bubblewrap the pid
    // the shell printed is one of its own pid namespace).
    tokio::time::sleep(Duration::from_millis(100)).await;
    let left = warren_testkit::procs::running_with(&marker);
    assert!(left.is_empty(), "{left:?} still alive");
    let events = drain(&mut rx);
    let result = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
            _ => None,
        })
        .unwrap();
    assert!(!result.0 && result.1.contains("interrupted"), "{result:?}");
    assert_eq!(types(&events).last(), Some(&"turn_cancelled"));
    // The next turn's request has the call and its interrupted result: valid history.
    let session = host.sessions().list_sessions(Some("alice")).await.unwrap()[0]
        .id
        .clone();
    let out2 = host
        .run("alice", Some(&session), "next", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out2.status, TurnStatus::Completed);
    let msgs = fake.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .clone();
    let call_id = msgs
        .iter()
        .find_map(|m| m["tool_calls"][0]["id"].as_str())
        .unwrap()
        .to_string();
    assert!(msgs
        .iter()
        .any(|m| m["role"] == "tool" && m["tool_call_id"] == call_id.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_errors_fallbacks_and_clean_history() {
    // 500 then fallback success.
    let primary = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let backup = FakeLlm::start(ProviderFamily::Anthropic).unwrap();
    primary.script([Reply::error(500, "boom"), Reply::error(400, "bad request")]);
    backup.script([Reply::text("from backup")]);
    let providers = format!(
        "{}fallbacks = [\"anthropic.backup\"]\n\n{}",
        primary.config_block("main"),
        backup.config_block("backup")
    );
    let s = setup(&config(
        "yolo",
        "max_tool_iterations = 3",
        "openai.main",
        &providers,
    ))
    .await;
    let out = s
        .host
        .run("alice", None, "hi", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed);
    assert_eq!(out.text, "from backup");
    // The move to the next entry is announced once, with the failed entry's code.
    let events = s.host.sessions().turn_events(&out.turn_id).await.unwrap();
    let fallbacks: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Notice {
                code: NoticeCode::ProviderFallback,
                message,
            } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(fallbacks.len(), 1, "{events:?}");
    assert!(fallbacks[0].contains("provider_http"), "{fallbacks:?}");
    // 400 does not fall back.
    let out = s
        .host
        .run("alice", None, "hi", TurnTrigger::User, None)
        .await
        .unwrap();
    match out.status {
        TurnStatus::Failed { code, message } => {
            assert_eq!(code, TurnFailure::ProviderHttp, "{message}");
            assert!(message.contains("400"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(backup.request_count(), 1, "a 400 must not fall back");

    // Malformed JSON and a cut stream: clear errors, history keeps only the user messages.
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::malformed(),
        Reply::text("partial answer that is cut").cut_after(2),
        Reply::text("fine"),
    ]);
    let s = setup(&config(
        "yolo",
        "max_tool_iterations = 3",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    let out = s
        .host
        .run("alice", None, "one", TurnTrigger::User, None)
        .await
        .unwrap();
    assert!(
        matches!(
            &out.status,
            TurnStatus::Failed {
                code: TurnFailure::MalformedResponse,
                ..
            }
        ),
        "{out:?}"
    );
    let session = s
        .host
        .sessions()
        .list_sessions(Some("alice"))
        .await
        .unwrap()[0]
        .id
        .clone();
    let out = s
        .host
        .run("alice", Some(&session), "two", TurnTrigger::User, None)
        .await
        .unwrap();
    assert!(
        matches!(
            &out.status,
            TurnStatus::Failed {
                code: TurnFailure::StreamInterrupted,
                ..
            }
        ),
        "{out:?}"
    );
    let out = s
        .host
        .run("alice", Some(&session), "three", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed);
    let history = s.host.sessions().history(&session).await.unwrap();
    let roles: Vec<&str> = history
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "user", "user", "assistant"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_approve_deny_and_no_one_to_ask() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    for _ in 0..3 {
        fake.push(Reply::tool_call(
            "file_write",
            json!({"path": "note.txt", "content": "hello"}),
        ));
        fake.push(Reply::text("done"));
    }
    let s = setup(&config(
        "sup",
        "max_tool_iterations = 3",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    // No one to ask: denied, the model is told the runtime denied it.
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run(
            "alice",
            None,
            "write",
            TurnTrigger::User,
            fixed(ApprovalAnswer::no_one()),
        )
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed);
    assert!(!s.ws.join("note.txt").exists());
    let told = fake.requests()[1].body.to_string();
    assert!(told.contains("runtime denied"), "{told}");
    let events = drain(&mut rx);
    assert!(
        types(&events).contains(&"approval_requested")
            && types(&events).contains(&"approval_resolved")
    );
    // Denied by the user with a message.
    s.host
        .run(
            "alice",
            None,
            "write",
            TurnTrigger::User,
            fixed(ApprovalAnswer::deny(Some("not now".into()))),
        )
        .await
        .unwrap();
    assert!(!s.ws.join("note.txt").exists());
    assert!(fake.requests()[3].body.to_string().contains("not now"));
    // Approved through the broker, answered by another task as a UI would.
    let host = Arc::new(s.host);
    let h = host.clone();
    let run =
        tokio::spawn(async move { h.run("alice", None, "write", TurnTrigger::User, None).await });
    let mut answered = false;
    for _ in 0..400 {
        if let Some(p) = host.approvals().pending().first() {
            assert_eq!(p.tool, "file_write");
            answered = host
                .approvals()
                .answer(&p.turn_id, &p.call_id, ApprovalAnswer::approve());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(answered);
    let out = run.await.unwrap().unwrap();
    assert_eq!(out.status, TurnStatus::Completed);
    assert_eq!(
        std::fs::read_to_string(s.ws.join("note.txt")).unwrap(),
        "hello"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_tools_store_recall_and_reject_bad_arguments_and_recall_is_injected() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call(
            "memory_store",
            json!({"key": "colour", "content": "favourite colour is teal"}),
        ),
        Reply::tool_call("memory_recall", json!({"query": "teal"})),
        Reply::tool_call("memory_store", json!({"key": 5, "content": "x"})),
        Reply::text("noted"),
        Reply::text("teal, as remembered"),
    ]);
    let s = setup(&config(
        "yolo",
        "max_tool_iterations = 5",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    let out = s
        .host
        .run("alice", None, "remember my colour", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let reqs = fake.requests();
    let tool_msg = |i: usize| -> String {
        let msgs = reqs[i].body["messages"].as_array().unwrap();
        msgs.iter().rev().find(|m| m["role"] == "tool").unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(tool_msg(1).contains("colour"), "{}", tool_msg(1));
    assert!(
        tool_msg(2).contains("favourite colour is teal"),
        "recall result: {}",
        tool_msg(2)
    );
    assert!(
        tool_msg(3).contains("invalid_argument") && tool_msg(3).contains("key"),
        "{}",
        tool_msg(3)
    );
    // The row is in the agent's SQLite memory, under alice.
    let db = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        s.ws.parent()
            .unwrap()
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .join("data/memory/memory.db")
            .display()
    ))
    .await
    .unwrap();
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT a.alias, m.content FROM memories m JOIN agents a ON a.id = m.agent_id",
    )
    .fetch_all(&db)
    .await
    .unwrap();
    assert_eq!(
        rows,
        vec![("alice".to_string(), "favourite colour is teal".to_string())]
    );
    // The next turn starts with the recalled row in its system prompt.
    s.host
        .run(
            "alice",
            None,
            "what colour do I like? teal?",
            TurnTrigger::User,
            None,
        )
        .await
        .unwrap();
    let system = fake.requests()[4].body["messages"][0].clone();
    assert_eq!(system["role"], "system");
    assert!(
        system["content"]
            .as_str()
            .unwrap()
            .contains("favourite colour is teal"),
        "{system}"
    );
}

/// The model chooses call ids, and they key approvals, events and announcements: a repeated id
/// (in one round or a later one) is renamed before the call goes anywhere, every call runs
/// under its own id, and the provider sees each result paired with its renamed call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_call_ids_are_renamed_before_anything_sees_them() {
    use warren_testkit::fake_llm::ScriptedCall;
    let call = |id: &str, path: &str| ScriptedCall {
        id: Some(id.to_string()),
        name: "file_write".into(),
        arguments: json!({"path": path, "content": path}),
    };
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::scripted_calls("", vec![call("dup", "a.txt"), call("dup", "b.txt")]),
        Reply::scripted_calls("", vec![call("dup", "c.txt")]),
        Reply::text("done"),
    ]);
    let s = setup(&config(
        "yolo",
        "max_tool_iterations = 5",
        "openai.main",
        &fake.config_block("main"),
    ))
    .await;
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run("alice", None, "write", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let events = drain(&mut rx);
    let ids: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["dup", "dup~2", "dup~3"]);
    for f in ["a.txt", "b.txt", "c.txt"] {
        assert_eq!(std::fs::read_to_string(s.ws.join(f)).unwrap(), f);
    }
    // The next request pairs each result with its call under the renamed id.
    let body = &fake.requests()[1].body;
    let msgs = body["messages"].as_array().unwrap();
    let asked: Vec<&str> = msgs
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .filter_map(|c| c["id"].as_str())
        .collect();
    let answered: Vec<&str> = msgs
        .iter()
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(asked, ["dup", "dup~2"], "{body}");
    assert_eq!(answered, ["dup", "dup~2"], "{body}");
}
