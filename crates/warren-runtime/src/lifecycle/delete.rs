//! Delete with archive (rules §8): refuse on hard references and live ACP sessions; write the
//! removed config block, save the config without the agent and its soft references; then per
//! kind export → fsync → count (journaled) → purge, move the workspace into the archive, write
//! the manifest.

use super::owned::AgentState;
use super::{Lifecycle, LifecycleError, RunOptions};
use warren_config::{references_to, ConfigDocument, ConfigError, RefStrength};
use warren_state::lifecycle::files::{
    archive_dir, move_dir, remove_if_empty, verify_moved, write_bytes, write_json, write_text,
};
use warren_state::lifecycle::journal::{DeleteJob, JournalEntry, Operation};
use warren_state::lifecycle::plan::{
    LifecycleReport, Manifest, OperationKind, Plan, PlannedMove, PlannedReference, RefAction,
};
use warren_state::owned_state as db;
use warren_types::Config;

/// The name kept data is parked under after a delete: never a valid alias.
pub(super) fn tombstone(job: &DeleteJob) -> String {
    let name = job
        .archive
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| job.alias.clone());
    format!("~deleted:{name}")
}

impl Lifecycle {
    async fn delete_blockers(
        &self,
        cfg: &Config,
        alias: &str,
    ) -> Result<Vec<String>, LifecycleError> {
        let mut blockers: Vec<String> = references_to(cfg, alias)
            .into_iter()
            .filter(|r| r.strength == RefStrength::Hard)
            .map(|r| {
                format!(
                    "{} (enabled cron job `{}` runs as `{alias}`)",
                    r.path, r.holder
                )
            })
            .collect();
        if let Some(id) = db::agent_id_of(&self.pool, alias).await? {
            // Live = not ended, a fresh heartbeat, and its serving process still exists (a
            // crashed client never blocks; `warren acp` reaps such sessions).
            let window = chrono::Duration::from_std(warren_state::acp_sessions::HEARTBEAT_TIMEOUT)
                .unwrap_or(chrono::Duration::seconds(15));
            let since = warren_state::sessions::rfc3339(self.clock.now() - window);
            for (s, pid) in db::live_acp_sessions(&self.pool, &id, &since).await? {
                let running = pid
                    .and_then(|p| u32::try_from(p).ok())
                    .is_none_or(warren_state::acp_sessions::process_alive);
                if running {
                    blockers.push(format!("live ACP session {s}"));
                }
            }
        }
        Ok(blockers)
    }

