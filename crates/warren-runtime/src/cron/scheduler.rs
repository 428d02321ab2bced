//! The scheduler: on each tick, for every enabled job, the due times since the job's cursor up
//! to now are counted; if there is at least one, the job runs once (a catch-up run records how
//! many due times it stands for) and the cursor moves to now. Time comes from an injected clock,
//! so tests drive it tick by tick.

use crate::approval::{ApprovalAnswer, FixedApprover};
use crate::host::Host;
use crate::turn::TurnStatus;
use chrono::{DateTime, Utc};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use warren_config::load_config;
use warren_policy::Clock;
use warren_state::cron::{parse_schedule, CronError, CronStore};

/// Most due times counted for one job in one tick (an every-second job after a month asleep).
const MAX_COUNTED: usize = 100_000;
/// Longest sleep between ticks of [`Scheduler::run_until`], so new runtime jobs and config
/// edits are seen soon.
const MAX_SLEEP: Duration = Duration::from_secs(30);

/// What one tick did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TickReport {
    /// Runs started (run ids in `cron.db`).
    pub started: Vec<i64>,
    /// Jobs due but still running from an earlier tick (recorded as `skipped`).
    pub skipped: Vec<String>,
    /// Jobs seen for the first time (their cursor starts now; nothing runs).
    pub armed: Vec<String>,
}

struct Job {
    key: String,
    source: &'static str,
    alias: String,
    schedule: String,
    prompt: String,
}

