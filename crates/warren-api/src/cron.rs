//! Cron jobs as the CLI (`warren cron …`) and the desktop app see them: list, check (field
//! errors and the next five run times), add, edit, enable/disable, remove and run now.
//! Runtime jobs live in `data/cron.db`; `[cron.<id>]` blocks of `config.toml` are listed too,
//! marked read-only (they change by editing the config).

use crate::Warren;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use warren_runtime::cron::Scheduler;
use warren_state::cron::{check_schedule, next_times, CronError, CronRun, CronStore};
use warren_types::{ApiError, ErrorCode, UnknownCode};

/// How many run times a preview shows.
pub const PREVIEW_RUNS: usize = 5;

/// Where a job is declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum CronSource {
    /// A `[cron.<id>]` block of `config.toml` (read-only here).
    Config,
    /// Created at runtime, stored in `data/cron.db`.
    Runtime,
}

/// How a run of a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum CronRunStatus {
    /// Its turn is running.
    Running,
    /// Its turn completed.
    Completed,
    /// Its turn failed.
    Failed,
    /// Its turn was cancelled.
    Cancelled,
    /// The turn could not start.
    Error,
    /// Not run: the previous run of the job was still going.
    Skipped,
}

impl CronRunStatus {
    /// Every status.
    pub const ALL: [CronRunStatus; 6] = [
        CronRunStatus::Running,
        CronRunStatus::Completed,
        CronRunStatus::Failed,
        CronRunStatus::Cancelled,
        CronRunStatus::Error,
        CronRunStatus::Skipped,
    ];

    /// The wire spelling, also the `status` column of the `runs` table of `cron.db`.
    pub fn as_str(self) -> &'static str {
        match self {
            CronRunStatus::Running => "running",
            CronRunStatus::Completed => "completed",
            CronRunStatus::Failed => "failed",
            CronRunStatus::Cancelled => "cancelled",
            CronRunStatus::Error => "error",
            CronRunStatus::Skipped => "skipped",
        }
    }
}

impl std::str::FromStr for CronRunStatus {
    type Err = UnknownCode;

    fn from_str(s: &str) -> Result<Self, UnknownCode> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| UnknownCode::new("cron run status", s))
    }
}

impl std::fmt::Display for CronRunStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One run of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CronRunView {
    /// Run id.
    pub id: u32,
    /// The job.
    pub job: String,
    /// The due time it stands for (RFC 3339); a run started by hand: its start.
    pub scheduled_for: String,
    /// Due times a catch-up run stands for beyond this one.
    pub missed: u32,
    /// Start time.
    pub started_at: String,
    /// End time, once it ended.
    pub ended_at: Option<String>,
    /// How it stands.
    pub status: CronRunStatus,
    /// The turn, when one ran.
    pub turn_id: Option<String>,
    /// What went wrong.
    pub error: Option<String>,
}

/// A job with its next run times and its latest run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CronJobView {
    /// The id: a config job's key, or `rt-<uuid>`.
    pub id: String,
    /// The agent that runs it (None once a runtime job's agent is gone).
    pub agent: Option<String>,
    /// The cron expression (UTC).
    pub schedule: String,
    /// The prompt of each run.
    pub prompt: String,
    /// Whether it runs on schedule.
    pub enabled: bool,
    /// Where it is declared.
    pub source: CronSource,
    /// True for config jobs: edit `config.toml` to change them.
    pub read_only: bool,
    /// The next five run times (RFC 3339, UTC); empty when disabled.
    pub next_runs: Vec<String>,
    /// The latest run.
    pub last_run: Option<CronRunView>,
}

/// A new runtime job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CronJobRequest {
    /// The agent that runs it.
    pub agent: String,
    /// The cron expression (UTC).
    pub schedule: String,
    /// The prompt of each run.
    pub prompt: String,
    /// Whether it runs on schedule.
    pub enabled: bool,
}

/// A change to a runtime job; fields left out keep their value.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CronJobEdit {
    /// A new cron expression.
    pub schedule: Option<String>,
    /// A new prompt.
    pub prompt: Option<String>,
    /// On or off.
    pub enabled: Option<bool>,
}

/// A field of a job, as a check names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum CronField {
    /// The agent that runs the job.
    Agent,
    /// The cron expression.
    Schedule,
    /// The prompt.
    Prompt,
}

