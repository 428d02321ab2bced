//! OS sandboxes for an agent's child processes (rules §4): `bubblewrap`, `landlock`, `none`, and
//! `auto` (the best available, in that order). A configured sandbox that is not available is an
//! error, never a silent fallback. [`confine`] turns a program into a [`ConfinedCommand`] that
//! any caller (the shell tool, git write operations, MCP servers) spawns; every confined child
//! also gets the system-call filter of [`seccomp`].

pub mod bwrap;
pub mod docker;
pub mod landlock;
pub mod layer;
pub mod plan;
mod reaper;
pub mod seccomp;

use crate::policy::SecurityPolicy;
use serde::Serialize;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::Once;
use std::time::{Duration, Instant};
use warren_types::SandboxKind;

pub use plan::{fs_plan, layer_plan, layered_plan, mount_plan, FsGrant};
pub use reaper::{inside_a_tool_call, REAPER_NAME};

/// Why a command cannot be confined.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The sandbox cannot be used on this machine.
    #[error("sandbox_unavailable: {sandbox} {reason}")]
    Unavailable {
        /// Which sandbox.
        sandbox: &'static str,
        /// Why.
        reason: String,
    },
    /// A rule could not be added.
    #[error("sandbox rule for {path}: {reason}")]
    Rule {
        /// The path of the rule.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A planned path became a symbolic link (or changed kind) between planning and
    /// confinement: the command is refused rather than confined to the link's target.
    #[error("sandbox_path_changed: {path} was replaced (a symbolic link appeared) after the sandbox was planned; nothing was run")]
    Changed {
        /// The planned path.
        path: PathBuf,
    },
    /// The per-call reaper could not be set up.
    #[error("sandbox reaper: {0}")]
    Reaper(std::io::Error),
}

static NON_DUMPABLE: Once = Once::new();

/// Marks the Warren process non-dumpable, once: no agent process of the same user may then read
/// its `/proc/<pid>/environ`, `mem` or `fd` (nor attach a debugger to it). Binaries call it at
/// start; [`confine`] calls it before the first child is spawned.
pub fn protect_process() {
    NON_DUMPABLE.call_once(|| {
        // A failure leaves the process dumpable; Landlock's ptrace restriction and the policy's
        // `kernel_interface` rule still apply.
        let _ =
            rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    });
}

/// What this machine offers, found once by [`SandboxSupport::probe`] and passed around.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxSupport {
    /// The kernel's Landlock ABI version (0 = none).
    pub landlock_abi: i32,
    /// The `bwrap` program, when found on `PATH` and able to start a sandbox here.
    pub bwrap: Option<PathBuf>,
    /// Why bubblewrap is not usable, when it is not.
    pub bwrap_problem: Option<String>,
    /// The `warren-confine` helper that enters Landlock inside bubblewrap, when found.
    pub confine_helper: Option<PathBuf>,
}

impl SandboxSupport {
    /// Probes the kernel for Landlock and `path_var` (the `PATH` value) for a working `bwrap`.
    pub fn probe(path_var: Option<&OsStr>) -> Self {
        let landlock_abi = landlock::kernel_abi();
        let found = path_var.and_then(|pv| {
            std::env::split_paths(pv)
                .map(|d| d.join("bwrap"))
                .find(|p| p.is_file())
        });
        let (bwrap, bwrap_problem) = match found {
            None => (None, Some("bwrap not found on PATH".to_string())),
            // The features every sandbox uses: namespaces, a mode-000 mask, a read-only remount.
            Some(p) => match Command::new(&p)
                .args([
                    "--ro-bind",
                    "/",
                    "/",
                    "--unshare-net",
                    "--unshare-pid",
                    "--die-with-parent",
                    "--cap-drop",
                    "ALL",
                    "--perms",
                    "0000",
                    "--tmpfs",
                    "/tmp",
                    "--remount-ro",
                    "/tmp",
                    "--",
                    "/bin/true",
                ])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .output()
            {
                Ok(o) if o.status.success() => (Some(p), None),
                Ok(o) => (
                    None,
                    Some(format!(
                        "{} cannot start a sandbox here: {}",
                        p.display(),
                        String::from_utf8_lossy(&o.stderr).trim()
                    )),
                ),
                Err(e) => (None, Some(format!("{}: {e}", p.display()))),
            },
        };
        SandboxSupport {
            landlock_abi,
            bwrap,
            bwrap_problem,
            confine_helper: layer::find_helper(),
        }
    }
}

