//! Operations that cannot complete: they stay journaled, block every alias they involve (turns,
//! other lifecycle commands), never merge into an agent that holds the alias, and converge once
//! resumed. Failures are real: the memory database is replaced by a directory, a stale folder
//! sits where a workspace must go, an agent is added to config.toml by hand.

use super::fixture::{build, copy, lifecycle, memory_rows, session_aliases, snapshot, PgSchema};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use warren_config::InstallLayout;
use warren_runtime::error::HostError;
use warren_runtime::host::{Host, HostEnv};
use warren_runtime::lifecycle::{InterruptAfter, LifecycleError, RunOptions};
use warren_state::lifecycle::refuse_if_pending;
use warren_types::TurnTrigger;

const GO: RunOptions = RunOptions {
    dry_run: false,
    force: false,
};

fn journal_entries(root: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(InstallLayout::new(root).journal_dir()) {
        Ok(rd) => rd
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Makes the SQLite memory store fail for real: `memory.db` becomes a directory.
struct BrokenMemory {
    db: PathBuf,
    aside: PathBuf,
}

impl BrokenMemory {
    fn break_it(root: &Path) -> Self {
        let db = InstallLayout::new(root).memory_db();
        let aside = root.join("memory.db.aside");
        std::fs::rename(&db, &aside).unwrap();
        for ext in ["-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{ext}", db.display()));
        }
        std::fs::create_dir(&db).unwrap();
        std::fs::write(db.join("not-a-database"), "x").unwrap();
        BrokenMemory { db, aside }
    }

    fn repair(self) {
        std::fs::remove_dir_all(&self.db).unwrap();
        std::fs::rename(&self.aside, &self.db).unwrap();
    }
}

/// Compares two snapshots, showing the first lines that differ.
fn same(got: &str, expected: &str) {
    if got != expected {
        let diff: Vec<_> = got
            .lines()
            .zip(expected.lines())
            .filter(|(a, b)| a != b)
            .take(5)
            .collect();
        panic!("the state differs: {diff:?}");
    }
}

async fn host(root: &Path) -> Host {
    let env = HostEnv {
        home: Some(root.join("home")),
        vars: BTreeMap::new(),
    };
    Host::open(InstallLayout::new(root), env).await.unwrap()
}

#[tokio::test]
async fn restore_never_merges_into_an_agent_that_took_the_alias() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let name = "carol-20260302T093000Z";
    assert!(lifecycle(root).await.delete("carol", GO).await.unwrap().ok);
    // The restore stops after its first step, as a crash would.
    let lc = lifecycle(root)
        .await
        .with_hook(Arc::new(InterruptAfter::new(1)));
    assert!(matches!(
        lc.restore(name, None, false).await,
        Err(LifecycleError::Interrupted { .. })
    ));
    // Someone adds a new `carol` by hand before the restore is finished.
    let cfg = root.join("config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap() + "\n[agents.carol]\nrisk_profile = \"p\"\n";
    std::fs::write(&cfg, &text).unwrap();
    let err = lifecycle(root)
        .await
        .restore(name, None, false)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LifecycleError::RestoreConflict { alias, started: true, .. } if alias == "carol"),
        "{err}"
    );
    assert!(err.to_string().contains("nothing is merged"), "{err}");
    // Nothing was merged: the new entry is as written, the archive and its journal are kept.
    assert_eq!(std::fs::read_to_string(&cfg).unwrap(), text);
    let archive = InstallLayout::new(root).deleted_dir().join(name);
    assert!(archive.join("manifest.json").is_file());
    assert!(archive.join("config-entry.toml").is_file());
    assert!(memory_rows(root, "carol").await.is_empty());
    assert_eq!(journal_entries(root).len(), 1);
    // Resuming on start reports it instead of finishing it.
    let outcomes = lifecycle(root).await.resume_pending().await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(outcomes[0].error.is_some(), "{outcomes:?}");
    assert!(archive.join("manifest.json").is_file());
}

