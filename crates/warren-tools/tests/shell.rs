//! The shell tool: real sandboxed processes, environment, timeout, cancel, output cap.

use crate::fixture::{call, code, run, Fixture, FAMILY};
use serde_json::json;
use std::time::Duration;
use warren_tools::{ApprovalAnswer, Registry};
use warren_types::ToolErrorCode;

#[test]
fn runs_in_the_sandbox_with_devices_working() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    fx.write(&ws.join("file.txt"), "inside");
    fx.write(&fx.ws("bob").join("readme.md"), "bob");
    let v = call(
        &ctx,
        "shell",
        json!({"command": "cat file.txt && echo made > made.txt"}),
    )
    .unwrap();
    assert_eq!(v["stdout"], "inside");
    assert_eq!(v["sandbox"], "bubblewrap");
    assert_eq!(
        std::fs::read_to_string(ws.join("made.txt")).unwrap(),
        "made\n"
    );
    // The four devices through the shell.
    let v = call(&ctx, "shell", json!({"command": "head -c 8 /dev/urandom | wc -c; head -c 8 /dev/random | wc -c; head -c 3 /dev/zero | wc -c; cat /dev/null; ls missing 2>/dev/null || echo quiet"})).unwrap();
    assert_eq!(v["stdout"], "8\n8\n3\nquiet\n");
    // Paths outside the read-write allowlist are refused before anything runs.
    assert_eq!(
        code(call(&ctx, "shell", json!({"command": "cat /etc/hostname"}))),
        ("denied".into(), Some("outside_workspace".into()))
    );
    let bob = fx.ws("bob").display().to_string();
    assert_eq!(
        code(call(
            &ctx,
            "shell",
            json!({"command": format!("cat {bob}/readme.md")})
        )),
        ("denied".into(), Some("read_only_grant".into()))
    );
    // A path hidden from the analyzer still meets the sandbox.
    let erin = fx.ws("erin");
    fx.write(&erin.join("p.txt"), "erin's");
    // The path is spelled with octal escapes, so no literal `/` reaches the analyzer.
    let hidden = erin
        .join("p.txt")
        .display()
        .to_string()
        .replace('/', "\\057");
    let script = format!("cat \"$(printf '{hidden}')\"");
    let err = call(&ctx, "shell", json!({"command": script})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::CommandFailed, "{err}");
    // Under bubblewrap erin's workspace is not in the child's view at all.
    assert!(
        err.to_string().contains("No such file or directory"),
        "{err}"
    );
    assert!(!err.to_string().contains("erin's"), "{err}");
    // Failing commands report their exit code and stderr.
    let err = call(&ctx, "shell", json!({"command": "ls no-such-file"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::CommandFailed);
    assert!(err.to_string().contains("no-such-file"), "{err}");
    // High-risk commands are blocked by the profile.
    assert_eq!(
        code(call(&ctx, "shell", json!({"command": "rm -rf sub"}))).0,
        "high_risk_blocked"
    );
}

#[test]
fn environment_is_cleared_except_the_passthrough() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    fx.write(
        &fx.ws("alice").join("env.sh"),
        "echo \"[$SECRET_TOKEN][$HOME][$TMPDIR][$XDG_CONFIG_HOME]\"\necho made > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"\n",
    );
    let v = call(
        &ctx,
        "shell",
        json!({"command": "sh ./env.sh; env | wc -l"}),
    )
    .unwrap();
    let out = v["stdout"].as_str().unwrap();
    // HOME, the temporary folder and the XDG folders are the agent's own, never the user's.
    let ws = fx.ws("alice");
    assert!(
        out.starts_with(&format!(
            "[][{}][{}][{}]\nmade",
            ws.display(),
            ws.join(".tmp").display(),
            ws.join(".config").display()
        )),
        "{out}"
    );
    assert!(!out.contains(&fx.home.display().to_string()), "{out}");
    let text = FAMILY.replace(
        "sandbox = \"bubblewrap\"",
        "sandbox = \"bubblewrap\"\nshell_env_passthrough = [\"SECRET_TOKEN\"]",
    );
    let fx = Fixture::new(&text);
    let ctx = fx.ctx("alice");
    let v = call(
        &ctx,
        "shell",
        json!({"command": "echo \"[$SECRET_TOKEN]\""}),
    )
    .unwrap();
    assert_eq!(v["stdout"], "[s3cr3t]\n");
}

#[test]
fn timeout_kills_the_whole_process_group() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("quinn"); // shell_timeout_secs = 1
    let ws = fx.ws("quinn");
    let err = call(
        &ctx,
        "shell",
        json!({"command": "(sleep 2; echo late > late.txt) & sleep 4"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::Timeout);
    std::thread::sleep(Duration::from_millis(2500));
    assert!(
        !ws.join("late.txt").exists(),
        "a background job outlived the timeout"
    );
}

#[test]
fn cancel_kills_the_command() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let cancel = ctx.cancel.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        cancel.cancel();
    });
    let err = run(Registry::builtin().invoke(
        "shell",
        &json!({"command": "sleep 5; echo no > no.txt"}),
        &ctx,
        &ApprovalAnswer::approve(),
    ))
    .unwrap_err();
    t.join().unwrap();
    assert_eq!(err.code(), ToolErrorCode::Cancelled);
    assert!(!fx.ws("alice").join("no.txt").exists());
}

