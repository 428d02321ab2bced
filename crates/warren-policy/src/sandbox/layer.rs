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
/// the sandbox's `/proc` shows as `/proc/self/fd/<n>`), told the ruleset descriptor (none: no
/// second layer), whether the policy lets the agent open terminals (`terminals`: the sandbox's
/// own devpts is granted), and where to hand the proxy's listener (`proxy`: a Unix socket
/// descriptor and the sandbox-side port), then the real program and its arguments.
pub fn wrap(
    helper: RawFd,
    ruleset: Option<RawFd>,
    terminals: bool,
    proxy: Option<(RawFd, u16)>,
    program: &OsStr,
    args: &[OsString],
) -> Vec<OsString> {
    let mut out = vec![
        OsString::from(format!("/proc/self/fd/{helper}")),
        OsString::from(ruleset.map_or_else(|| NO_RULESET.to_string(), |fd| fd.to_string())),
    ];
    if terminals {
        out.push(OsString::from(TERMINALS));
    }
    if let Some((fd, port)) = proxy {
        out.push(OsString::from(PROXY));
        out.push(OsString::from(format!("{fd}:{port}")));
    }
    out.push(OsString::from("--"));
    out.push(program.to_os_string());
    out.extend(args.iter().cloned());
    out
}

/// The helper's flag: grant the sandbox's own `/dev/pts` (new pseudo-terminals).
const TERMINALS: &str = "--terminals";
/// The helper's flag: `--proxy <fd>:<port>`, listen on the sandbox's loopback and hand the
/// listener to Warren's proxy over the Unix socket `<fd>`.
const PROXY: &str = "--proxy";
/// The ruleset argument meaning "no Landlock layer" (a kernel without Landlock).
const NO_RULESET: &str = "-";

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

/// The helper's whole work (`warren-confine <ruleset-fd|-> [--terminals] [--proxy <fd>:<port>]
/// -- <program> [args...]`): when told, listen on `127.0.0.1:<port>` of the sandbox's own
/// network namespace and hand that listener to Warren over `<fd>` (Warren's proxy accepts on it;
/// nothing of the helper stays behind); grant the sandbox's own `/proc` for reading (and its
/// `/dev/pts` when told), enter the ruleset, mark every other descriptor close-on-exec and
/// execute the program. Returns only on failure, with the message to print; the program is
/// never run unconfined.
pub fn helper_main(args: &[OsString]) -> String {
    let usage = || {
        format!(
            "usage: {HELPER} <landlock-ruleset-fd|{NO_RULESET}> [{TERMINALS}] [{PROXY} <fd>:<port>] -- <program> [args...]"
        )
    };
    let Some((first, mut rest)) = args.split_first() else {
        return usage();
    };
    let ruleset = if first == NO_RULESET {
        None
    } else {
        match first.to_str().and_then(|s| s.parse::<RawFd>().ok()) {
            Some(fd) => Some(fd),
            None => {
                return format!(
                    "{HELPER}: not a descriptor number: {}",
                    first.to_string_lossy()
                )
            }
        }
    };
    let mut terminals = false;
    let mut proxy = None;
    let (program, rest) = loop {
        match rest {
            [flag, more @ ..] if flag == TERMINALS => {
                terminals = true;
                rest = more;
            }
            [flag, value, more @ ..] if flag == PROXY => {
                let parsed = value.to_str().and_then(|v| {
                    let (fd, port) = v.split_once(':')?;
                    Some((fd.parse::<RawFd>().ok()?, port.parse::<u16>().ok()?))
                });
                let Some(p) = parsed else {
                    return format!(
                        "{HELPER}: {PROXY} wants <fd>:<port>, not {}",
                        value.to_string_lossy()
                    );
                };
                proxy = Some(p);
                rest = more;
            }
            [sep, program, more @ ..] if sep == "--" => break (program, more),
            _ => return usage(),
        }
    };
    if let Some((channel, port)) = proxy {
        if let Err(e) = hand_over_listener(channel, port) {
            return format!(
                "{HELPER}: could not open the way to Warren's network proxy (127.0.0.1:{port}): {e}; nothing was run"
            );
        }
    }
    if let Err(e) = enter(ruleset, terminals) {
        return format!("{HELPER}: could not enter the Landlock ruleset: {e}; nothing was run");
    }
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(program).args(rest).exec();
    format!("{HELPER}: {}: {e}", program.to_string_lossy())
}

/// Listens on `127.0.0.1:port` (the sandbox's loopback) and sends the listening socket over the
/// Unix socket `channel` (`SCM_RIGHTS`), then closes both here: Warren's proxy accepts the
/// sandbox's connections on it from outside, and the sandbox keeps no process for it.
fn hand_over_listener(channel: RawFd, port: u16) -> std::io::Result<()> {
    use std::os::fd::{AsFd, FromRawFd};
    let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))?;
    // SAFETY: Warren passed `channel` open for this helper alone; it is owned (and closed) here.
    let channel = unsafe { OwnedFd::from_raw_fd(channel) };
    let fds = [listener.as_fd()];
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
    if !control.push(rustix::net::SendAncillaryMessage::ScmRights(&fds)) {
        return Err(std::io::Error::other("no room for the descriptor"));
    }
    let byte = [1u8];
    rustix::net::sendmsg(
        &channel,
        &[std::io::IoSlice::new(&byte)],
        &mut control,
        rustix::net::SendFlags::empty(),
    )?;
    Ok(())
}

fn enter(ruleset: Option<RawFd>, terminals: bool) -> std::io::Result<()> {
    let Some(ruleset) = ruleset else {
        close_on_exec_from_3();
        return Ok(());
    };
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
    close_on_exec_from_3();
    Ok(())
}

/// Nothing Warren passed (the ruleset, this helper, bwrap's inputs) reaches the program.
fn close_on_exec_from_3() {
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
