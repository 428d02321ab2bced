//! The system-call filter of every confined child (Landlock and bubblewrap alike): what no file
//! rule can express. Built in the parent with `seccompiler` (classic BPF), installed in the
//! child after every other restriction: through a `pre_exec` hook under Landlock, and by
//! bubblewrap itself (`--add-seccomp-fd`) after it has built the sandbox, so that bubblewrap's
//! own mounts are not refused.
//!
//! Always refused, whatever the profile: `io_uring` (it performs file and socket operations
//! no filter sees), `ptrace` and `process_vm_*` (another process's memory), `bpf`,
//! `perf_event_open`, the kernel keyring (`keyctl`, `add_key`, `request_key`), every mount call,
//! `kexec_*`, `userfaultfd`, new namespaces (`unshare`, `setns`, `clone` with a `CLONE_NEW*`
//! flag; `clone3`, whose flags no filter can read, answers `ENOSYS` so that libc falls back to
//! `clone`), and the terminal-injection `ioctl`s (`TIOCSTI`, `TIOCLINUX`).
//!
//! Sockets ([`SyscallRules`]): with the network off, no family but `AF_UNIX`; `AF_UNIX` itself
//! only where the filesystem view decides which pathname sockets exist (bubblewrap without
//! network, whose own network namespace also separates abstract sockets). Under Landlock
//! alone, which cannot govern `connect()` to a pathname socket, and under bubblewrap with the
//! host's network namespace (whose abstract sockets are the desktop's), no `AF_UNIX` socket is
//! created at all: the session bus, the keyring behind it, X11 and Wayland stay out of reach.
//!
//! Metadata: Landlock has no right for `chmod`, `chown`, times or extended attributes, so under
//! Landlock alone every call that changes them is refused; under bubblewrap read-only mounts
//! refuse them where the policy does (`EROFS`).
//!
//! A refused call fails with `EPERM` (`ENOSYS` for `clone3`); the process goes on. Every call
//! through the x32 table fails with `EPERM`; a call through the 32-bit table (`int 0x80`) kills
//! the process (the filter checks the architecture).

use super::SandboxError;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Which network sockets a child may create.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetSockets {
    /// None (`network = false`).
    None,
    /// TCP over IPv4 and IPv6 only, to reach Warren's proxy (`network` by domain): no UDP, no
    /// raw or packet sockets, no netlink.
    TcpOnly,
    /// Every family (`network = true`).
    All,
}

/// What the filter of one child allows beyond the fixed denials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SyscallRules {
    /// Network sockets.
    pub network: NetSockets,
    /// `AF_UNIX` sockets may be created.
    pub unix_sockets: bool,
    /// Mode, owner, times and extended attributes may be changed (the mounts decide).
    pub metadata: bool,
}

impl SyscallRules {
    /// The rules under Landlock alone: no Unix sockets, no metadata changes; other families
    /// only with `network`.
    pub fn landlock(network: NetSockets) -> Self {
        SyscallRules {
            network,
            unix_sockets: false,
            metadata: false,
        }
    }

    /// The rules under bubblewrap: metadata decided by the mounts; without network only
    /// `AF_UNIX` (the sandbox has its own network namespace), and that only when `unix_view`:
    /// the view holds no socket the agent may not connect to (a read-only mount does not stop
    /// `connect()`, so the host tree bound whole or a read-only sibling's workspace rules it out).
    /// With network every family but `AF_UNIX` (the host's abstract sockets share that
    /// namespace).
    pub fn bubblewrap(network: NetSockets, unix_view: bool) -> Self {
        SyscallRules {
            network,
            // Only `All` shares the host's network namespace (and its abstract sockets).
            unix_sockets: network != NetSockets::All && unix_view,
            metadata: true,
        }
    }

    /// One line per thing the filter refuses, for `warren doctor` and the window.
    pub fn summary(&self) -> Vec<String> {
        let mut out = vec![
            "refuses io_uring, ptrace, process_vm_*, bpf, perf_event_open, keyctl, mount, kexec and new namespaces".to_string(),
        ];
        match (self.network, self.unix_sockets) {
            (NetSockets::None, true) => out.push("no network sockets (Unix sockets only)".into()),
            (NetSockets::None, false) => out.push("no sockets at all".into()),
            (NetSockets::TcpOnly, true) => {
                out.push("TCP sockets and Unix sockets only (no UDP, raw or netlink)".into());
            }
            (NetSockets::TcpOnly, false) => {
                out.push("TCP sockets only (no UDP, raw, netlink or Unix sockets)".into());
            }
            (NetSockets::All, false) => out.push("network sockets, no Unix sockets".into()),
            (NetSockets::All, true) => {}
        }
        if !self.metadata {
            out.push("no chmod, chown, utime or setxattr".into());
        }
        out
    }
}