#[test]
fn output_is_capped() {
    let fx = Fixture::new(FAMILY);
    let mut ctx = fx.ctx("alice");
    ctx.limits.max_output_bytes = 1000;
    let v = call(
        &ctx,
        "shell",
        json!({"command": "head -c 50000 /dev/zero | tr '\\0' a"}),
    )
    .unwrap();
    assert_eq!(v["stdout"].as_str().unwrap().len(), 1000);
    assert_eq!(v["truncated"], true);
    // The real cap is 1 MiB.
    let ctx = fx.ctx("alice");
    let v = call(
        &ctx,
        "shell",
        json!({"command": "head -c 1100000 /dev/zero | tr '\\0' a"}),
    )
    .unwrap();
    assert_eq!(v["stdout"].as_str().unwrap().len(), 1024 * 1024);
}

#[test]
fn configured_sandbox_unavailable_is_an_error() {
    let fx = Fixture::new(&FAMILY.replace("sandbox = \"landlock\"", "sandbox = \"bubblewrap\""));
    let mut ctx = fx.ctx("alice");
    ctx.sandbox.bwrap = None;
    ctx.sandbox.bwrap_problem = Some("bwrap not found on PATH".into());
    let err = call(&ctx, "shell", json!({"command": "echo x > x.txt"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::SandboxUnavailable);
    assert!(err.to_string().contains("bubblewrap"), "{err}");
    assert!(!fx.ws("alice").join("x.txt").exists());
    // Nothing ran, so the budget unit charged for the call is given back.
    assert_eq!(
        ctx.ledger
            .used("alice", std::time::SystemTime::now())
            .unwrap(),
        0
    );
}

#[test]
fn docker_runtime_runs_in_a_container_or_fails_clearly() {
    let with_docker = FAMILY.replace(
        "[agents.alice]",
        "[runtime]\nkind = \"docker\"\n\n[agents.alice]",
    );
    // No image configured: refused before anything runs.
    let fx = Fixture::new(&with_docker);
    let ctx = fx.ctx("alice");
    let err = call(&ctx, "shell", json!({"command": "echo x > x.txt"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::ContainerError);
    assert!(err.to_string().contains("runtime.docker.image"), "{err}");
    assert!(!fx.ws("alice").join("x.txt").exists());

    let text = with_docker.replace(
        "kind = \"docker\"",
        "kind = \"docker\"\n[runtime.docker]\nimage = \"debian:12-slim\"",
    );
    let fx = Fixture::new(&text);
    let ctx = fx.ctx("alice");
    let r = call(
        &ctx,
        "shell",
        json!({"command": "echo in-container > made.txt && cat made.txt"}),
    );
    if std::env::var_os("WARREN_TEST_DOCKER").is_some() {
        let v = r.unwrap();
        assert_eq!(v["sandbox"], "docker");
        assert_eq!(v["stdout"], "in-container\n");
        assert!(fx.ws("alice").join("made.txt").exists());
    } else {
        println!("skipped: WARREN_TEST_DOCKER not set (real-engine run)");
        // Without an engine the call fails with an error naming docker; nothing is written.
        if let Err(e) = r {
            assert!(e.to_string().contains("docker"), "{e}");
            assert!(!fx.ws("alice").join("made.txt").exists());
        }
    }
}

/// The user's global git config is in no sandbox; git in a shell command still works beside
/// one (under Landlock an unreadable `~/.gitconfig` would otherwise stop git), and what it
/// holds does not reach the command.
#[test]
fn git_in_the_shell_works_beside_a_global_config_it_may_not_read() {
    for sandbox in ["landlock", "bubblewrap"] {
        let text = FAMILY.replace(
            "sandbox = \"bubblewrap\"",
            &format!("sandbox = \"{sandbox}\""),
        );
        let fx = Fixture::new(&text);
        std::fs::write(
            fx.home.join(".gitconfig"),
            "[user]\n\tname = Global Someone\n[credential]\n\thelper = store --file=/secret\n",
        )
        .unwrap();
        fx.write(&fx.ws("alice").join("repo/.keep"), "");
        // Made outside: under Landlock alone `git init` is refused its chmod (docs/security.md).
        let made = std::process::Command::new("git")
            .args(["init", "-q"])
            .current_dir(fx.ws("alice").join("repo"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(made.success());
        let ctx = fx.ctx("alice");
        let v = call(
            &ctx,
            "shell",
            json!({"command": "git -C repo status --short && echo ran"}),
        )
        .unwrap();
        let r = call(
            &ctx,
            "shell",
            json!({"command": "sh -c 'cat \"$HOME/.gitconfig\"'"}),
        );
        assert!(
            !format!("{r:?}").contains("Global Someone"),
            "[{sandbox}] {r:?}"
        );
        let out = v["stdout"].as_str().unwrap();
        assert!(
            out.contains("ran") && out.contains(".keep"),
            "[{sandbox}] {v}"
        );
        assert!(!out.contains("Global Someone"), "[{sandbox}] {v}");
        assert!(
            !v["stderr"].as_str().unwrap().contains("fatal"),
            "[{sandbox}] {v}"
        );
    }
}
