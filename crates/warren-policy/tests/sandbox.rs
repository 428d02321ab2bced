//! Real child processes under Landlock and bubblewrap: what must work inside, what must fail,
//! and the test process itself staying unrestricted.

use crate::fixture::{Fixture, FAMILY};
use std::ffi::OsString;
use std::path::Path;
use warren_policy::sandbox::{choose, confine, EffectiveSandbox, SandboxError, SandboxSupport};
use warren_policy::SecurityPolicy;
use warren_types::SandboxKind;

struct Out {
    ok: bool,
    stdout: String,
    stderr: String,
}

fn run(policy: &SecurityPolicy, sb: &EffectiveSandbox, script: &str) -> Out {
    let args: Vec<OsString> = vec!["-c".into(), script.into()];
    let mut cmd = confine(policy, sb, "/bin/sh".as_ref(), &args, &policy.workspace).unwrap();
    cmd.command_mut()
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let read = |r: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut r) = r {
                let _ = r.read_to_string(&mut s);
            }
            s
        })
    };
    let out = read(child.take_stdout().map(|s| Box::new(s) as _));
    let err = read(child.take_stderr().map(|s| Box::new(s) as _));
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

fn sandbox_of(kind: SandboxKind) -> Option<EffectiveSandbox> {
    match choose(kind, false, &support()) {
        Ok((sb, _)) => Some(sb),
        Err(e) => {
            // A sandbox test that skips proves nothing: CI must have every sandbox.
            assert!(std::env::var_os("CI").is_none(), "CI needs {kind:?}: {e}");
            println!("skipped: {e}");
            None
        }
    }
}

fn exercise(kind: SandboxKind) {
    let Some(sb) = sandbox_of(kind) else { return };
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("alice");
    let ws = fx.ws("alice");
    let bob = fx.ws("bob");
    let carol = fx.ws("carol");
    let erin = fx.ws("erin");
    fx.write(&ws.join("file.txt"), "inside");
    fx.write(&bob.join("readme.md"), "bob says hi");
    fx.write(&erin.join("private.txt"), "erin's secret");
    fx.write(&carol.join("existing.txt"), "carol's");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    let home = fx.home.display().to_string();
    let (b, c, e) = (bob.display(), carol.display(), erin.display());

    // Inside works. Under Landlock the top of the workspace has no rule of its own (the
    // forbidden `secrets` folder is beneath it, and Landlock rights are inherited): new files go
    // one level down there.
    let top = if matches!(sb, EffectiveSandbox::Landlock { .. }) {
        fx.write(&ws.join("sub/file.txt"), "inside");
        "sub/"
    } else {
        ""
    };
    let checks: Vec<(String, Option<&str>)> = vec![
        ("cat file.txt".into(), Some("inside")),
        (
            format!("echo written > {top}new.txt && cat {top}new.txt"),
            Some("written"),
        ),
        (format!("cat {b}/readme.md"), Some("bob says hi")),
        ("head -c 8 /dev/urandom | wc -c".into(), Some("8")),
        (
            "ls /nonexistent 2>/dev/null; echo after".into(),
            Some("after"),
        ),
        (
            "echo x > /dev/null && head -c 3 /dev/zero | wc -c".into(),
            Some("3"),
        ),
        ("head -c 4 /dev/random | wc -c".into(), Some("4")),
        (
            format!("mv {top}file.txt sub/moved.txt && cat sub/moved.txt"),
            Some("inside"),
        ),
    ];
    for (script, want) in &checks {
        let o = run(&p, &sb, script);
        assert!(o.ok, "[{}] `{script}` should work: {}", sb.name(), o.stderr);
        if let Some(w) = want {
            assert_eq!(o.stdout.trim(), *w, "[{}] `{script}`", sb.name());
        }
    }
    assert_eq!(
        std::fs::read_to_string(ws.join(format!("{top}new.txt"))).unwrap(),
        "written\n"
    );
    assert!(ws.join("sub/moved.txt").exists() && !ws.join(format!("{top}file.txt")).exists());
    // The forbidden folder did not exist: it was made (empty) so that the sandbox hides it, and
    // nothing can be put in it.
    assert!(ws.join("secrets").is_dir());
    let o = run(&p, &sb, "echo x > secrets/planted; ls secrets");
    assert!(!o.ok, "[{}] {}", sb.name(), o.stdout);
    assert!(!ws.join("secrets/planted").exists());

    // Outside fails.
    let denied = [
        format!("cat {e}/private.txt"),
        format!("echo x > {b}/w.txt"),
        format!("echo x > {home}/w.txt"),
        format!("cat {c}/existing.txt"),
        format!("cat {}/config.toml", fx.root.display()),
        format!("echo x > {}/data/x", fx.root.display()),
    ];
    for script in &denied {
        let o = run(&p, &sb, script);
        assert!(
            !o.ok,
            "[{}] `{script}` should fail, printed {:?}",
            sb.name(),
            o.stdout
        );
        assert!(!o.stdout.contains("secret") && !o.stdout.contains("carol's"));
    }
    assert!(!bob.join("w.txt").exists());
    assert!(!fx.home.join("w.txt").exists());
    assert!(!fx.root.join("data/x").exists());

    // Write-only sibling: writable under Landlock; not mounted at all under bubblewrap.
    let o = run(&p, &sb, &format!("echo dropped > {c}/drop.txt"));
    match sb {
        EffectiveSandbox::Landlock { .. } => {
            assert!(o.ok, "landlock: write-only sibling writable: {}", o.stderr);
            assert_eq!(
                std::fs::read_to_string(carol.join("drop.txt")).unwrap(),
                "dropped\n"
            );
        }
        _ => {
            assert!(!o.ok, "bubblewrap: write-only sibling is not mounted");
            assert!(!carol.join("drop.txt").exists());
        }
    }

    // The test process itself is never restricted.
    std::fs::write(erin.join("after.txt"), "still free").unwrap();
    assert_eq!(
        std::fs::read_to_string(erin.join("private.txt")).unwrap(),
        "erin's secret"
    );
    let real_home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    if let Some(h) = real_home.filter(|h| h.is_dir()) {
        let probe = h.join(format!(".warren-sandbox-probe-{}", std::process::id()));
        std::fs::write(&probe, "x").unwrap();
        std::fs::remove_file(&probe).unwrap();
        // ... while a sandboxed child cannot write there.
        let o = run(&p, &sb, &format!("echo x > {}", probe.display()));
        assert!(
            !o.ok && !probe.exists(),
            "[{}] child wrote $HOME",
            sb.name()
        );
    }
}

