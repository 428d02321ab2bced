//! OS sandboxes for an agent's child processes (rules §4): `landlock`, `bubblewrap`, `none`, and
//! `auto` (the best available, in that order). A configured sandbox that is not available is an
//! error, never a silent fallback. [`confine`] turns a program into a [`ConfinedCommand`] that
//! any caller (the shell tool, git write operations) spawns.

pub mod bwrap;
pub mod docker;
pub mod landlock;
pub mod plan;
mod reaper;

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

pub use plan::{fs_plan, layered_plan, mount_plan, FsGrant};

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
            Some(p) => match Command::new(&p)
                .args(["--ro-bind", "/", "/", "--unshare-net", "--", "/bin/true"])
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
            .map(|p| EffectiveSandbox::Bubblewrap { program: p.clone() })
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
            if let Some(s) = landlock() {
                let why = format!(
                    "auto: landlock ABI {} supported by this kernel",
                    support.landlock_abi
                );
                Ok((s, why))
            } else if let Some(s) = bwrap() {
                Ok((
                    s,
                    "auto: landlock not supported by this kernel; bubblewrap works".into(),
                ))
            } else if workspace_only {
                Err(SandboxError::Unavailable {
                    sandbox: "auto",
                    reason: format!(
                        "found neither landlock (not supported by this kernel) nor bubblewrap ({}); \
                         an agent with workspace_only never runs unconfined: install bubblewrap \
                         or set sandbox = \"none\" explicitly",
                        bwrap_problem()
                    ),
                })
            } else {
                Ok((
                    EffectiveSandbox::None,
                    format!(
                        "auto: landlock not supported by this kernel and {}; no OS confinement",
                        bwrap_problem()
                    ),
                ))
            }
        }
    }
}

/// A child-process command confined to an agent's policy. Keep it alive until spawned.
#[derive(Debug)]
pub struct ConfinedCommand {
    command: Command,
    _ruleset: Option<OwnedFd>,
    /// The reaper's control pipe (read end, write end), until spawned.
    control: Option<(OwnedFd, OwnedFd)>,
    sandbox: EffectiveSandbox,
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
        // The reaper holds its own copy of the read end; the write end says "stop" when closed.
        let control = self.control.take().map(|(_read, write)| write);
        Ok(ConfinedChild {
            child,
            control,
            exited: None,
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
}

impl ConfinedChild {
    /// Wraps a child spawned elsewhere as the leader of its own process group (the docker
    /// client): terminating it kills that group.
    pub fn from_group_leader(child: Child) -> Self {
        ConfinedChild {
            child,
            control: None,
            exited: None,
        }
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

/// Builds `program args` running in `cwd`, confined to `policy` under `sandbox`, in a new
/// process group, with a per-call reaper (or bubblewrap's pid namespace) so that nothing it
/// starts outlives it. Only the child is restricted; Warren itself becomes non-dumpable.
pub fn confine(
    policy: &SecurityPolicy,
    sandbox: &EffectiveSandbox,
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
) -> Result<ConfinedCommand, SandboxError> {
    protect_process();
    let network = policy.risk.network;
    let (mut command, ruleset, control) = match sandbox {
        EffectiveSandbox::None => {
            let mut c = Command::new(program);
            c.args(args).current_dir(cwd);
            let control = reaper::arm(&mut c).map_err(SandboxError::Reaper)?;
            (c, None, Some(control))
        }
        EffectiveSandbox::Landlock { .. } => {
            let plan = fs_plan(policy);
            let mut c = Command::new(program);
            c.args(args).current_dir(cwd);
            // The reaper's hook first: it forks, and only the grandchild enters Landlock.
            let control = reaper::arm(&mut c).map_err(SandboxError::Reaper)?;
            let fd = landlock::apply(&plan, network, &mut c)?;
            (c, Some(fd), Some(control))
        }
        EffectiveSandbox::Bubblewrap { program: bw } => {
            let plan = plan::mount_plan(policy);
            let mut c = Command::new(bw);
            c.args(bwrap::args(&plan, policy.workspace_only, network, cwd))
                .arg("--")
                .arg(program)
                .args(args)
                .current_dir(cwd);
            bwrap::verify(&plan)?;
            // bwrap's outer process exits as soon as the program does, while its pid 1 may
            // still be waiting for daemons; the reaper kills that pid 1 (ending the namespace).
            let control = reaper::arm(&mut c).map_err(SandboxError::Reaper)?;
            (c, None, Some(control))
        }
    };
    command.process_group(0);
    Ok(ConfinedCommand {
        command,
        _ruleset: ruleset,
        control,
        sandbox: sandbox.clone(),
    })
}
