//! Finding a repository and verifying its metadata through the policy (rules §3 rule 5) before
//! libgit2 or the `git` program sees it: discovery never leaves the authorized root; the `.git`
//! entry, the `gitdir` it names, `commondir`, a linked worktree's back-pointer and alternate
//! object directories must all resolve inside grants of the needed kind; a symbolic link
//! anywhere in that metadata is refused without being followed.

mod walk;

use crate::error::ToolError;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use warren_policy::{under, Access, SecurityPolicy};

/// Largest metadata file read (`.git` file, `commondir`, `gitdir`, `alternates`).
const MAX_META_BYTES: u64 = 64 * 1024;

/// A repository whose metadata was verified for some accesses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The working tree (the directory holding `.git`).
    pub workdir: PathBuf,
    /// The git directory of this working tree.
    pub gitdir: PathBuf,
    /// The common git directory (equal to `gitdir` except for linked worktrees).
    pub commondir: PathBuf,
}

impl Location {
    /// Whether this is a linked worktree.
    pub fn is_linked(&self) -> bool {
        self.gitdir != self.commondir
    }
}

/// The accesses an operation needs: Read, plus Write for write-class operations.
pub fn accesses(write: bool) -> &'static [Access] {
    if write {
        &[Access::Read, Access::Write]
    } else {
        &[Access::Read]
    }
}

/// Authorizes `path` for every access, returning the resolved path.
pub fn authorize_all(
    policy: &SecurityPolicy,
    path: &Path,
    access: &[Access],
    what: Option<&str>,
) -> Result<PathBuf, ToolError> {
    let mut resolved = path.to_path_buf();
    for a in access {
        let auth = policy.authorize(path, *a).map_err(|mut d| {
            if let Some(w) = what {
                d.detail = Some(
                    d.detail
                        .map_or_else(|| w.to_string(), |x| format!("{w}: {x}")),
                );
            }
            ToolError::Denied(d)
        })?;
        resolved = auth.path;
    }
    Ok(resolved)
}

/// The deepest policy root holding `path`: discovery never walks above it.
fn boundary(policy: &SecurityPolicy, path: &Path) -> PathBuf {
    policy
        .roots
        .iter()
        .filter(|r| under(path, &r.path))
        .max_by_key(|r| r.path.components().count())
        .map(|r| r.path.clone())
        .unwrap_or_else(|| path.to_path_buf())
}

/// Finds the repository holding `path` (already a directory the caller names), searching
/// upwards no further than the authorized root, and verifies its metadata for `access`.
pub fn locate(
    policy: &SecurityPolicy,
    path: &Path,
    access: &[Access],
) -> Result<Location, ToolError> {
    let start = authorize_all(policy, path, access, None)?;
    match std::fs::metadata(&start) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(ToolError::arg(
                "path",
                format!("{} is not a directory", start.display()),
            ))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ToolError::NotFound(start))
        }
        Err(e) => return Err(ToolError::io(&start, e)),
    }
    let stop = boundary(policy, &start);
    let mut dir = start.clone();
    loop {
        let dotgit = dir.join(".git");
        match std::fs::symlink_metadata(&dotgit) {
            Ok(_) => return verify_worktree(policy, &dir, access),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(ToolError::io(&dotgit, e)),
        }
        if dir == stop {
            break;
        }
        match dir.parent() {
            Some(p) if under(p, &stop) && policy.check(p, Access::Read).allowed => {
                dir = p.to_path_buf();
            }
            _ => break,
        }
    }
    Err(ToolError::NotARepository {
        path: start,
        boundary: stop,
    })
}

