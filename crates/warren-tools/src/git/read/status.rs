//! `status`: HEAD against the index and the index against the readable part of the working
//! tree, merged by path, with every entry the agent may not read omitted.

use super::super::carve;
use super::super::meta::Location;
use super::{git_error, head_info, lossy, open, readable};
use crate::error::ToolError;
use git2::{Repository, Status, StatusOptions, StatusShow};
use serde_json::{json, Value};
use warren_policy::SecurityPolicy;

fn index_state(s: Status) -> &'static str {
    if s.contains(Status::INDEX_NEW) {
        "added"
    } else if s.contains(Status::INDEX_MODIFIED) {
        "modified"
    } else if s.contains(Status::INDEX_DELETED) {
        "deleted"
    } else if s.contains(Status::INDEX_RENAMED) {
        "renamed"
    } else if s.contains(Status::INDEX_TYPECHANGE) {
        "typechange"
    } else if s.contains(Status::WT_NEW) {
        "untracked"
    } else {
        "unmodified"
    }
}

fn worktree_state(s: Status) -> &'static str {
    if s.contains(Status::WT_NEW) {
        "untracked"
    } else if s.contains(Status::WT_MODIFIED) {
        "modified"
    } else if s.contains(Status::WT_DELETED) {
        "deleted"
    } else if s.contains(Status::WT_RENAMED) {
        "renamed"
    } else if s.contains(Status::WT_TYPECHANGE) {
        "typechange"
    } else if s.contains(Status::WT_UNREADABLE) {
        "unreadable"
    } else {
        "unmodified"
    }
}

/// One side of the status: `(path, flags, renamed from)` per entry.
type Side = Vec<(String, Status, Option<String>)>;

fn status_side(repo: &Repository, opts: &mut StatusOptions) -> Result<Side, git2::Error> {
    let statuses = repo.statuses(Some(opts))?;
    Ok(statuses
        .iter()
        .map(|e| {
            let s = e.status();
            let renamed = e
                .head_to_index()
                .filter(|_| s.contains(Status::INDEX_RENAMED))
                .and_then(|d| {
                    let old = d.old_file().path()?.to_string_lossy().into_owned();
                    let new = d.new_file().path()?.to_string_lossy().into_owned();
                    Some((new, old))
                });
            match renamed {
                Some((new, old)) => (new, s, Some(old)),
                None => (lossy(e.path_bytes()), s, None),
            }
        })
        .collect())
}

/// HEAD against the index and the index against the working tree, computed at the same time
/// (each side through its own handle on the verified repository), then merged by path; entries
/// the agent may not read (either side of a rename) are omitted.
pub(super) fn status(
    policy: &SecurityPolicy,
    loc: &Location,
    repo: &Repository,
    hidden: &[String],
) -> Result<Value, ToolError> {
    let err = |e| git_error(&loc.workdir, e);
    let walked = carve::readable_pathspecs(repo, &loc.workdir, hidden).map_err(err)?;
    let (staged, unstaged) = std::thread::scope(|scope| {
        let staged = scope.spawn(|| {
            let r = open(policy, loc)?;
            let mut o = StatusOptions::new();
            o.show(StatusShow::Index)
                .exclude_submodules(true)
                .renames_head_to_index(true);
            status_side(&r, &mut o).map_err(err)
        });
        let mut o = StatusOptions::new();
        o.show(StatusShow::Workdir)
            .include_untracked(true)
            .recurse_untracked_dirs(false)
            .include_ignored(false)
            .exclude_submodules(true);
        // Only the readable part of the working tree is walked.
        if let Some(specs) = &walked {
            o.disable_pathspec_match(true);
            for s in specs {
                o.pathspec(s.as_str());
            }
        }
        let unstaged = match &walked {
            Some(specs) if specs.is_empty() => Ok(Vec::new()),
            _ => status_side(repo, &mut o).map_err(err),
        };
        let staged = staged.join().unwrap_or_else(|_| {
            Err(ToolError::Git {
                repo: loc.workdir.clone(),
                message: "the status of the index failed unexpectedly".into(),
            })
        });
        (staged, unstaged)
    });
    let mut merged: std::collections::BTreeMap<String, (Status, Option<String>)> =
        std::collections::BTreeMap::new();
    for (path, s, from) in staged?.into_iter().chain(unstaged?) {
        let hidden = !readable(policy, loc, &path)
            || from.as_deref().is_some_and(|f| !readable(policy, loc, f));
        if hidden {
            continue;
        }
        let e = merged.entry(path).or_insert((Status::empty(), None));
        e.0 |= s;
        if from.is_some() {
            e.1 = from;
        }
    }
    status_json(repo, merged).map_err(err)
}

fn status_json(
    repo: &Repository,
    merged: std::collections::BTreeMap<String, (Status, Option<String>)>,
) -> Result<Value, git2::Error> {
    let index = repo.index()?;
    let mut conflicts = std::collections::BTreeMap::new();
    if index.has_conflicts() {
        for c in index.conflicts()? {
            let c = c?;
            let path = [&c.our, &c.their, &c.ancestor]
                .into_iter()
                .flatten()
                .next()
                .map(|e| lossy(&e.path));
            if let Some(p) = path {
                conflicts.insert(
                    p,
                    json!({
                        "ancestor": c.ancestor.is_some(),
                        "ours": c.our.is_some(),
                        "theirs": c.their.is_some(),
                    }),
                );
            }
        }
    }
    let mut entries = Vec::new();
    for (path, (s, from)) in merged {
        if s.contains(Status::CONFLICTED) {
            entries.push(json!({
                "path": path,
                "index": "conflicted",
                "worktree": "conflicted",
                "conflict": conflicts.get(&path).cloned().unwrap_or(Value::Null),
            }));
            continue;
        }
        let mut entry = json!({
            "path": path,
            "index": index_state(s),
            "worktree": worktree_state(s),
        });
        if let Some(old) = from {
            entry["from"] = json!(old);
        }
        entries.push(entry);
    }
    let (branch, head, detached) = head_info(repo);
    Ok(json!({
        "branch": branch,
        "head": head,
        "detached": detached,
        "entries": entries,
    }))
}
