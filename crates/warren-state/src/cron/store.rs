//! `<install>/data/cron.db`: jobs created at runtime, the scheduler's cursor per job, and the
//! history of every run. Jobs and runs are keyed by the agent's stable id from `sessions.db`
//! (table `agents`), so a rename needs no change here; the lifecycle service lists, exports,
//! purges and re-attributes them per agent.

use super::{parse_schedule, CronError};
use crate::db::{agent_id, row_error, DbError};
use crate::sessions::rfc3339;
use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::SqlitePool;
use std::path::Path;

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS jobs (
        id TEXT PRIMARY KEY,
        agent_id TEXT NOT NULL,
        schedule TEXT NOT NULL,
        prompt TEXT NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS jobs_agent ON jobs(agent_id)",
    "CREATE TABLE IF NOT EXISTS cursors (
        job TEXT PRIMARY KEY,
        last_checked TEXT NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS runs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        job TEXT NOT NULL,
        source TEXT NOT NULL,
        agent_id TEXT,
        scheduled_for TEXT NOT NULL,
        missed INTEGER NOT NULL DEFAULT 0,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        status TEXT NOT NULL,
        turn_id TEXT,
        error TEXT
    )",
    "CREATE INDEX IF NOT EXISTS runs_job ON runs(job, id)",
    "CREATE INDEX IF NOT EXISTS runs_agent ON runs(agent_id)",
];

/// A job created at runtime.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct CronJob {
    /// Job id (`rt-<uuid>`).
    pub id: String,
    /// The agent's stable id.
    pub agent_id: String,
    /// The agent's current alias (None once the agent is gone from `sessions.db`).
    #[sqlx(skip)]
    pub agent: Option<String>,
    /// The cron expression (UTC).
    pub schedule: String,
    /// The prompt of each run.
    pub prompt: String,
    /// Whether it runs.
    pub enabled: bool,
    /// Creation time.
    pub created_at: String,
}

/// One run of a job.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct CronRun {
    /// Run id.
    pub id: i64,
    /// The job: a config job's id, or a runtime job's `rt-<uuid>`.
    pub job: String,
    /// `config` or `runtime`.
    pub source: String,
    /// The agent's stable id.
    pub agent_id: Option<String>,
    /// The due time this run stands for (the latest one when runs were missed).
    pub scheduled_for: String,
    /// Due times skipped because the host was asleep or down (one catch-up run covers them).
    pub missed: i64,
    /// Start time.
    pub started_at: String,
    /// End time.
    pub ended_at: Option<String>,
    /// `running`, `completed`, `failed`, `cancelled`, `error` (the turn could not start) or
    /// `skipped` (the previous run was still going).
    pub status: String,
    /// The turn, when one ran.
    pub turn_id: Option<String>,
    /// What went wrong.
    pub error: Option<String>,
}

/// Counts of one agent's rows, for the lifecycle service.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CronCounts {
    /// Runtime jobs.
    pub jobs: u64,
    /// Runs.
    pub runs: u64,
}

/// Everything of one agent in `cron.db`, as exported before a purge.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CronExport {
    /// The agent's stable id.
    pub agent_id: String,
    /// Its runtime jobs.
    pub jobs: Vec<CronJob>,
    /// Its run history.
    pub runs: Vec<CronRun>,
}

/// The cron database, with the sessions database for agent ids.
#[derive(Clone)]
pub struct CronStore {
    pool: SqlitePool,
    agents: SqlitePool,
}

/// A sessions-database error as a cron one.
fn cron_error(e: DbError) -> CronError {
    match e {
        DbError::Query(source) | DbError::Open { source, .. } => CronError::Query(source),
        other @ (DbError::OpenSync { .. } | DbError::Sync(_)) => {
            CronError::Query(sqlx::Error::Protocol(other.to_string()))
        }
    }
}

/// The error of a query whose rows decode into [`CronRun`]: a column that does not decode is
/// named with the table `runs` (see [`row_error`]).
fn runs_error(e: sqlx::Error) -> CronError {
    cron_error(row_error(e, |_| "runs"))
}

