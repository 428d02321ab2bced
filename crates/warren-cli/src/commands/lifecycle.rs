//! `warren agents rename | delete | archives | restore`: parse, call the lifecycle functions of
//! `warren-api`, render the plan, the warnings and the archive.

use super::Ctx;
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;
use std::process::ExitCode;
use warren_api::lifecycle_view::{
    ArchiveView, LifecycleOutcome, PendingOperationView, ResumeOutcomeView,
};
use warren_api::{ApiError, ErrorCode};

/// `warren agents rename OLD NEW`.
#[derive(clap::Args)]
pub struct RenameArgs {
    /// The current alias.
    pub old: String,
    /// The new alias.
    pub new: String,
    /// Print the plan (references to rewrite, what moves) and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Cancel a running turn instead of waiting for it.
    #[arg(long)]
    pub force: bool,
}

/// `warren agents delete ALIAS`.
#[derive(clap::Args)]
pub struct DeleteArgs {
    /// The agent to delete (its state goes to an archive).
    pub alias: String,
    /// Print the plan (references to remove, blockers, counts) and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask for confirmation.
    #[arg(long)]
    pub yes: bool,
    /// Cancel a running turn instead of waiting for it.
    #[arg(long)]
    pub force: bool,
}

/// `warren agents restore ARCHIVE|ALIAS`.
#[derive(clap::Args)]
pub struct RestoreArgs {
    /// Archive folder name (see `warren agents archives`), path, or the deleted alias (its
    /// newest archive; the plan names the one it takes).
    pub archive: String,
    /// Restore under another alias.
    #[arg(long = "as", value_name = "NEW")]
    pub as_alias: Option<String>,
    /// Print the plan and change nothing.
    #[arg(long)]
    pub dry_run: bool,
}

/// `warren agents unfinished [--finish]`.
#[derive(clap::Args)]
pub struct UnfinishedArgs {
    /// Try again to finish each one (what the window's Resume button does).
    #[arg(long)]
    pub finish: bool,
}

fn human(r: &LifecycleOutcome) -> String {
    let mut s = r.plan.to_text();
    if r.dry_run {
        s.push_str("(dry run: nothing was changed)\n");
    } else if r.ok {
        s.push_str("done\n");
    } else {
        s.push_str("finished with warnings (see stderr)\n");
    }
    if let Some(a) = &r.archive {
        s.push_str(&format!("archive: {a}\n"));
    }
    s
}