impl CronField {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CronField::Agent => "agent",
            CronField::Schedule => "schedule",
            CronField::Prompt => "prompt",
        }
    }
}

impl std::fmt::Display for CronField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One field of a job that is wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CronFieldError {
    /// The field.
    pub field: CronField,
    /// What is wrong.
    pub message: String,
}

/// What saving a job would do: its field errors (saving is refused while any exist) and the
/// next five run times of its schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CronCheck {
    /// The field errors.
    pub errors: Vec<CronFieldError>,
    /// The next five run times (RFC 3339, UTC); empty when the schedule is invalid.
    pub next_runs: Vec<String>,
}

impl CronCheck {
    /// The check as an error (`invalid_argument`, first error as the message, all as details).
    fn into_result(self) -> Result<Vec<String>, ApiError> {
        match self.errors.first() {
            None => Ok(self.next_runs),
            Some(first) => Err(ApiError::new(
                ErrorCode::InvalidArgument,
                format!("{}: {}", first.field, first.message),
            )
            .with_details(
                self.errors
                    .iter()
                    .map(|e| format!("{}: {}", e.field, e.message))
                    .collect(),
            )),
        }
    }
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn cron_error(e: CronError) -> ApiError {
    let code = match &e {
        CronError::Schedule { .. } | CronError::EmptyPrompt => ErrorCode::InvalidArgument,
        CronError::UnknownJob(_) => ErrorCode::NotFound,
        _ => ErrorCode::Storage,
    };
    ApiError::new(code, e.to_string())
}

fn unknown(id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        format!("cron job `{id}` does not exist (see `warren cron list`)"),
    )
}

fn read_only(id: &str) -> ApiError {
    ApiError::new(
        ErrorCode::InvalidArgument,
        format!(
            "cron job `{id}` is declared in config.toml ([cron.{id}]) and is read-only here; \
             edit config.toml to change it"
        ),
    )
}

/// The next run times of `schedule` after `now`, or the schedule's field error.
fn schedule_check(schedule: &str, now: DateTime<Utc>) -> Result<Vec<String>, CronFieldError> {
    match check_schedule(schedule) {
        Ok(s) => Ok(next_times(&s, now, PREVIEW_RUNS)
            .into_iter()
            .map(time)
            .collect()),
        Err(e) => Err(CronFieldError {
            field: CronField::Schedule,
            message: format!("invalid cron expression `{schedule}`: {e}"),
        }),
    }
}

/// The view of a stored run; a status this version does not know is a storage error naming
/// the run.
fn run_view(r: CronRun) -> Result<CronRunView, ApiError> {
    let status = r.status.parse().map_err(|e: UnknownCode| {
        ApiError::new(ErrorCode::Storage, format!("cron run {}: {e}", r.id))
    })?;
    Ok(CronRunView {
        id: u32::try_from(r.id).unwrap_or(u32::MAX),
        job: r.job,
        scheduled_for: r.scheduled_for,
        missed: u32::try_from(r.missed).unwrap_or(u32::MAX),
        started_at: r.started_at,
        ended_at: r.ended_at,
        status,
        turn_id: r.turn_id,
        error: r.error,
    })
}

impl Warren {
    async fn cron_store(&self) -> Result<CronStore, ApiError> {
        let host = self.host().await?;
        CronStore::open(&self.layout().cron_db(), host.sessions().pool().clone())
            .await
            .map_err(cron_error)
    }

    async fn cron_now(&self) -> Result<DateTime<Utc>, ApiError> {
        Ok(self.host().await?.kit().clock.now().into())
    }

    /// The next five run times of `schedule` (UTC), or an `invalid_argument` error naming the
    /// bad field of the expression.
    pub fn cron_next(&self, schedule: &str) -> Result<Vec<String>, ApiError> {
        schedule_check(schedule, Utc::now()).map_err(|e| {
            ApiError::new(
                ErrorCode::InvalidArgument,
                format!("{}: {}", e.field, e.message),
            )
        })
    }

