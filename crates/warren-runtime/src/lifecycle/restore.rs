//! Archives and restore: list the deletion archives with their manifests, and bring an agent
//! back from one (workspace, owned state, then the config entry last, so no turn can start on a
//! half-restored agent). The archive is removed only once everything came back.

use super::owned::AgentState;
use super::{Lifecycle, LifecycleError};
use std::path::{Path, PathBuf};
use warren_config::{parse_for_install, ConfigDocument, ConfigError, DocumentError, RemovedBlock};
use warren_state::lifecycle::files::{is_empty_dir, move_dir, read_json, verify_moved};
use warren_state::lifecycle::journal::{JournalEntry, Operation, RestoreJob};
use warren_state::lifecycle::plan::{
    ArchiveInfo, LifecycleReport, Manifest, OperationKind, Plan, PlannedMove, PlannedReference,
    RefAction,
};
use warren_state::owned_state as db;
use warren_types::validate_alias;

/// Journaled just before the restore saves the config entry, as `config_saving:<sha256>` of
/// the `[agents.<alias>]` text it saves (see the config step).
const CONFIG_SAVING: &str = "config_saving";

fn is_saving_marker(step: &str) -> bool {
    step == CONFIG_SAVING
        || step
            .strip_prefix(CONFIG_SAVING)
            .is_some_and(|rest| rest.starts_with(':'))
}

/// The SHA-256 of the `[agents.<alias>]` text of `doc`, when it has that agent.
fn agent_entry_hash(doc: &ConfigDocument, alias: &str) -> Option<String> {
    use sha2::{Digest, Sha256};
    doc.agent_block_text(alias)
        .map(|text| hex::encode(Sha256::digest(text.as_bytes())))
}

/// Whether the `[agents.<alias>]` entry of `doc` is the one this restore saved: its marker
/// names exactly that text. A marker without a hash (or none) never claims an entry.
fn own_entry(entry: &JournalEntry, doc: &ConfigDocument, alias: &str) -> bool {
    let Some(hash) = agent_entry_hash(doc, alias) else {
        return false;
    };
    entry
        .steps
        .iter()
        .filter_map(|s| s.strip_prefix(CONFIG_SAVING)?.strip_prefix(':'))
        .any(|marked| marked == hash)
}

