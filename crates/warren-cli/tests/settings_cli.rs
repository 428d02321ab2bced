//! `warren agents set | grant | memory-grant`, `warren profiles ...`, `warren usage`, `warren
//! logs` and `warren memory store -` as a black box: files on disk, policy answers, exit codes
//! and JSON shapes.

use crate::common::{warren, warren_cmd, Run};
use std::path::{Path, PathBuf};
use warren_testkit::TestInstall;

const CONFIG: &str = r#"schema_version = 1

# the team's profiles
[risk_profiles.full]
level = "full"
allowed_commands = ["*"]

[agents.alice]
risk_profile = "full" # alice keeps this comment
[agents.alice.workspace.access]
bob = "read"

[agents.bob]
risk_profile = "full"

[agents.carol]
risk_profile = "full"

[agents.mark]
risk_profile = "full"
[agents.mark.memory]
backend = "markdown"
"#;

fn install() -> TestInstall {
    let t = TestInstall::with_config(CONFIG).unwrap();
    for a in ["alice", "bob", "carol", "mark"] {
        std::fs::create_dir_all(ws(t.root(), a)).unwrap();
    }
    t
}

fn ws(root: &Path, alias: &str) -> PathBuf {
    std::fs::canonicalize(root)
        .unwrap()
        .join("agents")
        .join(alias)
        .join("workspace")
}

fn check(t: &TestInstall, access: &str, path: &Path) -> serde_json::Value {
    let r = warren(
        t.root(),
        &[
            "--json",
            "policy",
            "check",
            "--agent",
            "alice",
            access,
            path.to_str().unwrap(),
        ],
    );
    r.json()
}

