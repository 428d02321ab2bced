//! What the OS sandboxes add beyond files: no network unless allowed, signals and abstract
//! Unix sockets scoped to the sandbox, no `/proc` of other processes and no kernel tunables, no
//! process outliving its call, protected ancestors, and rule paths never followed through links.

use crate::fixture::{Fixture, FAMILY};
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use warren_policy::sandbox::{bwrap, choose, confine, landlock, EffectiveSandbox, SandboxSupport};
use warren_policy::SecurityPolicy;
use warren_types::SandboxKind;

pub struct Out {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `script` under `/bin/sh -c`, confined, and waits for it (and everything it started).
pub fn run(policy: &SecurityPolicy, sb: &EffectiveSandbox, script: &str) -> Out {
    let args: Vec<OsString> = vec!["-c".into(), script.into()];
    let mut cmd = confine(policy, sb, "/bin/sh".as_ref(), &args, &policy.workspace).unwrap();
    cmd.command_mut()
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut so = child.take_stdout().unwrap();
    let mut se = child.take_stderr().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let status = child.wait().unwrap();
    Out {
        ok: status.success(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

fn support() -> SandboxSupport {
    SandboxSupport::probe(Some("/usr/bin:/bin".as_ref()))
}

/// The sandbox, or `None` (skipped) when this machine lacks it; under CI a missing sandbox fails.
pub fn sandbox(kind: SandboxKind) -> Option<EffectiveSandbox> {
    match choose(kind, false, &support()) {
        Ok((sb, _)) => Some(sb),
        Err(e) => {
            assert!(std::env::var_os("CI").is_none(), "CI needs {kind:?}: {e}");
            println!("skipped: {e}");
            None
        }
    }
}

const KINDS: [SandboxKind; 3] = [
    SandboxKind::Landlock,
    SandboxKind::Bubblewrap,
    SandboxKind::None,
];

/// Processes whose command line contains `marker`, other than this test process.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let me = std::process::id();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if text.contains(marker) {
            found.push(pid);
        }
    }
    found
}

/// Kills whatever a failed assertion would leave behind.
pub fn kill_all(pids: &[u32]) {
    for p in pids {
        // SAFETY: SIGKILL to processes this test started (found by a unique marker).
        unsafe {
            libc::kill(*p as libc::pid_t, libc::SIGKILL);
        }
    }
}

/// A `sleep` duration unique to this call, used as the marker in its command line.
pub fn marker(tag: u32) -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("{}.{}{:03}", 900 + tag, std::process::id(), n)
}

#[test]
fn tcp_is_denied_unless_the_profile_allows_network() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let script = format!("socat -u /dev/null TCP:127.0.0.1:{port} && echo connected");
    let bind = "socat -u TCP-LISTEN:0,bind=127.0.0.1 /dev/null & sleep 0.3; kill $! && echo bound";
    for kind in [SandboxKind::Landlock, SandboxKind::Bubblewrap] {
        let Some(sb) = sandbox(kind) else { continue };
        let fx = Fixture::new(FAMILY);
        let mut p = fx.policy("frank");
        let o = run(&p, &sb, &script);
        assert!(
            !o.ok && !o.stdout.contains("connected"),
            "[{kind:?}] {}",
            o.stdout
        );
        if kind == SandboxKind::Landlock {
            // bubblewrap's private network has its own loopback; Landlock denies the bind.
            let o = run(&p, &sb, bind);
            assert!(!o.stdout.contains("bound"), "[{kind:?}] bind: {}", o.stdout);
        }
        p.risk.network = true.into();
        let o = run(&p, &sb, &script);
        assert!(
            o.ok && o.stdout.contains("connected"),
            "[{kind:?}] {}",
            o.stderr
        );
    }
}

#[test]
fn signals_and_abstract_sockets_stay_inside_the_sandbox() {
    use std::os::linux::net::SocketAddrExt;
    let name = format!("warren-test-{}", std::process::id());
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
    let mut sleeper = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = sleeper.id();
    for kind in [SandboxKind::Landlock, SandboxKind::Bubblewrap] {
        let Some(sb) = sandbox(kind) else { continue };
        let fx = Fixture::new(FAMILY);
        let p = fx.policy("frank");
        let o = run(&p, &sb, &format!("kill -0 {pid} && echo signalled"));
        assert!(!o.stdout.contains("signalled"), "[{kind:?}] {}", o.stdout);
        let o = run(
            &p,
            &sb,
            &format!("socat -u /dev/null ABSTRACT-CONNECT:{name} && echo connected"),
        );
        assert!(!o.stdout.contains("connected"), "[{kind:?}] {}", o.stdout);
        // Inside its own sandbox a command still signals its own children.
        let o = run(&p, &sb, "sleep 5 & kill $! && wait; echo own");
        assert!(o.stdout.contains("own"), "[{kind:?}] {}", o.stderr);
    }
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "the outside sleep was killed"
    );
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

