//! `warren approvals list | answer` against a turn waiting in another process (`warren run
//! --wait-approval`), driven by a fake OpenAI server.

use crate::common::{warren, warren_cmd, Run};
use serde_json::{json, Value};
use std::process::Stdio;
use std::time::{Duration, Instant};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

fn install(fake: &FakeLlm) -> TestInstall {
    TestInstall::with_config(&format!(
        "[risk_profiles.sup]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"sup\"\nmodel_provider = \"openai.main\"\n\n{}",
        fake.config_block("main")
    ))
    .unwrap()
}

/// Waits until `warren approvals list` shows one request, and returns it.
fn waiting_request(t: &TestInstall) -> Value {
    let start = Instant::now();
    loop {
        let r = warren(t.root(), &["--json", "approvals", "list"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        let v = r.json();
        if let Some(first) = v.as_array().and_then(|a| a.first()) {
            return first.clone();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no request showed up"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn spawn_run(t: &TestInstall, prompt: &str) -> std::process::Child {
    warren_cmd(t.root())
        .args([
            "--json",
            "run",
            "--agent",
            "alice",
            "--wait-approval",
            prompt,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn events(r: &Run) -> Vec<Value> {
    r.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_waiting_in_another_process_is_listed_and_answered() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    tokio::task::spawn_blocking(move || {
        a_request_waiting_in_another_process_is_listed_and_answered_with(fake);
    })
    .await
    .unwrap();
}

fn a_request_waiting_in_another_process_is_listed_and_answered_with(fake: FakeLlm) {
    fake.script([
        Reply::tool_call(
            "file_write",
            json!({"path": "a.txt", "content": "approved"}),
        ),
        Reply::text("done"),
        Reply::tool_call("file_write", json!({"path": "b.txt", "content": "denied"})),
        Reply::text("understood"),
    ]);
    let t = install(&fake);

    // Approved from another process: the tool runs.
    let child = spawn_run(&t, "write a");
    let req = waiting_request(&t);
    assert_eq!(req["agent"], "alice");
    assert_eq!(req["tool"], "file_write");
    assert!(
        req["arguments"].as_str().unwrap().contains("a.txt"),
        "{req}"
    );
    let turn = req["turn_id"].as_str().unwrap().to_string();
    let call = req["call_id"].as_str().unwrap().to_string();
    let r = warren(
        t.root(),
        &["--json", "approvals", "answer", &turn, &call, "approve"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["answered"], true);
    let out: Run = child.wait_with_output().unwrap().into();
    assert_eq!(out.code, 0, "{}", out.stderr);
    let ev = events(&out);
    assert!(ev
        .iter()
        .any(|e| e["type"] == "approval_resolved" && e["decision"] == "approve_once"));
    let ws = t.root().join("agents/alice/workspace");
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "approved"
    );
    // Answered once: nothing waits any more, and a second answer finds nothing.
    let r = warren(t.root(), &["--json", "approvals", "list"]);
    assert_eq!(r.json(), json!([]));
    let r = warren(
        t.root(),
        &["--json", "approvals", "answer", &turn, &call, "approve"],
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");

    // Denied with a message: the tool does not run and the model is told.
    let child = spawn_run(&t, "write b");
    let req = waiting_request(&t);
    let (turn, call) = (
        req["turn_id"].as_str().unwrap().to_string(),
        req["call_id"].as_str().unwrap().to_string(),
    );
    let r = warren(
        t.root(),
        &[
            "approvals",
            "answer",
            &turn,
            &call,
            "deny",
            "--message",
            "not in b",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let out: Run = child.wait_with_output().unwrap().into();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!ws.join("b.txt").exists());
    let ev = events(&out);
    let result = ev.iter().find(|e| e["type"] == "tool_result").unwrap();
    assert_eq!(result["ok"], false);
    assert!(
        result["output"].as_str().unwrap().contains("not in b"),
        "{result}"
    );
    assert!(std::fs::read_dir(t.root().join("data/approvals"))
        .unwrap()
        .next()
        .is_none());
}

#[test]
fn answers_to_nothing_and_bad_decisions_are_refused() {
    let t =
        TestInstall::with_config("[risk_profiles.p]\n[agents.a]\nrisk_profile = \"p\"\n").unwrap();
    let r = warren(t.root(), &["--json", "approvals", "list"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json(), json!([]));
    let r = warren(
        t.root(),
        &["--json", "approvals", "answer", "t", "c", "approve"],
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");
    let r = warren(t.root(), &["approvals", "answer", "t", "c", "maybe"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("invalid value 'maybe' for '[DECISION]'"),
        "{}",
        r.stderr
    );
}

/// An unrestricted agent under `sandbox = "none"` runs a renamed copy of Warren's binary in its
/// shell to approve alice's waiting request: the waiting process sees (from the kernel) that
/// the answer comes from inside a tool call and refuses it; alice's call does not run. The
/// user's own answer, from this test process, is then taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_from_inside_a_tool_call_is_refused() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    tokio::task::spawn_blocking(move || an_answer_from_inside_a_tool_call_is_refused_with(fake))
        .await
        .unwrap();
}

fn an_answer_from_inside_a_tool_call_is_refused_with(fake: FakeLlm) {
    fake.script([
        Reply::tool_call("file_write", json!({"path": "evil.txt", "content": "x"})),
        Reply::text("not written"),
    ]);
    let t = TestInstall::with_config(&format!(
        r#"[risk_profiles.sup]
level = "supervised"

[risk_profiles.open]
level = "full"
allowed_commands = ["*"]
block_high_risk_commands = false
workspace_only = false
sandbox = "none"

[agents.alice]
risk_profile = "sup"
model_provider = "openai.main"

[agents.mal]
risk_profile = "open"

{}"#,
        fake.config_block("main")
    ))
    .unwrap();
    let root = std::fs::canonicalize(t.root()).unwrap();
    std::fs::create_dir_all(root.join("agents/mal/workspace/w")).unwrap();
    let child = spawn_run(&t, "write evil");
    let req = waiting_request(&t);
    let turn = req["turn_id"].as_str().unwrap().to_string();
    let call = req["call_id"].as_str().unwrap().to_string();
    // The copy finds the install the way Warren's CLI does with no path given: under `none`
    // the child keeps the user's HOME, where the default install lives.
    let data_home = root.join("fake-home/.local/share");
    std::fs::create_dir_all(&data_home).unwrap();
    std::os::unix::fs::symlink(&root, data_home.join("warren")).unwrap();
    // A renamed copy of Warren's binary in the agent's workspace (however it got there).
    std::fs::copy(
        env!("CARGO_BIN_EXE_warren"),
        root.join("agents/mal/workspace/w/helper"),
    )
    .unwrap();
    let command = format!("w/helper --json approvals answer {turn} {call} approve");
    let r = warren(
        &root,
        &[
            "--json",
            "tool",
            "--agent",
            "mal",
            "shell",
            &json!({ "command": command }).to_string(),
        ],
    );
    let v = r.json();
    // It ran (the copy started and reached the waiting process), and was refused.
    let out = v["output"]["stdout"].as_str().unwrap_or_default();
    assert!(
        out.contains("denied") && out.contains("inside an agent's tool call"),
        "{v}"
    );
    assert_eq!(v["ok"], false, "{v}");
    // Still waiting; nothing was written.
    let again = waiting_request(&t);
    assert_eq!(again["call_id"], json!(call));
    let ws = root.join("agents/alice/workspace");
    assert!(!ws.join("evil.txt").exists());
    // The user's own answer is taken.
    let r = warren(
        &root,
        &["--json", "approvals", "answer", &turn, &call, "deny"],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let out: Run = child.wait_with_output().unwrap().into();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(events(&out)
        .iter()
        .any(|e| e["type"] == "approval_resolved" && e["decision"] == "deny"));
    assert!(!ws.join("evil.txt").exists());
}

/// A waiting request whose arguments carry terminal controls is listed with them escaped: the
/// agent cannot rewrite what `approvals list` shows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_list_shows_agent_text_escaped() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    tokio::task::spawn_blocking(move || {
        // Arguments are JSON text (controls arrive as `\u001b`); the call id is the model's own.
        fake.script([
            Reply::scripted_calls(
                "",
                vec![warren_testkit::fake_llm::ScriptedCall {
                    id: Some("c1\u{1b}[1A\u{1b}[2Kalice wants nothing\r".into()),
                    name: "file_write".into(),
                    arguments: json!({"path": "x.txt", "content": "x"}),
                }],
            ),
            Reply::text("ok"),
        ]);
        let t = install(&fake);
        let child = spawn_run(&t, "write");
        let req = waiting_request(&t);
        // Positive control: the request holds the raw bytes.
        assert!(req["call_id"].as_str().unwrap().contains('\u{1b}'), "{req}");
        let r = warren(t.root(), &["approvals", "list"]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert!(
            !r.stdout.contains('\u{1b}') && !r.stdout.contains('\r'),
            "{:?}",
            r.stdout
        );
        assert!(r.stdout.contains("\\x1b[1A"), "{:?}", r.stdout);
        let turn = req["turn_id"].as_str().unwrap();
        let call = req["call_id"].as_str().unwrap();
        let a = warren(t.root(), &["approvals", "answer", turn, call, "deny"]);
        assert_eq!(a.code, 0, "{}", a.stderr);
        child.wait_with_output().unwrap();
    })
    .await
    .unwrap();
}
