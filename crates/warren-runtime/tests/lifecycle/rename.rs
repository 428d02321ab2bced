//! Rename: every reference rewritten with comments kept, workspace moved, memory, sessions,
//! usage and receipts re-pointed, no residue; dry run, refusals, quiescing.

use super::fixture::{build, lifecycle, memory_rows, session_aliases, snapshot};
use std::sync::Arc;
use std::time::Duration;
use warren_config::InstallLayout;
use warren_memory::{MemoryStores, RecallQuery};
use warren_runtime::lifecycle::{LifecycleError, RunOptions};
use warren_state::receipts::ReceiptLog;
use warren_state::secrets::FileSecretStore;
use warren_state::sessions::SessionStore;
use warren_types::TurnTrigger;

const GO: RunOptions = RunOptions {
    dry_run: false,
    force: false,
};

#[tokio::test]
async fn rename_rewrites_every_reference_and_moves_all_owned_state() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let lc = lifecycle(root).await;
    let report = lc.rename("alice", "ann", GO).await.unwrap();
    assert!(report.ok, "{report:?}");
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    let paths: Vec<&str> = report
        .plan
        .references
        .iter()
        .map(|r| r.path.as_str())
        .collect();
    assert_eq!(paths.len(), 7, "{paths:?}");

    let text = std::fs::read_to_string(root.join("config.toml")).unwrap();
    assert!(!text.contains("alice"), "{text}");
    for kept in [
        "# Alice researches.\n[agents.ann]\nrisk_profile = \"p\" # the default profile",
        "delegates = [\"ann\", \"carol\"]",
        "read_memory_from = [{ agent = \"ann\", categories = [\"core\"] }, \"carol\"]",
        "ann = \"read\" # look, don't touch",
        "access = { ann = \"write\", bob = \"read\" }",
        "# Alice's morning digest.\n[cron.digest]\nagent = \"ann\"",
    ] {
        assert!(text.contains(kept), "missing {kept:?} in\n{text}");
    }

    let layout = InstallLayout::new(root);
    assert!(!root.join("agents/alice").exists());
    assert_eq!(
        std::fs::read_to_string(layout.default_workspace("ann").join("notes/today.txt")).unwrap(),
        "alice did things\n"
    );

    // Memory: recall through the new alias returns the old rows; the old alias has none.
    let cfg = warren_config::load_config(&layout).unwrap().config;
    let mem = Arc::new(MemoryStores::new(layout.clone()));
    let ann = mem.handle_for(&cfg, "ann").await.unwrap();
    let rows = ann
        .recall(&RecallQuery::new("remembers").limit(10))
        .await
        .unwrap();
    let own: Vec<_> = rows.iter().filter(|r| r.agent == "ann").collect();
    assert_eq!(own.len(), 3, "{rows:?}");
    assert!(own.iter().all(|r| r.content.starts_with("alice remembers")));
    let bob = mem.handle_for(&cfg, "bob").await.unwrap();
    let seen = bob
        .recall(&RecallQuery::new("alice").limit(20))
        .await
        .unwrap();
    assert!(
        seen.iter().any(|r| r.agent == "ann"),
        "bob's grant follows: {seen:?}"
    );
    assert!(memory_rows(root, "alice").await.is_empty());

    // Sessions, usage, receipts follow the one agent id row.
    let pool = warren_state::db::open_sessions_db(&layout.sessions_db())
        .await
        .unwrap();
    let sessions = SessionStore::new(pool.clone());
    let listed = sessions.list_sessions(Some("ann")).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].title, "hello alice");
    assert!(sessions
        .list_sessions(Some("alice"))
        .await
        .unwrap()
        .is_empty());
    let cost = sessions
        .cost_today_cents("ann", super::fixture::t0())
        .await
        .unwrap();
    assert!((cost - 25.0).abs() < 1e-9, "{cost}");
    let receipts = ReceiptLog::new(pool.clone(), &FileSecretStore::for_install(&layout)).unwrap();
    let v = receipts.verify("ann").await.unwrap();
    assert!(v.ok && v.checked == 2, "{v:?}");
    pool.close().await;
    assert_eq!(session_aliases(root).await, vec!["ann", "bob", "carol"]);
    assert!(std::fs::read_dir(layout.journal_dir())
        .unwrap()
        .next()
        .is_none());
}

#[tokio::test]
async fn dry_run_plans_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path()).await;
    let before = snapshot(dir.path()).await;
    let lc = lifecycle(dir.path()).await;
    let opts = RunOptions {
        dry_run: true,
        force: false,
    };
    let r = lc.rename("alice", "ann", opts).await.unwrap();
    assert!(r.dry_run && r.ok);
    assert_eq!(r.plan.counts["memory"], 3);
    assert_eq!(r.plan.counts["sessions"], 1);
    assert_eq!(r.plan.counts["receipts"], 2);
    assert!(r
        .plan
        .references
        .iter()
        .any(|p| p.path == "cron.digest.agent"));
    assert!(r
        .plan
        .references
        .iter()
        .any(|p| p.path == "agents.bob.delegates[0]"
            && p.action == warren_runtime::lifecycle::RefAction::Rewrite));
    assert_eq!(snapshot(dir.path()).await, before);
}

