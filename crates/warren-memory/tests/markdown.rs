//! Markdown specifics: where the files land, restart, peer prefixes, defensive filtering.

use std::sync::Arc;

use warren_config::InstallLayout;
use warren_memory::{
    AgentScopedMarkdownMemory, MarkdownStore, Memory, MemoryStores, NewMemory, RecallQuery,
};

use crate::support::{day, Env, StepClock};

const MD: &str = "[memory]\nbackend = \"markdown\"\n";

#[tokio::test]
async fn files_land_where_spec_says_and_survive_a_restart() {
    let env = Env::new("markdown", MD, false);
    let bob = env.h("bob").await;
    bob.store(NewMemory::new("name", "Bob the builder"))
        .await
        .unwrap();
    bob.store(NewMemory::new("walk", "Saw a heron\nby the river").category("daily"))
        .await
        .unwrap();
    let ws = env.layout().default_workspace("bob");
    let core = std::fs::read_to_string(ws.join("MEMORY.md")).unwrap();
    assert!(core.contains("[key:name] [category:core]"), "{core}");
    assert!(core.ends_with("Bob the builder\n"), "{core}");
    // The clock starts at 2026-03-04T23:00Z: the daily file is named by the UTC day.
    let daily = std::fs::read_to_string(ws.join("memory/2026-03-04.md")).unwrap();
    assert!(daily.contains("[key:walk] [category:daily]"), "{daily}");
    assert!(daily.contains("Saw a heron\\nby the river"), "{daily}");
    assert!(!core.contains("heron") && !daily.contains("builder"));

    // A new registry (a restart) reads the same rows back, content intact.
    let again = MemoryStores::new(env.layout());
    let bob2 = again.handle_for(&env.config, "bob").await.unwrap();
    let walk = bob2.get("walk").await.unwrap().unwrap();
    assert_eq!(walk.content, "Saw a heron\nby the river");
    assert_eq!(walk.category, "daily");
    assert_eq!(bob2.count().await.unwrap(), 2);

    // Forget rewrites the file without the entry and keeps other text.
    let path = ws.join("MEMORY.md");
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str("A hand-written note.\n");
    std::fs::write(&path, text).unwrap();
    assert!(bob2.forget("name").await.unwrap());
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(!after.contains("[key:name]") && after.contains("A hand-written note."));
}

#[tokio::test]
async fn daily_files_follow_the_utc_day() {
    let dir = tempfile::tempdir().unwrap();
    let clock = StepClock::at(day(2026, 12, 31, 23) + chrono::Duration::minutes(59));
    let store = Arc::new(MarkdownStore::new("solo", dir.path()));
    let h = AgentScopedMarkdownMemory::new(store, vec![], vec![], clock);
    h.store(NewMemory::new("a", "before midnight").category("daily"))
        .await
        .unwrap();
    assert!(dir.path().join("memory/2026-12-31.md").is_file());
    assert!(!dir.path().join("MEMORY.md").exists());
}

#[tokio::test]
async fn peer_rows_carry_the_alias_prefix_and_peers_are_filtered() {
    let env = Env::new("markdown", MD, false);
    let (alice, bob, erin) = (
        env.h("alice").await,
        env.h("bob").await,
        env.h("erin").await,
    );
    bob.store(NewMemory::new("colour", "favourite colour is teal"))
        .await
        .unwrap();
    erin.store(NewMemory::new("colour", "favourite colour is red"))
        .await
        .unwrap();
    alice
        .store(NewMemory::new("mine", "my colour is gold"))
        .await
        .unwrap();

    let got = alice.recall(&RecallQuery::new("colour")).await.unwrap();
    let contents: Vec<_> = got.iter().map(|r| r.content.as_str()).collect();
    assert!(
        contents.contains(&"[bob] favourite colour is teal"),
        "{contents:?}"
    );
    assert!(contents.contains(&"my colour is gold"), "{contents:?}");
    assert!(!contents.iter().any(|c| c.contains("red")), "{contents:?}");

    // A peer store for a non-granted agent passed in directly is still filtered out.
    let layout = InstallLayout::new(env.dir.path());
    let own = Arc::new(MarkdownStore::new(
        "alice",
        layout.default_workspace("alice"),
    ));
    let bob_store = Arc::new(MarkdownStore::new("bob", layout.default_workspace("bob")));
    let erin_store = Arc::new(MarkdownStore::new("erin", layout.default_workspace("erin")));
    let sneaky = AgentScopedMarkdownMemory::new(
        own.clone(),
        vec![bob_store, erin_store.clone()],
        vec!["bob".into()],
        StepClock::at(day(2026, 1, 1, 0)),
    );
    let got = sneaky.recall(&RecallQuery::new("colour")).await.unwrap();
    assert!(got.iter().any(|r| r.agent == "bob"));
    assert!(!got.iter().any(|r| r.agent == "erin"), "{got:?}");
    // With no grant at all, nothing of erin either (and the bound agent cannot be spoofed).
    let none = AgentScopedMarkdownMemory::new(
        own,
        vec![erin_store],
        vec![],
        StepClock::at(day(2026, 1, 1, 0)),
    );
    let got = none.recall(&RecallQuery::new("colour")).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].agent, "alice");
}

#[tokio::test]
async fn factory_rejects_category_grants_on_markdown() {
    // The validator rejects this config; the factory must refuse it on its own too.
    let cfg: warren_types::Config = toml::from_str(
        r#"
        [memory]
        backend = "markdown"
        [risk_profiles.p]
        [agents.a]
        risk_profile = "p"
        [agents.a.workspace]
        read_memory_from = [{ agent = "b", categories = ["core"] }]
        [agents.b]
        risk_profile = "p"
        "#,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let stores = MemoryStores::new(InstallLayout::new(dir.path()));
    let err = stores.handle_for(&cfg, "a").await.err().unwrap();
    assert!(
        matches!(&err, warren_memory::MemoryError::MarkdownCategoryGrant { alias, peer } if alias == "a" && peer == "b"),
        "{err}"
    );
    assert!(err.to_string().contains("markdown"), "{err}");
    assert!(
        !dir.path().join("agents").exists(),
        "nothing written on refusal"
    );
}
