//! What no file rule can express, attacked from a real confined child under each backend:
//! datagrams out without network, pathname Unix sockets outside every grant, metadata changes
//! on closed files, writes that would vanish, devices, and the system calls every confined child
//! is refused. Every denial is counted only after a positive control (the same probe outside
//! the sandbox, or on the agent's own files) shows that the probe works.

use crate::confinement::{run, sandbox, Out};
use crate::fixture::{Fixture, FAMILY};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, Instant};
use warren_policy::sandbox::EffectiveSandbox;
use warren_policy::SecurityPolicy;
use warren_types::SandboxKind;

const CONFINING: [SandboxKind; 2] = [SandboxKind::Landlock, SandboxKind::Bubblewrap];

/// Writes a Python probe into the agent's workspace (readable under every backend) and runs it.
fn python(p: &SecurityPolicy, sb: &EffectiveSandbox, name: &str, code: &str, args: &str) -> Out {
    let dir = p.workspace.join("probes");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), code).unwrap();
    run(p, sb, &format!("python3 probes/{name} {args}"))
}

const UDP: &str = r#"
import socket, sys
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"leak", ("127.0.0.1", int(sys.argv[1])))
    print("sent")
except OSError as e:
    print("refused", e.errno)
"#;

/// Whether a datagram reaches `sock` within a short wait.
fn received(sock: &std::net::UdpSocket) -> bool {
    sock.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut buf = [0u8; 16];
    matches!(sock.recv(&mut buf), Ok(4) if &buf[..4] == b"leak")
}

#[test]
fn no_datagram_leaves_without_network() {
    let fx = Fixture::new(FAMILY);
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = sock.local_addr().unwrap().port().to_string();
    for alias in ["alice", "frank"] {
        let p = fx.policy(alias);
        // Positive control: the probe sends when nothing confines it.
        let o = python(&p, &EffectiveSandbox::None, "udp.py", UDP, &port);
        assert!(o.stdout.contains("sent"), "{}{}", o.stdout, o.stderr);
        assert!(received(&sock), "the control datagram arrived");
        for kind in CONFINING {
            let Some(sb) = sandbox(kind) else { continue };
            let o = python(&p, &sb, "udp.py", UDP, &port);
            assert!(
                o.stdout.contains("refused 1"),
                "[{} {alias}] the socket is refused (EPERM): {}{}",
                sb.name(),
                o.stdout,
                o.stderr
            );
            assert!(
                !received(&sock),
                "[{} {alias}] a datagram got out",
                sb.name()
            );
            // With network on, the same probe sends (the filter follows the profile).
            let mut open = p.clone();
            open.risk.network = true.into();
            let o = python(&open, &sb, "udp.py", UDP, &port);
            assert!(
                o.stdout.contains("sent"),
                "[{}] {}{}",
                sb.name(),
                o.stdout,
                o.stderr
            );
            assert!(
                received(&sock),
                "[{}] with network the datagram arrives",
                sb.name()
            );
        }
    }
}

const UNIX: &str = r#"
import socket, sys
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    s.sendall(b"hello")
    print("connected")
except OSError as e:
    print("refused", e.errno)
"#;

