//! Markdown memory lives in the workspace: it moves with a rename, is exported and archived
//! with the workspace by a delete, and comes back with it on restore.

use super::fixture::lifecycle;
use std::sync::Arc;
use warren_config::InstallLayout;
use warren_memory::{MemoryStores, NewMemory, RecallQuery};
use warren_runtime::lifecycle::RunOptions;

const GO: RunOptions = RunOptions {
    dry_run: false,
    force: false,
};

const CONFIG: &str = "schema_version = 1\n\n[risk_profiles.p]\nlevel = \"supervised\"\n\n[agents.mo]\nrisk_profile = \"p\"\n\n[agents.mo.memory]\nbackend = \"markdown\"\n";

async fn recall(root: &std::path::Path, alias: &str) -> Vec<String> {
    let layout = InstallLayout::new(root);
    let cfg = warren_config::load_config(&layout).unwrap().config;
    let mem = Arc::new(MemoryStores::new(layout));
    let h = mem.handle_for(&cfg, alias).await.unwrap();
    let mut v: Vec<String> = h
        .recall(&RecallQuery::new("").limit(10))
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.content)
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn markdown_memory_follows_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::write(root.join("config.toml"), CONFIG).unwrap();
    let layout = InstallLayout::new(root);
    let cfg = warren_config::load_config(&layout).unwrap().config;
    let mem = Arc::new(MemoryStores::new(layout.clone()));
    let h = mem.handle_for(&cfg, "mo").await.unwrap();
    h.store(NewMemory::new("a", "likes tea")).await.unwrap();
    h.store(NewMemory::new("b", "met bob").category("daily"))
        .await
        .unwrap();
    drop((h, mem));
    let before = recall(root, "mo").await;
    assert_eq!(before.len(), 2);

    let lc = lifecycle(root).await;
    assert!(lc.rename("mo", "max", GO).await.unwrap().ok);
    assert!(layout.default_workspace("max").join("MEMORY.md").exists());
    assert_eq!(recall(root, "max").await, before);

    let r = lc.delete("max", GO).await.unwrap();
    assert!(r.ok, "{r:?}");
    let archive = r.archive.unwrap();
    assert!(archive.join("workspace/MEMORY.md").exists());
    let exported: serde_json::Value =
        serde_json::from_slice(&std::fs::read(archive.join("cascade/memory.json")).unwrap())
            .unwrap();
    assert_eq!(exported["rows"].as_array().unwrap().len(), 2);
    assert_eq!(exported["backend"], "markdown");

    let back = lc
        .restore(&archive.display().to_string(), None, false)
        .await
        .unwrap();
    assert!(back.ok, "{back:?}");
    assert_eq!(recall(root, "max").await, before);
}
