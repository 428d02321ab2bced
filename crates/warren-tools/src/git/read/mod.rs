//! Read operations, in-process through libgit2 (rules §3 rule 1). libgit2 runs no hook, filter
//! driver, fsmonitor, textconv, external diff, pager, credential helper or signing program, and
//! this module never asks it for a mailmap: authors are printed raw. The crate is built without
//! any transport, so nothing here can reach another repository; a missing object of a partial
//! clone is an error. Every libgit2 call runs on a thread confined to the agent's read grants
//! ([`with_repo`]), and every path in a result is one the policy lets the agent read: the
//! others are omitted, never shown redacted.

mod status;

use super::carve;
use super::config;
use super::confined;
use super::meta::{self, Location};
use super::request::Request;
use crate::error::ToolError;
use git2::{
    BranchType, Delta, DiffOptions, ErrorClass, ErrorCode, Patch, Repository, RepositoryOpenFlags,
};
use serde_json::{json, Value};
use std::ffi::OsStr;
use std::path::Path;
use std::sync::Once;
use warren_policy::sandbox::fs_plan;
use warren_policy::{Access, SecurityPolicy};

static LIBGIT2: Once = Once::new();

/// Sets libgit2's process-wide options once, before Warren opens any repository:
/// - partial clones open (`extensions.partialclone`); libgit2 has no lazy fetch, so a promised
///   object that is missing stays missing and reading it is an error;
/// - no global, XDG or system configuration (nor the ignore and attributes files beside it):
///   reads see the repository's own configuration only. Those files are found through the
///   process's `HOME`, which is not the agent's, lie outside the read thread's grants, and may
///   name further files anywhere.
pub(crate) fn init_libgit2() {
    LIBGIT2.call_once(|| {
        // SAFETY: libgit2 keeps these options in process-wide statics; this is the only place
        // in Warren that sets them, and `call_once` runs it before any repository is opened
        // here (every libgit2 use goes through `open`, which calls this first).
        unsafe {
            let _ = git2::opts::set_extensions(&["partialclone"]);
            for level in [
                git2::ConfigLevel::Global,
                git2::ConfigLevel::XDG,
                git2::ConfigLevel::System,
                git2::ConfigLevel::ProgramData,
            ] {
                let _ = git2::opts::set_search_path(level, "");
            }
        }
    });
}

/// Maps a libgit2 error, naming the repository; a missing object gets its own error.
pub fn git_error(repo: &Path, e: git2::Error) -> ToolError {
    if e.code() == ErrorCode::NotFound && e.class() == ErrorClass::Odb {
        return ToolError::GitMissingObject {
            repo: repo.to_path_buf(),
            detail: e.message().to_string(),
        };
    }
    ToolError::Git {
        repo: repo.to_path_buf(),
        message: e.message().to_string(),
    }
}

/// The directories of a verified repository that a read looks at.
fn repo_dirs(loc: &Location) -> [&Path; 3] {
    [&loc.workdir, &loc.gitdir, &loc.commondir]
}

/// Runs `f` on the verified repository `loc`, opened and used only on a thread confined to the
/// agent's read grants ([`confined::run`]). Every libgit2 access of Warren goes through here.
/// `f` also gets the working tree's subtrees the agent may not read ([`carve::hidden`]).
pub fn with_repo<T, F>(policy: &SecurityPolicy, loc: &Location, f: F) -> Result<T, ToolError>
where
    T: Send,
    F: FnOnce(&mut Repository, &[String]) -> Result<T, ToolError> + Send,
{
    config::verify(policy, loc)?;
    let plan = fs_plan(policy);
    let hidden = carve::hidden(&plan, &loc.workdir);
    confined::run_with_plan(&plan, policy, &repo_dirs(loc), || {
        let mut repo = open(policy, loc)?;
        f(&mut repo, &hidden)
    })
}

/// Whether the agent may read `rel` (relative to the working tree) according to the policy:
/// entries it may not read are omitted from every result, never shown redacted.
pub(super) fn readable(policy: &SecurityPolicy, loc: &Location, rel: &str) -> bool {
    policy.check(&loc.workdir.join(rel), Access::Read).allowed
}