/// The sandbox a command actually runs under.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EffectiveSandbox {
    /// Landlock with the kernel's ABI.
    Landlock {
        /// The kernel's ABI version.
        abi: i32,
    },
    /// bubblewrap at this path.
    Bubblewrap {
        /// The `bwrap` program.
        program: PathBuf,
        /// Landlock inside it, or why there is none.
        landlock: SecondLayer,
    },
    /// No OS confinement.
    None,
}

impl EffectiveSandbox {
    /// `landlock`, `bubblewrap` or `none`.
    pub fn name(&self) -> &'static str {
        match self {
            EffectiveSandbox::Landlock { .. } => "landlock",
            EffectiveSandbox::Bubblewrap { .. } => "bubblewrap",
            EffectiveSandbox::None => "none",
        }
    }
}

/// Landlock as a second layer inside bubblewrap ([`layer`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SecondLayer {
    /// Entered by the helper before the program runs.
    InForce {
        /// The kernel's Landlock ABI version.
        abi: i32,
        /// The `warren-confine` helper.
        helper: PathBuf,
    },
    /// Not in force, and why.
    Missing {
        /// Why (no Landlock in the kernel, no helper).
        reason: String,
    },
}

impl SecondLayer {
    fn from_support(support: &SandboxSupport) -> Self {
        match (&support.confine_helper, support.landlock_abi) {
            (_, 0) => SecondLayer::Missing {
                reason: "the kernel has no Landlock".into(),
            },
            (None, _) => SecondLayer::Missing {
                reason: format!(
                    "the helper {} was not found next to this program",
                    layer::HELPER
                ),
            },
            (Some(helper), abi) => SecondLayer::InForce {
                abi,
                helper: helper.clone(),
            },
        }
    }
}

/// Chooses the sandbox for a configured `kind` on a machine with `support`, and says why.
/// `auto` never resolves to no confinement for an agent with `workspace_only`: with neither
/// Landlock nor bubblewrap it is [`SandboxError::Unavailable`]; only an explicit `none` runs
/// unconfined.
pub fn choose(
    kind: SandboxKind,
    workspace_only: bool,
    support: &SandboxSupport,
) -> Result<(EffectiveSandbox, String), SandboxError> {
    let landlock = || {
        (support.landlock_abi > 0).then_some(EffectiveSandbox::Landlock {
            abi: support.landlock_abi,
        })
    };
    let bwrap = || {
        support
            .bwrap
            .as_ref()
            .map(|p| EffectiveSandbox::Bubblewrap {
                program: p.clone(),
                landlock: SecondLayer::from_support(support),
            })
    };
    let bwrap_problem = || {
        support
            .bwrap_problem
            .clone()
            .unwrap_or_else(|| "bwrap not usable".into())
    };
    match kind {
        SandboxKind::Landlock => landlock()
            .map(|s| (s, "configured: landlock".to_string()))
            .ok_or(SandboxError::Unavailable {
                sandbox: "landlock",
                reason: "not supported by this kernel".into(),
            }),
        SandboxKind::Bubblewrap => bwrap()
            .map(|s| (s, "configured: bubblewrap".to_string()))
            .ok_or_else(|| SandboxError::Unavailable {
                sandbox: "bubblewrap",
                reason: bwrap_problem(),
            }),
        SandboxKind::None => Ok((EffectiveSandbox::None, "configured: none".into())),
        SandboxKind::Auto => {
            if let Some(s) = bwrap() {
                Ok((s, "auto: bubblewrap can start a sandbox here".into()))
            } else if let Some(s) = landlock() {
                let why = format!(
                    "auto: bubblewrap not usable ({}); landlock ABI {} with seccomp",
                    bwrap_problem(),
                    support.landlock_abi
                );
                Ok((s, why))
            } else if workspace_only {
                Err(SandboxError::Unavailable {
                    sandbox: "auto",
                    reason: format!(
                        "found neither bubblewrap ({}) nor landlock (not supported by this kernel); \
                         an agent with workspace_only never runs unconfined: install bubblewrap \
                         or set sandbox = \"none\" explicitly",
                        bwrap_problem()
                    ),
                })
            } else {
                Ok((
                    EffectiveSandbox::None,
                    format!(
                        "auto: {} and landlock not supported by this kernel; no OS confinement",
                        bwrap_problem()
                    ),
                ))
            }
        }
    }
}