#[test]
fn bubblewrap_drops_every_capability_and_keeps_proc_read_only() {
    let Some(sb) = sandbox(SandboxKind::Bubblewrap) else {
        return;
    };
    let fx = Fixture::new(FAMILY);
    fx.write(&fx.ws("bob").join("notes.txt"), "bob's notes");
    let p = fx.policy("frank");
    let o = run(&p, &sb, "grep CapEff /proc/self/status");
    assert_eq!(o.stdout.trim(), "CapEff:\t0000000000000000", "{}", o.stderr);
    let bob = fx.ws("bob").display().to_string();
    let o = run(
        &p,
        &sb,
        &format!("umount -l {bob}; mount -o remount,rw,bind {bob}; echo pwned > {bob}/notes.txt"),
    );
    assert!(!o.ok, "{}", o.stdout);
    assert_eq!(
        std::fs::read_to_string(fx.ws("bob").join("notes.txt")).unwrap(),
        "bob's notes"
    );
    let o = run(
        &p,
        &sb,
        "v=$(cat /proc/sys/vm/swappiness) && echo \"$v\" > /proc/sys/vm/swappiness && echo wrote",
    );
    assert!(!o.stdout.contains("wrote"), "{}", o.stdout);
}

#[test]
fn kernel_tunables_are_read_only_and_system_facts_readable() {
    let Some(sb) = sandbox(SandboxKind::Landlock) else {
        return;
    };
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("frank");
    // Writing the current value back would succeed for root with /proc granted writable.
    let o = run(
        &p,
        &sb,
        "v=$(cat /proc/sys/kernel/domainname) && echo \"$v\" > /proc/sys/kernel/domainname && echo wrote",
    );
    assert!(!o.stdout.contains("wrote"), "{}", o.stdout);
    let o = run(
        &p,
        &sb,
        "head -c 9 /proc/cpuinfo && cat /proc/sys/kernel/ostype",
    );
    assert!(
        o.ok && o.stdout.contains("Linux"),
        "{} {}",
        o.stdout,
        o.stderr
    );
    // No other process's entries: not the reaper's (a fork of this process), not pid 1.
    let o = run(
        &p,
        &sb,
        "cat /proc/$PPID/environ /proc/1/environ /proc/$PPID/maps",
    );
    assert!(!o.stdout.contains("PATH="), "{}", o.stdout);
    assert!(!o.stdout.contains("r-xp"), "{}", o.stdout);
}

#[test]
fn another_process_environment_is_not_readable() {
    let secret = format!("envsecret-{}", std::process::id());
    let mut sleeper = std::process::Command::new("sleep")
        .arg("60")
        .env("WARREN_TEST_SECRET", &secret)
        .spawn()
        .unwrap();
    let me = std::process::id();
    for kind in [SandboxKind::Landlock, SandboxKind::Bubblewrap] {
        let Some(sb) = sandbox(kind) else { continue };
        let fx = Fixture::new(FAMILY);
        let p = fx.policy("frank");
        for pid in [sleeper.id(), me] {
            let o = run(
                &p,
                &sb,
                &format!("cat /proc/{pid}/environ; tr '\\0' '\\n' < /proc/{pid}/environ"),
            );
            assert!(!o.stdout.contains(&secret), "[{kind:?}] pid {pid}");
            assert!(
                !o.stdout.contains("PATH="),
                "[{kind:?}] pid {pid}: {}",
                o.stdout
            );
        }
    }
    let _ = sleeper.kill();
    let _ = sleeper.wait();
}

/// Runs `script` and asserts that no process carrying `mark` survives it.
fn assert_nothing_outlives(kind: SandboxKind, script: &str, mark: &str) {
    let Some(sb) = sandbox(kind) else { return };
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("alice");
    let o = run(&p, &sb, script);
    assert!(
        o.stdout.contains("started"),
        "[{kind:?}] {} {}",
        o.stdout,
        o.stderr
    );
    let left = processes_with(mark);
    kill_all(&left);
    assert!(
        left.is_empty(),
        "[{kind:?}] `{script}` left {left:?} running"
    );
}

