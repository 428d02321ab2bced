//! The files of a Markdown memory, opened inside the agent's workspace without following links.
//!
//! The workspace belongs to the agent, which can plant symbolic links there (from its shell, in
//! the same turn). Warren's own process opens `MEMORY.md`, `memory/` and the rewrite's temp file
//! relative to a descriptor of the workspace with the same race-free opener as the file tools,
//! so a planted link is an error, never a read of a sibling's memory or a write into someone
//! else's file. Temp files get an unpredictable name and are created with `O_EXCL`.

use crate::error::MemoryError;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use uuid::Uuid;
use warren_policy::open::open_beneath;
use warren_policy::rustix::fs::{FileType, Mode, OFlags, ResolveFlags, CWD};
use warren_policy::rustix::io::Errno;

fn err(path: &Path, reason: impl std::fmt::Display) -> MemoryError {
    MemoryError::File {
        path: path.to_path_buf(),
        reason: reason.to_string(),
    }
}

fn errno(path: &Path, e: Errno) -> MemoryError {
    match e {
        Errno::LOOP => err(
            path,
            "is a symbolic link (or has one on its path); Markdown memory files are never followed through links",
        ),
        Errno::NXIO => err(path, "is not a regular file"),
        e => err(path, std::io::Error::from_raw_os_error(e.raw_os_error())),
    }
}

/// An agent's workspace opened for its Markdown memory.
pub(crate) struct Workspace {
    fd: OwnedFd,
    path: PathBuf,
}

impl Workspace {
    /// Opens the workspace directory. Its own path is the operator's (it may hold system links,
    /// resolved once); nothing beneath it is ever followed.
    pub(crate) fn open(path: &Path) -> Result<Self, MemoryError> {
        // Not O_PATH: the descriptor is also what `lock` takes a lock on.
        let flags = OFlags::CLOEXEC | OFlags::RDONLY | OFlags::DIRECTORY;
        let how = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        let direct = warren_policy::rustix::fs::openat2(CWD, path, flags, Mode::empty(), how);
        let fd = match direct {
            Ok(fd) => fd,
            Err(Errno::NOENT) => {
                std::fs::create_dir_all(path).map_err(|e| err(path, e))?;
                warren_policy::rustix::fs::openat2(CWD, path, flags, Mode::empty(), how)
                    .map_err(|e| errno(path, e))?
            }
            Err(Errno::LOOP) | Err(Errno::NOSYS) => {
                let real = std::fs::canonicalize(path).map_err(|e| err(path, e))?;
                warren_policy::open::walk_open(CWD, &real, flags, Mode::empty())
                    .map_err(|e| errno(path, e))?
            }
            Err(e) => return Err(errno(path, e)),
        };
        Ok(Workspace {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Takes an exclusive lock on the workspace directory (released when this is dropped), so
    /// two processes rewriting the same memory file one after the other never lose an update.
    pub(crate) fn lock(&self) -> Result<(), MemoryError> {
        warren_policy::rustix::fs::flock(
            &self.fd,
            warren_policy::rustix::fs::FlockOperation::LockExclusive,
        )
        .map_err(|e| errno(&self.path, e))
    }

    fn full(&self, rel: &Path) -> PathBuf {
        self.path.join(rel)
    }

    /// The text of `rel`, `None` when it does not exist. A link or a non-regular file is an
    /// error.
    pub(crate) fn read(&self, rel: &Path) -> Result<Option<String>, MemoryError> {
        let full = self.full(rel);
        let flags = OFlags::CLOEXEC | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK;
        let fd = match open_beneath(self.fd.as_fd(), rel, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(None),
            Err(e) => return Err(errno(&full, e)),
        };
        let st = warren_policy::rustix::fs::fstat(&fd).map_err(|e| errno(&full, e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(err(&full, "is not a regular file"));
        }
        let mut text = String::new();
        std::fs::File::from(fd)
            .read_to_string(&mut text)
            .map_err(|e| err(&full, e))?;
        Ok(Some(text))
    }

    /// The `*.md` files directly in the directory `rel` (relative paths, sorted). A missing
    /// directory has none; a link in their place is an error.
    pub(crate) fn list_md(&self, rel: &Path) -> Result<Vec<PathBuf>, MemoryError> {
        let full = self.full(rel);
        let flags = OFlags::CLOEXEC | OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW;
        let fd = match open_beneath(self.fd.as_fd(), rel, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(Vec::new()),
            Err(e) => return Err(errno(&full, e)),
        };
        let dir = warren_policy::rustix::fs::Dir::new(fd).map_err(|e| errno(&full, e))?;
        let mut out = Vec::new();
        for entry in dir {
            let entry = entry.map_err(|e| errno(&full, e))?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if Path::new(name).extension().is_some_and(|x| x == "md") {
                out.push(rel.join(name));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Replaces `rel` atomically: a new temp file with an unpredictable name beside it
    /// (`O_EXCL | O_NOFOLLOW`), fsync, rename over the old one. Missing parent directories
    /// are created inside the workspace.
    pub(crate) fn write_atomic(&self, rel: &Path, bytes: &[u8]) -> Result<(), MemoryError> {
        let full = self.full(rel);
        let name = rel
            .file_name()
            .ok_or_else(|| err(&full, "has no file name"))?;
        let parent_rel = rel.parent().unwrap_or(Path::new(""));
        let dir_flags = OFlags::CLOEXEC | OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW;
        let mut dir = open_beneath(self.fd.as_fd(), Path::new("."), dir_flags, Mode::empty())
            .map_err(|e| errno(&self.path, e))?;
        let mut at = self.path.clone();
        for part in parent_rel.iter() {
            at.push(part);
            dir = match open_beneath(dir.as_fd(), Path::new(part), dir_flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::NOENT) => {
                    match warren_policy::rustix::fs::mkdirat(
                        dir.as_fd(),
                        part,
                        Mode::from_raw_mode(0o777),
                    ) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(errno(&at, e)),
                    }
                    open_beneath(dir.as_fd(), Path::new(part), dir_flags, Mode::empty())
                        .map_err(|e| errno(&at, e))?
                }
                Err(e) => return Err(errno(&at, e)),
            };
        }
        let tmp_name = format!(
            ".{}.tmp-{}",
            name.to_string_lossy(),
            Uuid::new_v4().simple()
        );
        let tmp = Path::new(&tmp_name);
        let flags =
            OFlags::CLOEXEC | OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW;
        let fd = open_beneath(dir.as_fd(), tmp, flags, Mode::from_raw_mode(0o666))
            .map_err(|e| errno(&at.join(tmp), e))?;
        let mut f = std::fs::File::from(fd);
        let written = f.write_all(bytes).and_then(|()| f.sync_all());
        drop(f);
        if let Err(e) = written {
            let _ = warren_policy::rustix::fs::unlinkat(
                dir.as_fd(),
                tmp,
                warren_policy::rustix::fs::AtFlags::empty(),
            );
            return Err(err(&at.join(tmp), e));
        }
        // renameat replaces whatever entry holds the name (a planted link included) without
        // following it.
        warren_policy::rustix::fs::renameat(dir.as_fd(), tmp, dir.as_fd(), name)
            .map_err(|e| errno(&full, e))
    }
}
