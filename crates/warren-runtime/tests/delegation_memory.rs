//! A SubAgent's memory through the real turn loop (rules §5): the child reads only what its
//! parent could read (the intersection of both allowlists, categories exact), and a child for
//! another agent never writes a store — neither the target's nor the parent's.

use serde_json::json;
use std::path::Path;
use warren_config::load_config;
use warren_memory::{ListQuery, NewMemory};
use warren_runtime::host::Host;
use warren_runtime::turn::TurnStatus;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::turn::{drain, TurnHarness};
use warren_testkit::TestInstall;
use warren_types::{EventKind, ProviderFamily, TurnEvent, TurnTrigger};

const BOB_CORE: &str = "canary-bob-core-7Q2";
const BOB_SHARED: &str = "canary-bob-shared-4K9";
const CAROL: &str = "canary-carol-private-8M1";
const CHILD_WRITE: &str = "written-by-the-child-3Z5";

async fn host(text: &str) -> (TestInstall, Host) {
    TurnHarness::open(text).await.into_parts()
}

/// Plants bob's two rows (categories `core` and `shared`) and carol's one.
async fn plant(t: &TestInstall, h: &Host) {
    let config = load_config(&t.layout()).unwrap().config;
    let bob = h.memory().handle_for(&config, "bob").await.unwrap();
    bob.store(NewMemory::new("bob_core", format!("canary {BOB_CORE}")).category("core"))
        .await
        .unwrap();
    bob.store(NewMemory::new("bob_shared", format!("canary {BOB_SHARED}")).category("shared"))
        .await
        .unwrap();
    let carol = h.memory().handle_for(&config, "carol").await.unwrap();
    carol
        .store(NewMemory::new("carol_note", format!("canary {CAROL}")).category("core"))
        .await
        .unwrap();
}

/// Every byte of the files under `dir`.
fn data_bytes(dir: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in walk(dir) {
        if let Ok(b) = std::fs::read(&entry) {
            out.extend(b);
        }
    }
    out
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

fn config(alice_grant: &str, fake: &FakeLlm) -> String {
    config_on("", alice_grant, fake)
}

fn config_on(memory: &str, alice_grant: &str, fake: &FakeLlm) -> String {
    format!(
        r#"{memory}
[risk_profiles.lead]
level = "full"
allowed_commands = ["*"]
delegation = "allow"

[agents.alice]
risk_profile = "lead"
model_provider = "openai.main"
delegates = ["bob"]
[agents.alice.workspace]
{alice_grant}
[agents.alice.workspace.access]
bob = "read_write"

[agents.bob]
risk_profile = "lead"
model_provider = "openai.main"

[agents.carol]
risk_profile = "lead"
model_provider = "openai.main"

{}"#,
        fake.config_block("main")
    )
}

/// Runs alice → delegate(bob) where the child recalls, stores and forgets; returns the events.
async fn run_child(fake: &FakeLlm, h: &Host) -> Vec<TurnEvent> {
    fake.script([
        Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "canary"})),
        Reply::tool_call("memory_recall", json!({"query": "canary"})),
        Reply::tool_call(
            "memory_store",
            json!({"key": "child_note", "content": CHILD_WRITE}),
        ),
        Reply::tool_call("memory_forget", json!({"key": "bob_core"})),
        Reply::text("child done"),
        Reply::text("alice done"),
    ]);
    let mut rx = h.subscribe();
    let out = h
        .run("alice", None, "go", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    drain(&mut rx)
}

fn child_results(events: &[TurnEvent]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter(|e| e.agent == "bob")
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
            _ => None,
        })
        .collect()
}