#[test]
fn landlock_confines_the_child_only() {
    exercise(SandboxKind::Landlock);
}

#[test]
fn bubblewrap_confines_the_child_only() {
    exercise(SandboxKind::Bubblewrap);
}

#[test]
fn unrestricted_agent_keeps_its_denials_under_landlock() {
    unrestricted_agent_keeps_its_denials(SandboxKind::Landlock);
}

#[test]
fn unrestricted_agent_keeps_its_denials_under_bubblewrap() {
    unrestricted_agent_keeps_its_denials(SandboxKind::Bubblewrap);
}

#[test]
fn existing_forbidden_dir_inside_the_workspace_is_closed() {
    for kind in [SandboxKind::Landlock, SandboxKind::Bubblewrap] {
        let Some(sb) = sandbox_of(kind) else { continue };
        let fx = Fixture::new(FAMILY);
        let ws = fx.ws("alice");
        fx.write(&ws.join("secrets/key"), "hunter2");
        fx.write(&ws.join("src/main.rs"), "fn main() {}");
        let p = fx.policy("alice");
        let o = run(&p, &sb, "cat src/main.rs && echo more >> src/main.rs && mkdir -p src/deep && echo x > src/deep/y");
        assert!(o.ok, "[{}] {}", sb.name(), o.stderr);
        assert!(ws.join("src/deep/y").exists());
        for script in ["cat secrets/key", "echo pwned > secrets/key", "ls secrets/"] {
            let o = run(&p, &sb, script);
            assert!(
                !o.ok || o.stdout.trim().is_empty(),
                "[{}] `{script}` -> {:?}",
                sb.name(),
                o.stdout
            );
            assert!(!o.stdout.contains("hunter2") && !o.stdout.contains("key"));
        }
        assert_eq!(
            std::fs::read_to_string(ws.join("secrets/key")).unwrap(),
            "hunter2"
        );
    }
}