/// A listener at `path` counting the connections that send something, until dropped.
struct Listener {
    count: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Listener {
    fn at(path: &Path) -> Self {
        use std::sync::atomic::Ordering;
        let l = std::os::unix::net::UnixListener::bind(path).unwrap();
        l.set_nonblocking(true).unwrap();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (c, s) = (count.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                match l.accept() {
                    Ok((mut conn, _)) => {
                        conn.set_nonblocking(false).unwrap();
                        conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                        let mut b = [0u8; 5];
                        if conn.read_exact(&mut b).is_ok() {
                            c.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Listener {
            count,
            stop,
            thread: Some(thread),
        }
    }

    /// Connections seen so far (after a short grace for one in flight).
    fn seen(&self) -> usize {
        let deadline = Instant::now() + Duration::from_millis(100);
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.count.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[test]
fn no_pathname_socket_outside_the_grants() {
    let fx = Fixture::new(FAMILY);
    // alice may not touch the home folder; frank may, but not `~/secret` (forbidden).
    std::fs::create_dir_all(fx.home.join("secret")).unwrap();
    let cases = [
        ("alice", fx.home.join("bus")),
        ("frank", fx.home.join("secret/bus")),
        ("alice", fx.ws("erin").join("agent.sock")),
    ];
    for (alias, path) in &cases {
        let listener = Listener::at(path);
        let p = fx.policy(alias);
        let target = path.display().to_string();
        let o = python(&p, &EffectiveSandbox::None, "unix.py", UNIX, &target);
        assert!(
            o.stdout.contains("connected"),
            "control: {}{}",
            o.stdout,
            o.stderr
        );
        assert_eq!(listener.seen(), 1, "the control connection arrived");
        for kind in CONFINING {
            let Some(sb) = sandbox(kind) else { continue };
            let o = python(&p, &sb, "unix.py", UNIX, &target);
            assert!(
                o.stdout.contains("refused"),
                "[{} {alias}] {target}: {}{}",
                sb.name(),
                o.stdout,
                o.stderr
            );
            assert_eq!(
                listener.seen(),
                1,
                "[{} {alias}] reached {target}",
                sb.name()
            );
        }
    }
}

#[test]
fn unix_sockets_the_policy_allows_still_work_under_bubblewrap() {
    let Some(sb) = sandbox(SandboxKind::Bubblewrap) else {
        return;
    };
    let fx = Fixture::new(FAMILY);
    // dave: workspace_only and no read-only sibling, so every socket in his view is his own.
    let p = fx.policy("dave");
    let listener = Listener::at(&p.workspace.join("own.sock"));
    let o = python(&p, &sb, "unix.py", UNIX, "own.sock");
    assert!(o.stdout.contains("connected"), "{}{}", o.stdout, o.stderr);
    assert_eq!(listener.seen(), 1);
    // A read-only mount does not stop connect(): with bob's workspace mounted read-only, alice
    // gets no Unix socket at all, so bob's socket stays closed (the control: outside, it opens).
    let bob_sock = fx.ws("bob").join("agent.sock");
    let bob = Listener::at(&bob_sock);
    let alice = fx.policy("alice");
    let target = bob_sock.display().to_string();
    let o = python(&alice, &EffectiveSandbox::None, "unix.py", UNIX, &target);
    assert!(
        o.stdout.contains("connected"),
        "control: {}{}",
        o.stdout,
        o.stderr
    );
    assert_eq!(bob.seen(), 1);
    for who in ["alice", "frank"] {
        let q = fx.policy(who);
        let o = python(&q, &sb, "unix.py", UNIX, &target);
        assert!(
            o.stdout.contains("refused 1"),
            "[{who}] {}{}",
            o.stdout,
            o.stderr
        );
        assert_eq!(bob.seen(), 1, "[{who}] reached bob's socket");
    }
    // Landlock cannot tell sockets apart: no Unix socket at all there (documented).
    if let Some(ll) = sandbox(SandboxKind::Landlock) {
        let o = python(&p, &ll, "unix.py", UNIX, "own.sock");
        assert!(o.stdout.contains("refused 1"), "{}{}", o.stdout, o.stderr);
    }
}

const DGRAM_PAIR: &str = r#"
import socket, sys
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"x", sys.argv[1])
    print("sent")
except OSError as e:
    print("refused", e.errno)
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.sendall(b"x"); print("stream pair", b.recv(1))
except OSError as e:
    print("stream refused", e.errno)
"#;

/// Where Unix sockets are refused, a datagram socket pair is too (it could send anywhere
/// afterwards); a stream pair, connected to itself only, still works.
#[test]
fn datagram_socket_pairs_follow_the_unix_socket_rule() {
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("alice");
    let target = fx.home.join("dgram.sock");
    let _server = std::os::unix::net::UnixDatagram::bind(&target).unwrap();
    let target = target.display().to_string();
    let o = python(&p, &EffectiveSandbox::None, "pair.py", DGRAM_PAIR, &target);
    assert!(
        o.stdout.contains("sent"),
        "control: {}{}",
        o.stdout,
        o.stderr
    );
    for kind in CONFINING {
        let Some(sb) = sandbox(kind) else { continue };
        let o = python(&p, &sb, "pair.py", DGRAM_PAIR, &target);
        assert!(
            o.stdout.contains("refused 1"),
            "[{}] {}{}",
            sb.name(),
            o.stdout,
            o.stderr
        );
        assert!(
            o.stdout.contains("stream pair"),
            "[{}] {}{}",
            sb.name(),
            o.stdout,
            o.stderr
        );
    }
}

const META: &str = r#"
import os, sys
for path in sys.argv[1:]:
    for name, f in [("chmod", lambda: os.chmod(path, 0o777)),
                    ("utime", lambda: os.utime(path, (1, 1))),
                    ("xattr", lambda: os.setxattr(path, "user.warren", b"1"))]:
        try:
            f()
            print(name, "changed", path)
        except OSError as e:
            print(name, "refused", e.errno, path)
"#;

/// Mode, mtime and the `user.warren` attribute of `path`.
fn meta_of(path: &Path) -> (u32, i64, bool) {
    let m = std::fs::metadata(path).unwrap();
    let x = std::process::Command::new("python3")
        .args([
            "-c",
            "import os,sys\ntry:\n os.getxattr(sys.argv[1],'user.warren');print(1)\nexcept OSError:print(0)",
        ])
        .arg(path)
        .output()
        .unwrap();
    (
        m.mode(),
        m.mtime(),
        String::from_utf8_lossy(&x.stdout).trim() == "1",
    )
}

#[test]
fn metadata_of_closed_files_does_not_change() {
    let fx = Fixture::new(FAMILY);
    let bob = fx.ws("bob").join("readme.md");
    fx.write(&bob, "bob's");
    let config = fx.root.join("config.toml");
    for f in [&bob, &config] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    // Positive control: the probe changes all three on a scratch file outside any sandbox.
    let scratch = fx.root.join("scratch.txt");
    fx.write(&scratch, "x");
    let p = fx.policy("alice");
    let before = meta_of(&scratch);
    let o = python(
        &p,
        &EffectiveSandbox::None,
        "meta.py",
        META,
        &scratch.display().to_string(),
    );
    let after = meta_of(&scratch);
    assert!(
        o.stdout.contains("chmod changed") && o.stdout.contains("utime changed"),
        "{}",
        o.stdout
    );
    assert_ne!((before.0, before.1), (after.0, after.1));
    let xattrs = o.stdout.contains("xattr changed");

    for alias in ["alice", "frank"] {
        let p = fx.policy(alias);
        for kind in CONFINING {
            let Some(sb) = sandbox(kind) else { continue };
            let before: Vec<_> = [&bob, &config].iter().map(|f| meta_of(f)).collect();
            let args = format!("{} {}", bob.display(), config.display());
            let o = python(&p, &sb, "meta.py", META, &args);
            assert!(
                !o.stdout.contains("changed"),
                "[{} {alias}] {}{}",
                sb.name(),
                o.stdout,
                o.stderr
            );
            let after: Vec<_> = [&bob, &config].iter().map(|f| meta_of(f)).collect();
            assert_eq!(before, after, "[{} {alias}] metadata changed", sb.name());
            if xattrs {
                assert!(!after.iter().any(|m| m.2));
            }
            // The agent's own file: bubblewrap lets metadata change where writing is allowed;
            // Landlock alone refuses it everywhere (it has no right to grant it with).
            let own = p.workspace.join("probes/own.txt");
            fx.write(&own, "mine");
            let o = python(&p, &sb, "meta.py", META, "probes/own.txt");
            match sb {
                EffectiveSandbox::Bubblewrap { .. } => {
                    assert!(
                        o.stdout.contains("chmod changed"),
                        "{}{}",
                        o.stdout,
                        o.stderr
                    );
                }
                _ => assert!(
                    o.stdout.contains("chmod refused 1"),
                    "{}{}",
                    o.stdout,
                    o.stderr
                ),
            }
        }
    }
}

#[test]
fn writes_outside_the_mounts_fail_instead_of_vanishing() {
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("alice");
    for kind in CONFINING {
        let Some(sb) = sandbox(kind) else { continue };
        // Positive control: the same shell writes in the workspace.
        let o = run(&p, &sb, "echo kept > sub_ok && cat sub_ok");
        let top_ok = o.ok;
        for line in [
            "echo x > /vanished.txt",
            "mkdir /opt/vanished",
            "echo x > /tmp/vanished.txt",
            "echo x > /dev/shm/vanished",
            "mkdir /dev/vanished",
            "echo x > /etc/vanished",
        ] {
            let o = run(&p, &sb, line);
            assert!(!o.ok, "[{}] `{line}` reported success", sb.name());
        }
        assert!(!Path::new("/vanished.txt").exists());
        assert!(!Path::new("/tmp/vanished.txt").exists());
        // Under Landlock the top of this workspace has no rule (a forbidden folder is beneath).
        if matches!(sb, EffectiveSandbox::Bubblewrap { .. }) {
            assert!(top_ok, "{}", o.stderr);
        }
    }
}

#[test]
fn the_posix_devices_are_read_and_written_and_nothing_else() {
    let fx = Fixture::new(FAMILY);
    for alias in ["alice", "frank"] {
        let p = fx.policy(alias);
        for d in warren_policy::DEVICES {
            assert!(p.check(Path::new(d), warren_policy::Access::Write).allowed);
        }
        for kind in CONFINING {
            let Some(sb) = sandbox(kind) else { continue };
            let o = run(
                &p,
                &sb,
                "echo x > /dev/null && echo x > /dev/urandom && echo x > /dev/random && \
                 echo x > /dev/zero && head -c 2 /dev/zero | wc -c && (echo x > /dev/full || echo full)",
            );
            assert!(o.ok, "[{} {alias}] {}", sb.name(), o.stderr);
            assert!(
                o.stdout.contains('2') && o.stdout.contains("full"),
                "{}",
                o.stdout
            );
            // A terminal or a disk is not a POSIX device of the rule.
            let o = run(&p, &sb, "echo x > /dev/tty");
            assert!(!o.ok, "[{} {alias}] /dev/tty opened", sb.name());
        }
    }
}

const CALLS: &str = r#"
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    r = libc.syscall(nr, *args)
    return 0 if r >= 0 else ctypes.get_errno()
NR = {"x86_64": dict(io_uring_setup=425, keyctl=250, ptrace=101, perf_event_open=298,
                     clone3=435, process_vm_readv=310, unshare=272),
      "aarch64": dict(io_uring_setup=425, keyctl=219, ptrace=117, perf_event_open=241,
                      clone3=435, process_vm_readv=270, unshare=97)}[os.uname().machine]
print("io_uring_setup", call(NR["io_uring_setup"], 0, None))
print("keyctl", call(NR["keyctl"], 0, -3, 0))
print("ptrace", call(NR["ptrace"], 12, os.getppid(), 0, 0))
print("perf_event_open", call(NR["perf_event_open"], None, 0, -1, -1, 0))
print("clone3", call(NR["clone3"], None, 0))
print("process_vm_readv", call(NR["process_vm_readv"], os.getpid(), None, 0, None, 0, 0))
print("unshare_user", call(NR["unshare"], 0x10000000))
print("x32_getpid", call(0x40000000 + 39) if os.uname().machine == "x86_64" else 1)
"#;

fn results(out: &str) -> std::collections::BTreeMap<String, i32> {
    out.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(' ')?;
            Some((k.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

#[test]
fn every_confined_child_is_refused_the_dangerous_calls() {
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("alice");
    // Positive control: unconfined, none of these answers EPERM (or ENOSYS for clone3).
    let o = python(&p, &EffectiveSandbox::None, "calls.py", CALLS, "");
    let free = results(&o.stdout);
    assert_eq!(free.len(), 8, "{}{}", o.stdout, o.stderr);
    for call in [
        "io_uring_setup",
        "keyctl",
        "ptrace",
        "perf_event_open",
        "process_vm_readv",
    ] {
        assert_ne!(free[call], libc::EPERM, "control {call}");
    }
    assert_ne!(free["clone3"], libc::ENOSYS);
    #[cfg(target_arch = "x86_64")]
    assert_ne!(
        free["x32_getpid"],
        libc::EPERM,
        "control: the x32 table answers by itself"
    );
    for kind in CONFINING {
        let Some(sb) = sandbox(kind) else { continue };
        let o = python(&p, &sb, "calls.py", CALLS, "");
        let r = results(&o.stdout);
        assert_eq!(r.len(), 8, "[{}] {}{}", sb.name(), o.stdout, o.stderr);
        for (call, errno) in &r {
            let want = if call == "clone3" {
                libc::ENOSYS
            } else {
                libc::EPERM
            };
            assert_eq!(*errno, want, "[{}] {call}", sb.name());
        }
        // Threads and processes still start (clone, and libc's fallback from clone3).
        let o = run(&p, &sb, "python3 -c 'import threading; t=threading.Thread(target=print, args=(\"thread\",)); t.start(); t.join()' && (sleep 0 & wait) && echo forked");
        assert!(
            o.ok && o.stdout.contains("thread") && o.stdout.contains("forked"),
            "[{}] {}",
            sb.name(),
            o.stderr
        );
    }
}

const PTMX: &str = r#"
import os
try:
    os.close(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
    print("opened")
except OSError as e:
    print("refused", e.errno)
"#;

/// Landlock as the second layer inside bubblewrap: what the view alone lets through and
/// `authorize()` denies (a new pseudo-terminal from bwrap's own devpts) is refused by the rules,
/// while the sandbox's own `/proc` stays readable (the layer is not stricter than the view).
#[test]
fn landlock_holds_inside_bubblewrap() {
    use warren_policy::sandbox::SecondLayer;
    let fx = Fixture::new(FAMILY);
    let Some(sb) = sandbox(SandboxKind::Bubblewrap) else {
        return;
    };
    let EffectiveSandbox::Bubblewrap { program, landlock } = &sb else {
        unreachable!()
    };
    assert!(
        matches!(landlock, SecondLayer::InForce { .. }),
        "the helper is built with this crate's tests: {landlock:?}"
    );
    let view_only = EffectiveSandbox::Bubblewrap {
        program: program.clone(),
        landlock: SecondLayer::Missing {
            reason: "test".into(),
        },
    };
    for alias in ["alice", "frank"] {
        let p = fx.policy(alias);
        // alice (workspace_only) may not open a new terminal; frank (unrestricted) may, like
        // any path the ordinary rules allow: the layer agrees with authorize() both ways.
        let allowed = p
            .check(Path::new("/dev/ptmx"), warren_policy::Access::Write)
            .allowed;
        assert_eq!(allowed, alias == "frank");
        // Positive control: the view alone opens it.
        let o = python(&p, &view_only, "ptmx.py", PTMX, "");
        assert!(
            o.stdout.contains("opened"),
            "[{alias}] {}{}",
            o.stdout,
            o.stderr
        );
        let o = python(&p, &sb, "ptmx.py", PTMX, "");
        let want = if allowed { "opened" } else { "refused 13" };
        assert!(
            o.stdout.contains(want),
            "[{alias}] Landlock inside bubblewrap: {want}: {}{}",
            o.stdout,
            o.stderr
        );
        // The program runs as itself (the helper executed it), in its own pid namespace, and
        // reads its own /proc.
        let o = run(
            &p,
            &sb,
            "grep -c . /proc/self/status && echo pid $$ && ls /proc/self/fd",
        );
        assert!(o.ok, "[{alias}] {}{}", o.stdout, o.stderr);
        // Nothing Warren passed (the ruleset, the helper) reaches the program.
        let fds: Vec<&str> = o
            .stdout
            .lines()
            .skip_while(|l| !l.starts_with("pid "))
            .skip(1)
            .collect();
        assert!(
            fds.iter().all(|f| ["0", "1", "2", "3"].contains(f)),
            "[{alias}] inherited descriptors: {fds:?}"
        );
        assert!(
            sb.enforcement(&p)
                .layers
                .iter()
                .any(|l| l.starts_with("Landlock ABI") && l.contains("inside bubblewrap")),
            "{:?}",
            sb.enforcement(&p)
        );
        let missing = view_only.enforcement(&p);
        assert!(
            missing
                .not_enforced
                .iter()
                .any(|l| l.contains("no Landlock layer inside bubblewrap")),
            "{missing:?}"
        );
    }
}

/// The helper runs nothing when it cannot enter the ruleset it is given (a descriptor that is
/// no ruleset), nor when it is called wrongly: exit 125, the program never started.
#[test]
fn the_helper_runs_nothing_when_it_cannot_confine() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("ran");
    let helper = env!("CARGO_BIN_EXE_warren-confine");
    // Positive control: the same program with the same arguments does run.
    let ok = std::process::Command::new("/bin/touch")
        .arg(&mark)
        .status()
        .unwrap();
    assert!(ok.success() && mark.exists());
    std::fs::remove_file(&mark).unwrap();
    for args in [
        vec!["0", "--", "/bin/touch"],
        vec!["999", "--", "/bin/touch"],
        vec!["x", "--", "/bin/touch"],
        vec!["0", "/bin/touch"],
    ] {
        let o = std::process::Command::new(helper)
            .args(&args)
            .arg(&mark)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(125), "{args:?}");
        assert!(!mark.exists(), "{args:?}: the program ran");
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(said.contains("warren-confine"), "{args:?}: {said}");
    }
}
