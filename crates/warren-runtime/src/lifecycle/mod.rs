//! The lifecycle service (rules §8): rename, delete with archive, and restore of agents. The
//! desktop UI and the `warren agents` CLI both call it through `warren-api`.
//!
//! Every operation quiesces the agent, makes the config change durable first (atomic save),
//! then runs the owned-state side effects one journaled step at a time. A crash or failure
//! leaves the journal entry behind; [`Lifecycle::resume_pending`] or rerunning the command
//! finishes it, and every step is idempotent so a rerun converges.

pub mod cron_state;
mod delete;
pub mod owned;
pub mod paused_state;
mod rename;
mod restore;
pub mod secrets_state;

pub use restore::list_archives;

pub use cron_state::CronJobsState;
pub use owned::{AgentState, OwnedState, OwnedStateError, SessionsDbKind};
pub use paused_state::PausedState;
pub use secrets_state::SecretsState;
// The service's own signatures name these (its plans, reports, errors, journal entries and
// test hooks); they live with the journal in `warren_state::lifecycle`.
pub use warren_state::lifecycle::{
    ArchiveInfo, FailExport, InterruptAfter, InterruptBeforeJournal, JournalEntry, LifecycleError,
    LifecycleReport, Manifest, NoInterrupt, Operation, OperationKind, Plan, PlannedMove,
    PlannedReference, RefAction, StepHook,
};

use async_trait::async_trait;
use sqlx::SqlitePool;
use std::any::Any;
use std::sync::Arc;
use std::time::Duration;
use warren_config::{ConfigStore, InstallLayout};
use warren_memory::{Clock, MemoryStores, SystemClock};
use warren_state::lifecycle::{refuse_if_pending, Journal};

use crate::host::Host;

/// How long a running turn is awaited before `agent_busy` (rules §8).
pub const BUSY_WAIT: Duration = Duration::from_secs(30);

/// Stops new turns of an agent while an operation runs.
#[async_trait]
pub trait Quiescer: Send + Sync {
    /// Returns a guard once no turn of `alias` runs (waiting up to `wait`, cancelling first
    /// when `force`), or `None` when a turn is still running.
    async fn quiesce(
        &self,
        alias: &str,
        wait: Duration,
        force: bool,
    ) -> Option<Box<dyn Any + Send>>;
}

#[async_trait]
impl Quiescer for Host {
    async fn quiesce(
        &self,
        alias: &str,
        wait: Duration,
        force: bool,
    ) -> Option<Box<dyn Any + Send>> {
        Host::quiesce(self, alias, wait, force)
            .await
            .map(|g| Box::new(g) as Box<dyn Any + Send>)
    }
}

/// Options of a rename or delete.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Only compute the plan.
    pub dry_run: bool,
    /// Cancel a running turn instead of waiting for it.
    pub force: bool,
}

/// What resuming one journal entry gave.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ResumeOutcome {
    /// The journal entry id.
    pub journal: String,
    /// The operation (`delete alice`).
    pub operation: String,
    /// The report when it finished.
    pub report: Option<LifecycleReport>,
    /// Why it could not be finished.
    pub error: Option<String>,
}

/// The lifecycle service of one install.
pub struct Lifecycle {
    layout: InstallLayout,
    store: ConfigStore,
    memory: Arc<MemoryStores>,
    pool: SqlitePool,
    extra: Vec<Arc<dyn OwnedState>>,
    quiescer: Option<Arc<dyn Quiescer>>,
    hook: Arc<dyn StepHook>,
    clock: Arc<dyn Clock>,
    busy_wait: Duration,
}

impl Lifecycle {
    /// A service over the install's memory stores and sessions database, without quiescing
    /// (for processes that run no turns) and with the system clock.
    pub fn new(layout: InstallLayout, memory: Arc<MemoryStores>, pool: SqlitePool) -> Self {
        Lifecycle {
            store: ConfigStore::new(layout.clone()),
            layout,
            memory,
            pool,
            extra: Vec::new(),
            quiescer: None,
            hook: Arc::new(NoInterrupt),
            clock: Arc::new(SystemClock),
            busy_wait: BUSY_WAIT,
        }
    }

    /// The service of a running host: its stores, and its turn slots for quiescing.
    pub fn for_host(host: Arc<Host>) -> Self {
        let mut lc = Lifecycle::new(
            host.layout().clone(),
            host.memory().clone(),
            host.sessions().pool().clone(),
        );
        lc.quiescer = Some(host);
        lc
    }

    /// Adds an owned-state participant (runtime cron jobs, ACP sessions, ...).
    pub fn with_participant(mut self, p: Arc<dyn OwnedState>) -> Self {
        self.extra.push(p);
        self
    }

    /// Uses `q` to quiesce agents.
    pub fn with_quiescer(mut self, q: Arc<dyn Quiescer>) -> Self {
        self.quiescer = Some(q);
        self
    }

    /// Consults `hook` after every journaled step (fault-injection tests).
    pub fn with_hook(mut self, hook: Arc<dyn StepHook>) -> Self {
        self.hook = hook;
        self
    }

    /// Uses `clock` for archive names and times.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Waits `wait` for a running turn instead of 30 s.
    pub fn with_busy_wait(mut self, wait: Duration) -> Self {
        self.busy_wait = wait;
        self
    }

    /// The install.
    pub fn layout(&self) -> &InstallLayout {
        &self.layout
    }

    fn journal(&self) -> Journal {
        Journal::new(self.layout.journal_dir())
    }