/// Verifies the working tree `workdir` (a resolved directory holding `.git`) and its metadata
/// for `access`.
pub fn verify_worktree(
    policy: &SecurityPolicy,
    workdir: &Path,
    access: &[Access],
) -> Result<Location, ToolError> {
    // The whole working tree is what git reads (and, for writes, changes).
    authorize_all(policy, workdir, access, Some("working tree"))?;
    let dotgit = workdir.join(".git");
    let meta = std::fs::symlink_metadata(&dotgit).map_err(|e| ToolError::io(&dotgit, e))?;
    if meta.file_type().is_symlink() {
        return Err(ToolError::GitSymlink {
            path: dotgit,
            what: ".git".into(),
        });
    }
    authorize_all(policy, &dotgit, access, Some(".git"))?;
    let gitdir = if meta.is_dir() {
        dotgit
    } else if meta.is_file() {
        let text = read_meta(&dotgit)?;
        let target = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("gitdir:"))
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| ToolError::GitMetadata {
                path: dotgit.clone(),
                reason: "is a file without a `gitdir: <path>` line".into(),
            })?;
        let what = format!("gitdir named by {}", dotgit.display());
        meta_path(policy, workdir, target, access, &what)?
    } else {
        return Err(ToolError::GitMetadata {
            path: dotgit,
            reason: "is neither a directory nor a file".into(),
        });
    };
    verify_dir(&gitdir, "git directory")?;
    let common_file = gitdir.join("commondir");
    let commondir = if std::fs::symlink_metadata(&common_file).is_ok() {
        let text = read_meta(&common_file)?;
        let target = text.trim_end_matches(['\n', '\r']);
        if target.is_empty() {
            return Err(ToolError::GitMetadata {
                path: common_file,
                reason: "is empty".into(),
            });
        }
        let what = format!("commondir named by {}", common_file.display());
        let c = meta_path(policy, &gitdir, target, access, &what)?;
        verify_dir(&c, "common git directory")?;
        c
    } else {
        gitdir.clone()
    };
    if gitdir != commondir {
        // A linked worktree's back-pointer (`gitdir` file), used by `worktree prune/remove`.
        let back = gitdir.join("gitdir");
        if std::fs::symlink_metadata(&back).is_ok() {
            let text = read_meta(&back)?;
            let what = format!("worktree back-pointer {}", back.display());
            meta_path(
                policy,
                &gitdir,
                text.trim_end_matches(['\n', '\r']),
                access,
                &what,
            )?;
        }
    }
    let loc = Location {
        workdir: workdir.to_path_buf(),
        gitdir,
        commondir,
    };
    verify_objects(policy, &loc)?;
    Ok(loc)
}

/// The object directory must be a real directory; everything below the git directories and
/// every alternate object directory is then walked ([`walk`]).
fn verify_objects(policy: &SecurityPolicy, loc: &Location) -> Result<(), ToolError> {
    verify_dir(&loc.commondir.join("objects"), "object directory")?;
    walk::verify(policy, loc)
}

/// Reads a small metadata file, refusing a symlink at the leaf.
pub(super) fn read_meta(path: &Path) -> Result<String, ToolError> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => ToolError::GitSymlink {
                path: path.to_path_buf(),
                what: "git metadata file".into(),
            },
            _ => ToolError::io(path, e),
        })?;
    let meta = file.metadata().map_err(|e| ToolError::io(path, e))?;
    if !meta.is_file() {
        return Err(ToolError::GitMetadata {
            path: path.to_path_buf(),
            reason: "is not a regular file".into(),
        });
    }
    let mut buf = Vec::new();
    file.take(MAX_META_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| ToolError::io(path, e))?;
    if buf.len() as u64 > MAX_META_BYTES {
        return Err(ToolError::GitMetadata {
            path: path.to_path_buf(),
            reason: format!("is over {MAX_META_BYTES} bytes"),
        });
    }
    String::from_utf8(buf).map_err(|_| ToolError::GitMetadata {
        path: path.to_path_buf(),
        reason: "is not UTF-8".into(),
    })
}

