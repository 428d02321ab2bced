//! The `delegate` tool through the real turn loop: escalation refused by axis, one shared
//! action budget, the depth limit, and the child's events nested under the parent's call.

use serde_json::json;
use warren_runtime::turn::TurnStatus;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::turn::{TurnHarness, TurnRun};
use warren_types::{EventKind, ProviderFamily, TurnEvent, TurnTrigger};

fn results(events: &[TurnEvent]) -> Vec<(String, bool, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { id, ok, output, .. } => Some((id.clone(), *ok, output.clone())),
            _ => None,
        })
        .collect()
}

const PROFILES: &str = r#"
[risk_profiles.lead]
level = "full"
allowed_commands = ["*"]
delegation = "allow"

[risk_profiles.plain]
level = "full"
allowed_commands = ["*"]
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_with_a_wider_grant_is_refused_with_the_axis_named() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call(
            "delegate",
            json!({"agent": "bob", "prompt": "read carol's notes"}),
        ),
        Reply::text("I could not delegate."),
    ]);
    let h = TurnHarness::open(&format!(
        r#"{PROFILES}
[agents.alice]
risk_profile = "lead"
model_provider = "openai.main"
delegates = ["bob"]
[agents.alice.workspace.access]
bob = "read_write"

[agents.bob]
risk_profile = "lead"
model_provider = "openai.main"
[agents.bob.workspace.access]
carol = "read"

[agents.carol]
risk_profile = "plain"
model_provider = "openai.main"

{}"#,
        fake.config_block("main")
    ))
    .await;
    let TurnRun {
        outcome: out,
        events,
    } = h.turn("alice", "go").await;
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let r = results(&events);
    assert_eq!(r.len(), 1);
    assert!(!r[0].1, "refused: {r:?}");
    let err: serde_json::Value = serde_json::from_str(&r[0].2).unwrap();
    assert_eq!(err["code"], "delegation_refused");
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("`read_only_roots`"),
        "the axis is named: {err}"
    );
    // Bob never ran: no turn of his, and only alice's two requests reached the provider.
    assert!(events.iter().all(|e| e.agent == "alice"));
    assert_eq!(fake.request_count(), 2);
    assert!(h
        .host()
        .sessions()
        .list_sessions(Some("bob"))
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_child_spends_the_shared_budget_and_its_events_nest_under_the_call() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        // alice (depth 0): delegate to herself — one action.
        Reply::tool_call("delegate", json!({"prompt": "write child.txt"})),
        // the child (depth 1): a further delegation is past max_delegation_depth.
        Reply::tool_call("delegate", json!({"prompt": "deeper"})),
        // the child writes a file — the last action of the shared budget.
        Reply::tool_call(
            "file_write",
            json!({"path": "child.txt", "content": "from the child"}),
        ),
        Reply::text("child done"),
        // alice has nothing left.
        Reply::tool_call(
            "file_write",
            json!({"path": "parent.txt", "content": "from alice"}),
        ),
        Reply::text("parent done"),
    ]);
    let h = TurnHarness::open(&format!(
        r#"{PROFILES}
[runtime_profiles.rt]
max_actions_per_hour = 2
max_delegation_depth = 1

[agents.alice]
risk_profile = "lead"
runtime_profile = "rt"
model_provider = "openai.main"

{}"#,
        fake.config_block("main")
    ))
    .await;
    let TurnRun {
        outcome: out,
        events,
    } = h.turn("alice", "get it written").await;
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert_eq!(out.text, "parent done");
    let ws = h.workspace("alice");
    assert_eq!(
        std::fs::read_to_string(ws.join("child.txt")).unwrap(),
        "from the child"
    );
    assert!(
        !ws.join("parent.txt").exists(),
        "the parent had no action left"
    );

    let (parent, child): (Vec<_>, Vec<_>) = events
        .iter()
        .cloned()
        .partition(|e| e.turn_id == out.turn_id);
    assert!(parent.iter().all(|e| e.parent.is_none()));
    let delegate_call = parent
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolCall { id, name, .. } if name == "delegate" => Some(id.clone()),
            _ => None,
        })
        .unwrap();
    assert!(!child.is_empty());
    for e in &child {
        let p = e.parent.as_ref().expect("child events carry their parent");
        assert_eq!(
            (p.turn_id.as_str(), p.call_id.as_str(), p.agent.as_str()),
            (out.turn_id.as_str(), delegate_call.as_str(), "alice")
        );
    }
    assert!(matches!(
        &child[0].kind,
        EventKind::TurnStarted { trigger, .. } if *trigger == TurnTrigger::Delegate
    ));
    // In the child: the deeper delegation refused by depth, the write done.
    let cr = results(&child);
    assert_eq!(cr.len(), 2, "{cr:?}");
    assert!(!cr[0].1 && cr[0].2.contains("delegation_depth"), "{cr:?}");
    assert!(cr[1].1, "{cr:?}");
    // In the parent: the delegation succeeded with the child's answer, the write was refused.
    let pr = results(&parent);
    assert_eq!(pr.len(), 2, "{pr:?}");
    assert!(pr[0].1 && pr[0].2.contains("child done"), "{pr:?}");
    assert!(!pr[1].1 && pr[1].2.contains("budget_exhausted"), "{pr:?}");

    // The child's turn is stored (replayable) with its parent reference.
    let child_turn = child[0].turn_id.clone();
    let stored = h.host().sessions().turn_events(&child_turn).await.unwrap();
    assert_eq!(stored.len(), child.len());
    assert!(stored.iter().all(|e| e.parent.is_some()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_delegation_allowed_the_tool_is_not_offered() {
    let (fake, h) = TurnHarness::scripted(ProviderFamily::Openai, [Reply::text("fine")], |block| {
        format!(
            r#"{PROFILES}
[agents.alice]
risk_profile = "plain"
model_provider = "openai.main"

{block}"#
        )
    })
    .await;
    h.turn("alice", "hi").await;
    let tools: Vec<String> = fake.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect();
    assert!(tools.contains(&"file_read".to_string()));
    assert!(!tools.contains(&"delegate".to_string()), "{tools:?}");
}

/// `network` is an axis like every other field: a parent without network cannot hand a task to
/// a target that has it, while a parent with network can (the positive control).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parent_without_network_cannot_delegate_to_a_child_with_it() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        // alice (no network) -> bob (network): refused.
        Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "fetch"})),
        Reply::text("alice could not delegate"),
        // dave (network) -> bob: bob runs and answers.
        Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "fetch"})),
        Reply::text("bob's answer"),
        Reply::text("dave is done"),
    ]);
    let h = TurnHarness::open(&format!(
        r#"{PROFILES}
[risk_profiles.net]
level = "full"
allowed_commands = ["*"]
delegation = "allow"
network = true

[agents.alice]
risk_profile = "lead"
model_provider = "openai.main"
delegates = ["bob"]
[agents.alice.workspace.access]
bob = "read_write"

[agents.dave]
risk_profile = "net"
model_provider = "openai.main"
delegates = ["bob"]
[agents.dave.workspace.access]
bob = "read_write"

[agents.bob]
risk_profile = "net"
model_provider = "openai.main"

{}"#,
        fake.config_block("main")
    ))
    .await;
    let TurnRun { outcome, events } = h.turn("alice", "go").await;
    assert_eq!(outcome.status, TurnStatus::Completed, "{outcome:?}");
    let r = results(&events);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(!r[0].1, "refused: {r:?}");
    assert!(r[0].2.contains("`network`"), "the axis is named: {r:?}");
    assert!(events.iter().all(|e| e.agent == "alice"));

    let TurnRun { outcome, events } = h.turn("dave", "go").await;
    assert_eq!(outcome.status, TurnStatus::Completed, "{outcome:?}");
    let r = results(&events);
    let delegated = r.iter().find(|x| x.2.contains("bob's answer"));
    assert!(
        delegated.is_some_and(|x| x.1),
        "the control delegation ran: {r:?}"
    );
    assert!(events.iter().any(|e| e.agent == "bob"));
}