#[tokio::test]
async fn rename_without_a_journal_never_merges_into_the_new_alias() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    // `ann` is in the config, `alice` is not, and no rename is journaled: alice's rows are
    // residue, ann is another agent.
    let cfg = root.join("config.toml");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("alice", "ann");
    std::fs::write(&cfg, text).unwrap();
    let before = snapshot(root).await;
    let err = lifecycle(root)
        .await
        .rename("alice", "ann", GO)
        .await
        .unwrap_err();
    assert!(matches!(err, LifecycleError::Taken(_)), "{err}");
    assert!(err.to_string().contains("nothing is merged"), "{err}");
    assert_eq!(snapshot(root).await, before);
    assert_eq!(memory_rows(root, "alice").await.len(), 3);
    assert!(memory_rows(root, "ann").await.is_empty());
}

#[tokio::test]
async fn a_delete_whose_store_is_broken_stays_pending_and_blocks_the_alias() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let expected = {
        let reference = copy(root);
        let r = lifecycle(reference.path())
            .await
            .delete("carol", GO)
            .await
            .unwrap();
        assert!(r.ok, "{r:?}");
        snapshot(reference.path()).await
    };
    let broken = BrokenMemory::break_it(root);
    let r = lifecycle(root).await.delete("carol", GO).await.unwrap();
    assert!(!r.ok, "{r:?}");
    let all = r.warnings.join("\n");
    assert!(all.contains("export failed"), "{all}");
    assert!(all.contains("still under `carol`"), "{all}");
    assert!(all.contains("warren agents delete carol"), "{all}");
    let archive = r.archive.unwrap();
    assert!(
        !archive.join("manifest.json").exists(),
        "an unfinished archive"
    );
    assert_eq!(journal_entries(root).len(), 1);
    // The alias is blocked: turns and lifecycle commands are refused.
    let pending = refuse_if_pending(&layout, "carol").unwrap_err();
    assert!(
        matches!(pending, LifecycleError::Pending { .. }),
        "{pending}"
    );
    let h = host(root).await;
    let turn = h.run("carol", None, "hi", TurnTrigger::User, None).await;
    assert!(
        matches!(&turn, Err(HostError::LifecyclePending(m)) if m.contains("delete carol")),
        "{:?}",
        turn.err()
    );
    assert!(matches!(
        lifecycle(root).await.rename("carol", "cara", GO).await,
        Err(LifecycleError::Pending { .. })
    ));
    // Still broken: rerunning reports it again and keeps the journal.
    let again = lifecycle(root).await.delete("carol", GO).await.unwrap();
    assert!(!again.ok);
    assert_eq!(journal_entries(root).len(), 1);
    broken.repair();
    let outcomes = lifecycle(root).await.resume_pending().await;
    assert!(outcomes[0].error.is_none(), "{outcomes:?}");
    assert!(journal_entries(root).is_empty());
    assert!(refuse_if_pending(&layout, "carol").is_ok());
    assert!(memory_rows(root, "carol").await.is_empty());
    assert!(archive.join("manifest.json").is_file());
    // The export was tried again: the state is the one of a delete that never failed.
    assert!(!session_aliases(root).await.contains(&"carol".to_string()));
    same(&snapshot(root).await, &expected);
}

