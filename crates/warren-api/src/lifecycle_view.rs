//! The lifecycle answers (plans, reports, archives) as plain DTOs for typed front-ends: paths
//! as strings, counts as `u32`, codes as enums spelled in snake_case. The runtime's own types
//! stay as they are; these are made from them, each enum in one `From` (the reference kind,
//! which `warren-types` defines for an agent's `referenced_by` too, in one function).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use warren_config::{RefKind, RefStrength};
use warren_runtime::lifecycle::{ArchiveInfo, LifecycleReport, Plan, ResumeOutcome};
use warren_runtime::lifecycle::{Operation, OperationKind, RefAction};
/// Where a config reference to an agent sits (the same kind an agent's `referenced_by` names).
pub use warren_types::ReferenceKind;

/// Which lifecycle operation: of a plan, or of an unfinished journal entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum LifecycleKind {
    /// Rename an agent.
    Rename,
    /// Delete an agent into an archive.
    Delete,
    /// Restore an agent from an archive.
    Restore,
    /// Import agents from a ZeroClaw install (pending operations only).
    Import,
    /// A journal entry that cannot be read (pending operations only).
    Unreadable,
}

impl LifecycleKind {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleKind::Rename => "rename",
            LifecycleKind::Delete => "delete",
            LifecycleKind::Restore => "restore",
            LifecycleKind::Import => "import",
            LifecycleKind::Unreadable => "unreadable",
        }
    }
}

impl From<OperationKind> for LifecycleKind {
    fn from(k: OperationKind) -> Self {
        match k {
            OperationKind::Rename => LifecycleKind::Rename,
            OperationKind::Delete => LifecycleKind::Delete,
            OperationKind::Restore => LifecycleKind::Restore,
        }
    }
}

impl From<&Operation> for LifecycleKind {
    fn from(op: &Operation) -> Self {
        op.kind().into()
    }
}

/// The api's spelling of the config's reference kind (one mapping for the lifecycle plans and
/// an agent's `referenced_by`).
pub(crate) fn reference_kind(k: RefKind) -> ReferenceKind {
    match k {
        RefKind::Delegate => ReferenceKind::Delegate,
        RefKind::WorkspaceAccess => ReferenceKind::WorkspaceAccess,
        RefKind::ReadMemoryFrom => ReferenceKind::ReadMemoryFrom,
        RefKind::CronAgent => ReferenceKind::CronAgent,
    }
}

/// Whether a reference blocks a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ReferenceStrength {
    /// Blocks a delete (an enabled cron job runs as the agent).
    Hard,
    /// Removed by a delete, rewritten by a rename.
    Soft,
}

impl From<RefStrength> for ReferenceStrength {
    fn from(s: RefStrength) -> Self {
        match s {
            RefStrength::Hard => ReferenceStrength::Hard,
            RefStrength::Soft => ReferenceStrength::Soft,
        }
    }
}

/// What the operation does to a reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ReferenceAction {
    /// A rename points it at the new alias.
    Rewrite,
    /// A delete removes it.
    Remove,
    /// It stops the delete.
    Blocks,
    /// A restore puts it back (a grant another agent held on the deleted agent).
    Restore,
}

impl ReferenceAction {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ReferenceAction::Rewrite => "rewrite",
            ReferenceAction::Remove => "remove",
            ReferenceAction::Blocks => "blocks",
            ReferenceAction::Restore => "restore",
        }
    }
}

impl From<RefAction> for ReferenceAction {
    fn from(a: RefAction) -> Self {
        match a {
            RefAction::Rewrite => ReferenceAction::Rewrite,
            RefAction::Remove => ReferenceAction::Remove,
            RefAction::Blocks => ReferenceAction::Blocks,
            RefAction::Restore => ReferenceAction::Restore,
        }
    }
}

/// A config reference the operation rewrites, removes, or is blocked by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReferenceView {
    /// Dotted path of the reference, e.g. `agents.bob.delegates[0]`.
    pub path: String,
    /// Where it sits.
    pub kind: ReferenceKind,
    /// Whether it blocks a delete.
    pub strength: ReferenceStrength,
    /// What the operation does to it.
    pub action: ReferenceAction,
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
    /// The kind (`memory`, `sessions`, `cron_jobs`, ...): each owned-state participant names
    /// its own, and an archive's manifest keeps the names it was written with.
    pub kind: String,
    /// How many.
    pub count: u32,
}

/// What a rename, delete or restore will do (or did).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PlanView {
    /// The operation (never `unreadable`).
    pub operation: LifecycleKind,
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