    /// Every participant in the order they are exported, purged and restored.
    pub fn participants(&self) -> Vec<Arc<dyn OwnedState>> {
        let mut v: Vec<Arc<dyn OwnedState>> = vec![
            Arc::new(owned::MemoryState::new(self.memory.clone())),
            Arc::new(owned::SessionsDbState::new(
                self.pool.clone(),
                SessionsDbKind::Sessions,
            )),
            Arc::new(owned::SessionsDbState::new(
                self.pool.clone(),
                SessionsDbKind::Usage,
            )),
            Arc::new(owned::SessionsDbState::new(
                self.pool.clone(),
                SessionsDbKind::Receipts,
            )),
        ];
        v.extend(self.extra.iter().cloned());
        v
    }

    async fn quiesce(
        &self,
        aliases: &[&str],
        force: bool,
    ) -> Result<Vec<Box<dyn Any + Send>>, LifecycleError> {
        let mut guards = Vec::new();
        let Some(q) = &self.quiescer else {
            return Ok(guards);
        };
        for alias in aliases {
            match q.quiesce(alias, self.busy_wait, force).await {
                Some(g) => guards.push(g),
                None => {
                    return Err(LifecycleError::Busy {
                        alias: alias.to_string(),
                        waited_secs: self.busy_wait.as_secs(),
                    })
                }
            }
        }
        Ok(guards)
    }

    /// Refuses a new operation on `aliases` while another unfinished one involves any of them.
    fn refuse_pending(&self, aliases: &[&str]) -> Result<(), LifecycleError> {
        for alias in aliases {
            refuse_if_pending(&self.layout, alias)?;
        }
        Ok(())
    }

    /// Records `step` as done, durably, then asks the hook whether to go on.
    fn step_done(&self, entry: &mut JournalEntry, step: &str) -> Result<(), LifecycleError> {
        let journal = self.journal();
        self.hook
            .before_journal(entry.op.name(), step)
            .map_err(|_| LifecycleError::Interrupted {
                op: entry.op.describe(),
                step: step.to_string(),
                journal: journal.path(&entry.id),
            })?;
        entry.steps.push(step.to_string());
        journal.save(entry)?;
        self.hook
            .after_step(entry.op.name(), step)
            .map_err(|_| LifecycleError::Interrupted {
                op: entry.op.describe(),
                step: step.to_string(),
                journal: journal.path(&entry.id),
            })
    }

    fn new_entry(&self, op: Operation, tag: &str) -> JournalEntry {
        let now = self.clock.now();
        JournalEntry {
            id: format!("{}-{}-{tag}", now.format("%Y%m%dT%H%M%S%.6fZ"), op.name()),
            started_at: warren_state::sessions::rfc3339(now),
            op,
            steps: Vec::new(),
            warnings: Vec::new(),
        }
    }

    fn pending_where(&self, pred: impl Fn(&Operation) -> bool) -> Option<JournalEntry> {
        self.journal()
            .pending()
            .into_iter()
            .filter_map(Result::ok)
            .find(|e| pred(&e.op))
    }

    /// Finishes every unfinished journal entry (on start, and before each operation), or
    /// reports why it cannot be finished.
    pub async fn resume_pending(&self) -> Vec<ResumeOutcome> {
        self.resume_pending_where(|_| true).await
    }

    /// [`Lifecycle::resume_pending`] for the entries whose operation `pred` accepts (a command
    /// about to run leaves its own interrupted run to itself, so it can answer with it).
    pub async fn resume_pending_where(
        &self,
        pred: impl Fn(&Operation) -> bool,
    ) -> Vec<ResumeOutcome> {
        let mut out = Vec::new();
        for item in self.journal().pending() {
            let entry = match item {
                Ok(e) if !pred(&e.op) => continue,
                Ok(e) => e,
                Err(e) => {
                    out.push(ResumeOutcome {
                        journal: String::new(),
                        operation: "unreadable journal entry".into(),
                        report: None,
                        error: Some(e.to_string()),
                    });
                    continue;
                }
            };
            let (id, operation) = (entry.id.clone(), entry.op.describe());
            let result = self.resume_entry(entry, false).await.and_then(|r| {
                // Steps that still cannot complete leave the entry open: not finished.
                if self.journal().path(&id).exists() {
                    Err(LifecycleError::Pending {
                        alias: r.plan.new_alias.clone().unwrap_or(r.plan.alias.clone()),
                        operation: operation.clone(),
                        journal: self.journal().path(&id),
                        hint: r.warnings.join("; "),
                    })
                } else {
                    Ok(r)
                }
            });
            match &result {
                Ok(_) => tracing::info!(journal = %id, "finished interrupted {operation}"),
                Err(e) => tracing::warn!(journal = %id, "cannot finish {operation}: {e}"),
            }
            out.push(ResumeOutcome {
                journal: id,
                operation,
                error: result.as_ref().err().map(ToString::to_string),
                report: result.ok(),
            });
        }
        out
    }

    async fn resume_entry(
        &self,
        entry: JournalEntry,
        force: bool,
    ) -> Result<LifecycleReport, LifecycleError> {
        match entry.op.clone() {
            Operation::Rename(j) => {
                let _g = self.quiesce(&[&j.old, &j.new], force).await?;
                self.run_rename(entry, None).await
            }
            Operation::Delete(j) => {
                let _g = self.quiesce(&[&j.alias], force).await?;
                self.run_delete(entry, None).await
            }
            Operation::Restore(j) => {
                let _g = self.quiesce(&[&j.alias], force).await?;
                self.run_restore(entry, None).await
            }
        }
    }
}