/// Opens exactly the verified repository (no search, no environment), and checks that libgit2
/// resolved the same git directory, common directory and working tree, and that the files the
/// repository's own config points reads at are readable through the policy. Only called on a
/// confined thread.
pub(super) fn open(policy: &SecurityPolicy, loc: &Location) -> Result<Repository, ToolError> {
    init_libgit2();
    let repo = Repository::open_ext(
        &loc.workdir,
        RepositoryOpenFlags::NO_SEARCH,
        std::iter::empty::<&OsStr>(),
    )
    .map_err(|e| git_error(&loc.workdir, e))?;
    let same = repo.path() == loc.gitdir
        && repo.commondir() == loc.commondir
        && repo.workdir() == Some(loc.workdir.as_path());
    if !same {
        return Err(ToolError::GitMetadata {
            path: loc.workdir.clone(),
            reason: format!(
                "libgit2 resolved git directory {}, common directory {} and working tree {}, not the verified {}, {} and {} (core.worktree or a changed .git?)",
                repo.path().display(),
                repo.commondir().display(),
                repo.workdir().map(|p| p.display().to_string()).unwrap_or_else(|| "(none)".into()),
                loc.gitdir.display(),
                loc.commondir.display(),
                loc.workdir.display()
            ),
        });
    }
    verify_config_files(policy, loc, &repo)?;
    Ok(repo)
}

/// The repository's own config (not the user's global or system config, which the operator
/// controls) may not make reads look at files outside the agent's read grants: included config
/// files, an excludes file (whose patterns `status` would reveal), an attributes file.
fn verify_config_files(
    policy: &SecurityPolicy,
    loc: &Location,
    repo: &Repository,
) -> Result<(), ToolError> {
    let config = repo.config().map_err(|e| git_error(&loc.workdir, e))?;
    let entries = config
        .entries(None)
        .map_err(|e| git_error(&loc.workdir, e))?;
    let mut found = Vec::new();
    entries
        .for_each(|e| {
            let own = matches!(
                e.level(),
                git2::ConfigLevel::Local | git2::ConfigLevel::Worktree | git2::ConfigLevel::App
            );
            // A name without `=` has no value (a boolean true); value() would panic.
            if !own || !e.has_value() {
                return;
            }
            if let (Some(name), Some(value)) = (e.name(), e.value()) {
                let name = name.to_ascii_lowercase();
                if config::names_a_read_file(&name) {
                    found.push((name, value.to_string(), e.level(), e.include_depth()));
                }
            }
        })
        .map_err(|e| git_error(&loc.workdir, e))?;
    for (name, value, level, depth) in found {
        let path = if value.starts_with('/') || value.starts_with('~') {
            std::path::PathBuf::from(&value)
        } else if name.starts_with("include") && depth > 0 {
            // Relative to the included file holding it, which the entry does not name.
            return Err(ToolError::GitMetadata {
                path: loc.commondir.join("config"),
                reason: format!(
                    "`{name} = {value}` in a file included by the repository's config is relative to that included file, which cannot be verified; use an absolute path"
                ),
            });
        } else if name.starts_with("include") {
            // Relative to the file holding it: `config` in the common directory, or a linked
            // worktree's `config.worktree` in its own git directory.
            if level == git2::ConfigLevel::Worktree {
                loc.gitdir.join(&value)
            } else {
                loc.commondir.join(&value)
            }
        } else {
            loc.workdir.join(&value)
        };
        let what = format!("`{name}` in the repository's config");
        meta::authorize_all(policy, &path, &[Access::Read], Some(&what))?;
    }
    Ok(())
}

/// `{branch, head, detached}` of a repository's HEAD.
pub(super) fn head_info(repo: &Repository) -> (Option<String>, Option<String>, bool) {
    match repo.head() {
        Ok(h) => {
            let id = h.target().map(|o| o.to_string());
            if h.is_branch() {
                (h.shorthand().map(str::to_string), id, false)
            } else {
                (None, id, true)
            }
        }
        // Unborn branch: HEAD names a branch without commits.
        Err(_) => {
            let branch = repo.find_reference("HEAD").ok().and_then(|r| {
                r.symbolic_target()
                    .map(|t| t.trim_start_matches("refs/heads/").to_string())
            });
            (branch, None, false)
        }
    }
}