/// Whether every Unix socket a bubblewrap child can see is one the agent may connect to: only
/// with `workspace_only` (the host tree is not bound whole) and no read-only sibling root
/// mounted (a read-only mount does not stop `connect()`).
fn unix_sockets_in_view_are_allowed(policy: &SecurityPolicy) -> bool {
    policy.workspace_only
        && !policy.roots.iter().any(|r| {
            r.tier == crate::policy::Tier::ReadOnly
                && matches!(r.source, crate::policy::RootSource::Sibling(_))
        })
}

/// What holds a child under one sandbox for one policy, layer by layer (`warren doctor`, the
/// window), and what that sandbox cannot enforce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Enforcement {
    /// One line per layer in force.
    pub layers: Vec<String>,
    /// What the policy asks that this sandbox does not enforce (empty: everything holds).
    pub not_enforced: Vec<String>,
}

impl EffectiveSandbox {
    /// The system-call rules a child of `policy` gets under this sandbox (`None`: no filter).
    pub fn syscall_rules(&self, policy: &SecurityPolicy) -> Option<seccomp::SyscallRules> {
        self.syscall_rules_with(policy, NetRoute::sockets_for(&policy.risk.network))
    }

    /// [`Self::syscall_rules`] with the network sockets of the route the child actually takes.
    pub fn syscall_rules_with(
        &self,
        policy: &SecurityPolicy,
        network: seccomp::NetSockets,
    ) -> Option<seccomp::SyscallRules> {
        match self {
            EffectiveSandbox::Landlock { .. } => Some(seccomp::SyscallRules::landlock(network)),
            EffectiveSandbox::Bubblewrap { .. } => Some(seccomp::SyscallRules::bubblewrap(
                network,
                unix_sockets_in_view_are_allowed(policy),
            )),
            EffectiveSandbox::None => None,
        }
    }