    /// Deletes agent `alias` into an archive. With `dry_run` only the plan is returned.
    pub async fn delete(
        &self,
        alias: &str,
        opts: RunOptions,
    ) -> Result<LifecycleReport, LifecycleError> {
        if !opts.dry_run {
            if let Some(entry) =
                self.pending_where(|op| matches!(op, Operation::Delete(j) if j.alias == alias))
            {
                let _g = self.quiesce(&[alias], opts.force).await?;
                return self.run_delete(entry, None).await;
            }
        }
        self.refuse_pending(&[alias])?;
        let cfg = self.store.load()?.config;
        let agent = cfg
            .agents
            .get(alias)
            .ok_or_else(|| LifecycleError::UnknownAgent(alias.to_string()))?;
        let now = self.clock.now();
        let custom = agent.workspace.path.clone();
        let sid = db::agent_id_of(&self.pool, alias).await?;
        let mut job = DeleteJob {
            alias: alias.to_string(),
            archive: archive_dir(&self.layout.deleted_dir(), alias, now),
            workspace: self.layout.workspace_for(alias, custom.as_deref()),
            custom_workspace: custom.is_some(),
            memory_backend: cfg.effective_memory_backend(alias).unwrap_or_default(),
            memory_agent_id: None,
            sessions_agent_id: sid.clone(),
            time: warren_state::sessions::rfc3339(now),
            exported: Default::default(),
            purged: Default::default(),
            failed: Default::default(),
            references: warren_config::held_references(&cfg, alias),
            holder_ids: Default::default(),
            cron_jobs: cfg
                .cron
                .iter()
                .filter(|(_, j)| j.agent == alias)
                .map(|(id, _)| id.clone())
                .collect(),
        };
        let mut plan = self.delete_plan(&job, &cfg).await?;
        if opts.dry_run {
            // The archive is named by the time the delete runs, not the time of this plan:
            // say so rather than name a folder the delete will not create.
            let folder = self
                .layout
                .deleted_dir()
                .join(format!("{alias}-<time of the delete>"));
            if let Some(w) = plan.workspace.as_mut() {
                w.to = folder.join("workspace");
            }
            plan.archive = Some(folder);
            return Ok(LifecycleReport {
                ok: plan.blockers.is_empty(),
                dry_run: true,
                archive: plan.archive.clone(),
                plan,
                warnings: Vec::new(),
            });
        }
        if !plan.blockers.is_empty() {
            return Err(LifecycleError::Blocked {
                alias: alias.to_string(),
                blockers: plan.blockers,
            });
        }
        let _g = self.quiesce(&[alias], opts.force).await?;
        // Blockers may have appeared while waiting.
        let cfg = self.store.load()?.config;
        let blockers = self.delete_blockers(&cfg, alias).await?;
        if !blockers.is_empty() {
            return Err(LifecycleError::Blocked {
                alias: alias.to_string(),
                blockers,
            });
        }
        if job.memory_backend != warren_types::MemoryBackendKind::None {
            let state = self.delete_state(&job, &cfg);
            job.memory_agent_id = self.memory_agent_id(&state).await.map(|id| id.to_string());
        }
        // Who holds each grant, by identity: a restore gives it back to that agent only.
        for r in &job.references {
            let holder = r.holder().to_string();
            if let std::collections::btree_map::Entry::Vacant(e) = job.holder_ids.entry(holder) {
                let id = warren_state::db::agent_id(&self.pool, e.key()).await?;
                e.insert(id);
            }
        }
        plan.resumed = false;
        let entry = self.new_entry(Operation::Delete(job), alias);
        self.journal().save(&entry)?;
        self.run_delete(entry, Some(plan)).await
    }

    async fn memory_agent_id(&self, state: &AgentState<'_>) -> Option<uuid::Uuid> {
        let admin = if state.memory_backend == warren_types::MemoryBackendKind::Markdown {
            warren_memory::AgentMemoryAdmin::Markdown(
                self.memory.markdown_store_at(state.alias, state.workspace),
            )
        } else {
            self.memory
                .admin_for_backend(state.config, state.memory_backend, state.alias)
                .await
                .ok()?
        };
        admin.agent_id().await.ok().flatten()
    }

    fn delete_state<'a>(&self, job: &'a DeleteJob, cfg: &'a Config) -> AgentState<'a> {
        AgentState {
            alias: &job.alias,
            config: cfg,
            memory_backend: job.memory_backend,
            workspace: &job.workspace,
            sessions_agent_id: job.sessions_agent_id.as_deref(),
            cron_jobs: &job.cron_jobs,
        }
    }

    async fn delete_plan(&self, job: &DeleteJob, cfg: &Config) -> Result<Plan, LifecycleError> {
        let mut plan = Plan::new(OperationKind::Delete, &job.alias);
        plan.references = references_to(cfg, &job.alias)
            .into_iter()
            .map(|r| {
                let action = if r.strength == RefStrength::Hard {
                    RefAction::Blocks
                } else {
                    RefAction::Remove
                };
                PlannedReference::new(r, action)
            })
            .collect();
        plan.blockers = self.delete_blockers(cfg, &job.alias).await?;
        plan.workspace = Some(PlannedMove {
            exists: job.workspace.exists(),
            from: job.workspace.clone(),
            to: job.archive.join("workspace"),
        });
        let state = self.delete_state(job, cfg);
        for p in self.participants() {
            let n = p.count(&state).await.unwrap_or(0);
            plan.counts.insert(p.kind().to_string(), n);
        }
        plan.counts.insert(
            "cron".into(),
            cfg.cron.values().filter(|j| j.agent == job.alias).count() as u64,
        );
        plan.archive = Some(job.archive.clone());
        Ok(plan)
    }

