//! What an operation will do (the `--dry-run` answer) and what it did (the report), plus the
//! archive manifest. All of it serialises to the JSON the CLI and the UI show.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use warren_config::{RefKind, RefStrength, Reference};
use warren_types::MemoryBackendKind;

/// Which lifecycle operation a plan is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperationKind {
    /// Rename OLD → NEW.
    Rename,
    /// Delete with archive.
    Delete,
    /// Restore from an archive.
    Restore,
}

impl OperationKind {
    /// `rename`, `delete` or `restore`.
    pub fn as_str(self) -> &'static str {
        match self {
            OperationKind::Rename => "rename",
            OperationKind::Delete => "delete",
            OperationKind::Restore => "restore",
        }
    }
}

impl fmt::Display for OperationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// What an operation does to a config reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefAction {
    /// A rename points it at the new alias.
    Rewrite,
    /// A delete removes it.
    Remove,
    /// It stops a delete (a hard reference).
    Blocks,
    /// A restore puts it back (a grant another agent held on the deleted agent).
    Restore,
}

impl RefAction {
    /// `rewrite`, `remove` or `blocks`.
    pub fn as_str(self) -> &'static str {
        match self {
            RefAction::Rewrite => "rewrite",
            RefAction::Remove => "remove",
            RefAction::Blocks => "blocks",
            RefAction::Restore => "restore",
        }
    }
}

impl fmt::Display for RefAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A config reference the operation rewrites (rename) or removes (delete).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedReference {
    /// Dotted path of the reference.
    pub path: String,
    /// Kind of reference.
    pub kind: RefKind,
    /// Hard (blocks a delete) or soft.
    pub strength: RefStrength,
    /// What the operation does to it.
    pub action: RefAction,
}

impl PlannedReference {
    /// Builds the planned action on a reference.
    pub fn new(r: Reference, action: RefAction) -> Self {
        PlannedReference {
            path: r.path,
            kind: r.kind,
            strength: r.strength,
            action,
        }
    }
}

/// A directory the operation moves.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PlannedMove {
    /// Where it is.
    pub from: PathBuf,
    /// Where it goes.
    pub to: PathBuf,
    /// Whether the source exists now.
    pub exists: bool,
}

/// The plan of a rename, delete or restore.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
    /// The operation.
    pub operation: OperationKind,
    /// The agent acted on (the old alias of a rename; the archived alias of a restore).
    pub alias: String,
    /// The new alias (rename, restore).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub new_alias: Option<String>,
    /// References rewritten, removed, or blocking.
    pub references: Vec<PlannedReference>,
    /// What stops the operation, one line each (empty when it can run).
    pub blockers: Vec<String>,
    /// The workspace move, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<PlannedMove>,
    /// Items per owned-state kind that move, are archived, or come back.
    pub counts: BTreeMap<String, u64>,
    /// The archive folder (delete, restore).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive: Option<PathBuf>,
    /// True when an interrupted run of the same operation was finished instead.
    pub resumed: bool,
}

impl Plan {
    /// An empty plan of `operation` on `alias`.
    pub fn new(operation: OperationKind, alias: &str) -> Self {
        Plan {
            operation,
            alias: alias.to_string(),
            new_alias: None,
            references: Vec::new(),
            blockers: Vec::new(),
            workspace: None,
            counts: BTreeMap::new(),
            archive: None,
            resumed: false,
        }
    }
}

/// The answer of a rename, delete or restore: `{"ok", "plan", "warnings", "archive"?}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LifecycleReport {
    /// True when every step completed (a dry run: when nothing blocks).
    pub ok: bool,
    /// True for a dry run (nothing was changed).
    pub dry_run: bool,
    /// The plan that ran (or would run).
    pub plan: Plan,
    /// Steps that failed after the config was saved, and data kept because of them.
    pub warnings: Vec<String>,
    /// The archive folder (delete).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive: Option<PathBuf>,
}

/// `manifest.json` of a deletion archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Format version.
    pub version: u32,
    /// The deleted alias.
    pub alias: String,
    /// The agent's UUID in the memory store.
    pub agent_id: Option<String>,
    /// The agent's id in `sessions.db` (receipts are authenticated under it).
    pub sessions_agent_id: Option<String>,
    /// Deletion time (RFC 3339, UTC).
    pub time: String,
    /// The memory backend the agent used.
    pub memory_backend: MemoryBackendKind,
    /// Where the workspace was.
    pub workspace: PathBuf,
    /// Whether that was a custom `workspace.path`.
    pub custom_workspace: bool,
    /// Whether `workspace/` holds the workspace.
    pub workspace_archived: bool,
    /// Items exported per kind.
    pub exported: BTreeMap<String, u64>,
    /// Items purged per kind.
    pub purged: BTreeMap<String, u64>,
    /// Kinds whose export failed, in archives of earlier versions (their data was parked under
    /// `tombstone`); a delete now stays unfinished until every export is written.
    pub failed: BTreeMap<String, String>,
    /// The name kept data is parked under (never a valid alias).
    pub tombstone: String,
    /// The grants other agents held on the agent (a restore puts back those whose holder
    /// still exists).
    #[serde(default)]
    pub references: Vec<warren_config::HeldReference>,
    /// The stable id of each holder of `references` (see `DeleteJob::holder_ids`); absent in
    /// archives of earlier versions, whose grants go back by alias.
    #[serde(default)]
    pub holder_ids: BTreeMap<String, String>,
    /// Every warning of the delete.
    pub warnings: Vec<String>,
}

/// One archive as listed by `warren agents archives`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchiveInfo {
    /// Folder name (`<alias>-<time>`), what `restore` takes.
    pub name: String,
    /// Full path.
    pub path: PathBuf,
    /// The manifest, when readable.
    pub manifest: Option<Manifest>,
    /// Why the manifest could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}
