//! Authority that must not leak between agents or processes, through the `warren` binary: the
//! hourly action budget is shared by every process and survives a rename, a failing command
//! still spends its unit, and config validation names nested workspaces.

use crate::common::warren;
use warren_testkit::TestInstall;

const CANARY: &str = "erin-private-canary-5T8";

fn budget_config() -> String {
    r#"schema_version = 1

[risk_profiles.full]
level = "full"
allowed_commands = ["*"]
sandbox = "none"

[runtime_profiles.tight]
max_actions_per_hour = 2

[agents.alice]
risk_profile = "full"
runtime_profile = "tight"

[agents.erin]
risk_profile = "full"
"#
    .to_string()
}

fn tool(t: &TestInstall, agent: &str, name: &str, args: &str) -> serde_json::Value {
    let r = warren(t.root(), &["--json", "tool", "--agent", agent, name, args]);
    assert!(!r.stdout.contains(CANARY) && !r.stderr.contains(CANARY));
    let v = r.json();
    assert_eq!(r.code == 0, v["ok"] == true, "{v}");
    v
}

#[test]
fn the_action_budget_is_shared_by_processes_survives_a_rename_and_charges_failures() {
    let t = TestInstall::with_config(&budget_config()).unwrap();
    let erin = t.root().join("agents/erin/workspace");
    std::fs::create_dir_all(&erin).unwrap();
    std::fs::write(erin.join("notes.txt"), CANARY).unwrap();
    std::fs::create_dir_all(t.root().join("agents/alice/workspace")).unwrap();

    // A refusal before anything ran gives its unit back: erin's workspace is not alice's.
    let denied = tool(
        &t,
        "alice",
        "file_write",
        &format!(
            r#"{{"path": "{}", "content": "x"}}"#,
            erin.join("notes.txt").display()
        ),
    );
    assert_eq!(denied["ok"], false, "{denied}");
    assert_ne!(denied["error"]["code"], "budget_exhausted", "{denied}");
    assert_eq!(
        std::fs::read_to_string(erin.join("notes.txt")).unwrap(),
        CANARY
    );

    // A command that ran and failed spends one unit (first process).
    let failed = tool(&t, "alice", "shell", r#"{"command": "true; false"}"#);
    assert_eq!(failed["ok"], false, "{failed}");
    assert_eq!(failed["error"]["code"], "command_failed", "{failed}");

    // A second process spends the second unit.
    let wrote = tool(
        &t,
        "alice",
        "file_write",
        r#"{"path": "one.txt", "content": "1"}"#,
    );
    assert_eq!(wrote["ok"], true, "{wrote}");

    // Renamed, alice (now ann) has the same window: the third action is refused and nothing
    // is written.
    let r = warren(t.root(), &["--json", "agents", "rename", "alice", "ann"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let refused = tool(
        &t,
        "ann",
        "file_write",
        r#"{"path": "two.txt", "content": "2"}"#,
    );
    assert_eq!(refused["ok"], false, "{refused}");
    assert_eq!(refused["error"]["code"], "budget_exhausted", "{refused}");
    let ws = t.root().join("agents/ann/workspace");
    assert!(
        ws.join("one.txt").exists(),
        "the workspace moved with the rename"
    );
    assert!(!ws.join("two.txt").exists());
    // Reading has no side effect and is never counted.
    let read = tool(&t, "ann", "file_read", r#"{"path": "one.txt"}"#);
    assert_eq!(read["ok"], true, "{read}");
}

#[test]
fn nested_workspaces_are_a_warning_with_the_dotted_path() {
    let t = TestInstall::empty().unwrap();
    let inner = t.root().join("agents/alice/workspace/bob");
    t.write_config(&format!(
        r#"schema_version = 1

[risk_profiles.p]

[agents.alice]
risk_profile = "p"

[agents.bob]
risk_profile = "p"
[agents.bob.workspace]
path = "{}"
"#,
        inner.display()
    ))
    .unwrap();
    let r = warren(t.root(), &["config", "validate"]);
    assert_eq!(r.code, 0, "a warning, not an error: {}", r.stderr);
    assert!(
        r.stderr
            .contains("warning: agents.bob.workspace.path: the workspace of `bob`"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("inside the workspace of `alice`"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_provider_naming_another_agents_secret_is_rejected_for_every_other_user() {
    let t = TestInstall::with_config(
        r#"schema_version = 1

[risk_profiles.p]

[providers.models.openai.alices]
model = "gpt"
secret = "agent:alice/OPENAI_KEY"

[providers.models.openai.shared]
model = "gpt"
secret = "OPENAI_KEY"
fallbacks = ["openai.alices"]

[agents.alice]
risk_profile = "p"
model_provider = "openai.alices"

[agents.bob]
risk_profile = "p"
model_provider = "openai.shared"
"#,
    )
    .unwrap();
    let r = warren(t.root(), &["config", "validate"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("providers.models.openai.alices.secret")
            && r.stderr.contains("agent `bob`"),
        "{}",
        r.stderr
    );
    // alice's own use is fine: one error, about bob's route only.
    assert!(r.stderr.contains("1 error"), "{}", r.stderr);
    // And bob cannot run at all: nothing reaches a provider with alice's key.
    let r = warren(t.root(), &["run", "--agent", "bob", "hi"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
}

#[test]
fn tool_calls_write_receipts_and_a_truncated_chain_fails_verification() {
    let t = TestInstall::with_config(
        &budget_config().replace("max_actions_per_hour = 2", "max_actions_per_hour = 20"),
    )
    .unwrap();
    let erin = t.root().join("agents/erin/workspace");
    std::fs::create_dir_all(&erin).unwrap();
    std::fs::write(erin.join("notes.txt"), CANARY).unwrap();
    std::fs::create_dir_all(t.root().join("agents/alice/workspace")).unwrap();
    for i in 0..2 {
        let v = tool(
            &t,
            "alice",
            "file_write",
            &format!(r#"{{"path": "n{i}.txt", "content": "{i}"}}"#),
        );
        assert_eq!(v["ok"], true, "{v}");
    }
    // A denied read of erin's file runs nothing: no receipt.
    let denied = tool(
        &t,
        "alice",
        "file_read",
        &format!(r#"{{"path": "{}"}}"#, erin.join("notes.txt").display()),
    );
    assert_eq!(denied["ok"], false, "{denied}");
    let v = warren(
        t.root(),
        &["--json", "receipts", "verify", "--agent", "alice"],
    )
    .json();
    assert_eq!(v["checked"], 2, "{v}");
    assert_eq!(v["ok"], true, "{v}");

    // Remove every receipt and the head record: the anchor outside the database notices.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let pool = warren_state::db::open_sessions_db(&t.layout().sessions_db())
            .await
            .unwrap();
        sqlx::query("DELETE FROM receipt_heads")
            .execute(&pool)
            .await
            .unwrap();
        sqlx::query("DELETE FROM receipts")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    });
    let r = warren(t.root(), &["receipts", "verify", "--agent", "alice"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("receipts were removed"), "{}", r.stderr);
    let v = warren(
        t.root(),
        &["--json", "receipts", "verify", "--agent", "alice"],
    )
    .json();
    assert_eq!(v["ok"], false, "{v}");
    assert!(!serde_json::to_string(&v).unwrap().contains(CANARY));
}
