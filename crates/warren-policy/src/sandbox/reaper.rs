//! The per-call reaper of every sandbox: nothing a call starts outlives it. (Under bubblewrap
//! the grandchild is `bwrap`; the reaper kills its pid 1, which ends the pid namespace.)
//!
//! A `pre_exec` hook registered before any other forks once more. The grandchild returns to
//! the normal path (the Landlock hook, then `exec`). The intermediate process never returns:
//! it becomes a child subreaper (so every orphaned descendant, `setsid` daemons and double
//! forks included, is reparented to it), closes every descriptor but a control pipe (which also
//! releases the spawn's error pipe and the output pipes), waits for the grandchild, then kills
//! every remaining descendant (found by scanning `/proc` for processes whose parent it is;
//! killing one reparents its children, so it repeats until `waitpid` reports no child left)
//! and exits with the grandchild's status (128 + signal for a signal). Closing the control
//! pipe's write end, which Warren holds, asks it to kill the grandchild and clean up now; when
//! Warren dies the kernel closes it too. The intermediate is outside the Landlock domain, which
//! scopes signals, so a confined agent cannot kill it to escape. Under `none` a process of the
//! same user can; then the process-group sweep in [`super::ConfinedChild`] is the fallback.
//!
//! The hook runs between `fork` and `exec` of a possibly multi-threaded parent: only raw,
//! async-signal-safe system calls, no allocation, stack buffers only.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The reaper's process name (`comm`): every process of a tool call descends from one while
/// the call runs (orphans are reparented to it), and no process but the reaper itself can set
/// it (a `comm` is written by its own threads only).
pub const REAPER_NAME: &str = "warren-reaper";
const REAPER_NAME_C: &[u8; 14] = b"warren-reaper\0";

/// Whether process `pid` runs inside an agent's tool call of any Warren process: it or one of
/// its ancestors is a call's reaper. Fails closed: a process (or ancestor) that cannot be read
/// counts as inside. Used to refuse an approval answered from an agent's own command.
pub fn inside_a_tool_call(pid: u32) -> bool {
    let mut p = pid;
    for _ in 0..4096 {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            return true;
        };
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            return true;
        };
        if stat[open + 1..close] == *REAPER_NAME {
            return true;
        }
        // After the name: state, then the parent's pid.
        let Some(parent) = stat[close + 1..]
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse::<u32>().ok())
        else {
            return true;
        };
        if parent <= 1 {
            return false;
        }
        p = parent;
    }
    true
}

/// Arms `cmd` with the reaper. Returns the control pipe: the read end must stay open until the
/// command is spawned (then dropped), the write end is held for the child's whole life.
pub(crate) fn arm(cmd: &mut Command) -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two new descriptors into the array it is given.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let control = read.as_raw_fd();
    // SAFETY: the hook only makes async-signal-safe system calls (see `split`).
    unsafe {
        cmd.pre_exec(move || split(control));
    }
    Ok((read, write))
}

/// Forks the grandchild (returns `Ok` in it) and turns the caller into the reaper (never
/// returns there).
///
/// # Safety
/// Only to be called in a freshly forked child before `exec`.
unsafe fn split(control: RawFd) -> io::Result<()> {
    // SAFETY: see the function contract: a freshly forked child, raw system calls only.
    unsafe {
        // Statuses must be kept for `waitpid` even if Warren ignores SIGCHLD (also reset for
        // the program, which would otherwise inherit the ignored disposition across exec).
        libc::signal(libc::SIGCHLD, libc::SIG_DFL);
        if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 {
            return Err(io::Error::last_os_error());
        }
        let reaper = libc::getpid();
        let pid = libc::fork();
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 {
            // The grandchild: dies with the reaper, even if the reaper died before this line.
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != reaper {
                libc::_exit(128 + libc::SIGKILL);
            }
            return Ok(());
        }
        reap(control, pid)
    }
}

