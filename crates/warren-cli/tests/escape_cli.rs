//! The attacks of the adversarial suite (crates/warren-tools/tests/escape) through
//! `warren tool` and `warren policy check`: the command line gives the same answers as the agent
//! loop, and nothing outside the grant is read or changed.

use crate::common::{warren, Run};
use serde_json::Value;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use warren_testkit::agents::{Access, Agents, AgentsInstall};
use warren_testkit::TestInstall;

const CANARY: &str = "CANARY-cli-5150";

/// `mallory` attacks; `bob` is granted read, `carol` write, `erin` nothing.
struct Lab {
    t: AgentsInstall,
}

impl Lab {
    fn new() -> Self {
        let t = Agents::new(&["mallory", "bob", "carol", "erin"])
            .profile(
                "attacker",
                r#"level = "full"
allowed_commands = ["*"]
sandbox = "none"
forbidden_paths = ["forbidden"]"#,
            )
            .grant("mallory", "bob", Access::Read)
            .grant("mallory", "carol", Access::Write)
            .install()
            .unwrap();
        let lab = Lab { t };
        std::fs::write(
            lab.ws("erin").join("secret.txt"),
            format!("{CANARY} erin\n"),
        )
        .unwrap();
        std::fs::write(
            lab.ws("carol").join("private.txt"),
            format!("{CANARY} carol\n"),
        )
        .unwrap();
        lab
    }

    fn ws(&self, alias: &str) -> PathBuf {
        self.t.workspace(alias).to_path_buf()
    }

    fn tool(&self, name: &str, args: Value) -> Value {
        let r: Run = warren(
            self.t.root(),
            &[
                "--json",
                "tool",
                "--agent",
                "mallory",
                name,
                &args.to_string(),
            ],
        );
        assert!(!r.stdout.contains(CANARY), "canary leaked: {}", r.stdout);
        assert!(!r.stderr.contains(CANARY), "canary leaked: {}", r.stderr);
        r.json()
    }
}

fn code(v: &Value) -> (&str, Option<&str>) {
    (
        v["error"]["code"].as_str().unwrap_or("none"),
        v["error"]["rule"].as_str(),
    )
}

#[test]
fn warren_tool_refuses_a_planted_directory_link_like_the_loop() {
    let lab = Lab::new();
    symlink(lab.ws("erin"), lab.ws("mallory").join("e")).unwrap();
    let v = lab.tool("file_read", serde_json::json!({"path": "e/secret.txt"}));
    assert_eq!(code(&v), ("denied", Some("outside_workspace")), "{v}");
    let v = lab.tool(
        "file_write",
        serde_json::json!({"path": "e/planted.txt", "content": "x"}),
    );
    assert_eq!(code(&v), ("denied", Some("outside_workspace")), "{v}");
    assert!(!lab.ws("erin").join("planted.txt").exists());
    // policy check decides on the link's target, as the tools do.
    let r = warren(
        lab.t.root(),
        &[
            "--json",
            "policy",
            "check",
            "--agent",
            "mallory",
            "--read",
            &lab.ws("mallory").join("e/secret.txt").display().to_string(),
        ],
    );
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(r.json()["rule"], "outside_workspace");
}

#[test]
fn warren_tool_answers_a_write_only_grant_blindly_like_the_loop() {
    let lab = Lab::new();
    let carol = lab.ws("carol");
    let existed = lab.tool(
        "file_write",
        serde_json::json!({"path": carol.join("private.txt"), "content": "dropped"}),
    );
    let fresh = lab.tool(
        "file_write",
        serde_json::json!({"path": carol.join("fresh.txt"), "content": "dropped"}),
    );
    assert_eq!(existed["ok"], true, "{existed}");
    assert!(existed["output"].get("created").is_none(), "{existed}");
    assert_eq!(
        existed["output"]["bytes_written"],
        fresh["output"]["bytes_written"]
    );
    std::fs::create_dir_all(carol.join("a_dir")).unwrap();
    let v = lab.tool(
        "file_write",
        serde_json::json!({"path": carol.join("a_dir"), "content": "x"}),
    );
    assert_eq!(code(&v), ("not_writable", None), "{v}");
}

#[test]
fn warren_tool_refuses_a_fifo_without_blocking() {
    let lab = Lab::new();
    let fifo = lab.ws("mallory").join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let v = lab.tool(
        "file_write",
        serde_json::json!({"path": "pipe", "content": "x"}),
    );
    assert_eq!(code(&v), ("not_a_file", None), "{v}");
    assert!(Path::new(&fifo).exists());
}

#[test]
fn warren_tool_refuses_an_opaque_command_without_a_sandbox_like_the_loop() {
    let lab = Lab::new();
    let before = std::fs::read_to_string(lab.ws("erin").join("secret.txt")).unwrap();
    // Paths built at run time: the analyzer cannot know them, and there is no sandbox.
    for command in [
        "X=secret.txt; cat $X",
        "cat $(printf secret.txt)",
        "cd && ls",
    ] {
        let v = lab.tool("shell", serde_json::json!({ "command": command }));
        assert_eq!(code(&v), ("sandbox_required", None), "{command}: {v}");
    }
    assert_eq!(
        std::fs::read_to_string(lab.ws("erin").join("secret.txt")).unwrap(),
        before
    );
}

#[test]
fn policy_check_refuses_moving_the_install_root_or_its_ancestors() {
    let lab = Lab::new();
    let root = std::fs::canonicalize(lab.t.root()).unwrap();
    for p in [root.clone(), root.parent().unwrap().to_path_buf()] {
        let r = warren(
            lab.t.root(),
            &[
                "--json",
                "policy",
                "check",
                "--agent",
                "mallory",
                "--write",
                &p.display().to_string(),
            ],
        );
        assert_eq!(r.code, 1, "{}", r.stdout);
        assert_eq!(r.json()["rule"], "protected_ancestor", "{}", p.display());
    }
}

const MARKDOWN: &str = r#"schema_version = 1

[memory]
backend = "markdown"

[risk_profiles.p]

[agents.mallory]
risk_profile = "p"
[agents.erin]
risk_profile = "p"
"#;

#[test]
fn markdown_memory_never_follows_a_link_the_agent_planted() {
    let t = TestInstall::with_config(MARKDOWN).unwrap();
    let root = std::fs::canonicalize(t.root()).unwrap();
    let ws = |a: &str| root.join("agents").join(a).join("workspace");
    let store = |agent: &str, key: &str, text: &str| {
        warren(
            t.root(),
            &[
                "--json", "memory", "store", "--agent", agent, "--key", key, text,
            ],
        )
    };
    assert_eq!(store("erin", "secret", &format!("{CANARY} erin")).code, 0);
    std::fs::create_dir_all(ws("mallory")).unwrap();
    symlink(
        ws("erin").join("MEMORY.md"),
        ws("mallory").join("MEMORY.md"),
    )
    .unwrap();
    let erin_before = std::fs::read(ws("erin").join("MEMORY.md")).unwrap();
    let r = warren(
        t.root(),
        &["--json", "memory", "recall", "--agent", "mallory", CANARY],
    );
    assert!(
        !r.stdout.contains(CANARY) && !r.stderr.contains(CANARY),
        "{}",
        r.stdout
    );
    let r = store("mallory", "mine", "overwrite through the link");
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(r.stdout.contains("symbolic link"), "{}", r.stdout);
    assert_eq!(
        std::fs::read(ws("erin").join("MEMORY.md")).unwrap(),
        erin_before
    );
}
