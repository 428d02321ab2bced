//! `warren import zeroclaw`: the ZeroClaw importer (`warren-import`, docs/import.md) run on
//! this install's config store and host facts, and its unfinished imports as the list of
//! unfinished operations shows them.

pub use warren_import::plan;
pub use warren_import::{
    default_source, AgentPlan, Callout, CalloutDirection, Collision, CronPlan, ImportCounts,
    ImportOptions, ImportPlan, ImportProgress, ImportReport, NamePlan, Progress, ProviderPlan,
    Totals, Unmapped, ZeroclawInstall,
};

use std::collections::BTreeMap;
use std::path::PathBuf;

use warren_import::{import_description, import_step_label, pending_imports, Importer};
use warren_types::ApiError;

use crate::lifecycle_view::{LifecycleKind, PendingOperationView, ResumeOutcomeView};
use crate::Warren;

impl Warren {
    fn importer(&self) -> Importer<'_> {
        Importer::new(&self.store, &self.env)
    }

    /// Plans, and unless `dry_run` carries out, the import of a ZeroClaw install.
    pub async fn import_zeroclaw(
        &self,
        opts: &ImportOptions,
        progress: Progress<'_>,
    ) -> Result<ImportReport, ApiError> {
        self.importer().import_zeroclaw(opts, progress).await
    }

    /// [`Warren::import_zeroclaw`] with a step hook (tests interrupt it after a step).
    #[cfg(test)]
    pub(crate) async fn import_zeroclaw_with(
        &self,
        opts: &ImportOptions,
        progress: Progress<'_>,
        hook: &dyn warren_state::lifecycle::StepHook,
    ) -> Result<ImportReport, ApiError> {
        self.importer()
            .import_zeroclaw_with(opts, progress, hook)
            .await
    }

    /// Finishes every interrupted import (at start, like unfinished renames and deletes).
    pub async fn resume_imports(&self) -> Vec<(String, Result<ImportReport, ApiError>)> {
        self.importer().resume_imports().await
    }

    /// The ZeroClaw install at ZeroClaw's own default place (`$ZEROCLAW_CONFIG_DIR`, else
    /// `~/.zeroclaw`), when it has a `config.toml`; `None` otherwise. Reads nothing else of it.
    pub fn zeroclaw_install(&self) -> Result<Option<ZeroclawInstall>, ApiError> {
        self.importer().zeroclaw_install()
    }

    /// The unfinished imports as the list of unfinished operations shows them, with the error
    /// of the last attempt to finish each (`errors`, by journal id).
    pub(crate) fn pending_import_views(
        &self,
        errors: &BTreeMap<String, String>,
    ) -> Vec<PendingOperationView> {
        let hint = "warren agents unfinished --finish (or run the same import again)".to_string();
        pending_imports(self.layout())
            .into_iter()
            .map(|job| match job {
                Ok(j) => PendingOperationView {
                    kind: LifecycleKind::Import,
                    description: import_description(&j.source),
                    aliases: j.aliases.clone(),
                    started_at: j.started_at.clone(),
                    steps_done: j.steps.iter().map(|s| import_step_label(s)).collect(),
                    stopped_at: None,
                    last_error: errors.get(&j.id).cloned(),
                    hint: hint.clone(),
                    journal: j.id,
                },
                Err(e) => PendingOperationView {
                    journal: String::new(),
                    kind: LifecycleKind::Unreadable,
                    description: "an unreadable import journal entry".into(),
                    aliases: Vec::new(),
                    started_at: String::new(),
                    steps_done: Vec::new(),
                    stopped_at: None,
                    last_error: Some(e.message),
                    hint: format!(
                        "repair or remove the file under {}",
                        self.layout().import_journal_dir().display()
                    ),
                },
            })
            .collect()
    }

    /// [`Warren::resume_imports`] as resume outcomes: one per unfinished import, finished or
    /// with the reason it is not.
    pub(crate) async fn resume_import_views(&self) -> Vec<ResumeOutcomeView> {
        let sources: BTreeMap<String, PathBuf> = pending_imports(self.layout())
            .into_iter()
            .filter_map(Result::ok)
            .map(|j| (j.id, j.source))
            .collect();
        self.resume_imports()
            .await
            .into_iter()
            .map(|(id, r)| ResumeOutcomeView {
                operation: sources
                    .get(&id)
                    .map(|s| import_description(s))
                    .unwrap_or_else(|| "an unreadable import journal entry".into()),
                journal: id,
                ok: r.is_ok(),
                error: r.err().map(|e| e.message),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