#[test]
fn setsid_daemons_do_not_outlive_the_call() {
    for kind in KINDS {
        let m = marker(1);
        let script = format!("setsid sleep {m} >/dev/null 2>&1 < /dev/null & echo started");
        assert_nothing_outlives(kind, &script, &m);
    }
}

#[test]
fn double_forks_do_not_outlive_the_call() {
    for kind in KINDS {
        let m = marker(2);
        let script = format!(
            "(setsid sh -c 'sleep {m} & sleep {m} &' >/dev/null 2>&1 &) ; sleep 0.2; echo started"
        );
        assert_nothing_outlives(kind, &script, &m);
    }
}

#[test]
fn terminating_a_call_ends_its_daemons() {
    for kind in KINDS {
        let Some(sb) = sandbox(kind) else { continue };
        let fx = Fixture::new(FAMILY);
        let p = fx.policy("alice");
        let m = marker(3);
        let script = format!("setsid sleep {m} >/dev/null 2>&1 & sleep {m}");
        let args: Vec<OsString> = vec!["-c".into(), script.into()];
        let mut cmd = confine(&p, &sb, "/bin/sh".as_ref(), &args, &p.workspace).unwrap();
        cmd.command_mut()
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let start = Instant::now();
        while processes_with(&m).len() < 2 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "[{kind:?}] ended early"
        );
        let status = child.terminate().unwrap();
        assert!(!status.success());
        let left = processes_with(&m);
        kill_all(&left);
        assert!(left.is_empty(), "[{kind:?}] terminate left {left:?}");
    }
}

#[test]
fn exit_codes_pass_through_the_reaper() {
    for kind in KINDS {
        let Some(sb) = sandbox(kind) else { continue };
        let fx = Fixture::new(FAMILY);
        let p = fx.policy("alice");
        let args: Vec<OsString> = vec!["-c".into(), "echo out; exit 7".into()];
        let mut cmd = confine(&p, &sb, "/bin/sh".as_ref(), &args, &p.workspace).unwrap();
        cmd.command_mut()
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let mut out = String::new();
        child
            .take_stdout()
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(7), "[{kind:?}]");
        assert_eq!(out, "out\n");
        // A confined command is spawned once (its reaper's control pipe is used up).
        assert!(cmd.spawn().is_err(), "[{kind:?}]");
    }
}

/// `mv` of each path in `targets` (then of it back) fails and leaves it in place.
fn assert_unmovable(p: &SecurityPolicy, sb: &EffectiveSandbox, targets: &[PathBuf]) {
    for t in targets {
        let moved = PathBuf::from(format!("{}.moved", t.display()));
        let o = run(p, sb, &format!("mv {} {}", t.display(), moved.display()));
        let escaped = moved.exists();
        if escaped {
            std::fs::rename(&moved, t).unwrap();
        }
        assert!(!o.ok && !escaped, "[{}] moved {}", sb.name(), t.display());
        assert!(t.exists());
    }
}

#[test]
fn protected_ancestors_cannot_be_moved() {
    for kind in [SandboxKind::Landlock, SandboxKind::Bubblewrap] {
        let Some(sb) = sandbox(kind) else { continue };
        let fx = Fixture::new(FAMILY);
        fx.write(&fx.ws("bob").join("notes.txt"), "bob's notes");
        let p = fx.policy("frank");
        let targets = [
            fx.root.clone(),
            fx.root.join("agents"),
            fx.root.join("agents/bob"),
            fx.ws("bob"),
            fx.root.join("shared"),
            fx.root.join("data"),
        ];
        assert_unmovable(&p, &sb, &targets);
        // Replacing the read-only sibling's folder by an edited copy fails too.
        let bob = fx.root.join("agents/bob");
        let o = run(
            &p,
            &sb,
            &format!(
                "cp -r {b} {b}.copy && echo pwned > {b}.copy/workspace/notes.txt && rm -rf {b} ; mv {b}.copy {b}",
                b = bob.display()
            ),
        );
        let _ = o;
        assert_eq!(
            std::fs::read_to_string(fx.ws("bob").join("notes.txt")).unwrap(),
            "bob's notes",
            "[{kind:?}]"
        );
        // The agent's own work still moves freely (under Landlock below the top of the
        // workspace: its forbidden `secrets` folder leaves the top without a rule).
        let ws = fx.ws("frank");
        let line = match kind {
            SandboxKind::Landlock => {
                fx.write(&ws.join("w/a/f.txt"), "x");
                "mv w/a w/b && cat w/b/f.txt"
            }
            _ => {
                fx.write(&ws.join("a/f.txt"), "x");
                "mv a b && cat b/f.txt"
            }
        };
        let o = run(&p, &sb, line);
        assert!(o.ok, "[{kind:?}] {}", o.stderr);
    }
}

