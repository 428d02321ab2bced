//! `warren cron list | next | add | edit | rm | run`: runtime cron jobs (config jobs are listed,
//! read-only). `add` and `edit` print the next five run times; `--dry-run` only checks.

use super::Ctx;
use serde::Serialize;
use std::process::ExitCode;
use warren_api::cron::{CronJobEdit, CronJobRequest, CronJobView, CronRunStatus, CronRunView};
use warren_api::{ApiError, ErrorCode};

/// `warren cron` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Every cron job (config jobs marked read-only), with its next run times.
    List {
        /// Only this agent's jobs.
        #[arg(long)]
        agent: Option<String>,
    },
    /// The next five run times of a cron expression (UTC), or what is wrong with it.
    Next {
        /// The expression: `minute hour day-of-month month day-of-week` (a leading second and
        /// a trailing year are optional).
        schedule: String,
    },
    /// Create a runtime job.
    Add {
        /// The agent that runs it.
        #[arg(long)]
        agent: String,
        /// The cron expression (UTC).
        #[arg(long)]
        schedule: String,
        /// The prompt of each run.
        #[arg(long)]
        prompt: String,
        /// Create it switched off.
        #[arg(long)]
        disabled: bool,
        /// Check it and show its next run times without saving.
        #[arg(long)]
        dry_run: bool,
    },
    /// Change a runtime job.
    Edit {
        /// The job id.
        id: String,
        /// A new cron expression.
        #[arg(long)]
        schedule: Option<String>,
        /// A new prompt.
        #[arg(long)]
        prompt: Option<String>,
        /// Switch it on.
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        /// Switch it off.
        #[arg(long)]
        disable: bool,
        /// Check the change and show the next run times without saving.
        #[arg(long)]
        dry_run: bool,
    },
    /// Remove a runtime job (its run history stays).
    Rm {
        /// The job id.
        id: String,
    },
    /// Run a job now as a turn with trigger `cron`; exits 1 unless the turn completed.
    Run {
        /// The job id.
        id: String,
    },
}

/// What `--dry-run` reports.
#[derive(Serialize)]
struct DryRun {
    dry_run: bool,
    job: CronJobRequest,
    next_runs: Vec<String>,
}

fn next_lines(next: &[String]) -> String {
    if next.is_empty() {
        return "  (none: the job is disabled)".into();
    }
    next.iter()
        .map(|t| format!("  {t}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn job_text(verb: &str, j: &CronJobView) -> String {
    format!(
        "{verb} cron job {} ({}): agent {}, schedule `{}`{}\nnext runs (UTC):\n{}",
        j.id,
        if j.read_only {
            "config, read-only"
        } else {
            "runtime"
        },
        j.agent.as_deref().unwrap_or("-"),
        j.schedule,
        if j.enabled { "" } else { ", disabled" },
        next_lines(&j.next_runs)
    )
}

fn list_text(jobs: &[CronJobView]) -> String {
    if jobs.is_empty() {
        return "no cron jobs".into();
    }
    let mut s = format!(
        "{:<42} {:<12} {:<9} {:<20} {:<22} {}\n",
        "ID", "AGENT", "ENABLED", "SCHEDULE", "NEXT RUN", "LAST RUN"
    );
    for j in jobs {
        let id = if j.read_only {
            format!("{} (config)", j.id)
        } else {
            j.id.clone()
        };
        s.push_str(&format!(
            "{:<42} {:<12} {:<9} {:<20} {:<22} {}\n",
            id,
            j.agent.as_deref().unwrap_or("-"),
            if j.enabled { "yes" } else { "no" },
            j.schedule,
            j.next_runs.first().map(String::as_str).unwrap_or("-"),
            j.last_run
                .as_ref()
                .map(|r| format!("{} {}", r.started_at, r.status))
                .unwrap_or_else(|| "-".into())
        ));
    }
    s
}

fn dry_run(ctx: &Ctx, job: CronJobRequest, check: warren_api::cron::CronCheck) -> ExitCode {
    if let Some(first) = check.errors.first() {
        let e = ApiError::new(
            ErrorCode::InvalidArgument,
            format!("{}: {}", first.field, first.message),
        )
        .with_details(
            check
                .errors
                .iter()
                .skip(1)
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect(),
        );
        return ctx.out.fail(&e);
    }
    let report = DryRun {
        dry_run: true,
        job,
        next_runs: check.next_runs,
    };
    ctx.out.ok(&report, || {
        format!(
            "would save (dry run, nothing written): agent {}, schedule `{}`\nnext runs (UTC):\n{}",
            report.job.agent,
            report.job.schedule,
            next_lines(if report.job.enabled {
                &report.next_runs
            } else {
                &[]
            })
        )
    })
}

fn run_text(r: &CronRunView) -> String {
    let mut s = format!(
        "cron job {}: run {} {} (turn {})",
        r.job,
        r.id,
        r.status,
        r.turn_id.as_deref().unwrap_or("-")
    );
    if let Some(e) = &r.error {
        s.push_str(&format!("\n{e}"));
    }
    s
}

/// Runs `warren cron …`.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    let w = &ctx.warren;
    match cmd {
        Cmd::List { agent } => ctx
            .out
            .result(ctx.block_on_multi(w.cron_jobs(agent.as_deref())), |jobs| {
                list_text(jobs)
            }),
        Cmd::Next { schedule } => ctx.out.result(w.cron_next(&schedule), |next| {
            format!("next runs of `{schedule}` (UTC):\n{}", next_lines(next))
        }),
        Cmd::Add {
            agent,
            schedule,
            prompt,
            disabled,
            dry_run: dry,
        } => {
            let req = CronJobRequest {
                agent,
                schedule,
                prompt,
                enabled: !disabled,
            };
            if dry {
                return match w.check_cron_job(&req) {
                    Ok(check) => dry_run(ctx, req, check),
                    Err(e) => ctx.out.fail(&e),
                };
            }
            ctx.out
                .result(ctx.block_on_multi(w.add_cron_job(&req)), |j| {
                    job_text("added", j)
                })
        }
        Cmd::Edit {
            id,
            schedule,
            prompt,
            enable,
            disable,
            dry_run: dry,
        } => {
            let edit = CronJobEdit {
                schedule,
                prompt,
                enabled: match (enable, disable) {
                    (true, _) => Some(true),
                    (_, true) => Some(false),
                    _ => None,
                },
            };
            if dry {
                return match ctx.block_on_multi(w.check_cron_edit(&id, &edit)) {
                    Ok((req, check)) => dry_run(ctx, req, check),
                    Err(e) => ctx.out.fail(&e),
                };
            }
            ctx.out
                .result(ctx.block_on_multi(w.edit_cron_job(&id, &edit)), |j| {
                    job_text("saved", j)
                })
        }
        Cmd::Rm { id } => ctx
            .out
            .result(ctx.block_on_multi(w.remove_cron_job(&id)), |j| {
                format!("removed cron job {} (its run history stays)", j.id)
            }),
        Cmd::Run { id } => match ctx.block_on_multi(w.run_cron_job(&id)) {
            Ok(r) => {
                let code = ctx.out.ok(&r, || run_text(&r));
                if r.status == CronRunStatus::Completed {
                    code
                } else {
                    ExitCode::from(1)
                }
            }
            Err(e) => ctx.out.fail(&e),
        },
    }
}
