//! What a write operation would touch in the working tree, computed before git starts so that
//! every such path is authorized through the policy first (rules §2.1: no side effect before the
//! answer is yes). The `git` child may run without OS confinement (`sandbox = "none"`), so the
//! policy must see every file it would change or copy into the repository:
//! `checkout` changes the files that differ between HEAD and the target tree and carries the
//! index and working tree changes; `stash_push` reads and resets every changed path (under its
//! pathspecs); `stash_pop` writes the paths the stash records; `add` copies every changed or untracked file under its pathspecs into the objects.

use super::carve;
use super::meta::Location;
use super::read::{git_error, with_repo};
use super::request::{Operation, Request};
use crate::error::ToolError;
use git2::{Delta, Diff, Repository, Status, StatusOptions};
use std::collections::BTreeSet;
use warren_policy::{Access, SecurityPolicy};

/// The accesses each touched path of `op` needs: Write for every change of the working tree,
/// plus Read where git copies the file's content into the repository.
pub fn accesses(op: Operation) -> &'static [Access] {
    match op {
        Operation::Add => &[Access::Read],
        Operation::StashPush => &[Access::Read, Access::Write],
        _ => &[Access::Write],
    }
}

/// Authorizes every path `req` would touch in `loc`'s working tree (`paths` are the checked,
/// repository-relative pathspecs); the first refused one is the error, naming it and the rule.
pub fn authorize(
    policy: &SecurityPolicy,
    loc: &Location,
    req: &Request<'_>,
    paths: &[String],
) -> Result<(), ToolError> {
    let op = req.operation;
    if !matches!(
        op,
        Operation::Add | Operation::Checkout | Operation::StashPush | Operation::StashPop
    ) {
        return Ok(());
    }
    let touched = with_repo(policy, loc, |repo, hidden| {
        touched(repo, loc, req, paths, hidden)
    })?;
    for rel in touched {
        let path = loc.workdir.join(&rel);
        for access in accesses(op) {
            policy.authorize(&path, *access).map_err(|mut d| {
                d.detail = Some(format!("`{}` would touch `{rel}`", op.name()));
                ToolError::Denied(d)
            })?;
        }
    }
    Ok(())
}

fn diff_paths(d: &Diff<'_>, out: &mut BTreeSet<String>) {
    for delta in d.deltas() {
        if delta.status() == Delta::Unmodified {
            continue;
        }
        for p in [delta.old_file().path(), delta.new_file().path()]
            .into_iter()
            .flatten()
        {
            out.insert(p.to_string_lossy().into_owned());
        }
    }
}

/// Changed (and, when `untracked`, untracked) paths within `specs` (`None`: everywhere).
fn status_paths(
    repo: &Repository,
    specs: Option<&[String]>,
    untracked: bool,
    out: &mut BTreeSet<String>,
) -> Result<(), git2::Error> {
    if specs.is_some_and(<[String]>::is_empty) {
        return Ok(());
    }
    let mut o = StatusOptions::new();
    o.include_untracked(untracked)
        .recurse_untracked_dirs(untracked)
        .include_ignored(false)
        .exclude_submodules(true)
        .renames_head_to_index(false);
    if let Some(specs) = specs {
        o.disable_pathspec_match(true);
        for p in specs {
            o.pathspec(p.as_str());
        }
    }
    for e in repo.statuses(Some(&mut o))?.iter() {
        if e.status() != Status::CURRENT && !e.status().contains(Status::IGNORED) {
            out.insert(String::from_utf8_lossy(e.path_bytes()).into_owned());
        }
    }
    Ok(())
}

/// What `git checkout <name>` would switch to.
enum Target<'r> {
    /// This tree.
    Tree(git2::Tree<'r>),
    /// Nothing of that name: git fails without touching anything.
    Nothing,
    /// Several remote-tracking branches of that name: which one git picks depends on its
    /// configuration, so the files it would change are unknown.
    Ambiguous,
}