#[tokio::test]
async fn a_failed_workspace_move_keeps_the_rename_pending_until_it_is_done() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let expected = {
        let reference = copy(root);
        let r = lifecycle(reference.path())
            .await
            .rename("alice", "ann", GO)
            .await
            .unwrap();
        assert!(r.ok, "{r:?}");
        snapshot(reference.path()).await
    };
    // A stale, non-empty folder where ann's workspace goes is refused up front...
    let stale = layout.default_workspace("ann");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("old.txt"), "left behind").unwrap();
    let before = snapshot(root).await;
    let refused = lifecycle(root)
        .await
        .rename("alice", "ann", GO)
        .await
        .unwrap_err();
    assert!(matches!(refused, LifecycleError::Taken(_)), "{refused}");
    same(&snapshot(root).await, &before);
    // ...and when it appears after the config step, the move fails for real.
    std::fs::remove_dir_all(&stale).unwrap();
    let interrupted = lifecycle(root)
        .await
        .with_hook(Arc::new(InterruptAfter::new(1)))
        .rename("alice", "ann", GO)
        .await;
    assert!(matches!(
        interrupted,
        Err(LifecycleError::Interrupted { .. })
    ));
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("old.txt"), "left behind").unwrap();
    let r = lifecycle(root)
        .await
        .rename("alice", "ann", GO)
        .await
        .unwrap();
    assert!(!r.ok, "{r:?}");
    assert!(
        r.warnings.iter().any(|w| w.contains("workspace not moved")),
        "{r:?}"
    );
    assert_eq!(journal_entries(root).len(), 1);
    assert!(layout
        .default_workspace("alice")
        .join("README.md")
        .is_file());
    for alias in ["alice", "ann"] {
        assert!(matches!(
            refuse_if_pending(&layout, alias),
            Err(LifecycleError::Pending { .. })
        ));
    }
    // Once the stale folder is moved away, rerunning finishes the rename.
    std::fs::remove_dir_all(&stale).unwrap();
    let done = lifecycle(root)
        .await
        .rename("alice", "ann", GO)
        .await
        .unwrap();
    assert!(done.ok, "{done:?}");
    assert!(journal_entries(root).is_empty());
    same(&snapshot(root).await, &expected);
}

#[tokio::test]
async fn an_unfinished_rename_refuses_turns_until_resumed_then_converges() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let expected = {
        let reference = copy(root);
        assert!(
            lifecycle(reference.path())
                .await
                .rename("alice", "ann", GO)
                .await
                .unwrap()
                .ok
        );
        snapshot(reference.path()).await
    };
    // The config step is saved, then the memory step fails for real.
    let broken = BrokenMemory::break_it(root);
    let r = lifecycle(root)
        .await
        .rename("alice", "ann", GO)
        .await
        .unwrap();
    assert!(!r.ok, "{r:?}");
    assert!(std::fs::read_to_string(root.join("config.toml"))
        .unwrap()
        .contains("[agents.ann]"));
    let h = host(root).await;
    for alias in ["alice", "ann"] {
        let turn = h.run(alias, None, "hi", TurnTrigger::User, None).await;
        assert!(
            matches!(&turn, Err(HostError::LifecyclePending(m)) if m.contains("rename alice → ann") && m.contains("warren agents rename alice ann")),
            "{alias}: {:?}",
            turn.err()
        );
    }
    assert!(matches!(
        lifecycle(root).await.rename("ann", "anna", GO).await,
        Err(LifecycleError::Pending { .. })
    ));
    broken.repair();
    let outcomes = lifecycle(root).await.resume_pending().await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(outcomes[0].error.is_none(), "{outcomes:?}");
    assert!(refuse_if_pending(&layout, "alice").is_ok());
    assert_eq!(memory_rows(root, "ann").await.len(), 3);
    assert!(memory_rows(root, "alice").await.is_empty());
    assert!(!session_aliases(root).await.contains(&"alice".to_string()));
    same(&snapshot(root).await, &expected);
}

