//! Landlock as a second layer inside bubblewrap. Landlock forbids a restricted process to
//! change mounts, so bwrap itself cannot run restricted: Warren builds the Landlock ruleset
//! (the same plan as the Landlock backend, rule paths opened in Warren without following
//! links) and passes its descriptor through bwrap to a small helper, `warren-confine`, that
//! bwrap starts as the sandbox's program. The helper enters the ruleset and then executes the
//! real program; it never runs the program when entering fails.
//!
//! Landlock rules name inodes, not paths: the bind mounts of the view show the host's inodes,
//! so the host-built rules hold inside the view unchanged. What bwrap makes itself (its `/dev`
//! and devpts, its `/proc`, the mode-000 masks) is new and has no rule, so it stays closed to
//! the second layer, except the sandbox's own `/proc`, which the helper grants for reading
//! (it shows only the sandbox's pid namespace) so that the layer is not stricter than the view.
//!
//! The helper is found next to the running program (or, for test and bench binaries under
//! `target/<profile>/deps`, one folder up). Without it, bubblewrap runs without the second
//! layer and every report on the sandbox says so.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::{Path, PathBuf};

/// The helper program's file name.
pub const HELPER: &str = "warren-confine";

/// Finds the helper beside the running program (`target/<profile>` for `deps` binaries).
pub fn find_helper() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let mut dirs = vec![dir.to_path_buf()];
    if dir.file_name() == Some(OsStr::new("deps")) {
        if let Some(up) = dir.parent() {
            dirs.push(up.to_path_buf());
        }
    }
    dirs.into_iter()
        .map(|d| d.join(HELPER))
        .find(|p| p.is_file())
}

/// Opens the helper for execution through `/proc/self/fd` inside the sandbox (close-on-exec in
/// Warren; the caller makes it inheritable for the one child).
pub fn open_helper(path: &Path) -> std::io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        path,
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?)
}

/// The program and arguments bwrap starts: the helper (through the descriptor `helper`, which
/// the sandbox's `/proc` shows as `/proc/self/fd/<n>`), told the ruleset descriptor and whether
/// the policy lets the agent open terminals (`terminals`: the sandbox's own devpts is granted),
/// then the real program and its arguments.
pub fn wrap(
    helper: RawFd,
    ruleset: RawFd,
    terminals: bool,
    program: &OsStr,
    args: &[OsString],
) -> Vec<OsString> {
    let mut out = vec![
        OsString::from(format!("/proc/self/fd/{helper}")),
        OsString::from(ruleset.to_string()),
    ];
    if terminals {
        out.push(OsString::from(TERMINALS));
    }
    out.push(OsString::from("--"));
    out.push(program.to_os_string());
    out.extend(args.iter().cloned());
    out
}

/// The helper's flag: grant the sandbox's own `/dev/pts` (new pseudo-terminals).
const TERMINALS: &str = "--terminals";

const LANDLOCK_ACCESS_FS_WRITE_FILE: u64 = 1 << 1;
const LANDLOCK_ACCESS_FS_READ_FILE: u64 = 1 << 2;
const LANDLOCK_ACCESS_FS_READ_DIR: u64 = 1 << 3;
const LANDLOCK_ACCESS_FS_IOCTL_DEV: u64 = 1 << 15;
const LANDLOCK_RULE_PATH_BENEATH: u32 = 1;

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// The helper's whole work (`warren-confine <ruleset-fd> [--terminals] -- <program>
/// [args...]`): grant the sandbox's own `/proc` for reading (and its `/dev/pts` when told),
/// enter the ruleset, mark every other descriptor close-on-exec and execute the program.
/// Returns only on failure, with the message to print; the program is never run unconfined.
pub fn helper_main(args: &[OsString]) -> String {
    let (fd, terminals, program, rest) = match args {
        [fd, sep, program, rest @ ..] if sep == "--" => (fd, false, program, rest),
        [fd, flag, sep, program, rest @ ..] if flag == TERMINALS && sep == "--" => {
            (fd, true, program, rest)
        }
        _ => {
            return format!(
                "usage: {HELPER} <landlock-ruleset-fd> [{TERMINALS}] -- <program> [args...]"
            )
        }
    };
    let Some(fd) = fd.to_str().and_then(|s| s.parse::<RawFd>().ok()) else {
        return format!(
            "{HELPER}: not a descriptor number: {}",
            fd.to_string_lossy()
        );
    };
    if let Err(e) = enter(fd, terminals) {
        return format!("{HELPER}: could not enter the Landlock ruleset: {e}; nothing was run");
    }
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(program).args(rest).exec();
    format!("{HELPER}: {}: {e}", program.to_string_lossy())
}

fn enter(ruleset: RawFd, terminals: bool) -> std::io::Result<()> {
    // The sandbox's own /proc (its pid namespace only), for reading, as the view shows it.
    grant(
        ruleset,
        "/proc",
        LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR,
    )?;
    if terminals {
        // The sandbox's own devpts instance (its /dev/ptmx links there); device ioctls are a
        // Landlock right from ABI 5 on.
        let mut access = LANDLOCK_ACCESS_FS_READ_FILE
            | LANDLOCK_ACCESS_FS_WRITE_FILE
            | LANDLOCK_ACCESS_FS_READ_DIR;
        if super::landlock::kernel_abi() >= 5 {
            access |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
        }
        grant(ruleset, "/dev/pts", access)?;
    }
    // SAFETY: plain prctl and landlock_restrict_self calls with integer arguments.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // Nothing Warren passed (the ruleset, this helper, bwrap's inputs) reaches the program.
    // SAFETY: close_range with the CLOEXEC flag only changes descriptor flags.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if r != 0 {
        for fd in 3..1024 {
            // SAFETY: fcntl on any number; EBADF for those not open.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
    }
    Ok(())
}

/// Adds a rule for `path` as the sandbox shows it (a missing path adds nothing).
fn grant(ruleset: RawFd, path: &str, access: u64) -> std::io::Result<()> {
    let Ok(dir) = rustix::fs::open(
        path,
        rustix::fs::OFlags::PATH
            | rustix::fs::OFlags::DIRECTORY
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) else {
        return Ok(());
    };
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: dir.as_raw_fd(),
    };
    // SAFETY: landlock_add_rule reads a packed attribute from valid stack memory.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            &attr as *const PathBeneathAttr,
            0u32,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