    /// The layers in force for a child of `policy`, and what is not enforced.
    pub fn enforcement(&self, policy: &SecurityPolicy) -> Enforcement {
        let mut layers = Vec::new();
        let mut not_enforced = Vec::new();
        match self {
            EffectiveSandbox::Bubblewrap { landlock, .. } => {
                let mut ns = vec!["mount", "pid", "ipc", "uts"];
                if !policy.risk.network.is_open() {
                    ns.push("network");
                }
                if policy.risk.network.domains().is_some() {
                    layers.push(
                        "network by domain: the sandbox's own loopback holds one listener, Warren's proxy, which checks every connection against the profile's domains and records it".into(),
                    );
                }
                layers.push(format!(
                    "namespaces: {}; the file view is built from the policy (read-only tiers mounted read-only, closed paths hidden)",
                    ns.join(", ")
                ));
                match landlock {
                    SecondLayer::InForce { abi, .. } => layers.push(format!(
                        "Landlock ABI {abi} inside bubblewrap: a second check on every file the child opens (only the granted roots and the allowed devices)"
                    )),
                    SecondLayer::Missing { reason } => not_enforced.push(format!(
                        "no Landlock layer inside bubblewrap ({reason}): the view and seccomp hold alone"
                    )),
                }
                if policy
                    .roots_of(crate::policy::Tier::WriteOnly)
                    .next()
                    .is_some()
                {
                    not_enforced.push(
                        "write-only roots are not mounted (a mount cannot mean write-only): shell commands cannot write there, the file tools can".into(),
                    );
                }
                if policy.risk.network.is_open() {
                    not_enforced.push(
                        "with network on, the host's network namespace is shared: no Unix sockets at all (the desktop's abstract sockets live there)".into(),
                    );
                } else if !unix_sockets_in_view_are_allowed(policy) {
                    not_enforced.push(
                        "no Unix sockets: the view holds sockets the agent may not connect to (the host tree bound whole, or a read-only sibling)".into(),
                    );
                }
            }
            EffectiveSandbox::Landlock { abi } => {
                layers.push(format!(
                    "landlock ABI {abi}: files, TCP, signals and abstract sockets"
                ));
                not_enforced.push(
                    "Landlock cannot tell which pathname Unix socket is connected to: no Unix sockets at all".into(),
                );
                not_enforced.push(
                    "Landlock has no right for metadata: chmod, chown, utime and setxattr are refused everywhere, also where writing is allowed".into(),
                );
                if *abi < 3 {
                    not_enforced.push(format!(
                        "landlock ABI {abi} < 3 does not check truncation: the child can truncate a file it may only read"
                    ));
                }
                if *abi < 6 {
                    not_enforced.push(format!(
                        "landlock ABI {abi} < 6 does not scope signals: the child can signal other processes of the same user, its own reaper included"
                    ));
                }
                if *abi < 4 && policy.risk.network.is_off() {
                    not_enforced.push(format!(
                        "landlock ABI {abi} < 4 cannot refuse TCP; seccomp refuses every socket"
                    ));
                }
                if policy.risk.network.domains().is_some() {
                    if *abi < 4 {
                        not_enforced.push(format!(
                            "landlock ABI {abi} < 4 cannot limit TCP to Warren's proxy: shell commands are refused (network by domain needs bubblewrap or Linux 6.7)"
                        ));
                    } else {
                        layers.push(
                            "network by domain: TCP connects only to Warren's proxy on the host's loopback (one port per call), which checks every connection against the profile's domains and records it".into(),
                        );
                        not_enforced.push(
                            "network by domain under Landlock: Landlock limits TCP by port, not by address, so a connection to another host on the proxy's port number (a server the agent's counterpart runs on every port) is not refused; bubblewrap has no such gap".into(),
                        );
                    }
                }
            }
            EffectiveSandbox::None => {
                not_enforced.push(
                    "no OS confinement: the tools' policy checks still apply; opaque shell commands are refused, git write commands are not confined".into(),
                );
                if policy.risk.network.domains().is_some() {
                    not_enforced.push(
                        "network by domain: commands are pointed at Warren's proxy (HTTP_PROXY) but nothing stops a direct connection".into(),
                    );
                }
            }
        }
        if let Some(rules) = self.syscall_rules(policy) {
            layers.push(format!("seccomp: {}", rules.summary().join("; ")));
        }
        Enforcement {
            layers,
            not_enforced,
        }
    }
}

/// A child-process command confined to an agent's policy. Keep it alive until spawned.
#[derive(Debug)]
pub struct ConfinedCommand {
    command: Command,
    /// Descriptors the child needs until it is spawned (the Landlock ruleset, bwrap's inputs).
    _keep: Vec<OwnedFd>,
    /// The reaper's control pipe (read end, write end), until spawned.
    control: Option<(OwnedFd, OwnedFd)>,
    sandbox: EffectiveSandbox,
    /// Warren's end of the socket the helper hands the sandbox's proxy listener over.
    proxy_channel: Option<OwnedFd>,
}

