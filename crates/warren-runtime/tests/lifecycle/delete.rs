//! Delete with archive, blockers, failing exports, and the delete → restore round trip.

use super::fixture::{build, lifecycle, memory_rows, session_aliases, snapshot, t0};
use chrono::Utc;
use serde_json::Value;
use std::path::Path;
use warren_config::InstallLayout;
use warren_runtime::lifecycle::{FailExport, LifecycleError, RefAction, RunOptions};
use warren_state::db::open_sessions_db;
use warren_state::owned_state::export_sessions;
use warren_state::receipts::ReceiptLog;
use warren_state::secrets::FileSecretStore;

const GO: RunOptions = RunOptions {
    dry_run: false,
    force: false,
};

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[tokio::test]
async fn delete_archives_everything_and_removes_soft_references() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let lc = lifecycle(root).await;
    let r = lc.delete("carol", GO).await.unwrap();
    assert!(r.ok, "{r:?}");
    let archive = r.archive.clone().unwrap();
    assert_eq!(
        archive,
        InstallLayout::new(root)
            .deleted_dir()
            .join("carol-20260302T093000Z")
    );
    let text = std::fs::read_to_string(root.join("config.toml")).unwrap();
    assert!(!text.contains("carol"), "{text}");
    assert!(text.contains("delegates = [\"alice\"]"), "{text}");
    assert!(text.contains("# Alice's morning digest."), "{text}");
    warren_config::parse_config(&text).unwrap();

    let entry = std::fs::read_to_string(archive.join("config-entry.toml")).unwrap();
    assert!(
        entry.starts_with("[agents.carol]\nrisk_profile = \"p\"\n"),
        "{entry}"
    );
    assert!(
        entry.contains("access = { alice = \"write\", bob = \"read\" }"),
        "{entry}"
    );
    let cron = json(&archive.join("cascade/cron.json"));
    let block = cron["config_blocks"][0]["text"].as_str().unwrap();
    assert!(
        block.contains("# Carol's paused job.\n[cron.sweep]"),
        "{block}"
    );
    assert_eq!(
        std::fs::read_to_string(archive.join("workspace/notes/today.txt")).unwrap(),
        "carol did things\n"
    );
    assert!(!root.join("agents/carol").exists());
    let memory = json(&archive.join("cascade/memory.json"));
    assert_eq!(memory["rows"].as_array().unwrap().len(), 3);
    let sessions = json(&archive.join("cascade/sessions.json"));
    assert_eq!(sessions[0]["messages"].as_array().unwrap().len(), 2);
    assert_eq!(
        sessions[0]["turns"][0]["events"].as_array().unwrap().len(),
        2
    );
    assert_eq!(
        json(&archive.join("cascade/usage.json"))
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        json(&archive.join("cascade/receipts.json"))["chain"]["receipts"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let m = json(&archive.join("manifest.json"));
    assert_eq!(m["alias"], "carol");
    assert_eq!(m["time"], "2026-03-02T09:30:00.000000Z");
    assert!(m["agent_id"].as_str().unwrap().len() == 36);
    for kind in ["memory", "sessions", "usage", "receipts"] {
        let n = if kind == "memory" || kind == "receipts" {
            3 - u64::from(kind == "receipts")
        } else {
            1
        };
        assert_eq!(m["exported"][kind], n, "{kind}: {m}");
        assert_eq!(m["purged"][kind], n, "{kind}: {m}");
    }
    assert!(memory_rows(root, "carol").await.is_empty());
    assert_eq!(session_aliases(root).await, vec!["alice", "bob"]);
    let listed = lc.archives();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].manifest.as_ref().unwrap().alias, "carol");
}

