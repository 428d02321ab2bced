//! Unfinished lifecycle operations in the window: a rename that stopped half-way for real (the
//! memory database is a directory when its step runs) shows on the Agents screen with its
//! error, survives a restart of the app, and finishes from the Resume button once the fault is
//! gone; one whose fault is already gone is finished by the app's start with no click.

mod killed;

use crate::harness::{launch, Desktop};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use std::path::{Path, PathBuf};
use warren_config::InstallLayout;

const ALICE: &str = r#"# Pending operation test install.
schema_version = 1

[agents.alice]
risk_profile = "balanced"

[agents.bob]
risk_profile = "balanced"
delegates = ["alice"]

[risk_profiles.balanced]
level = "supervised"
delegation = "allow"
"#;

/// Fills `home` with the install: alice has a workspace file and a memory row.
async fn seed(home: &Path) {
    std::fs::write(home.join("config.toml"), ALICE).unwrap();
    let ws = home.join("agents/alice/workspace");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("draft.md"), "first draft").unwrap();
    let w = warren_api::Warren::open(InstallLayout::new(home));
    w.store_memory("alice", "tone", "alice writes tersely", None, None)
        .await
        .unwrap();
}

/// The SQLite memory store fails for real: `memory.db` (with its WAL files) moves into
/// `aside` and a directory takes its place.
fn break_memory(home: &Path, aside: &Path) {
    let db = InstallLayout::new(home).memory_db();
    std::fs::create_dir_all(aside).unwrap();
    for ext in ["", "-wal", "-shm"] {
        let from = PathBuf::from(format!("{}{ext}", db.display()));
        if from.exists() {
            std::fs::rename(&from, aside.join(format!("memory.db{ext}"))).unwrap();
        }
    }
    std::fs::create_dir(&db).unwrap();
    std::fs::write(db.join("not-a-database"), "x").unwrap();
}

/// Puts the database moved aside by [`break_memory`] back.
fn repair_memory(home: &Path, aside: &Path) {
    let db = InstallLayout::new(home).memory_db();
    std::fs::remove_dir_all(&db).unwrap();
    for ext in ["", "-wal", "-shm"] {
        let from = aside.join(format!("memory.db{ext}"));
        if from.exists() {
            std::fs::rename(&from, format!("{}{ext}", db.display())).unwrap();
        }
    }
}