async fn keys(t: &TestInstall, h: &Host, alias: &str) -> Vec<String> {
    let config = load_config(&t.layout()).unwrap().config;
    let m = h.memory().handle_for(&config, alias).await.unwrap();
    let page = m.list(&ListQuery::default()).await.unwrap();
    let mut k: Vec<String> = page.entries.into_iter().map(|r| r.key).collect();
    k.sort();
    k
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_for_an_ungranted_target_sees_none_of_its_memory_and_writes_nothing() {
    ungranted_target("").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_markdown_too_a_child_sees_none_of_an_ungranted_targets_memory() {
    ungranted_target("[memory]\nbackend = \"markdown\"\n").await;
}

async fn ungranted_target(memory: &str) {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let (t, h) = host(&config_on(memory, "", &fake)).await;
    plant(&t, &h).await;
    let events = run_child(&fake, &h).await;

    // Nothing of bob's or carol's rows reached the provider, an event or the stored state.
    let requests = serde_json::to_string(
        &fake
            .requests()
            .iter()
            .map(|r| r.body.clone())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let events_text = serde_json::to_string(&events).unwrap();
    for canary in [BOB_CORE, BOB_SHARED, CAROL] {
        assert!(!requests.contains(canary), "{canary} reached the provider");
        assert!(!events_text.contains(canary), "{canary} is in an event");
    }
    h.sessions().pool().close().await;
    let sessions = std::fs::read(t.root().join("data/sessions.db")).unwrap_or_default();
    for canary in [BOB_CORE, BOB_SHARED, CAROL] {
        assert!(!contains(&sessions, canary), "{canary} is in sessions.db");
    }

    // The child's store and forget were refused; no store holds its row, bob keeps his.
    let r = child_results(&events);
    assert_eq!(r.len(), 3, "{r:?}");
    assert!(r[0].0, "recall runs (and finds nothing): {r:?}");
    for (ok, output) in &r[1..] {
        assert!(!ok, "a write was allowed: {output}");
        assert!(output.contains("delegation_refused"), "{output}");
    }
    assert!(!contains(
        &data_bytes(&t.root().join("data/memory")),
        CHILD_WRITE
    ));
    assert_eq!(keys(&t, &h, "bob").await, vec!["bob_core", "bob_shared"]);
    assert!(keys(&t, &h, "alice").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_category_grant_of_the_parent_bounds_what_the_child_reads() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let (t, h) = host(&config(
        r#"read_memory_from = [{ agent = "bob", categories = ["shared"] }]"#,
        &fake,
    ))
    .await;
    plant(&t, &h).await;
    let events = run_child(&fake, &h).await;
    let r = child_results(&events);
    assert_eq!(r.len(), 3, "{r:?}");
    assert!(r[0].0 && r[0].1.contains(BOB_SHARED), "granted row: {r:?}");
    let requests = serde_json::to_string(
        &fake
            .requests()
            .iter()
            .map(|r| r.body.clone())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let events_text = serde_json::to_string(&events).unwrap();
    for canary in [BOB_CORE, CAROL] {
        assert!(!requests.contains(canary), "{canary} reached the provider");
        assert!(!events_text.contains(canary), "{canary} is in an event");
    }
    assert!(!r[1].0 && !r[2].0, "writes refused: {r:?}");
    assert_eq!(keys(&t, &h, "bob").await, vec!["bob_core", "bob_shared"]);
}

/// A grantee's turn recalls a sibling's 8 MiB row into its system prompt: the row enters the
/// prompt bounded (with what was left out said), never whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_granted_row_enters_the_prompt_bounded() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([Reply::text("ok")]);
    let (t, h) = host(&config(r#"read_memory_from = ["bob"]"#, &fake)).await;
    let config = load_config(&t.layout()).unwrap().config;
    let bob = h.memory().handle_for(&config, "bob").await.unwrap();
    let huge = format!("canary {BOB_CORE} {}", "z".repeat(8 * 1024 * 1024));
    bob.store(NewMemory::new("bob_core", huge).category("core"))
        .await
        .unwrap();
    let out = h
        .run("alice", None, "canary", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let system = fake.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    // Positive control: the row was recalled into the prompt.
    assert!(
        system.contains(BOB_CORE),
        "{}",
        &system[..system.len().min(500)]
    );
    assert!(
        system.len() < 64 * 1024,
        "the prompt holds {} bytes",
        system.len()
    );
    assert!(system.contains("[cut: "), "the cut is said");
}