#[tokio::test]
async fn rename_refuses_invalid_taken_and_unknown_names() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path()).await;
    let before = snapshot(dir.path()).await;
    let lc = lifecycle(dir.path()).await;
    assert!(matches!(
        lc.rename("alice", "Ann", GO).await,
        Err(LifecycleError::InvalidAlias { .. })
    ));
    assert!(matches!(
        lc.rename("alice", "default", GO).await,
        Err(LifecycleError::InvalidAlias { .. })
    ));
    let taken = lc.rename("alice", "bob", GO).await.unwrap_err();
    assert!(
        taken.to_string().contains("`bob` already exists"),
        "{taken}"
    );
    assert!(matches!(
        lc.rename("nobody", "x", GO).await,
        Err(LifecycleError::UnknownAgent(a)) if a == "nobody"
    ));
    assert_eq!(snapshot(dir.path()).await, before);
}

#[tokio::test]
async fn rename_waits_for_the_running_turn_then_refuses_with_agent_busy() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path()).await;
    let layout = InstallLayout::new(dir.path());
    let host = Arc::new(
        warren_runtime::host::Host::open(layout, Default::default())
            .await
            .unwrap(),
    );
    let lc = warren_runtime::lifecycle::Lifecycle::for_host(host.clone())
        .with_busy_wait(Duration::from_millis(200));
    // A turn holds the agent's slot.
    let gate = host
        .quiesce("alice", Duration::from_secs(1), false)
        .await
        .unwrap();
    let err = lc.rename("alice", "ann", GO).await.unwrap_err();
    assert!(
        matches!(err, LifecycleError::Busy { ref alias, .. } if alias == "alice"),
        "{err}"
    );
    assert!(std::fs::read_to_string(dir.path().join("config.toml"))
        .unwrap()
        .contains("[agents.alice]"));
    drop(gate);
    assert!(lc.rename("alice", "ann", GO).await.unwrap().ok);
    // While quiesced, a new turn of the agent cannot start.
    let gate = host
        .quiesce("ann", Duration::from_secs(1), false)
        .await
        .unwrap();
    assert!(host
        .quiesce("ann", Duration::from_millis(50), false)
        .await
        .is_none());
    drop(gate);
}

#[tokio::test]
async fn rerunning_a_finished_rename_converges_and_custom_workspaces_stay() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    build(root).await;
    let custom = tempfile::tempdir().unwrap();
    std::fs::write(custom.path().join("keep.txt"), "mine").unwrap();
    let text = std::fs::read_to_string(root.join("config.toml"))
        .unwrap()
        .replace(
            "[agents.carol.workspace]\n",
            &format!(
                "[agents.carol.workspace]\npath = \"{}\"\n",
                custom.path().display()
            ),
        );
    std::fs::write(root.join("config.toml"), text).unwrap();
    let lc = lifecycle(root).await;
    assert!(lc.rename("carol", "cara", GO).await.unwrap().ok);
    assert_eq!(
        std::fs::read_to_string(custom.path().join("keep.txt")).unwrap(),
        "mine"
    );
    let after = snapshot(root).await;
    // The config already says `cara` and no rename is journaled: a rerun is refused (nothing
    // is merged into `cara`) and changes nothing.
    let again = lc.rename("carol", "cara", GO).await.unwrap_err();
    assert!(matches!(again, LifecycleError::Taken(_)), "{again}");
    assert_eq!(snapshot(root).await, after);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn force_cancels_the_running_turn_and_renames() {
    use warren_testkit::fake_llm::{FakeLlm, Reply};
    let fake = FakeLlm::start(warren_types::ProviderFamily::Openai).unwrap();
    fake.script([Reply::text("slow answer").delay(Duration::from_secs(30))]);
    let t = warren_testkit::TestInstall::with_config(&format!(
        "[risk_profiles.p]\nlevel = \"supervised\"\n\n[agents.slow]\nrisk_profile = \"p\"\nmodel_provider = \"openai.m\"\n\n{}",
        fake.config_block("m")
    ))
    .unwrap();
    let host = Arc::new(
        warren_runtime::host::Host::open(t.layout(), Default::default())
            .await
            .unwrap(),
    );
    let h = host.clone();
    let turn =
        tokio::spawn(async move { h.run("slow", None, "think", TurnTrigger::User, None).await });
    // Wait until the turn holds the agent's slot.
    for _ in 0..500 {
        match host.quiesce("slow", Duration::from_millis(5), false).await {
            Some(g) => drop(g),
            None => break,
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let lc = warren_runtime::lifecycle::Lifecycle::for_host(host.clone())
        .with_busy_wait(Duration::from_millis(300));
    let busy = lc.rename("slow", "quick", GO).await.unwrap_err();
    assert!(matches!(busy, LifecycleError::Busy { .. }), "{busy}");
    let forced = RunOptions {
        dry_run: false,
        force: true,
    };
    let started = std::time::Instant::now();
    let r = lc.rename("slow", "quick", forced).await.unwrap();
    assert!(r.ok, "{r:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let outcome = turn.await.unwrap().unwrap();
    assert_eq!(outcome.status, warren_runtime::turn::TurnStatus::Cancelled);
    assert!(t.read_config().unwrap().contains("[agents.quick]"));
}
