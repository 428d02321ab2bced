//! `shell {command}` (rules §2.2): analysed by the policy (paths, allowlist, risk), then run by
//! `/bin/sh -c` in the workspace, inside the agent's sandbox, with a cleared environment, stdin
//! from /dev/null, its own process group killed on timeout or cancel, and output capped.

use crate::args::Args;
use crate::error::ToolError;
use crate::tool::{blocking, CallCheck, Tool, ToolContext, ToolSpec};
use async_trait::async_trait;
use serde_json::{json, Value};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use std::time::{SystemTime, UNIX_EPOCH};
use warren_policy::sandbox::docker::{docker_args, DockerRun};
use warren_policy::shell::ShellPlan;
use warren_policy::{EffectiveSandbox, ShellError};

mod git_config;
use crate::process::{capture, kill_group};
pub use crate::process::{own_places, NetworkWay, OWN_PLACES};
use warren_policy::sandbox::{choose, confine_with, layered_plan, ConfinedChild};

/// Environment variables a shell command always gets from the host (when set there).
pub const BASE_ENV: &[&str] = &["PATH", "HOME", "LANG", "TERM", "USER", "TMPDIR"];

/// The `PATH` used when the host has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Longest accepted command line.
const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// `shell {command}`.
pub struct Shell;

impl Shell {
    const ARGS: &'static [&'static str] = &["command"];

    fn command(args: &Value) -> Result<&str, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let c = a.string("command")?;
        if c.contains('\0') {
            return Err(ToolError::arg("command", "contains a NUL byte"));
        }
        if c.len() > MAX_COMMAND_BYTES {
            return Err(ToolError::TooLarge {
                what: "argument `command`".into(),
                size: c.len() as u64,
                limit: MAX_COMMAND_BYTES as u64,
            });
        }
        Ok(c)
    }
}

/// The environment of a shell command: PATH, HOME, LANG, TERM, USER, TMPDIR and the profile's
/// `shell_env_passthrough`, taken from the host environment; nothing else. The session and
/// system buses, runtime dir, display, SSH/GPG agents and every `GIT_*` variable never pass,
/// even when listed ([`warren_config::env_never_passed`]). A line that runs `git` (or, under a
/// restricted allowlist, any opaque line) gets git's forced environment and the configuration
/// overrides of [`git_config`].
fn child_env(
    ctx: &ToolContext,
    plan: &ShellPlan,
    confined: bool,
) -> Result<Vec<(String, String)>, ToolError> {
    let mut env = base_env(ctx, confined);
    let restricted = !ctx.policy.allows_any_command();
    if plan.runs_git() || (restricted && !plan.opaque.is_empty()) {
        env.extend(
            crate::git::write::FORCED_ENV
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string())),
        );
        if restricted {
            env.extend(git_config::overrides(ctx, &plan.git_dirs)?);
        }
    }
    Ok(env)
}

/// The base environment of an agent's child process: PATH, HOME, LANG, TERM, USER, TMPDIR and
/// the profile's `shell_env_passthrough` from the host environment, minus the variables that are
/// never passed ([`warren_config::env_never_passed`]); a default PATH when the host has none;
/// inside a sandbox (`confined`) the agent's own places ([`own_places`]); and
/// `GIT_CONFIG_GLOBAL=/dev/null`.
/// Shell commands and MCP servers start from it.
pub fn base_env(ctx: &ToolContext, confined: bool) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = BASE_ENV
        .iter()
        .map(std::string::ToString::to_string)
        .chain(ctx.policy.risk.shell_env_passthrough.iter().cloned())
        .filter(|k| !warren_config::env_never_passed(k))
        .filter(|k| !confined || !OWN_PLACES.contains(&k.as_str()))
        .filter_map(|k| ctx.host_env.get(&k).map(|v| (k.clone(), v.clone())))
        .collect();
    if !ctx.host_env.contains_key("PATH") {
        env.push(("PATH".into(), DEFAULT_PATH.into()));
    }
    // Inside a sandbox the agent's own places; under `none` the user's (the shell analyzer
    // reads `~` as the user's home, and rc files an agent could write there would steer the
    // allowed programs it runs unconfined).
    if confined {
        env.extend(own_places(&ctx.policy.workspace));
    }
    // The user's global git config is in no sandbox (it can hold tokens); git is told there is
    // none, rather than failing on a file it may not read.
    env.push(("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()));
    env
}

/// Analyses `command` and picks the sandbox it runs under (`None` for the container runtime).
/// An opaque line (paths unknown before it runs) is refused with `sandbox_required` when the
/// effective sandbox is `none`: nothing has run yet.
fn plan_and_sandbox(
    command: &str,
    ctx: &ToolContext,
) -> Result<(ShellPlan, Option<EffectiveSandbox>), ToolError> {
    let policy = &ctx.policy;
    let plan = policy
        .check_shell_from(&ctx.cwd, command)
        .map_err(|e| match e {
            // Unreadable text is the argument's fault: say which argument.
            ShellError::Empty | ShellError::Parse(_) => ToolError::arg("command", e.to_string()),
            e => e.into(),
        })?;
    if policy.container.is_some() {
        return Ok((plan, None));
    }
    let (sandbox, _why) = choose(policy.risk.sandbox, policy.workspace_only, &ctx.sandbox)?;
    if sandbox == EffectiveSandbox::None && !plan.opaque.is_empty() {
        return Err(ShellError::SandboxRequired {
            reasons: plan.opaque,
        }
        .into());
    }
    Ok((plan, Some(sandbox)))
}

fn piped(cmd: &mut Command) {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
}

#[async_trait]
impl Tool for Shell {
    fn name(&self) -> &'static str {
        "shell"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Run a shell command in your workspace (sandboxed; paths must be inside your workspace or read-write grants).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line, run by /bin/sh -c"}
                },
                "required": ["command"],
                "additionalProperties": false
            }),
        }
    }

    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        let (plan, _) = plan_and_sandbox(Self::command(args)?, ctx)?;
        Ok(CallCheck {
            side_effects: true,
            risk: Some(plan.risk),
            reasons: plan.reasons,
        })
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        blocking(args, ctx, |args, ctx| Shell.run(args, ctx)).await
    }
}

