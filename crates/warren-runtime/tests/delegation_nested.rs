//! Delegation refusals through the real turn loop (rules §5): a SubAgent whose own root contains a
//! sibling workspace the parent may only read is refused, so it never writes there; and a
//! SubAgent of an agent in an unfinished lifecycle operation never runs.

use serde_json::json;
use warren_runtime::turn::TurnStatus;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::turn::{TurnHarness, TurnRun};
use warren_testkit::TestInstall;
use warren_types::{EventKind, ProviderFamily};

const BOB: &str = "canary-bob-nested-2W6";
const ERIN: &str = "canary-erin-ungranted-9P3";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_whose_root_contains_a_read_only_sibling_is_refused() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = TestInstall::empty().unwrap();
    let dave_ws = t.root().join("agents/dave/workspace");
    let bob_ws = dave_ws.join("bob");
    let erin_ws = t.root().join("agents/erin/workspace");
    t.write_config(&format!(
        r#"
[risk_profiles.lead]
level = "full"
allowed_commands = ["*"]
delegation = "allow"

[agents.alice]
risk_profile = "lead"
model_provider = "openai.main"
delegates = ["dave"]
[agents.alice.workspace.access]
dave = "read_write"
bob = "read"

[agents.dave]
risk_profile = "lead"
model_provider = "openai.main"

[agents.bob]
risk_profile = "lead"
model_provider = "openai.main"
[agents.bob.workspace]
path = "{}"

[agents.erin]
risk_profile = "lead"
model_provider = "openai.main"

{}"#,
        bob_ws.display(),
        fake.config_block("main")
    ))
    .unwrap();
    for (dir, text) in [(&bob_ws, BOB), (&erin_ws, ERIN)] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("notes.txt"), text).unwrap();
    }
    let target = bob_ws.join("notes.txt");
    fake.script([
        Reply::tool_call(
            "delegate",
            json!({"agent": "dave", "prompt": "tidy bob/notes.txt"}),
        ),
        // Whoever gets this call — the child under the old check, alice otherwise — may not
        // write bob's file: only reading was granted on it.
        Reply::tool_call(
            "file_write",
            json!({"path": target.display().to_string(), "content": "overwritten"}),
        ),
        Reply::text("done"),
        Reply::text("done"),
    ]);
    let h = TurnHarness::over(t).await;
    let TurnRun {
        outcome: out,
        events,
    } = h.turn("alice", "go").await;
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), BOB);
    let first = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
            _ => None,
        })
        .unwrap();
    assert!(!first.0, "the delegation is refused: {first:?}");
    assert!(
        first.1.contains("delegation_refused") && first.1.contains("read_write_roots"),
        "{first:?}"
    );
    assert!(events.iter().all(|e| e.agent == "alice"), "dave never ran");
    let text = serde_json::to_string(&events).unwrap();
    assert!(!text.contains(ERIN) && !text.contains(BOB));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delegation_to_an_agent_in_an_unfinished_lifecycle_operation_is_refused() {
    use warren_state::lifecycle::journal::{Journal, JournalEntry, Operation, RenameJob};
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = TestInstall::empty().unwrap();
    t.write_config(&format!(
        r#"
[risk_profiles.lead]
level = "full"
allowed_commands = ["*"]
delegation = "allow"

[agents.alice]
risk_profile = "lead"
model_provider = "openai.main"
delegates = ["bob"]
# Everything the SubAgent could do, alice may do too: only the pending rename stops it.
[agents.alice.workspace.access]
bob = "read_write"

[agents.bob]
risk_profile = "lead"
model_provider = "openai.main"

{}"#,
        fake.config_block("main")
    ))
    .unwrap();
    // A rename of bob that stopped before its first step (a crash, a failed step).
    let layout = t.layout();
    Journal::new(layout.journal_dir())
        .save(&JournalEntry {
            id: "rename-bob".into(),
            started_at: "2026-12-01T00:00:00Z".into(),
            op: Operation::Rename(RenameJob {
                old: "bob".into(),
                new: "bobby".into(),
                old_workspace: layout.workspace_for("bob", None),
                new_workspace: layout.workspace_for("bobby", None),
                memory_backend: warren_types::MemoryBackendKind::Sqlite,
            }),
            steps: Vec::new(),
            warnings: Vec::new(),
        })
        .unwrap();
    fake.script([
        Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "help"})),
        // The SubAgent's answer if it ran; alice's final text otherwise.
        Reply::text("done"),
        Reply::text("done"),
    ]);
    let h = TurnHarness::over(t).await;
    let TurnRun {
        outcome: out,
        events,
    } = h.turn("alice", "go").await;
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let result = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
            _ => None,
        })
        .unwrap();
    assert!(!result.0, "{result:?}");
    assert!(
        result.1.contains("delegation_refused") && result.1.contains("rename bob"),
        "{result:?}"
    );
    assert!(events.iter().all(|e| e.agent == "alice"), "bob never ran");
    // Two provider calls, both alice's: bob's turn never asked the model.
    assert_eq!(fake.requests().len(), 2);
}