    /// Checks a new job without saving it: the agent exists, the schedule parses, the prompt
    /// is not empty; and the next five run times.
    pub fn check_cron_job(&self, req: &CronJobRequest) -> Result<CronCheck, ApiError> {
        let config = self.load()?.config;
        let mut errors = Vec::new();
        if req.agent.trim().is_empty() {
            errors.push(CronFieldError {
                field: CronField::Agent,
                message: "choose the agent that runs the job".into(),
            });
        } else if !config.agents.contains_key(&req.agent) {
            errors.push(CronFieldError {
                field: CronField::Agent,
                message: crate::errors::unknown_agent_message(&config, &req.agent),
            });
        }
        let next_runs = match schedule_check(&req.schedule, Utc::now()) {
            Ok(n) => n,
            Err(e) => {
                errors.push(e);
                Vec::new()
            }
        };
        if req.prompt.trim().is_empty() {
            errors.push(CronFieldError {
                field: CronField::Prompt,
                message: "a cron job needs a non-empty prompt".into(),
            });
        }
        Ok(CronCheck { errors, next_runs })
    }

    /// Every job (config jobs first, read-only), optionally of one agent.
    pub async fn cron_jobs(&self, agent: Option<&str>) -> Result<Vec<CronJobView>, ApiError> {
        let config = self.load()?.config;
        if let Some(a) = agent {
            if !config.agents.contains_key(a) {
                return Err(crate::errors::unknown_agent(&config, a));
            }
        }
        let store = self.cron_store().await?;
        let now = self.cron_now().await?;
        let mut out = Vec::new();
        for (id, j) in &config.cron {
            if agent.is_some_and(|a| a != j.agent) {
                continue;
            }
            out.push(CronJobView {
                id: id.clone(),
                agent: Some(j.agent.clone()),
                schedule: j.schedule.clone(),
                prompt: j.prompt.clone(),
                enabled: j.enabled,
                source: CronSource::Config,
                read_only: true,
                next_runs: next_if(j.enabled, &j.schedule, now),
                last_run: store
                    .last_run(id)
                    .await
                    .map_err(cron_error)?
                    .map(run_view)
                    .transpose()?,
            });
        }
        let agent_id = match agent {
            Some(a) => Some(store.agent_id(a).await.map_err(cron_error)?),
            None => None,
        };
        for j in store.jobs(agent_id.as_deref()).await.map_err(cron_error)? {
            let last_run = store
                .last_run(&j.id)
                .await
                .map_err(cron_error)?
                .map(run_view)
                .transpose()?;
            out.push(CronJobView {
                next_runs: next_if(j.enabled, &j.schedule, now),
                id: j.id,
                agent: j.agent,
                schedule: j.schedule,
                prompt: j.prompt,
                enabled: j.enabled,
                source: CronSource::Runtime,
                read_only: false,
                last_run,
            });
        }
        Ok(out)
    }

    /// One job.
    pub async fn cron_job(&self, id: &str) -> Result<CronJobView, ApiError> {
        self.cron_jobs(None)
            .await?
            .into_iter()
            .find(|j| j.id == id)
            .ok_or_else(|| unknown(id))
    }

    /// Creates a runtime job after [`Warren::check_cron_job`] passes. The job's first run is
    /// its first due time after now.
    pub async fn add_cron_job(&self, req: &CronJobRequest) -> Result<CronJobView, ApiError> {
        self.check_cron_job(req)?.into_result()?;
        let store = self.cron_store().await?;
        let now = self.cron_now().await?;
        let job = store
            .add_job(&req.agent, &req.schedule, &req.prompt, now)
            .await
            .map_err(cron_error)?;
        // Armed now: nothing runs for time before the job existed.
        store.set_cursor(&job.id, now).await.map_err(cron_error)?;
        if !req.enabled {
            store
                .set_enabled(&job.id, false)
                .await
                .map_err(cron_error)?;
        }
        self.cron_job(&job.id).await
    }

    /// What `edit` would make of job `id`: the job as it would be, with its field errors.
    /// Config jobs are refused (read-only).
    pub async fn check_cron_edit(
        &self,
        id: &str,
        edit: &CronJobEdit,
    ) -> Result<(CronJobRequest, CronCheck), ApiError> {
        let current = self.cron_job(id).await?;
        if current.read_only {
            return Err(read_only(id));
        }
        let req = CronJobRequest {
            agent: current.agent.unwrap_or_default(),
            schedule: edit.schedule.clone().unwrap_or(current.schedule),
            prompt: edit.prompt.clone().unwrap_or(current.prompt),
            enabled: edit.enabled.unwrap_or(current.enabled),
        };
        let check = self.check_cron_job(&req)?;
        Ok((req, check))
    }

