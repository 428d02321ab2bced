//! Fault injection: an operation is interrupted after each journaled step in turn (as a crash
//! would stop it); rerunning the same command, or resuming on start, must converge to the state
//! an uninterrupted run reaches, with no data lost. Between the interruption and the resume,
//! every alias involved refuses turns and other lifecycle commands. Each operation runs with
//! memory on SQLite and again on Postgres (`WARREN_TEST_POSTGRES_URL`).

use super::fixture::{lifecycle, lifecycle_parts, pg_url, snapshot, Install};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use warren_runtime::host::{Host, HostEnv, HostError};
use warren_runtime::lifecycle::{
    refuse_if_pending, InterruptAfter, InterruptBeforeJournal, Lifecycle, LifecycleError,
    RunOptions, StepHook,
};
use warren_types::TurnTrigger;

const GO: RunOptions = RunOptions {
    dry_run: false,
    force: false,
};

#[derive(Clone, Copy, Debug)]
enum Op {
    Rename,
    Delete,
    Restore,
}

async fn prepare(op: Op, root: &Path) {
    if let Op::Restore = op {
        let (lc, mem) = lifecycle_parts(root).await;
        lc.delete("carol", GO).await.unwrap();
        drop(lc);
        mem.close().await;
    }
}

async fn run(op: Op, lc: &Lifecycle) -> Result<(), LifecycleError> {
    match op {
        Op::Rename => lc.rename("alice", "ann", GO).await.map(|_| ()),
        Op::Delete => lc.delete("carol", GO).await.map(|_| ()),
        Op::Restore => lc
            .restore("carol-20260302T093000Z", None, false)
            .await
            .map(|_| ()),
    }
}

/// Where the run is cut: after a step was journaled, or after its side effect but before the
/// journal knows about it.
#[derive(Clone, Copy, Debug)]
enum Cut {
    AfterJournal,
    BeforeJournal,
}

fn hook(cut: Cut, n: usize) -> (Arc<dyn StepHook>, Box<dyn Fn() -> bool>) {
    match cut {
        Cut::AfterJournal => {
            let h = Arc::new(InterruptAfter::new(n));
            let f = h.clone();
            (h, Box::new(move || f.fired()))
        }
        Cut::BeforeJournal => {
            let h = Arc::new(InterruptBeforeJournal::new(n));
            let f = h.clone();
            (h, Box::new(move || f.fired()))
        }
    }
}

fn involved(op: Op) -> &'static [&'static str] {
    match op {
        Op::Rename => &["alice", "ann"],
        Op::Delete | Op::Restore => &["carol"],
    }
}

/// Every cut of `op`, with memory on SQLite, or on Postgres at `pg_url` (each install, the
/// reference included, then has its own schema).
async fn converges_after_every_step(op: Op, pg_url: Option<&str>) {
    converges(op, Cut::AfterJournal, pg_url).await;
    converges(op, Cut::BeforeJournal, pg_url).await;
}

async fn converges(op: Op, cut: Cut, pg_url: Option<&str>) {
    let base = Install::build(pg_url).await;
    prepare(op, base.path()).await;
    let reference = base.copy().await;
    run(op, &lifecycle(reference.path()).await).await.unwrap();
    let expected = snapshot(reference.path()).await;
    let mut n = 1;
    loop {
        let inst = base.copy().await;
        let (hook, fired) = hook(cut, n);
        let lc = lifecycle(inst.path()).await.with_hook(hook);
        match run(op, &lc).await {
            Ok(()) => {
                assert!(!fired(), "{op:?}: step {n} fired but the run succeeded");
                assert_eq!(snapshot(inst.path()).await, expected, "{op:?}");
                break;
            }
            Err(LifecycleError::Interrupted { .. }) => {}
            Err(e) => panic!("{op:?} {cut:?}: step {n}: unexpected error {e}"),
        }
        drop(lc);
        // Before the resume, every alias involved is refused: the gate itself, a turn through
        // the host, and another lifecycle command on it.
        let layout = warren_config::InstallLayout::new(inst.path());
        let host = Host::open(
            layout.clone(),
            HostEnv {
                home: Some(inst.path().join("home")),
                vars: BTreeMap::new(),
            },
        )
        .await
        .unwrap();
        let other = lifecycle(inst.path()).await;
        for alias in involved(op) {
            assert!(
                matches!(
                    refuse_if_pending(&layout, alias),
                    Err(LifecycleError::Pending { .. })
                ),
                "{op:?} {cut:?} step {n}: `{alias}` is not blocked"
            );
            let turn = host.run(alias, None, "hi", TurnTrigger::User, None).await;
            assert!(
                matches!(turn, Err(HostError::LifecyclePending(_))),
                "{op:?} {cut:?} step {n}: a turn of `{alias}` was not refused: {:?}",
                turn.err()
            );
            let rename = other.rename(alias, "zed", GO).await;
            assert!(
                matches!(rename, Err(LifecycleError::Pending { .. })),
                "{op:?} {cut:?} step {n}: a rename of `{alias}` was not refused: {rename:?}"
            );
        }
        drop(other);
        drop(host);
        // Half the time the same command is run again, half the time Warren "restarts".
        let fresh = lifecycle(inst.path()).await;
        if n % 2 == 0 {
            run(op, &fresh)
                .await
                .unwrap_or_else(|e| panic!("{op:?} rerun after step {n}: {e}"));
        } else {
            let outcomes = fresh.resume_pending().await;
            assert_eq!(outcomes.len(), 1, "{op:?} after step {n}: {outcomes:?}");
            assert!(
                outcomes[0].error.is_none(),
                "{op:?} after step {n}: {outcomes:?}"
            );
        }
        let got = snapshot(inst.path()).await;
        if got != expected {
            let diff: Vec<_> = got
                .lines()
                .zip(expected.lines())
                .filter(|(a, b)| a != b)
                .take(5)
                .collect();
            panic!("{op:?} {cut:?}: interrupted at step {n}, the state differs: {diff:?}");
        }
        n += 1;
        assert!(n < 40, "{op:?}: too many steps");
    }
    assert!(n > 5, "{op:?}: only {n} steps were exercised");
}

#[tokio::test]
async fn rename_converges_after_an_interruption_at_every_step() {
    converges_after_every_step(Op::Rename, None).await;
}

#[tokio::test]
async fn delete_converges_after_an_interruption_at_every_step() {
    converges_after_every_step(Op::Delete, None).await;
}

#[tokio::test]
async fn restore_converges_after_an_interruption_at_every_step() {
    converges_after_every_step(Op::Restore, None).await;
}

#[tokio::test]
async fn rename_on_postgres_memory_converges_after_an_interruption_at_every_step() {
    if let Some(url) = pg_url() {
        converges_after_every_step(Op::Rename, Some(&url)).await;
    }
}

#[tokio::test]
async fn delete_on_postgres_memory_converges_after_an_interruption_at_every_step() {
    if let Some(url) = pg_url() {
        converges_after_every_step(Op::Delete, Some(&url)).await;
    }
}

#[tokio::test]
async fn restore_on_postgres_memory_converges_after_an_interruption_at_every_step() {
    if let Some(url) = pg_url() {
        converges_after_every_step(Op::Restore, Some(&url)).await;
    }
}
