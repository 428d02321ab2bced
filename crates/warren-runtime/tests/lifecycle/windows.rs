//! Crash windows between a side effect and the journal write that records it: a delete cut
//! right after a purge keeps the purged count in its manifest, and a restore cut around its
//! config save takes an `[agents.<alias>]` entry for its own only when it is the entry it wrote.

use super::fixture::{build, copy, lifecycle, memory_rows, snapshot};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use warren_config::InstallLayout;
use warren_runtime::lifecycle::{LifecycleError, RunOptions, StepHook};

const GO: RunOptions = RunOptions {
    dry_run: false,
    force: false,
};

const ARCHIVE: &str = "carol-20260302T093000Z";

/// Where a [`CutAt`] stops the run.
#[derive(Clone, Copy, PartialEq)]
enum Point {
    /// After the step's side effect, before the journal records it.
    BeforeJournal,
    /// After the step was journaled.
    AfterStep,
}

/// Interrupts once, at one named step of one operation.
struct CutAt {
    op: &'static str,
    step: String,
    point: Point,
    fired: AtomicBool,
}

impl CutAt {
    fn new(op: &'static str, step: &str, point: Point) -> Arc<Self> {
        Arc::new(CutAt {
            op,
            step: step.to_string(),
            point,
            fired: AtomicBool::new(false),
        })
    }

    fn cut(&self, point: Point, op: &str, step: &str) -> Result<(), String> {
        if point == self.point
            && op == self.op
            && step == self.step
            && !self.fired.swap(true, Ordering::SeqCst)
        {
            Err(format!("injected interruption at {op} step `{step}`"))
        } else {
            Ok(())
        }
    }
}

impl StepHook for CutAt {
    fn after_step(&self, op: &str, step: &str) -> Result<(), String> {
        self.cut(Point::AfterStep, op, step)
    }
    fn before_journal(&self, op: &str, step: &str) -> Result<(), String> {
        self.cut(Point::BeforeJournal, op, step)
    }
}

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn journal_entries(root: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(InstallLayout::new(root).journal_dir()) {
        Ok(rd) => rd
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn manifest(root: &Path) -> Value {
    json(
        &InstallLayout::new(root)
            .deleted_dir()
            .join(ARCHIVE)
            .join("manifest.json"),
    )
}

#[tokio::test]
async fn a_delete_cut_between_a_purge_and_its_journal_write_keeps_the_purged_count() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path()).await;
    let reference = copy(dir.path());
    assert!(
        lifecycle(reference.path())
            .await
            .delete("carol", GO)
            .await
            .unwrap()
            .ok
    );
    let expected = manifest(reference.path());
    for kind in ["memory", "sessions", "usage", "receipts"] {
        assert!(
            expected["purged"][kind].as_u64().unwrap() > 0,
            "{kind}: {expected}"
        );
        let inst = copy(dir.path());
        let root = inst.path();
        let hook = CutAt::new("delete", &format!("purge:{kind}"), Point::BeforeJournal);
        let lc = lifecycle(root).await.with_hook(hook.clone());
        let err = lc.delete("carol", GO).await.unwrap_err();
        assert!(
            matches!(err, LifecycleError::Interrupted { .. }),
            "{kind}: {err}"
        );
        drop(lc);
        // The purge happened: the rerun finds nothing left to purge.
        if kind == "memory" {
            assert!(memory_rows(root, "carol").await.is_empty());
        }
        let outcomes = lifecycle(root).await.resume_pending().await;
        assert!(outcomes[0].error.is_none(), "{kind}: {outcomes:?}");
        let got = manifest(root);
        assert_eq!(got["purged"], expected["purged"], "{kind}");
        assert_eq!(got["exported"], expected["exported"], "{kind}");
        assert_eq!(
            snapshot(root).await,
            snapshot(reference.path()).await,
            "{kind}"
        );
    }
}

/// Deletes carol, then runs a restore of her archive cut by `hook`.
async fn interrupted_restore(root: &Path, hook: Arc<CutAt>) {
    build(root).await;
    assert!(lifecycle(root).await.delete("carol", GO).await.unwrap().ok);
    let lc = lifecycle(root).await.with_hook(hook.clone());
    let err = lc.restore(ARCHIVE, None, false).await.unwrap_err();
    assert!(matches!(err, LifecycleError::Interrupted { .. }), "{err}");
    assert!(hook.fired.load(Ordering::SeqCst));
}

/// Someone adds another `carol` to config.toml by hand; returns the text written.
fn add_carol_by_hand(root: &Path) -> String {
    let cfg = root.join("config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap() + "\n[agents.carol]\nrisk_profile = \"p\"\n";
    std::fs::write(&cfg, &text).unwrap();
    text
}

/// The restore refused to merge into the hand-written entry and kept everything to retry.
async fn refused_without_merging(root: &Path, config: &str) {
    let err = lifecycle(root)
        .await
        .restore(ARCHIVE, None, false)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, LifecycleError::RestoreConflict { alias, started: true, .. } if alias == "carol"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("config.toml")).unwrap(),
        config,
        "nothing may be merged into the hand-written entry"
    );
    let archive = InstallLayout::new(root).deleted_dir().join(ARCHIVE);
    assert!(archive.join("manifest.json").is_file());
    assert!(archive.join("config-entry.toml").is_file());
    assert_eq!(journal_entries(root).len(), 1);
    // Resuming on start reports it instead of finishing it.
    let outcomes = lifecycle(root).await.resume_pending().await;
    assert_eq!(outcomes.len(), 1, "{outcomes:?}");
    assert!(outcomes[0].error.is_some(), "{outcomes:?}");
    assert_eq!(
        std::fs::read_to_string(root.join("config.toml")).unwrap(),
        config
    );
    assert!(archive.join("manifest.json").is_file());
}