#[cfg(target_arch = "x86_64")]
const ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const ARCH: TargetArch = TargetArch::aarch64;
#[cfg(target_arch = "riscv64")]
const ARCH: TargetArch = TargetArch::riscv64;

/// System calls added after the `libc` constants this crate can rely on (same number on every
/// architecture since 5.x: the unified table).
const SYS_FCHMODAT2: i64 = 452;
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;

/// `FS_IOC_SETFLAGS` and `FS_IOC_FSSETXATTR` (`_IOW('f', 2, long)`, `_IOW('X', 32, struct
/// fsxattr)`).
const FS_IOC_SETFLAGS: u64 = 0x4008_6602;
const FS_IOC_FSSETXATTR: u64 = 0x401c_5820;

/// The x32 bit: the same syscall numbers offset by it reach the x32 table on x86_64.
#[cfg(target_arch = "x86_64")]
const X32_BIT: i64 = 0x4000_0000;

const CLONE_NEW_FLAGS: [u64; 7] = [
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];

fn always_denied() -> Vec<i64> {
    // Every supported architecture is 64-bit: `libc`'s numbers are `i64` already.
    let mut v: Vec<i64> = vec![
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_userfaultfd,
        libc::SYS_unshare,
        libc::SYS_setns,
        // What only root could do, in case Warren runs as root.
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_clock_adjtime,
        libc::SYS_adjtimex,
        libc::SYS_chroot,
        libc::SYS_open_by_handle_at,
        libc::SYS_name_to_handle_at,
        libc::SYS_acct,
        libc::SYS_quotactl,
        libc::SYS_syslog,
        libc::SYS_vhangup,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    v.sort_unstable();
    v
}

fn metadata_calls() -> Vec<i64> {
    let mut v: Vec<i64> = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        SYS_FCHMODAT2,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_utimensat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SYS_SETXATTRAT,
        SYS_REMOVEXATTRAT,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    v
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(filter_error)
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conditions).map_err(filter_error)
}

fn filter_error(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Unavailable {
        sandbox: "seccomp",
        reason: format!("the system-call filter cannot be built: {e}"),
    }
}

/// The rules of the main (`EPERM`) filter, keyed by system-call number.
fn main_rules(rules: &SyscallRules) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SandboxError> {
    let mut map: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in always_denied() {
        map.insert(nr, Vec::new());
    }
    // clone(flags, ...): flags are the first argument on every supported architecture.
    let mut clone_rules = Vec::new();
    for flag in CLONE_NEW_FLAGS {
        clone_rules.push(rule(vec![cond(0, SeccompCmpOp::MaskedEq(flag), flag)?])?);
    }
    map.insert(libc::SYS_clone, clone_rules);
    map.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, libc::TIOCLINUX)?])?,
        ],
    );
    if !rules.unix_sockets {
        // A datagram pair may connect or send elsewhere afterwards; stream pairs may not.
        map.insert(
            libc::SYS_socketpair,
            vec![rule(vec![cond(
                1,
                SeccompCmpOp::MaskedEq(0xf),
                libc::SOCK_DGRAM as u64,
            )?])?],
        );
    }
    let unix = libc::AF_UNIX as u64;
    let socket = libc::SYS_socket;
    match (rules.network, rules.unix_sockets) {
        (NetSockets::All, true) => {}
        (NetSockets::None, false) => {
            map.insert(socket, Vec::new());
        }
        (NetSockets::None, true) => {
            map.insert(socket, vec![rule(vec![cond(0, SeccompCmpOp::Ne, unix)?])?]);
        }
        (NetSockets::All, false) => {
            map.insert(socket, vec![rule(vec![cond(0, SeccompCmpOp::Eq, unix)?])?]);
        }
        (NetSockets::TcpOnly, unix_ok) => {
            let inet = libc::AF_INET as u64;
            let inet6 = libc::AF_INET6 as u64;
            let stream = libc::SOCK_STREAM as u64;
            // socket(domain, type, protocol): refused when the family is none of the allowed
            // ones, or when an internet socket is not a stream (the low bits of `type`; the
            // flags SOCK_NONBLOCK and SOCK_CLOEXEC sit above them).
            let mut other_family = vec![
                cond(0, SeccompCmpOp::Ne, inet)?,
                cond(0, SeccompCmpOp::Ne, inet6)?,
            ];
            if unix_ok {
                other_family.push(cond(0, SeccompCmpOp::Ne, unix)?);
            }
            let mut refused = vec![rule(other_family)?];
            for family in [inet, inet6] {
                for kind in (0..16u64).filter(|k| *k != stream) {
                    refused.push(rule(vec![
                        cond(0, SeccompCmpOp::Eq, family)?,
                        cond(1, SeccompCmpOp::MaskedEq(0xf), kind)?,
                    ])?);
                }
                // A stream of another protocol (SCTP, MPTCP) is not TCP to Landlock's rules.
                refused.push(rule(vec![
                    cond(0, SeccompCmpOp::Eq, family)?,
                    cond(2, SeccompCmpOp::Ne, 0)?,
                    cond(2, SeccompCmpOp::Ne, libc::IPPROTO_TCP as u64)?,
                ])?);
            }
            map.insert(socket, refused);
        }
    }
    if !rules.metadata {
        for nr in metadata_calls() {
            map.insert(nr, Vec::new());
        }
        // File flags (`chattr`) and project attributes are set through ioctls on any open file.
        if let Some(ioctl) = map.get_mut(&libc::SYS_ioctl) {
            for req in [FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR] {
                ioctl.push(rule(vec![cond(1, SeccompCmpOp::Eq, req)?])?);
            }
        }
    }
    Ok(map)
}

