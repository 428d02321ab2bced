//! Per-agent secrets at run time (rules §10): an agent's provider route may use only its own
//! (`agent:<alias>/NAME`) and install-wide secrets. The check holds even for a config that
//! skipped validation, so bob's turns never carry alice's key.

use std::collections::BTreeMap;
use std::sync::Arc;
use warren_config::load_config;
use warren_runtime::approval::{ApprovalAnswer, FixedApprover};
use warren_runtime::host::{Host, HostEnv};
use warren_state::secrets::{FileSecretStore, SecretRef, SecretStore};
use warren_testkit::fake_llm::FakeLlm;
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

const ALICE_KEY: &str = "sk-alice-canary-6H4";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_naming_another_agents_secret_never_builds() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = TestInstall::with_config(&format!(
        r#"
[risk_profiles.p]

[agents.alice]
risk_profile = "p"
model_provider = "openai.main"

[agents.bob]
risk_profile = "p"
model_provider = "openai.main"

[agents.erin]
risk_profile = "p"

{}"#,
        fake.config_block("main")
    ))
    .unwrap();
    FileSecretStore::for_install(&t.layout())
        .set(&SecretRef::agent("alice", "OPENAI_KEY").unwrap(), ALICE_KEY)
        .unwrap();
    // What validation would reject, built in memory: the shared entry names alice's key.
    let mut config = load_config(&t.layout()).unwrap().config;
    for models in config.providers.models.values_mut() {
        for entry in models.values_mut() {
            entry.api_key_env = None;
            entry.secret = Some("agent:alice/OPENAI_KEY".into());
        }
    }
    let mut vars = BTreeMap::new();
    vars.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    let h = Host::open(
        t.layout(),
        HostEnv {
            home: Some(t.root().join("home")),
            vars,
        },
    )
    .await
    .unwrap();
    let approver = Arc::new(FixedApprover(ApprovalAnswer::no_one()));
    let bob = h.turn_env(&config, "bob", approver.clone()).await;
    let err = match bob {
        Ok(_) => panic!("bob's turn was built with alice's secret"),
        Err(e) => e.to_string(),
    };
    assert!(
        err.contains("agent:alice/OPENAI_KEY") && err.contains("`bob`"),
        "{err}"
    );
    assert!(!err.contains(ALICE_KEY));
    // alice's own secret is hers to use; a reserved install-state name is nobody's.
    assert!(h.turn_env(&config, "alice", approver.clone()).await.is_ok());
    for models in config.providers.models.values_mut() {
        for entry in models.values_mut() {
            entry.secret = Some("warren.receipt-key".into());
        }
    }
    assert!(h.turn_env(&config, "alice", approver).await.is_err());
    assert_eq!(fake.request_count(), 0);
}
