//! Rename, delete with archive, archives and restore (rules §8): thin calls into the runtime's
//! lifecycle service, shared by the CLI and the desktop app. Interrupted operations recorded in
//! the journal are finished first, and what that did is reported with the next answer.

use crate::lifecycle_view::{ArchiveView, LifecycleOutcome, ResumeOutcomeView};
use crate::{errors::config_error, Warren};
use std::sync::Arc;
use warren_runtime::lifecycle::{
    CronJobsState, Lifecycle, LifecycleError, LifecycleReport, Operation, PausedState,
    ResumeOutcome, RunOptions, SecretsState,
};
use warren_state::cron::CronStore;
use warren_state::secrets::FileSecretStore;
use warren_types::{ApiError, ErrorCode};

/// Converts a lifecycle error into an API error (blockers become details).
pub(crate) fn lifecycle_error(e: LifecycleError) -> ApiError {
    use LifecycleError as L;
    let code = match &e {
        L::Config(_) => {
            return match e {
                L::Config(c) => config_error(c),
                other => ApiError::new(ErrorCode::Internal, other.to_string()),
            }
        }
        L::UnknownAgent(_) | L::UnknownArchive(_) => ErrorCode::NotFound,
        L::InvalidAlias { .. } => ErrorCode::InvalidArgument,
        L::Taken(_) | L::RestoreConflict { .. } => ErrorCode::AlreadyExists,
        L::Pending { .. } => ErrorCode::LifecyclePending,
        L::Busy { .. } => ErrorCode::AgentBusy,
        L::Blocked { .. } => ErrorCode::Denied,
        L::BadFile { .. } | L::Io { .. } => ErrorCode::Io,
        L::Db(_) | L::Memory(_) => ErrorCode::Storage,
        L::Interrupted { .. } => ErrorCode::Internal,
    };
    let details = match &e {
        L::Blocked { blockers, .. } => blockers.clone(),
        _ => Vec::new(),
    };
    ApiError::new(code, e.to_string()).with_details(details)
}

fn resumed_notes(outcomes: &[ResumeOutcome]) -> Vec<String> {
    outcomes
        .iter()
        .map(|o| match &o.error {
            None => format!(
                "finished an interrupted {} (journal {})",
                o.operation, o.journal
            ),
            Some(e) => format!(
                "an interrupted {} (journal {}) could not be finished: {e}",
                o.operation, o.journal
            ),
        })
        .collect()
}

/// Runs `f` on the lifecycle service from a blocking thread, so the returned future is `Send`
/// (the memory stores' futures are not).
async fn on_service<T, F>(svc: Arc<Lifecycle>, f: F) -> Result<T, ApiError>
where
    T: Send + 'static,
    F: for<'a> FnOnce(
            &'a Lifecycle,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = T> + 'a>>
        + Send
        + 'static,
{
    let rt = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || rt.block_on(f(&svc)))
        .await
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("lifecycle task failed: {e}")))
}

impl Warren {
    /// The lifecycle service of this install: the host's stores and turn slots, plus runtime
    /// cron jobs.
    pub(crate) async fn lifecycle(&self) -> Result<Arc<Lifecycle>, ApiError> {
        let host = self.host().await?;
        let cron = CronStore::open(&self.layout().cron_db(), host.sessions().pool().clone())
            .await
            .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
        let secrets = Arc::new(SecretsState::new(
            Arc::new(self.secret_store()?),
            FileSecretStore::for_install(self.layout()),
        ));
        Ok(Arc::new(
            Lifecycle::for_host(host)
                .with_participant(Arc::new(CronJobsState::new(cron)))
                .with_participant(secrets)
                .with_participant(Arc::new(PausedState::new(self.layout().clone()))),
        ))
    }

    /// Finishes the unfinished renames, deletes and restores when a process that hosts agents
    /// starts (desktop app, `warren serve`, `run`, `acp`, `tool`). What could not be finished
    /// is logged; the aliases it involves keep refusing turns with `lifecycle_pending`.
    pub async fn resume_pending(&self) -> Vec<ResumeOutcomeView> {
        let imports = self.resume_import_views().await;
        self.note_imports_resumed(&imports);
        for o in &imports {
            match &o.error {
                None => {
                    tracing::info!(journal = %o.journal, "finished an interrupted {}", o.operation);
                }
                Some(e) => {
                    tracing::warn!(journal = %o.journal, "an interrupted {} could not be finished: {e}", o.operation);
                }
            }
        }
        if warren_state::lifecycle::journal::Journal::new(self.layout().journal_dir())
            .pending()
            .is_empty()
        {
            return Vec::new();
        }
        match self.resume_outcomes().await {
            Ok(done) => {
                for o in &done {
                    match &o.error {
                        None => {
                            tracing::info!(journal = %o.journal, "finished an interrupted {}", o.operation);
                        }
                        Some(e) => {
                            tracing::warn!(journal = %o.journal, "an interrupted {} could not be finished: {e}", o.operation);
                        }
                    }
                }
                done.into_iter().map(Into::into).collect()
            }
            Err(e) => {
                tracing::warn!(
                    "resuming interrupted lifecycle operations failed: {}",
                    e.message
                );
                Vec::new()
            }
        }
    }

