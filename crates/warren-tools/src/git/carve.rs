//! Keeping libgit2's walk of the working tree out of the subtrees the agent may not read.
//!
//! The read thread cannot open anything there ([`super::confined`]), so a walk that tried (to
//! hash a tracked file whose timestamps changed, say) would fail the whole read. Instead the
//! working tree is described to libgit2 as literal pathspecs that cover exactly its readable
//! part: the hidden subtrees are the unreadable ones of the policy's own sandbox plan, and
//! every directory above one is replaced by its entries (those on disk and those in the index,
//! so deletions still show), minus the hidden ones.

use git2::Repository;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use warren_policy::sandbox::FsGrant;
use warren_policy::under;

/// The subtrees strictly inside `workdir` that `plan` gives no read right (forbidden paths,
/// runtime state, unreadable grants), as paths relative to `workdir`.
pub fn hidden(plan: &[FsGrant], workdir: &Path) -> Vec<String> {
    plan.iter()
        .filter(|g| !g.read && g.path != workdir && under(&g.path, workdir))
        .filter_map(|g| g.path.strip_prefix(workdir).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

/// `path` equals `prefix` or lies below it (relative paths; `.` is the whole tree).
pub fn within(path: &str, prefix: &str) -> bool {
    prefix == "."
        || path == prefix
        || (path.len() > prefix.len()
            && path.starts_with(prefix)
            && path.as_bytes()[prefix.len()] == b'/')
}

/// The literal pathspecs covering the readable part of the working tree, or `None` when
/// nothing is hidden (the whole tree). An empty list means nothing is readable.
pub fn readable_pathspecs(
    repo: &Repository,
    workdir: &Path,
    hidden: &[String],
) -> Result<Option<Vec<String>>, git2::Error> {
    if hidden.is_empty() {
        return Ok(None);
    }
    // Directories to split: every ancestor (inside the tree) of a hidden subtree.
    let mut split: BTreeSet<String> = BTreeSet::new();
    split.insert(String::new());
    for h in hidden {
        let mut p = Path::new(h).parent();
        while let Some(a) = p {
            split.insert(a.to_string_lossy().into_owned());
            p = a.parent();
        }
    }
    // The entries of each split directory: on disk and in the index.
    let mut children: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for dir in &split {
        let names = children.entry(dir.clone()).or_default();
        if let Ok(rd) = std::fs::read_dir(workdir.join(dir)) {
            for e in rd.flatten() {
                names.insert(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    let index = repo.index()?;
    for e in index.iter() {
        let path = String::from_utf8_lossy(&e.path).into_owned();
        for dir in &split {
            let rest = if dir.is_empty() {
                Some(path.as_str())
            } else {
                path.strip_prefix(dir.as_str())
                    .and_then(|r| r.strip_prefix('/'))
            };
            if let Some(first) = rest.and_then(|r| r.split('/').next()) {
                if let Some(names) = children.get_mut(dir) {
                    names.insert(first.to_string());
                }
            }
        }
    }
    let mut out = Vec::new();
    for (dir, names) in &children {
        for name in names {
            let rel = if dir.is_empty() {
                name.clone()
            } else {
                format!("{dir}/{name}")
            };
            let is_hidden = hidden.iter().any(|h| within(&rel, h));
            if is_hidden || split.contains(&rel) || name == ".git" {
                continue;
            }
            out.push(rel);
        }
    }
    Ok(Some(out))
}

/// The pathspecs that are within both `carved` (`None`: everything) and the caller's literal
/// `files` (empty: everything).
pub fn intersect(carved: Option<Vec<String>>, files: &[String]) -> Option<Vec<String>> {
    if files.is_empty() || files.iter().any(|f| f == ".") {
        return carved;
    }
    let Some(carved) = carved else {
        return Some(files.to_vec());
    };
    let mut out = BTreeSet::new();
    for c in &carved {
        for f in files {
            if within(c, f) {
                out.insert(c.clone());
            } else if within(f, c) {
                out.insert(f.clone());
            }
        }
    }
    Some(out.into_iter().collect())
}

/// Tracked paths (in the index) inside a hidden subtree: a write cannot tell whether they
/// changed without reading them, so it counts them as touched.
pub fn hidden_tracked(repo: &Repository, hidden: &[String]) -> Result<Vec<String>, git2::Error> {
    if hidden.is_empty() {
        return Ok(Vec::new());
    }
    let index = repo.index()?;
    Ok(index
        .iter()
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|p| hidden.iter().any(|h| within(p, h)))
        .collect())
}