#[test]
fn skills_created_after_planning_stay_read_only() {
    let Some(sb) = sandbox(SandboxKind::Bubblewrap) else {
        return;
    };
    let fx = Fixture::new(FAMILY);
    let skills = fx.root.join("shared/skills");
    std::fs::remove_dir(&skills).unwrap();
    let p = fx.policy("frank");
    let o = run(
        &p,
        &sb,
        &format!(
            "mkdir -p {s} ; echo evil > {s}/evil.md",
            s = skills.display()
        ),
    );
    assert!(!skills.join("evil.md").exists(), "{}", o.stderr);
}

#[test]
fn a_rule_path_swapped_for_a_symlink_is_not_followed() {
    let fx = Fixture::new(FAMILY);
    let ws = fx.ws("alice");
    let p = fx.policy("alice");
    // The read-write sibling dave is planned as a directory, then swapped for a link to data/.
    let dave = fx.ws("dave");
    let _ = p;
    let mut cfg = fx.config.clone();
    cfg.agents
        .get_mut("alice")
        .unwrap()
        .workspace
        .access
        .insert("dave".into(), warren_types::AccessMode::ReadWrite);
    let p = SecurityPolicy::for_agent(&cfg, "alice", &fx.env()).unwrap();
    p.prepare().unwrap();
    let plan = warren_policy::sandbox::fs_plan(&p);
    assert!(plan.iter().any(|g| g.path == dave && g.write));
    let layered = warren_policy::sandbox::mount_plan(&p);
    std::fs::remove_dir_all(&dave).unwrap();
    std::os::unix::fs::symlink(fx.root.join("data"), &dave).unwrap();
    assert!(landlock::open_rule_path(&dave, true).is_none());
    let err = bwrap::verify(&layered).unwrap_err();
    assert!(err.to_string().contains("sandbox_path_changed"), "{err}");
    if sandbox(SandboxKind::Landlock).is_some() {
        let mut cmd = std::process::Command::new("/bin/sh");
        cmd.args(["-c", &format!("echo pwned > {}/pwned", dave.display())])
            .current_dir(&ws)
            .stderr(std::process::Stdio::null());
        let _fd = landlock::apply(&plan, landlock::TcpRule::None, &mut cmd).unwrap();
        let _ = cmd.status().unwrap();
        assert!(!fx.root.join("data/pwned").exists());
    }
}

#[test]
fn the_test_process_is_marked_non_dumpable() {
    warren_policy::protect_process();
    let dumpable = rustix_dumpable();
    assert_eq!(dumpable, 0);
    assert!(Path::new("/proc/self/status").exists());
}

fn rustix_dumpable() -> i32 {
    // SAFETY: PR_GET_DUMPABLE takes no pointer.
    unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) }
}

/// Moving a folder above a forbidden file would make the file readable at the new place: under
/// both backends and with `workspace_only` on and off, such folders cannot be renamed, while a
/// folder with nothing closed beneath it still can (the positive control).
#[test]
fn folders_above_a_forbidden_file_stay_in_place() {
    let text = r#"
[risk_profiles.default]
forbidden_paths = ["nested/a/key.txt"]
allowed_commands = ["*"]
[agents.alice]
risk_profile = "default"
[agents.frank]
risk_profile = "default"
[agents.frank.workspace]
unrestricted_filesystem = true
"#;
    for kind in [SandboxKind::Landlock, SandboxKind::Bubblewrap] {
        let Some(sb) = sandbox(kind) else { continue };
        for alias in ["alice", "frank"] {
            let fx = Fixture::new(text);
            let ws = fx.ws(alias);
            fx.write(&ws.join("nested/a/key.txt"), "closed");
            fx.write(&ws.join("w/free/f.txt"), "free");
            let p = fx.policy(alias);
            let o = run(&p, &sb, "mv w/free w/moved && cat w/moved/f.txt");
            assert!(o.ok, "[{kind:?} {alias}] control: {}", o.stderr);
            for line in ["mv nested moved", "mv nested/a nested/b"] {
                let o = run(&p, &sb, line);
                assert!(!o.ok, "[{kind:?} {alias}] `{line}` succeeded");
            }
            assert_eq!(
                std::fs::read_to_string(ws.join("nested/a/key.txt")).unwrap(),
                "closed"
            );
            assert!(!ws.join("moved").exists() && !ws.join("nested/b").exists());
        }
    }
}

