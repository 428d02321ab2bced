//! Race-free opening of files on an agent's behalf (rules §4, "files Warren itself opens").
//!
//! Warren's own process is not sandboxed, so every file it opens for an agent (the file tools,
//! the search tools, Markdown memory) goes through here. A path is first decided by
//! [`SecurityPolicy::check`] (symlinks the agent named are resolved there, as the policy says);
//! the resolved path is then opened relative to a descriptor of the grant root that contains it,
//! with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, so a directory swapped for a symlink
//! between the decision and the open fails the open instead of redirecting it. What was actually
//! opened is read back from the descriptor and decided again. Kernels without `openat2` get the
//! same guarantee from a component-by-component `openat(O_NOFOLLOW)` walk.

use crate::access::{Access, Decision, Denial, Rule};
use crate::authorize::{is_device, under};
use crate::policy::SecurityPolicy;
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, CWD};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once `openat2` answered `ENOSYS`: later opens go straight to the component walk.
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Why a file could not be opened for an agent.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The policy refuses the access.
    #[error(transparent)]
    Denied(#[from] Denial),
    /// Nothing exists at the path.
    #[error("{0} does not exist")]
    NotFound(PathBuf),
    /// The last component is a symbolic link (writes never go through one).
    #[error("{0} is a symbolic link; writing through it is refused")]
    SymlinkLeaf(PathBuf),
    /// A component turned into a symbolic link, or moved, between the decision and the open.
    #[error("{0} changed while it was being opened (a symbolic link appeared on the path); nothing was opened")]
    Changed(PathBuf),
    /// A regular file was needed and something else is there (directory, FIFO, socket, device).
    #[error("{0} is not a regular file")]
    NotAFile(PathBuf),
    /// A directory was needed and something else is there.
    #[error("{0} is not a directory")]
    NotADirectory(PathBuf),
    /// Any other failure of the system call.
    #[error("{path}: {source}")]
    Io {
        /// The path being opened.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

impl OpenError {
    fn io(path: &Path, e: Errno) -> Self {
        match e {
            Errno::NOENT => OpenError::NotFound(path.to_path_buf()),
            Errno::LOOP | Errno::XDEV => OpenError::Changed(path.to_path_buf()),
            Errno::NOTDIR => OpenError::NotADirectory(path.to_path_buf()),
            Errno::NXIO | Errno::ISDIR => OpenError::NotAFile(path.to_path_buf()),
            _ => OpenError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::from_raw_os_error(e.raw_os_error()),
            },
        }
    }
}

/// How a file is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileAccess {
    /// Read only. Non-regular files (devices, FIFOs) open non-blocking.
    Read,
    /// Write, creating the file (and missing parent directories, each decided for Write) when
    /// absent. Only regular files and `/dev/null` are accepted; nothing is truncated here.
    Write,
    /// Read and write an existing regular file (both accesses decided).
    ReadWrite,
}

/// A file opened for an agent: the descriptor, where it actually is, and the decision.
#[derive(Debug)]
pub struct OpenedFile {
    /// The open file.
    pub file: File,
    /// The path the descriptor actually refers to (read back after opening).
    pub path: PathBuf,
    /// The rule that allowed the access (for write-only roots, answers must not reveal whether
    /// the file existed).
    pub rule: Rule,
    /// Whether the open created the file ([`FileAccess::Write`] only).
    pub created: bool,
    /// What the descriptor refers to.
    pub kind: FileType,
    /// Its size in bytes at open time.
    pub len: u64,
}

/// A directory opened for reading its entries.
#[derive(Debug)]
pub struct OpenedDir {
    /// The directory descriptor (`O_RDONLY | O_DIRECTORY`).
    pub fd: OwnedFd,
    /// Where it actually is.
    pub path: PathBuf,
}

/// One entry found while walking an [`OpenedDir`].
#[derive(Debug)]
pub enum Entry {
    /// A readable directory, opened.
    Dir(OpenedDir),
    /// A readable regular file, not opened yet (see [`SecurityPolicy::open_entry_file`]).
    File(PathBuf),
    /// A symbolic link: never followed by a walk; its target is decided and opened by path.
    Symlink(PathBuf),
    /// Something else (FIFO, socket, device): listed, never read by a walk.
    Other(PathBuf),
}

