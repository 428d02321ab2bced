//! `warren import zeroclaw [PATH] [--dry-run] [--prefix P] [--collisions C] [--update]`.

use super::choices::Collisions;
use super::Ctx;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use warren_api::import::{Collision, ImportOptions, ImportProgress, ImportReport};

/// `warren import ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Import a ZeroClaw install: agents, profiles, grants, memory, cron jobs, provider keys
    /// and workspaces (copied; the source is never modified).
    Zeroclaw {
        /// The ZeroClaw install (default: $ZEROCLAW_CONFIG_DIR, else ~/.zeroclaw).
        path: Option<PathBuf>,
        /// Print the plan and write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Prefix every imported name (agents, profiles, provider entries, cron jobs).
        #[arg(long, value_name = "P", default_value = "")]
        prefix: String,
        /// A profile or provider entry Warren already has under the same name but with other
        /// settings (an identical one is always reused): `rename` imports it as
        /// `<name>_zeroclaw`, `skip` keeps Warren's for the imported agents, `replace`
        /// overwrites Warren's. Without it such an import is refused, naming each.
        #[arg(long, value_enum)]
        collisions: Option<Collisions>,
        /// For a source imported before: add only the memory rows not imported yet.
        #[arg(long)]
        update: bool,
    },
}

/// Memory-row progress on stderr (stdout carries only the report, so `--json` output stays one
/// JSON document): on a terminal a bar redrawn in place at most once per percent, otherwise a
/// plain line at most every [`LINE_EVERY`] and one at the end.
struct ProgressView {
    terminal: bool,
    state: Mutex<ViewState>,
}

#[derive(Default)]
struct ViewState {
    /// Percent last drawn on the bar.
    last_pct: Option<u64>,
    /// When the last plain line was written.
    last_line: Option<Instant>,
    /// The bar is drawn and its line not ended yet.
    open: bool,
    /// The last report (all rows done) was shown.
    finished: bool,
}

/// Time between two plain progress lines.
const LINE_EVERY: Duration = Duration::from_secs(2);

impl ProgressView {
    fn new(terminal: bool) -> Self {
        ProgressView {
            terminal,
            state: Mutex::new(ViewState::default()),
        }
    }

    fn show(&self, p: &ImportProgress) {
        let total = p.overall_total;
        if total == 0 {
            return;
        }
        let done = p.overall_done.min(total);
        let pct = done.saturating_mul(100) / total;
        let last = done >= total;
        let mut st = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if st.finished {
            return;
        }
        let agent = if p.agent.is_empty() {
            String::new()
        } else {
            format!(", {} {}/{}", p.agent, p.rows_done, p.rows_total)
        };
        let mut err = std::io::stderr().lock();
        if self.terminal {
            if st.last_pct == Some(pct) && !last {
                return;
            }
            st.last_pct = Some(pct);
            let width = 30u64;
            let filled = (pct * width / 100) as usize;
            // `\x1b[K` clears what a longer earlier line left on the right.
            let _ = write!(
                err,
                "\rmemory rows [{}{}] {done}/{total} ({pct}%){agent}\x1b[K",
                "#".repeat(filled),
                " ".repeat(width as usize - filled)
            );
            st.open = !last;
            if last {
                let _ = writeln!(err);
            }
        } else {
            let due = st.last_line.is_none_or(|t| t.elapsed() >= LINE_EVERY);
            if !due && !last {
                return;
            }
            st.last_line = Some(Instant::now());
            let _ = writeln!(err, "memory rows: {done}/{total} ({pct}%){agent}");
        }
        st.finished = last;
        let _ = err.flush();
    }

    /// Ends a bar left open by an import that stopped early, so the error starts on its line.
    fn close(&self) {
        let st = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if st.open && !st.finished {
            let _ = writeln!(std::io::stderr());
        }
    }
}

/// Runs a `warren import` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    let Cmd::Zeroclaw {
        path,
        dry_run,
        prefix,
        collisions,
        update,
    } = cmd;
    let opts = ImportOptions {
        path,
        dry_run,
        prefix,
        update,
        collision: collisions.map(Collision::from),
    };
    let view = ProgressView::new(std::io::stderr().is_terminal());
    let progress = |p: &ImportProgress| view.show(p);
    let r = ctx.block_on_multi(ctx.warren.import_zeroclaw(&opts, &progress));
    view.close();
    ctx.out.result(r, render)
}

