//! The shell tool's analyzer is a convenience; the OS sandbox is the boundary. Lines whose
//! paths cannot be known statically (`cd`, `$D`, `$(...)`, backticks, braces, `xargs`, `dd`,
//! sed `w`/`r`, inline code, `link/../x`, git) are refused before anything runs under `none`
//! (`sandbox_required`), and under landlock and bubblewrap they run but cannot escape: the canary
//! never shows and nothing outside mallory's workspace changes. Programs started through
//! another program's options or a repository's configuration obey `allowed_commands`, and the
//! child environment never carries the session bus, display, agents or `GIT_*`.

use crate::fixture::{call, code, Fixture};
use crate::support::{assert_no_canary, Lab, Sandbox, CANARY};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use warren_policy::SandboxSupport;
use warren_testkit::git::Repo;
use warren_tools::ToolContext;
use warren_types::ToolErrorCode;

/// Each line first creates `out/ran` in mallory's workspace, then tries its escape: under
/// `none` the line is refused before it runs, so `out/ran` must not exist afterwards.
const OPAQUE_ESCAPES: &[(&str, &str, &str)] = &[
    ("cd", "touch out/ran; cd -P link/.. && cat secret.txt", REQ),
    ("cd-write", "touch out/ran; cd -P link/.. && echo x > pwned.txt", REQ),
    ("cd-var", "touch out/ran; W=$(printf '..\\057..\\057erin\\057workspace'); cd $W; cat secret.txt", REQ),
    ("var", "touch out/ran; D=$(printf '..\\057..\\057erin\\057workspace\\057secret.txt'); cat $D", REQ),
    ("var-braced", "touch out/ran; D=$(printf '..\\057..\\057erin\\057workspace\\057secret.txt'); cat ${D}", REQ),
    ("var-write", "touch out/ran; D=$(printf '..\\057..\\057erin\\057workspace\\057pwned.txt'); touch $D", REQ),
    ("substitution", "touch out/ran; cat $(printf '..\\057..\\057erin\\057workspace\\057secret.txt')", REQ),
    ("backticks", "touch out/ran; cat `printf '..\\057..\\057erin\\057workspace\\057secret.txt'`", REQ),
    ("brace", "touch out/ran; cat {../../erin/workspace/secret.txt,own.txt}", REQ),
    ("brace-bash", "touch out/ran; bash -c 'cat {../../erin/workspace/secret.txt,own.txt}'", REQ),
    ("xargs", "touch out/ran; printf '..\\057..\\057erin\\057workspace\\057secret.txt' | xargs cat", REQ),
    ("xargs-write", "touch out/ran; printf '..\\057..\\057erin\\057workspace\\057pwned.txt' | xargs touch", REQ),
    ("sed-w", "touch out/ran; sed -n 'w ../../erin/workspace/pwned.txt' own.txt", REQ),
    ("sed-r", "touch out/ran; sed '1r ../../erin/workspace/secret.txt' own.txt", REQ),
    ("sed-s-w", "touch out/ran; sed 's/mine/x/w ../../erin/workspace/pwned.txt' own.txt", REQ),
    ("python-c", "touch out/ran; python3 -c \"print(open('../../erin/workspace/secret.txt').read())\"", REQ),
    ("perl-e", "touch out/ran; perl -e 'open(F, \"../../erin/workspace/secret.txt\"); print <F>'", REQ),
    ("sh-c", "touch out/ran; sh -c 'cat ../../''erin/workspace/secret.txt'", DENIED),
    ("sh-script", "touch out/ran; printf 'cat ..\\057..\\057erin\\057workspace\\057secret.txt' > s.sh; sh s.sh", REQ),
    ("awk", "touch out/ran; awk '{print > \"../../erin/workspace/pwned.txt\"}' own.txt", REQ),
    ("find-exec", "touch out/ran; find . -maxdepth 1 -name 'lin?' -exec cat {}/../secret.txt \\;", REQ),
    ("env-S", "touch out/ran; env -S 'cat ../../erin/workspace/secret.txt'", REQ),
    ("tar-mv-link", "touch out/ran; tar -xf evil.tar && mv l m && cat m/secret.txt", REQ),
    ("tar-link", "touch out/ran; tar -xf evil.tar && cat l/secret.txt", REQ),
    ("link-dotdot", "touch out/ran; cat link/../secret.txt", REQ),
    ("link-dotdot-write", "touch out/ran; echo x > link/../pwned.txt", REQ),
    ("glob-link", "touch out/ran; cat l*/secret.txt", REQ),
    ("git-alias", "touch out/ran; git -c alias.x='!cat ../../erin/workspace/secret.txt' x", REQ),
    ("patch-link", "touch out/ran; patch -p1 -i evil.diff && cat pl/secret.txt", REQ),
    ("tar-names", "touch out/ran; printf '..\\057..\\057erin\\057workspace\\057secret.txt\\n' > list; tar -cf out/a.tar -T list; cat out/a.tar", REQ),
    ("sort-files0", "touch out/ran; printf '..\\057..\\057erin\\057workspace\\057secret.txt\\000' > list; sort --files0-from=list", REQ),
];

