//! What the tools that start child processes share (the shell tool and git's write operations):
//! reading their output with a cap, ending them with everything they started, the agent's own
//! places in their environment, and their way to the network.

use crate::error::ToolError;
use crate::tool::ToolContext;
use std::io::Read;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::Duration;
use warren_policy::sandbox::{ConfinedChild, NetRoute, SANDBOX_PROXY_PORT};
use warren_policy::EffectiveSandbox;

/// Reads a pipe to the end, keeping at most `cap` bytes (the rest is drained so the child never
/// blocks on a full pipe). Returns the kept bytes and whether anything was dropped.
pub(crate) fn capture(
    mut r: impl Read + Send + 'static,
    cap: usize,
) -> JoinHandle<(Vec<u8>, bool)> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut dropped = false;
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    dropped |= n > room;
                }
            }
        }
        (kept, dropped)
    })
}

/// The variables that name where a program keeps its files: always the agent's own.
pub const OWN_PLACES: &[&str] = &[
    "HOME",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
];

/// `HOME` is the agent's workspace and the XDG folders and `TMPDIR` lie inside it, so that a
/// program acting on implicit paths under `HOME` (Warren's own CLI among them) finds the
/// agent's files, never the user's. `TMPDIR` (`.tmp` in the workspace) is made when missing;
/// an entry already there, whatever it is, is left alone (the sandbox decides what it reaches).
pub fn own_places(workspace: &Path) -> Vec<(String, String)> {
    let tmp = workspace.join(".tmp");
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&tmp);
    let at = |rel: &str| workspace.join(rel).display().to_string();
    vec![
        ("HOME".into(), workspace.display().to_string()),
        ("TMPDIR".into(), tmp.display().to_string()),
        ("XDG_CONFIG_HOME".into(), at(".config")),
        ("XDG_CACHE_HOME".into(), at(".cache")),
        ("XDG_DATA_HOME".into(), at(".local/share")),
        ("XDG_STATE_HOME".into(), at(".local/state")),
    ]
}

/// How one command reaches the network: its route, and for a profile with domains the proxy
/// serving it (on the host's loopback already, or on the sandbox's own once it has started).
pub struct NetworkWay {
    /// The route the sandbox is built for.
    pub route: NetRoute,
    /// The proxy and the agent's rules, when the profile's network is by domain.
    proxy: Option<(warren_net::Proxy, std::sync::Arc<warren_types::DomainRules>)>,
    /// The host-side listener's guard (Landlock and `none`).
    host_guard: Option<warren_net::ServeGuard>,
}

impl NetworkWay {
    /// The way for a command of `ctx`'s agent under `sandbox`. A profile with domains and no
    /// proxy in this process is refused: never a wider network than the profile says.
    pub fn open(ctx: &ToolContext, sandbox: &EffectiveSandbox) -> Result<Self, ToolError> {
        let policy = &ctx.policy;
        let Some(rules) = policy.risk.network.domains() else {
            return Ok(NetworkWay {
                route: NetRoute::without_proxy(&policy.risk.network),
                proxy: None,
                host_guard: None,
            });
        };
        let Some(proxy) = ctx.network.clone() else {
            return Err(warren_policy::SandboxError::Unavailable {
                sandbox: "network proxy",
                reason:
                    "the profile's network is by domain, and this process runs no network proxy"
                        .into(),
            }
            .into());
        };
        let rules = std::sync::Arc::new(rules.clone());
        let io = |e: std::io::Error| warren_policy::SandboxError::Unavailable {
            sandbox: "network proxy",
            reason: e.to_string(),
        };
        match sandbox {
            EffectiveSandbox::Bubblewrap { .. } => Ok(NetworkWay {
                route: NetRoute::Proxy {
                    port: SANDBOX_PROXY_PORT,
                },
                proxy: Some((proxy, rules)),
                host_guard: None,
            }),
            EffectiveSandbox::Landlock { .. } | EffectiveSandbox::None => {
                let (port, guard) = proxy
                    .serve_loopback(&policy.alias, rules.clone())
                    .map_err(io)?;
                Ok(NetworkWay {
                    route: NetRoute::Proxy { port },
                    proxy: Some((proxy, rules)),
                    host_guard: Some(guard),
                })
            }
        }
    }

    /// The port `HTTP_PROXY` names, when the command goes through the proxy.
    pub fn port(&self) -> Option<u16> {
        match self.route {
            NetRoute::Proxy { port } => Some(port),
            NetRoute::Off | NetRoute::Open => None,
        }
    }

    /// After spawning: under bubblewrap, the sandbox's own listener is taken and served. The
    /// returned guard stops the proxy for this command when dropped.
    pub fn serve(
        self,
        ctx: &ToolContext,
        child: &mut ConfinedChild,
    ) -> Result<Option<warren_net::ServeGuard>, ToolError> {
        if self.host_guard.is_some() {
            return Ok(self.host_guard);
        }
        let Some((proxy, rules)) = self.proxy else {
            return Ok(None);
        };
        let io = |e: std::io::Error| {
            ToolError::from(warren_policy::SandboxError::Unavailable {
                sandbox: "network proxy",
                reason: e.to_string(),
            })
        };
        match child.proxy_listener(PROXY_HANDOVER).map_err(io)? {
            Some(listener) => Ok(Some(
                proxy
                    .serve(&ctx.policy.alias, rules, listener)
                    .map_err(io)?,
            )),
            None => Ok(None),
        }
    }
}

/// How long a sandbox may take to hand over its proxy listener (bubblewrap's start included).
const PROXY_HANDOVER: Duration = Duration::from_secs(10);

pub(crate) fn kill_group(child: &mut ConfinedChild, container: Option<&str>) {
    if let Some(name) = container {
        // The docker client going away does not stop the container: kill it by name.
        let _ = Command::new("docker")
            .args(["kill", name])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    // Ends the command and everything it started (the sandbox's reaper or pid namespace).
    let _ = child.terminate();
}