impl SecurityPolicy {
    /// Opens `input` (relative paths join the workspace) for `access`, race-free: decided by
    /// [`check`](Self::check), opened beneath the deepest grant root containing the resolved
    /// path without following any link, then decided again on what was opened.
    pub fn open_file(&self, input: &Path, access: FileAccess) -> Result<OpenedFile, OpenError> {
        if access == FileAccess::Read {
            if let Some(opened) = self.open_read_direct(input)? {
                return Ok(opened);
            }
        }
        let decision = match access {
            FileAccess::Read => self.check(input, Access::Read),
            FileAccess::Write => self.check(input, Access::Write),
            FileAccess::ReadWrite => {
                let read = self.check(input, Access::Read);
                if !read.allowed {
                    return Err(denial(read).into());
                }
                self.check(input, Access::Write)
            }
        };
        if !decision.allowed {
            return Err(denial(decision).into());
        }
        if access != FileAccess::Read && is_symlink(&decision.lexical) {
            return Err(OpenError::SymlinkLeaf(decision.lexical));
        }
        let target = decision.path.clone();
        let (anchor, anchor_path) = self.anchor_for(&target)?;
        let rel = relative(&anchor_path, &target);
        let base = OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
        let (fd, created) = match access {
            FileAccess::Read => (
                open_beneath(anchor.as_fd(), &rel, base | OFlags::RDONLY, Mode::empty())
                    .map_err(|e| OpenError::io(&target, e))?,
                false,
            ),
            FileAccess::ReadWrite => (
                open_beneath(anchor.as_fd(), &rel, base | OFlags::RDWR, Mode::empty())
                    .map_err(|e| OpenError::io(&target, e))?,
                false,
            ),
            FileAccess::Write => self.create_beneath(anchor, &anchor_path, &rel, &target)?,
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| OpenError::io(&target, e))?;
        let kind = FileType::from_raw_mode(stat.st_mode);
        let path = self.reauthorize(&fd, &target, &decision)?;
        if access != FileAccess::Read
            && kind != FileType::RegularFile
            && !is_device(&path, Access::Write)
        {
            return Err(OpenError::NotAFile(path));
        }
        if kind == FileType::Directory {
            return Err(OpenError::NotAFile(path));
        }
        Ok(OpenedFile {
            file: File::from(fd),
            path,
            rule: decision.rule,
            created,
            kind,
            len: u64::try_from(stat.st_size).unwrap_or(0),
        })
    }