/// Refused because the line is opaque and there is no sandbox.
const REQ: &str = "sandbox_required";
/// Refused statically (the analyzer sees through `sh -c '...'`).
const DENIED: &str = "denied";

/// Mallory's workspace gets `link` -> erin's `sub/` (so `link/..` is erin's workspace),
/// `lnk` -> erin's workspace (so `l*/` matches it), `evil.tar` holding a link to erin's
/// workspace, and an `out/` directory.
fn plant_links(lab: &Lab) {
    let erin = lab.ws("erin");
    std::fs::create_dir_all(erin.join("sub")).unwrap();
    let ws = lab.ws("mallory");
    std::fs::create_dir_all(ws.join("out")).unwrap();
    std::os::unix::fs::symlink(erin.join("sub"), ws.join("link")).unwrap();
    std::os::unix::fs::symlink(&erin, ws.join("lnk")).unwrap();
    // `evil.tar` holds `l` -> erin's workspace.
    let stage = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&erin, stage.path().join("l")).unwrap();
    let tar = Command::new("tar")
        .arg("-cf")
        .arg(ws.join("evil.tar"))
        .arg("-C")
        .arg(stage.path())
        .arg("l")
        .status()
        .unwrap();
    assert!(tar.success());
    // `evil.diff` creates `pl` -> erin's workspace (a git-style patch of a symbolic link).
    std::fs::write(
        ws.join("evil.diff"),
        format!(
            "diff --git a/pl b/pl\nnew file mode 120000\n--- /dev/null\n+++ b/pl\n@@ -0,0 +1 @@\n+{}\n\\ No newline at end of file\n",
            erin.display()
        ),
    )
    .unwrap();
}

#[test]
fn opaque_lines_are_refused_without_a_sandbox_and_contained_with_one() {
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        for (name, line, refusal) in OPAQUE_ESCAPES {
            let lab = Lab::new(sb, true);
            plant_links(&lab);
            let before = lab.snapshot();
            let ran = lab.ws("mallory").join("out/ran");
            let r = call(&lab.ctx(), "shell", json!({ "command": line }));
            assert_no_canary(&r);
            assert_eq!(
                lab.snapshot(),
                before,
                "{} {name}: outside changed",
                lab.sandbox.name()
            );
            if sb == Sandbox::None || *refusal == DENIED {
                let (c, _) = code(r);
                assert_eq!(c, *refusal, "{} {name}: {line}", sb.name());
                assert!(!ran.exists(), "{name}: the line ran before it was refused");
            } else {
                assert!(
                    ran.exists(),
                    "{} {name}: the line did not run at all: {r:?}",
                    sb.name()
                );
            }
        }
    }
}

/// The refusal names why the line needs a sandbox.
#[test]
fn sandbox_required_names_the_reason() {
    let lab = Lab::new(Sandbox::None, true);
    let r = call(&lab.ctx(), "shell", json!({"command": "cd . && ls"}));
    let e = r.unwrap_err();
    assert_eq!(e.code(), ToolErrorCode::SandboxRequired);
    let text = e.to_string();
    assert!(
        text.contains("sandbox_required") && text.contains("`cd`"),
        "{text}"
    );
    // A literal line still runs without a sandbox.
    let r = call(&lab.ctx(), "shell", json!({"command": "cat own.txt"})).unwrap();
    assert_eq!(r["stdout"], "mine\n");
}

