//! `warren run` as a black box against a fake OpenAI server.

use crate::common::warren;
use serde_json::{json, Value};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

fn install(fake: &FakeLlm) -> TestInstall {
    TestInstall::with_config(&format!(
        r#"
[risk_profiles.sup]
level = "supervised"
allowed_commands = ["*"]

[agents.alice]
risk_profile = "sup"
model_provider = "openai.main"

{}"#,
        fake.config_block("main")
    ))
    .unwrap()
}

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_json_streams_events_and_approve_writes_the_file() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call(
            "file_write",
            json!({"path": "hello.txt", "content": "hi there"}),
        ),
        Reply::text("Wrote hello.txt."),
    ]);
    let t = install(&fake);
    let root = t.root().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        warren(
            &root,
            &[
                "--json",
                "run",
                "--agent",
                "alice",
                "--approve",
                "write a file",
            ],
        )
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "stderr: {}\nstdout: {}", r.stderr, r.stdout);
    let events = lines(&r.stdout);
    let types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types.first(), Some(&"turn_started"));
    assert_eq!(types.last(), Some(&"turn_completed"));
    for t in [
        "model_request",
        "text_delta",
        "tool_call",
        "approval_requested",
        "approval_resolved",
        "tool_result",
        "usage",
    ] {
        assert!(types.contains(&t), "missing {t} in {types:?}");
    }
    assert_eq!(events.last().unwrap()["text"], "Wrote hello.txt.");
    assert!(events.iter().all(|e| e["agent"] == "alice"));
    assert_eq!(
        std::fs::read_to_string(t.root().join("agents/alice/workspace/hello.txt")).unwrap(),
        "hi there"
    );
    let v = warren(t.root(), &["receipts", "verify", "--agent", "alice"]);
    assert_eq!(v.code, 0, "{}", v.stderr);
    assert!(v.stdout.contains("1 checked"), "{}", v.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_without_anyone_to_ask_denies_and_tells_the_model() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("file_write", json!({"path": "hello.txt", "content": "hi"})),
        Reply::text("I could not write it."),
    ]);
    let t = install(&fake);
    let root = t.root().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        warren(&root, &["run", "--agent", "alice", "write a file"])
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("I could not write it."), "{}", r.stdout);
    assert!(!t.root().join("agents/alice/workspace/hello.txt").exists());
    assert!(fake.requests()[1]
        .body
        .to_string()
        .contains("runtime denied"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_failures_exit_1_with_the_code() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([Reply::error(401, "bad key")]);
    let t = install(&fake);
    let root = t.root().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        warren(&root, &["--json", "run", "--agent", "alice", "hi"])
    })
    .await
    .unwrap();
    assert_eq!(r.code, 1);
    let last = lines(&r.stdout).pop().unwrap();
    assert_eq!(last["type"], "turn_failed");
    assert_eq!(last["code"], "provider_http");
    let r = warren(t.root(), &["run", "--agent", "ghost", "hi"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("agent `ghost` does not exist"),
        "{}",
        r.stderr
    );
}

/// A rename from one process waits for the agent's turn running in another, then renames; two
/// `warren run` processes for one agent take turns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_in_another_process_holds_off_a_rename_until_it_ends() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::text("slow answer").delay(std::time::Duration::from_millis(1500)),
        Reply::text("second answer"),
    ]);
    let t = install(&fake);
    let root = t.root().to_path_buf();
    let run = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || {
            let r = warren(&root, &["--json", "run", "--agent", "alice", "first"]);
            (r, std::time::Instant::now())
        })
    };
    // The turn is under way once the provider has its request.
    let t0 = std::time::Instant::now();
    while fake.request_count() == 0 {
        assert!(
            t0.elapsed().as_secs() < 20,
            "the turn never called the model"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    // A second turn for the same agent from a third process waits its turn too.
    let second = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || {
            warren(&root, &["--json", "run", "--agent", "alice", "second"])
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(fake.request_count(), 1, "the second turn must wait");
    let second = second.await.unwrap();
    assert_eq!(second.code, 0, "{}", second.stderr);
    let (first, first_done) = run.await.unwrap();
    assert_eq!(first.code, 0, "{}", first.stderr);

    // Now hold a turn open again and rename meanwhile.
    fake.script([Reply::text("third").delay(std::time::Duration::from_millis(1500))]);
    let before = fake.request_count();
    let run = {
        let root = root.clone();
        tokio::task::spawn_blocking(move || {
            let r = warren(&root, &["--json", "run", "--agent", "alice", "third"]);
            (r, std::time::Instant::now())
        })
    };
    while fake.request_count() == before {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let rename = tokio::task::spawn_blocking(move || {
        let r = warren(&root, &["--json", "agents", "rename", "alice", "ann"]);
        (r, std::time::Instant::now())
    });
    let (third, third_done) = run.await.unwrap();
    let (renamed, rename_done) = rename.await.unwrap();
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert_eq!(renamed.code, 0, "{}", renamed.stderr);
    assert!(
        rename_done > third_done && third_done > first_done,
        "the rename finished before the running turn"
    );
    // The turn's final answer is in the session that now belongs to `ann`.
    assert!(t.read_config().unwrap().contains("[agents.ann]"));
    assert!(t.root().join("agents/ann/workspace").is_dir());
}

/// Terminal control bytes in what the model says and in a tool call's arguments reach the
/// terminal as visible escapes, never as controls; the tool itself got the bytes as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_text_reaches_the_terminal_escaped() {
    let hostile = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}";
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("file_write", json!({"path": "a.txt", "content": hostile})),
        Reply::text(&format!("done {hostile} red")),
    ]);
    let t = install(&fake);
    let root = t.root().to_path_buf();
    let r = tokio::task::spawn_blocking(move || {
        warren(&root, &["run", "--agent", "alice", "--approve", "write"])
    })
    .await
    .unwrap();
    assert_eq!(r.code, 0, "stderr: {}\nstdout: {}", r.stderr, r.stdout);
    // Positive control: the bytes were really there (the tool wrote them as given).
    let written = std::fs::read_to_string(t.root().join("agents/alice/workspace/a.txt")).unwrap();
    assert_eq!(written, hostile);
    for (name, text) in [("stdout", &r.stdout), ("stderr", &r.stderr)] {
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\u{202e}'),
            "{name} carries a raw control: {text:?}"
        );
    }
    assert!(r.stdout.contains("\\x1b]0;pwned\\x07"), "{:?}", r.stdout);
    assert!(r.stdout.contains("\\u{202e}"), "{:?}", r.stdout);
}