    /// The common case of a read, in one open: when the path as written (after `~`, joining and
    /// `..`) is allowed and opens with `RESOLVE_NO_SYMLINKS`, no link is on it, so it is its own
    /// resolution and the decision on it stands. `None` sends the caller the long way (a link on
    /// the path, or a path the lexical decision refuses).
    fn open_read_direct(&self, input: &Path) -> Result<Option<OpenedFile>, OpenError> {
        let Ok(lexical) =
            crate::resolve::lexical_absolute(input, &self.workspace, self.home.as_deref())
        else {
            return Ok(None);
        };
        let (ok, rule) = self.decide(&lexical, Access::Read);
        if !ok {
            return Ok(None);
        }
        let flags = OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::RDONLY;
        let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        if NO_OPENAT2.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let fd = match rustix::fs::openat2(CWD, &lexical, flags, Mode::empty(), how) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Err(OpenError::NotFound(lexical)),
            Err(_) => return Ok(None),
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| OpenError::io(&lexical, e))?;
        let kind = FileType::from_raw_mode(stat.st_mode);
        let decision = Decision {
            allowed: true,
            access: Access::Read,
            path: lexical.clone(),
            lexical: lexical.clone(),
            rule,
            detail: None,
        };
        let path = self.reauthorize(&fd, &lexical, &decision)?;
        if kind == FileType::Directory {
            return Err(OpenError::NotAFile(path));
        }
        Ok(Some(OpenedFile {
            file: File::from(fd),
            path,
            rule,
            created: false,
            kind,
            len: u64::try_from(stat.st_size).unwrap_or(0),
        }))
    }

    /// Opens the directory `input` for reading its entries, race-free (as
    /// [`open_file`](Self::open_file)).
    pub fn open_dir(&self, input: &Path) -> Result<OpenedDir, OpenError> {
        let decision = self.check(input, Access::Read);
        if !decision.allowed {
            return Err(denial(decision).into());
        }
        let target = decision.path.clone();
        let (anchor, anchor_path) = self.anchor_for(&target)?;
        let rel = relative(&anchor_path, &target);
        let flags = OFlags::CLOEXEC | OFlags::RDONLY | OFlags::DIRECTORY;
        let fd = open_beneath(anchor.as_fd(), &rel, flags, Mode::empty())
            .map_err(|e| OpenError::io(&target, e))?;
        let path = self.reauthorize(&fd, &target, &decision)?;
        Ok(OpenedDir { fd, path })
    }

    /// The readable entries of `dir`, sorted by name. Subdirectories are opened relative to
    /// `dir` without following links (a directory swapped for a link meanwhile is dropped);
    /// entries the policy does not let the agent read are left out.
    pub fn read_entries(&self, dir: &OpenedDir) -> Result<Vec<Entry>, OpenError> {
        let listing = rustix::fs::openat(
            dir.fd.as_fd(),
            c".",
            OFlags::CLOEXEC | OFlags::RDONLY | OFlags::DIRECTORY,
            Mode::empty(),
        )
        .map_err(|e| OpenError::io(&dir.path, e))?;
        let reader = rustix::fs::Dir::new(listing).map_err(|e| OpenError::io(&dir.path, e))?;
        let mut names: Vec<(Vec<u8>, FileType)> = Vec::new();
        for entry in reader {
            let entry = entry.map_err(|e| OpenError::io(&dir.path, e))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            names.push((name.to_vec(), entry.file_type()));
        }
        names.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = Vec::with_capacity(names.len());
        for (name, kind) in names {
            let path = dir.path.join(OsStr::from_bytes(&name));
            let kind = if kind == FileType::Unknown {
                match rustix::fs::statat(
                    dir.fd.as_fd(),
                    name.as_slice(),
                    rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
                ) {
                    Ok(st) => FileType::from_raw_mode(st.st_mode),
                    Err(_) => continue,
                }
            } else {
                kind
            };
            if kind == FileType::Symlink {
                out.push(Entry::Symlink(path));
                continue;
            }
            if !self.decide(&path, Access::Read).0 {
                continue;
            }
            match kind {
                FileType::Directory => {
                    let flags = OFlags::CLOEXEC
                        | OFlags::RDONLY
                        | OFlags::DIRECTORY
                        | OFlags::NOFOLLOW
                        | OFlags::NONBLOCK;
                    let Ok(fd) = open_beneath(
                        dir.fd.as_fd(),
                        Path::new(OsStr::from_bytes(&name)),
                        flags,
                        Mode::empty(),
                    ) else {
                        continue;
                    };
                    let Ok(real) = fd_path(&fd) else { continue };
                    if !self.decide(&real, Access::Read).0 {
                        continue;
                    }
                    out.push(Entry::Dir(OpenedDir { fd, path: real }));
                }
                FileType::RegularFile => out.push(Entry::File(path)),
                _ => out.push(Entry::Other(path)),
            }
        }
        Ok(out)
    }

    /// Opens the regular file `name` of a walked directory for reading, without following a
    /// link, and decides on what was opened. `None` when it is no longer a readable regular
    /// file.
    pub fn open_entry_file(&self, dir: &OpenedDir, path: &Path) -> Option<OpenedFile> {
        let name = path.file_name()?;
        let flags =
            OFlags::CLOEXEC | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY;
        let fd = open_beneath(dir.fd.as_fd(), Path::new(name), flags, Mode::empty()).ok()?;
        let stat = rustix::fs::fstat(&fd).ok()?;
        let kind = FileType::from_raw_mode(stat.st_mode);
        if kind != FileType::RegularFile {
            return None;
        }
        let real = fd_path(&fd).ok()?;
        let (ok, rule) = self.decide(&real, Access::Read);
        if !ok {
            return None;
        }
        Some(OpenedFile {
            file: File::from(fd),
            path: real,
            rule,
            created: false,
            kind,
            len: u64::try_from(stat.st_size).unwrap_or(0),
        })
    }

    /// The descriptor of the deepest root containing `target` (`/` outside every root), opened
    /// without following links; when the root does not exist yet, its nearest existing
    /// ancestor. Returns the descriptor and its path.
    fn anchor_for(&self, target: &Path) -> Result<(OwnedFd, PathBuf), OpenError> {
        let mut anchor: &Path = Path::new("/");
        for root in &self.roots {
            if under(target, &root.path) && root.path.components().count() > depth(anchor) {
                anchor = &root.path;
            }
        }
        let mut path = anchor.to_path_buf();
        loop {
            let flags = OFlags::CLOEXEC | OFlags::PATH | OFlags::DIRECTORY;
            let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            let res = if NO_OPENAT2.load(Ordering::Relaxed) {
                walk_open(CWD, &path, flags, Mode::empty())
            } else {
                match rustix::fs::openat2(CWD, &path, flags, Mode::empty(), how) {
                    Err(Errno::NOSYS) => {
                        NO_OPENAT2.store(true, Ordering::Relaxed);
                        walk_open(CWD, &path, flags, Mode::empty())
                    }
                    r => r,
                }
            };
            match res {
                Ok(fd) => return Ok((fd, path)),
                Err(Errno::NOENT) if path.pop() => continue,
                Err(e) => return Err(OpenError::io(&path, e)),
            }
        }
    }

    /// Opens `rel` beneath `anchor` for writing, creating it and its missing parent
    /// directories (each decided for Write first). Returns the descriptor and whether the file
    /// was created.
    fn create_beneath(
        &self,
        anchor: OwnedFd,
        anchor_path: &Path,
        rel: &Path,
        target: &Path,
    ) -> Result<(OwnedFd, bool), OpenError> {
        let parts: Vec<&OsStr> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => Some(n),
                _ => None,
            })
            .collect();
        let Some((leaf, dirs)) = parts.split_last() else {
            // The target is the anchor itself: a directory (or `/dev/null`'s own anchor).
            return Err(OpenError::NotAFile(target.to_path_buf()));
        };
        let mut cur = anchor;
        let mut cur_path = anchor_path.to_path_buf();
        let dir_flags = OFlags::CLOEXEC | OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW;
        for name in dirs {
            cur_path.push(name);
            let next = match open_beneath(cur.as_fd(), Path::new(name), dir_flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    let (ok, rule) = self.decide(&cur_path, Access::Write);
                    if !ok {
                        return Err(Denial {
                            path: cur_path,
                            access: Access::Write,
                            rule,
                            detail: Some("a parent directory would be created there".into()),
                        }
                        .into());
                    }
                    match rustix::fs::mkdirat(cur.as_fd(), *name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(OpenError::io(&cur_path, e)),
                    }
                    open_beneath(cur.as_fd(), Path::new(name), dir_flags, Mode::empty())
                        .map_err(|e| OpenError::io(&cur_path, e))?
                }
                Err(e) => return Err(OpenError::io(&cur_path, e)),
            };
            cur = next;
        }
        let base = OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::WRONLY;
        let mode = Mode::from_raw_mode(0o666);
        let leaf = Path::new(leaf);
        match open_beneath(
            cur.as_fd(),
            leaf,
            base | OFlags::CREATE | OFlags::EXCL,
            mode,
        ) {
            Ok(fd) => Ok((fd, true)),
            // openat2 refuses a mode without O_CREAT.
            Err(Errno::EXIST) => open_beneath(cur.as_fd(), leaf, base, Mode::empty())
                .map(|fd| (fd, false))
                .map_err(|e| match e {
                    Errno::LOOP => OpenError::SymlinkLeaf(target.to_path_buf()),
                    e => OpenError::io(target, e),
                }),
            Err(e) => Err(OpenError::io(target, e)),
        }
    }

    /// Decides again on the path the descriptor actually refers to: a rename racing the open
    /// cannot make Warren act on something the policy refuses.
    fn reauthorize(
        &self,
        fd: &OwnedFd,
        target: &Path,
        decision: &Decision,
    ) -> Result<PathBuf, OpenError> {
        let real = match fd_path(fd) {
            Ok(p) => p,
            // No /proc: the beneath-walk already pinned the path.
            Err(_) => return Ok(target.to_path_buf()),
        };
        if real == target {
            return Ok(real);
        }
        let (ok, rule) = self.decide(&real, decision.access);
        if !ok {
            return Err(Denial {
                path: real,
                access: decision.access,
                rule,
                detail: Some("the file moved while it was being opened".into()),
            }
            .into());
        }
        Ok(real)
    }
}