impl ConfinedCommand {
    /// The underlying command, to set environment, stdio, ... before spawning. The sandbox
    /// (pre-exec hook or `bwrap` wrapper) is already set up; do not replace the program.
    pub fn command_mut(&mut self) -> &mut Command {
        &mut self.command
    }

    /// The sandbox it runs under.
    pub fn sandbox(&self) -> &EffectiveSandbox {
        &self.sandbox
    }

    /// Spawns the child in its own process group. Nothing it starts outlives the returned
    /// [`ConfinedChild`]: a per-call reaper ends every descendant (under bubblewrap, by ending
    /// the sandbox's pid namespace). A command is spawned once.
    pub fn spawn(&mut self) -> std::io::Result<ConfinedChild> {
        if self.control.is_none() {
            return Err(std::io::Error::other(
                "a confined command is spawned once; confine it again",
            ));
        }
        let child = self.command.spawn()?;
        // The child has its copies now: Warren's are closed, so that a helper that fails closes
        // the proxy channel for good.
        self._keep.clear();
        // The reaper holds its own copy of the read end; the write end says "stop" when closed.
        let control = self.control.take().map(|(_read, write)| write);
        Ok(ConfinedChild {
            child,
            control,
            exited: None,
            proxy_channel: self.proxy_channel.take(),
        })
    }
}

/// How long [`ConfinedChild::terminate`] waits for the reaper before killing the group.
const REAPER_GRACE: Duration = Duration::from_secs(10);

/// A running confined command (the reaper in front of it). Ending it ends everything it
/// started; dropping it unfinished terminates it.
#[derive(Debug)]
pub struct ConfinedChild {
    child: Child,
    control: Option<OwnedFd>,
    exited: Option<ExitStatus>,
    proxy_channel: Option<OwnedFd>,
}

impl ConfinedChild {
    /// Wraps a child spawned elsewhere as the leader of its own process group (the docker
    /// client): terminating it kills that group.
    pub fn from_group_leader(child: Child) -> Self {
        ConfinedChild {
            child,
            control: None,
            exited: None,
            proxy_channel: None,
        }
    }

    /// Under bubblewrap with [`NetRoute::Proxy`]: the listener the helper opened on the
    /// sandbox's loopback, for Warren's proxy to accept on. Waits up to `timeout` for it;
    /// `Ok(None)` when the command was not routed through the proxy, an error when the helper
    /// gave none (it then runs nothing).
    pub fn proxy_listener(
        &mut self,
        timeout: Duration,
    ) -> std::io::Result<Option<std::net::TcpListener>> {
        let Some(channel) = self.proxy_channel.take() else {
            return Ok(None);
        };
        receive_listener(&channel, timeout).map(Some)
    }

    /// The process id of the directly spawned process (reaper, `bwrap` or the program).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Takes the piped standard input, once.
    pub fn take_stdin(&mut self) -> Option<std::process::ChildStdin> {
        self.child.stdin.take()
    }