impl Shell {
    /// The call itself, run on a blocking thread.
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let command = Self::command(args)?;
        let policy = &ctx.policy;
        let (plan, chosen) = plan_and_sandbox(command, ctx)?;
        let confined = chosen
            .as_ref()
            .is_some_and(|s| !matches!(s, EffectiveSandbox::None));
        let mut env = child_env(ctx, &plan, confined)?;
        let mut proxy_guard = None;
        let (mut child, label, container) = match &policy.container {
            None => {
                let sandbox = match chosen {
                    Some(s) => s,
                    None => choose(policy.risk.sandbox, policy.workspace_only, &ctx.sandbox)?.0,
                };
                let argv: Vec<OsString> = vec!["-c".into(), command.into()];
                let way = NetworkWay::open(ctx, &sandbox)?;
                if let Some(port) = way.port() {
                    env.extend(warren_net::proxy_env(port));
                }
                let mut confined = confine_with(
                    policy,
                    &sandbox,
                    "/bin/sh".as_ref(),
                    &argv,
                    &ctx.cwd,
                    way.route,
                )?;
                let cmd = confined.command_mut();
                cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
                piped(cmd);
                let mut child = confined.spawn().map_err(|e| ToolError::io("/bin/sh", e))?;
                proxy_guard = way.serve(ctx, &mut child)?;
                (child, sandbox.name().to_string(), None)
            }
            Some(docker) => {
                let name = format!(
                    "warren-{}-{}-{}",
                    policy.alias,
                    std::process::id(),
                    SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map(|d| d.as_nanos())
                        .unwrap_or(0)
                );
                let run = DockerRun {
                    image: docker.image.as_deref(),
                    network: docker.network.as_deref(),
                    env: env.clone(),
                    name: name.clone(),
                };
                let args = docker_args(&layered_plan(policy), &run, &policy.workspace, command)
                    .map_err(|e| ToolError::Container(e.to_string()))?;
                let mut cmd = Command::new("docker");
                cmd.args(&args)
                    .current_dir(&policy.workspace)
                    .env_clear()
                    .envs(env.iter().map(|(k, v)| (k, v)))
                    .process_group(0);
                piped(&mut cmd);
                let child = cmd.spawn().map_err(|e| ToolError::io("docker", e))?;
                let child = ConfinedChild::from_group_leader(child);
                (child, "docker".to_string(), Some(name))
            }
        };
        let cap = ctx.limits.max_output_bytes;
        let out = child.take_stdout().map(|s| capture(s, cap));
        let err = child.take_stderr().map(|s| capture(s, cap));
        let timeout_secs = policy.runtime.shell_timeout_secs;
        let deadline = Instant::now() + Duration::from_secs(u64::from(timeout_secs));
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) => {}
                Err(e) => break Err(ToolError::io("/bin/sh", e)),
            }
            if ctx.cancel.is_cancelled() {
                kill_group(&mut child, container.as_deref());
                let _ = child.wait();
                break Err(ToolError::Cancelled);
            }
            if Instant::now() >= deadline {
                kill_group(&mut child, container.as_deref());
                let _ = child.wait();
                break Err(ToolError::Timeout(timeout_secs));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // Whatever happened, everything it started goes: background jobs do not outlive the call.
        let _ = child.terminate();
        let join = |h: Option<JoinHandle<(Vec<u8>, bool)>>| {
            h.and_then(|h| h.join().ok()).unwrap_or_default()
        };
        let (stdout, out_cut) = join(out);
        let (stderr, err_cut) = join(err);
        let status = status?;
        let stdout = String::from_utf8_lossy(&stdout).into_owned();
        let mut stderr = String::from_utf8_lossy(&stderr).into_owned();
        // The proxy's refusals in words: the agent learns which host was refused and by which
        // rule, whatever the program printed.
        let refused = proxy_guard
            .as_ref()
            .map(warren_net::ServeGuard::refusals)
            .unwrap_or_default();
        if let Some(g) = proxy_guard {
            // The command and everything it started have ended: its connections are recorded.
            g.finish(Duration::from_secs(2));
        }
        if !status.success() {
            for r in &refused {
                if !stderr.is_empty() && !stderr.ends_with('\n') {
                    stderr.push('\n');
                }
                stderr.push_str(&format!("warren: network: {r}\n"));
            }
            return Err(ToolError::CommandFailed {
                exit_code: status.code(),
                stdout,
                stderr,
            });
        }
        let mut out = json!({
            "exit_code": 0,
            "stdout": stdout,
            "stderr": stderr,
            "truncated": out_cut || err_cut,
            "sandbox": label,
        });
        if !refused.is_empty() {
            out["network_refused"] = json!(refused);
        }
        Ok(out)
    }
}