#[tokio::test]
async fn an_unfinished_rename_on_postgres_memory_converges_once_the_server_is_back() {
    use warren_memory::{MemoryStores, NewMemory};
    let url = match std::env::var("WARREN_TEST_POSTGRES_URL") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            println!("skipped: WARREN_TEST_POSTGRES_URL not set");
            return;
        }
    };
    let pg = PgSchema::fresh(&url);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let layout = InstallLayout::new(root);
    let config = |url: &str| {
        format!(
            "schema_version = 1\n\n[memory]\nbackend = \"postgres\"\n\n[memory.postgres]\nurl = \"{url}\"\nschema = \"{}\"\n\n[risk_profiles.p]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"p\"\n\n[agents.bob]\nrisk_profile = \"p\"\ndelegates = [\"alice\"]\n",
            pg.name()
        )
    };
    std::fs::write(layout.config_path(), config(&url)).unwrap();
    {
        let cfg = warren_config::load_config(&layout).unwrap().config;
        let mem = MemoryStores::new(layout.clone());
        let h = mem.handle_for(&cfg, "alice").await.unwrap();
        for i in 1..=3 {
            h.store(NewMemory::new(format!("k{i}"), format!("alice fact {i}")))
                .await
                .unwrap();
        }
        mem.close().await;
    }
    // The server is unreachable (nothing listens on port 1) while the rename runs.
    let down = url.replacen("127.0.0.1:5432", "127.0.0.1:1", 1);
    assert_ne!(down, url, "the test URL must name 127.0.0.1:5432");
    std::fs::write(layout.config_path(), config(&down)).unwrap();
    let r = lifecycle(root)
        .await
        .rename("alice", "ann", GO)
        .await
        .unwrap();
    assert!(!r.ok, "{r:?}");
    assert!(r.warnings.iter().any(|w| w.contains("memory")), "{r:?}");
    let turn = host(root)
        .await
        .run("alice", None, "hi", TurnTrigger::User, None)
        .await;
    assert!(
        matches!(&turn, Err(HostError::LifecyclePending(_))),
        "{:?}",
        turn.err()
    );
    // The server is back: resuming moves the rows to the new alias.
    let text = std::fs::read_to_string(layout.config_path())
        .unwrap()
        .replace(&down, &url);
    std::fs::write(layout.config_path(), text).unwrap();
    let outcomes = lifecycle(root).await.resume_pending().await;
    assert!(
        outcomes.len() == 1 && outcomes[0].error.is_none(),
        "{outcomes:?}"
    );
    assert!(refuse_if_pending(&layout, "alice").is_ok());
    let cfg = warren_config::load_config(&layout).unwrap().config;
    let mem = MemoryStores::new(layout.clone());
    let count = |alias: &'static str| {
        let (mem, cfg) = (&mem, &cfg);
        async move {
            mem.admin_for_backend(cfg, warren_types::MemoryBackendKind::Postgres, alias)
                .await
                .unwrap()
                .count()
                .await
                .unwrap()
        }
    };
    assert_eq!(count("ann").await, 3);
    assert_eq!(count("alice").await, 0);
    mem.close().await;
}

/// A restore whose memory import fails is not done: it stays journaled (the alias held, the
/// archive kept), a second restore of the same archive resumes it instead of calling the alias
/// taken, and once the store is back one resume brings every row home and removes the archive.
#[tokio::test]
async fn a_restore_whose_memory_import_fails_stays_pending_until_the_rows_are_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let deleted = lifecycle(root).await.delete("carol", GO).await.unwrap();
    assert!(deleted.ok, "{deleted:?}");
    let archive = deleted.archive.unwrap();
    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    let broken = BrokenMemory::break_it(root);
    let r = lifecycle(root)
        .await
        .restore(&name, None, false)
        .await
        .unwrap();
    assert!(!r.ok, "{r:?}");
    let all = r.warnings.join("\n");
    assert!(all.contains("memory not restored yet"), "{all}");
    assert!(all.contains("the restore is unfinished"), "{all}");
    assert!(
        archive.join("manifest.json").exists(),
        "the archive was removed"
    );
    assert_eq!(journal_entries(root).len(), 1);
    // Using the agent meanwhile: its turns are refused, naming the restore.
    assert!(matches!(
        refuse_if_pending(&layout, "carol"),
        Err(LifecycleError::Pending { .. })
    ));
    let h = host(root).await;
    let turn = h.run("carol", None, "hi", TurnTrigger::User, None).await;
    assert!(
        matches!(&turn, Err(HostError::LifecyclePending(m)) if m.contains("restore")),
        "{:?}",
        turn.err()
    );
    drop(h);
    // The same restore again, fault still there: resumed (not "exists"), still unfinished.
    let again = lifecycle(root)
        .await
        .restore(&name, None, false)
        .await
        .unwrap();
    assert!(!again.ok, "{again:?}");
    assert_eq!(journal_entries(root).len(), 1);
    // The fault removed: one resume finishes it.
    broken.repair();
    let outcomes = lifecycle(root).await.resume_pending().await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(outcomes[0].error.is_none(), "{outcomes:?}");
    assert!(journal_entries(root).is_empty());
    assert_eq!(memory_rows(root, "carol").await.len(), 3);
    assert!(
        !archive.exists(),
        "the archive is kept after everything came back"
    );
    assert!(refuse_if_pending(&layout, "carol").is_ok());
}