    /// Takes the piped standard output, once.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Takes the piped standard error, once.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// The exit status once the command and everything it started have ended.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        if self.exited.is_some() {
            return Ok(self.exited);
        }
        let status = self.child.try_wait()?;
        if let Some(s) = status {
            self.finished(s);
        }
        Ok(status)
    }

    /// Waits for the command and everything it started to end.
    pub fn wait(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(s) = self.exited {
            return Ok(s);
        }
        let s = self.child.wait()?;
        self.finished(s);
        Ok(s)
    }

    /// Ends the command and everything it started, now, and waits for it. Safe to call after it
    /// exited.
    pub fn terminate(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(s) = self.exited {
            return Ok(s);
        }
        if self.control.take().is_some() {
            // Closing the write end tells the reaper to kill and reap everything.
            let deadline = Instant::now() + REAPER_GRACE;
            while Instant::now() < deadline {
                if let Some(s) = self.try_wait()? {
                    return Ok(s);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        self.kill_group();
        let _ = self.child.kill();
        self.wait()
    }

    fn finished(&mut self, status: ExitStatus) {
        self.exited = Some(status);
        self.control = None;
        // Whatever stayed in the group (the reaper itself was killed, or no reaper) goes too.
        self.kill_group();
    }

    fn kill_group(&self) {
        if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: killpg on the process group `confine` created for this child (its id).
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for ConfinedChild {
    fn drop(&mut self) {
        if self.exited.is_none() {
            let _ = self.terminate();
        }
    }
}

/// Makes every forbidden path that does not exist yet, and that the agent could create, an
/// empty folder of mode 0700, so that the sandbox can hide it (a mount or a rule needs
/// something there). Each missing component is made with `mkdirat` beneath a descriptor opened
/// without following links, so a link planted on the way is never followed. Returns the
/// folders made.
pub fn prepare_closed_paths(policy: &SecurityPolicy) -> Vec<PathBuf> {
    use rustix::fs::{Mode, OFlags};
    let mut made = Vec::new();
    for target in &policy.forbidden {
        if std::fs::symlink_metadata(target).is_ok() {
            continue;
        }
        let Some(base) = target
            .ancestors()
            .skip(1)
            .find(|a| std::fs::symlink_metadata(a).is_ok_and(|m| m.is_dir()))
        else {
            continue;
        };
        // Only where the agent could create the path itself; elsewhere nothing is to be hidden.
        if !policy
            .decide_with(base, crate::access::Access::Write, false)
            .0
        {
            continue;
        }
        let dir_flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
        // Also without openat2 (the component walk): a closed path is never left unmade.
        let Ok(mut fd) = crate::open::open_dir_nofollow(base) else {
            continue;
        };
        let Ok(rest) = target.strip_prefix(base) else {
            continue;
        };
        let mut at = base.to_path_buf();
        for c in rest.components() {
            at.push(c);
            let name = c.as_os_str();
            match rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o700)) {
                Ok(()) => made.push(at.clone()),
                Err(rustix::io::Errno::EXIST) => {}
                Err(_) => break,
            }
            match rustix::fs::openat(&fd, name, dir_flags, Mode::empty()) {
                Ok(next) => fd = next,
                Err(_) => break,
            }
        }
    }
    made
}

/// How a confined child reaches the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetRoute {
    /// No network (`network = false`; also a profile with domains when no proxy serves the
    /// call: closed, never open).
    Off,
    /// The host's network (`network = true`).
    Open,
    /// Only Warren's proxy at `127.0.0.1:port`. Under Landlock (and `none`) the proxy listens on
    /// the host's loopback at `port` and Landlock lets TCP connect there only; under bubblewrap
    /// the sandbox has its own network namespace, the helper listens on its loopback at `port`
    /// and hands the listener to Warren ([`ConfinedChild::proxy_listener`]).
    Proxy {
        /// The port the child's `HTTP_PROXY` names.
        port: u16,
    },
}

/// The port of the proxy's listener inside a bubblewrap sandbox's own network namespace.
pub const SANDBOX_PROXY_PORT: u16 = 3128;

impl NetRoute {
    /// The route `confine` takes for a profile's `network` without a proxy.
    pub fn without_proxy(network: &warren_types::NetworkAccess) -> NetRoute {
        if network.is_open() {
            NetRoute::Open
        } else {
            NetRoute::Off
        }
    }

    /// The sockets a child of `network` may create (a profile with domains: TCP only).
    pub fn sockets_for(network: &warren_types::NetworkAccess) -> seccomp::NetSockets {
        match network {
            warren_types::NetworkAccess::Switch(false) => seccomp::NetSockets::None,
            warren_types::NetworkAccess::Switch(true) => seccomp::NetSockets::All,
            warren_types::NetworkAccess::Domains(_) => seccomp::NetSockets::TcpOnly,
        }
    }

    fn sockets(self) -> seccomp::NetSockets {
        match self {
            NetRoute::Off => seccomp::NetSockets::None,
            NetRoute::Open => seccomp::NetSockets::All,
            NetRoute::Proxy { .. } => seccomp::NetSockets::TcpOnly,
        }
    }

    fn tcp(self) -> landlock::TcpRule {
        match self {
            NetRoute::Off => landlock::TcpRule::None,
            NetRoute::Open => landlock::TcpRule::Open,
            NetRoute::Proxy { port } => landlock::TcpRule::ConnectOnly(port),
        }
    }
}

/// Builds `program args` running in `cwd`, confined to `policy` under `sandbox`, in a new
/// process group, with a per-call reaper (or bubblewrap's pid namespace) so that nothing it
/// starts outlives it. Only the child is restricted; Warren itself becomes non-dumpable. The
/// network is the profile's without a proxy ([`NetRoute::without_proxy`]).
pub fn confine(
    policy: &SecurityPolicy,
    sandbox: &EffectiveSandbox,
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
) -> Result<ConfinedCommand, SandboxError> {
    confine_with(
        policy,
        sandbox,
        program,
        args,
        cwd,
        NetRoute::without_proxy(&policy.risk.network),
    )
}

/// [`confine`] with the network route `net` (the proxy's, for a profile with domains).
pub fn confine_with(
    policy: &SecurityPolicy,
    sandbox: &EffectiveSandbox,
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
    net: NetRoute,
) -> Result<ConfinedCommand, SandboxError> {
    protect_process();
    let filters = match sandbox.syscall_rules_with(policy, net.sockets()) {
        Some(rules) => seccomp::programs(&rules)?,
        None => Vec::new(),
    };
    let mut proxy_channel = None;
    if !matches!(sandbox, EffectiveSandbox::None) {
        prepare_closed_paths(policy);
    }
    let (mut command, ruleset, control) = match sandbox {
        EffectiveSandbox::None => {
            let mut c = Command::new(program);
            c.args(args).current_dir(cwd);
            let control = reaper::arm(&mut c).map_err(SandboxError::Reaper)?;
            (c, Vec::new(), Some(control))
        }
        EffectiveSandbox::Landlock { .. } => {
            let plan = fs_plan(policy);
            let mut c = Command::new(program);
            c.args(args).current_dir(cwd);
            // The reaper's hook first: it forks, and only the grandchild enters Landlock and
            // then the system-call filter.
            let control = reaper::arm(&mut c).map_err(SandboxError::Reaper)?;
            let fd = landlock::apply(&plan, net.tcp(), &mut c)?;
            seccomp::arm(&mut c, filters);
            (c, vec![fd], Some(control))
        }
        EffectiveSandbox::Bubblewrap {
            program: bw,
            landlock: second,
        } => {
            let plan = plan::mount_plan(policy);
            let files = seccomp::program_files(&filters)?;
            let built = bwrap::args(
                &plan,
                policy.workspace_only,
                net == NetRoute::Open,
                cwd,
                files,
            )?;
            let mut fds = built.fds;
            let mut c = Command::new(bw);
            c.args(&built.args).arg("--").current_dir(cwd);
            // The proxy's listener comes back over a Unix socket pair (the helper's end is
            // inherited through bwrap).
            let proxy = match net {
                NetRoute::Proxy { port } => {
                    let (ours, theirs) = rustix::net::socketpair(
                        rustix::net::AddressFamily::UNIX,
                        rustix::net::SocketType::STREAM,
                        rustix::net::SocketFlags::CLOEXEC,
                        None,
                    )
                    .map_err(|e| SandboxError::Unavailable {
                        sandbox: "bubblewrap",
                        reason: format!("no socket pair for the network proxy: {e}"),
                    })?;
                    proxy_channel = Some(ours);
                    let raw = std::os::fd::AsRawFd::as_raw_fd(&theirs);
                    fds.push(theirs);
                    Some((raw, port))
                }
                NetRoute::Off | NetRoute::Open => None,
            };
            // Inside the sandbox's own network namespace the proxy's port is the one reachable.
            let inner_tcp = match net {
                NetRoute::Proxy { port } if landlock::kernel_abi() >= 4 => {
                    landlock::TcpRule::ConnectOnly(port)
                }
                NetRoute::Proxy { .. } => landlock::TcpRule::Open,
                other => other.tcp(),
            };
            match second {
                SecondLayer::InForce { helper, .. } => {
                    let ruleset = landlock::ruleset(&plan::layer_plan(policy, &plan), inner_tcp)?;
                    let helper = layer::open_helper(helper).map_err(|e| SandboxError::Rule {
                        path: helper.clone(),
                        reason: e.to_string(),
                    })?;
                    // New terminals only where the policy lets the agent open one.
                    let terminals = policy
                        .check(Path::new("/dev/ptmx"), crate::access::Access::Write)
                        .allowed;
                    c.args(layer::wrap(
                        std::os::fd::AsRawFd::as_raw_fd(&helper),
                        Some(std::os::fd::AsRawFd::as_raw_fd(&ruleset)),
                        terminals,
                        proxy,
                        program,
                        args,
                    ));
                    fds.push(ruleset);
                    fds.push(helper);
                }
                SecondLayer::Missing { reason } => match proxy {
                    None => {
                        c.arg(program).args(args);
                    }
                    Some(proxy) => {
                        // No Landlock layer, but the helper still opens the way to the proxy.
                        let Some(path) = layer::find_helper() else {
                            return Err(SandboxError::Unavailable {
                                sandbox: "bubblewrap",
                                reason: format!(
                                    "network by domain needs the {} helper beside Warren ({reason})",
                                    layer::HELPER
                                ),
                            });
                        };
                        let helper = layer::open_helper(&path).map_err(|e| SandboxError::Rule {
                            path: path.clone(),
                            reason: e.to_string(),
                        })?;
                        c.args(layer::wrap(
                            std::os::fd::AsRawFd::as_raw_fd(&helper),
                            None,
                            false,
                            Some(proxy),
                            program,
                            args,
                        ));
                        fds.push(helper);
                    }
                },
            }
            bwrap::verify(&plan)?;
            // bwrap's outer process exits as soon as the program does, while its pid 1 may
            // still be waiting for daemons; the reaper kills that pid 1 (ending the namespace).
            let control = reaper::arm(&mut c).map_err(SandboxError::Reaper)?;
            seccomp::inherit(&mut c, seccomp::raw(&fds));
            (c, fds, Some(control))
        }
    };
    command.process_group(0);
    Ok(ConfinedCommand {
        command,
        _keep: ruleset,
        control,
        sandbox: sandbox.clone(),
        proxy_channel,
    })
}

/// Receives the listening socket the helper sends over `channel` (`SCM_RIGHTS`), waiting up to
/// `timeout`.
fn receive_listener(
    channel: &OwnedFd,
    timeout: Duration,
) -> std::io::Result<std::net::TcpListener> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(channel, PollFlags::IN)];
    let ts = Timespec {
        tv_sec: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    if poll(&mut fds, Some(&ts))? == 0 {
        return Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "the sandbox did not open its way to Warren's network proxy in time",
        ));
    }
    let mut space = [std::mem::MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = rustix::net::RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    let got = rustix::net::recvmsg(
        channel,
        &mut [std::io::IoSliceMut::new(&mut byte)],
        &mut control,
        rustix::net::RecvFlags::CMSG_CLOEXEC,
    )?;
    for message in control.drain() {
        if let rustix::net::RecvAncillaryMessage::ScmRights(mut fds) = message {
            if let Some(fd) = fds.next() {
                return Ok(std::net::TcpListener::from(fd));
            }
        }
    }
    Err(std::io::Error::other(if got.bytes == 0 {
        "the sandbox's helper ended without opening its way to Warren's network proxy"
    } else {
        "the sandbox's helper sent no listener"
    }))
}