fn unrestricted_agent_keeps_its_denials(kind: SandboxKind) {
    let Some(sb) = sandbox_of(kind) else { return };
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("frank");
    fx.write(&fx.ws("bob").join("readme.md"), "bob");
    fx.write(&fx.ws("carol").join("c.txt"), "carol's");
    fx.write(&fx.ws("erin").join("e.txt"), "erin");
    let (b, c, e) = (fx.ws("bob"), fx.ws("carol"), fx.ws("erin"));
    // Anything else is reachable...
    let o = run(
        &p,
        &sb,
        &format!(
            "cat {}/e.txt && echo y > {}/new.txt",
            e.display(),
            e.display()
        ),
    );
    assert!(o.ok, "{}", o.stderr);
    assert_eq!(std::fs::read_to_string(e.join("new.txt")).unwrap(), "y\n");
    // ... but not the read-only sibling for writing, the write-only one for reading, or state.
    for script in [
        format!("echo x > {}/w.txt", b.display()),
        format!("cat {}/c.txt", c.display()),
        format!("echo x > {}/config.toml", fx.root.display()),
    ] {
        let o = run(&p, &sb, &script);
        assert!(!o.ok, "`{script}` should fail");
    }
    assert!(run(&p, &sb, &format!("cat {}/readme.md", b.display())).ok);
    assert_eq!(
        std::fs::read_to_string(fx.root.join("config.toml")).unwrap(),
        FAMILY
    );
}

#[test]
fn unavailable_sandbox_is_an_error_not_a_fallback() {
    let none = SandboxSupport {
        landlock_abi: 0,
        bwrap: None,
        bwrap_problem: Some("bwrap not found on PATH".into()),
        confine_helper: None,
    };
    let err = choose(SandboxKind::Landlock, true, &none).unwrap_err();
    assert_eq!(
        err.to_string(),
        "sandbox_unavailable: landlock not supported by this kernel"
    );
    assert!(choose(SandboxKind::Bubblewrap, true, &none).is_err());
    // auto without workspace_only may run unconfined, and says so.
    let (sb, why) = choose(SandboxKind::Auto, false, &none).unwrap();
    assert_eq!(sb, EffectiveSandbox::None);
    assert!(why.contains("no OS confinement"), "{why}");
    // auto with workspace_only never silently becomes none.
    let err = choose(SandboxKind::Auto, true, &none).unwrap_err();
    assert!(
        matches!(
            err,
            SandboxError::Unavailable {
                sandbox: "auto",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with("sandbox_unavailable: auto"),
        "{err}"
    );
    assert!(err.to_string().contains("bwrap not found on PATH"), "{err}");
    // Only an explicit `none` runs unconfined under workspace_only.
    let (sb, _) = choose(SandboxKind::None, true, &none).unwrap();
    assert_eq!(sb, EffectiveSandbox::None);
    // auto picks bubblewrap first, landlock where bubblewrap cannot start a sandbox.
    let (sb, why) = choose(SandboxKind::Auto, true, &support()).unwrap();
    if support().bwrap.is_some() {
        assert!(matches!(sb, EffectiveSandbox::Bubblewrap { .. }), "{why}");
    }
    let landlock_only = SandboxSupport {
        landlock_abi: 6,
        bwrap: None,
        bwrap_problem: Some("bwrap: setting up uid map: Permission denied".into()),
        confine_helper: None,
    };
    let (sb, why) = choose(SandboxKind::Auto, true, &landlock_only).unwrap();
    assert_eq!(sb, EffectiveSandbox::Landlock { abi: 6 });
    assert!(
        why.contains("uid map"),
        "the reason names the problem: {why}"
    );
    let _ = Path::new("/");
}

/// A forbidden path that does not exist yet is made empty beneath a descriptor: a link the
/// agent planted on the way is never followed, so nothing is made where it points.
#[test]
fn closed_paths_are_made_without_following_a_planted_link() {
    let text = r#"
[risk_profiles.default]
forbidden_paths = ["a/b/c", "plain"]
[agents.alice]
risk_profile = "default"
"#;
    let fx = Fixture::new(text);
    let ws = fx.ws("alice");
    let elsewhere = fx.root.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, ws.join("a")).unwrap();
    let p = fx.policy("alice");
    let made = warren_policy::sandbox::prepare_closed_paths(&p);
    // The control: the plain one is made, as an empty folder of mode 0700.
    assert!(made.contains(&ws.join("plain")), "{made:?}");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(ws.join("plain")).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o700);
    assert!(
        std::fs::read_dir(elsewhere).unwrap().next().is_none(),
        "made through the link"
    );
    assert!(
        !made.iter().any(|m| m.starts_with(ws.join("a"))),
        "{made:?}"
    );
}
