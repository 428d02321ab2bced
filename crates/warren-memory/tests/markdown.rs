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

/// Text that lives only in places mallory may not read.
const CANARY: &str = "CANARY-markdown-7731";

/// mallory's and erin's workspaces side by side, erin's memory full of canary rows, and a file
/// standing in for `config.toml`. Returns (root, mallory's handle).
async fn planted() -> (tempfile::TempDir, AgentScopedMarkdownMemory) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (mallory, erin) = (root.join("mallory"), root.join("erin"));
    std::fs::create_dir_all(mallory.join("memory")).unwrap();
    let erin_h = AgentScopedMarkdownMemory::new(
        Arc::new(MarkdownStore::new("erin", &erin)),
        vec![],
        vec![],
        StepClock::at(day(2026, 3, 4, 12)),
    );
    erin_h
        .store(NewMemory::new("secret", format!("{CANARY} core")))
        .await
        .unwrap();
    erin_h
        .store(NewMemory::new("diary", format!("{CANARY} daily")).category("daily"))
        .await
        .unwrap();
    std::fs::create_dir_all(root.join("data")).unwrap();
    std::fs::write(root.join("config.toml"), format!("# {CANARY} config\n")).unwrap();
    let h = AgentScopedMarkdownMemory::new(
        Arc::new(MarkdownStore::new("mallory", &mallory)),
        vec![],
        vec![],
        StepClock::at(day(2026, 3, 4, 12)),
    );
    (dir, h)
}

/// Every file under `root` outside mallory's workspace, with its content.
fn outside(root: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.starts_with(root.join("mallory")) {
            continue;
        }
        let meta = std::fs::symlink_metadata(&p).unwrap();
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap_or_default()));
        }
    }
    out.sort();
    out
}

async fn assert_blind(h: &AgentScopedMarkdownMemory) {
    let r = h.recall(&RecallQuery::new(CANARY)).await;
    let text = format!("{r:?}");
    assert!(!text.contains(CANARY), "{text}");
    let all = h.list(&warren_memory::ListQuery::default()).await;
    assert!(!format!("{all:?}").contains(CANARY));
}

#[tokio::test]
async fn a_linked_memory_file_is_an_error_not_a_sibling_read() {
    let (dir, h) = planted().await;
    let root = dir.path();
    std::os::unix::fs::symlink(root.join("erin/MEMORY.md"), root.join("mallory/MEMORY.md"))
        .unwrap();
    let before = outside(root);
    assert_blind(&h).await;
    let e = h.store(NewMemory::new("k", "v")).await.unwrap_err();
    assert!(e.to_string().contains("symbolic link"), "{e}");
    assert_eq!(outside(root), before, "erin's MEMORY.md changed");
}

#[tokio::test]
async fn a_linked_memory_folder_is_an_error_not_a_sibling_read_or_write() {
    for target in ["erin/memory", "data"] {
        let (dir, h) = planted().await;
        let root = dir.path();
        std::fs::remove_dir(root.join("mallory/memory")).unwrap();
        std::os::unix::fs::symlink(root.join(target), root.join("mallory/memory")).unwrap();
        let before = outside(root);
        assert_blind(&h).await;
        let r = h
            .store(NewMemory::new("k", "dated").category("daily"))
            .await;
        assert!(r.is_err(), "{target}: {r:?}");
        assert_eq!(
            outside(root),
            before,
            "{target}: a dated file was written there"
        );
    }
}

#[tokio::test]
async fn a_daily_file_linked_to_the_config_is_never_copied_into_memory() {
    let (dir, h) = planted().await;
    let root = dir.path();
    std::os::unix::fs::symlink(
        root.join("config.toml"),
        root.join("mallory/memory/2026-03-04.md"),
    )
    .unwrap();
    let before = outside(root);
    assert_blind(&h).await;
    assert!(h
        .store(NewMemory::new("k", "v").category("daily"))
        .await
        .is_err());
    assert_eq!(outside(root), before);
}

#[tokio::test]
async fn a_planted_temp_file_link_never_redirects_the_rewrite() {
    let (dir, h) = planted().await;
    let root = dir.path();
    // The temp names Warren used to use (pid-based) and a few guesses: all links to erin.
    for name in [
        format!(".MEMORY.md.tmp-{}", std::process::id()),
        ".MEMORY.md.tmp".to_string(),
        ".MEMORY.md.tmp-1".to_string(),
    ] {
        std::os::unix::fs::symlink(root.join("erin/MEMORY.md"), root.join("mallory").join(name))
            .unwrap();
    }
    let before = outside(root);
    h.store(NewMemory::new("mine", "my own row")).await.unwrap();
    assert_eq!(outside(root), before, "erin's MEMORY.md was overwritten");
    let own = std::fs::read_to_string(root.join("mallory/MEMORY.md")).unwrap();
    assert!(own.contains("my own row") && !own.contains(CANARY), "{own}");
}

#[test]
fn two_writers_on_the_same_files_never_lose_an_update() {
    // Two stores over one workspace stand for two processes (each has its own in-process
    // mutex); only the lock on the workspace directory orders their read-modify-writes.
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().to_path_buf();
    let per_writer = 40;
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let ws = ws.clone();
            std::thread::spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                let h = AgentScopedMarkdownMemory::new(
                    Arc::new(MarkdownStore::new("solo", &ws)),
                    vec![],
                    vec![],
                    StepClock::at(day(2026, 3, 4, 12)),
                );
                rt.block_on(async {
                    for i in 0..per_writer {
                        h.store(NewMemory::new(format!("w{w}-{i}"), "row"))
                            .await
                            .unwrap();
                    }
                });
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    let text = std::fs::read_to_string(ws.join("MEMORY.md")).unwrap();
    let rows = text.matches("[key:w").count();
    assert_eq!(rows, 2 * per_writer, "updates were lost:\n{text}");
}

#[test]
fn a_renamed_agent_never_gets_the_store_labelled_with_its_old_alias() {
    let dir = tempfile::tempdir().unwrap();
    let stores = MemoryStores::new(InstallLayout::new(dir.path()));
    let ws = dir.path().join("shared-ws");
    assert_eq!(stores.markdown_store_at("alice", &ws).alias(), "alice");
    // Same workspace (a custom path kept across the rename), new alias.
    assert_eq!(stores.markdown_store_at("ann", &ws).alias(), "ann");
}