/// The logs folder is runtime state: an unrestricted agent can neither read the day's log nor
/// put a link in its place (which would carry Warren's log lines into another file).
#[test]
fn the_logs_are_runtime_state() {
    let fx = Fixture::new(FAMILY);
    let logs = fx.root.join("logs");
    fx.write(
        &logs.join("warren.2026-01-01.jsonl"),
        "{\"message\":\"logged\"}\n",
    );
    let p = fx.policy("frank");
    for access in [warren_policy::Access::Read, warren_policy::Access::Write] {
        let d = p.check(&logs.join("warren.2026-01-01.jsonl"), access);
        assert_eq!(d.rule, warren_policy::Rule::RuntimeState, "{access}");
    }
    for kind in [SandboxKind::Landlock, SandboxKind::Bubblewrap] {
        let Some(sb) = sandbox(kind) else { continue };
        // Positive control: the same lines work on the agent's own folder.
        // (One level down: under Landlock the workspace top, above `secrets`, has no rule.)
        fx.write(&fx.ws("frank").join("own/.keep"), "");
        let o = run(&p, &sb, "echo x > own/f && ln -sf f own/l && cat own/l");
        assert!(o.ok, "[{kind:?}] control: {}", o.stderr);
        let l = logs.display();
        for line in [
            format!("cat {l}/warren.2026-01-01.jsonl"),
            format!("ln -sf /etc/hostname {l}/warren.2026-01-02.jsonl"),
            format!("rm {l}/warren.2026-01-01.jsonl"),
        ] {
            let o = run(&p, &sb, &line);
            assert!(!o.ok && !o.stdout.contains("logged"), "[{kind:?}] `{line}`");
        }
        assert!(!logs.join("warren.2026-01-02.jsonl").exists());
        assert!(logs.join("warren.2026-01-01.jsonl").exists());
    }
}

/// Nothing new is made directly in the install root, nor in a folder that would hold a
/// protected path not made yet (here `logs/`, before Warren's first log line): under both
/// backends an unrestricted agent cannot plant it, while its own workspace stays writable.
#[test]
fn missing_runtime_state_cannot_be_planted() {
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("frank");
    assert!(!fx.root.join("logs").exists());
    for kind in [SandboxKind::Landlock, SandboxKind::Bubblewrap] {
        let Some(sb) = sandbox(kind) else { continue };
        fx.write(&fx.ws("frank").join("own/.keep"), "");
        let o = run(&p, &sb, "echo x > own/made && cat own/made");
        assert!(o.ok, "[{kind:?}] control: {}", o.stderr);
        let r = fx.root.display();
        for line in [
            format!("mkdir {r}/logs"),
            format!("ln -s /etc/hostname {r}/logs"),
            format!("echo x > {r}/.config.toml.tmp-planted"),
        ] {
            let o = run(&p, &sb, &line);
            assert!(!o.ok, "[{kind:?}] `{line}` succeeded");
        }
        assert!(std::fs::symlink_metadata(fx.root.join("logs")).is_err());
        assert!(!fx.root.join(".config.toml.tmp-planted").exists());
    }
}

/// Every process of a tool call, a `setsid` daemon included, descends from its reaper while the
/// call runs, under every backend; this test process does not (the approvals inbox refuses
/// answers on that difference).
#[test]
fn every_process_of_a_call_is_known_to_be_inside_it() {
    use warren_policy::sandbox::inside_a_tool_call;
    assert!(
        !inside_a_tool_call(std::process::id()),
        "the test process is outside"
    );
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("frank");
    for kind in [
        SandboxKind::None,
        SandboxKind::Landlock,
        SandboxKind::Bubblewrap,
    ] {
        let Some(sb) = sandbox(kind) else { continue };
        let mark = marker(7);
        let script = format!("setsid sleep {mark} & sleep {mark}");
        let args: Vec<OsString> = vec!["-c".into(), script.into()];
        let mut cmd = confine(&p, &sb, "/bin/sh".as_ref(), &args, &p.workspace).unwrap();
        cmd.command_mut()
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let start = Instant::now();
        let mut pids = processes_with(&mark);
        while pids.len() < 2 && start.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
            pids = processes_with(&mark);
        }
        assert!(pids.len() >= 2, "[{}] {pids:?}", sb.name());
        for pid in &pids {
            assert!(
                inside_a_tool_call(*pid),
                "[{}] pid {pid} looks outside",
                sb.name()
            );
        }
        child.terminate().unwrap();
    }
    // A process that is gone counts as inside (fails closed).
    assert!(inside_a_tool_call(u32::MAX - 1));
}