fn render(r: &ImportReport) -> String {
    let p = &r.plan;
    let mut t = String::new();
    let head = if r.dry_run {
        "Plan (dry run, nothing written)"
    } else if r.update {
        "Updated"
    } else {
        "Imported"
    };
    t.push_str(&format!("{head}: ZeroClaw install {}\n", p.source));
    for a in &p.agents {
        t.push_str(&format!(
            "\nagent {} (ZeroClaw `{}`)\n",
            a.alias, a.source_alias
        ));
        t.push_str(&format!(
            "  risk profile {}, runtime profile {}, provider {}, memory {}{}\n",
            a.risk_profile,
            a.runtime_profile.as_deref().unwrap_or("(defaults)"),
            a.model_provider.as_deref().unwrap_or("(none)"),
            a.memory_backend,
            if a.enabled { "" } else { ", disabled" }
        ));
        t.push_str(&format!(
            "  unrestricted_filesystem {}\n",
            a.unrestricted_filesystem
        ));
        for (peer, mode) in &a.access {
            t.push_str(&format!("  workspace grant: {peer} = {mode}\n"));
        }
        for g in &a.read_memory_from {
            t.push_str(&format!("  memory grant: {g}\n"));
        }
        if !a.delegates.is_empty() {
            t.push_str(&format!("  delegates: {}\n", a.delegates.join(", ")));
        }
        if !a.cron_jobs.is_empty() {
            t.push_str(&format!("  cron jobs: {}\n", a.cron_jobs.join(", ")));
        }
        t.push_str(&format!(
            "  workspace: {} files, {} bytes → {}\n",
            a.workspace_files, a.workspace_bytes, a.workspace
        ));
        let cats: Vec<String> = a.memory.iter().map(|(c, n)| format!("{c} {n}")).collect();
        t.push_str(&format!(
            "  memory: {} {} ({}){}\n",
            a.memory_rows,
            if a.memory_backend == "markdown" {
                "entries"
            } else {
                "rows"
            },
            if cats.is_empty() {
                "none".to_string()
            } else {
                cats.join(", ")
            },
            if a.sessions > 0 {
                format!(", {} sessions", a.sessions)
            } else {
                String::new()
            }
        ));
    }
    for rp in &p.risk_profiles {
        t.push_str(&format!(
            "\nrisk profile {} (ZeroClaw `{}`)",
            rp.name, rp.source
        ));
    }
    for rp in &p.runtime_profiles {
        t.push_str(&format!(
            "\nruntime profile {} (ZeroClaw `{}`)",
            rp.name, rp.source
        ));
    }
    for pr in &p.providers {
        t.push_str(&format!(
            "\nprovider {} ({}){}",
            pr.reference,
            pr.model,
            pr.secret
                .as_deref()
                .map(|s| format!(", key → secret store `{s}`"))
                .unwrap_or_default()
        ));
    }
    for c in &p.cron_jobs {
        t.push_str(&format!(
            "\ncron job {} for {}: `{}` (ZeroClaw: {})",
            c.id, c.agent, c.schedule, c.source_schedule
        ));
    }
    t.push('\n');
    if !p.callouts.is_empty() {
        t.push_str("\nStronger or weaker in Warren:\n");
        for c in &p.callouts {
            t.push_str(&format!("  [{}] {}: {}\n", c.direction, c.setting, c.note));
        }
    }
    if !p.unmapped.is_empty() {
        t.push_str(&format!(
            "\nNot carried over ({} settings):\n",
            p.unmapped.len()
        ));
        for u in &p.unmapped {
            t.push_str(&format!("  {} = {}: {}\n", u.setting, u.value, u.reason));
        }
    }
    let tot = &p.totals;
    t.push_str(&format!(
        "\nTotals: {} agents, {} memory rows, {} Markdown entries, {} workspace files ({} bytes), {} secrets, {} cron jobs\n",
        tot.agents, tot.memory_rows, tot.markdown_entries, tot.workspace_files, tot.workspace_bytes, tot.secrets, tot.cron_jobs
    ));
    if !p.problems.is_empty() {
        t.push_str("\nThe import would stop:\n");
        for pr in &p.problems {
            t.push_str(&format!("  {pr}\n"));
        }
    }
    if !r.dry_run {
        let i = &r.imported;
        t.push_str(&format!(
            "Written: {} agents, {} memory rows ({} already present), {} Markdown entries, {} workspace files ({} bytes), {} secrets\n",
            i.agents, i.memory_rows, i.memory_rows_skipped, i.markdown_entries, i.workspace_files, i.workspace_bytes, i.secrets
        ));
    }
    for w in &r.warnings {
        t.push_str(&format!("warning: {w}\n"));
    }
    t
}