impl PlanView {
    /// The plan as text for people (`warren agents rename|delete|restore`).
    pub fn to_text(&self) -> String {
        let mut s = match &self.new_alias {
            Some(n) => format!("{} {} → {}\n", self.operation.as_str(), self.alias, n),
            None => format!("{} {}\n", self.operation.as_str(), self.alias),
        };
        if self.resumed {
            s.push_str("  (finishing an interrupted run)\n");
        }
        for b in &self.blockers {
            s.push_str(&format!("  BLOCKED by {b}\n"));
        }
        for r in &self.references {
            s.push_str(&format!("  {} {}\n", r.action.as_str(), r.path));
        }
        if let Some(m) = &self.workspace {
            let missing = if m.exists {
                ""
            } else {
                " (does not exist yet)"
            };
            s.push_str(&format!(
                "  move workspace {} → {}{missing}\n",
                m.from, m.to
            ));
        }
        // Kinds with nothing in them say nothing to a reader.
        for c in self.counts.iter().filter(|c| c.count > 0) {
            s.push_str(&format!("  {}: {}\n", c.kind, c.count));
        }
        if let Some(a) = &self.archive {
            s.push_str(&format!("  archive {a}\n"));
        }
        s
    }
}

/// The answer of a rename, delete or restore: the one shape the CLI (`--json`) and the window
/// both get.
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
    /// Kinds whose export failed, so their data was kept in place.
    pub kept_in_place: Vec<String>,
    /// The grants other agents held on the agent, as config lines: a restore puts back those
    /// whose holder still exists.
    pub grants: Vec<String>,
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