/// A SubAgent's provider answers 401 with the SubAgent's own key in the error body (vendors
/// echo what they were sent). The key reaches neither the parent model's next request, nor
/// any event, nor the session store on disk: every secret the process holds is redacted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_key_echoed_in_its_provider_error_reaches_no_model_event_or_store() {
    const KEY: &str = "sk-bob-ECHOED-9f8e7d6c5b4a3210";
    let parent = FakeLlm::start(ProviderFamily::Openai).unwrap();
    parent.script([
        Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "summarise"})),
        Reply::text("bob failed."),
    ]);
    let child = FakeLlm::start(ProviderFamily::Openai).unwrap();
    child.script([Reply::raw(
        401,
        "application/json",
        &format!(
            r#"{{"error":{{"message":"Incorrect API key provided: {KEY}. You can find your key at the dashboard.","type":"invalid_request_error","code":"invalid_api_key"}}}}"#
        ),
    )]);
    let install = warren_testkit::TestInstall::with_config(&format!(
        r#"{PROFILES}
[agents.alice]
risk_profile = "lead"
model_provider = "openai.main"
delegates = ["bob"]
[agents.alice.workspace.access]
bob = "read_write"

[agents.bob]
risk_profile = "plain"
model_provider = "openai.sub"

{}
{}api_key_env = "BOB_KEY"
"#,
        parent.config_block("main"),
        child.config_block("sub")
    ))
    .unwrap();
    let h = TurnHarness::over_with_vars(install, &[("BOB_KEY", KEY)]).await;
    let TurnRun { outcome, events } = h.turn("alice", "go").await;
    assert_eq!(outcome.status, TurnStatus::Completed, "{outcome:?}");
    // Positive control: bob's provider was sent the key and answered with it.
    let sent = child.requests();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    // The parent model saw the failure, without the key.
    let asked = parent.requests();
    assert_eq!(asked.len(), 2);
    let second = asked[1].body.to_string();
    assert!(second.contains("Incorrect API key provided"), "{second}");
    assert!(second.contains("[redacted]"), "{second}");
    assert!(
        !second.contains(KEY),
        "the parent model got the key: {second}"
    );
    // No event (the parent's, bob's nested ones) carries it.
    let all = serde_json::to_string(&events).unwrap();
    assert!(all.contains("[redacted]"), "{all}");
    assert!(!all.contains(KEY), "an event carries the key");
    // Nor the session store on disk (events, history, turns), once the host is closed.
    let (install, host) = h.into_parts();
    drop(host);
    let db = install.layout().sessions_db();
    let mut stored = Vec::new();
    for suffix in ["", "-wal"] {
        let mut p = db.clone().into_os_string();
        p.push(suffix);
        if let Ok(bytes) = std::fs::read(&p) {
            stored.extend(bytes);
        }
    }
    assert!(!stored.is_empty());
    assert!(
        !stored.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
        "the session store holds the key"
    );
}

