//! Fault injection: an operation is interrupted after each journaled step in turn (as a crash
//! would stop it); rerunning the same command, or resuming on start, must converge to the state
//! an uninterrupted run reaches, with no data lost. Between the interruption and the resume,
//! every alias involved refuses turns and other lifecycle commands. Each operation runs with
//! memory on SQLite and again on Postgres (`WARREN_TEST_POSTGRES_URL`).

use super::fixture::{lifecycle, lifecycle_parts, pg_url, snapshot, Install};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use warren_runtime::error::HostError;
use warren_runtime::host::{Host, HostEnv};
use warren_runtime::lifecycle::{
    InterruptAfter, InterruptBeforeJournal, Lifecycle, LifecycleError, RunOptions, StepHook,
};
use warren_state::lifecycle::refuse_if_pending;
use warren_testkit::faults::{refuse_pg_writes, Frozen};
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
/// journal knows about it (as a crash would stop it); or, for `Fault`, a real fault from the
/// moment the step is journaled: the whole install made immutable and, on Postgres memory,
/// every write to the schema refused by the server, so the next effect fails as on a broken
/// disk or database and the operation returns its own error.
#[derive(Clone, Copy, Debug)]
enum Cut {
    AfterJournal,
    BeforeJournal,
    Fault,
}

/// After the `n`-th journaled step, puts a real fault in place (see [`Cut::Fault`]); it stays
/// until [`RealFault::lift`].
struct RealFault {
    n: usize,
    seen: AtomicUsize,
    root: PathBuf,
    pg: Option<(String, String)>,
    frozen: Mutex<Option<Frozen>>,
}

impl RealFault {
    fn new(n: usize, inst: &Install) -> Self {
        RealFault {
            n,
            seen: AtomicUsize::new(0),
            root: inst.path().to_path_buf(),
            pg: inst.pg().map(|(u, s)| (u.to_string(), s.to_string())),
            frozen: Mutex::new(None),
        }
    }

    fn fired(&self) -> bool {
        self.seen.load(Ordering::SeqCst) >= self.n
    }

    fn put(&self) {
        if let Some((url, schema)) = &self.pg {
            refuse_pg_writes(url, schema, true);
        }
        *self.frozen.lock().unwrap() = Some(Frozen::freeze(&[&self.root]));
    }

    fn lift(&self) {
        if let Some(f) = self.frozen.lock().unwrap().take() {
            f.thaw();
            if let Some((url, schema)) = &self.pg {
                refuse_pg_writes(url, schema, false);
            }
        }
    }
}

impl StepHook for RealFault {
    fn after_step(&self, _op: &str, _step: &str) -> Result<(), String> {
        if self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.n {
            self.put();
        }
        Ok(())
    }
}

fn hook(cut: Cut, n: usize) -> (Arc<dyn StepHook>, Box<dyn Fn() -> bool>) {
    match cut {
        Cut::Fault => unreachable!("a real fault needs its install: see RealFault"),
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
    let mut faults_met: Vec<String> = Vec::new();
    if let Cut::Fault = cut {
        // The fault is there before the operation starts: it is refused and nothing changes.
        let inst = base.copy().await;
        let before = snapshot(inst.path()).await;
        let lc = lifecycle(inst.path()).await;
        let fault = RealFault::new(0, &inst);
        fault.put();
        let err = run(op, &lc).await;
        drop(lc);
        fault.lift();
        assert!(err.is_err(), "{op:?} ran on a frozen install");
        assert_eq!(
            snapshot(inst.path()).await,
            before,
            "{op:?}: a refused start changed the install"
        );
        run(op, &lifecycle(inst.path()).await).await.unwrap();
        assert_eq!(snapshot(inst.path()).await, expected, "{op:?}");
    }
    let mut n = 1;
    loop {
        let inst = base.copy().await;
        let fault = Arc::new(RealFault::new(n, &inst));
        let (hook, fired) = match cut {
            Cut::Fault => {
                let f = fault.clone();
                (
                    fault.clone() as Arc<dyn StepHook>,
                    Box::new(move || f.fired()) as Box<dyn Fn() -> bool>,
                )
            }
            _ => hook(cut, n),
        };
        let lc = lifecycle(inst.path()).await.with_hook(hook);
        let result = run(op, &lc).await;
        drop(lc);
        fault.lift();
        match result {
            Ok(()) => {
                assert!(
                    !fired(),
                    "{op:?} {cut:?}: step {n} fired but the run succeeded"
                );
                assert_eq!(snapshot(inst.path()).await, expected, "{op:?}");
                break;
            }
            Err(LifecycleError::Interrupted { .. }) if !matches!(cut, Cut::Fault) => {}
            // A real fault is the operation's own error (whatever the effect that met it), never
            // an interruption and never a success.
            Err(e) if matches!(cut, Cut::Fault) && fired() => {
                assert!(
                    !matches!(e, LifecycleError::Interrupted { .. }),
                    "{op:?} step {n}: {e}"
                );
                faults_met.push(format!("after step {n}: {e}"));
            }
            Err(e) => panic!("{op:?} {cut:?}: step {n}: unexpected error {e}"),
        }
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
            // A create of the same alias (`agents create` asks the same gate first).
            let create = refuse_if_pending(&layout, alias);
            assert!(
                matches!(create, Err(LifecycleError::Pending { .. })),
                "{op:?} {cut:?} step {n}: creating `{alias}` was not refused"
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
    if matches!(cut, Cut::Fault) {
        println!(
            "{op:?}: {} real faults met and recovered from:",
            faults_met.len()
        );
        for f in &faults_met {
            println!("  {f}");
        }
    }
}

/// Every step of `op` meets a real fault in turn (see [`Cut::Fault`]); once it is lifted, one
/// Resume (or the same command again) reaches the fault-free end state.
async fn converges_after_a_real_fault_at_every_step(op: Op, pg_url: Option<&str>) {
    if warren_testkit::faults::available() {
        converges(op, Cut::Fault, pg_url).await;
    }
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

#[tokio::test]
async fn rename_converges_after_a_real_fault_at_every_step() {
    converges_after_a_real_fault_at_every_step(Op::Rename, None).await;
}

#[tokio::test]
async fn delete_converges_after_a_real_fault_at_every_step() {
    converges_after_a_real_fault_at_every_step(Op::Delete, None).await;
}

#[tokio::test]
async fn restore_converges_after_a_real_fault_at_every_step() {
    converges_after_a_real_fault_at_every_step(Op::Restore, None).await;
}

#[tokio::test]
async fn lifecycle_on_postgres_memory_converges_after_a_real_fault_at_every_step() {
    if let Some(url) = pg_url() {
        for op in [Op::Rename, Op::Delete, Op::Restore] {
            converges_after_a_real_fault_at_every_step(op, Some(&url)).await;
        }
    }
}