    /// Runs (or resumes) the steps of a journaled delete.
    pub(super) async fn run_delete(
        &self,
        mut entry: JournalEntry,
        plan: Option<Plan>,
    ) -> Result<LifecycleReport, LifecycleError> {
        let Operation::Delete(mut job) = entry.op.clone() else {
            return Err(LifecycleError::BadFile {
                path: self.journal().path(&entry.id),
                reason: "not a delete".into(),
            });
        };
        let cascade = job.archive.join("cascade");
        let mut plan = plan.unwrap_or_else(|| {
            let mut p = Plan::new(OperationKind::Delete, &job.alias);
            p.archive = Some(job.archive.clone());
            p.resumed = true;
            p
        });
        if !entry.done("archive_prepared") {
            let text = self.store.load()?.text;
            let mut doc = ConfigDocument::parse(&text).map_err(ConfigError::from)?;
            match doc.agent_block_text(&job.alias) {
                Some(block) => write_text(&job.archive.join("config-entry.toml"), &block)?,
                None if job.archive.join("config-entry.toml").exists() => {}
                None => entry.warnings.push(format!(
                    "[agents.{}] was no longer in the config; config-entry.toml is missing",
                    job.alias
                )),
            }
            let blocks = doc.remove_cron_blocks_for(&job.alias);
            write_json(
                &cascade.join("cron.json"),
                &serde_json::json!({ "config_blocks": blocks }),
            )?;
            self.step_done(&mut entry, "archive_prepared")?;
        }
        if !entry.done("config") {
            let loaded = self.store.load()?;
            let blockers = self.delete_blockers(&loaded.config, &job.alias).await?;
            if !blockers.is_empty() {
                return Err(LifecycleError::Blocked {
                    alias: job.alias.clone(),
                    blockers,
                });
            }
            let present = ConfigDocument::parse(&loaded.text)
                .map_err(ConfigError::from)?
                .has_agent(&job.alias);
            if present {
                self.store.edit(|doc, _| {
                    doc.remove_agent_table(&job.alias)?;
                    doc.scrub_agent_references(&job.alias);
                    doc.remove_cron_blocks_for(&job.alias);
                    Ok(())
                })?;
            }
            self.step_done(&mut entry, "config")?;
        }
        let cfg = self.store.load()?.config;
        let tomb = tombstone(&job);
        // Steps that could not complete in this run: reported, never journaled as done.
        let mut problems: Vec<String> = Vec::new();
        if job.memory_agent_id.is_none()
            && job.memory_backend != warren_types::MemoryBackendKind::None
            && !entry.done("export:memory")
        {
            // The store could not be read when the delete started: ask again.
            let state = self.delete_state(&job, &cfg);
            job.memory_agent_id = self.memory_agent_id(&state).await.map(|id| id.to_string());
            entry.op = Operation::Delete(job.clone());
        }
        for p in self.participants() {
            let kind = p.kind();
            let export_step = format!("export:{kind}");
            let (count_step, purge_step) = (format!("count:{kind}"), format!("purge:{kind}"));
            // A journal from a version that parked data whose export failed: export again.
            if job.failed.remove(kind).is_some() && !entry.done(&purge_step) {
                entry.steps.retain(|s| s != &export_step);
                entry.op = Operation::Delete(job.clone());
            }
            if !entry.done(&export_step) {
                let state = self.delete_state(&job, &cfg);
                let result = match self.hook.export_fault(kind) {
                    Some(reason) => Err(reason),
                    None => p.export(&state).await.map_err(|e| e.to_string()),
                };
                let written = result.and_then(|(bytes, n)| {
                    write_bytes(&cascade.join(format!("{kind}.json")), &bytes)
                        .map(|()| n)
                        .map_err(|e| e.to_string())
                });
                match written {
                    Ok(n) => {
                        job.exported.insert(kind.to_string(), n);
                    }
                    // Nothing is purged without its export: the data stays where it is (the
                    // alias stays blocked) and the next run exports it again.
                    Err(reason) => {
                        problems.push(format!(
                            "{kind}: export failed ({reason}); nothing was purged, the data is still under `{}`",
                            job.alias
                        ));
                        continue;
                    }
                }
                entry.op = Operation::Delete(job.clone());
                self.step_done(&mut entry, &export_step)?;
            }
            if !entry.done(&purge_step) {
                // The count is durable before the purge: a rerun after a crash right after
                // the purge finds nothing left and keeps the journaled count.
                if !entry.done(&count_step) {
                    match p.purge_count(&self.delete_state(&job, &cfg)).await {
                        Ok(n) => {
                            job.purged.insert(kind.to_string(), n);
                            entry.op = Operation::Delete(job.clone());
                            self.step_done(&mut entry, &count_step)?;
                        }
                        Err(e) => {
                            problems.push(format!(
                                "{e}; the data is still in place (its export is in the archive)"
                            ));
                            continue;
                        }
                    }
                }
                match p.purge(&self.delete_state(&job, &cfg)).await {
                    Ok(n) => {
                        let counted = job.purged.get(kind).copied().unwrap_or(0);
                        job.purged.insert(kind.to_string(), counted.max(n));
                    }
                    Err(e) => {
                        problems.push(format!(
                            "{e}; the data is still in place (its export is in the archive)"
                        ));
                        continue;
                    }
                }
                entry.op = Operation::Delete(job.clone());
                self.step_done(&mut entry, &purge_step)?;
            }
        }
        if !entry.done("workspace") {
            let to = job.archive.join("workspace");
            match move_dir(&job.workspace, &to).and_then(|_| verify_moved(&job.workspace, &to)) {
                Ok(()) => {
                    if !job.custom_workspace {
                        if let Some(parent) = job.workspace.parent() {
                            remove_if_empty(parent);
                        }
                    }
                    self.step_done(&mut entry, "workspace")?;
                }
                Err(e) => problems.push(format!("workspace not archived: {e}")),
            }
        }
        // The id row keeps the alias until everything else is done (the alias is blocked
        // meanwhile), so a rerun finds the data where an uninterrupted run would.
        if !problems.is_empty() {
            return self.unfinished_delete(entry, &job, plan, problems);
        }
        if !entry.done("release") {
            if let Some(id) = &job.sessions_agent_id {
                db::release_agent_row(&self.pool, id, &tomb).await?;
            }
            self.step_done(&mut entry, "release")?;
        }
        if !entry.done("manifest") {
            let manifest = Manifest {
                version: 1,
                alias: job.alias.clone(),
                agent_id: job.memory_agent_id.clone(),
                sessions_agent_id: job.sessions_agent_id.clone(),
                time: job.time.clone(),
                memory_backend: job.memory_backend,
                workspace: job.workspace.clone(),
                custom_workspace: job.custom_workspace,
                workspace_archived: job.archive.join("workspace").exists(),
                exported: job.exported.clone(),
                purged: job.purged.clone(),
                failed: job.failed.clone(),
                tombstone: tomb.clone(),
                references: job.references.clone(),
                holder_ids: job.holder_ids.clone(),
                warnings: entry.warnings.clone(),
            };
            write_json(&job.archive.join("manifest.json"), &manifest)?;
            self.step_done(&mut entry, "manifest")?;
        }
        self.journal().finish(&entry, self.clock.now())?;
        for w in &entry.warnings {
            tracing::warn!(agent = %job.alias, "delete: {w}");
        }
        tracing::info!(agent = %job.alias, archive = %job.archive.display(), "agent deleted");
        if plan.counts.is_empty() {
            plan.counts = job.exported.clone();
        }
        Ok(LifecycleReport {
            ok: entry.warnings.is_empty(),
            dry_run: false,
            plan,
            warnings: entry.warnings,
            archive: Some(job.archive.clone()),
        })
    }

    /// The answer of a delete with steps that could not complete: the journal stays open (the
    /// alias refuses turns, `agents create` and lifecycle commands until it is finished), the
    /// manifest is not written yet, and `ok` is false.
    fn unfinished_delete(
        &self,
        entry: JournalEntry,
        job: &DeleteJob,
        mut plan: Plan,
        problems: Vec<String>,
    ) -> Result<LifecycleReport, LifecycleError> {
        self.journal().save(&entry)?;
        let mut warnings = entry.warnings.clone();
        warnings.extend(problems);
        warnings.push(format!(
            "the delete is unfinished (journal {}): `{}` stays blocked until it is; {}",
            self.journal().path(&entry.id).display(),
            job.alias,
            entry.op.resume_hint()
        ));
        for w in &warnings {
            tracing::warn!(agent = %job.alias, "delete: {w}");
        }
        if plan.counts.is_empty() {
            plan.counts = job.exported.clone();
        }
        Ok(LifecycleReport {
            ok: false,
            dry_run: false,
            plan,
            warnings,
            archive: Some(job.archive.clone()),
        })
    }
}