/// `dd if=`/`of=` operands are paths: denied statically when outside the grant, opaque
/// otherwise.
#[test]
fn dd_operands_are_checked_and_opaque() {
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        let lab = Lab::new(sb, true);
        std::fs::create_dir_all(lab.ws("mallory").join("out")).unwrap();
        let before = lab.snapshot();
        for line in [
            "dd if=../../erin/workspace/secret.txt",
            "dd if=own.txt of=../../erin/workspace/pwned.txt",
        ] {
            let r = call(&lab.ctx(), "shell", json!({ "command": line }));
            assert_no_canary(&r);
            assert_eq!(code(r).0, "denied", "{} {line}", sb.name());
        }
        let r = call(
            &lab.ctx(),
            "shell",
            json!({"command": "dd if=own.txt of=out/copy.txt"}),
        );
        if sb == Sandbox::None {
            assert_eq!(code(r).0, "sandbox_required");
            assert!(!lab.ws("mallory").join("out/copy.txt").exists());
        } else {
            r.unwrap();
            assert_eq!(
                std::fs::read_to_string(lab.ws("mallory").join("out/copy.txt")).unwrap(),
                "mine\n"
            );
        }
        assert_eq!(lab.snapshot(), before, "{}", sb.name());
    }
}

/// Mallory's workspace as a repository with one commit.
fn repo(lab: &Lab) -> std::path::PathBuf {
    let ws = lab.ws("mallory");
    init_repo(&ws, &ws.join("own.txt"));
    ws
}

/// `dir` as a repository whose one commit holds `file`.
fn init_repo(dir: &Path, file: &Path) {
    let repo = Repo::init(dir);
    let name = file.file_name().unwrap().to_str().unwrap();
    if !file.exists() {
        repo.write(name, "mine\n");
    }
    repo.add(&[name]).commit_staged("one");
}

/// `git -C . push file:///...` into erin's bare repository: refused under `none`, and the
/// sandbox (and the forbidden transports) keep erin's repository unchanged elsewhere.
#[test]
fn git_push_cannot_reach_another_workspace() {
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        let lab = Lab::new(sb, true);
        repo(&lab);
        let bare = lab.ws("erin").join("bare.git");
        Repo::bare(&bare);
        let before = lab.snapshot();
        for line in [
            format!("git -C . push file://{} main", bare.display()),
            format!(
                "git -c protocol.allow=always push file://{} main",
                bare.display()
            ),
        ] {
            let r = call(&lab.ctx(), "shell", json!({ "command": line }));
            assert_no_canary(&r);
            if sb == Sandbox::None {
                assert_eq!(code(r).0, "sandbox_required", "{line}");
            } else {
                assert!(r.is_err(), "{} {line}: push succeeded", sb.name());
            }
        }
        assert_eq!(
            lab.snapshot(),
            before,
            "{}: erin's repository changed",
            sb.name()
        );
    }
}

/// Programs started through an allowed program's options or arguments obey the allowlist.
#[test]
fn allowed_programs_cannot_start_forbidden_ones() {
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        let lab = Lab::with_profile(
            sb,
            true,
            "allowed_commands = [\"git\", \"ls\", \"cat\", \"sort\", \"find\", \"xargs\", \"tar\", \"env\", \"timeout\", \"nice\", \"sh\", \"echo\"]",
        );
        let ws = lab.ws("mallory");
        for (line, want) in [
            (
                "sort --compress-program=touch own.txt",
                "command_not_allowed",
            ),
            (
                "find . -name own.txt -exec touch pwned ;",
                "command_not_allowed",
            ),
            ("echo pwned | xargs touch", "command_not_allowed"),
            ("tar -I touch -cf pwned own.txt", "command_not_allowed"),
            ("env touch pwned", "command_not_allowed"),
            ("timeout 5 touch pwned", "command_not_allowed"),
            ("nice -n 1 touch pwned", "command_not_allowed"),
            ("sh -c 'touch pwned'", "command_not_allowed"),
            (
                "tar --to-command='touch pwned' -xf x.tar",
                "command_not_allowed",
            ),
            ("git -c alias.x='!touch pwned' x", "command_not_allowed"),
            (
                "git -c core.fsmonitor='touch pwned' status",
                "command_not_allowed",
            ),
            ("PATH=. ls", "command_not_allowed"),
            ("env -i git status", "command_not_allowed"),
        ] {
            let r = call(&lab.ctx(), "shell", json!({ "command": line }));
            assert_eq!(code(r).0, want, "{} {line}", sb.name());
            assert!(!ws.join("pwned").exists(), "{} {line}: it ran", sb.name());
        }
    }
}