fn denial(d: Decision) -> Denial {
    Denial {
        path: d.path,
        access: d.access,
        rule: d.rule,
        detail: d.detail,
    }
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .map(|m| m.file_type().is_symlink())
        .unwrap_or(false)
}

fn depth(p: &Path) -> usize {
    p.components().count()
}

/// `target` relative to `anchor` (`.` when equal). Both are absolute and normalised.
fn relative(anchor: &Path, target: &Path) -> PathBuf {
    match target.strip_prefix(anchor) {
        Ok(r) if r.as_os_str().is_empty() => PathBuf::from("."),
        Ok(r) => r.to_path_buf(),
        Err(_) => target.to_path_buf(),
    }
}

/// The path a descriptor refers to, read back through `/proc/self/fd`.
fn fd_path(fd: &OwnedFd) -> std::io::Result<PathBuf> {
    use std::os::fd::AsRawFd;
    let real = std::fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd()))?;
    if !real.is_absolute() || real.as_os_str().as_bytes().ends_with(b" (deleted)") {
        return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
    }
    Ok(real)
}

/// Opens `rel` (relative, normalised: no `..`) beneath `dir` without following any symbolic
/// link: `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`, or the `openat` walk where the kernel
/// has no `openat2`. A link anywhere on the way gives `ELOOP`.
pub fn open_beneath(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    if rel.components().any(|c| c == Component::ParentDir) || rel.is_absolute() {
        return Err(Errno::XDEV);
    }
    if NO_OPENAT2.load(Ordering::Relaxed) {
        return walk_open(dir, rel, flags, mode);
    }
    let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
    loop {
        match rustix::fs::openat2(dir, rel, flags, mode, how) {
            Err(Errno::NOSYS) => {
                NO_OPENAT2.store(true, Ordering::Relaxed);
                return walk_open(dir, rel, flags, mode);
            }
            // openat2 asks for a retry when a rename raced the lookup.
            Err(Errno::AGAIN) if !flags.contains(OFlags::NONBLOCK) => continue,
            r => return r,
        }
    }
}