fn bad(path: &Path, reason: impl ToString) -> LifecycleError {
    LifecycleError::BadFile {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

fn cron_blocks(archive: &Path) -> Result<Vec<RemovedBlock>, LifecycleError> {
    let p = archive.join("cascade").join("cron.json");
    if !p.exists() {
        return Ok(Vec::new());
    }
    #[derive(serde::Deserialize)]
    struct Doc {
        config_blocks: Vec<RemovedBlock>,
    }
    Ok(read_json::<Doc>(&p)?.config_blocks)
}

/// Every deletion archive of an install, by name, with its manifest (no service needed).
pub fn list_archives(layout: &warren_config::InstallLayout) -> Vec<ArchiveInfo> {
    let Ok(rd) = std::fs::read_dir(layout.deleted_dir()) else {
        return Vec::new();
    };
    let mut out: Vec<ArchiveInfo> = rd
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| {
            let path = e.path();
            let m = read_json::<Manifest>(&path.join("manifest.json"));
            ArchiveInfo {
                name: e.file_name().to_string_lossy().into_owned(),
                problem: m
                    .as_ref()
                    .err()
                    .map(|e| format!("{e} (a delete in progress, or an incomplete archive)")),
                manifest: m.ok(),
                path,
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

impl Lifecycle {
    /// Every deletion archive of the install, by name, with its manifest.
    pub fn archives(&self) -> Vec<ArchiveInfo> {
        list_archives(&self.layout)
    }

    /// An archive by folder name (under `data/agents/_deleted/`) or by absolute path.
    pub fn resolve_archive(&self, archive: &str) -> Result<PathBuf, LifecycleError> {
        let path = self.archive_path(archive);
        if path.join("manifest.json").is_file() {
            Ok(path)
        } else {
            Err(LifecycleError::UnknownArchive(path))
        }
    }

    /// The archive folder `archive` names: an absolute path, a folder name under
    /// `data/agents/_deleted/`, or an alias (its newest archive; archive names carry a time,
    /// so they never read as an alias).
    fn archive_path(&self, archive: &str) -> PathBuf {
        let given = Path::new(archive);
        if given.is_absolute() {
            return given.to_path_buf();
        }
        let direct = self.layout.deleted_dir().join(given);
        if direct.exists() || validate_alias(archive).is_err() {
            return direct;
        }
        list_archives(&self.layout)
            .into_iter()
            .rev()
            .find(|a| a.manifest.as_ref().is_some_and(|m| m.alias == archive))
            .map(|a| a.path)
            .unwrap_or(direct)
    }

    /// Restores the agent of `archive` (as `as_alias` when given). Refuses a taken alias.
    pub async fn restore(
        &self,
        archive: &str,
        as_alias: Option<&str>,
        dry_run: bool,
    ) -> Result<LifecycleReport, LifecycleError> {
        let wanted = self.archive_path(archive);
        if !dry_run {
            if let Some(entry) =
                self.pending_where(|op| matches!(op, Operation::Restore(j) if j.archive == wanted))
            {
                let Operation::Restore(j) = &entry.op else {
                    return Err(bad(&wanted, "journal mismatch"));
                };
                let _g = self.quiesce(&[&j.alias.clone()], false).await?;
                return self.run_restore(entry, None).await;
            }
        }
        let archive = self.resolve_archive(archive)?;
        let manifest: Manifest = read_json(&archive.join("manifest.json"))?;
        let alias = as_alias.unwrap_or(&manifest.alias).to_string();
        validate_alias(&alias).map_err(|e| LifecycleError::InvalidAlias {
            alias: alias.clone(),
            reason: e.to_string(),
        })?;
        self.refuse_pending(&[&alias])?;
        let loaded = self.store.load()?;
        if loaded.config.agents.contains_key(&alias) {
            return Err(LifecycleError::RestoreConflict {
                alias,
                archive,
                started: false,
            });
        }
        // The config the restore will produce, validated before anything moves.
        let entry_path = archive.join("config-entry.toml");
        let block = std::fs::read_to_string(&entry_path)
            .map_err(|e| LifecycleError::io("reading", &entry_path, e))?;
        let mut doc = ConfigDocument::parse(&loaded.text).map_err(ConfigError::from)?;
        doc.insert_agent_block(&alias, &block)
            .map_err(|e| bad(&entry_path, e))?;
        let dropped = doc.drop_dangling_references(&alias);
        let prospective = parse_for_install(&doc.to_string(), &self.layout)
            .map(|(config, _)| config)
            .map_err(|errors| ConfigError::Invalid {
                path: entry_path.clone(),
                errors,
            })?;
        let agent = &prospective.agents[&alias];
        let workspace = self
            .layout
            .workspace_for(&alias, agent.workspace.path.as_deref());
        let archived_ws = archive.join("workspace");
        if archived_ws.exists() && workspace.exists() && !is_empty_dir(&workspace) {
            return Err(LifecycleError::Taken(format!(
                "the workspace {} exists and is not empty; move it away or restore with --as NEW",
                workspace.display()
            )));
        }
        let mut plan = Plan::new(OperationKind::Restore, &manifest.alias);
        plan.new_alias = Some(alias.clone());
        plan.archive = Some(archive.clone());
        plan.counts = manifest.exported.clone();
        plan.workspace = Some(PlannedMove {
            exists: archived_ws.exists(),
            from: archived_ws,
            to: workspace.clone(),
        });
        plan.blockers = Vec::new();
        let mut warnings: Vec<String> = dropped
            .iter()
            .map(|d| format!("reference to `{d}` dropped from the restored entry: no such agent"))
            .collect();
        let (grants, not_back) = self.grants_now(&manifest, &prospective, &alias).await?;
        for r in &grants {
            plan.references.push(PlannedReference {
                path: r.path(&alias),
                kind: r.kind(),
                strength: warren_config::RefStrength::Soft,
                action: RefAction::Restore,
            });
        }
        warnings.extend(not_back);
        if dry_run {
            return Ok(LifecycleReport {
                ok: true,
                dry_run: true,
                plan,
                warnings,
                archive: Some(archive),
            });
        }
        let _g = self.quiesce(&[&alias], false).await?;
        let job = RestoreJob {
            archive: archive.clone(),
            alias: alias.clone(),
            workspace,
            memory_backend: prospective
                .effective_memory_backend(&alias)
                .unwrap_or_default(),
            sessions_agent_id: None,
            imported: Default::default(),
            manifest,
            failed: Vec::new(),
        };
        let mut entry = self.new_entry(Operation::Restore(job), &alias);
        entry.warnings.append(&mut warnings);
        self.journal().save(&entry)?;
        self.run_restore(entry, Some(plan)).await
    }

    /// Whether `[agents.<alias>]` is in the config now and is not the entry this restore saved.
    fn taken_by_another(&self, entry: &JournalEntry, alias: &str) -> Result<bool, LifecycleError> {
        let doc = ConfigDocument::parse(&self.store.load()?.text).map_err(ConfigError::from)?;
        Ok(doc.has_agent(alias) && !own_entry(entry, &doc, alias))
    }

    /// Runs (or resumes) the steps of a journaled restore.
    pub(super) async fn run_restore(
        &self,
        mut entry: JournalEntry,
        plan: Option<Plan>,
    ) -> Result<LifecycleReport, LifecycleError> {
        let Operation::Restore(mut job) = entry.op.clone() else {
            return Err(bad(&self.journal().path(&entry.id), "not a restore"));
        };
        let manifest = job.manifest.clone();
        let plan = plan.unwrap_or_else(|| {
            let mut p = Plan::new(OperationKind::Restore, &manifest.alias);
            p.new_alias = Some(job.alias.clone());
            p.archive = Some(job.archive.clone());
            p.counts = manifest.exported.clone();
            p.resumed = true;
            p
        });
        // Never merge: an agent that holds the alias now (added by hand while the restore was
        // unfinished) stops the restore before anything more comes back, unless it is the very
        // entry this restore saved before it was interrupted.
        if !entry.done("config") && self.taken_by_another(&entry, &job.alias)? {
            let started = !entry.steps.is_empty();
            if !started {
                self.journal().remove(&entry.id)?;
            }
            return Err(LifecycleError::RestoreConflict {
                alias: job.alias.clone(),
                archive: job.archive.clone(),
                started,
            });
        }
        if !entry.done("workspace") {
            let from = job.archive.join("workspace");
            match move_dir(&from, &job.workspace).and_then(|_| verify_moved(&from, &job.workspace))
            {
                Ok(()) => self.step_done(&mut entry, "workspace")?,
                Err(e) => {
                    self.journal().save(&entry)?;
                    let mut warnings = entry.warnings.clone();
                    warnings.push(format!("workspace not restored: {e}"));
                    warnings.push(format!(
                        "the restore is unfinished (journal {}): `{}` stays blocked until it is; {}",
                        self.journal().path(&entry.id).display(),
                        job.alias,
                        entry.op.resume_hint()
                    ));
                    return Ok(LifecycleReport {
                        ok: false,
                        dry_run: false,
                        plan,
                        warnings,
                        archive: Some(job.archive.clone()),
                    });
                }
            }
        }
        if !entry.done("agent_row") {
            if let Some(wanted) = &manifest.sessions_agent_id {
                match db::claim_agent_row(&self.pool, &job.alias, wanted, &manifest.tombstone)
                    .await?
                {
                    Ok(id) => job.sessions_agent_id = Some(id),
                    Err(other) => {
                        job.failed.push("agent_row".into());
                        entry.warnings.push(format!(
                            "`{}` already owns sessions under id {other}; sessions, usage and receipts stay in the archive",
                            job.alias
                        ));
                    }
                }
            }
            entry.op = Operation::Restore(job.clone());
            self.step_done(&mut entry, "agent_row")?;
        }
        let cron_jobs: Vec<String> = cron_blocks(&job.archive)?
            .into_iter()
            .map(|b| b.name)
            .collect();
        let cfg = self.store.load()?.config;
        // Imports that could not complete in this run: never journaled as done, so the restore
        // stays open (the alias held, the archive kept) and the next run imports them again.
        let mut problems: Vec<String> = Vec::new();
        for p in self.participants() {
            let kind = p.kind();
            let step = format!("import:{kind}");
            if entry.done(&step) {
                continue;
            }
            let file = job.archive.join("cascade").join(format!("{kind}.json"));
            let bytes = match std::fs::read(&file) {
                Ok(b) => Some(b),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(LifecycleError::io("reading", file, e)),
            };
            let state = AgentState {
                alias: &job.alias,
                config: &cfg,
                memory_backend: job.memory_backend,
                workspace: &job.workspace,
                sessions_agent_id: job.sessions_agent_id.as_deref(),
                cron_jobs: &cron_jobs,
            };
            match p
                .restore(&state, bytes.as_deref(), &manifest.tombstone)
                .await
            {
                Ok(n) => {
                    job.imported.insert(kind.to_string(), n);
                }
                Err(e) => {
                    problems.push(format!("{kind} not restored yet: {e}"));
                    continue;
                }
            }
            entry.op = Operation::Restore(job.clone());
            self.step_done(&mut entry, &step)?;
        }
        if !entry.done("config") {
            let before = self.store.load()?.config;
            let (grants, not_back) = self.grants_now(&manifest, &before, &job.alias).await?;
            let block_path = job.archive.join("config-entry.toml");
            let block = std::fs::read_to_string(&block_path)
                .map_err(|e| LifecycleError::io("reading", &block_path, e))?;
            let crons = cron_blocks(&job.archive)?;
            let alias = job.alias.clone();
            let journal = self.journal();
            // Why the marker could not be journaled (the save is then not made).
            let mut unmarked: Option<LifecycleError> = None;
            let edited = self.store.edit(|doc, _| {
                let mut notes = Vec::new();
                if doc.has_agent(&alias) {
                    // Saved by an earlier run of this restore (the marker names this very
                    // entry), or taken by someone else (then nothing is merged).
                    if !own_entry(&entry, doc, &alias) {
                        return Ok(None);
                    }
                    // That run's notes died with it: a cron job that did not come back then
                    // is not under the alias now, and must keep the archive all the same.
                    for c in &crons {
                        if doc.cron_agent(&c.name).as_deref() != Some(alias.as_str()) {
                            let taken = DocumentError::AlreadyExists {
                                what: "cron job".into(),
                                name: c.name.clone(),
                            };
                            notes.push(format!("cron job `{}` not restored: {taken}", c.name));
                        }
                    }
                    return Ok(Some(notes));
                }
                doc.insert_agent_block(&alias, &block)?;
                doc.drop_dangling_references(&alias);
                // The grants the others held on the agent, where the holder is still here.
                for r in &grants {
                    doc.restore_reference(&alias, r)?;
                }
                for c in &crons {
                    if let Err(e) = doc.insert_cron_block(&c.name, &c.text, &alias) {
                        notes.push(format!("cron job `{}` not restored: {e}", c.name));
                    }
                }
                // Journaled before the save, under the config lock: after a crash, an entry
                // under the alias is this restore's own only when it is the text saved here
                // (as a later load parses it).
                let saved = ConfigDocument::parse(&doc.to_string())?;
                let hash = agent_entry_hash(&saved, &alias).unwrap_or_default();
                entry.steps.retain(|s| !is_saving_marker(s));
                entry.steps.push(format!("{CONFIG_SAVING}:{hash}"));
                let marked = journal.save(&entry).and_then(|()| {
                    self.hook
                        .after_step(entry.op.name(), CONFIG_SAVING)
                        .map_err(|_| LifecycleError::Interrupted {
                            op: entry.op.describe(),
                            step: CONFIG_SAVING.to_string(),
                            journal: journal.path(&entry.id),
                        })
                });
                if let Err(e) = marked {
                    let reason = e.to_string();
                    unmarked = Some(e);
                    return Err(ConfigError::Io {
                        action: "journaling the config save of",
                        path: journal.path(&entry.id),
                        source: std::io::Error::other(reason),
                    });
                }
                Ok(Some(notes))
            });
            if let Some(e) = unmarked {
                return Err(e);
            }
            // A failed save keeps its marker: it names only the entry this restore would have
            // written, so nothing else is ever taken for it.
            let (outcome, _) = edited?;
            let Some(notes) = outcome else {
                return Err(LifecycleError::RestoreConflict {
                    alias: job.alias.clone(),
                    archive: job.archive.clone(),
                    started: true,
                });
            };
            if !notes.is_empty() {
                job.failed.push("config:cron".into());
                entry.op = Operation::Restore(job.clone());
            }
            entry.warnings.extend(notes);
            let now = self.store.load()?.config;
            entry.warnings.extend(not_back);
            for r in &grants {
                if !now.agents.contains_key(r.holder()) {
                    entry.warnings.push(missing_holder(r, &job.alias));
                }
            }
            self.step_done(&mut entry, "config")?;
        }
        if !problems.is_empty() {
            self.journal().save(&entry)?;
            let mut warnings = entry.warnings.clone();
            warnings.extend(problems);
            warnings.push(format!(
                "the restore is unfinished (journal {}): `{}` stays blocked and the archive is kept until it is; {}",
                self.journal().path(&entry.id).display(),
                job.alias,
                entry.op.resume_hint()
            ));
            for w in &warnings {
                tracing::warn!(agent = %job.alias, "restore: {w}");
            }
            return Ok(LifecycleReport {
                ok: false,
                dry_run: false,
                plan,
                warnings,
                archive: Some(job.archive.clone()),
            });
        }
        let failed = !job.failed.is_empty();
        let mut archive = None;
        if !entry.done("archive_removed") {
            if failed {
                entry.warnings.push(format!(
                    "the archive {} is kept because not everything came back",
                    job.archive.display()
                ));
                archive = Some(job.archive.clone());
            } else if let Err(e) = std::fs::remove_dir_all(&job.archive) {
                entry.warnings.push(format!(
                    "restored, but removing the archive {} failed: {e}",
                    job.archive.display()
                ));
                archive = Some(job.archive.clone());
            }
            self.step_done(&mut entry, "archive_removed")?;
        }
        self.journal().finish(&entry, self.clock.now())?;
        tracing::info!(
            agent = %job.alias,
            archive = %job.archive.display(),
            "agent restored{}",
            if failed { " (not everything came back; the archive is kept)" } else { "" }
        );
        Ok(LifecycleReport {
            ok: !failed,
            dry_run: false,
            plan,
            warnings: entry.warnings,
            archive,
        })
    }
}

impl Lifecycle {
    /// The grants of `manifest` as they go back into `config` for `alias`: each on the agent
    /// that held it when the delete ran, found by its stable `sessions.db` id under the alias
    /// it has now (a holder renamed since gets it under its new alias). A holder that is gone,
    /// or whose alias another agent has taken since, gets nothing: a warning says so. Archives
    /// of earlier versions, without holder ids, go back by alias.
    async fn grants_now(
        &self,
        manifest: &Manifest,
        config: &warren_types::Config,
        alias: &str,
    ) -> Result<(Vec<warren_config::HeldReference>, Vec<String>), LifecycleError> {
        let mut grants = Vec::new();
        let mut warnings = Vec::new();
        for r in &manifest.references {
            let Some(id) = manifest.holder_ids.get(r.holder()) else {
                if config.agents.contains_key(r.holder()) {
                    grants.push(r.clone());
                } else {
                    warnings.push(missing_holder(r, alias));
                }
                continue;
            };
            let now: Option<String> = sqlx::query_scalar("SELECT alias FROM agents WHERE id = ?")
                .bind(id)
                .fetch_optional(&self.pool)
                .await
                .map_err(warren_state::db::DbError::from)?;
            match now {
                Some(a) if config.agents.contains_key(&a) => grants.push(r.with_holder(&a)),
                _ if config.agents.contains_key(r.holder()) => warnings.push(format!(
                    "grant not restored: `{}` is not the agent that held it when `{alias}` was deleted (that one was deleted or renamed since); {} is not put back, add it by hand if this agent should have it",
                    r.holder(),
                    r.describe(alias)
                )),
                _ => warnings.push(missing_holder(r, alias)),
            }
        }
        Ok((grants, warnings))
    }
}

/// Why a grant another agent held is not put back: that agent is gone.
fn missing_holder(r: &warren_config::HeldReference, alias: &str) -> String {
    format!(
        "grant not restored: `{}` no longer exists ({} was removed by the delete)",
        r.holder(),
        r.describe(alias)
    )
}