const PAIR: &str = r#"
[agents.alice]
risk_profile = "lead"
model_provider = "openai.main"
delegates = ["bob"]
[agents.alice.workspace.access]
bob = "read_write"

[agents.bob]
risk_profile = "plain"
model_provider = "openai.main"
"#;

/// A paused agent runs no SubAgent turn either; resumed, the same delegation runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_target_runs_no_subagent_turn() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let h = TurnHarness::open(&format!("{PROFILES}{PAIR}\n{}", fake.config_block("main"))).await;
    h.host().set_paused(&["bob".to_string()], true).unwrap();
    fake.script([
        Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "work"})),
        Reply::text("bob is paused"),
    ]);
    let TurnRun { outcome, events } = h.turn("alice", "go").await;
    assert_eq!(outcome.status, TurnStatus::Completed, "{outcome:?}");
    let r = results(&events);
    assert!(!r[0].1 && r[0].2.contains("`bob` is paused"), "{r:?}");
    assert_eq!(fake.request_count(), 2, "bob's model was never asked");
    // Positive control: resumed, bob works as a SubAgent.
    h.host().set_paused(&["bob".to_string()], false).unwrap();
    fake.script([
        Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "work"})),
        Reply::text("bob's answer"),
        Reply::text("done"),
    ]);
    let TurnRun { outcome, events } = h.turn("alice", "go").await;
    assert_eq!(outcome.status, TurnStatus::Completed, "{outcome:?}");
    let r = results(&events);
    assert!(r[0].1 && r[0].2.contains("bob's answer"), "{r:?}");
}

/// While a SubAgent turn of bob runs it holds bob's lock: the lifecycle service cannot
/// quiesce bob (so no delete or rename of bob finishes under it); afterwards it can.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_turn_holds_its_targets_lock() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("delegate", json!({"agent": "bob", "prompt": "work"})),
        Reply::text("bob, slowly").delay(std::time::Duration::from_secs(2)),
        Reply::text("done"),
    ]);
    let h = std::sync::Arc::new(
        TurnHarness::open(&format!("{PROFILES}{PAIR}\n{}", fake.config_block("main"))).await,
    );
    let runner = h.clone();
    let turn = tokio::spawn(async move { runner.turn("alice", "go").await });
    assert!(
        fake.wait_for_requests(2, std::time::Duration::from_secs(30))
            .await,
        "bob's SubAgent turn asked its model"
    );
    let short = std::time::Duration::from_millis(300);
    assert!(
        h.host().quiesce("bob", short, false).await.is_none(),
        "bob was quiesced while its SubAgent turn ran"
    );
    let TurnRun { outcome, events } = turn.await.unwrap();
    assert_eq!(outcome.status, TurnStatus::Completed, "{outcome:?}");
    assert!(results(&events)[0].1, "{events:?}");
    // Positive control: with the SubAgent turn over, bob quiesces at once.
    assert!(h.host().quiesce("bob", short, false).await.is_some());
}
