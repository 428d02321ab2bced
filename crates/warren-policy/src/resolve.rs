//! Path resolution for authorization (rules §2.1): `~` expansion, joining relative paths to the
//! workspace, NUL rejection, lexical `.`/`..` normalisation, then symlink resolution on the
//! longest existing prefix (dangling symlinks are followed to their target; 40 hops at most).

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// `path.starts_with(root)` for normalised absolute paths, compared as bytes: equal, or `root`
/// followed by a `/` in `path`.
pub fn under(path: &Path, root: &Path) -> bool {
    let p = path.as_os_str().as_bytes();
    let r = root.as_os_str().as_bytes();
    if r == b"/" {
        return true;
    }
    p.len() >= r.len() && &p[..r.len()] == r && (p.len() == r.len() || p[r.len()] == b'/')
}

/// The most symbolic links followed while resolving one path.
pub const MAX_SYMLINK_HOPS: u32 = 40;

/// Why a path could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// The path contains a NUL byte.
    #[error("path contains a NUL byte")]
    Nul,
    /// The path is empty.
    #[error("path is empty")]
    Empty,
    /// `~user` expansion is not supported.
    #[error("`~user` expansion is not supported (only `~` and `~/...`)")]
    TildeUser,
    /// The path starts with `~` but no home directory is known.
    #[error("path starts with `~` but no home directory is known")]
    NoHome,
    /// Too many symbolic links.
    #[error("more than {MAX_SYMLINK_HOPS} symbolic links while resolving {0}")]
    TooManySymlinks(PathBuf),
}

/// A path after resolution: both the lexical form and the symlink-resolved form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// After `~` expansion, joining to the base and lexical normalisation.
    pub lexical: PathBuf,
    /// `lexical` with every symlink on its longest existing prefix resolved.
    pub resolved: PathBuf,
}

/// Expands `~`, joins a relative path to `base`, rejects NUL, and normalises `.`/`..` lexically.
/// `base` must be absolute. The result is absolute; `..` never climbs above `/`.
pub fn lexical_absolute(
    input: &Path,
    base: &Path,
    home: Option<&Path>,
) -> Result<PathBuf, ResolveError> {
    let bytes = input.as_os_str().as_bytes();
    if bytes.contains(&0) {
        return Err(ResolveError::Nul);
    }
    if bytes.is_empty() {
        return Err(ResolveError::Empty);
    }
    if bytes[0] == b'/' && is_normal(bytes) {
        return Ok(input.to_path_buf());
    }
    let joined: PathBuf = if bytes[0] == b'~' {
        if bytes.len() > 1 && bytes[1] != b'/' {
            return Err(ResolveError::TildeUser);
        }
        let home = home.ok_or(ResolveError::NoHome)?;
        let rest = std::ffi::OsStr::from_bytes(&bytes[1..]);
        let rest = Path::new(rest).strip_prefix("/").unwrap_or(Path::new(rest));
        home.join(rest)
    } else if input.is_absolute() {
        input.to_path_buf()
    } else {
        base.join(input)
    };
    Ok(normalize(&joined))
}

/// An absolute path already in normal form: no empty, `.` or `..` component, no trailing `/`.
fn is_normal(bytes: &[u8]) -> bool {
    if bytes == b"/" {
        return true;
    }
    if bytes.ends_with(b"/") {
        return false;
    }
    bytes[1..]
        .split(|b| *b == b'/')
        .all(|c| !c.is_empty() && c != b"." && c != b"..")
}

/// Lexical normalisation of an absolute path: drops `.`, applies `..` (never above `/`).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::ParentDir => {
                out.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Resolves symlinks along an absolute, normalised path. Each existing component is checked with
/// `lstat`; a symlink (dangling or not) is replaced by its target; at the first component that
/// does not exist (or cannot be inspected) the rest is appended lexically.
///
/// When the whole path exists, the kernel resolves it in one walk (an `O_PATH` descriptor read
/// back through `/proc/self/fd`), which gives the same answer: the kernel's own limit is the
/// same 40 links, and `..` was already applied lexically.
pub fn resolve_symlinks(path: &Path) -> Result<PathBuf, ResolveError> {
    if exists_without_symlinks(path) {
        return Ok(path.to_path_buf());
    }
    if let Some(real) = kernel_resolve(path) {
        return Ok(real);
    }
    walk_symlinks(path)
}

/// Whether the whole path exists and no component of it is a symlink: then it is already its own
/// resolution. One `openat2(RESOLVE_NO_SYMLINKS)` call answers it.
fn exists_without_symlinks(path: &Path) -> bool {
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `open_how` is a plain C struct for which all-zero bytes is a valid value.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
    how.resolve = libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: `c_path` is a valid NUL-terminated string and `how` a valid `open_how` of the
    // size passed; the returned descriptor is closed right away.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c_path.as_ptr(),
            &how as *const libc::open_how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd < 0 {
        return false;
    }
    // SAFETY: `fd` is a descriptor this function just opened and owns.
    unsafe {
        libc::close(fd as libc::c_int);
    }
    true
}

/// The kernel's resolution of an existing path, or `None` when it cannot be had.
fn kernel_resolve(path: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::io::AsRawFd;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_PATH)
        .open(path)
        .ok()?;
    let mut link = [0u8; 32];
    let mut cursor = std::io::Cursor::new(&mut link[..]);
    std::io::Write::write_fmt(
        &mut cursor,
        format_args!("/proc/self/fd/{}", file.as_raw_fd()),
    )
    .ok()?;
    let len = usize::try_from(cursor.position()).ok()?;
    let proc_link = Path::new(std::ffi::OsStr::from_bytes(&link[..len]));
    let real = std::fs::read_link(proc_link).ok()?;
    let bytes = real.as_os_str().as_bytes();
    if !real.is_absolute() || bytes.ends_with(b" (deleted)") {
        return None;
    }
    Some(real)
}