/// The `openat2`-less form of [`open_beneath`]: one `openat(O_PATH | O_NOFOLLOW)` per
/// directory component, then the last one with `O_NOFOLLOW`. A component that is a link is
/// `ELOOP`. Absolute paths start at `/`.
pub fn walk_open(
    dir: BorrowedFd<'_>,
    rel: &Path,
    flags: OFlags,
    mode: Mode,
) -> Result<OwnedFd, Errno> {
    let parts: Vec<&OsStr> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    let start = if rel.is_absolute() {
        Path::new("/")
    } else {
        Path::new(".")
    };
    let mut cur = rustix::fs::openat(
        dir,
        start,
        OFlags::CLOEXEC | OFlags::PATH | OFlags::DIRECTORY,
        Mode::empty(),
    )?;
    let Some((last, dirs)) = parts.split_last() else {
        return rustix::fs::openat(cur.as_fd(), ".", flags, mode);
    };
    for name in dirs {
        let next = rustix::fs::openat(
            cur.as_fd(),
            *name,
            OFlags::CLOEXEC | OFlags::PATH | OFlags::NOFOLLOW,
            Mode::empty(),
        )?;
        let st = rustix::fs::fstat(&next)?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => cur = next,
            FileType::Symlink => return Err(Errno::LOOP),
            _ => return Err(Errno::NOTDIR),
        }
    }
    match rustix::fs::openat(cur.as_fd(), *last, flags | OFlags::NOFOLLOW, mode) {
        // O_DIRECTORY | O_NOFOLLOW on a link answers ENOTDIR: say what it is.
        Err(Errno::NOTDIR) => {
            let st = rustix::fs::statat(cur.as_fd(), *last, rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
            if FileType::from_raw_mode(st.st_mode) == FileType::Symlink {
                Err(Errno::LOOP)
            } else {
                Err(Errno::NOTDIR)
            }
        }
        r => r,
    }
}