#[test]
fn a_grant_changed_from_read_to_write_is_saved_with_comments_and_the_policy_follows() {
    let t = install();
    let target = ws(t.root(), "bob").join("notes.md");
    assert_eq!(check(&t, "--write", &target)["allowed"], false);

    let r = warren(
        t.root(),
        &["--json", "agents", "grant", "alice", "bob", "write"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let grants = &r.json()["workspace_grants"];
    assert_eq!(grants[0]["agent"], "bob");
    assert_eq!(grants[0]["access"], "write");
    let text = t.read_config().unwrap();
    assert!(text.contains("bob = \"write\""), "{text}");
    assert!(text.contains("# alice keeps this comment"), "{text}");
    assert!(text.contains("# the team's profiles"), "{text}");

    let w = check(&t, "--write", &target);
    assert_eq!(w["allowed"], true, "{w}");
    let rd = check(&t, "--read", &target);
    assert_eq!(rd["allowed"], false, "{rd}");
    assert_eq!(rd["rule"], "write_only_grant", "{rd}");

    let r = warren(t.root(), &["agents", "grant", "alice", "bob", "none"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !t.read_config().unwrap().contains("bob = "),
        "grant removed"
    );
    assert_eq!(check(&t, "--write", &target)["allowed"], false);
}

#[test]
fn an_invalid_edit_names_the_field_and_leaves_the_file_byte_for_byte() {
    let t = install();
    let before = std::fs::read(t.config_path()).unwrap();
    let cases: [&[&str]; 5] = [
        &["agents", "set", "alice", "risk_profile", "nope"],
        &["agents", "grant", "alice", "zed", "read"],
        &["agents", "grant", "alice", "alice", "read"],
        &[
            "agents",
            "memory-grant",
            "alice",
            "mark",
            "--categories",
            "core",
        ],
        &["agents", "set", "alice", "delegates", "ghost"],
    ];
    let fields = [
        "agents.alice.risk_profile",
        "agents.alice.workspace.access.zed",
        "itself",
        "agents.alice.workspace.read_memory_from",
        "agents.alice.delegates",
    ];
    for (args, field) in cases.iter().zip(fields) {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let r = warren(t.root(), &a);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(all.contains(field), "{args:?} should name {field}: {all}");
        assert_eq!(std::fs::read(t.config_path()).unwrap(), before, "{args:?}");
    }
    let r = warren(t.root(), &["agents", "set", "alice", "colour", "red"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("unknown setting `colour`"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("risk_profile"), "{}", r.stderr);
    let r = warren(t.root(), &["agents", "grant", "alice", "bob", "admin"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("invalid value 'admin' for '<ACCESS>'"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(t.config_path()).unwrap(), before);
}

#[test]
fn a_dry_run_prints_the_diff_and_findings_and_writes_nothing() {
    let t = install();
    let before = std::fs::read(t.config_path()).unwrap();
    let r = warren(
        t.root(),
        &[
            "--json",
            "agents",
            "set",
            "alice",
            "enabled",
            "false",
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let p = r.json();
    let diff = p["diff"].as_array().unwrap();
    assert!(
        diff.iter()
            .any(|l| l["kind"] == "add" && l["text"] == "enabled = false"),
        "{p}"
    );
    assert_eq!(p["errors"], serde_json::json!([]));

    let r = warren(
        t.root(),
        &[
            "--json",
            "agents",
            "set",
            "alice",
            "runtime_profile",
            "ghost",
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let p = r.json();
    assert_eq!(
        p["errors"][0]["path"], "agents.alice.runtime_profile",
        "{p}"
    );
    // The shape docs/cli.md gives: the window's placement of a finding is not printed.
    let keys: Vec<&str> = p["errors"][0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["column", "line", "message", "path"], "{p}");
    assert_eq!(std::fs::read(t.config_path()).unwrap(), before);
}

#[test]
fn settings_lists_and_memory_grants_are_saved_and_shown() {
    let t = install();
    let r = warren(
        t.root(),
        &["agents", "set", "alice", "delegates", "bob,carol"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = warren(
        t.root(),
        &[
            "agents",
            "memory-grant",
            "alice",
            "bob",
            "--categories",
            "core,notes",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = warren(t.root(), &["agents", "memory-grant", "alice", "carol"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = warren(
        t.root(),
        &["agents", "set", "alice", "unrestricted_filesystem", "true"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let shown = warren(t.root(), &["--json", "agents", "show", "alice"]).json();
    assert_eq!(shown["delegates"], serde_json::json!(["bob", "carol"]));
    assert_eq!(shown["unrestricted_filesystem"], true);
    let grants = shown["memory_grants"].as_array().unwrap();
    assert_eq!(grants.len(), 2, "{shown}");
    assert_eq!(grants[0]["agent"], "bob");
    assert_eq!(
        grants[0]["categories"],
        serde_json::json!(["core", "notes"])
    );
    assert_eq!(grants[1]["agent"], "carol");
    assert!(grants[1]["categories"].is_null());

    let r = warren(
        t.root(),
        &["agents", "memory-grant", "alice", "bob", "--remove"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = warren(
        t.root(),
        &["agents", "set", "alice", "delegates", "--unset"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let shown = warren(t.root(), &["--json", "agents", "show", "alice"]).json();
    assert_eq!(shown["memory_grants"].as_array().unwrap().len(), 1);
    assert_eq!(shown["delegates"], serde_json::json!([]));
    assert!(t
        .read_config()
        .unwrap()
        .contains("# alice keeps this comment"));
}

#[test]
fn profiles_are_listed_shown_changed_created_and_removed() {
    let t = install();
    let list = warren(t.root(), &["--json", "profiles", "list"]).json();
    let full = list
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "full")
        .unwrap()
        .clone();
    assert_eq!(full["kind"], "risk");
    assert_eq!(full["used_by"].as_array().unwrap().len(), 4, "{full}");

    let r = warren(
        t.root(),
        &[
            "--json",
            "profiles",
            "set",
            "risk",
            "full",
            "allowed_roots",
            r#"["/srv/data"]"#,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.json()["risk"]["allowed_roots"],
        serde_json::json!(["/srv/data"])
    );
    assert!(t
        .read_config()
        .unwrap()
        .contains(r#"allowed_roots = ["/srv/data"]"#));

    let before = std::fs::read(t.config_path()).unwrap();
    let r = warren(
        t.root(),
        &["profiles", "set", "risk", "full", "level", "bossy"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("risk_profiles.full.level"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(t.config_path()).unwrap(), before);

    let r = warren(
        t.root(),
        &["--json", "profiles", "create", "runtime", "quick"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["runtime"]["max_tool_iterations"], 10);
    let r = warren(
        t.root(),
        &["--json", "profiles", "show", "runtime", "quick"],
    );
    assert_eq!(r.json()["name"], "quick");
    let r = warren(t.root(), &["profiles", "rm", "runtime", "quick"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!t.read_config().unwrap().contains("runtime_profiles.quick"));
    // The removal is in the logs.
    let r = warren(t.root(), &["--json", "logs"]);
    let lines = r.json().to_string();
    assert!(
        lines.contains("profile deleted") && lines.contains("quick"),
        "{lines}"
    );

    let r = warren(t.root(), &["--json", "profiles", "rm", "risk", "full"]);
    assert_eq!(r.code, 1, "a profile in use stays");
    assert_eq!(r.json()["error"]["code"], "denied");
    assert!(r.stderr.contains("alice"), "{}", r.stderr);
    let r = warren(t.root(), &["profiles", "show", "fancy", "full"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("invalid value 'fancy' for '<KIND>'"),
        "{}",
        r.stderr
    );
}

#[test]
fn usage_and_logs_answer_in_json_and_refuse_bad_arguments() {
    let t = install();
    let r = warren(t.root(), &["--json", "usage", "--days", "3"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json(), serde_json::json!([]));
    let r = warren(t.root(), &["usage", "--days", "0"]);
    assert_eq!(r.code, 2, "{}", r.stderr);

    // A line about alice and one about bob, in the JSON log format Warren writes.
    let logs = t.root().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(
        logs.join("warren.2026-12-01.jsonl"),
        concat!(
            r#"{"timestamp":"2026-12-01T10:00:00Z","level":"INFO","message":"turn started","agent":"alice","target":"warren"}"#,
            "\n",
            r#"{"timestamp":"2026-12-01T10:00:01Z","level":"WARN","message":"slow provider","agent":"bob","target":"warren"}"#,
            "\n"
        ),
    )
    .unwrap();
    let r = warren(t.root(), &["--json", "logs", "--agent", "alice"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = r.json();
    assert_eq!(lines.as_array().unwrap().len(), 1, "{lines}");
    assert_eq!(lines[0]["message"], "turn started");
    let r = warren(t.root(), &["--json", "logs", "--level", "warn"]);
    assert_eq!(r.json()[0]["agent"], "bob");
    let r = warren(t.root(), &["logs", "--level", "loud"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("invalid value 'loud' for '--level <LEVEL>'"),
        "{}",
        r.stderr
    );
}

#[test]
fn memory_text_can_come_from_standard_input() {
    use std::io::Write;
    use std::process::Stdio;
    let t = install();
    let secret_text = "the vault code is under the third tile";
    let mut child = warren_cmd(t.root())
        .args([
            "--json", "memory", "store", "--agent", "alice", "--key", "vault", "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{secret_text}\n").as_bytes())
        .unwrap();
    let r: Run = child.wait_with_output().unwrap().into();
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = warren(
        t.root(),
        &[
            "--json",
            "memory",
            "recall",
            "--agent",
            "alice",
            "vault code",
        ],
    );
    assert_eq!(
        r.json()[0]["content"],
        secret_text,
        "stored without the newline"
    );

    let mut child = warren_cmd(t.root())
        .args(["memory", "store", "--agent", "alice", "--key", "empty"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdin.take());
    let r: Run = child.wait_with_output().unwrap().into();
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("empty"), "{}", r.stderr);
}

#[test]
fn the_permission_map_shows_the_grants_and_explains_a_denial() {
    let t = install();
    warren(
        t.root(),
        &[
            "agents",
            "memory-grant",
            "alice",
            "carol",
            "--categories",
            "core",
        ],
    );
    let m = warren(t.root(), &["--json", "policy", "map"]);
    assert_eq!(m.code, 0, "{}", m.stderr);
    let m = m.json();
    assert_eq!(
        m["agents"],
        serde_json::json!(["alice", "bob", "carol", "mark"])
    );
    let alice = &m["rows"][0];
    assert_eq!(alice["agent"], "alice");
    let cell = |peer: &str| {
        alice["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["peer"] == peer)
            .unwrap()
            .clone()
    };
    let bob = cell("bob");
    assert_eq!(
        (bob["read"].as_bool(), bob["write"].as_bool()),
        (Some(true), Some(false))
    );
    let carol = cell("carol");
    assert_eq!(carol["read"], false);
    assert_eq!(carol["memory"], true);
    assert_eq!(carol["memory_categories"], serde_json::json!(["core"]));
    assert_eq!(
        alice["cells"].as_array().unwrap().len(),
        3,
        "no cell for itself"
    );

    // Why can alice not write bob's workspace: the read-only grant.
    let x = warren(
        t.root(),
        &[
            "--json", "policy", "explain", "--agent", "alice", "bob", "write",
        ],
    );
    assert_eq!(x.code, 1, "{}", x.stderr);
    let x = x.json();
    assert_eq!(x["allowed"], false);
    assert_eq!(x["rule"], "read_only_grant");
    assert_eq!(
        x["grants"][0],
        "agents.alice.workspace.access.bob = \"read\""
    );
    assert!(
        x["enforced_by"]
            .as_str()
            .unwrap()
            .contains("race-free opener"),
        "{x}"
    );
    // The same answer as `policy check` on that folder.
    let c = check(&t, "--write", &ws(t.root(), "bob"));
    assert_eq!(c["rule"], x["rule"]);

    let x = warren(
        t.root(),
        &[
            "--json", "policy", "explain", "--agent", "alice", "mark", "memory",
        ],
    );
    assert_eq!(x.code, 1);
    assert_eq!(x.json()["rule"], "other_backend");
    let x = warren(
        t.root(),
        &[
            "--json", "policy", "explain", "--agent", "alice", "bob", "delegate",
        ],
    );
    assert_eq!(x.json()["rule"], "delegation_forbidden");
    let x = warren(
        t.root(),
        &["policy", "explain", "--agent", "alice", "bob", "fly"],
    );
    assert_eq!(x.code, 2);
}