/// The component-by-component resolution, used when the path does not fully exist.
fn walk_symlinks(path: &Path) -> Result<PathBuf, ResolveError> {
    // Pending components, last one first so that `pop` yields them in order.
    let mut pending: Vec<OsString> = path
        .components()
        .rev()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect();
    let mut out = PathBuf::from("/");
    let mut hops = 0u32;
    while let Some(c) = pending.pop() {
        if c == ".." {
            out.pop();
            continue;
        }
        if c == "." {
            continue;
        }
        out.push(&c);
        let meta = match std::fs::symlink_metadata(&out) {
            Ok(m) => m,
            Err(_) => {
                // Longest existing prefix reached: the rest is lexical.
                while let Some(rest) = pending.pop() {
                    if rest == ".." {
                        out.pop();
                    } else if rest != "." {
                        out.push(rest);
                    }
                }
                break;
            }
        };
        if !meta.file_type().is_symlink() {
            continue;
        }
        hops += 1;
        if hops > MAX_SYMLINK_HOPS {
            return Err(ResolveError::TooManySymlinks(path.to_path_buf()));
        }
        let target = match std::fs::read_link(&out) {
            Ok(t) => t,
            Err(_) => continue,
        };
        out.pop();
        if target.is_absolute() {
            out = PathBuf::from("/");
        }
        for tc in target.components().rev() {
            match tc {
                Component::Normal(n) => pending.push(n.to_os_string()),
                Component::ParentDir => pending.push(OsString::from("..")),
                _ => {}
            }
        }
    }
    Ok(out)
}

/// The whole resolution of rules §2.1: [`lexical_absolute`] then [`resolve_symlinks`].
pub fn resolve(
    input: &Path,
    base: &Path,
    home: Option<&Path>,
) -> Result<ResolvedPath, ResolveError> {
    let lexical = lexical_absolute(input, base, home)?;
    let resolved = resolve_symlinks(&lexical)?;
    Ok(ResolvedPath { lexical, resolved })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn lexical_table() {
        let base = Path::new("/ws");
        let home = Some(Path::new("/home/u"));
        let cases: &[(&str, Result<&str, ResolveError>)] = &[
            ("a/b", Ok("/ws/a/b")),
            ("./a/./b/", Ok("/ws/a/b")),
            ("../x", Ok("/x")),
            ("../../../../etc/passwd", Ok("/etc/passwd")),
            ("/abs/../y", Ok("/y")),
            ("/a//b/", Ok("/a/b")),
            ("/a/./b", Ok("/a/b")),
            ("/a/b", Ok("/a/b")),
            ("/", Ok("/")),
            ("~", Ok("/home/u")),
            ("~/notes", Ok("/home/u/notes")),
            ("~/../v", Ok("/home/v")),
            ("~root/x", Err(ResolveError::TildeUser)),
            ("", Err(ResolveError::Empty)),
            ("a\0b", Err(ResolveError::Nul)),
        ];
        for (input, want) in cases {
            let got = lexical_absolute(Path::new(input), base, home);
            let want = want.clone().map(PathBuf::from);
            assert_eq!(got, want, "input {input:?}");
        }
        assert_eq!(
            lexical_absolute(Path::new("~/x"), base, None),
            Err(ResolveError::NoHome)
        );
    }

    #[test]
    fn symlinks_resolved_on_longest_existing_prefix() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        symlink(root.join("real"), root.join("link")).unwrap();
        symlink("real/sub", root.join("rel")).unwrap();
        symlink(root.join("nowhere/target"), root.join("dangling")).unwrap();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        symlink("../../real", root.join("real/sub/up")).unwrap();

        let r = |p: &str| resolve_symlinks(&root.join(p));
        assert_eq!(r("link/sub/f").unwrap(), root.join("real/sub/f"));
        assert_eq!(
            r("rel/new/deeper").unwrap(),
            root.join("real/sub/new/deeper")
        );
        assert_eq!(r("dangling").unwrap(), root.join("nowhere/target"));
        assert_eq!(
            r("dangling/more").unwrap(),
            root.join("nowhere/target/more")
        );
        assert_eq!(r("real/sub/up/sub").unwrap(), root.join("real/sub"));
        assert!(matches!(r("loop1"), Err(ResolveError::TooManySymlinks(_))));
        // The kernel path and the walk agree on every existing path.
        assert!(exists_without_symlinks(&root.join("real/sub")));
        assert!(!exists_without_symlinks(&root.join("link/sub")));
        assert!(!exists_without_symlinks(&root.join("real/missing")));
        for p in ["link/sub", "rel", "real/sub/up", "real/sub/up/sub"] {
            assert_eq!(
                Some(walk_symlinks(&root.join(p)).unwrap()),
                kernel_resolve(&root.join(p)),
                "{p}"
            );
        }
        assert_eq!(r("missing/x").unwrap(), root.join("missing/x"));
    }

    #[test]
    fn hop_limit_is_exactly_forty() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::write(root.join("end"), "x").unwrap();
        // chain of 40 links: l40 -> l39 -> ... -> l1 -> end
        symlink("end", root.join("l1")).unwrap();
        for i in 2..=41 {
            symlink(format!("l{}", i - 1), root.join(format!("l{i}"))).unwrap();
        }
        assert_eq!(
            resolve_symlinks(&root.join("l40")).unwrap(),
            root.join("end")
        );
        assert!(matches!(
            resolve_symlinks(&root.join("l41")),
            Err(ResolveError::TooManySymlinks(_))
        ));
    }
}