#[tokio::test]
async fn delete_refuses_hard_references_and_live_acp_sessions_listing_each() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let pool = open_sessions_db(&layout.sessions_db()).await.unwrap();
    let bob: String = sqlx::query_scalar("SELECT id FROM agents WHERE alias = 'bob'")
        .fetch_one(&pool)
        .await
        .unwrap();
    let beat = warren_state::sessions::rfc3339(Utc::now());
    sqlx::query("INSERT INTO sessions (id, agent_id, kind, title, created_at, updated_at, heartbeat_at, pid) VALUES ('acp-1', ?, 'acp', 'editor', ?, ?, ?, ?)")
        .bind(&bob).bind(&beat).bind(&beat).bind(&beat).bind(i64::from(std::process::id()))
        .execute(&pool).await.unwrap();
    // Neither a dead serving process nor a stale heartbeat blocks.
    sqlx::query("INSERT INTO sessions (id, agent_id, kind, title, created_at, updated_at, heartbeat_at, pid) VALUES ('acp-dead', ?, 'acp', 'crashed', ?, ?, ?, 2147483646)")
        .bind(&bob).bind(&beat).bind(&beat).bind(&beat)
        .execute(&pool).await.unwrap();
    sqlx::query("INSERT INTO sessions (id, agent_id, kind, title, created_at, updated_at, heartbeat_at) VALUES ('acp-old', ?, 'acp', 'gone', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z', '2020-01-01T00:00:00Z')")
        .bind(&bob)
        .execute(&pool).await.unwrap();
    pool.close().await;
    let before = snapshot(root).await;
    let lc = super::fixture::lifecycle(root)
        .await
        .with_clock(std::sync::Arc::new(super::fixture::Fixed(Utc::now())));
    match lc.delete("alice", GO).await {
        Err(LifecycleError::Blocked { blockers, .. }) => {
            assert_eq!(blockers.len(), 1, "{blockers:?}");
            assert!(blockers[0].contains("cron.digest.agent"), "{blockers:?}");
        }
        other => panic!("{other:?}"),
    }
    match lc.delete("bob", GO).await {
        Err(LifecycleError::Blocked { blockers, .. }) => {
            assert_eq!(
                blockers,
                vec!["live ACP session acp-1 (editor)".to_string()]
            );
        }
        other => panic!("{other:?}"),
    }
    let dry = lc
        .delete(
            "alice",
            RunOptions {
                dry_run: true,
                force: false,
            },
        )
        .await
        .unwrap();
    assert!(!dry.ok && dry.plan.blockers.len() == 1);
    assert!(dry
        .plan
        .references
        .iter()
        .any(|r| r.action == RefAction::Blocks));
    assert_eq!(
        snapshot(root).await,
        before,
        "a refused delete changes nothing"
    );
}

#[tokio::test]
async fn a_delete_whose_export_fails_stays_unfinished_until_the_export_is_complete() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = warren_config::InstallLayout::new(root);
    let lc = lifecycle(root)
        .await
        .with_hook(std::sync::Arc::new(FailExport("memory")));
    let r = lc.delete("carol", GO).await.unwrap();
    assert!(!r.ok);
    let all = r.warnings.join("\n");
    assert!(all.contains("memory: export failed"), "{all}");
    assert!(all.contains("nothing was purged"), "{all}");
    assert!(all.contains("the delete is unfinished"), "{all}");
    let archive = r.archive.unwrap();
    // Nothing purged without its export: the rows are still carol's, no manifest yet, and the
    // alias is held.
    assert!(!archive.join("manifest.json").exists());
    assert!(!archive.join("cascade/memory.json").exists());
    assert_eq!(memory_rows(root, "carol").await.len(), 3);
    assert!(matches!(
        warren_state::lifecycle::refuse_if_pending(&layout, "carol"),
        Err(LifecycleError::Pending { .. })
    ));
    // Rerun with the fault still there: still unfinished, still nothing lost.
    let again = lc.delete("carol", GO).await.unwrap();
    assert!(!again.ok);
    assert_eq!(memory_rows(root, "carol").await.len(), 3);
    // The fault removed, one resume finishes it: every row exported, then purged.
    let outcomes = lifecycle(root).await.resume_pending().await;
    assert_eq!(outcomes.len(), 1);
    assert!(outcomes[0].error.is_none(), "{outcomes:?}");
    let m = json(&archive.join("manifest.json"));
    assert!(
        m["failed"]
            .as_object()
            .is_none_or(serde_json::Map::is_empty),
        "{m}"
    );
    assert_eq!(m["exported"]["memory"], 3, "{m}");
    assert_eq!(m["purged"]["memory"], 3, "{m}");
    let export = std::fs::read_to_string(archive.join("cascade/memory.json")).unwrap();
    assert_eq!(export.matches("\"key\"").count(), 3, "{export}");
    assert!(memory_rows(root, "carol").await.is_empty());
    assert!(warren_state::lifecycle::refuse_if_pending(&layout, "carol").is_ok());
    // A restore brings the rows back from the export.
    let back = lifecycle(root)
        .await
        .restore("carol-20260302T093000Z", None, false)
        .await
        .unwrap();
    assert!(back.ok, "{back:?}");
    assert_eq!(memory_rows(root, "carol").await.len(), 3);
}

