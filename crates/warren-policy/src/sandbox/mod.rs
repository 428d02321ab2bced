//! OS sandboxes for an agent's child processes (SPEC §4): `landlock`, `bubblewrap`, `none`, and
//! `auto` (the best available, in that order). A configured sandbox that is not available is an
//! error, never a silent fallback. [`confine`] turns a program into a [`ConfinedCommand`] that
//! any caller (the shell tool, git write operations) spawns.

pub mod bwrap;
pub mod docker;
pub mod landlock;
pub mod plan;

use crate::policy::SecurityPolicy;
use serde::Serialize;
use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use warren_types::SandboxKind;

pub use plan::{fs_plan, layered_plan, FsGrant};

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
pub fn choose(
    kind: SandboxKind,
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

    /// Spawns the child in its own process group.
    pub fn spawn(&mut self) -> std::io::Result<Child> {
        self.command.spawn()
    }
}

/// Builds `program args` running in `cwd`, confined to `policy` under `sandbox`, in a new
/// process group (so a timeout can kill everything it started). Only the child is restricted.
pub fn confine(
    policy: &SecurityPolicy,
    sandbox: &EffectiveSandbox,
    program: &OsStr,
    args: &[OsString],
    cwd: &Path,
) -> Result<ConfinedCommand, SandboxError> {
    let (mut command, ruleset) = match sandbox {
        EffectiveSandbox::None => {
            let mut c = Command::new(program);
            c.args(args).current_dir(cwd);
            (c, None)
        }
        EffectiveSandbox::Landlock { .. } => {
            let plan = fs_plan(policy);
            let mut c = Command::new(program);
            c.args(args).current_dir(cwd);
            let fd = landlock::apply(&plan, &mut c)?;
            (c, Some(fd))
        }
        EffectiveSandbox::Bubblewrap { program: bw } => {
            let plan = plan::layered_plan(policy);
            let mut c = Command::new(bw);
            c.args(bwrap::args(&plan, policy.workspace_only, cwd))
                .arg("--")
                .arg(program)
                .args(args)
                .current_dir(cwd);
            (c, None)
        }
    };
    command.process_group(0);
    Ok(ConfinedCommand {
        command,
        _ruleset: ruleset,
        sandbox: sandbox.clone(),
    })
}