    /// Refuses with `lifecycle_pending` while an unfinished rename, delete, restore or import
    /// involves `alias`.
    pub fn refuse_if_lifecycle_pending(&self, alias: &str) -> Result<(), ApiError> {
        warren_state::lifecycle::refuse_if_pending(self.layout(), alias).map_err(lifecycle_error)
    }

    /// Tries again to finish every unfinished rename, delete, restore and import (`warren agents
    /// unfinished --finish`, the window's Resume button) and says for each whether it finished.
    pub async fn resume_lifecycle(&self) -> Result<Vec<ResumeOutcomeView>, ApiError> {
        let mut done: Vec<ResumeOutcomeView> = self
            .resume_outcomes()
            .await?
            .into_iter()
            .map(Into::into)
            .collect();
        let imports = self.resume_import_views().await;
        self.note_imports_resumed(&imports);
        done.extend(imports);
        Ok(done)
    }

    pub(crate) async fn resume_outcomes(&self) -> Result<Vec<ResumeOutcome>, ApiError> {
        let svc = self.lifecycle().await?;
        let outcomes = on_service(svc, |lc| Box::pin(lc.resume_pending())).await?;
        self.note_resumed(&outcomes);
        Ok(outcomes)
    }

    async fn run_op(
        &self,
        op: impl for<'a> FnOnce(
                &'a Lifecycle,
            ) -> std::pin::Pin<
                Box<dyn std::future::Future<Output = Result<LifecycleReport, LifecycleError>> + 'a>,
            > + Send
            + 'static,
        dry_run: bool,
        own: impl Fn(&Operation) -> bool + Send + 'static,
    ) -> Result<LifecycleOutcome, ApiError> {
        self.load()?;
        let svc = self.lifecycle().await?;
        let (resumed, result) = on_service(svc, move |lc| {
            Box::pin(async move {
                let resumed = if dry_run {
                    Vec::new()
                } else {
                    lc.resume_pending_where(|op| !own(op)).await
                };
                (resumed, op(lc).await)
            })
        })
        .await?;
        self.note_resumed(&resumed);
        let notes = resumed_notes(&resumed);
        let mut report = result.map_err(lifecycle_error)?;
        if !report.ok && !dry_run {
            let problem = report.warnings.join("\n");
            for alias in std::iter::once(&report.plan.alias).chain(&report.plan.new_alias) {
                self.note_unfinished(alias, problem.clone());
            }
        }
        let mut warnings = notes;
        warnings.append(&mut report.warnings);
        report.warnings = warnings;
        Ok(report.into())
    }

    /// Renames agent `old` to `new` (`dry_run`: the plan only; `force`: cancel a running turn).
    pub async fn rename_agent(
        &self,
        old: &str,
        new: &str,
        dry_run: bool,
        force: bool,
    ) -> Result<LifecycleOutcome, ApiError> {
        let (old, new) = (old.to_string(), new.to_string());
        let (o, n) = (old.clone(), new.clone());
        let opts = RunOptions { dry_run, force };
        let hint_for = o.clone();
        self.run_op(
            move |lc| Box::pin(async move { lc.rename(&old, &new, opts).await }),
            dry_run,
            move |op| matches!(op, Operation::Rename(j) if j.old == o && j.new == n),
        )
        .await
        .map_err(|e| self.hint_unknown_agent(e, &hint_for))
    }

    /// Deletes agent `alias` into an archive (`dry_run`: the plan only).
    pub async fn delete_agent(
        &self,
        alias: &str,
        dry_run: bool,
        force: bool,
    ) -> Result<LifecycleOutcome, ApiError> {
        let alias = alias.to_string();
        let a = alias.clone();
        let opts = RunOptions { dry_run, force };
        let hint_for = a.clone();
        self.run_op(
            move |lc| Box::pin(async move { lc.delete(&alias, opts).await }),
            dry_run,
            move |op| matches!(op, Operation::Delete(j) if j.alias == a),
        )
        .await
        .map_err(|e| self.hint_unknown_agent(e, &hint_for))
    }

    /// The deletion archives with what their manifests say, oldest first.
    pub fn list_archives(&self) -> Result<Vec<ArchiveView>, ApiError> {
        Ok(warren_runtime::lifecycle::list_archives(self.layout())
            .into_iter()
            .map(Into::into)
            .collect())
    }

    /// Restores the agent of `archive` (a folder name under `data/agents/_deleted/`, an
    /// absolute path, or an alias: its newest archive), as `as_alias` when given.
    pub async fn restore_agent(
        &self,
        archive: &str,
        as_alias: Option<&str>,
        dry_run: bool,
    ) -> Result<LifecycleOutcome, ApiError> {
        let (archive, as_alias) = (archive.to_string(), as_alias.map(String::from));
        let name = archive.clone();
        self.run_op(
            move |lc| {
                Box::pin(async move { lc.restore(&archive, as_alias.as_deref(), dry_run).await })
            },
            dry_run,
            move |op| {
                matches!(op, Operation::Restore(j) if j.archive.ends_with(&name) || j.manifest.alias == name)
            },
        )
        .await
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{install, runtime};
    use warren_types::{CreateAgentRequest, ErrorCode};

    const CONFIG: &str = "schema_version = 1\n\n[risk_profiles.p]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"p\"\n";

    fn req(alias: &str) -> CreateAgentRequest {
        CreateAgentRequest {
            alias: alias.into(),
            risk_profile: "p".into(),
            ..Default::default()
        }
    }

    #[test]
    fn create_is_refused_while_a_rename_of_the_alias_is_unfinished() {
        let (dir, w) = install(CONFIG);
        let ws = w.layout().default_workspace("alice");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("notes.md"), "alice's notes").unwrap();
        // The memory store fails for real: its database path is a directory.
        let db = w.layout().memory_db();
        std::fs::create_dir_all(db.join("not-a-database")).unwrap();
        let rt = runtime();
        let r = rt
            .block_on(w.rename_agent("alice", "ann", false, false))
            .unwrap();
        assert!(!r.ok, "{r:?}");
        let err = w.create_agent(req("alice")).unwrap_err();
        assert_eq!(err.code, ErrorCode::LifecyclePending, "{err:?}");
        assert!(
            err.message.contains("warren agents rename alice ann"),
            "{}",
            err.message
        );
        let again = rt.block_on(w.rename_agent("ann", "anna", false, false));
        assert_eq!(again.unwrap_err().code, ErrorCode::LifecyclePending);
        for alias in ["alice", "ann"] {
            let write = rt.block_on(w.store_memory(alias, "k", "v", None, None));
            assert_eq!(write.unwrap_err().code, ErrorCode::LifecyclePending);
            let forget = rt.block_on(w.forget_memory(alias, "k"));
            assert_eq!(forget.unwrap_err().code, ErrorCode::LifecyclePending);
        }
        // Once the store works again, the next start finishes it and `alice` is free.
        std::fs::remove_dir_all(&db).unwrap();
        let done = rt.block_on(w.resume_pending());
        assert!(done.len() == 1 && done[0].error.is_none(), "{done:?}");
        w.create_agent(req("alice")).unwrap();
        assert!(dir.path().join("agents/ann/workspace/notes.md").is_file());
    }

    #[test]
    fn create_refuses_an_occupied_workspace_folder_unless_told_to_adopt_it() {
        let (_dir, w) = install(CONFIG);
        let folder = w.layout().default_workspace("zed");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("old.txt"), "left behind").unwrap();
        let err = w.create_agent(req("zed")).unwrap_err();
        assert_eq!(err.code, ErrorCode::AlreadyExists, "{err:?}");
        assert!(err.message.contains("--adopt-workspace"), "{}", err.message);
        assert!(w.list_agents().unwrap().iter().all(|a| a.alias != "zed"));
        w.create_agent_with(req("zed"), true).unwrap();
        assert_eq!(
            std::fs::read_to_string(folder.join("old.txt")).unwrap(),
            "left behind"
        );
        // An empty folder is no one's: it is used without asking.
        std::fs::create_dir_all(w.layout().default_workspace("yan")).unwrap();
        w.create_agent(req("yan")).unwrap();
    }
}
