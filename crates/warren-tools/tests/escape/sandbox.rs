//! The OS sandbox beyond files: nothing a shell call starts outlives it (setsid daemons, double
//! forks, timeouts), no TCP unless the profile allows network, no signal or abstract Unix
//! socket reaching outside the sandbox, no other process's `/proc` (Warren's environment
//! included), no kernel tunable written, and no protected directory (the install root, an
//! ancestor of runtime state or of a read-only root) renamed, removed or replaced.

use crate::fixture::call;
use crate::support::{assert_no_canary, Lab, Sandbox, CANARY};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Once;
use warren_tools::{ToolContext, ToolError};

/// The sandboxes that confine (signals, sockets and network are only theirs to stop).
const CONFINING: [Sandbox; 2] = [Sandbox::Landlock, Sandbox::Bubblewrap];

fn shell(ctx: &ToolContext, command: &str) -> Result<Value, ToolError> {
    call(ctx, "shell", json!({ "command": command }))
}

/// Writes `body` as a script into mallory's workspace and returns the line that runs it: the
/// shell analyzer cannot see inside, so the OS sandbox alone decides (under `none` the line is
/// refused before it runs).
fn hidden(lab: &Lab, body: &str) -> String {
    lab.fx.write(&lab.ws("mallory").join("a.sh"), body);
    "sh ./a.sh".to_string()
}

fn stdout(r: &Result<Value, ToolError>) -> String {
    match r {
        Ok(v) => v["stdout"].as_str().unwrap_or_default().to_string(),
        Err(ToolError::CommandFailed { stdout, .. }) => stdout.clone(),
        Err(_) => String::new(),
    }
}

/// A `sleep` argument unique to this call: the marker found in `/proc/*/cmdline` afterwards.
fn marker() -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::SeqCst);
    format!("{}.{}{:03}", 800 + n, std::process::id(), n)
}

/// Processes (other than this one) whose command line contains `mark`.
fn processes_with(mark: &str) -> Vec<u32> {
    warren_testkit::procs::running_with(mark)
}

/// Fails (after killing them) when processes carrying `mark` are still running.
#[track_caller]
fn assert_none_left(mark: &str, what: &str) {
    let left = processes_with(mark);
    for p in &left {
        // SAFETY: SIGKILL to processes this test started, found by their unique marker.
        unsafe {
            libc::kill(*p as libc::pid_t, libc::SIGKILL);
        }
    }
    assert!(left.is_empty(), "{what}: {left:?} outlived the call");
}

/// Each line (`{m}` = the marker) starts something meant to outlive the call.
const LINGERERS: &[(&str, &str)] = &[
    (
        "setsid",
        "setsid sleep {m} >/dev/null 2>&1 </dev/null & echo started",
    ),
    (
        "setsid-sh",
        "setsid sh -c 'sleep {m}' >/dev/null 2>&1 & echo started",
    ),
    (
        "double-fork",
        "( (setsid sleep {m} >/dev/null 2>&1 &) & ) ; sleep 0.1; echo started",
    ),
    (
        "nohup-subshell",
        "( (nohup sleep {m} >/dev/null 2>&1 &) & ) ; echo started",
    ),
    ("holds-stdout", "setsid sleep {m} & echo started"),
];

#[test]
fn nothing_started_by_a_call_outlives_it() {
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        let lab = Lab::new(sb, true);
        let before = lab.snapshot();
        for (name, line) in LINGERERS {
            let m = marker();
            let r = shell(&lab.ctx(), &line.replace("{m}", &m));
            // Under `none` the analyzer refuses `sh -c` before anything runs.
            let refused = sb == Sandbox::None && matches!(r, Err(ToolError::Shell(_)));
            assert!(
                refused || stdout(&r).contains("started"),
                "[{}] {name}: {r:?}",
                sb.name()
            );
            assert_none_left(&m, &format!("[{}] {name}", sb.name()));
        }
        assert_eq!(lab.snapshot(), before);
    }
}

#[test]
fn a_timeout_ends_the_daemons_too() {
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        let lab = Lab::new(sb, true);
        let m = marker();
        let r = shell(
            &lab.ctx(),
            &format!("setsid sleep {m} >/dev/null 2>&1 & sleep {m}"),
        );
        assert!(
            matches!(r, Err(ToolError::Timeout(_))),
            "[{}] {r:?}",
            sb.name()
        );
        assert_none_left(&m, &format!("[{}] timeout", sb.name()));
    }
}

#[test]
fn tcp_needs_the_network_setting() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let line = format!("socat -u /dev/null TCP:127.0.0.1:{port} && echo connected");
    for sb in CONFINING {
        if !sb.available() {
            continue;
        }
        for network in [false, true] {
            let lab = Lab::with_profile(sb, true, &format!("network = {network}"));
            let r = shell(&lab.ctx(), &line);
            assert_eq!(
                stdout(&r).contains("connected"),
                network,
                "[{}] network = {network}: {r:?}",
                sb.name()
            );
        }
    }
}

