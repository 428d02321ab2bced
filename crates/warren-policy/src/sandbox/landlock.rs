//! The Landlock sandbox: a ruleset built in the parent from the [`FsGrant`] plan, enforced in
//! the child only, between `fork` and `exec` (`pre_exec`). The Warren process is never
//! restricted.

use super::plan::FsGrant;
use super::SandboxError;
use landlock::{
    Access, AccessFs, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, ABI,
};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The ABI whose rights Warren asks for; older kernels drop what they do not know.
const TARGET_ABI: ABI = ABI::V5;

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

/// Builds the ruleset for `plan` and arms `cmd` to enter it in the child. Returns the ruleset
/// descriptor, which must stay open until the command is spawned.
pub fn apply(plan: &[FsGrant], cmd: &mut Command) -> Result<OwnedFd, SandboxError> {
    let unavailable = |reason: String| SandboxError::Unavailable {
        sandbox: "landlock",
        reason,
    };
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET_ABI))
        .map_err(|e| unavailable(e.to_string()))?
        .create()
        .map_err(|e| unavailable(e.to_string()))?;
    for g in plan {
        let access = rights(g);
        if access.is_empty() {
            continue;
        }
        let fd = match PathFd::new(&g.path) {
            Ok(fd) => fd,
            // Vanished since the plan was made: nothing to grant.
            Err(_) => continue,
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, access))
            .map_err(|e| SandboxError::Rule {
                path: g.path.clone(),
                reason: e.to_string(),
            })?;
    }
    let fd: Option<OwnedFd> = ruleset.into();
    let fd = fd.ok_or_else(|| unavailable("landlock not supported by this kernel".into()))?;
    let raw = fd.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and only makes two raw system
    // calls (async-signal-safe, no allocation). `raw` stays valid because the caller keeps the
    // descriptor open until after spawn.
    unsafe {
        cmd.pre_exec(move || {
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