/// The two filters of a child: the main one (refused calls fail with `EPERM`) and the one
/// that makes `clone3` fail with `ENOSYS`.
pub fn programs(rules: &SyscallRules) -> Result<Vec<BpfProgram>, SandboxError> {
    let main = SeccompFilter::new(
        main_rules(rules)?,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        ARCH,
    )
    .map_err(filter_error)?;
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3, Vec::new());
    let clone3 = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        ARCH,
    )
    .map_err(filter_error)?;
    let mut out: Vec<BpfProgram> = vec![
        main.try_into().map_err(filter_error)?,
        clone3.try_into().map_err(filter_error)?,
    ];
    #[cfg(target_arch = "x86_64")]
    out.push(x32_program());
    Ok(out)
}

/// Every call through the x32 table (numbers with the x32 bit, which have their own numbering)
/// fails with `EPERM`: Warren's children are x86_64 programs. Written by hand, since a range is
/// not a rule of seccompiler's.
#[cfg(target_arch = "x86_64")]
fn x32_program() -> BpfProgram {
    use seccompiler::sock_filter;
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    vec![
        // seccomp_data.arch: not x86_64 -> allow here (the main filter kills other arches).
        ins(LD_W_ABS, 0, 0, 4),
        ins(JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
        // seccomp_data.nr
        ins(LD_W_ABS, 0, 0, 0),
        ins(JSET_K, 0, 1, X32_BIT as u32),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        ins(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
}

/// Arms `cmd` to install `programs` in the child just before `exec` (after every hook
/// registered before this one, so after Landlock).
pub(crate) fn arm(cmd: &mut Command, programs: Vec<BpfProgram>) {
    // SAFETY: the hook runs in the forked child before exec and makes only raw system calls
    // on memory prepared in the parent (no allocation).
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            for p in &programs {
                let Ok(len) = u16::try_from(p.len()) else {
                    return Err(io::Error::from_raw_os_error(libc::E2BIG));
                };
                let prog = libc::sock_fprog {
                    len,
                    filter: p.as_ptr() as *mut libc::sock_filter,
                };
                if libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0u32,
                    &prog as *const libc::sock_fprog,
                ) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// The programs as memory files for bubblewrap's `--add-seccomp-fd` (read from their start).
pub(crate) fn program_files(programs: &[BpfProgram]) -> Result<Vec<OwnedFd>, SandboxError> {
    let mut out = Vec::new();
    for p in programs {
        let fd = rustix::fs::memfd_create("warren-seccomp", rustix::fs::MemfdFlags::CLOEXEC)
            .map_err(|e| filter_error(format!("memfd: {e}")))?;
        let mut bytes = Vec::with_capacity(p.len() * 8);
        for ins in p {
            bytes.extend_from_slice(&ins.code.to_ne_bytes());
            bytes.push(ins.jt);
            bytes.push(ins.jf);
            bytes.extend_from_slice(&ins.k.to_ne_bytes());
        }
        let mut written = 0;
        while written < bytes.len() {
            let n = rustix::io::pwrite(&fd, &bytes[written..], written as u64)
                .map_err(|e| filter_error(format!("memfd write: {e}")))?;
            written += n;
        }
        out.push(fd);
    }
    Ok(out)
}

/// Arms `cmd` to keep `fds` open across `exec` (they are close-on-exec in Warren, so no other
/// child inherits them).
pub(crate) fn inherit(cmd: &mut Command, fds: Vec<RawFd>) {
    // SAFETY: fcntl on descriptors the parent keeps open until after spawn; async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            for fd in &fds {
                if libc::fcntl(*fd, libc::F_SETFD, 0) != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// The raw numbers of `fds`, for building arguments.
pub(crate) fn raw(fds: &[OwnedFd]) -> Vec<RawFd> {
    fds.iter().map(AsRawFd::as_raw_fd).collect()
}
