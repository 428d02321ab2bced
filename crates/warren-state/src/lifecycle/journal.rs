//! The lifecycle journal (`data/lifecycle/journal/`): one JSON file per operation in flight,
//! rewritten durably after every step, removed when the operation completed. A crash leaves the
//! file behind, and [`super::Lifecycle::resume_pending`] or rerunning the command finishes it.

use super::error::LifecycleError;
use super::files::{read_json, write_json};
use super::plan::OperationKind;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use warren_types::MemoryBackendKind;

/// A rename in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RenameJob {
    /// The old alias.
    pub old: String,
    /// The new alias.
    pub new: String,
    /// Workspace before the rename.
    pub old_workspace: PathBuf,
    /// Workspace after the rename (the same path for a custom `workspace.path`).
    pub new_workspace: PathBuf,
    /// The agent's effective memory backend.
    pub memory_backend: MemoryBackendKind,
}

/// A delete in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeleteJob {
    /// The alias being deleted.
    pub alias: String,
    /// The archive folder.
    pub archive: PathBuf,
    /// The resolved workspace path.
    pub workspace: PathBuf,
    /// Whether `workspace.path` was custom.
    pub custom_workspace: bool,
    /// The agent's effective memory backend.
    pub memory_backend: MemoryBackendKind,
    /// The agent's UUID in the memory store, when it had one.
    pub memory_agent_id: Option<String>,
    /// The agent's id in `sessions.db`, when it had one.
    pub sessions_agent_id: Option<String>,
    /// Deletion time (RFC 3339).
    pub time: String,
    /// Rows exported per kind.
    pub exported: BTreeMap<String, u64>,
    /// Rows purged per kind: counted and journaled before the purge (step `count:<kind>`).
    pub purged: BTreeMap<String, u64>,
    /// Kinds whose export failed, in journals of earlier versions (a rerun exports them again).
    pub failed: BTreeMap<String, String>,
    /// Ids of the agent's `[cron.<id>]` jobs (their scheduler cursors are owned state).
    #[serde(default)]
    pub cron_jobs: Vec<String>,
    /// The grants other agents held on the agent when the delete started (the config edit
    /// removes them; the manifest keeps them for a restore).
    #[serde(default)]
    pub references: Vec<warren_config::HeldReference>,
    /// The stable `sessions.db` id of each holder of `references`, by its alias then: a
    /// restore puts a grant back on the agent with that id (under its alias now), never on
    /// another agent that took the alias since.
    #[serde(default)]
    pub holder_ids: BTreeMap<String, String>,
}

/// A restore in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestoreJob {
    /// The archive folder.
    pub archive: PathBuf,
    /// The alias the agent comes back as.
    pub alias: String,
    /// Where the workspace goes.
    pub workspace: PathBuf,
    /// The memory backend the restored entry will use.
    pub memory_backend: MemoryBackendKind,
    /// The sessions.db id the agent got back.
    pub sessions_agent_id: Option<String>,
    /// Rows imported per kind.
    pub imported: BTreeMap<String, u64>,
    /// The archive's manifest (the archive itself is removed at the end).
    pub manifest: super::plan::Manifest,
    /// Steps whose data did not come back (the archive is kept for them).
    #[serde(default)]
    pub failed: Vec<String>,
}

/// The operation a journal entry records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Operation {
    /// Rename OLD → NEW.
    Rename(RenameJob),
    /// Delete with archive.
    Delete(DeleteJob),
    /// Restore from an archive.
    Restore(RestoreJob),
}

impl Operation {
    /// Which operation it is.
    pub fn kind(&self) -> OperationKind {
        match self {
            Operation::Rename(_) => OperationKind::Rename,
            Operation::Delete(_) => OperationKind::Delete,
            Operation::Restore(_) => OperationKind::Restore,
        }
    }

    /// `rename`, `delete` or `restore`.
    pub fn name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// The aliases the operation involves: each refuses turns, `agents create` and other
    /// lifecycle commands while the operation is unfinished.
    pub fn aliases(&self) -> Vec<&str> {
        match self {
            Operation::Rename(j) => vec![j.old.as_str(), j.new.as_str()],
            Operation::Delete(j) => vec![j.alias.as_str()],
            Operation::Restore(j) => vec![j.alias.as_str()],
        }
    }