pub(super) fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The JSON result of a read operation.
pub fn run(
    policy: &SecurityPolicy,
    loc: &Location,
    req: &Request<'_>,
    max_bytes: usize,
) -> Result<Value, ToolError> {
    use super::request::Operation as Op;
    let err = |e| git_error(&loc.workdir, e);
    match req.operation {
        Op::Status => with_repo(policy, loc, |repo, hidden| {
            status::status(policy, loc, repo, hidden)
        }),
        Op::Diff => with_repo(policy, loc, |repo, hidden| {
            diff(policy, loc, repo, hidden, req, max_bytes)
        }),
        Op::Log => with_repo(policy, loc, |repo, _| log(repo, req.limit).map_err(err)),
        Op::Branch => with_repo(policy, loc, |repo, _| branches(repo).map_err(err)),
        Op::StashList => with_repo(policy, loc, |repo, _| stash_list(repo).map_err(err)),
        Op::WorktreeList => Ok(json!({
            "worktrees": worktree_list(policy, loc, &[Access::Read])
                .iter()
                .map(worktree_json)
                .collect::<Vec<_>>()
        })),
        other => Err(ToolError::arg(
            "operation",
            format!("`{}` is not a read operation", other.name()),
        )),
    }
}

fn delta_name(d: Delta) -> &'static str {
    match d {
        Delta::Added => "added",
        Delta::Deleted => "deleted",
        Delta::Modified => "modified",
        Delta::Renamed => "renamed",
        Delta::Copied => "copied",
        Delta::Ignored => "ignored",
        Delta::Untracked => "untracked",
        Delta::Typechange => "typechange",
        Delta::Unreadable => "unreadable",
        Delta::Conflicted => "conflicted",
        Delta::Unmodified => "unmodified",
    }
}

/// `files` are relative to the working tree (absolute ones must lie inside it) and readable
/// through the policy; they are matched literally, never as patterns.
pub fn repo_relative(
    policy: &SecurityPolicy,
    loc: &Location,
    field: &str,
    paths: &[&str],
    access: &[Access],
) -> Result<Vec<String>, ToolError> {
    let mut out = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let field = format!("{field}[{i}]");
        let joined = loc.workdir.join(p);
        let norm = warren_policy::resolve::normalize(&joined);
        let rel = norm.strip_prefix(&loc.workdir).map_err(|_| {
            ToolError::arg(
                &field,
                format!(
                    "`{p}` is outside the repository's working tree {}",
                    loc.workdir.display()
                ),
            )
        })?;
        meta::authorize_all(policy, &norm, access, None)?;
        let rel = rel.to_string_lossy().into_owned();
        out.push(if rel.is_empty() { ".".into() } else { rel });
    }
    Ok(out)
}