/// The intermediate process: wait for `child` or the control pipe, then kill and reap every
/// descendant and exit with the child's status.
unsafe fn reap(control: RawFd, child: libc::pid_t) -> ! {
    // SAFETY: see the function contract: a freshly forked child, raw system calls only.
    unsafe {
        libc::prctl(libc::PR_SET_NAME, REAPER_NAME_C.as_ptr(), 0, 0, 0);
        close_all_but(control);
        let mut code: libc::c_int = 128 + libc::SIGKILL;
        // A pidfd becomes readable when the grandchild exits, so one poll waits for either
        // event; it still wakes every second to reap orphans that exited meanwhile (they would
        // pile up as zombies). Without pidfds (Linux < 5.3) the wait wakes every 20 ms to look.
        let pidfd = libc::syscall(libc::SYS_pidfd_open, child, 0u32) as libc::c_int;
        let timeout = if pidfd >= 0 { 1000 } else { 20 };
        'wait: loop {
            loop {
                let mut status: libc::c_int = 0;
                let r = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if r < 0 {
                    // No child at all: the grandchild is gone (its status was not kept).
                    break 'wait;
                }
                if r == 0 {
                    break;
                }
                if r == child {
                    code = exit_code(status);
                    break 'wait;
                }
            }
            let mut pfds = [
                libc::pollfd {
                    fd: control,
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: pidfd,
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let n: libc::nfds_t = if pidfd >= 0 { 2 } else { 1 };
            if libc::poll(pfds.as_mut_ptr(), n, timeout) > 0 && pfds[0].revents != 0 {
                // Warren asked (or died): end the call now.
                libc::kill(child, libc::SIGKILL);
                break;
            }
        }
        let me = libc::getpid();
        loop {
            kill_children(me);
            let mut status: libc::c_int = 0;
            let mut none_left = false;
            loop {
                let r = libc::waitpid(-1, &mut status, libc::WNOHANG);
                if r == child {
                    code = exit_code(status);
                }
                if r < 0 {
                    none_left = io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD);
                    break;
                }
                if r == 0 {
                    break;
                }
            }
            if none_left {
                break;
            }
            let pause = libc::timespec {
                tv_sec: 0,
                tv_nsec: 2_000_000,
            };
            libc::nanosleep(&pause, std::ptr::null_mut());
        }
        libc::_exit(code)
    }
}

/// The shell convention: the exit code, or 128 + the signal that ended the process.
fn exit_code(status: libc::c_int) -> libc::c_int {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        128 + libc::SIGKILL
    }
}

/// Closes every descriptor except `keep`.
unsafe fn close_all_but(keep: RawFd) {
    // SAFETY: see the function contract: a freshly forked child, raw system calls only.
    unsafe {
        let keep = libc::c_uint::try_from(keep).unwrap_or(0);
        let below = (keep > 0).then(|| (0, keep - 1));
        for (lo, hi) in below.into_iter().chain([(keep + 1, libc::c_uint::MAX)]) {
            if libc::syscall(libc::SYS_close_range, lo, hi, 0u32) != 0 {
                // Kernels before 5.9: close one by one up to a generous bound.
                let mut fd = lo;
                while fd <= hi && fd < 65_536 {
                    libc::close(fd as libc::c_int);
                    fd += 1;
                }
            }
        }
    }
}

/// Sends `SIGKILL` to every process whose parent is `me`, found through `/proc/<pid>/stat`.
unsafe fn kill_children(me: libc::pid_t) {
    // SAFETY: see the function contract: a freshly forked child, raw system calls only.
    unsafe {
        let dir = libc::open(
            c"/proc".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return;
        }
        let mut buf = [0u8; 4096];
        loop {
            let n = libc::syscall(
                libc::SYS_getdents64,
                dir,
                buf.as_mut_ptr(),
                buf.len() as libc::c_uint,
            );
            if n <= 0 {
                break;
            }
            let n = n as usize;
            let mut off = 0usize;
            while off + 19 < n {
                // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name (NUL-ended).
                let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                if reclen == 0 {
                    break;
                }
                let name = &buf[off + 19..(off + reclen).min(n)];
                if let Some(pid) = parse_pid(name) {
                    if pid != me && parent_of(dir, name) == Some(me) {
                        libc::kill(pid, libc::SIGKILL);
                    }
                }
                off += reclen;
            }
        }
        libc::close(dir);
    }
}

/// The pid a `/proc` entry name stands for (digits up to the NUL), if it is one.
fn parse_pid(name: &[u8]) -> Option<libc::pid_t> {
    let mut pid: libc::pid_t = 0;
    let mut digits = 0;
    for &b in name {
        if b == 0 {
            break;
        }
        if !b.is_ascii_digit() {
            return None;
        }
        pid = pid
            .checked_mul(10)?
            .checked_add(libc::pid_t::from(b - b'0'))?;
        digits += 1;
    }
    (digits > 0).then_some(pid)
}

/// The parent pid of `/proc/<name>`, read from its `stat` (after the last `)` of the command
/// name: ` <state> <ppid> `).
unsafe fn parent_of(dir: RawFd, name: &[u8]) -> Option<libc::pid_t> {
    // SAFETY: see the function contract: a freshly forked child, raw system calls only.
    unsafe {
        let mut path = [0u8; 32];
        let mut len = 0;
        for &b in name.iter().take_while(|b| **b != 0) {
            if len >= 20 {
                return None;
            }
            path[len] = b;
            len += 1;
        }
        for &b in b"/stat\0" {
            path[len] = b;
            len += 1;
        }
        let fd = libc::openat(dir, path.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return None;
        }
        let mut stat = [0u8; 512];
        let n = libc::read(fd, stat.as_mut_ptr().cast(), stat.len());
        libc::close(fd);
        if n <= 0 {
            return None;
        }
        let stat = &stat[..n as usize];
        let close = stat.iter().rposition(|&b| b == b')')?;
        let mut fields = stat[close + 1..]
            .split(|&b| b == b' ')
            .filter(|f| !f.is_empty());
        let _state = fields.next()?;
        parse_pid(fields.next()?)
    }
}