    /// How a person finishes the operation: the command that resumes it.
    pub fn resume_hint(&self) -> String {
        let cmd = match self {
            Operation::Rename(j) => format!("warren agents rename {} {}", j.old, j.new),
            Operation::Delete(j) => format!("warren agents delete {}", j.alias),
            Operation::Restore(j) => format!(
                "warren agents restore {} --as {}",
                j.archive
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| j.archive.display().to_string()),
                j.alias
            ),
        };
        format!(
            "finish it with `{cmd}` or `warren agents unfinished --finish` (every Warren start also retries it) once the cause of the failure is fixed"
        )
    }

    /// A one-line description (`rename alice → ann`).
    pub fn describe(&self) -> String {
        match self {
            Operation::Rename(j) => format!("rename {} → {}", j.old, j.new),
            Operation::Delete(j) => format!("delete {}", j.alias),
            Operation::Restore(j) => format!("restore {} as {}", j.archive.display(), j.alias),
        }
    }
}

/// One operation in flight, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEntry {
    /// File stem of the entry.
    pub id: String,
    /// When the operation started (RFC 3339).
    pub started_at: String,
    /// What it does.
    pub op: Operation,
    /// Steps completed, in order.
    pub steps: Vec<String>,
    /// Warnings collected so far.
    pub warnings: Vec<String>,
}

impl JournalEntry {
    /// Whether `step` was completed.
    pub fn done(&self, step: &str) -> bool {
        self.steps.iter().any(|s| s == step)
    }
}

/// Test hook consulted after every journaled step: an error stops the operation there, as a
/// crash would, leaving the journal to resume it. Production code uses [`NoInterrupt`].
pub trait StepHook: Send + Sync {
    /// Called after `step` of `op` was journaled; `Err` interrupts.
    fn after_step(&self, op: &str, step: &str) -> Result<(), String>;
    /// Called after the side effect of `step` of `op` and before it is journaled; `Err`
    /// interrupts there (the effect happened, the journal does not know it yet).
    fn before_journal(&self, _op: &str, _step: &str) -> Result<(), String> {
        Ok(())
    }
    /// Called before a delete exports `kind`; `Some(reason)` makes that export fail.
    fn export_fault(&self, _kind: &str) -> Option<String> {
        None
    }
}

