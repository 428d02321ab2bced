//! `warren policy show|check`, `warren tool`, `warren doctor` as a black box.

use crate::common::warren;
use std::path::Path;
use warren_testkit::TestInstall;

const CONFIG: &str = r#"schema_version = 1

[risk_profiles.full]
level = "full"
allowed_commands = ["*"]
sandbox = "landlock"

[risk_profiles.supervised]
auto_approve = ["file_read"]

[agents.alice]
risk_profile = "full"
[agents.alice.workspace.access]
bob = "read"
carol = "write"

[agents.sam]
risk_profile = "supervised"

[agents.bob]
risk_profile = "full"
[agents.carol]
risk_profile = "full"
[agents.erin]
risk_profile = "full"
"#;

fn install() -> TestInstall {
    let t = TestInstall::with_config(CONFIG).unwrap();
    for a in ["alice", "bob", "carol", "erin", "sam"] {
        std::fs::create_dir_all(ws(t.root(), a)).unwrap();
    }
    t
}

fn ws(root: &Path, alias: &str) -> std::path::PathBuf {
    std::fs::canonicalize(root)
        .unwrap()
        .join("agents")
        .join(alias)
        .join("workspace")
}

#[test]
fn policy_check_prints_the_rule_and_exits_by_decision() {
    let t = install();
    let root = t.root();
    let bob = ws(root, "bob").join("notes.md").display().to_string();
    let r = warren(
        root,
        &[
            "--json", "policy", "check", "--agent", "alice", "--write", &bob,
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    assert_eq!(
        v,
        serde_json::json!({"allowed": false, "access": "write", "path": bob, "rule": "read_only_grant"})
    );

    let r = warren(
        root,
        &[
            "--json", "policy", "check", "--agent", "alice", "--read", &bob,
        ],
    );
    assert_eq!(r.code, 0);
    assert_eq!(r.json()["rule"], "read_only_grant");

    // `../bob/notes.md` from alice's workspace is not bob's workspace: denied, and the answer
    // names the path in bob's workspace that alice may read. No hint where that is denied too.
    let r = warren(
        root,
        &[
            "--json",
            "policy",
            "check",
            "--agent",
            "alice",
            "--read",
            "../bob/notes.md",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.json()["meant"], bob.as_str(), "{}", r.stdout);
    let r = warren(
        root,
        &[
            "policy",
            "check",
            "--agent",
            "alice",
            "--read",
            "../bob/notes.md",
        ],
    );
    assert!(
        r.stdout.contains(&format!("the sibling's file is {bob}")),
        "{}",
        r.stdout
    );
    let r = warren(
        root,
        &[
            "--json",
            "policy",
            "check",
            "--agent",
            "alice",
            "--write",
            "../bob/notes.md",
        ],
    );
    assert_eq!(r.code, 1);
    assert!(r.json().get("meant").is_none(), "{}", r.stdout);
    let r = warren(
        root,
        &[
            "--json",
            "policy",
            "check",
            "--agent",
            "alice",
            "--read",
            "../../bob/workspace/notes.md",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);

    let r = warren(
        root,
        &["policy", "check", "--agent", "alice", "--read", "notes.txt"],
    );
    assert_eq!(r.code, 0);
    let expect = ws(root, "alice").join("notes.txt");
    assert_eq!(
        r.stdout.trim(),
        format!("allowed read {} (rule workspace)", expect.display())
    );

    let cfg = std::fs::canonicalize(root)
        .unwrap()
        .join("config.toml")
        .display()
        .to_string();
    let r = warren(
        root,
        &[
            "--json", "policy", "check", "--agent", "alice", "--write", &cfg,
        ],
    );
    assert_eq!(
        (r.code, r.json()["rule"].clone()),
        (1, "runtime_state".into())
    );
    let r = warren(
        root,
        &[
            "--json",
            "policy",
            "check",
            "--agent",
            "alice",
            "--read",
            "../../../../../../etc/passwd",
        ],
    );
    assert_eq!(r.json()["path"], "/etc/passwd");
    assert_eq!(r.json()["rule"], "outside_workspace");
    let r = warren(
        root,
        &[
            "--json",
            "policy",
            "check",
            "--agent",
            "alice",
            "--read",
            "/dev/urandom",
        ],
    );
    assert_eq!((r.code, r.json()["rule"].clone()), (0, "device".into()));

    // Usage errors exit 2; an unknown agent is named.
    assert_eq!(
        warren(root, &["policy", "check", "--agent", "alice", "x"]).code,
        2
    );
    assert_eq!(
        warren(
            root,
            &["policy", "check", "--agent", "alice", "--read", "--write", "x"]
        )
        .code,
        2
    );
    let r = warren(
        root,
        &["--json", "policy", "check", "--agent", "zed", "--read", "x"],
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");
    assert!(r.stderr.contains("`zed`"), "{}", r.stderr);
}

#[test]
fn policy_show_lists_tiers_and_sandbox() {
    let t = install();
    let r = warren(t.root(), &["--json", "policy", "show", "--agent", "alice"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["workspace_only"], true);
    let tiers: Vec<(String, String)> = v["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["source"].as_str().unwrap().to_string(),
                r["tier"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for want in [
        ("workspace", "read_write"),
        ("sibling", "read_only"),
        ("sibling", "write_only"),
        ("shared_skills", "read_only"),
    ] {
        assert!(
            tiers.contains(&(want.0.to_string(), want.1.to_string())),
            "{want:?} in {tiers:?}"
        );
    }
    assert_eq!(v["sandbox"]["configured"], "landlock");
    assert_eq!(v["sandbox"]["effective"], "landlock");
    let r = warren(t.root(), &["policy", "show", "--agent", "alice"]);
    assert!(
        r.stdout.contains("sandbox:         landlock -> landlock"),
        "{}",
        r.stdout
    );
}

#[test]
fn tool_runs_through_the_gates() {
    let t = install();
    let root = t.root();
    let alice = ws(root, "alice");
    std::fs::write(alice.join("hello.txt"), "hi there").unwrap();
    std::fs::write(ws(root, "erin").join("secret.txt"), "erin's").unwrap();

    let r = warren(
        root,
        &[
            "--json",
            "tool",
            "--agent",
            "alice",
            "file_read",
            r#"{"path": "hello.txt"}"#,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["output"]["content"], "hi there");
    assert!(v.get("error").is_none());

    // Devices through file_read and shell.
    let r = warren(
        root,
        &[
            "--json",
            "tool",
            "--agent",
            "alice",
            "file_read",
            r#"{"path": "/dev/zero", "max_bytes": 4}"#,
        ],
    );
    assert_eq!(r.json()["output"]["bytes"], 4);
    let r = warren(
        root,
        &[
            "--json",
            "tool",
            "--agent",
            "alice",
            "shell",
            r#"{"command": "head -c 8 /dev/urandom | wc -c 2>/dev/null"}"#,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["output"]["stdout"], "8\n");

    // Denied: exit 1, the rule named, nothing done.
    let r = warren(
        root,
        &[
            "--json",
            "tool",
            "--agent",
            "alice",
            "file_write",
            r#"{"path": "../../erin/workspace/x.txt", "content": "x"}"#,
        ],
    );
    assert_eq!(r.code, 1);
    let v = r.json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], "denied");
    assert_eq!(v["error"]["rule"], "outside_workspace");
    assert!(!ws(root, "erin").join("x.txt").exists());

    // The sandbox stops what the analyzer cannot see.
    let hidden = ws(root, "erin")
        .join("secret.txt")
        .display()
        .to_string()
        .replace('/', "\\057");
    let cmd = serde_json::json!({"command": format!("cat \"$(printf '{hidden}')\"")}).to_string();
    let r = warren(root, &["--json", "tool", "--agent", "alice", "shell", &cmd]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(r.json()["error"]["code"], "command_failed");
    assert!(!r.stdout.contains("erin's"));

    // Supervised: a write asks; without --approve no one is asked and nothing is written.
    let r = warren(
        root,
        &[
            "--json",
            "tool",
            "--agent",
            "sam",
            "file_write",
            r#"{"path": "w.txt", "content": "x"}"#,
        ],
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "no_approver");
    assert!(!ws(root, "sam").join("w.txt").exists());
    let r = warren(
        root,
        &[
            "--json",
            "tool",
            "--agent",
            "sam",
            "file_write",
            r#"{"path": "w.txt", "content": "x"}"#,
            "--approve",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(
        std::fs::read_to_string(ws(root, "sam").join("w.txt")).unwrap(),
        "x"
    );

    // Bad arguments: clear errors, nothing written.
    let r = warren(
        root,
        &[
            "--json",
            "tool",
            "--agent",
            "alice",
            "file_write",
            r#"{"path": "y.txt"}"#,
        ],
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "invalid_argument");
    assert!(r.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`content`"));
    let r = warren(
        root,
        &["tool", "--agent", "alice", "file_write", "{not json"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("not valid JSON"), "{}", r.stderr);
    assert!(!alice.join("y.txt").exists());
    let r = warren(
        root,
        &["--json", "tool", "--agent", "alice", "frobnicate", "{}"],
    );
    assert_eq!(r.json()["error"]["code"], "unknown_tool");
}

#[test]
fn doctor_reports_each_agents_sandbox() {
    let t = install();
    let r = warren(t.root(), &["--json", "doctor"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert!(
        v["landlock_abi"].as_i64().unwrap() >= 1,
        "this machine has Landlock"
    );
    let agents = v["agents"].as_array().unwrap();
    assert_eq!(agents.len(), 5);
    let alice = agents.iter().find(|a| a["agent"] == "alice").unwrap();
    assert_eq!(alice["sandbox"]["effective"], "landlock");
    // Each layer in force, and what Landlock alone cannot enforce.
    let layers = alice["sandbox"]["layers"].to_string();
    assert!(
        layers.contains("landlock ABI") && layers.contains("seccomp"),
        "{layers}"
    );
    let notes = alice["sandbox"]["notes"].to_string();
    assert!(
        notes.contains("Unix socket") && notes.contains("chmod"),
        "{notes}"
    );
    let sam = agents.iter().find(|a| a["agent"] == "sam").unwrap();
    assert_eq!(sam["sandbox"]["configured"], "auto");
    // `auto` picks bubblewrap where it can start a sandbox (CI installs it).
    assert_eq!(sam["sandbox"]["effective"], "bubblewrap", "{sam}");
    assert!(
        sam["sandbox"]["layers"].to_string().contains("namespaces"),
        "{sam}"
    );
    let r = warren(t.root(), &["doctor"]);
    assert!(r.stdout.contains("landlock:    ABI"), "{}", r.stdout);
    assert!(r.stdout.contains("      layer: seccomp"), "{}", r.stdout);
    assert!(r.stdout.contains("      limit: "), "{}", r.stdout);
}

/// Warren's control surface is never reachable from an agent's tool call: `warren` by name is
/// refused under any allowlist, and Warren's binary started from a sandboxed shell of an
/// unrestricted agent with `allowed_commands = ["*"]` cannot read the config, list approvals
/// or create an agent. The same commands outside any tool call work (the positive control).
#[test]
fn an_agent_cannot_drive_warren_from_its_shell() {
    let config = r#"schema_version = 1

[risk_profiles.ll]
level = "full"
allowed_commands = ["*"]
block_high_risk_commands = false
workspace_only = false
sandbox = "landlock"

[risk_profiles.bw]
level = "full"
allowed_commands = ["*"]
block_high_risk_commands = false
workspace_only = false
sandbox = "bubblewrap"

[agents.mal_ll]
risk_profile = "ll"
[agents.mal_bw]
risk_profile = "bw"
[agents.bob]
risk_profile = "ll"
"#;
    let t = TestInstall::with_config(config).unwrap();
    let root = std::fs::canonicalize(t.root()).unwrap();
    // The inbox folder exists, as it does once a turn has waited for an answer.
    std::fs::create_dir_all(root.join("data/approvals")).unwrap();
    let bin = env!("CARGO_BIN_EXE_warren");
    let lines = [
        format!("{bin} --home {} --json config validate", root.display()),
        format!("{bin} --home {} --json approvals list", root.display()),
        format!(
            "{bin} --home {} --json agents create --risk-profile ll intruder",
            root.display()
        ),
    ];
    // Positive control: outside any tool call the first two work.
    for line in &lines[..2] {
        let o = std::process::Command::new("sh")
            .args(["-c", line])
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "control `{line}`: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let before = std::fs::read(root.join("config.toml")).unwrap();
    for agent in ["mal_ll", "mal_bw"] {
        let ws = ws(&root, agent);
        std::fs::create_dir_all(ws.join("w")).unwrap();
        // By name: refused before anything runs.
        let r = warren(
            &root,
            &[
                "--json",
                "tool",
                "--agent",
                agent,
                "shell",
                r#"{"command": "warren approvals list"}"#,
            ],
        );
        assert_eq!(
            r.json()["error"]["code"],
            "command_not_allowed",
            "{}",
            r.stdout
        );
        // Through a script the analyzer cannot see into: the sandbox keeps the install closed.
        for line in &lines {
            std::fs::write(ws.join("w/a.sh"), line).unwrap();
            let r = warren(
                &root,
                &[
                    "--json",
                    "tool",
                    "--agent",
                    agent,
                    "shell",
                    r#"{"command": "sh w/a.sh"}"#,
                ],
            );
            let v = r.json();
            assert_eq!(v["ok"], false, "[{agent}] `{line}`: {v}");
            // It ran, and the install's state could not be opened.
            let said = v["output"]["stderr"]
                .as_str()
                .unwrap_or_default()
                .to_string()
                + v["output"]["stdout"].as_str().unwrap_or_default();
            let closed = ["config.toml", "config.lock", "approvals"]
                .iter()
                .any(|f| said.contains(f));
            let refused = ["Permission denied", "Read-only file system"]
                .iter()
                .any(|e| said.contains(e));
            assert!(closed && refused, "[{agent}] `{line}`: {v}");
            assert!(
                !v.to_string().contains("mal_bw"),
                "[{agent}] config leaked: {v}"
            );
        }
    }
    assert_eq!(std::fs::read(root.join("config.toml")).unwrap(), before);
    assert!(!root.join("agents/intruder").exists());
    // And the create itself works outside any tool call (the positive control of the last line).
    let o = std::process::Command::new("sh")
        .args(["-c", &lines[2]])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(root.join("config.toml"))
        .unwrap()
        .contains("[agents.intruder]"));
}

#[test]
fn reading_a_policy_makes_nothing_on_disk_and_acting_makes_the_workspace() {
    let t = TestInstall::with_config(CONFIG).unwrap();
    let ws = t.root().join("agents/alice/workspace");
    let skills = t.root().join("shared/skills");
    for p in [&ws, &skills] {
        if p.exists() {
            std::fs::remove_dir_all(p).unwrap();
        }
    }
    for args in [
        &["--json", "policy", "show", "--agent", "alice"][..],
        &[
            "--json", "policy", "check", "--agent", "alice", "--write", "notes.md",
        ][..],
        &["--json", "doctor"][..],
    ] {
        let r = warren(t.root(), args);
        assert_eq!(r.code, 0, "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(!ws.exists(), "{args:?} made {}", ws.display());
        assert!(!skills.exists(), "{args:?} made {}", skills.display());
    }
    // A tool call acts for the agent: the workspace is made first, and the call works in it.
    let r = warren(
        t.root(),
        &[
            "--json",
            "tool",
            "--agent",
            "alice",
            "file_write",
            r#"{"path": "notes.md", "content": "hi"}"#,
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(std::fs::read_to_string(ws.join("notes.md")).unwrap(), "hi");
    assert!(skills.is_dir());
}