async fn agent_state(root: &Path, alias: &str) -> (String, Vec<String>, String, bool) {
    let layout = InstallLayout::new(root);
    let doc = warren_config::ConfigDocument::parse(
        &std::fs::read_to_string(layout.config_path()).unwrap(),
    )
    .unwrap();
    let entry = doc.agent_block_text(alias).unwrap();
    let pool = open_sessions_db(&layout.sessions_db()).await.unwrap();
    let id: String = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
        .bind(alias)
        .fetch_one(&pool)
        .await
        .unwrap();
    let transcript = serde_json::to_string(&export_sessions(&pool, &id).await.unwrap()).unwrap();
    let receipts = ReceiptLog::new(pool.clone(), &FileSecretStore::for_install(&layout)).unwrap();
    let verified = receipts.verify(alias).await.unwrap();
    pool.close().await;
    let mut mem = memory_rows(root, alias).await;
    mem.push(
        std::fs::read_to_string(layout.default_workspace(alias).join("notes/today.txt")).unwrap(),
    );
    (entry, mem, transcript, verified.ok && verified.checked == 2)
}

#[tokio::test]
async fn delete_then_restore_gives_back_the_same_agent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let before_all = snapshot(root).await;
    let original = agent_state(root, "carol").await;
    assert!(original.3);
    let lc = lifecycle(root).await;
    let r = lc.delete("carol", GO).await.unwrap();
    let name = r
        .archive
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let restored = lc.restore(&name, None, false).await.unwrap();
    assert!(restored.ok, "{restored:?}");
    assert_eq!(agent_state(root, "carol").await, original);
    let text = std::fs::read_to_string(root.join("config.toml")).unwrap();
    assert!(
        text.contains("# Carol's paused job.\n[cron.sweep]\nagent = \"carol\""),
        "{text}"
    );
    assert!(
        lc.archives().is_empty(),
        "the archive is removed once restored"
    );
    // Soft references of other agents are not brought back; everything of carol is.
    let after_all = snapshot(root).await;
    assert!(after_all.contains("carol remembers fact number 3"));
    assert_ne!(after_all, before_all);
    let _ = t0();
}

