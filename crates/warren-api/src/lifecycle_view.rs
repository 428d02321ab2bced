//! The lifecycle answers (plans, reports, archives) as plain DTOs for typed front-ends: paths
//! as strings, counts as `u32`, enums as their snake_case names. The runtime's own types stay
//! as they are; these are made from them.

use crate::lifecycle::{ArchiveInfo, LifecycleReport, Plan};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// A config reference the operation rewrites, removes, or is blocked by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReferenceView {
    /// Dotted path of the reference, e.g. `agents.bob.delegates[0]`.
    pub path: String,
    /// `delegate`, `workspace_access`, `read_memory_from` or `cron_agent`.
    pub kind: String,
    /// `hard` (blocks a delete) or `soft`.
    pub strength: String,
    /// `rewrite`, `remove` or `blocks`.
    pub action: String,
}

/// A directory the operation moves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MoveView {
    /// Where it is.
    pub from: String,
    /// Where it goes.
    pub to: String,
    /// Whether the source exists now.
    pub exists: bool,
}

/// How many items of one owned-state kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CountView {
    /// The kind (`memory`, `sessions`, `cron_jobs`, ...).
    pub kind: String,
    /// How many.
    pub count: u32,
}

/// What a rename, delete or restore will do (or did).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PlanView {
    /// `rename`, `delete` or `restore`.
    pub operation: String,
    /// The agent acted on.
    pub alias: String,
    /// The new alias (rename, restore).
    pub new_alias: Option<String>,
    /// References rewritten, removed or blocking.
    pub references: Vec<ReferenceView>,
    /// What stops the operation (empty when it can run).
    pub blockers: Vec<String>,
    /// The workspace move, if any.
    pub workspace: Option<MoveView>,
    /// Items per owned-state kind that move, are archived or come back.
    pub counts: Vec<CountView>,
    /// The archive folder (delete, restore).
    pub archive: Option<String>,
    /// True when an interrupted run of the same operation was finished instead.
    pub resumed: bool,
}

/// The answer of a rename, delete or restore.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LifecycleOutcome {
    /// True when every step completed (a dry run: when nothing blocks).
    pub ok: bool,
    /// True for a plan only.
    pub dry_run: bool,
    /// The plan that ran (or would run).
    pub plan: PlanView,
    /// Steps that failed after the config was saved, and data kept because of them.
    pub warnings: Vec<String>,
    /// The archive folder (delete).
    pub archive: Option<String>,
}

/// One deletion archive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ArchiveView {
    /// Folder name: what restore takes.
    pub name: String,
    /// Full path.
    pub path: String,
    /// The deleted alias (from the manifest).
    pub alias: Option<String>,
    /// Deletion time (RFC 3339).
    pub time: Option<String>,
    /// Items exported per kind.
    pub exported: Vec<CountView>,
    /// Warnings recorded by the delete.
    pub warnings: Vec<String>,
    /// Why the manifest could not be read.
    pub problem: Option<String>,
}

fn text(p: &Path) -> String {
    p.display().to_string()
}

fn counts(m: &BTreeMap<String, u64>) -> Vec<CountView> {
    m.iter()
        .map(|(kind, n)| CountView {
            kind: kind.clone(),
            count: u32::try_from(*n).unwrap_or(u32::MAX),
        })
        .collect()
}

fn name_of(v: impl Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(e) => e.to_string(),
    }
}

impl From<Plan> for PlanView {
    fn from(p: Plan) -> Self {
        PlanView {
            operation: p.operation.to_string(),
            alias: p.alias,
            new_alias: p.new_alias,
            references: p
                .references
                .into_iter()
                .map(|r| ReferenceView {
                    path: r.path,
                    kind: name_of(r.kind),
                    strength: name_of(r.strength),
                    action: r.action.to_string(),
                })
                .collect(),
            blockers: p.blockers,
            workspace: p.workspace.map(|m| MoveView {
                from: text(&m.from),
                to: text(&m.to),
                exists: m.exists,
            }),
            counts: counts(&p.counts),
            archive: p.archive.as_deref().map(text),
            resumed: p.resumed,
        }
    }
}

impl From<LifecycleReport> for LifecycleOutcome {
    fn from(r: LifecycleReport) -> Self {
        LifecycleOutcome {
            ok: r.ok,
            dry_run: r.dry_run,
            plan: r.plan.into(),
            warnings: r.warnings,
            archive: r.archive.as_deref().map(text),
        }
    }
}

impl From<ArchiveInfo> for ArchiveView {
    fn from(a: ArchiveInfo) -> Self {
        let m = a.manifest.as_ref();
        ArchiveView {
            name: a.name,
            path: text(&a.path),
            alias: m.map(|m| m.alias.clone()),
            time: m.map(|m| m.time.clone()),
            exported: m.map(|m| counts(&m.exported)).unwrap_or_default(),
            warnings: m.map(|m| m.warnings.clone()).unwrap_or_default(),
            problem: a.problem,
        }
    }
}

/// An unfinished rename, delete or restore (a journal entry), for the notice that offers to
/// resume it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PendingOperationView {
    /// The journal entry id (empty for an unreadable entry).
    pub journal: String,
    /// `rename`, `delete`, `restore`, or `unreadable` when the entry cannot be read.
    pub kind: String,
    /// One line, e.g. `rename alice → ann`.
    pub description: String,
    /// The aliases it involves: each refuses turns with `lifecycle_pending` until it is done.
    pub aliases: Vec<String>,
    /// When the operation started (RFC 3339; empty for an unreadable entry).
    pub started_at: String,
    /// The steps completed, in order.
    pub steps_done: Vec<String>,
    /// The first step not completed yet, where it stopped (known for renames; a delete or a
    /// restore reports its completed steps only).
    pub stopped_at: Option<String>,
    /// Why the last attempt in this process could not finish it, when one failed.
    pub last_error: Option<String>,
    /// How to finish it from the command line.
    pub hint: String,
}

/// What resuming one unfinished operation gave.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ResumeOutcomeView {
    /// The journal entry id.
    pub journal: String,
    /// The operation (`rename alice → ann`).
    pub operation: String,
    /// True when it finished.
    pub ok: bool,
    /// Why it could not be finished.
    pub error: Option<String>,
}

impl From<crate::lifecycle::ResumeOutcome> for ResumeOutcomeView {
    fn from(o: crate::lifecycle::ResumeOutcome) -> Self {
        ResumeOutcomeView {
            journal: o.journal,
            operation: o.operation,
            ok: o.error.is_none(),
            error: o.error,
        }
    }
}