impl From<Plan> for PlanView {
    fn from(p: Plan) -> Self {
        PlanView {
            operation: p.operation.into(),
            alias: p.alias,
            new_alias: p.new_alias,
            references: p
                .references
                .into_iter()
                .map(|r| ReferenceView {
                    path: r.path,
                    kind: reference_kind(r.kind),
                    strength: r.strength.into(),
                    action: r.action.into(),
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
            kept_in_place: m
                .map(|m| m.failed.keys().cloned().collect())
                .unwrap_or_default(),
            grants: m
                .map(|m| m.references.iter().map(|r| r.describe(&m.alias)).collect())
                .unwrap_or_default(),
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
    /// The operation, or `unreadable` when the entry cannot be read.
    pub kind: LifecycleKind,
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

/// A journal step in a user's words (`memory exported`, `workspace moved`); `None` for the
/// journal's own bookkeeping (counts taken before a purge, the config-save marker).
pub fn step_label(step: &str) -> Option<String> {
    let what = |kind: &str| -> String {
        match kind {
            "cron_runtime" => "cron run history".into(),
            "paused" => "paused state".into(),
            "cron" => "cron jobs".into(),
            k => k.replace('_', " "),
        }
    };
    if let Some((verb, kind)) = step.split_once(':') {
        let kind = what(kind);
        return match verb {
            "export" => Some(format!("{kind} exported")),
            "purge" => Some(format!("{kind} removed")),
            "import" => Some(format!("{kind} restored")),
            "rename" => Some(format!("{kind} moved to the new name")),
            "config" => Some(format!("config {kind} restored")),
            _ => None,
        };
    }
    Some(
        match step {
            "config" => "config entry changed",
            "workspace" => "workspace moved",
            "archive_prepared" => "archive started",
            "release" => "the agent's id released",
            "manifest" => "archive manifest written",
            "agent_row" => "the agent's id taken back",
            "archive_removed" => "archive removed",
            _ => return None,
        }
        .to_string(),
    )
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

impl From<ResumeOutcome> for ResumeOutcomeView {
    fn from(o: ResumeOutcome) -> Self {
        ResumeOutcomeView {
            journal: o.journal,
            operation: o.operation,
            ok: o.error.is_none(),
            error: o.error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::assert_codes;

    #[test]
    fn a_plan_reads_as_one_line_per_reference_move_and_count() {
        let plan = PlanView {
            operation: LifecycleKind::Rename,
            alias: "alice".into(),
            new_alias: Some("ann".into()),
            references: vec![ReferenceView {
                path: "agents.bob.delegates[0]".into(),
                kind: ReferenceKind::Delegate,
                strength: ReferenceStrength::Soft,
                action: ReferenceAction::Rewrite,
            }],
            blockers: vec!["cron.digest.agent".into()],
            workspace: Some(MoveView {
                from: "/i/agents/alice/workspace".into(),
                to: "/i/agents/ann/workspace".into(),
                exists: false,
            }),
            counts: vec![CountView {
                kind: "memory".into(),
                count: 3,
            }],
            archive: None,
            resumed: true,
        };
        assert_eq!(
            plan.to_text(),
            "rename alice → ann\n  (finishing an interrupted run)\n  BLOCKED by cron.digest.agent\n  rewrite agents.bob.delegates[0]\n  move workspace /i/agents/alice/workspace → /i/agents/ann/workspace (does not exist yet)\n  memory: 3\n"
        );
    }

    #[test]
    fn an_archive_view_names_what_its_delete_kept_in_place() {
        let manifest: warren_runtime::lifecycle::Manifest =
            serde_json::from_value(serde_json::json!({
                "version": 1, "alias": "carol", "agent_id": null, "sessions_agent_id": null,
                "time": "2026-12-02T06:00:00Z", "memory_backend": "sqlite",
                "workspace": "/i/agents/carol/workspace", "custom_workspace": false,
                "workspace_archived": true, "exported": {"sessions": 1},
                "purged": {"sessions": 1}, "failed": {"memory": "export failed: injected"},
                "tombstone": "t-1", "warnings": ["memory: export failed"]
            }))
            .unwrap();
        let view = ArchiveView::from(ArchiveInfo {
            name: "carol-20261202".into(),
            path: "/i/data/agents/_deleted/carol-20261202".into(),
            manifest: Some(manifest),
            problem: None,
        });
        assert_eq!(view.alias.as_deref(), Some("carol"));
        assert_eq!(view.kept_in_place, ["memory"]);
        assert_eq!(
            view.exported,
            [CountView {
                kind: "sessions".into(),
                count: 1
            }]
        );
        let unreadable = ArchiveView::from(ArchiveInfo {
            name: "x".into(),
            path: "/i/x".into(),
            manifest: None,
            problem: Some("a delete in progress".into()),
        });
        assert!(unreadable.kept_in_place.is_empty() && unreadable.alias.is_none());
    }

    #[test]
    fn lifecycle_codes_are_their_documented_strings() {
        assert_codes(&[
            (LifecycleKind::Rename, "rename"),
            (LifecycleKind::Delete, "delete"),
            (LifecycleKind::Restore, "restore"),
            (LifecycleKind::Unreadable, "unreadable"),
        ]);
        for k in [
            LifecycleKind::Rename,
            LifecycleKind::Delete,
            LifecycleKind::Restore,
        ] {
            assert_eq!(serde_json::to_value(k).unwrap(), k.as_str());
        }
        // The runtime's operation kinds map onto the same spelling.
        for k in [
            OperationKind::Rename,
            OperationKind::Delete,
            OperationKind::Restore,
        ] {
            assert_eq!(LifecycleKind::from(k).as_str(), k.as_str());
        }
        assert_codes(&[
            (ReferenceKind::Delegate, "delegate"),
            (ReferenceKind::WorkspaceAccess, "workspace_access"),
            (ReferenceKind::ReadMemoryFrom, "read_memory_from"),
            (ReferenceKind::CronAgent, "cron_agent"),
        ]);
        assert_codes(&[
            (ReferenceStrength::Hard, "hard"),
            (ReferenceStrength::Soft, "soft"),
        ]);
        assert_codes(&[
            (ReferenceAction::Rewrite, "rewrite"),
            (ReferenceAction::Remove, "remove"),
            (ReferenceAction::Blocks, "blocks"),
        ]);
        // Each api enum says what the runtime's serialises as (the CLI prints those).
        let same = |a: serde_json::Value, b: serde_json::Value| assert_eq!(a, b);
        for k in [
            RefKind::Delegate,
            RefKind::WorkspaceAccess,
            RefKind::ReadMemoryFrom,
            RefKind::CronAgent,
        ] {
            same(
                serde_json::to_value(k).unwrap(),
                serde_json::to_value(reference_kind(k)).unwrap(),
            );
        }
        for s in [RefStrength::Hard, RefStrength::Soft] {
            same(
                serde_json::to_value(s).unwrap(),
                serde_json::to_value(ReferenceStrength::from(s)).unwrap(),
            );
        }
        for a in [
            RefAction::Rewrite,
            RefAction::Remove,
            RefAction::Blocks,
            RefAction::Restore,
        ] {
            same(
                serde_json::to_value(a).unwrap(),
                serde_json::to_value(ReferenceAction::from(a)).unwrap(),
            );
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
    }
}