#[test]
fn signals_and_abstract_sockets_do_not_leave_the_sandbox() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("warren-escape-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let mut outside = std::process::Command::new("sleep")
        .arg("120")
        .spawn()
        .unwrap();
    let me = std::process::id();
    for sb in CONFINING {
        if !sb.available() {
            continue;
        }
        let lab = Lab::new(sb, false);
        let lines = [
            format!("kill -0 {} && echo reached", outside.id()),
            format!("kill -0 {me} && echo reached"),
            format!("kill -TERM {} && echo reached", outside.id()),
            format!("socat -u /dev/null ABSTRACT-CONNECT:{name} && echo reached"),
        ];
        for line in &lines {
            let r = shell(&lab.ctx(), line);
            assert!(
                !stdout(&r).contains("reached"),
                "[{}] `{line}`: {r:?}",
                sb.name()
            );
        }
    }
    assert!(
        outside.try_wait().unwrap().is_none(),
        "the outside process was signalled"
    );
    let _ = outside.kill();
    let _ = outside.wait();
}

const SECRET_VAR: &str = "WARREN_ESCAPE_PROC_SECRET";
const SECRET: &str = "proc-secret-0815";

#[test]
fn no_other_process_environment_is_readable() {
    static SET: Once = Once::new();
    // Set once, before any child of this test starts; every thread reads it the same way.
    SET.call_once(|| std::env::set_var(SECRET_VAR, SECRET));
    let mut holder = std::process::Command::new("sleep")
        .arg("120")
        .env(SECRET_VAR, SECRET)
        .spawn()
        .unwrap();
    let me = std::process::id();
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        let lab = Lab::new(sb, false);
        let mut ctx = lab.ctx();
        ctx.host_env.insert(SECRET_VAR.into(), SECRET.into());
        let h = holder.id();
        let before = lab.snapshot();
        let lines = [
            format!("cat /proc/{h}/environ"),
            format!("cat /proc/{me}/environ"),
            format!("cat /proc/{h}/environ"),
            format!("tr '\\0' '\\n' < /proc/{h}/environ"),
            format!("cat /proc/{me}/environ"),
            format!("head -c 4096 /proc/{h}/maps"),
            format!("ls -l /proc/{me}/fd/"),
            format!("cat /proc/{me}/mem"),
            "cat /proc/1/environ".to_string(),
            "cat /proc/$PPID/environ".to_string(),
        ];
        for (i, line) in lines.iter().enumerate() {
            // The first two in plain sight (the analyzer asks the policy), the rest hidden.
            let line = if i < 2 {
                line.clone()
            } else {
                hidden(&lab, line)
            };
            let r = shell(&ctx, &line);
            let text = format!("{r:?}");
            assert!(!text.contains(SECRET), "[{}] `{line}` leaked", sb.name());
            // Cargo's variables are only in this process's (and its forks') environment.
            assert!(!text.contains("CARGO_"), "[{}] `{line}`: {text}", sb.name());
            assert!(!text.contains("r-xp"), "[{}] `{line}`: {text}", sb.name());
            assert_no_canary(&r);
        }
        assert_eq!(lab.snapshot(), before);
    }
    let _ = holder.kill();
    let _ = holder.wait();
}

#[test]
fn kernel_tunables_are_not_written() {
    let path = "/proc/sys/kernel/domainname";
    let original = std::fs::read_to_string(path).unwrap();
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        let lab = Lab::new(sb, false);
        // Writing the current value back changes nothing even if it succeeded.
        let body = format!("v=$(cat {path}); printf '%s\\n' \"$v\" > {path} && echo wrote");
        for line in [
            format!("printf x > {path} && echo wrote"),
            hidden(&lab, &body),
        ] {
            let r = shell(&lab.ctx(), &line);
            assert!(!stdout(&r).contains("wrote"), "[{}] {r:?}", sb.name());
            assert_eq!(std::fs::read_to_string(path).unwrap(), original);
        }
    }
}

/// What an unrestricted agent tries against protected directories (`{r}` = install root).
const MOVES: &[(&str, &str)] = &[
    ("install-root", "mv {r} {r}.gone"),
    ("agents", "mv {r}/agents {r}/agents.gone"),
    (
        "read-sibling-away-and-back",
        "mv {r}/agents/bob {r}/bob.x && echo pwned > {r}/bob.x/workspace/notes.txt; mv {r}/bob.x {r}/agents/bob",
    ),
    (
        "read-sibling-replaced",
        "cp -r {r}/agents/bob {r}/bob.copy && echo pwned > {r}/bob.copy/workspace/notes.txt && rm -rf {r}/agents/bob; mv {r}/bob.copy {r}/agents/bob",
    ),
    ("data", "mv {r}/data {r}/data.gone"),
    ("shared", "mv {r}/shared {r}/shared.gone"),
    ("rm-agents", "rm -rf {r}/agents/bob"),
    (
        "skills",
        "mkdir -p {r}/shared/skills && echo evil > {r}/shared/skills/evil.md",
    ),
    (
        "unmount-read-only",
        "umount -l {r}/agents/bob/workspace; mount -o remount,rw,bind {r}/agents/bob/workspace; echo pwned > {r}/agents/bob/workspace/notes.txt",
    ),
    (
        "replace-data",
        "mount -t tmpfs none {r}/data; umount -l {r}/data; echo pwned > {r}/data/state.txt",
    ),
];