/// Runs cron jobs as turns of a host.
pub struct Scheduler {
    host: Arc<Host>,
    store: CronStore,
    clock: Arc<dyn Clock>,
    running: Arc<Mutex<HashSet<String>>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Scheduler {
    /// A scheduler for `host`'s install, keeping its state in `store`, reading time from `clock`.
    pub fn new(host: Arc<Host>, store: CronStore, clock: Arc<dyn Clock>) -> Self {
        Scheduler {
            host,
            store,
            clock,
            running: Arc::new(Mutex::new(HashSet::new())),
            tasks: Mutex::new(Vec::new()),
        }
    }

    /// The store.
    pub fn store(&self) -> &CronStore {
        &self.store
    }

    fn now(&self) -> DateTime<Utc> {
        self.clock.now().into()
    }

    /// Enabled jobs: `[cron.<id>]` blocks (when the config loads) and runtime jobs.
    async fn jobs(&self) -> Result<Vec<Job>, CronError> {
        self.jobs_including_disabled(false).await
    }

    /// The jobs, the disabled ones too when `disabled`.
    async fn jobs_including_disabled(&self, disabled: bool) -> Result<Vec<Job>, CronError> {
        let mut jobs = Vec::new();
        match load_config(self.host.layout()) {
            Ok(loaded) => {
                for (id, j) in &loaded.config.cron {
                    if j.enabled || disabled {
                        jobs.push(Job {
                            key: id.clone(),
                            source: "config",
                            alias: j.agent.clone(),
                            schedule: j.schedule.clone(),
                            prompt: j.prompt.clone(),
                        });
                    }
                }
            }
            Err(e) => tracing::error!("cron: config jobs skipped this tick: {e}"),
        }
        for j in self.store.jobs(None).await? {
            match (j.enabled || disabled, j.agent) {
                (true, Some(alias)) => jobs.push(Job {
                    key: j.id,
                    source: "runtime",
                    alias,
                    schedule: j.schedule,
                    prompt: j.prompt,
                }),
                (true, None) => tracing::warn!("cron: job {} has no agent; skipped", j.id),
                _ => {}
            }
        }
        Ok(jobs)
    }

    /// One pass over every job at the clock's current time. Started runs go on in the
    /// background; [`Scheduler::wait_idle`] waits for them.
    pub async fn tick(&self) -> Result<TickReport, CronError> {
        let now = self.now();
        let mut report = TickReport::default();
        for job in self.jobs().await? {
            let schedule = match parse_schedule(&job.schedule) {
                Ok(s) => s,
                Err(e) => {
                    tracing::error!("cron.{}.schedule: `{}`: {e}", job.key, job.schedule);
                    continue;
                }
            };
            let Some(cursor) = self.store.cursor(&job.key).await? else {
                self.store.set_cursor(&job.key, now).await?;
                report.armed.push(job.key);
                continue;
            };
            let due: Vec<DateTime<Utc>> = schedule
                .after(&cursor)
                .take_while(|t| *t <= now)
                .take(MAX_COUNTED)
                .collect();
            let Some(last) = due.last().copied() else {
                continue;
            };
            let missed = u64::try_from(due.len() - 1).unwrap_or(u64::MAX);
            // The cursor moves first: a crash during the run never replays a storm.
            self.store.set_cursor(&job.key, now).await?;
            let agent_id = self.store.agent_id(&job.alias).await?;
            if !lock(&self.running).insert(job.key.clone()) {
                self.store
                    .start_run(
                        &job.key,
                        job.source,
                        Some(&agent_id),
                        last,
                        missed,
                        "skipped",
                        now,
                    )
                    .await?;
                report.skipped.push(job.key);
                continue;
            }
            let run = self
                .store
                .start_run(
                    &job.key,
                    job.source,
                    Some(&agent_id),
                    last,
                    missed,
                    "running",
                    now,
                )
                .await?;
            report.started.push(run);
            self.spawn_run(run, job);
        }
        Ok(report)
    }

    fn spawn_run(&self, run: i64, job: Job) {
        let (host, store, clock, running) = (
            self.host.clone(),
            self.store.clone(),
            self.clock.clone(),
            self.running.clone(),
        );
        let task = tokio::spawn(async move {
            execute(&host, &store, clock.as_ref(), run, &job).await;
            lock(&running).remove(&job.key);
        });
        lock(&self.tasks).push(task);
    }

    /// Runs job `key` (a config job's id or a runtime job's id, enabled or not) now, as a turn
    /// with trigger `cron`, and returns its run id once the run is recorded. The scheduler's
    /// cursor is left alone: the next scheduled time still runs. While the job is already
    /// running, the run is recorded as `skipped`.
    pub async fn run_now(&self, key: &str) -> Result<i64, CronError> {
        let job = self
            .jobs_including_disabled(true)
            .await?
            .into_iter()
            .find(|j| j.key == key)
            .ok_or_else(|| CronError::UnknownJob(key.to_string()))?;
        let now = self.now();
        let agent_id = self.store.agent_id(&job.alias).await?;
        if !lock(&self.running).insert(job.key.clone()) {
            return self
                .store
                .start_run(
                    &job.key,
                    job.source,
                    Some(&agent_id),
                    now,
                    0,
                    "skipped",
                    now,
                )
                .await;
        }
        let run = match self
            .store
            .start_run(
                &job.key,
                job.source,
                Some(&agent_id),
                now,
                0,
                "running",
                now,
            )
            .await
        {
            Ok(run) => run,
            Err(e) => {
                lock(&self.running).remove(&job.key);
                return Err(e);
            }
        };
        execute(&self.host, &self.store, self.clock.as_ref(), run, &job).await;
        lock(&self.running).remove(&job.key);
        Ok(run)
    }

    /// Waits until every started run has finished and been recorded.
    pub async fn wait_idle(&self) {
        loop {
            let tasks: Vec<JoinHandle<()>> = lock(&self.tasks).drain(..).collect();
            if tasks.is_empty() {
                return;
            }
            for t in tasks {
                let _ = t.await;
            }
        }
    }

    /// The jobs whose runs are going on now.
    pub fn running_jobs(&self) -> Vec<String> {
        lock(&self.running).iter().cloned().collect()
    }

    /// How long to sleep before the next due time (at most 30 s, at least 1 s).
    pub async fn next_sleep(&self) -> Duration {
        let now = self.now();
        let mut best = MAX_SLEEP;
        if let Ok(jobs) = self.jobs().await {
            for j in jobs {
                if let Some(next) = parse_schedule(&j.schedule)
                    .ok()
                    .and_then(|s| s.after(&now).next())
                {
                    let d = (next - now).to_std().unwrap_or(Duration::ZERO);
                    best = best.min(d);
                }
            }
        }
        best.max(Duration::from_secs(1))
    }

    /// Ticks until `stop` is cancelled, sleeping until the next due time in between. Errors
    /// are logged and the loop goes on.
    pub async fn run_until(&self, stop: CancellationToken) {
        while !stop.is_cancelled() {
            if let Err(e) = self.tick().await {
                tracing::error!("cron tick failed: {e}");
            }
            let sleep = self.next_sleep().await;
            tokio::select! {
                () = tokio::time::sleep(sleep) => {}
                () = stop.cancelled() => {}
            }
        }
    }
}

/// Runs one job as a turn with trigger `cron` (nobody answers approvals: what needs one is
/// denied) and records how the run ended.
async fn execute(host: &Host, store: &CronStore, clock: &dyn Clock, run: i64, job: &Job) {
    let approver = Arc::new(FixedApprover(ApprovalAnswer::no_one()));
    let outcome = host
        .run(
            &job.alias,
            None,
            &job.prompt,
            warren_types::TurnTrigger::Cron,
            Some(approver),
        )
        .await;
    let (status, turn, error) = match outcome {
        Ok(o) => match o.status {
            TurnStatus::Completed => ("completed", Some(o.turn_id), None),
            TurnStatus::Cancelled => ("cancelled", Some(o.turn_id), None),
            TurnStatus::Failed { code, message } => (
                "failed",
                Some(o.turn_id),
                Some(format!("{code}: {message}")),
            ),
        },
        Err(e) => ("error", None, Some(e.to_string())),
    };
    let now: DateTime<Utc> = clock.now().into();
    if let Err(e) = store
        .finish_run(run, status, turn.as_deref(), error.as_deref(), now)
        .await
    {
        tracing::error!(agent = %job.alias, "cron: recording run {run} failed: {e}");
    }
}