/// Resolves a path named by metadata (relative to `base`) component by component, refusing any
/// symbolic link on the way, then authorizes the result for every access.
pub(super) fn meta_path(
    policy: &SecurityPolicy,
    base: &Path,
    raw: &str,
    access: &[Access],
    what: &str,
) -> Result<PathBuf, ToolError> {
    if raw.contains('\0') {
        return Err(ToolError::GitMetadata {
            path: PathBuf::from(raw),
            reason: format!("{what}: contains a NUL byte"),
        });
    }
    let raw = Path::new(raw);
    let joined = if raw.is_absolute() {
        raw.to_path_buf()
    } else {
        base.join(raw)
    };
    let mut walked = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                walked.pop();
            }
            Component::Normal(n) => {
                walked.push(n);
                if let Ok(m) = std::fs::symlink_metadata(&walked) {
                    if m.file_type().is_symlink() {
                        return Err(ToolError::GitSymlink {
                            path: walked,
                            what: what.to_string(),
                        });
                    }
                }
            }
        }
    }
    authorize_all(policy, &walked, access, Some(what))?;
    Ok(walked)
}

/// A git directory must be a real directory, and none of its entries a symbolic link
/// (`config`, `HEAD`, `hooks`, `objects`, `refs`, `worktrees`, ...).
fn verify_dir(dir: &Path, what: &str) -> Result<(), ToolError> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::GitMetadata {
            path: dir.to_path_buf(),
            reason: format!("the {what} does not exist"),
        },
        _ => ToolError::io(dir, e),
    })?;
    if meta.file_type().is_symlink() {
        return Err(ToolError::GitSymlink {
            path: dir.to_path_buf(),
            what: what.to_string(),
        });
    }
    if !meta.is_dir() {
        return Err(ToolError::GitMetadata {
            path: dir.to_path_buf(),
            reason: format!("the {what} is not a directory"),
        });
    }
    let entries = std::fs::read_dir(dir).map_err(|e| ToolError::io(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| ToolError::io(dir, e))?;
        let ft = entry
            .file_type()
            .map_err(|e| ToolError::io(entry.path(), e))?;
        if ft.is_symlink() {
            return Err(ToolError::GitSymlink {
                path: entry.path(),
                what: format!("entry of the {what}"),
            });
        }
    }
    Ok(())
}

/// One linked worktree of `loc`'s repository, verified for `access`: its metadata directory
/// `<commondir>/worktrees/<name>`, the working tree its back-pointer names and that working
/// tree's `.git` file, which must lead back to the same metadata. `None` when anything does
/// not resolve or is not verifiable through the policy.
pub fn linked_worktree(
    policy: &SecurityPolicy,
    commondir: &Path,
    name: &std::ffi::OsStr,
    access: &[Access],
) -> Option<Location> {
    let meta_dir = commondir.join("worktrees").join(name);
    authorize_all(policy, &meta_dir, access, None).ok()?;
    verify_dir(&meta_dir, "worktree metadata directory").ok()?;
    let text = read_meta(&meta_dir.join("gitdir")).ok()?;
    let what = "worktree back-pointer";
    let dotgit = meta_path(
        policy,
        &meta_dir,
        text.trim_end_matches(['\n', '\r']),
        access,
        what,
    )
    .ok()?;
    let workdir = dotgit.parent()?;
    if !std::fs::symlink_metadata(workdir).ok()?.is_dir() {
        return None;
    }
    let loc = verify_worktree(policy, workdir, access).ok()?;
    (loc.gitdir == meta_dir && loc.commondir == commondir).then_some(loc)
}

/// The main working tree of a repository whose common directory is `commondir`, verified for
/// `access`; `None` for a bare repository or when it is not verifiable.
pub fn main_worktree(
    policy: &SecurityPolicy,
    commondir: &Path,
    access: &[Access],
) -> Option<Location> {
    if commondir.file_name()? != ".git" {
        return None;
    }
    let workdir = commondir.parent()?;
    let loc = verify_worktree(policy, workdir, access).ok()?;
    (loc.gitdir == commondir && loc.commondir == commondir).then_some(loc)
}