#[test]
fn protected_directories_cannot_be_moved_or_replaced() {
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        for (name, line) in MOVES {
            let lab = Lab::new(sb, false);
            let root = lab.fx.root.display().to_string();
            let before = lab.snapshot();
            // Once with the paths in plain sight (the analyzer asks the policy), once hidden.
            let line = line.replace("{r}", &root);
            let r = shell(&lab.ctx(), &line);
            assert!(r.is_err(), "[{}] {name}: {r:?}", sb.name());
            let r = shell(&lab.ctx(), &hidden(&lab, &line));
            let what = format!("[{}] {name}", sb.name());
            let moved: Vec<PathBuf> = ["gone", "x", "copy"]
                .iter()
                .flat_map(|s| {
                    [
                        PathBuf::from(format!("{root}.{s}")),
                        lab.fx.root.join(format!("agents.{s}")),
                        lab.fx.root.join(format!("bob.{s}")),
                    ]
                })
                .filter(|p| p.exists())
                .collect();
            assert!(moved.is_empty(), "{what}: {moved:?} ({r:?})");
            // The agent may write unprotected places; the protected ones are unchanged.
            let protected = |s: Vec<(PathBuf, Option<Vec<u8>>)>| -> Vec<_> {
                s.into_iter()
                    .filter(|(p, _)| {
                        p == &lab.fx.root
                            || ["agents/bob/workspace", "data", "config.toml", "shared"]
                                .iter()
                                .any(|q| p.starts_with(lab.fx.root.join(q)))
                    })
                    .collect()
            };
            assert_eq!(
                protected(lab.snapshot()),
                protected(before),
                "{what}: {r:?}"
            );
            assert!(
                !lab.fx.root.join("shared/skills/evil.md").exists(),
                "{what}"
            );
            assert!(std::fs::read_to_string(lab.ws("bob").join("notes.txt"))
                .unwrap()
                .contains(CANARY));
        }
    }
}

#[test]
fn the_agents_own_files_still_move() {
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        for workspace_only in [true, false] {
            let lab = Lab::new(sb, workspace_only);
            lab.fx.write(&lab.ws("mallory").join("work/a/f"), "x\n");
            let r = shell(
                &lab.ctx(),
                "mv work/a work/b && cat work/b/f && rm -r work/b && echo done",
            );
            assert!(stdout(&r).contains("x\ndone"), "[{}] {r:?}", sb.name());
        }
    }
}

/// The desktop keyring holds every agent's secrets behind the session bus, whose socket sits
/// at `$XDG_RUNTIME_DIR/bus`. A real `dbus-daemon` and `gnome-keyring-daemon` listen there;
/// the same `dbus-send` that lists the keyring's collections outside the sandbox gets nothing
/// from inside, under every confining backend, with and without `workspace_only` and network.
#[test]
fn the_keyring_on_the_session_bus_is_out_of_reach() {
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let runtime = PathBuf::from(format!(
        "/run/user/{uid}/warren-escape-{}",
        std::process::id()
    ));
    if std::fs::create_dir_all(&runtime).is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must be able to make {}",
            runtime.display()
        );
        println!("skipped: cannot make {}", runtime.display());
        return;
    }
    let keyring = warren_testkit::keyring::TestKeyring::start_at(&runtime.join("bus")).unwrap();
    let query = format!(
        "dbus-send --bus='{}' --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets \
         org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Service string:Collections \
         && echo reached",
        keyring.address()
    );
    // Positive control: outside any sandbox the query lists the login collection.
    let control = std::process::Command::new("sh")
        .args(["-c", &query])
        .output()
        .unwrap();
    let control = String::from_utf8_lossy(&control.stdout).to_string();
    assert!(
        control.contains("/collection/login") && control.contains("reached"),
        "{control}"
    );
    for sb in CONFINING {
        if !sb.available() {
            continue;
        }
        for (workspace_only, network) in [(true, false), (false, false), (false, true)] {
            let lab = Lab::with_profile(sb, workspace_only, &format!("network = {network}"));
            let line = hidden(&lab, &query);
            let r = shell(&lab.ctx(), &line);
            let out = stdout(&r);
            assert!(
                !out.contains("collection") && !out.contains("reached"),
                "[{} workspace_only={workspace_only} network={network}] {r:?}",
                sb.name()
            );
        }
    }
    let lab = Lab::new(Sandbox::None, false);
    assert!(
        lab.ctx()
            .policy
            .forbidden
            .iter()
            .any(|f| runtime.starts_with(f)),
        "the runtime folder is a forbidden path"
    );
    drop(keyring);
    let _ = std::fs::remove_dir_all(&runtime);
}
