//! Rename OLD → NEW (rules §8): config first (table re-keyed, every reference rewritten, one
//! atomic save), then the workspace move and the owned state, one journaled step each.

use super::owned::AgentState;
use super::{Lifecycle, LifecycleError, RunOptions};
use warren_config::references_to;
use warren_state::lifecycle::files::{move_dir, remove_if_empty, verify_moved};
use warren_state::lifecycle::journal::{JournalEntry, Operation, RenameJob};
use warren_state::lifecycle::plan::{
    LifecycleReport, OperationKind, Plan, PlannedMove, PlannedReference, RefAction,
};
use warren_types::validate_alias;

impl Lifecycle {
    /// Renames agent `old` to `new`. With `dry_run` only the plan is returned. When the journal
    /// holds an unfinished rename `old` → `new`, its remaining steps are finished; without one,
    /// an existing `new` is never merged into.
    pub async fn rename(
        &self,
        old: &str,
        new: &str,
        opts: RunOptions,
    ) -> Result<LifecycleReport, LifecycleError> {
        if !opts.dry_run {
            if let Some(entry) = self.pending_where(
                |op| matches!(op, Operation::Rename(j) if j.old == old && j.new == new),
            ) {
                let _g = self.quiesce(&[old, new], opts.force).await?;
                return self.run_rename(entry, None).await;
            }
        }
        validate_alias(new).map_err(|e| LifecycleError::InvalidAlias {
            alias: new.to_string(),
            reason: e.to_string(),
        })?;
        if old == new {
            return Err(LifecycleError::Taken(format!(
                "agent `{old}` already has that name"
            )));
        }
        self.refuse_pending(&[old, new])?;
        let cfg = self.store.load()?.config;
        let (has_old, has_new) = (cfg.agents.contains_key(old), cfg.agents.contains_key(new));
        match (has_old, has_new) {
            (true, true) => {
                return Err(LifecycleError::Taken(format!(
                    "agent `{new}` already exists; choose another name"
                )))
            }
            (false, false) => return Err(LifecycleError::UnknownAgent(old.to_string())),
            (true, false) => {}
            // No unfinished rename old → new is journaled: `new` is another agent (or a rename
            // that already finished), and what is left under `old` is not merged into it.
            (false, true) => {
                return Err(LifecycleError::Taken(format!(
                    "agent `{old}` does not exist and `{new}` does; no unfinished rename {old} → {new} is recorded, so nothing is merged into `{new}`"
                )))
            }
        }
        let current = old;
        let agent = &cfg.agents[current];
        let custom = agent.workspace.path.as_deref();
        let job = RenameJob {
            old: old.to_string(),
            new: new.to_string(),
            old_workspace: self.layout.workspace_for(old, custom),
            new_workspace: self.layout.workspace_for(new, custom),
            memory_backend: cfg.effective_memory_backend(current).unwrap_or_default(),
        };
        if job.old_workspace != job.new_workspace
            && job.old_workspace.exists()
            && !warren_state::lifecycle::files::is_empty_dir(&job.new_workspace)
        {
            return Err(LifecycleError::Taken(format!(
                "the workspace folder {} exists and is not empty; move it away before renaming `{old}` to `{new}`",
                job.new_workspace.display()
            )));
        }
        let plan = self.rename_plan(&job, &cfg).await;
        if opts.dry_run {
            return Ok(LifecycleReport {
                ok: true,
                dry_run: true,
                plan,
                warnings: Vec::new(),
                archive: None,
            });
        }
        let _g = self.quiesce(&[old, new], opts.force).await?;
        let entry = self.new_entry(Operation::Rename(job), &format!("{old}-{new}"));
        self.journal().save(&entry)?;
        self.run_rename(entry, Some(plan)).await
    }

    async fn rename_plan(&self, job: &RenameJob, cfg: &warren_types::Config) -> Plan {
        let mut plan = Plan::new(OperationKind::Rename, &job.old);
        plan.new_alias = Some(job.new.clone());
        plan.references = references_to(cfg, &job.old)
            .into_iter()
            .map(|r| PlannedReference::new(r, RefAction::Rewrite))
            .collect();
        if job.old_workspace != job.new_workspace {
            plan.workspace = Some(PlannedMove {
                exists: job.old_workspace.exists(),
                from: job.old_workspace.clone(),
                to: job.new_workspace.clone(),
            });
        }
        let sid = warren_state::owned_state::agent_id_of(&self.pool, &job.old)
            .await
            .ok()
            .flatten();
        let state = AgentState {
            alias: &job.old,
            config: cfg,
            memory_backend: job.memory_backend,
            workspace: &job.old_workspace,
            sessions_agent_id: sid.as_deref(),
            cron_jobs: &[],
        };
        for p in self.participants() {
            let n = p.count(&state).await.unwrap_or(0);
            plan.counts.insert(p.kind().to_string(), n);
        }
        plan
    }