fn render(ctx: &Ctx, r: Result<LifecycleOutcome, ApiError>) -> ExitCode {
    match r {
        Err(e) => ctx.out.fail(&e),
        Ok(report) => {
            for w in &report.warnings {
                eprintln!("warning: {w}");
            }
            let code = ctx.out.ok(&report, || human(&report));
            if report.ok {
                code
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// Runs `warren agents rename`.
pub fn rename(ctx: &Ctx, a: RenameArgs) -> ExitCode {
    let r = ctx.block_on_multi(ctx.warren.rename_agent(&a.old, &a.new, a.dry_run, a.force));
    render(ctx, r)
}

/// Runs `warren agents delete`: without `--yes` it shows the plan and asks on a terminal, and
/// refuses when there is none.
pub fn delete(ctx: &Ctx, a: DeleteArgs) -> ExitCode {
    if !a.dry_run && !a.yes {
        if !std::io::stdin().is_terminal() {
            return ctx.out.fail(&ApiError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "refusing to delete `{}` without --yes: there is no terminal to ask (see the plan with --dry-run)",
                    a.alias
                ),
            ));
        }
        let plan = ctx.block_on_multi(ctx.warren.delete_agent(&a.alias, true, false));
        match &plan {
            Ok(p) if p.ok => eprint!("{}", p.plan.to_text()),
            _ => return render(ctx, plan),
        }
        eprint!("Delete agent `{}` and archive its state? [y/N] ", a.alias);
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        let _ = std::io::stdin().lock().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            return ctx.out.fail(&ApiError::new(
                ErrorCode::InvalidArgument,
                format!("not deleted: `{}` was kept", a.alias),
            ));
        }
    }
    let r = ctx.block_on_multi(ctx.warren.delete_agent(&a.alias, a.dry_run, a.force));
    render(ctx, r)
}

/// Runs `warren agents archives`.
pub fn archives(ctx: &Ctx) -> ExitCode {
    ctx.out
        .result(ctx.warren.list_archives(), |list: &Vec<ArchiveView>| {
            if list.is_empty() {
                return "no archives".into();
            }
            let mut s = format!(
                "{:<40} {:<20} {:<28} {}\n",
                "ARCHIVE", "ALIAS", "DELETED", "EXPORTED"
            );
            for a in list {
                match (&a.alias, &a.time) {
                    (Some(alias), Some(time)) => {
                        let counts: Vec<String> = a
                            .exported
                            .iter()
                            .map(|c| format!("{}={}", c.kind, c.count))
                            .collect();
                        let kept = if a.kept_in_place.is_empty() {
                            String::new()
                        } else {
                            format!(" (kept in place: {})", a.kept_in_place.join(", "))
                        };
                        s.push_str(&format!(
                            "{:<40} {:<20} {:<28} {}{kept}\n",
                            a.name,
                            alias,
                            time,
                            counts.join(" ")
                        ));
                        for g in &a.grants {
                            s.push_str(&format!("    grant put back on restore: {g}\n"));
                        }
                    }
                    _ => s.push_str(&format!(
                        "{:<40} {}\n",
                        a.name,
                        a.problem.as_deref().unwrap_or("no manifest")
                    )),
                }
            }
            s
        })
}

/// Runs `warren agents restore`.
pub fn restore(ctx: &Ctx, a: RestoreArgs) -> ExitCode {
    // A relative path (not a bare archive name) is taken from the current directory.
    let archive = if a.archive.contains('/') && !Path::new(&a.archive).is_absolute() {
        std::env::current_dir()
            .map(|d| d.join(&a.archive).display().to_string())
            .unwrap_or(a.archive)
    } else {
        a.archive
    };
    let r = ctx.block_on_multi(ctx.warren.restore_agent(
        &archive,
        a.as_alias.as_deref(),
        a.dry_run,
    ));
    render(ctx, r)
}

/// Runs `warren agents unfinished`: the unfinished operations, or with `--finish` what trying
/// again to finish each gave (exit 1 when one is still unfinished).
pub fn unfinished(ctx: &Ctx, a: UnfinishedArgs) -> ExitCode {
    if !a.finish {
        let list = ctx.block_on_multi(ctx.warren.pending_lifecycle());
        return ctx.out.ok(&list, || {
            if list.is_empty() {
                return "no unfinished operations\n".into();
            }
            list.iter().map(pending_text).collect()
        });
    }
    match ctx.block_on_multi(ctx.warren.resume_lifecycle()) {
        Err(e) => ctx.out.fail(&e),
        Ok(done) => {
            let code = ctx.out.ok(&done, || {
                if done.is_empty() {
                    return "no unfinished operations\n".into();
                }
                done.iter().map(resumed_text).collect()
            });
            if done.iter().all(|d| d.ok) {
                code
            } else {
                ExitCode::from(1)
            }
        }
    }
}

fn pending_text(p: &PendingOperationView) -> String {
    let mut s = format!("{} (journal {})\n", p.description, p.journal);
    if !p.steps_done.is_empty() {
        s.push_str(&format!("  done:       {}\n", p.steps_done.join(", ")));
    }
    if let Some(at) = &p.stopped_at {
        s.push_str(&format!("  stopped at: {at}\n"));
    }
    if let Some(e) = &p.last_error {
        s.push_str(&format!("  last error: {e}\n"));
    }
    s.push_str(&format!("  to finish:  {}\n", p.hint));
    s
}

fn resumed_text(r: &ResumeOutcomeView) -> String {
    match &r.error {
        None => format!("finished {} (journal {})\n", r.operation, r.journal),
        Some(e) => format!(
            "still unfinished: {} (journal {}): {e}\n",
            r.operation, r.journal
        ),
    }
}