fn diff(
    policy: &SecurityPolicy,
    loc: &Location,
    repo: &Repository,
    hidden: &[String],
    req: &Request<'_>,
    max_bytes: usize,
) -> Result<Value, ToolError> {
    let err = |e| git_error(&loc.workdir, e);
    let files = repo_relative(policy, loc, "files", &req.files, &[Access::Read])?;
    // The staged side reads objects only; the unstaged side walks the readable tree only.
    let carved = if req.cached {
        None
    } else {
        carve::readable_pathspecs(repo, &loc.workdir, hidden).map_err(err)?
    };
    let specs = carve::intersect(carved, &files);
    if specs.as_ref().is_some_and(Vec::is_empty) {
        return Ok(json!({"cached": req.cached, "files": [], "truncated": false}));
    }
    let mut opts = DiffOptions::new();
    opts.ignore_submodules(true);
    if let Some(specs) = &specs {
        opts.disable_pathspec_match(true);
        for f in specs {
            opts.pathspec(f.as_str());
        }
    }
    let mut d = if req.cached {
        let tree = match repo.head() {
            Ok(h) => Some(h.peel_to_tree().map_err(err)?),
            Err(_) => None,
        };
        repo.diff_tree_to_index(tree.as_ref(), None, Some(&mut opts))
            .map_err(err)?
    } else {
        repo.diff_index_to_workdir(None, Some(&mut opts))
            .map_err(err)?
    };
    if req.cached {
        d.find_similar(None).map_err(err)?;
    }
    let mut used = 0usize;
    let mut truncated = false;
    let mut out = Vec::new();
    'files: for i in 0..d.deltas().len() {
        // Omitted before its content is ever loaded: a path the agent may not read.
        let shown = d.get_delta(i).is_some_and(|delta| {
            [delta.new_file().path(), delta.old_file().path()]
                .into_iter()
                .flatten()
                .all(|p| readable(policy, loc, &p.to_string_lossy()))
        });
        if !shown {
            continue;
        }
        let Some(patch) = Patch::from_diff(&d, i).map_err(err)? else {
            continue;
        };
        let delta = patch.delta();
        let path = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let old_path = delta.old_file().path().map(|p| p.to_string_lossy());
        let mut hunks = Vec::new();
        for h in 0..patch.num_hunks() {
            let (hunk, n) = patch.hunk(h).map_err(err)?;
            let mut lines = Vec::with_capacity(n);
            for l in 0..n {
                let line = patch.line_in_hunk(h, l).map_err(err)?;
                let text = format!(
                    "{}{}",
                    line.origin(),
                    String::from_utf8_lossy(line.content()).trim_end_matches('\n')
                );
                used += text.len();
                if used > max_bytes {
                    truncated = true;
                    hunks.push(hunk_json(&hunk, lines));
                    out.push(file_json(&path, old_path.as_deref(), &delta, hunks));
                    break 'files;
                }
                lines.push(text);
            }
            hunks.push(hunk_json(&hunk, lines));
        }
        out.push(file_json(&path, old_path.as_deref(), &delta, hunks));
    }
    Ok(json!({"cached": req.cached, "files": out, "truncated": truncated}))
}

fn hunk_json(h: &git2::DiffHunk<'_>, lines: Vec<String>) -> Value {
    json!({
        "header": String::from_utf8_lossy(h.header()).trim_end().to_string(),
        "old_start": h.old_start(),
        "old_lines": h.old_lines(),
        "new_start": h.new_start(),
        "new_lines": h.new_lines(),
        "lines": lines,
    })
}

fn file_json(
    path: &str,
    old_path: Option<&str>,
    delta: &git2::DiffDelta<'_>,
    hunks: Vec<Value>,
) -> Value {
    let mut v = json!({
        "path": path,
        "status": delta_name(delta.status()),
        "binary": delta.flags().is_binary(),
        "hunks": hunks,
    });
    if let Some(old) = old_path.filter(|o| *o != path) {
        v["old_path"] = json!(old);
    }
    v
}

/// Unix seconds and an offset in minutes as RFC 3339 (`2024-05-01T12:00:00+02:00`).
pub fn rfc3339(seconds: i64, offset_minutes: i32) -> String {
    let local = seconds + i64::from(offset_minutes) * 60;
    let days = local.div_euclid(86_400);
    let secs = local.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let sign = if offset_minutes < 0 { '-' } else { '+' };
    let off = offset_minutes.unsigned_abs();
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}{sign}{:02}:{:02}",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60,
        off / 60,
        off % 60
    )
}

