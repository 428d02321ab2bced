//! The deep metadata walk (rules §3 rule 5): every file and directory that libgit2 opens below
//! a git directory (`refs/`, `logs/`, `info/`, every part of `objects/`: the fan-out
//! directories and their loose objects, `pack/`, `info/`) is checked through directory
//! descriptors opened without following links, and a symbolic link anywhere there is refused.
//! Alternate object directories are authorized for Read at every depth libgit2 loads them,
//! resolved exactly as libgit2 resolves them, and walked the same way. On kernels without
//! Landlock this walk is the only thing between libgit2 and a link planted by the agent; with
//! Landlock it is the first of two defences (see [`super::confined`]).

use super::{meta_path, read_meta, Location};
use crate::error::ToolError;
use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use warren_policy::{Access, SecurityPolicy};

/// How deep libgit2 follows alternates (`GIT_ALTERNATES_MAX_DEPTH`); a chain that goes deeper
/// is refused rather than partly verified.
pub const MAX_ALTERNATES_DEPTH: usize = 5;

/// Most directory entries the walk looks at in one repository before giving up (a bound, not
/// a limit any real repository reaches: loose objects are packed long before).
const MAX_ENTRIES: usize = 2_000_000;

/// Deepest directory nesting walked below a metadata subtree.
const MAX_DEPTH: usize = 128;

/// Subtrees of every git directory that libgit2 reads and that are walked in full.
const META_SUBTREES: &[&str] = &["refs", "logs", "info"];

/// Verifies the metadata below `loc`'s git directory and common directory, and every
/// alternate object directory they lead to.
pub fn verify(policy: &SecurityPolicy, loc: &Location) -> Result<(), ToolError> {
    let mut budget = MAX_ENTRIES;
    let mut dirs = vec![loc.gitdir.as_path()];
    if loc.commondir != loc.gitdir {
        dirs.push(loc.commondir.as_path());
    }
    for dir in dirs {
        for sub in META_SUBTREES {
            no_symlinks(&dir.join(sub), &mut budget)?;
        }
    }
    let mut seen = BTreeSet::new();
    object_dir(
        policy,
        &loc.commondir.join("objects"),
        0,
        &mut seen,
        &mut budget,
    )
}

/// Walks one object directory and, recursively, the alternates it names.
fn object_dir(
    policy: &SecurityPolicy,
    objects: &Path,
    depth: usize,
    seen: &mut BTreeSet<PathBuf>,
    budget: &mut usize,
) -> Result<(), ToolError> {
    if !seen.insert(objects.to_path_buf()) {
        return Ok(());
    }
    no_symlinks(objects, budget)?;
    let file = objects.join("info").join("alternates");
    if std::fs::symlink_metadata(&file).is_err() {
        return Ok(());
    }
    if depth >= MAX_ALTERNATES_DEPTH {
        return Err(ToolError::GitMetadata {
            path: file,
            reason: format!("alternates nest deeper than {MAX_ALTERNATES_DEPTH} levels; refused"),
        });
    }
    let text = read_meta(&file)?;
    for line in text.split(['\n', '\r']) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let what = format!("alternate object directory named by {}", file.display());
        // libgit2 joins a line starting with `.` to this object directory and takes any other
        // line as it is: a relative one would be relative to Warren's working directory.
        if !line.starts_with('.') && !line.starts_with('/') {
            return Err(ToolError::GitMetadata {
                path: file,
                reason: format!(
                    "{what}: `{line}` is a relative path that does not start with `.`; libgit2 would resolve it against the process's working directory, not the repository; refused"
                ),
            });
        }
        let alt = meta_path(policy, objects, line, &[Access::Read], &what)?;
        object_dir(policy, &alt, depth + 1, seen, budget)?;
    }
    Ok(())
}

fn symlink_error(path: PathBuf) -> ToolError {
    ToolError::GitSymlink {
        path,
        what: "entry below the git directory, which libgit2 would follow".into(),
    }
}

fn io_error(path: &Path, e: Errno) -> ToolError {
    ToolError::io(path, std::io::Error::from(e))
}

fn open_dir(at: Option<&OwnedFd>, path: &Path, name: &OsStr) -> Result<OwnedFd, Errno> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    match at {
        Some(fd) => rustix::fs::openat(fd, name, flags, Mode::empty()),
        None => rustix::fs::open(path, flags, Mode::empty()),
    }
}

/// Refuses any symbolic link at or below `root` (absent: nothing to check; a file: checked
/// itself only). Directories are opened relative to their parent's descriptor without
/// following links, so the walk checks what is really there.
fn no_symlinks(root: &Path, budget: &mut usize) -> Result<(), ToolError> {
    match std::fs::symlink_metadata(root) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(ToolError::io(root, e)),
        Ok(m) if m.file_type().is_symlink() => return Err(symlink_error(root.to_path_buf())),
        Ok(m) if !m.is_dir() => return Ok(()),
        Ok(_) => {}
    }
    let fd = open_dir(None, root, root.as_os_str()).map_err(|e| match e {
        Errno::LOOP | Errno::NOTDIR => symlink_error(root.to_path_buf()),
        e => io_error(root, e),
    })?;
    walk_dir(&fd, root, root, 0, budget)
}

/// One directory of [`no_symlinks`]; descriptors are held only along the current path.
fn walk_dir(
    fd: &OwnedFd,
    path: &Path,
    root: &Path,
    depth: usize,
    budget: &mut usize,
) -> Result<(), ToolError> {
    if depth > MAX_DEPTH {
        return Err(ToolError::GitMetadata {
            path: path.to_path_buf(),
            reason: format!(
                "nests deeper than {MAX_DEPTH} directories below {}; refused",
                root.display()
            ),
        });
    }
    let mut dir = Dir::read_from(fd).map_err(|e| io_error(path, e))?;
    while let Some(entry) = dir.read() {
        let entry = entry.map_err(|e| io_error(path, e))?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        *budget = budget
            .checked_sub(1)
            .ok_or_else(|| ToolError::GitMetadata {
                path: root.to_path_buf(),
                reason: format!("holds more than {MAX_ENTRIES} entries; refused"),
            })?;
        let child = path.join(name);
        let kind = match entry.file_type() {
            FileType::Unknown => rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .map(|st| FileType::from_raw_mode(st.st_mode))
                .map_err(|e| io_error(&child, e))?,
            k => k,
        };
        match kind {
            FileType::Symlink => return Err(symlink_error(child)),
            FileType::Directory => {
                let sub = open_dir(Some(fd), &child, name).map_err(|e| match e {
                    Errno::LOOP | Errno::NOTDIR => symlink_error(child.clone()),
                    e => io_error(&child, e),
                })?;
                walk_dir(&sub, &child, root, depth + 1, budget)?;
            }
            _ => {}
        }
    }
    Ok(())
}