/// Makes the export of one kind fail (and nothing else).
pub struct FailExport(pub &'static str);

impl StepHook for FailExport {
    fn after_step(&self, _op: &str, _step: &str) -> Result<(), String> {
        Ok(())
    }
    fn export_fault(&self, kind: &str) -> Option<String> {
        (kind == self.0).then(|| format!("injected failure exporting {kind}"))
    }
}

/// The hook that never interrupts.
pub struct NoInterrupt;

impl StepHook for NoInterrupt {
    fn after_step(&self, _op: &str, _step: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Interrupts after the `n`-th journaled step (counting from 1) and never again.
pub struct InterruptAfter {
    n: usize,
    seen: AtomicUsize,
}

impl InterruptAfter {
    /// A hook that fails after the `n`-th step.
    pub fn new(n: usize) -> Self {
        InterruptAfter {
            n,
            seen: AtomicUsize::new(0),
        }
    }

    /// Whether the hook fired.
    pub fn fired(&self) -> bool {
        self.seen.load(Ordering::SeqCst) >= self.n
    }
}

impl StepHook for InterruptAfter {
    fn after_step(&self, op: &str, step: &str) -> Result<(), String> {
        let k = self.seen.fetch_add(1, Ordering::SeqCst) + 1;
        if k == self.n {
            Err(format!("injected interruption after {op} step `{step}`"))
        } else {
            Ok(())
        }
    }
}

/// Interrupts before the `n`-th journal write of a step (counting from 1), after that step's
/// side effect, and never again.
pub struct InterruptBeforeJournal {
    n: usize,
    seen: AtomicUsize,
}

impl InterruptBeforeJournal {
    /// A hook that fails before the `n`-th step is journaled.
    pub fn new(n: usize) -> Self {
        InterruptBeforeJournal {
            n,
            seen: AtomicUsize::new(0),
        }
    }

    /// Whether the hook fired.
    pub fn fired(&self) -> bool {
        self.seen.load(Ordering::SeqCst) >= self.n
    }
}

impl StepHook for InterruptBeforeJournal {
    fn after_step(&self, _op: &str, _step: &str) -> Result<(), String> {
        Ok(())
    }
    fn before_journal(&self, op: &str, step: &str) -> Result<(), String> {
        let k = self.seen.fetch_add(1, Ordering::SeqCst) + 1;
        if k == self.n {
            Err(format!(
                "injected interruption before journaling {op} step `{step}`"
            ))
        } else {
            Ok(())
        }
    }
}

/// How many finished operations the history keeps.
pub const HISTORY_KEPT: usize = 100;

/// A finished rename, delete or restore, as the history records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    /// Its journal entry id (unique per operation).
    pub id: String,
    /// Which operation it was.
    pub kind: super::OperationKind,
    /// The alias it was about (a rename's old alias, a restore's restored alias).
    pub alias: String,
    /// A rename's new alias.
    #[serde(default)]
    pub new_alias: Option<String>,
    /// When it finished (RFC 3339).
    pub at: String,
}

/// The journal directory.
#[derive(Debug, Clone)]
pub struct Journal {
    dir: PathBuf,
}

impl Journal {
    /// The journal under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Journal { dir: dir.into() }
    }

    /// The file of an entry.
    pub fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Durably (re)writes an entry.
    pub fn save(&self, entry: &JournalEntry) -> Result<(), LifecycleError> {
        write_json(&self.path(&entry.id), entry)
    }

    /// Removes a completed entry.
    pub fn remove(&self, id: &str) -> Result<(), LifecycleError> {
        let p = self.path(id);
        match std::fs::remove_file(&p) {
            Ok(()) => super::files::sync_dir(&self.dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(LifecycleError::io("removing", p, e)),
        }
    }

    /// Removes the entry of an operation that finished and records it in the history
    /// ([`Journal::finished`]), which is how windows of other processes learn that an agent they
    /// show was renamed, deleted or restored. The record is a notice, not a step: failing to
    /// write it is logged and the operation stays finished.
    pub fn finish(
        &self,
        entry: &JournalEntry,
        at: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), LifecycleError> {
        self.remove(&entry.id)?;
        let (alias, new_alias) = match &entry.op {
            Operation::Rename(j) => (j.old.clone(), Some(j.new.clone())),
            Operation::Delete(j) => (j.alias.clone(), None),
            Operation::Restore(j) => (j.alias.clone(), None),
        };
        let record = Finished {
            id: entry.id.clone(),
            kind: entry.op.kind(),
            alias,
            new_alias,
            at: at.to_rfc3339(),
        };
        if let Err(e) = self.append_history(&record) {
            tracing::warn!(journal = %entry.id, "recording the finished {} in the lifecycle history failed: {e}", entry.op.name());
        }
        Ok(())
    }

    /// `history.jsonl` beside the journal folder: one line per finished operation, the newest
    /// [`HISTORY_KEPT`] kept.
    pub fn history_path(&self) -> PathBuf {
        self.dir.parent().unwrap_or(&self.dir).join("history.jsonl")
    }

    fn append_history(&self, record: &Finished) -> std::io::Result<()> {
        use std::io::Write;
        let path = self.history_path();
        let mut lines: Vec<String> = match std::fs::read_to_string(&path) {
            Ok(t) => t.lines().map(str::to_string).collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(e),
        };
        lines.push(serde_json::to_string(record).map_err(std::io::Error::other)?);
        let keep = lines.len().saturating_sub(HISTORY_KEPT);
        let mut text = lines[keep..].join("\n");
        text.push('\n');
        let tmp = path.with_extension("jsonl.tmp");
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, &path)
    }

    /// The finished operations the history holds, oldest first (lines that cannot be read are
    /// skipped).
    pub fn finished(&self) -> Vec<Finished> {
        std::fs::read_to_string(self.history_path())
            .map(|t| {
                t.lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every unfinished entry, oldest first; unreadable files are returned as errors.
    pub fn pending(&self) -> Vec<Result<JournalEntry, LifecycleError>> {
        let Ok(rd) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| is_entry(p))
            .collect();
        files.sort();
        files.iter().map(|p| read_json(p)).collect()
    }
}

fn is_entry(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "json")
        && p.file_name()
            .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
}