#[tokio::test]
async fn restore_refuses_a_taken_alias_unless_renamed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let lc = lifecycle(root).await;
    let r = lc.delete("carol", GO).await.unwrap();
    let name = r
        .archive
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    lc.rename("bob", "carol", GO).await.unwrap();
    let err = lc.restore(&name, None, false).await.unwrap_err();
    assert!(err.to_string().contains("--as NEW"), "{err}");
    assert_eq!(lc.archives().len(), 1, "archive kept after a refusal");
    let r = lc.restore(&name, Some("cara"), false).await.unwrap();
    assert!(r.ok, "{r:?}");
    assert_eq!(memory_rows(root, "cara").await.len(), 3);
    assert!(root.join("agents/cara/workspace/README.md").exists());
    let text = std::fs::read_to_string(root.join("config.toml")).unwrap();
    assert!(text.contains("[agents.cara]"), "{text}");
    assert!(text.contains("agent = \"cara\""), "{text}");
    assert!(matches!(
        lc.restore("no-such-archive", None, false).await,
        Err(LifecycleError::UnknownArchive(_))
    ));
}

#[tokio::test]
async fn runtime_cron_jobs_are_archived_purged_and_restored() {
    use warren_runtime::lifecycle::CronJobsState;
    use warren_state::cron::CronStore;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let pool = open_sessions_db(&layout.sessions_db()).await.unwrap();
    let cron = CronStore::open(&layout.cron_db(), pool.clone())
        .await
        .unwrap();
    let job = cron
        .add_job("carol", "0 5 * * *", "water the plants", t0())
        .await
        .unwrap();
    let lc = || async {
        lifecycle(root)
            .await
            .with_participant(std::sync::Arc::new(CronJobsState::new(cron.clone())))
    };
    let dry = lc()
        .await
        .delete(
            "carol",
            RunOptions {
                dry_run: true,
                force: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(dry.plan.counts["cron_runtime"], 1);
    let r = lc().await.delete("carol", GO).await.unwrap();
    assert!(r.ok, "{r:?}");
    let archive = r.archive.unwrap();
    let exported = json(&archive.join("cascade/cron_runtime.json"));
    assert_eq!(exported["jobs"][0]["prompt"], "water the plants");
    assert!(cron.jobs(None).await.unwrap().is_empty(), "purged");
    let back = lc()
        .await
        .restore(&archive.file_name().unwrap().to_string_lossy(), None, false)
        .await
        .unwrap();
    assert!(back.ok, "{back:?}");
    let jobs = cron.jobs(None).await.unwrap();
    assert_eq!(jobs.len(), 1);
    assert_eq!(
        (jobs[0].id.as_str(), jobs[0].agent.as_deref()),
        (job.id.as_str(), Some("carol"))
    );
}

#[tokio::test]
async fn cron_cursors_are_archived_purged_and_restored_with_the_agent() {
    use warren_runtime::lifecycle::CronJobsState;
    use warren_state::cron::CronStore;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let pool = open_sessions_db(&layout.sessions_db()).await.unwrap();
    let cron = CronStore::open(&layout.cron_db(), pool.clone())
        .await
        .unwrap();
    let job = cron
        .add_job("carol", "0 5 * * *", "water the plants", t0())
        .await
        .unwrap();
    // Both of carol's jobs were last checked at t0; bob's job is not hers.
    for j in [job.id.as_str(), "sweep", "bobs-job"] {
        cron.set_cursor(j, t0()).await.unwrap();
    }
    let lc = || async {
        lifecycle(root)
            .await
            .with_participant(std::sync::Arc::new(CronJobsState::new(cron.clone())))
    };
    let r = lc().await.delete("carol", GO).await.unwrap();
    assert!(r.ok, "{r:?}");
    // Gone with the agent: a job reusing the id starts afresh instead of catching up.
    assert_eq!(cron.cursor("sweep").await.unwrap(), None);
    assert_eq!(cron.cursor(&job.id).await.unwrap(), None);
    assert_eq!(cron.cursor("bobs-job").await.unwrap(), Some(t0()));
    let archive = r.archive.unwrap();
    let exported = json(&archive.join("cascade/cron_runtime.json"));
    assert_eq!(exported["cursors"]["sweep"], "2026-03-01T12:00:00.000000Z");
    assert_eq!(exported["cursors"][&job.id], "2026-03-01T12:00:00.000000Z");
    // A cursor written meanwhile under the id (another job) does not survive the restore
    // either: the restored jobs are armed on the next tick, with no catch-up run.
    cron.set_cursor("sweep", t0()).await.unwrap();
    let back = lc()
        .await
        .restore(&archive.file_name().unwrap().to_string_lossy(), None, false)
        .await
        .unwrap();
    assert!(back.ok, "{back:?}");
    assert_eq!(cron.cursor("sweep").await.unwrap(), None);
    assert_eq!(cron.cursor(&job.id).await.unwrap(), None);
    assert_eq!(cron.jobs(None).await.unwrap().len(), 1);
}

/// The grants other agents held on the deleted agent (bob's `delegates`, `read_memory_from` and
/// `workspace.access` entries naming carol) are recorded in the archive, shown in the restore
/// plan, and put back by the restore, exactly; a holder deleted meanwhile is named instead.
#[tokio::test]
async fn restore_puts_back_the_grants_others_held_on_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let bob_before = warren_config::load_config(&layout).unwrap().config.agents["bob"].clone();
    assert!(bob_before.delegates.contains(&"carol".to_string()));
    let lc = lifecycle(root).await;
    let r = lc.delete("carol", GO).await.unwrap();
    assert!(r.ok, "{r:?}");
    let name = r
        .archive
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let bob_after_delete =
        warren_config::load_config(&layout).unwrap().config.agents["bob"].clone();
    assert!(!bob_after_delete.delegates.contains(&"carol".to_string()));
    assert!(!bob_after_delete.workspace.access.contains_key("carol"));
    // The archive lists them and the plan shows each one to put back.
    let archives = warren_runtime::lifecycle::list_archives(&layout);
    let m = archives[0].manifest.as_ref().unwrap();
    assert_eq!(m.references.len(), 3, "{:?}", m.references);
    let plan = lc.restore(&name, None, true).await.unwrap();
    let restored: Vec<&str> = plan
        .plan
        .references
        .iter()
        .filter(|p| p.action == RefAction::Restore)
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(
        restored,
        vec![
            "agents.bob.delegates",
            "agents.bob.workspace.access.carol",
            "agents.bob.workspace.read_memory_from"
        ]
    );
    let back = lc.restore(&name, None, false).await.unwrap();
    assert!(back.ok, "{back:?}");
    let bob_now = warren_config::load_config(&layout).unwrap().config.agents["bob"].clone();
    assert_eq!(
        bob_now, bob_before,
        "bob's grants on carol came back exactly"
    );

    // Again, with bob deleted while carol was away: carol comes back, bob's grants are named.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let lc = lifecycle(root).await;
    let r = lc.delete("carol", GO).await.unwrap();
    let name = r
        .archive
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let gone = lc.delete("bob", GO).await.unwrap();
    assert!(gone.ok, "{gone:?}");
    let plan = lc.restore(&name, None, true).await.unwrap();
    assert!(plan
        .plan
        .references
        .iter()
        .all(|p| p.action != RefAction::Restore));
    let all = plan.warnings.join("\n");
    assert!(
        all.contains("grant not restored: `bob` no longer exists"),
        "{all}"
    );
    let back = lc.restore(&name, None, false).await.unwrap();
    assert!(back.ok, "{back:?}");
    assert!(back.warnings.join("\n").contains("`bob` no longer exists"));
    let cfg = warren_config::load_config(&InstallLayout::new(root))
        .unwrap()
        .config;
    assert!(cfg.agents.contains_key("carol") && !cfg.agents.contains_key("bob"));
}

/// A grant goes back to the agent that held it, by identity: to its new alias when the holder
/// was renamed while the agent was away, and to nobody when another agent took the holder's
/// alias (a new `bob` gets nothing the deleted `bob` had; the warning says so).
#[tokio::test]
async fn restored_grants_follow_their_holder_not_its_alias() {
    let archive_of = |r: warren_runtime::lifecycle::LifecycleReport| {
        r.archive
            .unwrap()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    };
    // Renamed meanwhile: robert gets back what bob had.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let bob_before = warren_config::load_config(&layout).unwrap().config.agents["bob"].clone();
    let lc = lifecycle(root).await;
    let name = archive_of(lc.delete("carol", GO).await.unwrap());
    assert!(lc.rename("bob", "robert", GO).await.unwrap().ok);
    let plan = lc.restore(&name, None, true).await.unwrap();
    let restored: Vec<&str> = plan
        .plan
        .references
        .iter()
        .filter(|p| p.action == RefAction::Restore)
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(
        restored,
        vec![
            "agents.robert.delegates",
            "agents.robert.workspace.access.carol",
            "agents.robert.workspace.read_memory_from"
        ]
    );
    assert!(lc.restore(&name, None, false).await.unwrap().ok);
    let robert = warren_config::load_config(&layout).unwrap().config.agents["robert"].clone();
    assert_eq!(robert.delegates, bob_before.delegates);
    assert_eq!(robert.workspace.access, bob_before.workspace.access);
    assert_eq!(
        robert.workspace.read_memory_from,
        bob_before.workspace.read_memory_from
    );

    // Replaced meanwhile: bob deleted, a new bob added by hand; the new one gets nothing.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let layout = InstallLayout::new(root);
    let lc = lifecycle(root).await;
    let name = archive_of(lc.delete("carol", GO).await.unwrap());
    assert!(lc.delete("bob", GO).await.unwrap().ok);
    let cfg_path = root.join("config.toml");
    let mut text = std::fs::read_to_string(&cfg_path).unwrap();
    text.push_str("\n[agents.bob]\nrisk_profile = \"p\"\n");
    std::fs::write(&cfg_path, text).unwrap();
    let plan = lc.restore(&name, None, true).await.unwrap();
    assert!(
        plan.plan
            .references
            .iter()
            .all(|p| p.action != RefAction::Restore),
        "{:?}",
        plan.plan.references
    );
    let all = plan.warnings.join("\n");
    assert!(
        all.contains("`bob` is not the agent that held it when `carol` was deleted"),
        "{all}"
    );
    let back = lc.restore(&name, None, false).await.unwrap();
    assert!(back.ok, "{back:?}");
    assert!(back
        .warnings
        .join("\n")
        .contains("is not the agent that held it"));
    let bob = warren_config::load_config(&layout).unwrap().config.agents["bob"].clone();
    assert!(bob.delegates.is_empty(), "{:?}", bob.delegates);
    assert!(
        bob.workspace.access.is_empty(),
        "{:?}",
        bob.workspace.access
    );
    assert!(bob.workspace.read_memory_from.is_empty());
}

/// `restore <alias>` takes the newest archive of that alias, and the plan names it.
#[tokio::test]
async fn restore_by_alias_takes_its_newest_archive() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let lc = lifecycle(root).await;
    let first = lc.delete("carol", GO).await.unwrap().archive.unwrap();
    let back = lc.restore("carol", None, false).await.unwrap();
    assert!(back.ok, "{back:?}");
    assert!(!first.exists(), "the only archive was used");
    // Deleted again: the plan of `restore carol` names the archive it takes.
    let _ = lc.delete("carol", GO).await.unwrap();
    let plan = lc.restore("carol", None, true).await.unwrap();
    let archive = plan.plan.archive.clone().unwrap();
    assert!(
        archive.join("manifest.json").is_file(),
        "{}",
        archive.display()
    );
    let restored = lc.restore("carol", None, false).await.unwrap();
    assert!(restored.ok, "{restored:?}");
    assert!(!archive.exists());
    // An alias without an archive is an unknown archive, named.
    assert!(matches!(
        lc.restore("nobody", None, true).await,
        Err(LifecycleError::UnknownArchive(_))
    ));
}
