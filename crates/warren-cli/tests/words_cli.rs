//! The CLI beside the window: misspelt names get a "did you mean", a failed `warren run` says
//! its failure once with the window's hint, nothing is coloured for a pipe, decisions are said
//! in words, `approvals answer --latest`, and `agents create` with the window's defaults.

use crate::common::{warren, warren_cmd, Run};
use serde_json::json;
use std::process::Stdio;
use std::time::{Duration, Instant};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

#[test]
fn misspelt_agents_keys_and_words_get_a_did_you_mean() {
    let t = TestInstall::with_config(
        "[risk_profiles.balanced]\n[agents.assistant]\nrisk_profile = \"balanced\"\n",
    )
    .unwrap();
    let r = warren(t.root(), &["run", "--agent", "asistant", "hi"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.stderr.trim(),
        "error: agent `asistant` does not exist (did you mean `assistant`?)"
    );
    for args in [
        &["agents", "show", "asistant"][..],
        &["agents", "rename", "asistant", "helper"],
        &["agents", "delete", "asistant", "--yes"],
        &["agents", "pause", "asistant"],
        &["policy", "show", "--agent", "asistant"],
        &["memory", "list", "--agent", "asistant"],
        &["memory", "recall", "--agent", "asistant", "notes"],
        &["cron", "list", "--agent", "asistant"],
        &["secrets", "rm", "token", "--agent", "asistant"],
        &[
            "tool",
            "--agent",
            "asistant",
            "file_read",
            r#"{"path": "a.txt"}"#,
        ],
    ] {
        let r = warren(t.root(), args);
        assert_eq!(r.code, 1, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains("(did you mean `assistant`?)"),
            "{args:?}: {}",
            r.stderr
        );
    }
    let r = warren(t.root(), &["approvals", "answer", "t", "c", "aprove"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("invalid value 'aprove' for '[DECISION]'")
            && r.stderr.contains("a similar value exists: 'approve'"),
        "{}",
        r.stderr
    );
    // With --latest the decision stands in the turn's place: checked by Warren, not clap.
    let r = warren(t.root(), &["approvals", "answer", "--latest", "aprove"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("unknown decision `aprove` (did you mean `approve`?)"),
        "{}",
        r.stderr
    );
    let r = warren(
        t.root(),
        &["agents", "create", "x", "--memory-backend", "sqlte"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("invalid value 'sqlte' for '--memory-backend <MEMORY_BACKEND>'")
            && r.stderr.contains("a similar value exists: 'sqlite'"),
        "{}",
        r.stderr
    );
    let r = warren(
        t.root(),
        &["agents", "set", "assistant", "risk_profle", "balanced"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("unknown setting `risk_profle` (did you mean `risk_profile`?)"),
        "{}",
        r.stderr
    );
    let r = warren(t.root(), &["profiles", "show", "rsk", "balanced"]);
    assert!(
        r.stderr.contains("invalid value 'rsk' for '<KIND>'")
            && r.stderr.contains("a similar value exists: 'risk'"),
        "{}",
        r.stderr
    );
    // A misspelt subcommand: clap's own suggestion.
    let r = warren(t.root(), &["agents", "shwo", "x"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("show"), "{}", r.stderr);

    // In the config: the key and the name, each at its line.
    std::fs::write(
        t.root().join("config.toml"),
        "[risk_profiles.balanced]\nworkspace_onl = true\n\n[agents.assistant]\nrisk_profile = \"balancd\"\n",
    )
    .unwrap();
    let r = warren(t.root(), &["config", "validate"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains("risk_profiles.balanced.workspace_onl (line 2, column 1): unknown key `workspace_onl`: did you mean `workspace_only`?"),
        "{all}"
    );
    assert!(
        all.contains("agents.assistant.risk_profile (line 5, column 1): risk profile `balancd` is not defined in [risk_profiles] (did you mean `balanced`?)"),
        "{all}"
    );
}

#[test]
fn a_failed_run_says_so_once_with_the_windows_hint_and_no_colour() {
    // Nothing listens on this port: connection refused.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let t = TestInstall::with_config(&format!(
        "[risk_profiles.p]\n[agents.a]\nrisk_profile = \"p\"\nmodel_provider = \"ollama.local\"\n\n\
         [providers.models.ollama.local]\nmodel = \"llama3.2\"\nuri = \"http://127.0.0.1:{port}\"\n"
    ))
    .unwrap();
    let r = warren(t.root(), &["run", "--agent", "a", "hi"]);
    assert_eq!(r.code, 1);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert_eq!(
        all.matches("cannot reach").count(),
        1,
        "the failure is said once:\n{all}"
    );
    assert!(all.contains("(is `ollama serve` running?)"), "{all}");
    assert!(
        r.stderr
            .starts_with("error: turn failed: provider ollama.local"),
        "{}",
        r.stderr
    );
    assert!(!all.contains('\u{1b}'), "colour codes on a pipe:\n{all:?}");
    // -v logs to stderr: plain text on a pipe too.
    let r = warren(t.root(), &["-vv", "run", "--agent", "a", "hi"]);
    assert!(
        r.stderr.contains("INFO") || r.stderr.contains("DEBUG"),
        "{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains('\u{1b}'),
        "colour codes on a pipe:\n{:?}",
        r.stderr
    );
}

#[test]
fn agents_create_uses_the_windows_defaults() {
    let t = TestInstall::with_config(
        "[risk_profiles.locked_down]\nlevel = \"readonly\"\n\n[risk_profiles.balanced]\n\n[agents.a]\nrisk_profile = \"locked_down\"\n",
    )
    .unwrap();
    let r = warren(t.root(), &["--json", "agents", "create", "writer"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["risk_profile"], "balanced");
    let text = std::fs::read_to_string(t.root().join("config.toml")).unwrap();
    assert!(
        text.contains("[agents.writer]\nrisk_profile = \"balanced\"\n"),
        "{text}"
    );
    // Without `balanced`, the install's first risk profile (as the window's form starts with).
    let t = TestInstall::with_config(
        "[risk_profiles.careful]\n[risk_profiles.zeta]\n[agents.a]\nrisk_profile = \"zeta\"\n",
    )
    .unwrap();
    let r = warren(t.root(), &["agents", "create", "writer"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("with risk profile `careful`"),
        "{}",
        r.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_answer_latest_answers_the_newest_request_in_words() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    tokio::task::spawn_blocking(move || latest_with(fake))
        .await
        .unwrap();
}

fn latest_with(fake: FakeLlm) {
    fake.script([
        Reply::tool_call("file_write", json!({"path": "a.txt", "content": "yes"})),
        Reply::text("done"),
    ]);
    let t = TestInstall::with_config(&format!(
        "[risk_profiles.sup]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"sup\"\nmodel_provider = \"openai.main\"\n\n{}",
        fake.config_block("main")
    ))
    .unwrap();
    let r = warren(t.root(), &["approvals", "answer", "--latest", "approve"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("no approval is waiting"), "{}", r.stderr);

    let child = warren_cmd(t.root())
        .args(["run", "--agent", "alice", "--wait-approval", "write a"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let r = warren(t.root(), &["--json", "approvals", "list"]);
        if r.json().as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "no request");
        std::thread::sleep(Duration::from_millis(100));
    }
    let r = warren(t.root(), &["approvals", "answer", "--latest", "approve"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout.trim(),
        "answered alice's file_write request: approve once"
    );
    let out: Run = child.wait_with_output().unwrap().into();
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("  approval: approve once"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("ApproveOnce"), "{}", out.stdout);
    assert_eq!(
        std::fs::read_to_string(t.root().join("agents/alice/workspace/a.txt")).unwrap(),
        "yes"
    );
}

#[test]
fn policy_explain_says_the_permission_in_words() {
    let t = TestInstall::with_config(
        "[risk_profiles.p]\n[agents.a]\nrisk_profile = \"p\"\n[agents.b]\nrisk_profile = \"p\"\n",
    )
    .unwrap();
    let r = warren(
        t.root(),
        &["policy", "explain", "--agent", "a", "b", "read"],
    );
    assert!(
        r.stdout
            .starts_with("a may not read the workspace of b: denied"),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let r = warren(
        t.root(),
        &["policy", "explain", "--agent", "a", "b", "raed"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("invalid value 'raed' for '<ASPECT>'")
            && r.stderr.contains("a similar value exists: 'read'"),
        "{}",
        r.stderr
    );
}

/// Every word taken from a fixed list is checked before anything runs: a wrong one exits 2
/// naming the flag or argument and every choice, and `--help` lists the choices.
#[test]
fn a_word_off_its_list_is_refused_naming_the_argument_and_the_choices() {
    let t = TestInstall::with_config(
        "[risk_profiles.balanced]\n[agents.assistant]\nrisk_profile = \"balanced\"\n",
    )
    .unwrap();
    let before = std::fs::read(t.config_path()).unwrap();
    // The command line, the wrong word, the argument clap names, its choices, the command.
    type Case<'a> = (&'a [&'a str], &'a str, &'a str, &'a str, &'a [&'a str]);
    let cases: [Case; 9] = [
        (
            &["approvals", "answer", "t", "c", "maybe"],
            "maybe",
            "[DECISION]",
            "approve, session, deny",
            &["approvals", "answer"],
        ),
        (
            &["profiles", "show", "fancy", "balanced"],
            "fancy",
            "<KIND>",
            "risk, runtime",
            &["profiles", "show"],
        ),
        (
            &["agents", "grant", "assistant", "bob", "admin"],
            "admin",
            "<ACCESS>",
            "read, write, read_write, none",
            &["agents", "grant"],
        ),
        (
            &["policy", "explain", "--agent", "assistant", "bob", "own"],
            "own",
            "<ASPECT>",
            "read, write, memory, delegate",
            &["policy", "explain"],
        ),
        (
            &["memory", "backends", "set", "--backend", "redis"],
            "redis",
            "--backend <BACKEND>",
            "sqlite, postgres, lucid, markdown, qdrant, none",
            &["memory", "backends", "set"],
        ),
        (
            &["agents", "create", "x", "--memory-backend", "redis"],
            "redis",
            "--memory-backend <MEMORY_BACKEND>",
            "sqlite, postgres, lucid, markdown, qdrant, none",
            &["agents", "create"],
        ),
        (
            &["logs", "--level", "loud"],
            "loud",
            "--level <LEVEL>",
            "error, warn, info, debug, trace",
            &["logs"],
        ),
        (
            &["import", "zeroclaw", "--collisions", "keep"],
            "keep",
            "--collisions <COLLISIONS>",
            "rename, skip, replace",
            &["import", "zeroclaw"],
        ),
        (
            &["init", "--preset", "reckless"],
            "reckless",
            "--preset <PRESET>",
            "locked_down, balanced, yolo",
            &["init"],
        ),
    ];
    for (args, wrong, name, choices, command) in cases {
        let r = warren(t.root(), args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("invalid value '{wrong}' for '{name}'")),
            "{args:?}: {}",
            r.stderr
        );
        assert!(
            r.stderr.contains(&format!("[possible values: {choices}]")),
            "{args:?}: {}",
            r.stderr
        );
        let help = warren(t.root(), &[command, &["--help"]].concat());
        assert_eq!(help.code, 0, "{command:?}: {}", help.stderr);
        for choice in choices.split(", ") {
            assert!(
                help.stdout.contains(&format!("- {choice}")),
                "{command:?} --help should list {choice}: {}",
                help.stdout
            );
        }
    }
    assert_eq!(std::fs::read(t.config_path()).unwrap(), before);
}

#[test]
fn usage_errors_under_json_are_json_documents() {
    let t = TestInstall::with_config("[risk_profiles.balanced]\n").unwrap();
    // A word outside its list: the JSON error names the value, the argument and the choices.
    let r = warren(
        t.root(),
        &["--json", "profiles", "show", "risky", "balanced"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["error"]["code"], "invalid_argument");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("'risky'"), "{message}");
    assert!(message.contains("<KIND>"), "{message}");
    let details: Vec<&str> = v["error"]["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(
        details
            .iter()
            .any(|d| d.contains("[possible values: risk, runtime]")),
        "{details:?}"
    );
    // A missing argument, with `--json` after the subcommand (it is global).
    let r = warren(t.root(), &["profiles", "show", "--json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.json()["error"]["code"], "invalid_argument");
    // An unknown subcommand.
    let r = warren(t.root(), &["--json", "agentz"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let v = r.json();
    assert!(v["error"]["message"].as_str().unwrap().contains("'agentz'"));

    // Without `--json` (or with it only as an operand after `--`), clap's text and nothing on
    // stdout, as before.
    let r = warren(t.root(), &["profiles", "show", "risky", "balanced"]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("[possible values: risk, runtime]"),
        "{}",
        r.stderr
    );
    let r = warren(t.root(), &["profiles", "show", "risky", "--", "--json"]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    // Help is still help, on stdout, with success.
    let r = warren(t.root(), &["--json", "profiles", "--help"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("Usage:"), "{}", r.stdout);
}