/// The error of a query whose rows decode into [`CronJob`]: a column that does not decode is
/// named with the table `jobs` (see [`row_error`]).
fn jobs_error(e: sqlx::Error) -> CronError {
    cron_error(row_error(e, |_| "jobs"))
}

fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

impl CronStore {
    /// Opens (creating when missing) `path` and migrates it; `agents` is the sessions pool.
    pub async fn open(path: &Path, agents: SqlitePool) -> Result<Self, CronError> {
        let pool = crate::db::open_sqlite(path, MIGRATIONS, 2)
            .await
            .map_err(|source| CronError::Open {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(CronStore { pool, agents })
    }

    async fn alias_of(&self, id: &str) -> Result<Option<String>, CronError> {
        Ok(sqlx::query_scalar("SELECT alias FROM agents WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.agents)
            .await?)
    }

    /// The stable id of `alias` (created on first use).
    pub async fn agent_id(&self, alias: &str) -> Result<String, CronError> {
        agent_id(&self.agents, alias)
            .await
            .map_err(|e| CronError::Agents(e.to_string()))
    }

    /// A decoded job row with its agent's current alias.
    async fn with_alias(&self, mut job: CronJob) -> Result<CronJob, CronError> {
        job.agent = self.alias_of(&job.agent_id).await?;
        Ok(job)
    }

    /// Creates a job for `agent`; the schedule is checked first.
    pub async fn add_job(
        &self,
        agent: &str,
        schedule: &str,
        prompt: &str,
        now: DateTime<Utc>,
    ) -> Result<CronJob, CronError> {
        parse_schedule(schedule).map_err(|message| CronError::Schedule {
            field: "schedule".into(),
            schedule: schedule.to_string(),
            message,
        })?;
        if prompt.trim().is_empty() {
            return Err(CronError::EmptyPrompt);
        }
        let aid = self.agent_id(agent).await?;
        let id = format!("rt-{}", uuid::Uuid::new_v4());
        sqlx::query(
            "INSERT INTO jobs (id, agent_id, schedule, prompt, enabled, created_at) VALUES (?, ?, ?, ?, 1, ?)",
        )
        .bind(&id)
        .bind(&aid)
        .bind(schedule)
        .bind(prompt)
        .bind(rfc3339(now))
        .execute(&self.pool)
        .await?;
        self.job(&id).await?.ok_or(CronError::UnknownJob(id))
    }

    /// One runtime job.
    pub async fn job(&self, id: &str) -> Result<Option<CronJob>, CronError> {
        match sqlx::query_as::<_, CronJob>("SELECT * FROM jobs WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(jobs_error)?
        {
            Some(job) => Ok(Some(self.with_alias(job).await?)),
            None => Ok(None),
        }
    }

    /// The latest run of `job`, if it ever ran.
    pub async fn last_run(&self, job: &str) -> Result<Option<CronRun>, CronError> {
        sqlx::query_as::<_, CronRun>("SELECT * FROM runs WHERE job = ? ORDER BY id DESC LIMIT 1")
            .bind(job)
            .fetch_optional(&self.pool)
            .await
            .map_err(runs_error)
    }

    /// One run.
    pub async fn run(&self, id: i64) -> Result<Option<CronRun>, CronError> {
        sqlx::query_as::<_, CronRun>("SELECT * FROM runs WHERE id = ?")
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(runs_error)
    }

    /// Runtime jobs, optionally of one agent id, oldest first.
    pub async fn jobs(&self, agent_id: Option<&str>) -> Result<Vec<CronJob>, CronError> {
        let rows = sqlx::query_as::<_, CronJob>(
            "SELECT * FROM jobs WHERE (?1 IS NULL OR agent_id = ?1) ORDER BY created_at, id",
        )
        .bind(agent_id)
        .fetch_all(&self.pool)
        .await
        .map_err(jobs_error)?;
        let mut out = Vec::with_capacity(rows.len());
        for job in rows {
            out.push(self.with_alias(job).await?);
        }
        Ok(out)
    }

    /// Changes a runtime job's schedule and prompt (each checked first); false when no such
    /// job.
    pub async fn update_job(
        &self,
        id: &str,
        schedule: &str,
        prompt: &str,
    ) -> Result<bool, CronError> {
        parse_schedule(schedule).map_err(|message| CronError::Schedule {
            field: "schedule".into(),
            schedule: schedule.to_string(),
            message,
        })?;
        if prompt.trim().is_empty() {
            return Err(CronError::EmptyPrompt);
        }
        let r = sqlx::query("UPDATE jobs SET schedule = ?, prompt = ? WHERE id = ?")
            .bind(schedule)
            .bind(prompt)
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() > 0)
    }

    /// Turns a runtime job on or off; false when no such job.
    pub async fn set_enabled(&self, id: &str, enabled: bool) -> Result<bool, CronError> {
        let r = sqlx::query("UPDATE jobs SET enabled = ? WHERE id = ?")
            .bind(i64::from(enabled))
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() > 0)
    }

    /// Removes a runtime job (its history stays); false when no such job.
    pub async fn remove_job(&self, id: &str) -> Result<bool, CronError> {
        let r = sqlx::query("DELETE FROM jobs WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await?;
        sqlx::query("DELETE FROM cursors WHERE job = ?")
            .bind(id)
            .execute(&self.pool)
            .await?;
        Ok(r.rows_affected() > 0)
    }

    /// The time up to which `job` was checked (None: never seen).
    pub async fn cursor(&self, job: &str) -> Result<Option<DateTime<Utc>>, CronError> {
        let s: Option<String> =
            sqlx::query_scalar("SELECT last_checked FROM cursors WHERE job = ?")
                .bind(job)
                .fetch_optional(&self.pool)
                .await?;
        Ok(s.as_deref().and_then(parse_time))
    }

    /// Records that `job` was checked up to `t`.
    pub async fn set_cursor(&self, job: &str, t: DateTime<Utc>) -> Result<(), CronError> {
        sqlx::query(
            "INSERT INTO cursors (job, last_checked) VALUES (?, ?)
             ON CONFLICT(job) DO UPDATE SET last_checked = excluded.last_checked",
        )
        .bind(job)
        .bind(rfc3339(t))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// The cursors of `jobs` that exist, as `(job, last_checked)` (for a deletion archive).
    pub async fn cursors_of(&self, jobs: &[String]) -> Result<Vec<(String, String)>, CronError> {
        let mut out = Vec::new();
        for job in jobs {
            let t: Option<String> =
                sqlx::query_scalar("SELECT last_checked FROM cursors WHERE job = ?")
                    .bind(job)
                    .fetch_optional(&self.pool)
                    .await?;
            if let Some(t) = t {
                out.push((job.clone(), t));
            }
        }
        Ok(out)
    }

    /// Removes the cursors of `jobs`: the next tick arms each job afresh (its cursor starts
    /// then and nothing runs), so no catch-up run stands for time the job did not exist.
    pub async fn remove_cursors(&self, jobs: &[String]) -> Result<u64, CronError> {
        let mut n = 0;
        for job in jobs {
            n += sqlx::query("DELETE FROM cursors WHERE job = ?")
                .bind(job)
                .execute(&self.pool)
                .await?
                .rows_affected();
        }
        Ok(n)
    }

    /// Records the start of a run; returns its id.
    #[allow(clippy::too_many_arguments)]
    pub async fn start_run(
        &self,
        job: &str,
        source: &str,
        agent_id: Option<&str>,
        scheduled_for: DateTime<Utc>,
        missed: u64,
        status: &str,
        now: DateTime<Utc>,
    ) -> Result<i64, CronError> {
        let r = sqlx::query(
            "INSERT INTO runs (job, source, agent_id, scheduled_for, missed, started_at, status) VALUES (?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(job)
        .bind(source)
        .bind(agent_id)
        .bind(rfc3339(scheduled_for))
        .bind(i64::try_from(missed).unwrap_or(i64::MAX))
        .bind(rfc3339(now))
        .bind(status)
        .execute(&self.pool)
        .await?;
        Ok(r.last_insert_rowid())
    }

    /// Records how a run ended.
    pub async fn finish_run(
        &self,
        run: i64,
        status: &str,
        turn_id: Option<&str>,
        error: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), CronError> {
        sqlx::query(
            "UPDATE runs SET status = ?, turn_id = ?, error = ?, ended_at = ? WHERE id = ?",
        )
        .bind(status)
        .bind(turn_id)
        .bind(error)
        .bind(rfc3339(now))
        .bind(run)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Run history, oldest first, optionally of one job.
    pub async fn runs(&self, job: Option<&str>) -> Result<Vec<CronRun>, CronError> {
        sqlx::query_as::<_, CronRun>(
            "SELECT * FROM runs WHERE (?1 IS NULL OR job = ?1) ORDER BY id",
        )
        .bind(job)
        .fetch_all(&self.pool)
        .await
        .map_err(runs_error)
    }

    /// Counts of an agent's rows.
    pub async fn count_agent(&self, agent_id: &str) -> Result<CronCounts, CronError> {
        let jobs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM jobs WHERE agent_id = ?")
            .bind(agent_id)
            .fetch_one(&self.pool)
            .await?;
        let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs WHERE agent_id = ?")
            .bind(agent_id)
            .fetch_one(&self.pool)
            .await?;
        Ok(CronCounts {
            jobs: u64::try_from(jobs).unwrap_or(0),
            runs: u64::try_from(runs).unwrap_or(0),
        })
    }

    /// Everything of one agent, for an archive.
    pub async fn export_agent(&self, agent_id: &str) -> Result<CronExport, CronError> {
        let runs =
            sqlx::query_as::<_, CronRun>("SELECT * FROM runs WHERE agent_id = ? ORDER BY id")
                .bind(agent_id)
                .fetch_all(&self.pool)
                .await
                .map_err(runs_error)?;
        Ok(CronExport {
            agent_id: agent_id.to_string(),
            jobs: self.jobs(Some(agent_id)).await?,
            runs,
        })
    }

    /// Deletes every job, cursor and run of one agent in one transaction (call only after the
    /// export was written and synced). Returns what was deleted.
    pub async fn purge_agent(&self, agent_id: &str) -> Result<CronCounts, CronError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query("DELETE FROM cursors WHERE job IN (SELECT id FROM jobs WHERE agent_id = ?)")
            .bind(agent_id)
            .execute(&mut *tx)
            .await?;
        let jobs = sqlx::query("DELETE FROM jobs WHERE agent_id = ?")
            .bind(agent_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        let runs = sqlx::query("DELETE FROM runs WHERE agent_id = ?")
            .bind(agent_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(CronCounts { jobs, runs })
    }

    /// Re-attributes one agent's jobs and runs to another id (restore under a new UUID).
    /// A rename needs no call: rows follow the id, whose alias lives in `sessions.db`.
    pub async fn reassign_agent(&self, from: &str, to: &str) -> Result<CronCounts, CronError> {
        let mut tx = self.pool.begin().await?;
        let jobs = sqlx::query("UPDATE jobs SET agent_id = ? WHERE agent_id = ?")
            .bind(to)
            .bind(from)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        let runs = sqlx::query("UPDATE runs SET agent_id = ? WHERE agent_id = ?")
            .bind(to)
            .bind(from)
            .execute(&mut *tx)
            .await?
            .rows_affected();
        tx.commit().await?;
        Ok(CronCounts { jobs, runs })
    }

    /// Re-creates exported jobs under `agent_id` (restore); existing ids are kept as they are.
    pub async fn import_jobs(&self, agent_id: &str, jobs: &[CronJob]) -> Result<u64, CronError> {
        let mut n = 0;
        for j in jobs {
            n += sqlx::query(
                "INSERT INTO jobs (id, agent_id, schedule, prompt, enabled, created_at) VALUES (?, ?, ?, ?, ?, ?)
                 ON CONFLICT(id) DO NOTHING",
            )
            .bind(&j.id)
            .bind(agent_id)
            .bind(&j.schedule)
            .bind(&j.prompt)
            .bind(i64::from(j.enabled))
            .bind(&j.created_at)
            .execute(&self.pool)
            .await?
            .rows_affected();
        }
        Ok(n)
    }
}