    /// Changes a runtime job. A new schedule, or turning the job on, re-arms it: its next run
    /// is the first due time after now (no catch-up run for the time it was off).
    pub async fn edit_cron_job(
        &self,
        id: &str,
        edit: &CronJobEdit,
    ) -> Result<CronJobView, ApiError> {
        let before = self.cron_job(id).await?;
        let (req, check) = self.check_cron_edit(id, edit).await?;
        check.into_result()?;
        let store = self.cron_store().await?;
        let now = self.cron_now().await?;
        if !store
            .update_job(id, &req.schedule, &req.prompt)
            .await
            .map_err(cron_error)?
        {
            return Err(unknown(id));
        }
        store
            .set_enabled(id, req.enabled)
            .await
            .map_err(cron_error)?;
        if req.schedule != before.schedule || (req.enabled && !before.enabled) {
            store.set_cursor(id, now).await.map_err(cron_error)?;
        }
        self.cron_job(id).await
    }

    /// Removes a runtime job (its run history stays).
    pub async fn remove_cron_job(&self, id: &str) -> Result<CronJobView, ApiError> {
        let job = self.cron_job(id).await?;
        if job.read_only {
            return Err(read_only(id));
        }
        let store = self.cron_store().await?;
        if !store.remove_job(id).await.map_err(cron_error)? {
            return Err(unknown(id));
        }
        Ok(job)
    }

    /// Runs job `id` now as a turn with trigger `cron` (config jobs too, and disabled ones)
    /// and returns the recorded run once the turn ended. What needs an approval is denied, as
    /// in a scheduled run.
    pub async fn run_cron_job(&self, id: &str) -> Result<CronRunView, ApiError> {
        let job = self.cron_job(id).await?;
        if job.agent.is_none() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("cron job `{id}` has no agent any more"),
            ));
        }
        let host = self.host().await?;
        let store = self.cron_store().await?;
        let clock = host.kit().clock.clone();
        let scheduler = Scheduler::new(host, store.clone(), clock);
        let run = scheduler.run_now(id).await.map_err(cron_error)?;
        store
            .run(run)
            .await
            .map_err(cron_error)?
            .map(run_view)
            .transpose()?
            .ok_or_else(|| ApiError::new(ErrorCode::Storage, format!("cron run {run} vanished")))
    }
}

fn next_if(enabled: bool, schedule: &str, now: DateTime<Utc>) -> Vec<String> {
    if enabled {
        schedule_check(schedule, now).unwrap_or_default()
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_statuses_and_fields_are_their_documented_codes() {
        let runs = [
            (CronRunStatus::Running, "running"),
            (CronRunStatus::Completed, "completed"),
            (CronRunStatus::Failed, "failed"),
            (CronRunStatus::Cancelled, "cancelled"),
            (CronRunStatus::Error, "error"),
            (CronRunStatus::Skipped, "skipped"),
        ];
        crate::test_support::assert_codes(&runs);
        assert_eq!(runs.len(), CronRunStatus::ALL.len());
        for (s, code) in runs {
            assert_eq!(code.parse::<CronRunStatus>().unwrap(), s);
        }
        crate::test_support::assert_codes(&[
            (CronField::Agent, "agent"),
            (CronField::Schedule, "schedule"),
            (CronField::Prompt, "prompt"),
        ]);
    }

    /// A stored run whose status this version does not know is an error naming the run.
    #[test]
    fn a_run_with_an_unknown_status_is_a_storage_error() {
        let run = |status: &str| CronRun {
            id: 7,
            job: "j".into(),
            source: "runtime".into(),
            agent_id: None,
            scheduled_for: "2026-01-01T00:00:00Z".into(),
            missed: 0,
            started_at: "2026-01-01T00:00:00Z".into(),
            ended_at: None,
            status: status.into(),
            turn_id: None,
            error: None,
        };
        assert_eq!(
            run_view(run("skipped")).unwrap().status,
            CronRunStatus::Skipped
        );
        let e = run_view(run("exploded")).unwrap_err();
        assert_eq!(e.code, ErrorCode::Storage);
        assert_eq!(e.message, "cron run 7: unknown cron run status `exploded`");
    }
}