    /// Runs (or resumes) the steps of a journaled rename.
    pub(super) async fn run_rename(
        &self,
        mut entry: JournalEntry,
        plan: Option<Plan>,
    ) -> Result<LifecycleReport, LifecycleError> {
        let Operation::Rename(job) = entry.op.clone() else {
            return Err(LifecycleError::BadFile {
                path: self.journal().path(&entry.id),
                reason: "not a rename".into(),
            });
        };
        let plan = match plan {
            Some(p) => p,
            None => {
                let cfg = self.store.load()?.config;
                let mut p = self.rename_plan(&job, &cfg).await;
                p.resumed = true;
                p
            }
        };
        if !entry.done("config") {
            let current = self.store.load()?;
            let mut doc = warren_config::ConfigDocument::parse(&current.text)
                .map_err(warren_config::ConfigError::from)?;
            if doc.has_agent(&job.old) {
                self.store.edit(|doc, _| {
                    doc.rename_agent_table(&job.old, &job.new)?;
                    doc.rewrite_agent_references(&job.old, &job.new);
                    Ok(())
                })?;
            } else if doc.rewrite_agent_references(&job.old, &job.new) > 0 {
                // References added by hand after the table moved.
                self.store.edit(|doc, _| {
                    doc.rewrite_agent_references(&job.old, &job.new);
                    Ok(())
                })?;
            }
            self.step_done(&mut entry, "config")?;
        }
        // Failures of this run: reported, never journaled (a retry may fix them).
        let mut problems: Vec<String> = Vec::new();
        if !entry.done("workspace") {
            if job.old_workspace != job.new_workspace {
                let moved = move_dir(&job.old_workspace, &job.new_workspace).and_then(|m| {
                    verify_moved(&job.old_workspace, &job.new_workspace)?;
                    Ok(m)
                });
                match moved {
                    Ok(_) => {
                        if let Some(parent) = job.old_workspace.parent() {
                            remove_if_empty(parent);
                        }
                    }
                    Err(e) => problems.push(format!("workspace not moved: {e}")),
                }
            }
            if problems.is_empty() {
                self.step_done(&mut entry, "workspace")?;
            } else {
                // The owned state waits for the workspace (markdown memory lives in it).
                return self.unfinished_rename(entry, &job, plan, problems);
            }
        }
        let cfg = self.store.load()?.config;
        let sid = warren_state::owned_state::agent_id_of(&self.pool, &job.old).await?;
        let state = AgentState {
            alias: &job.old,
            config: &cfg,
            memory_backend: job.memory_backend,
            workspace: &job.new_workspace,
            sessions_agent_id: sid.as_deref(),
            cron_jobs: &[],
        };
        for p in self.participants() {
            let step = format!("rename:{}", p.kind());
            if entry.done(&step) {
                continue;
            }
            match p.rename(&state, &job.new).await {
                Ok(()) => self.step_done(&mut entry, &step)?,
                Err(e) => problems.push(e.to_string()),
            }
        }
        if !problems.is_empty() {
            return self.unfinished_rename(entry, &job, plan, problems);
        }
        self.journal().finish(&entry, self.clock.now())?;
        for w in &entry.warnings {
            tracing::warn!(agent = %job.new, "rename {} → {}: {w}", job.old, job.new);
        }
        tracing::info!(agent = %job.new, from = %job.old, "agent renamed from {}", job.old);
        Ok(LifecycleReport {
            ok: entry.warnings.is_empty(),
            dry_run: false,
            plan,
            warnings: entry.warnings,
            archive: None,
        })
    }

    /// The answer of a rename with steps that could not complete: the journal stays open (both
    /// aliases refuse turns and lifecycle commands until it is finished) and `ok` is false.
    fn unfinished_rename(
        &self,
        entry: JournalEntry,
        job: &RenameJob,
        plan: Plan,
        problems: Vec<String>,
    ) -> Result<LifecycleReport, LifecycleError> {
        self.journal().save(&entry)?;
        let mut warnings = entry.warnings.clone();
        warnings.extend(problems);
        warnings.push(format!(
            "the rename is unfinished (journal {}): `{}` and `{}` refuse turns until it is; {}",
            self.journal().path(&entry.id).display(),
            job.old,
            job.new,
            entry.op.resume_hint()
        ));
        for w in &warnings {
            tracing::warn!(agent = %job.new, "rename {} → {}: {w}", job.old, job.new);
        }
        Ok(LifecycleReport {
            ok: false,
            dry_run: false,
            plan,
            warnings,
            archive: None,
        })
    }
}