/// Forces the `openat` walk instead of `openat2` (tests of the fallback only).
#[doc(hidden)]
pub fn force_walk_for_tests(on: bool) {
    NO_OPENAT2.store(on, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// Both ways of opening beneath a directory give the same answers.
    fn both(dir: &Path, rel: &str, flags: OFlags) -> [Result<OwnedFd, Errno>; 2] {
        let d = std::fs::File::open(dir).unwrap();
        let how = ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS;
        [
            rustix::fs::openat2(d.as_fd(), rel, flags, Mode::empty(), how),
            walk_open(d.as_fd(), Path::new(rel), flags, Mode::empty()),
        ]
    }

    #[test]
    fn links_anywhere_on_the_path_are_refused_by_both_strategies() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        std::fs::write(root.join("real/sub/f"), "x").unwrap();
        symlink(root.join("real"), root.join("link")).unwrap();
        symlink(root.join("real/sub/f"), root.join("real/leaf")).unwrap();
        let rd = OFlags::RDONLY | OFlags::CLOEXEC;
        for r in both(root, "real/sub/f", rd) {
            assert!(r.is_ok());
        }
        for rel in ["link/sub/f", "real/leaf"] {
            for r in both(root, rel, rd) {
                assert_eq!(r.err(), Some(Errno::LOOP), "{rel}");
            }
        }
        for r in both(root, "link", rd | OFlags::DIRECTORY) {
            assert_eq!(r.err(), Some(Errno::LOOP));
        }
        for r in both(root, "real/missing", rd) {
            assert_eq!(r.err(), Some(Errno::NOENT));
        }
        let d = std::fs::File::open(root).unwrap();
        assert_eq!(
            open_beneath(
                d.as_fd(),
                Path::new("real/../real/sub/f"),
                rd,
                Mode::empty()
            )
            .err(),
            Some(Errno::XDEV)
        );
    }
}

/// Opens the directory `path` as an `O_PATH` descriptor without following any symbolic link on
/// the way (`openat2(RESOLVE_NO_SYMLINKS)`, the component walk where the kernel lacks it).
pub fn open_dir_nofollow(path: &Path) -> Result<OwnedFd, Errno> {
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    match rustix::fs::openat2(CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS) {
        Err(Errno::NOSYS) => walk_open(CWD, path, flags, Mode::empty()),
        r => r,
    }
}

/// A folder of Warren's own state (the logs, say), held open so that files in it are made and
/// found relative to it, never through a link an agent could have planted.
#[derive(Debug)]
pub struct StateDir {
    fd: OwnedFd,
    path: PathBuf,
}

impl StateDir {
    /// Creates `path` when missing (mode 0700) and opens it without following any link on the
    /// way (`openat2(RESOLVE_NO_SYMLINKS)`; the component walk without it).
    pub fn open(path: &Path) -> std::io::Result<StateDir> {
        if std::fs::symlink_metadata(path).is_err() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(path)?;
        }
        let fd = open_dir_nofollow(path)
            .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
        Ok(StateDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `name` (one plain component) in the folder for appending, creating it (mode 0600)
    /// when missing. Refused (`ELOOP`/`EMLINK`/`EINVAL`) when it is a link, is not a regular
    /// file, or has other names (a hard link made to a file elsewhere).
    pub fn append(&self, name: &OsStr) -> std::io::Result<File> {
        let plain = Path::new(name).components().count() == 1
            && matches!(
                Path::new(name).components().next(),
                Some(Component::Normal(_))
            );
        if !plain {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        let flags = OFlags::WRONLY
            | OFlags::APPEND
            | OFlags::CREATE
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&self.fd, name, flags, Mode::from_raw_mode(0o600))
            .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
        let st = rustix::fs::fstat(&fd)
            .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        if st.st_nlink != 1 {
            return Err(std::io::Error::from_raw_os_error(libc::EMLINK));
        }
        Ok(File::from(fd))
    }

    /// The names in the folder (listed through its descriptor).
    pub fn names(&self) -> std::io::Result<Vec<std::ffi::OsString>> {
        let dir = rustix::fs::openat(
            &self.fd,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
        let mut out = Vec::new();
        let d = rustix::fs::Dir::read_from(&dir)
            .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
        for e in d {
            let e = e.map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))?;
            let n = e.file_name().to_bytes();
            if n != b"." && n != b".." {
                out.push(OsStr::from_bytes(n).to_os_string());
            }
        }
        Ok(out)
    }

    /// Removes the file `name` from the folder (not following links: a link is removed itself).
    pub fn remove(&self, name: &OsStr) -> std::io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, rustix::fs::AtFlags::empty())
            .map_err(|e| std::io::Error::from_raw_os_error(e.raw_os_error()))
    }
}