fn journal_entries(home: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(InstallLayout::new(home).journal_dir()) {
        Ok(rd) => rd
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// Copies the install at `from` into `to` (an existing, empty folder). A database's `-wal` and
/// `-shm` files may vanish while `cp` reads the folder (the seeding handle's connections close
/// in the background and the last one removes them), so a failed copy is tried again.
fn copy_install(from: &Path, to: &Path) {
    for attempt in 0..10 {
        let ok = std::process::Command::new("cp")
            .arg("-a")
            .arg(format!("{}/.", from.display()))
            .arg(to)
            .status()
            .unwrap()
            .success();
        if ok {
            return;
        }
        assert!(attempt < 9, "copying {} failed", from.display());
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

async fn listed(d: &Desktop) -> Vec<String> {
    let mut out = Vec::new();
    for row in d
        .client
        .find_all(Locator::Css("[data-testid=agent-row]"))
        .await
        .unwrap()
    {
        out.push(row.attr("data-alias").await.unwrap().unwrap_or_default());
    }
    out
}

async fn wait_listed(d: &Desktop, want: &[&str]) {
    d.wait_for("[data-testid=agents-table]").await;
    let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
    loop {
        let now = listed(d).await;
        if now == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "agents listed: {now:?}, want {want:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn notice_gone(d: &Desktop) {
    let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
    loop {
        let found = d
            .client
            .find_all(Locator::Css("[data-testid=pending-operations]"))
            .await
            .unwrap();
        if found.is_empty() {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the pending notice is still shown"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn memory_keys(home: &Path, agent: &str) -> Vec<String> {
    let w = warren_api::Warren::open(InstallLayout::new(home));
    let page = w.memory_page(agent, 0, 50).await.unwrap();
    page.items.into_iter().map(|i| i.key).collect()
}

#[test]
fn a_rename_stopped_half_way_is_shown_and_finished_from_the_resume_button() {
    let _serial = serial();
    block_on_mt(async {
        let aside_dir = tempfile::tempdir().unwrap();
        let aside = aside_dir.path().join("aside");
        let seeded = tempfile::tempdir().unwrap();
        seed(seeded.path()).await;
        break_memory(seeded.path(), &aside);
        let d = launch(|home| copy_install(seeded.path(), home)).await;
        wait_listed(&d, &["alice", "bob"]).await;

        // The rename runs from the window and stops at the memory step.
        d.click("[data-alias=alice] [data-testid=agent-rename]")
            .await;
        let input = d.wait_for("[data-testid=rename-input]").await;
        input.send_keys("ann").await.unwrap();
        d.wait_text("[data-testid=rename-error]", str::is_empty)
            .await;
        d.click("[data-testid=rename-submit]").await;
        d.wait_for("[data-testid=lifecycle-result][data-what=rename][data-ok=false]")
            .await;
        let err = d
            .wait_text("[data-testid=pending-error]", |t| !t.is_empty())
            .await;
        assert!(err.contains("memory"), "{err}");
        assert_eq!(journal_entries(&d.home).len(), 1);

        // The app stops and starts again with the fault still there: the start cannot finish
        // the rename, and the window says so.
        let saved = tempfile::tempdir().unwrap();
        copy_install(&d.home, saved.path());
        d.close().await;
        let d = launch(|home| copy_install(saved.path(), home)).await;
        let op = d
            .wait_for("[data-testid=pending-operation][data-kind=rename]")
            .await;
        assert_eq!(
            op.attr("data-aliases").await.unwrap().as_deref(),
            Some("alice ann")
        );
        let what = d
            .wait_text("[data-testid=pending-description]", |t| !t.is_empty())
            .await;
        assert_eq!(what, "rename alice → ann");
        let step = d
            .wait_text("[data-testid=pending-step]", |t| !t.is_empty())
            .await;
        assert!(step.contains("memory moved to the new name"), "{step}");
        let err = d
            .wait_text("[data-testid=pending-error]", |t| !t.is_empty())
            .await;
        assert!(err.contains("memory"), "{err}");
        d.screenshot("pending-rename").await;

        // Resume with the fault still there: it fails again and says why.
        d.click("[data-testid=pending-resume]").await;
        let again = d
            .wait_text("[data-testid=pending-resume-error]", |t| !t.is_empty())
            .await;
        assert!(again.contains("rename alice → ann"), "{again}");
        assert_eq!(journal_entries(&d.home).len(), 1);

        // The fault is gone: Resume finishes the rename.
        repair_memory(&d.home, &aside);
        d.click("[data-testid=pending-resume]").await;
        notice_gone(&d).await;
        wait_listed(&d, &["ann", "bob"]).await;
        assert!(journal_entries(&d.home).is_empty());
        let text = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(
            text.contains("[agents.ann]") && !text.contains("[agents.alice]"),
            "{text}"
        );
        assert!(text.contains("delegates = [\"ann\"]"), "{text}");
        assert_eq!(
            std::fs::read_to_string(d.home.join("agents/ann/workspace/draft.md")).unwrap(),
            "first draft"
        );
        assert!(!d.home.join("agents/alice/workspace").exists());
        assert_eq!(memory_keys(&d.home, "ann").await, vec!["tone".to_string()]);
        let old = warren_api::Warren::open(InstallLayout::new(&d.home))
            .memory_page("alice", 0, 50)
            .await
            .unwrap_err();
        assert_eq!(old.code, warren_api::ErrorCode::NotFound, "{old:?}");
        d.close().await;
    });
}

#[test]
fn a_pending_rename_whose_fault_is_gone_is_finished_when_the_app_starts() {
    let _serial = serial();
    block_on_mt(async {
        let aside_dir = tempfile::tempdir().unwrap();
        let aside = aside_dir.path().join("aside");
        let seeded = tempfile::tempdir().unwrap();
        seed(seeded.path()).await;
        break_memory(seeded.path(), &aside);
        {
            let w = warren_api::Warren::open(InstallLayout::new(seeded.path()));
            let r = w.rename_agent("alice", "ann", false, false).await.unwrap();
            assert!(!r.ok, "{r:?}");
        }
        assert_eq!(journal_entries(seeded.path()).len(), 1);
        repair_memory(seeded.path(), &aside);

        let d = launch(|home| copy_install(seeded.path(), home)).await;
        wait_listed(&d, &["ann", "bob"]).await;
        assert!(journal_entries(&d.home).is_empty());
        notice_gone(&d).await;
        assert_eq!(memory_keys(&d.home, "ann").await, vec!["tone".to_string()]);
        assert!(std::fs::read_to_string(d.home.join("config.toml"))
            .unwrap()
            .contains("[agents.ann]"));
        d.close().await;
    });
}
