//! What the lifecycle service (rename, delete, restore of agents) keeps on disk: the journal
//! of operations in flight (`data/lifecycle/journal/`), the archive manifests and plans it
//! writes, its error type, and the checks that refuse work on an alias an unfinished operation
//! or import holds. The service itself is the runtime's (`warren_runtime::lifecycle`).

pub mod error;
pub mod files;
pub mod journal;
pub mod plan;

pub use error::LifecycleError;
pub use journal::{
    FailExport, InterruptAfter, InterruptBeforeJournal, Journal, JournalEntry, NoInterrupt,
    Operation, StepHook,
};
pub use plan::{
    ArchiveInfo, LifecycleReport, Manifest, OperationKind, Plan, PlannedMove, PlannedReference,
    RefAction,
};

use warren_config::InstallLayout;

/// The unfinished operation (journal entry) that involves `alias`, if any. Unreadable entries
/// are skipped here; the lifecycle service's `resume_pending` reports them.
pub fn pending_for(layout: &InstallLayout, alias: &str) -> Option<JournalEntry> {
    Journal::new(layout.journal_dir())
        .pending()
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.op.aliases().contains(&alias))
}

/// Refuses with [`LifecycleError::Pending`] (code `lifecycle_pending`) when an unfinished
/// rename, delete or restore involves `alias`: its turns, `agents create` and other lifecycle
/// commands on it wait until the operation is finished.
pub fn refuse_if_pending(layout: &InstallLayout, alias: &str) -> Result<(), LifecycleError> {
    if let Some(e) = pending_for(layout, alias) {
        return Err(pending_error(layout, alias, &e));
    }
    match import_holding(layout, alias) {
        None => Ok(()),
        Some(hold) => Err(LifecycleError::Pending {
            alias: alias.to_string(),
            operation: format!("import of the ZeroClaw install at {}", hold.source.display()),
            journal: hold.path,
            hint: "finish it with `warren agents unfinished --finish` (or the window's Resume), or run the same import again".into(),
        }),
    }
}

/// An unfinished import that writes an alias, as read from its journal entry.
#[derive(Debug, Clone)]
pub struct ImportHold {
    /// The entry's file.
    pub path: std::path::PathBuf,
    /// The install imported from.
    pub source: std::path::PathBuf,
}

/// The unfinished import (in [`InstallLayout::import_journal_dir`]) whose entry lists `alias`
/// among the agents it writes. Entries that cannot be read hold nothing here; the import's own
/// resume reports them.
pub fn import_holding(layout: &InstallLayout, alias: &str) -> Option<ImportHold> {
    #[derive(serde::Deserialize)]
    struct Entry {
        #[serde(default)]
        source: std::path::PathBuf,
        #[serde(default)]
        aliases: Vec<String>,
    }
    let dir = layout.import_journal_dir();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files.into_iter().find_map(|path| {
        let entry: Entry = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
        entry
            .aliases
            .iter()
            .any(|a| a == alias)
            .then_some(ImportHold {
                path,
                source: entry.source,
            })
    })
}

fn pending_error(layout: &InstallLayout, alias: &str, e: &JournalEntry) -> LifecycleError {
    LifecycleError::Pending {
        alias: alias.to_string(),
        operation: e.op.describe(),
        journal: Journal::new(layout.journal_dir()).path(&e.id),
        hint: e.op.resume_hint(),
    }
}
