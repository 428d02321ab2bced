//! The Landlock sandbox: a ruleset built in the parent from the [`FsGrant`] plan, enforced in
//! the child only, between `fork` and `exec` (`pre_exec`). The Warren process is never
//! restricted. Where the kernel supports it, TCP bind/connect is denied unless the risk profile
//! allows network (ABI 4), and abstract Unix sockets and signals are scoped to the sandbox
//! (ABI 6). Rule paths are opened without following symbolic links.

use super::plan::FsGrant;
use super::SandboxError;
use landlock::{
    Access, AccessFs, AccessNet, BitFlags, NetPort, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreatedAttr, Scope, ABI,
};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags, CWD};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// The ABI whose rights Warren asks for; older kernels drop what they do not know.
const TARGET_ABI: ABI = ABI::V6;

/// The Landlock ABI version the kernel supports (0 when it does not).
pub fn kernel_abi() -> i32 {
    // SAFETY: landlock_create_ruleset with a NULL attribute, size 0 and the VERSION flag only
    // queries the supported ABI version; it takes no pointer that is dereferenced.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            1u32, // LANDLOCK_CREATE_RULESET_VERSION
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

fn rights(g: &FsGrant) -> BitFlags<AccessFs> {
    let mut r = BitFlags::<AccessFs>::empty();
    if g.read {
        r |= AccessFs::ReadFile | AccessFs::ReadDir;
    }
    if g.exec {
        r |= AccessFs::Execute;
    }
    if g.write {
        r |= AccessFs::WriteFile
            | AccessFs::RemoveFile
            | AccessFs::RemoveDir
            | AccessFs::MakeReg
            | AccessFs::MakeDir
            | AccessFs::MakeSym
            | AccessFs::MakeFifo
            | AccessFs::MakeSock
            | AccessFs::Truncate;
    }
    if g.read && g.write {
        // Renames and links across directories; only where both reading and writing are
        // allowed, so nothing can be moved out of a write-only root into a readable one.
        r |= AccessFs::Refer;
    }
    if !g.is_dir {
        r &= AccessFs::from_file(TARGET_ABI);
        if g.path.starts_with("/dev") {
            r |= AccessFs::IoctlDev;
        }
    }
    r
}

/// Opens a planned rule path as an `O_PATH` descriptor without following any symbolic link on
/// the way, and only when it still is the planned kind (directory or not). `None` when it
/// vanished or changed: such a path gets no rule, so a link planted after planning never
/// carries a grant to its target.
pub fn open_rule_path(path: &Path, is_dir: bool) -> Option<OwnedFd> {
    let flags = OFlags::PATH | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let fd = match rustix::fs::openat2(CWD, path, flags, Mode::empty(), ResolveFlags::NO_SYMLINKS) {
        Ok(fd) => fd,
        // Without openat2 (Linux < 5.6) only the last component is checked.
        Err(rustix::io::Errno::NOSYS) => {
            rustix::fs::openat(CWD, path, flags, Mode::empty()).ok()?
        }
        Err(_) => return None,
    };
    let kind = FileType::from_raw_mode(rustix::fs::fstat(&fd).ok()?.st_mode);
    match (kind, is_dir) {
        (FileType::Directory, true) => Some(fd),
        (FileType::Symlink, _) | (FileType::Directory, false) | (_, true) => None,
        (_, false) => Some(fd),
    }
}

/// What Landlock lets a child do with TCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcpRule {
    /// No rule: TCP as the host has it (`network = true`).
    Open,
    /// No port bound or connected to (`network = false`).
    None,
    /// Connect to this one port only (Warren's proxy on the host's loopback); nothing bound.
    ConnectOnly(u16),
}

/// Builds the ruleset for `plan` in Warren (rule paths opened without following links), with
/// `tcp` for TCP. The descriptor is close-on-exec; it is entered by [`apply`]'s hook or, inside
/// bubblewrap, by the `warren-confine` helper (see [`super::layer`]).
pub fn ruleset(plan: &[FsGrant], tcp: TcpRule) -> Result<OwnedFd, SandboxError> {
    let unavailable = |reason: String| SandboxError::Unavailable {
        sandbox: "landlock",
        reason,
    };
    let mut base = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET_ABI))
        .map_err(|e| unavailable(e.to_string()))?;
    if let TcpRule::ConnectOnly(_) = tcp {
        let abi = kernel_abi();
        if abi < 4 {
            // Older kernels would drop the TCP rights silently: refuse rather than run open.
            return Err(unavailable(format!(
                "landlock ABI {abi} < 4 cannot limit TCP to Warren's proxy (network by domain needs Linux 6.7 or bubblewrap)"
            )));
        }
    }
    if tcp != TcpRule::Open {
        // Handled: no TCP port may be bound or connected to but the one rule added below.
        base = base
            .handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)
            .map_err(|e| unavailable(e.to_string()))?;
    }
    let mut ruleset = base
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(|e| unavailable(e.to_string()))?
        .create()
        .map_err(|e| unavailable(e.to_string()))?;
    if let TcpRule::ConnectOnly(port) = tcp {
        ruleset = ruleset
            .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
            .map_err(|e| unavailable(e.to_string()))?;
    }
    for g in plan {
        let access = rights(g);
        if access.is_empty() {
            continue;
        }
        let Some(fd) = open_rule_path(&g.path, g.is_dir) else {
            // Vanished or replaced since the plan was made: nothing to grant.
            continue;
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| SandboxError::Rule {
                path: g.path.clone(),
                reason: e.to_string(),
            })?;
    }
    let fd: Option<OwnedFd> = ruleset.into();
    fd.ok_or_else(|| unavailable("landlock not supported by this kernel".into()))
}

/// Builds the ruleset for `plan` and arms `cmd` to enter it in the child, with `tcp` for TCP.
/// Returns the ruleset descriptor, which must stay open until the command is spawned.
pub fn apply(plan: &[FsGrant], tcp: TcpRule, cmd: &mut Command) -> Result<OwnedFd, SandboxError> {
    let fd = ruleset(plan, tcp)?;
    let raw = fd.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and only makes raw system
    // calls (async-signal-safe, no allocation). `raw` stays valid because the caller keeps the
    // descriptor open until after spawn.
    unsafe {
        cmd.pre_exec(move || {
            drop_capabilities();
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, raw, 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    Ok(fd)
}

/// Empties the bounding, ambient, effective, permitted and inheritable capability sets of the
/// calling process (a child of a Warren running as root would otherwise keep root's
/// capabilities across `exec`). Errors are ignored: an unprivileged process has none to drop.
///
/// # Safety
/// Raw system calls only (it runs between `fork` and `exec`).
unsafe fn drop_capabilities() {
    // SAFETY: prctl and capset with plain values and stack memory.
    unsafe {
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let header = Header {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        libc::syscall(libc::SYS_capset, &header as *const Header, data.as_ptr());
    }
}
