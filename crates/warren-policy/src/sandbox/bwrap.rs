//! The bubblewrap sandbox: the same [`FsGrant`] plan expressed as bind mounts. Read-write
//! subtrees are bound read-write at the same path, read-only ones read-only; a mount cannot mean
//! "write but not read", so write-only and rights-less subtrees are hidden: a directory behind
//! an empty, read-only directory of mode 000, a file behind an empty read-only file of mode 000
//! (opening either fails with `EACCES`; a device node would swallow writes). Where nothing is
//! mounted, nothing can be written either: the sandbox's own root and `/dev` are read-only, so a
//! write there fails instead of vanishing into a temporary file system. The network is unshared
//! unless the risk profile allows it. Every capability is dropped (bwrap started by root would
//! keep them) and the sandbox's own `/proc` is read-only. A fresh pid namespace with
//! `--die-with-parent` ends every process of the sandbox when its main process (or Warren)
//! exits. The system-call filter is installed by bwrap after it has built the sandbox.

use super::landlock::open_rule_path;
use super::plan::{FsGrant, SYSTEM_DIRS};
use super::SandboxError;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;

/// The arguments for `bwrap` and the descriptors they name, which the child must inherit
/// (each is read once by bwrap).
#[derive(Debug, Default)]
pub struct BwrapArgs {
    /// The arguments before `--` and the program.
    pub args: Vec<OsString>,
    /// Descriptors named by the arguments (close-on-exec in Warren).
    pub fds: Vec<OwnedFd>,
}

/// The `bwrap` arguments (before `--` and the program) for a layered `plan` (shallowest
/// first, see [`super::plan::mount_plan`]), running in `cwd`; the network is shared only when
/// `network`. `seccomp` are the filter programs (memory files) bwrap installs.
pub fn args(
    plan: &[FsGrant],
    workspace_only: bool,
    network: bool,
    cwd: &Path,
    seccomp: Vec<OwnedFd>,
) -> Result<BwrapArgs, SandboxError> {
    let mut fds: Vec<OwnedFd> = Vec::new();
    let mut a: Vec<OsString> = Vec::new();
    let mut push = |xs: &[&std::ffi::OsStr]| a.extend(xs.iter().map(|x| x.to_os_string()));
    push(&[
        "--die-with-parent".as_ref(),
        "--new-session".as_ref(),
        "--unshare-pid".as_ref(),
        "--unshare-ipc".as_ref(),
        "--unshare-uts".as_ref(),
        // bwrap started by root keeps every capability (mount, umount, ...) unless told.
        "--cap-drop".as_ref(),
        "ALL".as_ref(),
    ]);
    if !network {
        push(&["--unshare-net".as_ref()]);
    }
    if !workspace_only {
        push(&["--bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    }
    push(&[
        "--dev".as_ref(),
        "/dev".as_ref(),
        "--proc".as_ref(),
        "/proc".as_ref(),
        // Kernel tunables are never written (root keeps write permission on /proc/sys files).
        "--remount-ro".as_ref(),
        "/proc".as_ref(),
    ]);
    if workspace_only {
        // Merged-/usr systems: `/bin` -> `usr/bin` and friends must exist as the same links.
        for d in SYSTEM_DIRS {
            let Ok(meta) = std::fs::symlink_metadata(d) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                if let Ok(target) = std::fs::read_link(d) {
                    push(&["--symlink".as_ref(), target.as_os_str(), d.as_ref()]);
                }
            }
        }
    }
    let mut mounted: Vec<&Path> = Vec::new();
    let mut hidden: Vec<&Path> = Vec::new();
    for g in plan {
        let p = g.path.as_os_str();
        if g.path.starts_with("/dev") || g.path.starts_with("/proc") {
            continue;
        }
        let visible = !workspace_only || mounted.iter().any(|m| g.path.starts_with(m));
        if g.is_hidden() || (!g.read && !g.exec) {
            if !visible || hidden.iter().any(|h| g.path.starts_with(h)) {
                // Nothing mounted around it, or already hidden: nothing to do.
                continue;
            }
            if g.is_dir {
                hidden.push(&g.path);
            }
        } else {
            mounted.push(&g.path);
        }
        if g.read && g.write {
            push(&["--bind".as_ref(), p, p]);
        } else if g.read || g.exec {
            push(&["--ro-bind".as_ref(), p, p]);
        } else if g.is_dir {
            // Write-only or nothing: hide behind an empty directory nobody may open.
            // Made read-only at the end, after any mount point nested in it was created.
            push(&["--perms".as_ref(), "0000".as_ref(), "--tmpfs".as_ref(), p]);
        } else {
            // An empty file nobody may open (bwrap reads its content from the descriptor).
            let fd = empty_source()?;
            let n = OsString::from(fd.as_raw_fd().to_string());
            push(&[
                "--perms".as_ref(),
                "0000".as_ref(),
                "--ro-bind-data".as_ref(),
            ]);
            push(&[n.as_os_str(), p]);
            fds.push(fd);
        }
    }
    for h in &hidden {
        push(&["--remount-ro".as_ref(), h.as_os_str()]);
    }
    if workspace_only {
        // The sandbox's own root: every mount point exists now, nothing else may be made.
        push(&["--remount-ro".as_ref(), "/".as_ref()]);
    }
    // Device nodes stay writable (their own mounts); nothing new is made under /dev.
    push(&["--remount-ro".as_ref(), "/dev".as_ref()]);
    for fd in &seccomp {
        let n = OsString::from(fd.as_raw_fd().to_string());
        push(&["--add-seccomp-fd".as_ref(), n.as_os_str()]);
    }
    fds.extend(seccomp);
    push(&["--chdir".as_ref(), cwd.as_os_str()]);
    Ok(BwrapArgs { args: a, fds })
}

/// A descriptor that reads as empty: the content of a hidden file.
fn empty_source() -> Result<OwnedFd, SandboxError> {
    rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| SandboxError::Rule {
        path: "/dev/null".into(),
        reason: e.to_string(),
    })
}

/// Re-checks, after the arguments were built, that no bound path of `plan` turned into a
/// symbolic link (bwrap follows a link in a bind source): a changed plan refuses the call.
pub fn verify(plan: &[FsGrant]) -> Result<(), SandboxError> {
    for g in plan {
        let Ok(meta) = std::fs::symlink_metadata(&g.path) else {
            // Vanished: bwrap fails on the missing source itself.
            continue;
        };
        if meta.file_type().is_symlink() || open_rule_path(&g.path, g.is_dir).is_none() {
            return Err(SandboxError::Changed {
                path: g.path.clone(),
            });
        }
    }
    Ok(())
}
