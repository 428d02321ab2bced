//! Write operations: the `git` program, run inside the agent's sandbox (rules §3 rules 2–4, 8)
//! so the repository's hooks and filters keep working, with an environment built from scratch
//! (no inherited `GIT_*` variable, every transport forbidden) and an argument list in which
//! nothing the model wrote can become an option.

use super::meta::Location;
use super::request::{Operation, Request};
use crate::error::ToolError;
use crate::process::{capture, kill_group};
use crate::tool::ToolContext;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use warren_policy::sandbox::{choose, ConfinedChild};

/// Host variables a git child gets (when set there); never a `GIT_*` one.
pub const PASSED_ENV: &[&str] = &["PATH", "HOME", "LANG", "LC_ALL", "USER", "TMPDIR"];

/// The `PATH` used when the host has none.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Variables every git child gets: no protocol is allowed, no lazy fetch of promised objects,
/// no prompt, no editor.
pub const FORCED_ENV: &[(&str, &str)] = &[
    ("GIT_ALLOW_PROTOCOL", ""),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_PROTOCOL_FROM_USER", "0"),
    ("GIT_EDITOR", ":"),
    // The user's global config is in no sandbox; the identity it holds is passed by Warren.
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
];

/// The environment of a git child, from the host environment the binary captured: the few
/// variables in [`PASSED_ENV`] plus [`FORCED_ENV`]. Commit identity comes from the repository's
/// config, else from the user's global git config as read by Warren ([`identity_env`]), never
/// from the host's variables.
pub fn git_env(host: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = PASSED_ENV
        .iter()
        .filter(|k| !k.starts_with("GIT_"))
        .filter_map(|k| host.get(*k).map(|v| (k.to_string(), v.clone())))
        .collect();
    if !host.contains_key("PATH") {
        env.push(("PATH".into(), DEFAULT_PATH.into()));
    }
    env.extend(
        FORCED_ENV
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    env
}

/// The commit identity of the user's global git config (`~/.config/git/config`, then
/// `~/.gitconfig`, the later winning as git reads them) for each of name and email the
/// repository does not set itself (`repo_sets`: name, email), as `GIT_AUTHOR_*` and
/// `GIT_COMMITTER_*`. Warren reads only the `[user]` section of those files itself, without
/// following includes, so no sandbox needs to expose them: they can hold tokens (credential
/// helpers, `url.*.insteadOf`) that no agent may read.
pub fn identity_env(
    host: &BTreeMap<String, String>,
    repo_sets: (bool, bool),
) -> Vec<(String, String)> {
    let Some(home) = host.get("HOME").map(PathBuf::from) else {
        return Vec::new();
    };
    let (mut name, mut email) = (None, None);
    for file in [home.join(".config/git/config"), home.join(".gitconfig")] {
        // An unrestricted agent may write in the user's home: a link put at either name is
        // not followed (it could point at a sibling's file), nor one on the way to it.
        let Some(text) = read_no_links(&file) else {
            continue;
        };
        let (n, e) = user_section(&text);
        name = n.or(name);
        email = e.or(email);
    }
    let mut env = Vec::new();
    if let (Some(n), false) = (name, repo_sets.0) {
        env.push(("GIT_AUTHOR_NAME".to_string(), n.clone()));
        env.push(("GIT_COMMITTER_NAME".to_string(), n));
    }
    if let (Some(e), false) = (email, repo_sets.1) {
        env.push(("GIT_AUTHOR_EMAIL".to_string(), e.clone()));
        env.push(("GIT_COMMITTER_EMAIL".to_string(), e));
    }
    env
}

/// The text of `path`, opened without following any symbolic link on the way; at most 1 MiB.
fn read_no_links(path: &Path) -> Option<String> {
    use rustix::fs::{Mode, OFlags};
    use std::io::Read;
    let dir = warren_policy::open::open_dir_nofollow(path.parent()?).ok()?;
    let fd = rustix::fs::openat(
        &dir,
        path.file_name()?,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let st = rustix::fs::fstat(&fd).ok()?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    let mut text = String::new();
    std::fs::File::from(fd)
        .take(1 << 20)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

/// `user.name` and `user.email` of a git config text (the last of each wins).
fn user_section(text: &str) -> (Option<String>, Option<String>) {
    let (mut section, mut name, mut email) = (String::new(), None, None);
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            section = line
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            continue;
        }
        if section != "user" {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else {
            continue;
        };
        let v = v.trim().trim_matches('"').to_string();
        match k.trim().to_ascii_lowercase().as_str() {
            "name" if !v.is_empty() => name = Some(v),
            "email" if !v.is_empty() => email = Some(v),
            _ => {}
        }
    }
    (name, email)
}

/// What a write operation acts on, resolved and checked by the caller.
#[derive(Debug, Clone, Default)]
pub struct Targets {
    /// `add`, `stash_push`: paths relative to the working tree.
    pub paths: Vec<String>,
    /// `worktree_add`, `worktree_remove`: the resolved worktree directory.
    pub worktree: Option<PathBuf>,
    /// `worktree_add`: whether `branch` already exists (checked out) or is created (`-b`).
    pub branch_exists: bool,
}

/// The `git` arguments of a write operation on `loc`. Global options first: the verified git
/// directory and working tree (no discovery), literal pathspecs (no `:(magic)`), no pager and
/// `protocol.allow=never`. User paths come after `--`; branch names were validated as ref
/// names that do not start with `-`; messages are glued to `--message=`.
pub fn git_args(
    loc: &Location,
    req: &Request<'_>,
    t: &Targets,
) -> Result<Vec<OsString>, ToolError> {
    let mut a: Vec<OsString> = vec![
        "--no-pager".into(),
        "--literal-pathspecs".into(),
        "-c".into(),
        "protocol.allow=never".into(),
        prefixed("--git-dir=", &loc.gitdir),
        prefixed("--work-tree=", &loc.workdir),
    ];
    let branch = || {
        req.branch
            .ok_or_else(|| ToolError::arg("branch", "is required"))
            .map(OsString::from)
    };
    let worktree = || {
        t.worktree
            .clone()
            .ok_or_else(|| ToolError::arg("worktree_path", "is required"))
    };
    let stash = || OsString::from(format!("stash@{{{}}}", req.index));
    let mut push = |xs: &[&str]| a.extend(xs.iter().map(OsString::from));
    match req.operation {
        Operation::Add => {
            push(&["add", "--"]);
            a.extend(t.paths.iter().map(OsString::from));
        }
        Operation::Commit => {
            let m = req
                .message
                .ok_or_else(|| ToolError::arg("message", "is required"))?;
            push(&["commit"]);
            a.push(format!("--message={m}").into());
        }
        Operation::Checkout => {
            push(&["checkout"]);
            a.push(branch()?);
            a.push("--".into());
        }
        Operation::BranchCreate => {
            push(&["branch", "--"]);
            a.push(branch()?);
        }
        Operation::BranchDelete => {
            push(&["branch", "--delete", "--"]);
            a.push(branch()?);
        }
        Operation::StashPush => {
            push(&["stash", "push"]);
            if let Some(m) = req.message {
                a.push(format!("--message={m}").into());
            }
            a.push("--".into());
            a.extend(t.paths.iter().map(OsString::from));
        }
        Operation::StashPop => {
            push(&["stash", "pop"]);
            a.push(stash());
        }
        Operation::StashDrop => {
            push(&["stash", "drop"]);
            a.push(stash());
        }
        Operation::WorktreeAdd => {
            push(&["worktree", "add"]);
            match req.branch {
                Some(b) if !t.branch_exists => {
                    a.push("-b".into());
                    a.push(b.into());
                }
                Some(_) => {}
                None => a.push("--detach".into()),
            }
            a.push("--".into());
            a.push(worktree()?.into());
            if t.branch_exists {
                a.push(branch()?);
            }
        }
        Operation::WorktreeRemove => {
            push(&["worktree", "remove", "--"]);
            a.push(worktree()?.into());
        }
        Operation::WorktreePrune => push(&["worktree", "prune"]),
        other => {
            return Err(ToolError::arg(
                "operation",
                format!("`{}` is not a write operation", other.name()),
            ))
        }
    }
    Ok(a)
}

fn prefixed(flag: &str, path: &Path) -> OsString {
    let mut s = OsString::from(flag);
    s.push(path.as_os_str());
    s
}

/// What a finished git child printed.
#[derive(Debug)]
pub struct Output {
    /// Standard output (capped).
    pub stdout: String,
    /// Standard error (capped).
    pub stderr: String,
    /// The sandbox it ran under.
    pub sandbox: &'static str,
}

/// Runs `git args` in `loc`'s working tree inside the agent's sandbox, with [`git_env`], its
/// own process group killed on timeout or cancel. A failure exit is `command_failed`.
pub fn run_git(
    ctx: &ToolContext,
    loc: &Location,
    args: &[OsString],
    extra_env: Vec<(String, String)>,
) -> Result<Output, ToolError> {
    let policy = &ctx.policy;
    if policy.container.is_some() {
        // Also refused by the tool before; never start git for a container runtime.
        return Err(ToolError::GitWriteInContainer {
            operation: "git".into(),
        });
    }
    let (sandbox, _why) = choose(policy.risk.sandbox, policy.workspace_only, &ctx.sandbox)?;
    // The agent's own HOME and temporary folder, made before the sandbox is planned.
    let own = if matches!(sandbox, warren_policy::EffectiveSandbox::None) {
        Vec::new()
    } else {
        crate::process::own_places(&policy.workspace)
    };
    // A profile whose network is by domain fetches and pushes through the proxy, like its
    // shell commands.
    let way = crate::process::NetworkWay::open(ctx, &sandbox)?;
    let proxy_env = way.port().map(warren_net::proxy_env).unwrap_or_default();
    let mut confined = warren_policy::sandbox::confine_with(
        policy,
        &sandbox,
        "git".as_ref(),
        args,
        &loc.workdir,
        way.route,
    )?;
    let cmd = confined.command_mut();
    cmd.env_clear()
        .envs(git_env(&ctx.host_env))
        .envs(own)
        .envs(proxy_env)
        .envs(extra_env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = confined.spawn().map_err(|e| ToolError::io("git", e))?;
    let guard = way.serve(ctx, &mut child)?;
    let cap = ctx.limits.max_output_bytes;
    let out = child.take_stdout().map(|s| capture(s, cap));
    let err = child.take_stderr().map(|s| capture(s, cap));
    let status = wait(ctx, &mut child);
    // Hooks that left background jobs do not outlive the call.
    let _ = child.terminate();
    if let Some(g) = guard {
        g.finish(Duration::from_secs(2));
    }
    let join =
        |h: Option<JoinHandle<(Vec<u8>, bool)>>| h.and_then(|h| h.join().ok()).unwrap_or_default();
    let stdout = String::from_utf8_lossy(&join(out).0).into_owned();
    let stderr = String::from_utf8_lossy(&join(err).0).into_owned();
    let status = status?;
    if !status.success() {
        return Err(ToolError::CommandFailed {
            exit_code: status.code(),
            stdout,
            stderr,
        });
    }
    Ok(Output {
        stdout,
        stderr,
        sandbox: sandbox.name(),
    })
}

fn wait(
    ctx: &ToolContext,
    child: &mut ConfinedChild,
) -> Result<std::process::ExitStatus, ToolError> {
    let timeout_secs = ctx.policy.runtime.shell_timeout_secs;
    let deadline = Instant::now() + Duration::from_secs(u64::from(timeout_secs));
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) => {}
            Err(e) => return Err(ToolError::io("git", e)),
        }
        if ctx.cancel.is_cancelled() {
            kill_group(child, None);
            let _ = child.wait();
            return Err(ToolError::Cancelled);
        }
        if Instant::now() >= deadline {
            kill_group(child, None);
            let _ = child.wait();
            return Err(ToolError::Timeout(timeout_secs));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn loc() -> Location {
        Location {
            workdir: "/ws/repo".into(),
            gitdir: "/ws/repo/.git".into(),
            commondir: "/ws/repo/.git".into(),
        }
    }

    fn args(v: serde_json::Value, t: &Targets) -> Vec<String> {
        let req = Request::parse(&v).unwrap();
        git_args(&loc(), &req, t)
            .unwrap()
            .into_iter()
            .map(|s| s.to_string_lossy().into_owned())
            .collect()
    }

    const GLOBAL: [&str; 6] = [
        "--no-pager",
        "--literal-pathspecs",
        "-c",
        "protocol.allow=never",
        "--git-dir=/ws/repo/.git",
        "--work-tree=/ws/repo",
    ];

    #[test]
    fn the_environment_keeps_no_inherited_git_variable() {
        let mut host = BTreeMap::new();
        for (k, v) in [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("GIT_DIR", "/elsewhere/.git"),
            ("GIT_WORK_TREE", "/elsewhere"),
            ("GIT_AUTHOR_NAME", "Intruder"),
            ("GIT_CONFIG_PARAMETERS", "'core.hooksPath'='/x'"),
            ("GIT_CONFIG_COUNT", "1"),
            ("GIT_ALLOW_PROTOCOL", "file:ext"),
            ("GIT_SSH_COMMAND", "evil"),
            ("SECRET_TOKEN", "s"),
        ] {
            host.insert(k.to_string(), v.to_string());
        }
        let env: BTreeMap<String, String> = git_env(&host).into_iter().collect();
        let git: BTreeMap<&str, &str> = env
            .iter()
            .filter(|(k, _)| k.starts_with("GIT_"))
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(git, FORCED_ENV.iter().copied().collect());
        assert_eq!(env["GIT_ALLOW_PROTOCOL"], "");
        assert_eq!(env["GIT_NO_LAZY_FETCH"], "1");
        assert_eq!(env["PATH"], "/usr/bin");
        assert_eq!(env["HOME"], "/home/u");
        assert!(!env.contains_key("SECRET_TOKEN"));
        // No PATH on the host: a default one.
        let env: BTreeMap<String, String> = git_env(&BTreeMap::new()).into_iter().collect();
        assert_eq!(env["PATH"], DEFAULT_PATH);
    }

    #[test]
    fn user_values_never_become_options() {
        let t = Targets {
            paths: vec!["-rf".into(), "--all".into()],
            ..Targets::default()
        };
        let a = args(json!({"operation": "add", "paths": ["x"]}), &t);
        assert_eq!(a[..6], GLOBAL);
        assert_eq!(a[6..], ["add", "--", "-rf", "--all"]);
        let a = args(json!({"operation": "commit", "message": "--amend"}), &t);
        assert_eq!(a[6..], ["commit", "--message=--amend"]);
        let a = args(json!({"operation": "checkout", "branch": "topic"}), &t);
        assert_eq!(a[6..], ["checkout", "topic", "--"]);
        let a = args(json!({"operation": "branch_create", "branch": "b"}), &t);
        assert_eq!(a[6..], ["branch", "--", "b"]);
        let a = args(json!({"operation": "branch_delete", "branch": "b"}), &t);
        assert_eq!(a[6..], ["branch", "--delete", "--", "b"]);
        let a = args(json!({"operation": "stash_push", "message": "-p"}), &t);
        assert_eq!(
            a[6..],
            ["stash", "push", "--message=-p", "--", "-rf", "--all"]
        );
        let a = args(json!({"operation": "stash_drop", "index": 2}), &t);
        assert_eq!(a[6..], ["stash", "drop", "stash@{2}"]);
        let a = args(json!({"operation": "stash_pop"}), &t);
        assert_eq!(a[6..], ["stash", "pop", "stash@{0}"]);
        let wt = Targets {
            worktree: Some("/ws/-wt".into()),
            ..Targets::default()
        };
        let a = args(
            json!({"operation": "worktree_add", "worktree_path": "x"}),
            &wt,
        );
        assert_eq!(a[6..], ["worktree", "add", "--detach", "--", "/ws/-wt"]);
        let a = args(
            json!({"operation": "worktree_add", "worktree_path": "x", "branch": "new"}),
            &wt,
        );
        assert_eq!(a[6..], ["worktree", "add", "-b", "new", "--", "/ws/-wt"]);
        let existing = Targets {
            branch_exists: true,
            ..wt.clone()
        };
        let a = args(
            json!({"operation": "worktree_add", "worktree_path": "x", "branch": "old"}),
            &existing,
        );
        assert_eq!(a[6..], ["worktree", "add", "--", "/ws/-wt", "old"]);
        let a = args(
            json!({"operation": "worktree_remove", "worktree_path": "x"}),
            &wt,
        );
        assert_eq!(a[6..], ["worktree", "remove", "--", "/ws/-wt"]);
        let a = args(json!({"operation": "worktree_prune"}), &t);
        assert_eq!(a[6..], ["worktree", "prune"]);
        // Reads never build a git command line.
        let v = json!({"operation": "status"});
        let req = Request::parse(&v).unwrap();
        assert!(git_args(&loc(), &req, &t).is_err());
    }
}