/// The target of `git checkout <name>`, in git's own order: a local branch, then any
/// revision, then a remote-tracking branch of that name.
fn checkout_target<'r>(repo: &'r Repository, name: &str) -> Result<Target<'r>, git2::Error> {
    if let Ok(b) = repo.find_branch(name, git2::BranchType::Local) {
        return Ok(Target::Tree(b.get().peel_to_tree()?));
    }
    if let Ok(o) = repo.revparse_single(name) {
        return Ok(Target::Tree(o.peel_to_tree()?));
    }
    let suffix = format!("/{name}");
    let mut found = Vec::new();
    for b in repo.branches(Some(git2::BranchType::Remote))? {
        let (b, _) = b?;
        if b.name()
            .ok()
            .flatten()
            .is_some_and(|n| n.ends_with(&suffix))
        {
            found.push(b);
        }
    }
    match found.as_slice() {
        [] => Ok(Target::Nothing),
        [only] => Ok(Target::Tree(only.get().peel_to_tree()?)),
        _ => Ok(Target::Ambiguous),
    }
}

/// Whether `rel` is within one of the pathspecs (none: the whole tree).
fn in_specs(rel: &str, paths: &[String]) -> bool {
    paths.is_empty() || paths.iter().any(|p| carve::within(rel, p))
}

/// The repository-relative paths `req` would touch. Inside the subtrees the agent may not read
/// (`hidden`) nothing is read: every tracked path there counts as touched, and so does the
/// subtree itself when `add` would walk it.
fn touched(
    repo: &mut Repository,
    loc: &Location,
    req: &Request<'_>,
    paths: &[String],
    hidden: &[String],
) -> Result<BTreeSet<String>, ToolError> {
    let err = |e| git_error(&loc.workdir, e);
    let mut out = BTreeSet::new();
    let readable = carve::readable_pathspecs(repo, &loc.workdir, hidden).map_err(err)?;
    let specs = carve::intersect(readable, paths);
    let hidden_tracked = carve::hidden_tracked(repo, hidden).map_err(err)?;
    match req.operation {
        Operation::Add => {
            status_paths(repo, specs.as_deref(), true, &mut out).map_err(err)?;
            out.extend(hidden.iter().filter(|h| in_specs(h, paths)).cloned());
        }
        Operation::StashPush => {
            status_paths(repo, specs.as_deref(), false, &mut out).map_err(err)?;
            out.extend(hidden_tracked.into_iter().filter(|h| in_specs(h, paths)));
        }
        Operation::Checkout => {
            let name = req.branch.unwrap_or_default();
            let target = match checkout_target(repo, name).map_err(err)? {
                Target::Tree(t) => t,
                Target::Nothing => return Ok(out),
                Target::Ambiguous => {
                    return Err(ToolError::GitMetadata {
                        path: loc.workdir.clone(),
                        reason: format!(
                            "`checkout {name}` names several remote-tracking branches; which files it would change cannot be told, so it is refused before git starts (check out one of them by its full name)"
                        ),
                    })
                }
            };
            let head = repo.head().ok().and_then(|h| h.peel_to_tree().ok());
            let d = repo
                .diff_tree_to_tree(head.as_ref(), Some(&target), None)
                .map_err(err)?;
            diff_paths(&d, &mut out);
            status_paths(repo, specs.as_deref(), false, &mut out).map_err(err)?;
            out.extend(hidden_tracked);
        }
        Operation::StashPop => {
            let mut id = None;
            repo.stash_foreach(|i, _, oid| {
                if i == req.index {
                    id = Some(*oid);
                }
                id.is_none()
            })
            .map_err(err)?;
            // No such entry: git refuses by itself without touching anything.
            let Some(id) = id else {
                return Ok(out);
            };
            let stash = repo.find_commit(id).map_err(err)?;
            let tree = stash.tree().map_err(err)?;
            let base = stash.parent(0).and_then(|c| c.tree()).ok();
            let d = repo
                .diff_tree_to_tree(base.as_ref(), Some(&tree), None)
                .map_err(err)?;
            diff_paths(&d, &mut out);
            // The index commit and the untracked-files commit, when recorded.
            for n in 1..stash.parent_count() {
                let t = stash.parent(n).and_then(|c| c.tree()).map_err(err)?;
                let base = if n == 1 { base.as_ref() } else { None };
                let d = repo.diff_tree_to_tree(base, Some(&t), None).map_err(err)?;
                diff_paths(&d, &mut out);
            }
        }
        _ => {}
    }
    Ok(out)
}