/// One program planted in a real repository's configuration, and a low- or medium-risk
/// `git` line that runs it when nothing stops it.
const PLANTED: &[(&str, &str, &str)] = &[
    (
        "fsmonitor",
        "[core]\n\tfsmonitor = EVIL\n",
        "git -C proj status",
    ),
    ("alias", "[alias]\n\tst = !EVIL\n", "git -C proj st"),
    (
        "filter",
        "[filter \"Evil\"]\n\tclean = EVIL\n",
        "git -C proj add new.txt",
    ),
    (
        "textconv",
        "[diff \"evil\"]\n\ttextconv = EVIL\n",
        "git -C proj diff",
    ),
    (
        "hook",
        "[core]\n\thooksPath = .git/myhooks\n",
        "git -C proj -c user.name=m -c user.email=m@x commit -qam two",
    ),
    (
        "tar",
        "[tar \"tgz\"]\n\tcommand = EVIL\n",
        "git -C proj archive --format=tgz -o out/a.tgz HEAD",
    ),
];

/// `proj/` in mallory's workspace as a repository whose configuration names `.git/evil.sh` as
/// `config` says; the script appends to `proj/out/marker`, which is returned.
fn plant_repo_program(lab: &Lab, config: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let ws = lab.ws("mallory").join("proj");
    init_repo(&ws, &ws.join("own.txt"));
    std::fs::create_dir_all(ws.join("out")).unwrap();
    let marker = ws.join("out/marker");
    let script = ws.join(".git/evil.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$0 $*\" >> {}\ncat\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut text = std::fs::read_to_string(ws.join(".git/config")).unwrap();
    text.push_str(&config.replace("EVIL", &script.display().to_string()));
    std::fs::write(ws.join(".git/config"), text).unwrap();
    std::fs::create_dir_all(ws.join(".git/myhooks")).unwrap();
    std::fs::copy(&script, ws.join(".git/myhooks/pre-commit")).unwrap();
    std::fs::write(ws.join(".gitattributes"), "*.txt filter=Evil diff=evil\n").unwrap();
    std::fs::write(ws.join("new.txt"), "new\n").unwrap();
    std::fs::write(ws.join("own.txt"), "changed\n").unwrap();
    marker
}

/// Mallory's context with `TMPDIR` inside her workspace (git writes temporary files there).
fn tmp_ctx(lab: &Lab) -> ToolContext {
    let tmp = lab.ws("mallory").join("proj/tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut ctx = lab.ctx();
    ctx.host_env
        .insert("TMPDIR".into(), tmp.display().to_string());
    ctx
}

/// Under `allowed_commands = ["git", "ls", "cat"]` no program planted in the repository's
/// configuration runs: refused under `none` (git lines are opaque), neutralised by the
/// `GIT_CONFIG_*` overrides under landlock and bubblewrap.
#[test]
fn repository_configuration_cannot_run_programs_outside_the_allowlist() {
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        for (what, config, line) in PLANTED {
            let lab = Lab::with_profile(sb, true, "allowed_commands = [\"git\", \"ls\", \"cat\"]");
            let marker = plant_repo_program(&lab, config);
            let r = call(&tmp_ctx(&lab), "shell", json!({ "command": line }));
            if sb == Sandbox::None {
                assert_eq!(code(r).0, "sandbox_required", "{line}");
            }
            assert!(
                !marker.exists(),
                "{} `{line}` ran the planted {what}: {}",
                sb.name(),
                std::fs::read_to_string(&marker).unwrap_or_default()
            );
        }
    }
}

/// With `allowed_commands = ["*"]` the operator allows everything, so each planted program
/// does run (inside the sandbox): the case above does not pass by accident.
#[test]
fn unrestricted_allowlist_keeps_repository_programs() {
    for sb in [Sandbox::Landlock, Sandbox::Bubblewrap] {
        if !sb.available() {
            continue;
        }
        for (what, config, line) in PLANTED {
            let lab = Lab::new(sb, true);
            let marker = plant_repo_program(&lab, config);
            let r = call(&tmp_ctx(&lab), "shell", json!({ "command": line }));
            assert!(
                marker.exists(),
                "{} the planted {what} should run under [\"*\"] for `{line}`: {r:?}",
                sb.name()
            );
        }
    }
}

/// Bus, display, agent and git variables never reach a shell child, even when the risk
/// profile lists them in `shell_env_passthrough`.
#[test]
fn child_environment_never_carries_buses_agents_or_git_variables() {
    const VARS: &[&str] = &[
        "DBUS_SESSION_BUS_ADDRESS",
        "DBUS_SYSTEM_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
        "WAYLAND_DISPLAY",
        "DISPLAY",
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
        "GIT_DIR",
        "GIT_CONFIG_PARAMETERS",
    ];
    for sb in Sandbox::ALL {
        if !sb.available() {
            continue;
        }
        let list: Vec<String> = VARS
            .iter()
            .map(|v| format!("\"{v}\""))
            .chain(["\"KEPT_VAR\"".to_string()])
            .collect();
        let lab = Lab::with_profile(
            sb,
            true,
            &format!("shell_env_passthrough = [{}]", list.join(", ")),
        );
        let mut ctx = lab.ctx();
        for v in VARS {
            ctx.host_env.insert(v.to_string(), format!("{CANARY}-{v}"));
        }
        ctx.host_env.insert("KEPT_VAR".into(), "kept".into());
        let r = call(&ctx, "shell", json!({"command": "env"}));
        assert_no_canary(&r);
        let out = r.unwrap()["stdout"].as_str().unwrap().to_string();
        for v in VARS {
            assert!(
                !out.contains(&format!("{v}=")),
                "{} {v} reached the child",
                sb.name()
            );
        }
        assert!(out.contains("KEPT_VAR=kept"), "{out}");
    }
}

/// `sandbox = "auto"` with `workspace_only` never runs a command unconfined when neither
/// landlock nor bubblewrap is available.
#[test]
fn auto_never_falls_back_to_none_for_workspace_only() {
    for (workspace_only, runs) in [(true, false), (false, true)] {
        let fx = Fixture::new(&format!(
            "[risk_profiles.p]\nlevel = \"full\"\nallowed_commands = [\"*\"]\nsandbox = \"auto\"\n\
             workspace_only = {workspace_only}\n[agents.mallory]\nrisk_profile = \"p\"\n"
        ));
        let base = fx.ctx("mallory");
        let nothing = SandboxSupport {
            landlock_abi: 0,
            bwrap: None,
            bwrap_problem: Some("bwrap not found on PATH".into()),
            confine_helper: None,
        };
        let ctx = ToolContext::new(Arc::new(fx.policy("mallory")), nothing, base.host_env);
        let r = call(&ctx, "shell", json!({"command": "touch pwned"}));
        let pwned = fx.ws("mallory").join("pwned");
        if runs {
            assert_eq!(r.unwrap()["sandbox"], "none");
            assert!(pwned.exists());
        } else {
            assert_eq!(code(r).0, "sandbox_unavailable");
            assert!(!pwned.exists(), "ran unconfined");
        }
    }
}

/// The repository configuration that the `GIT_CONFIG_*` overrides are computed from is read in
/// Warren's own process: an `include.path` planted in mallory's `.git/config` that points at an
/// ungranted sibling's file is not read, so not even the names of erin's filters reach the
/// child's environment.
#[test]
fn the_overrides_never_read_a_siblings_config_through_an_include() {
    let sb = Sandbox::Landlock;
    if !sb.available() {
        return;
    }
    let lab = Lab::with_profile(sb, true, "allowed_commands = [\"git\", \"env\"]");
    let erin = lab.ws("erin").join("erin.gitconfig");
    std::fs::write(&erin, "[filter \"erinfilterzz\"]\n\tclean = cat\n").unwrap();
    let proj = lab.ws("mallory").join("proj");
    init_repo(&proj, &proj.join("own.txt"));
    let mut text = std::fs::read_to_string(proj.join(".git/config")).unwrap();
    text.push_str(&format!("[include]\n\tpath = {}\n", erin.display()));
    std::fs::write(proj.join(".git/config"), text).unwrap();
    let r = call(
        &tmp_ctx(&lab),
        "shell",
        json!({"command": "git -C proj status >/dev/null 2>&1; env"}),
    );
    let out = format!("{r:?}");
    assert!(
        out.contains("GIT_CONFIG_COUNT"),
        "the overrides were set: {out}"
    );
    assert!(
        !out.contains("erinfilterzz"),
        "erin's config was read: {out}"
    );
}