fn log(repo: &Repository, limit: usize) -> Result<Value, git2::Error> {
    let head = match repo.head() {
        Ok(h) => h.target(),
        Err(_) => None,
    };
    let Some(head) = head else {
        return Ok(json!({"commits": []}));
    };
    // git's default order (reverse chronological), produced incrementally: no full walk.
    let mut walk = repo.revwalk()?;
    walk.push(head)?;
    let mut commits = Vec::new();
    for id in walk.take(limit) {
        let c = repo.find_commit(id?)?;
        // The raw author fields, exactly as recorded: no mailmap.
        let a = c.author();
        let when = a.when();
        commits.push(json!({
            "id": c.id().to_string(),
            "author_name": lossy(a.name_bytes()),
            "author_email": lossy(a.email_bytes()),
            "time": rfc3339(when.seconds(), when.offset_minutes()),
            "timestamp": when.seconds(),
            "summary": c.summary_bytes().map(lossy).unwrap_or_default(),
        }));
    }
    Ok(json!({"commits": commits}))
}

fn branches(repo: &Repository) -> Result<Value, git2::Error> {
    let mut out = Vec::new();
    for b in repo.branches(Some(BranchType::Local))? {
        let (b, _) = b?;
        let name = b.name_bytes().map(lossy)?;
        out.push(json!({
            "name": name,
            "current": b.is_head(),
            "id": b.get().target().map(|o| o.to_string()),
        }));
    }
    let (current, _, _) = head_info(repo);
    Ok(json!({"current": current, "branches": out}))
}

fn stash_list(repo: &mut Repository) -> Result<Value, git2::Error> {
    let mut out = Vec::new();
    repo.stash_foreach(|i, msg, id| {
        out.push(json!({"index": i, "message": msg, "id": id.to_string()}));
        true
    })?;
    Ok(json!({"stashes": out}))
}

/// One listed worktree.
#[derive(Debug, Clone)]
pub struct Worktree {
    /// Its verified location.
    pub loc: Location,
    /// Its branch, when HEAD names one.
    pub branch: Option<String>,
    /// Its HEAD commit.
    pub head: Option<String>,
}

fn worktree_json(w: &Worktree) -> Value {
    json!({
        "path": w.loc.workdir.display().to_string(),
        "branch": w.branch,
        "head": w.head,
        "linked": w.loc.is_linked(),
    })
}

/// The worktrees of `loc`'s repository whose path resolves and whose metadata verifies for
/// `access` (rules §3 rule 6); the others are omitted.
pub fn worktree_list(policy: &SecurityPolicy, loc: &Location, access: &[Access]) -> Vec<Worktree> {
    let mut locs = Vec::new();
    if let Some(main) = meta::main_worktree(policy, &loc.commondir, access) {
        locs.push(main);
    }
    let dir = loc.commondir.join("worktrees");
    let is_dir = std::fs::symlink_metadata(&dir)
        .map(|m| m.is_dir())
        .unwrap_or(false);
    if is_dir {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            let mut names: Vec<_> = entries
                .filter_map(|e| e.ok().map(|e| e.file_name()))
                .collect();
            names.sort();
            for name in names {
                if let Some(l) = meta::linked_worktree(policy, &loc.commondir, &name, access) {
                    locs.push(l);
                }
            }
        }
    }
    // One confined thread reads the HEAD of every verified worktree.
    let dirs: Vec<&Path> = locs.iter().flat_map(repo_dirs).collect();
    let heads = confined::run(policy, &dirs, || {
        Ok(locs
            .iter()
            .map(|l| match open(policy, l) {
                Ok(r) => {
                    let (b, h, _) = head_info(&r);
                    (b, h)
                }
                Err(_) => (None, None),
            })
            .collect::<Vec<_>>())
    })
    .unwrap_or_default();
    let mut heads = heads.into_iter();
    locs.into_iter()
        .map(|l| {
            let (branch, head) = heads.next().unwrap_or((None, None));
            Worktree {
                loc: l,
                branch,
                head,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn times_print_as_rfc3339_with_their_offset() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00+00:00");
        assert_eq!(rfc3339(1_700_000_000, 0), "2023-11-14T22:13:20+00:00");
        assert_eq!(rfc3339(1_700_000_000, 120), "2023-11-15T00:13:20+02:00");
        assert_eq!(rfc3339(1_700_000_000, -330), "2023-11-14T16:43:20-05:30");
        assert_eq!(rfc3339(951_782_400, 0), "2000-02-29T00:00:00+00:00");
    }
}