#[tokio::test]
async fn a_restore_cut_after_its_config_marker_never_merges_into_a_hand_written_entry() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    interrupted_restore(
        root,
        CutAt::new("restore", "config_saving", Point::AfterStep),
    )
    .await;
    let entry = &journal_entries(root)[0];
    let steps = json(entry)["steps"].clone();
    assert!(
        steps
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("config_saving")),
        "{steps}"
    );
    let text = add_carol_by_hand(root);
    refused_without_merging(root, &text).await;
}

#[tokio::test]
async fn a_restore_marker_written_without_what_it_saves_never_merges() {
    // A journal whose marker says only that a save was about to happen (as written by a
    // restore that crashed between the marker and the save).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    interrupted_restore(
        root,
        CutAt::new("restore", "import:receipts", Point::AfterStep),
    )
    .await;
    let path = &journal_entries(root)[0];
    let mut entry = json(path);
    entry["steps"]
        .as_array_mut()
        .unwrap()
        .push(Value::from("config_saving"));
    std::fs::write(path, serde_json::to_vec_pretty(&entry).unwrap()).unwrap();
    let text = add_carol_by_hand(root);
    refused_without_merging(root, &text).await;
}

#[tokio::test]
async fn a_restore_cut_around_its_own_config_save_converges() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path()).await;
    assert!(
        lifecycle(dir.path())
            .await
            .delete("carol", GO)
            .await
            .unwrap()
            .ok
    );
    let reference = copy(dir.path());
    let r = lifecycle(reference.path())
        .await
        .restore(ARCHIVE, None, false)
        .await
        .unwrap();
    assert!(r.ok, "{r:?}");
    let expected = snapshot(reference.path()).await;
    // Cut after the marker (nothing saved yet), and after the save (the entry under the alias
    // is the restore's own); both a rerun and a resume on start finish it.
    for (step, point) in [
        ("config_saving", Point::AfterStep),
        ("config", Point::BeforeJournal),
    ] {
        for rerun in [true, false] {
            let inst = copy(dir.path());
            let root = inst.path();
            let lc = lifecycle(root)
                .await
                .with_hook(CutAt::new("restore", step, point));
            let err = lc.restore(ARCHIVE, None, false).await.unwrap_err();
            assert!(matches!(err, LifecycleError::Interrupted { .. }), "{err}");
            drop(lc);
            if step == "config" {
                let cfg = std::fs::read_to_string(root.join("config.toml")).unwrap();
                assert!(cfg.contains("[agents.carol]"), "saved before the cut");
            }
            let fresh = lifecycle(root).await;
            if rerun {
                let r = fresh.restore(ARCHIVE, None, false).await.unwrap();
                assert!(r.ok, "{step}: {r:?}");
            } else {
                let outcomes = fresh.resume_pending().await;
                assert!(outcomes[0].error.is_none(), "{step}: {outcomes:?}");
            }
            assert_eq!(snapshot(root).await, expected, "{step} rerun={rerun}");
        }
    }
}

#[tokio::test]
async fn a_restore_cut_after_its_config_save_still_keeps_the_archive_when_a_cron_job_did_not_come_back(
) {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path()).await;
    assert!(
        lifecycle(dir.path())
            .await
            .delete("carol", GO)
            .await
            .unwrap()
            .ok
    );
    // While carol is archived, her cron id `sweep` is taken by a job of bob's: the restore
    // cannot bring that job back and must keep the archive.
    let cfg = dir.path().join("config.toml");
    let mut text = std::fs::read_to_string(&cfg).unwrap();
    text.push_str(
        "\n[cron.sweep]\nagent = \"bob\"\nschedule = \"0 4 * * *\"\nprompt = \"bob's sweep\"\n",
    );
    std::fs::write(&cfg, text).unwrap();
    let reference = copy(dir.path());
    let r = lifecycle(reference.path())
        .await
        .restore(ARCHIVE, None, false)
        .await
        .unwrap();
    assert!(
        r.warnings
            .iter()
            .any(|w| w.contains("cron job `sweep` not restored")),
        "{r:?}"
    );
    let expected = snapshot(reference.path()).await;
    assert!(
        InstallLayout::new(reference.path())
            .deleted_dir()
            .join(ARCHIVE)
            .exists(),
        "the uninterrupted restore keeps the archive"
    );
    for rerun in [true, false] {
        let inst = copy(dir.path());
        let root = inst.path();
        let lc =
            lifecycle(root)
                .await
                .with_hook(CutAt::new("restore", "config", Point::BeforeJournal));
        let err = lc.restore(ARCHIVE, None, false).await.unwrap_err();
        assert!(matches!(err, LifecycleError::Interrupted { .. }), "{err}");
        drop(lc);
        let fresh = lifecycle(root).await;
        if rerun {
            fresh.restore(ARCHIVE, None, false).await.unwrap();
        } else {
            fresh.resume_pending().await;
        }
        assert!(
            InstallLayout::new(root)
                .deleted_dir()
                .join(ARCHIVE)
                .exists(),
            "rerun={rerun}: the archive was removed"
        );
        assert_eq!(snapshot(root).await, expected, "rerun={rerun}");
    }
}
