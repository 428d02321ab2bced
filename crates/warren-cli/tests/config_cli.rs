//! `warren init`, `config validate`, `agents list|show|create`, exit codes, JSON output, logs.

use crate::common::{warren, warren_cmd};
use serde_json::json;
use std::fs;
use warren_testkit::TestInstall;

#[test]
fn version_and_usage_errors() {
    let t = TestInstall::empty().unwrap();
    let r = warren(t.root(), &["--version"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.starts_with("warren "), "{}", r.stdout);
    let r = warren(t.root(), &["agents", "frobnicate"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = warren(t.root(), &["init", "--preset", "reckless"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("invalid value 'reckless' for '--preset <PRESET>'"),
        "{}",
        r.stderr
    );
}

#[test]
fn init_writes_a_valid_commented_config_once() {
    let t = TestInstall::empty().unwrap();
    let r = warren(t.root(), &["init", "--preset", "yolo"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = t.read_config().unwrap();
    assert!(text.contains("risk_profile = \"yolo\""));
    assert!(text.contains("# Risk profiles"));
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        fs::metadata(t.config_path()).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert!(t.root().join("agents/assistant/workspace").is_dir());
    assert!(t.root().join("shared/skills").is_dir());

    let r = warren(t.root(), &["config", "validate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("ok (1 agents)"), "{}", r.stdout);

    let again = warren(t.root(), &["--json", "init"]);
    assert_eq!(again.code, 1);
    assert_eq!(again.json()["error"]["code"], "already_exists");
    assert_eq!(t.read_config().unwrap(), text, "init must not overwrite");
}

#[test]
fn missing_config_is_a_clear_failure() {
    let t = TestInstall::empty().unwrap();
    let r = warren(t.root(), &["agents", "list"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("warren init"), "{}", r.stderr);
    let r = warren(t.root(), &["--json", "agents", "list"]);
    assert_eq!(r.json()["error"]["code"], "not_found");
}

#[test]
fn ten_mistakes_give_ten_errors_and_exit_2() {
    let t = TestInstall::with_config(include_str!("../../warren-config/tests/ten_mistakes.toml"))
        .unwrap();
    let r = warren(t.root(), &["config", "validate"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let lines: Vec<&str> = r.stderr.lines().skip(1).collect();
    assert_eq!(lines.len(), 10, "{}", r.stderr);
    for path in [
        "agents.Bad_Alias",
        "agents.alice.risk_profile",
        "agents.alice.workspace.access.alice",
        "agents.alice.workspace.access.bob",
        "agents.bob.workspace.read_memory_from[0]",
        "agents.bob.workspace.read_memory_from[1]",
        "agents.bob.workspace.read_memory_from[3]",
        "agents.mark.workspace.read_memory_from[0]",
        "risk_profiles.p.colour",
        "risk_profiles.q.sandbox",
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with(&format!("{path} (line "))),
            "no error line for {path}:\n{}",
            r.stderr
        );
    }
    let j = warren(t.root(), &["--json", "config", "validate"]);
    assert_eq!(j.code, 2);
    let v = j.json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["errors"].as_array().unwrap().len(), 10);
    // Any other command refuses to work on an invalid config, with exit 2.
    let r = warren(t.root(), &["agents", "list"]);
    assert_eq!(r.code, 2);
}

const COMMENTED: &str = r#"# Hand-written config.
schema_version = 1

[risk_profiles.p]   # the only profile
level = "supervised"

[runtime_profiles.fast]
max_tool_iterations = 3

[agents.alice]
# research agent
risk_profile = "p"

[plugin_settings]   # unknown to Warren
colour = "blue"
# end
"#;

#[test]
fn agents_create_keeps_comments_and_validates() {
    let t = TestInstall::with_config(COMMENTED).unwrap();
    let r = warren(
        t.root(),
        &[
            "agents",
            "create",
            "bob",
            "--risk-profile",
            "p",
            "--runtime-profile",
            "fast",
            "--memory-backend",
            "markdown",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = t.read_config().unwrap();
    let block = "\n[agents.bob]\nrisk_profile = \"p\"\nruntime_profile = \"fast\"\n\n[agents.bob.memory]\nbackend = \"markdown\"\n";
    let at = text
        .find(block)
        .unwrap_or_else(|| panic!("block missing in:\n{text}"));
    assert_eq!(
        format!("{}{}", &text[..at], &text[at + block.len()..]),
        COMMENTED
    );
    assert!(t.root().join("agents/bob/workspace").is_dir());

    let list = warren(t.root(), &["--json", "agents", "list"]).json();
    let aliases: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["alias"].as_str().unwrap())
        .collect();
    assert_eq!(aliases, ["alice", "bob"]);
    assert_eq!(list[1]["memory_backend"], "markdown");

    // Bad alias: exit 2, file untouched.
    let before = t.read_config().unwrap();
    let r = warren(
        t.root(),
        &["agents", "create", "Bad-Name", "--risk-profile", "p"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("invalid agent alias `Bad-Name`"),
        "{}",
        r.stderr
    );
    // Dangling profile: exit 2, names the path, file untouched.
    let r = warren(
        t.root(),
        &["agents", "create", "carol", "--risk-profile", "nope"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("agents.carol.risk_profile"),
        "{}",
        r.stderr
    );
    // Taken alias: exit 1.
    let r = warren(
        t.root(),
        &["--json", "agents", "create", "alice", "--risk-profile", "p"],
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "already_exists");
    assert_eq!(t.read_config().unwrap(), before);
}

#[test]
fn agents_show_lists_grants_and_references() {
    let t = TestInstall::with_config(
        r#"
[risk_profiles.p]
[agents.a]
risk_profile = "p"
delegates = ["b"]
[agents.a.workspace.access]
b = "write"
[agents.b]
risk_profile = "p"
[agents.b.workspace]
read_memory_from = [{ agent = "a", categories = ["core"] }]
[agents.c]
risk_profile = "p"
[cron.nightly]
agent = "b"
schedule = "0 3 * * *"
prompt = "tidy up"
"#,
    )
    .unwrap();
    let v = warren(t.root(), &["--json", "agents", "show", "b"]).json();
    assert_eq!(v["summary"]["alias"], "b");
    assert_eq!(v["memory_grants"][0]["categories"][0], "core");
    let refs: Vec<(&str, &str, &serde_json::Value, bool, &str)> = v["referenced_by"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["holder"].as_str().unwrap(),
                r["kind"].as_str().unwrap(),
                &r["access"],
                r["blocks_delete"].as_bool().unwrap(),
                r["path"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        refs,
        [
            (
                "a",
                "delegate",
                &json!(null),
                false,
                "agents.a.delegates[0]"
            ),
            (
                "a",
                "workspace_access",
                &json!("write"),
                false,
                "agents.a.workspace.access.b"
            ),
            (
                "nightly",
                "cron_agent",
                &json!(null),
                true,
                "cron.nightly.agent"
            ),
        ]
    );
    // The text says who refers to the agent and how, never the config paths.
    let r = warren(t.root(), &["agents", "show", "b"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains(
            "referenced by:\n  a may delegate to it\n  a has write access to its workspace\n  cron job nightly runs as it (blocks deletion)\n"
        ),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("agents.a."), "{}", r.stdout);
    let r = warren(t.root(), &["agents", "show", "a"]);
    assert!(
        r.stdout.contains("referenced by:\n  b reads its memory\n"),
        "{}",
        r.stdout
    );
    let r = warren(t.root(), &["agents", "show", "c"]);
    assert!(
        r.stdout.contains("referenced by:  nothing\n"),
        "{}",
        r.stdout
    );
    let r = warren(t.root(), &["agents", "show", "zed"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("agent `zed` does not exist"));
}

#[test]
fn home_resolution_and_json_logs() {
    let t = TestInstall::empty().unwrap();
    // WARREN_HOME is honoured when --home is absent.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_warren"))
        .env_clear()
        .env("WARREN_HOME", t.root())
        .args(["init"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(t.config_path().exists());
    let r = warren(
        t.root(),
        &["agents", "create", "logged", "--risk-profile", "balanced"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let logs: Vec<_> = fs::read_dir(t.root().join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!logs.is_empty());
    let all: String = logs
        .iter()
        .map(|p| fs::read_to_string(p).unwrap())
        .collect();
    let line = all
        .lines()
        .find(|l| l.contains("agent created"))
        .unwrap_or_else(|| panic!("no log line in {all}"));
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["agent"], "logged");
    assert_eq!(v["level"], "INFO");
    let _ = warren_cmd(t.root());
}

/// `warren … | head`: a reader that leaves early ends the command quietly (exit 0, nothing on
/// stderr), where a panic on the closed pipe printed a stack trace.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut cfg = String::from("schema_version = 1\n");
    for i in 0..3000 {
        cfg.push_str(&format!("\n[risk_profiles.p{i}]\nlevel = \"supervised\"\n"));
    }
    let t = warren_testkit::TestInstall::with_config(&cfg).unwrap();
    for args in [
        &["profiles", "list"][..],
        &["--json", "profiles", "list"][..],
    ] {
        let mut child = crate::common::warren_cmd(t.root())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read a little (the output is far larger than a pipe holds), then hang up.
        let mut first = [0u8; 16];
        child.stdout.take().unwrap().read_exact(&mut first).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}
