//! `git_operations` against real repositories (built by `warren_testkit::git` with fixed authors
//! and dates), real `git` children under the real Landlock sandbox, and the policy's grants.

use crate::fixture::{call, code, Fixture, FAMILY};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use warren_testkit::git::{self as gitrepo, commit, git, init, script, AUTHOR_EMAIL, AUTHOR_NAME};
use warren_tools::{ToolContext, ToolError};
use warren_types::ToolErrorCode;

fn op(ctx: &ToolContext, args: Value) -> Result<Value, ToolError> {
    call(ctx, "git_operations", args)
}

fn ok(ctx: &ToolContext, args: Value) -> Value {
    match op(ctx, args.clone()) {
        Ok(v) => v,
        Err(e) => panic!("git_operations {args} failed: {} ({e})", e.code()),
    }
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

/// Every read operation on the repository at `path`.
fn every_read(path: &Path) -> Vec<Value> {
    let path = p(path);
    vec![
        json!({"operation": "status", "path": path}),
        json!({"operation": "diff", "path": path}),
        json!({"operation": "diff", "path": path, "cached": true}),
        json!({"operation": "log", "path": path}),
        json!({"operation": "branch", "path": path}),
        json!({"operation": "stash_list", "path": path}),
        json!({"operation": "worktree_list", "path": path}),
    ]
}

/// Every write operation on the repository at `path` (worktrees under `wt`).
fn every_write(path: &Path, wt: &Path) -> Vec<Value> {
    let (path, wt) = (p(path), p(wt));
    vec![
        json!({"operation": "add", "path": path, "paths": ["a.txt"]}),
        json!({"operation": "commit", "path": path, "message": "m"}),
        json!({"operation": "checkout", "path": path, "branch": "main"}),
        json!({"operation": "branch_create", "path": path, "branch": "x"}),
        json!({"operation": "branch_delete", "path": path, "branch": "x"}),
        json!({"operation": "stash_push", "path": path}),
        json!({"operation": "stash_pop", "path": path}),
        json!({"operation": "stash_drop", "path": path}),
        json!({"operation": "worktree_add", "path": path, "worktree_path": wt}),
        json!({"operation": "worktree_remove", "path": path, "worktree_path": wt}),
        json!({"operation": "worktree_prune", "path": path}),
    ]
}

fn marker_hook(repo: &Path, hook: &str, marker: &Path) {
    script(
        &repo.join(".git/hooks").join(hook),
        &format!("echo {hook} >> '{}'", marker.display()),
    );
}

#[test]
fn reads_return_structured_status_diff_log_branches_and_stashes() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let repo = fx.ws("alice").join("proj");
    init(&repo);
    let first = commit(
        &repo,
        &[("a.txt", "one\ntwo\nthree\n"), ("old.txt", "rename me\n")],
        "first",
    );
    let second = commit(&repo, &[("b.txt", "bee\n")], "second");
    git(&repo, &["branch", "topic"]);
    // A stash, then: a staged rename, an unstaged change, a deletion, an untracked file.
    std::fs::write(repo.join("b.txt"), "stashed\n").unwrap();
    git(&repo, &["stash", "push", "-q", "-m", "parked"]);
    git(&repo, &["mv", "old.txt", "new.txt"]);
    std::fs::write(repo.join("a.txt"), "one\nTWO\nthree\n").unwrap();
    std::fs::remove_file(repo.join("b.txt")).unwrap();
    std::fs::write(repo.join("fresh.txt"), "new\n").unwrap();

    let v = ok(&ctx, json!({"operation": "status", "path": "proj"}));
    assert_eq!(v["branch"], "main");
    assert_eq!(v["head"], second);
    let entries: BTreeMap<String, Value> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["path"].as_str().unwrap().to_string(), e.clone()))
        .collect();
    assert_eq!(entries.len(), 4, "{v}");
    assert_eq!(entries["new.txt"]["index"], "renamed");
    assert_eq!(entries["new.txt"]["from"], "old.txt");
    assert_eq!(entries["a.txt"]["index"], "unmodified");
    assert_eq!(entries["a.txt"]["worktree"], "modified");
    assert_eq!(entries["b.txt"]["worktree"], "deleted");
    assert_eq!(entries["fresh.txt"]["worktree"], "untracked");

    // Unstaged hunks, then staged changes with the rename.
    let v = ok(
        &ctx,
        json!({"operation": "diff", "path": "proj", "files": ["a.txt"]}),
    );
    let files = v["files"].as_array().unwrap();
    assert_eq!(files.len(), 1, "{v}");
    assert_eq!(files[0]["path"], "a.txt");
    assert_eq!(files[0]["status"], "modified");
    let hunk = &files[0]["hunks"][0];
    assert_eq!(hunk["old_start"], 1);
    assert_eq!(hunk["old_lines"], 3);
    assert_eq!(hunk["lines"], json!([" one", "-two", "+TWO", " three"]));
    let v = ok(&ctx, json!({"operation": "diff", "path": "proj"}));
    let paths: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.txt", "b.txt"]);
    let v = ok(
        &ctx,
        json!({"operation": "diff", "path": "proj", "cached": true}),
    );
    assert_eq!(v["files"][0]["status"], "renamed", "{v}");
    assert_eq!(v["files"][0]["old_path"], "old.txt");
    assert_eq!(v["files"][0]["path"], "new.txt");

    // Log: raw author, fixed dates, newest first, limit.
    let v = ok(&ctx, json!({"operation": "log", "path": "proj"}));
    let commits = v["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 2);
    assert_eq!(commits[0]["id"], second);
    assert_eq!(commits[1]["id"], first);
    assert_eq!(commits[0]["summary"], "second");
    assert_eq!(commits[1]["author_name"], AUTHOR_NAME);
    assert_eq!(commits[1]["author_email"], AUTHOR_EMAIL);
    assert_eq!(commits[1]["timestamp"], gitrepo::FIRST_DATE);
    assert_eq!(commits[1]["time"], "2023-11-14T22:13:20+00:00");
    assert_eq!(commits[0]["time"], "2023-11-14T23:13:20+00:00");
    let v = ok(
        &ctx,
        json!({"operation": "log", "path": "proj", "limit": 1}),
    );
    assert_eq!(v["commits"].as_array().unwrap().len(), 1);

    let v = ok(&ctx, json!({"operation": "branch", "path": "proj"}));
    assert_eq!(v["current"], "main");
    let names: Vec<&str> = v["branches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["main", "topic"]);

    let v = ok(&ctx, json!({"operation": "stash_list", "path": "proj"}));
    assert_eq!(v["stashes"].as_array().unwrap().len(), 1);
    assert_eq!(v["stashes"][0]["index"], 0);
    assert!(
        v["stashes"][0]["message"]
            .as_str()
            .unwrap()
            .contains("parked"),
        "{v}"
    );

    // A path inside the repository finds it (discovery within the workspace).
    std::fs::create_dir_all(repo.join("sub/deeper")).unwrap();
    let v = ok(
        &ctx,
        json!({"operation": "status", "path": "proj/sub/deeper"}),
    );
    assert_eq!(v["repository"], p(&repo));
    // `files` outside the working tree are refused.
    let err = op(
        &ctx,
        json!({"operation": "diff", "path": "proj", "files": ["../x"]}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::InvalidArgument, "{err}");
}

#[test]
fn status_reports_conflicts_with_their_sides() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let repo = fx.ws("alice").join("c");
    init(&repo);
    commit(&repo, &[("f.txt", "base\n")], "base");
    git(&repo, &["checkout", "-q", "-b", "other"]);
    commit(&repo, &[("f.txt", "theirs\n")], "theirs");
    git(&repo, &["checkout", "-q", "main"]);
    commit(&repo, &[("f.txt", "ours\n")], "ours");
    assert!(!gitrepo::git_ok(&repo, &["merge", "-q", "other"]));
    let v = ok(&ctx, json!({"operation": "status", "path": "c"}));
    let e = &v["entries"][0];
    assert_eq!(e["path"], "f.txt", "{v}");
    assert_eq!(e["index"], "conflicted");
    assert_eq!(e["worktree"], "conflicted");
    assert_eq!(
        e["conflict"],
        json!({"ancestor": true, "ours": true, "theirs": true})
    );
}

#[test]
fn commit_runs_the_hook_in_the_sandbox_and_no_read_runs_it() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    let repo = ws.join("hooked");
    init(&repo);
    commit(&repo, &[("a.txt", "a\n")], "first");
    let inside = ws.join("marker-inside");
    // Outside every grant: the sandbox must stop the hook from writing there.
    let outside = fx.root.join("marker-outside");
    script(
        &repo.join(".git/hooks/post-commit"),
        &format!(
            "echo post-commit >> '{}'\necho post-commit >> '{}' 2>/dev/null\nexit 0",
            inside.display(),
            outside.display()
        ),
    );
    std::fs::write(repo.join("a.txt"), "changed\n").unwrap();
    for args in every_read(&repo) {
        ok(&ctx, args);
    }
    assert!(!inside.exists(), "a read ran the post-commit hook");
    let v = ok(
        &ctx,
        json!({"operation": "add", "path": "hooked", "paths": ["a.txt"]}),
    );
    assert_eq!(v["sandbox"], "bubblewrap");
    let v = ok(
        &ctx,
        json!({"operation": "commit", "path": "hooked", "message": "second"}),
    );
    assert_eq!(v["head"], gitrepo::head(&repo));
    assert_eq!(v["branch"], "main");
    assert_eq!(gitrepo::count(&repo), 2);
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "post-commit\n");
    assert!(
        !outside.exists(),
        "the hook wrote outside the sandbox's writable area"
    );
    // The same hook outside the sandbox would have written there: the test can fail.
    git(&repo, &["commit", "-q", "--allow-empty", "-m", "x"]);
    assert!(outside.exists());
}

#[test]
fn reads_run_no_repository_configured_program() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    let repo = ws.join("traps");
    init(&repo);
    commit(&repo, &[("a.txt", "one\n"), ("b.bin", "two\n")], "first");
    commit(&repo, &[("a.txt", "one\nmore\n")], "second");
    std::fs::write(repo.join("a.txt"), "stash me\n").unwrap();
    git(&repo, &["stash", "push", "-q"]);
    let marker = ws.join("ran");
    let prog = ws.join("prog.sh");
    script(
        &prog,
        &format!("echo \"$0 $*\" >> '{}'\ncat", marker.display()),
    );
    let prog = p(&prog);
    for hook in [
        "applypatch-msg",
        "pre-applypatch",
        "post-applypatch",
        "pre-commit",
        "pre-merge-commit",
        "prepare-commit-msg",
        "commit-msg",
        "post-commit",
        "pre-rebase",
        "post-checkout",
        "post-merge",
        "pre-push",
        "pre-receive",
        "update",
        "proc-receive",
        "post-receive",
        "post-update",
        "reference-transaction",
        "push-to-checkout",
        "pre-auto-gc",
        "post-rewrite",
        "fsmonitor-watchman",
        "post-index-change",
    ] {
        marker_hook(&repo, hook, &marker);
    }
    for (k, v) in [
        ("core.fsmonitor", prog.as_str()),
        ("core.pager", &prog),
        ("pager.status", &prog),
        ("pager.diff", &prog),
        ("pager.log", &prog),
        ("core.editor", &prog),
        ("core.askPass", &prog),
        ("core.sshCommand", &prog),
        ("diff.external", &prog),
        ("diff.trap.textconv", &prog),
        ("diff.trap.command", &prog),
        ("filter.trap.clean", &prog),
        ("filter.trap.smudge", &prog),
        ("filter.trap.process", &prog),
        ("credential.helper", &prog),
        ("gpg.program", &prog),
        ("commit.gpgSign", "true"),
        ("log.showSignature", "true"),
        ("mailmap.file", "/dev/null"),
    ] {
        git(&repo, &["config", k, v]);
    }
    std::fs::write(repo.join(".gitattributes"), "* filter=trap diff=trap\n").unwrap();
    // Changes that make status and diff look at file contents.
    std::fs::write(repo.join("a.txt"), "one\nchanged\n").unwrap();
    std::fs::write(repo.join("b.bin"), "changed too\n").unwrap();
    std::fs::write(repo.join("untracked.txt"), "u\n").unwrap();
    for args in every_read(&repo) {
        ok(&ctx, args);
    }
    let v = ok(&ctx, json!({"operation": "diff", "path": "traps"}));
    // No textconv: the hunk shows the file's own lines.
    assert!(
        v["files"][0]["hunks"][0]["lines"]
            .as_array()
            .unwrap()
            .contains(&json!("+changed")),
        "{v}"
    );
    assert!(
        !marker.exists(),
        "a read ran: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    // The traps are live: the git program runs them.
    gitrepo::git_ok(&repo, &["diff"]);
    assert!(marker.exists());
}

#[test]
fn log_prints_raw_authors_whatever_the_mailmap_says() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let repo = fx.ws("alice").join("mm");
    init(&repo);
    let mailmap = format!("Mapped Name <mapped@example.test> {AUTHOR_NAME} <{AUTHOR_EMAIL}>\n");
    commit(&repo, &[(".mailmap", &mailmap)], "with mailmap");
    let file = fx.ws("alice").join("mailmap.extra");
    std::fs::write(&file, &mailmap).unwrap();
    git(&repo, &["config", "mailmap.file", &p(&file)]);
    git(&repo, &["config", "log.mailmap", "true"]);
    // The mapping works for git itself: the test can fail.
    let shown = git(&repo, &["log", "-1", "--format=%aN <%aE>"]);
    assert_eq!(shown.trim(), "Mapped Name <mapped@example.test>");
    let v = ok(&ctx, json!({"operation": "log", "path": "mm"}));
    assert_eq!(v["commits"][0]["author_name"], AUTHOR_NAME);
    assert_eq!(v["commits"][0]["author_email"], AUTHOR_EMAIL);
}

/// Runs in a child test process whose environment carries `GIT_*` variables (set by
/// `git_variables_in_warrens_environment_change_nothing`), so that no other test thread sees
/// them. The tool's host environment is this process's whole environment, as in the binaries.
#[test]
#[ignore = "run by git::git_variables_in_warrens_environment_change_nothing"]
fn process_env_scenario() {
    if std::env::var_os("WARREN_GIT_ENV_SCENARIO").is_none() {
        eprintln!("skipped: run by git::git_variables_in_warrens_environment_change_nothing");
        return;
    }
    for k in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_AUTHOR_NAME",
        "GIT_CONFIG_PARAMETERS",
    ] {
        assert!(std::env::var_os(k).is_some(), "{k} not set in the scenario");
    }
    let fx = Fixture::new(FAMILY);
    let mut ctx = fx.ctx("alice");
    let mut host: BTreeMap<String, String> = std::env::vars().collect();
    host.insert("HOME".into(), p(&fx.home));
    host.insert("PATH".into(), "/usr/bin:/bin".into());
    ctx.host_env = host;
    let repo = fx.ws("alice").join("real");
    init(&repo);
    let first = commit(&repo, &[("a.txt", "a\n")], "first");
    std::fs::write(repo.join("a.txt"), "b\n").unwrap();
    let v = ok(&ctx, json!({"operation": "status", "path": "real"}));
    assert_eq!(v["head"], first);
    assert_eq!(v["entries"][0]["path"], "a.txt", "{v}");
    assert_eq!(v["entries"].as_array().unwrap().len(), 1, "{v}");
    let v = ok(&ctx, json!({"operation": "log", "path": "real"}));
    assert_eq!(v["commits"].as_array().unwrap().len(), 1);
    assert_eq!(v["commits"][0]["author_name"], AUTHOR_NAME);
    ok(
        &ctx,
        json!({"operation": "add", "path": "real", "paths": ["a.txt"]}),
    );
    ok(
        &ctx,
        json!({"operation": "commit", "path": "real", "message": "mine"}),
    );
    let who = git(&repo, &["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s"]);
    assert_eq!(
        who.trim(),
        "Repo Config <repo@config.test>|Repo Config <repo@config.test>|mine"
    );
    println!("WARREN-GIT-ENV-SCENARIO-PASSED");
}

#[test]
fn git_variables_in_warrens_environment_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let decoy = std::fs::canonicalize(dir.path()).unwrap().join("decoy");
    init(&decoy);
    commit(&decoy, &[("decoy.txt", "d\n")], "decoy");
    let hooks = decoy.join("evil-hooks");
    let marker = decoy.join("hook-ran");
    script(
        &hooks.join("post-commit"),
        &format!("echo ran > '{}'", marker.display()),
    );
    script(
        &hooks.join("pre-commit"),
        &format!("echo ran > '{}'", marker.display()),
    );
    let decoy_git = p(&decoy.join(".git"));
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "git::process_env_scenario",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("WARREN_GIT_ENV_SCENARIO", "1")
        .env("GIT_DIR", &decoy_git)
        .env("GIT_WORK_TREE", p(&decoy))
        .env("GIT_INDEX_FILE", p(&decoy.join(".git/index")))
        .env("GIT_OBJECT_DIRECTORY", p(&decoy.join(".git/objects")))
        .env("GIT_COMMON_DIR", &decoy_git)
        .env("GIT_AUTHOR_NAME", "Intruder")
        .env("GIT_AUTHOR_EMAIL", "intruder@evil.test")
        .env("GIT_COMMITTER_NAME", "Intruder")
        .env("GIT_COMMITTER_EMAIL", "intruder@evil.test")
        .env(
            "GIT_CONFIG_PARAMETERS",
            format!(
                "'user.name'='Intruder' 'core.hooksPath'='{}'",
                hooks.display()
            ),
        )
        .env("GIT_CONFIG_COUNT", "1")
        .env("GIT_CONFIG_KEY_0", "user.email")
        .env("GIT_CONFIG_VALUE_0", "intruder@evil.test")
        .env("GIT_CONFIG_GLOBAL", p(&decoy.join("global")))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("WARREN-GIT-ENV-SCENARIO-PASSED"),
        "scenario failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(gitrepo::count(&decoy), 1, "the decoy repository changed");
    assert!(!marker.exists(), "a hook of GIT_CONFIG_PARAMETERS ran");
}

#[test]
fn identity_comes_from_global_config_when_the_repository_has_none() {
    let fx = Fixture::new(FAMILY);
    let mut ctx = fx.ctx("alice");
    ctx.host_env
        .insert("GIT_AUTHOR_NAME".into(), "Intruder".into());
    ctx.host_env
        .insert("GIT_COMMITTER_EMAIL".into(), "intruder@evil.test".into());
    std::fs::write(
        fx.home.join(".gitconfig"),
        "[user]\n\tname = Global Person\n\temail = global@home.test\n",
    )
    .unwrap();
    let repo = fx.ws("alice").join("g");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("f"), "x").unwrap();
    ok(
        &ctx,
        json!({"operation": "add", "path": "g", "paths": ["f"]}),
    );
    ok(
        &ctx,
        json!({"operation": "commit", "path": "g", "message": "first"}),
    );
    let who = git(&repo, &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]);
    assert_eq!(
        who.trim(),
        "Global Person <global@home.test>|Global Person <global@home.test>"
    );
}

/// `~/.gitconfig` replaced by a link (an unrestricted agent may write in the user's home) is
/// not followed: a sibling's file shaped like a git config gives no identity.
#[test]
fn a_linked_global_config_gives_no_identity() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let erin = fx.ws("erin").join("notes");
    std::fs::write(
        &erin,
        "[user]\n\tname = erin-secret-token\n\temail = e@x.test\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(&erin, fx.home.join(".gitconfig")).unwrap();
    let repo = fx.ws("alice").join("g");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "own@x.test"]);
    std::fs::write(repo.join("f"), "x").unwrap();
    ok(
        &ctx,
        json!({"operation": "add", "path": "g", "paths": ["f"]}),
    );
    let r = call(
        &ctx,
        "git_operations",
        json!({"operation": "commit", "path": "g", "message": "first"}),
    );
    // Whatever name git falls back to, erin's text is in no commit.
    let log = Command::new("git")
        .args(["log", "--all", "--format=%an %cn"])
        .current_dir(&repo)
        .output()
        .unwrap();
    let text = format!("{r:?}{}", String::from_utf8_lossy(&log.stdout));
    assert!(!text.contains("erin-secret-token"), "{text}");
    // The control: the same file by its own name is read.
    std::fs::remove_file(fx.home.join(".gitconfig")).unwrap();
    std::fs::copy(&erin, fx.home.join(".gitconfig")).unwrap();
    std::fs::write(repo.join("f2"), "y").unwrap();
    ok(
        &ctx,
        json!({"operation": "add", "path": "g", "paths": ["f2"]}),
    );
    ok(
        &ctx,
        json!({"operation": "commit", "path": "g", "message": "second"}),
    );
    let who = git(&repo, &["log", "-1", "--format=%an"]);
    assert_eq!(who.trim(), "erin-secret-token");
}

#[test]
fn the_repositorys_own_identity_wins_over_the_global_one_key_by_key() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    std::fs::write(
        fx.home.join(".gitconfig"),
        "[credential]\n\thelper = store\n[user]\n\tname = Global Person\n\temail = global@home.test\n",
    )
    .unwrap();
    let repo = fx.ws("alice").join("g");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.name", "Repo Person"]);
    std::fs::write(repo.join("f"), "x").unwrap();
    ok(
        &ctx,
        json!({"operation": "add", "path": "g", "paths": ["f"]}),
    );
    ok(
        &ctx,
        json!({"operation": "commit", "path": "g", "message": "first"}),
    );
    let who = git(&repo, &["log", "-1", "--format=%an <%ae>|%cn <%ce>"]);
    assert_eq!(
        who.trim(),
        "Repo Person <global@home.test>|Repo Person <global@home.test>"
    );
    // The global file itself is not in any sandbox: a shell child cannot read it.
    let r = call(
        &ctx,
        "shell",
        json!({"command": "sh -c 'cat \"$HOME/.gitconfig\"'"}),
    );
    let text = format!("{r:?}");
    assert!(!text.contains("Global Person"), "{text}");
}

#[test]
fn a_missing_promisor_blob_fails_clearly_and_starts_no_transport() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    let src = fx.root.join("src");
    init(&src);
    let first = commit(&src, &[("a.txt", "one\n")], "first");
    commit(&src, &[("a.txt", "two\n"), ("b.txt", "bee\n")], "second");
    git(&src, &["config", "uploadpack.allowFilter", "true"]);
    git(&src, &["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let clone = ws.join("partial");
    git(
        &ws,
        &[
            "clone",
            "-q",
            "--filter=blob:none",
            "--no-local",
            "--no-checkout",
            &format!("file://{}", src.display()),
            &p(&clone),
        ],
    );
    git(&clone, &["branch", "old", &first]);
    // The promisor remote's upload-pack is a script that leaves a marker, inside the sandbox's
    // writable area so that nothing but the transport rules could keep it from running.
    let marker = ws.join("upload-pack-ran");
    let upload = ws.join("upload-pack.sh");
    script(
        &upload,
        &format!("echo ran >> '{}'\nexit 1", marker.display()),
    );
    git(&clone, &["config", "remote.origin.uploadpack", &p(&upload)]);
    // The setup is live: a plain git reading the missing blob runs the script.
    let blob = git(&src, &["rev-parse", &format!("{first}:a.txt")]);
    assert!(!gitrepo::git_ok(&clone, &["cat-file", "-p", blob.trim()]));
    assert!(marker.exists(), "the fixture's lazy fetch did not start");
    std::fs::remove_file(&marker).unwrap();

    // Commits and trees are there: log works.
    let v = ok(&ctx, json!({"operation": "log", "path": "partial"}));
    assert_eq!(v["commits"].as_array().unwrap().len(), 2);
    // Reading a missing blob (HEAD against the empty index) fails clearly.
    let err = op(
        &ctx,
        json!({"operation": "diff", "path": "partial", "cached": true}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::GitMissingObject, "{err}");
    let msg = err.to_string();
    assert!(msg.contains(&p(&clone)), "{msg}");
    assert!(msg.contains("never fetches"), "{msg}");
    // A write that needs the blob fails too, with no transport.
    let err = op(
        &ctx,
        json!({"operation": "checkout", "path": "partial", "branch": "old"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::CommandFailed, "{err}");
    assert!(!marker.exists(), "a transport ran");
}

#[test]
fn symlinked_or_outside_metadata_is_refused_naming_the_path() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    let real = ws.join("real");
    init(&real);
    commit(&real, &[("a.txt", "a\n")], "first");

    // `.git` as a symlink, even to a repository inside the workspace.
    let linked = ws.join("linked");
    std::fs::create_dir_all(&linked).unwrap();
    std::os::unix::fs::symlink(real.join(".git"), linked.join(".git")).unwrap();
    for args in [
        json!({"operation": "status", "path": "linked"}),
        json!({"operation": "commit", "path": "linked", "message": "m"}),
    ] {
        let err = op(&ctx, args).unwrap_err();
        assert_eq!(err.code(), ToolErrorCode::GitMetadataSymlink, "{err}");
        assert!(err.to_string().contains(&p(&linked.join(".git"))), "{err}");
    }

    // A `.git` file whose gitdir lies outside every grant.
    let erin = fx.ws("erin").join("repo");
    init(&erin);
    commit(&erin, &[("secret.txt", "erin's\n")], "erin");
    let outer = ws.join("outer");
    std::fs::create_dir_all(&outer).unwrap();
    std::fs::write(
        outer.join(".git"),
        format!("gitdir: {}\n", erin.join(".git").display()),
    )
    .unwrap();
    let err = op(&ctx, json!({"operation": "log", "path": "outer"})).unwrap_err();
    assert_eq!(
        (err.code().as_str(), err.rule()),
        ("denied", Some("outside_workspace")),
        "{err}"
    );
    assert!(err.to_string().contains(&p(&erin.join(".git"))), "{err}");
    assert!(err.to_string().contains("gitdir named by"), "{err}");

    // A gitdir in a read-only grant: reads work, writes are refused.
    let bob = fx.ws("bob").join("repo");
    init(&bob);
    commit(&bob, &[("b.txt", "b\n")], "bob");
    let ro = ws.join("ro");
    std::fs::create_dir_all(&ro).unwrap();
    std::fs::write(
        ro.join(".git"),
        format!("gitdir: {}\n", bob.join(".git").display()),
    )
    .unwrap();
    ok(&ctx, json!({"operation": "log", "path": "ro"}));
    let err = op(
        &ctx,
        json!({"operation": "branch_create", "path": "ro", "branch": "x"}),
    )
    .unwrap_err();
    assert_eq!(
        (err.code().as_str(), err.rule()),
        ("denied", Some("read_only_grant")),
        "{err}"
    );

    // A linked worktree whose commondir goes through a symlink.
    let main = ws.join("main");
    init(&main);
    commit(&main, &[("m.txt", "m\n")], "main");
    let wt = ws.join("wt");
    git(&main, &["worktree", "add", "-q", &p(&wt)]);
    ok(&ctx, json!({"operation": "status", "path": "wt"}));
    let alias = ws.join("alias");
    std::os::unix::fs::symlink(&main, &alias).unwrap();
    std::fs::write(
        main.join(".git/worktrees/wt/commondir"),
        format!("{}\n", alias.join(".git").display()),
    )
    .unwrap();
    let err = op(&ctx, json!({"operation": "status", "path": "wt"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::GitMetadataSymlink, "{err}");
    assert!(err.to_string().contains(&p(&alias)), "{err}");
    assert!(err.to_string().contains("commondir"), "{err}");

    // A symlink inside the git directory (here `config`) is refused too.
    std::fs::rename(real.join(".git/config"), ws.join("real-config")).unwrap();
    std::os::unix::fs::symlink(ws.join("real-config"), real.join(".git/config")).unwrap();
    let err = op(&ctx, json!({"operation": "status", "path": "real"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::GitMetadataSymlink, "{err}");
    assert!(
        err.to_string().contains(&p(&real.join(".git/config"))),
        "{err}"
    );
}

#[test]
fn discovery_stops_at_the_authorized_root() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    // The install root above the workspace is a repository (think: a dotfiles repo in $HOME).
    git(&fx.root, &["init", "-q"]);
    std::fs::create_dir_all(fx.ws("alice").join("sub")).unwrap();
    for path in [None, Some("sub")] {
        let mut args = json!({"operation": "status"});
        if let Some(pth) = path {
            args["path"] = json!(pth);
        }
        let err = op(&ctx, args).unwrap_err();
        assert_eq!(err.code(), ToolErrorCode::NotARepository, "{err}");
        assert!(err.to_string().contains(&p(&fx.ws("alice"))), "{err}");
    }
}

#[test]
fn worktree_list_shows_only_verifiable_worktrees() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    let main = ws.join("proj");
    init(&main);
    commit(&main, &[("a.txt", "a\n")], "first");
    let in_bob = fx.ws("bob").join("wt-bob");
    let in_erin = fx.ws("erin").join("wt-erin");
    let gone = ws.join("wt-gone");
    git(&main, &["worktree", "add", "-q", "-b", "bobs", &p(&in_bob)]);
    git(
        &main,
        &["worktree", "add", "-q", "-b", "erins", &p(&in_erin)],
    );
    git(&main, &["worktree", "add", "-q", "-b", "gone", &p(&gone)]);
    std::fs::remove_dir_all(&gone).unwrap();
    let listed = |ctx: &ToolContext, path: &Path| -> Vec<(String, Value)> {
        let v = ok(ctx, json!({"operation": "worktree_list", "path": p(path)}));
        v["worktrees"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| (w["path"].as_str().unwrap().to_string(), w["branch"].clone()))
            .collect()
    };
    let expected = vec![(p(&main), json!("main")), (p(&in_bob), json!("bobs"))];
    assert_eq!(listed(&ctx, &main), expected);
    // The same from the worktree in the read grant.
    assert_eq!(listed(&ctx, &in_bob), expected);
    // The worktree in erin's workspace is not reachable at all.
    let err = op(&ctx, json!({"operation": "status", "path": p(&in_erin)})).unwrap_err();
    assert_eq!(err.rule(), Some("outside_workspace"), "{err}");

    // worktree_add into the read-only grant is refused, nothing is created.
    let target = fx.ws("bob").join("new-wt");
    let err = op(
        &ctx,
        json!({"operation": "worktree_add", "path": "proj", "worktree_path": p(&target), "branch": "nb"}),
    )
    .unwrap_err();
    assert_eq!(
        (err.code().as_str(), err.rule()),
        ("denied", Some("read_only_grant")),
        "{err}"
    );
    assert!(!target.exists());
    // Removing the worktree in bob's workspace needs write access there.
    let err = op(
        &ctx,
        json!({"operation": "worktree_remove", "path": "proj", "worktree_path": p(&in_bob)}),
    )
    .unwrap_err();
    assert_eq!(err.rule(), Some("read_only_grant"), "{err}");
    assert!(in_bob.join("a.txt").exists());

    // In the workspace: add, list, remove, prune.
    let mine = ws.join("wt-mine");
    ok(
        &ctx,
        json!({"operation": "worktree_add", "path": "proj", "worktree_path": "wt-mine", "branch": "feature"}),
    );
    assert!(mine.join("a.txt").exists());
    assert!(listed(&ctx, &main).contains(&(p(&mine), json!("feature"))));
    ok(
        &ctx,
        json!({"operation": "worktree_add", "path": "proj", "worktree_path": "wt-detached"}),
    );
    let l = listed(&ctx, &main);
    assert!(
        l.contains(&(p(&ws.join("wt-detached")), Value::Null)),
        "{l:?}"
    );
    ok(
        &ctx,
        json!({"operation": "worktree_remove", "path": "proj", "worktree_path": "wt-mine"}),
    );
    assert!(!mine.exists());
    assert!(main.join(".git/worktrees/wt-gone").exists());
    ok(&ctx, json!({"operation": "worktree_prune", "path": "proj"}));
    assert!(!main.join(".git/worktrees/wt-gone").exists());
    // An existing branch is checked out in the new worktree, not recreated.
    ok(
        &ctx,
        json!({"operation": "worktree_add", "path": "proj", "worktree_path": "wt-feature", "branch": "feature"}),
    );
    assert!(listed(&ctx, &main).contains(&(p(&ws.join("wt-feature")), json!("feature"))));
}

#[test]
fn a_write_only_grant_allows_no_git_operation() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let repo = fx.ws("carol").join("repo");
    init(&repo);
    commit(&repo, &[("a.txt", "a\n")], "first");
    let marker = fx.ws("carol").join("hook-ran");
    marker_hook(&repo, "pre-commit", &marker);
    marker_hook(&repo, "post-commit", &marker);
    std::fs::write(repo.join("a.txt"), "changed\n").unwrap();
    git(&repo, &["add", "a.txt"]);
    let wt = fx.ws("carol").join("wt");
    for args in every_read(&repo).into_iter().chain(every_write(&repo, &wt)) {
        let err = op(&ctx, args.clone()).unwrap_err();
        assert_eq!(
            (err.code().as_str(), err.rule()),
            ("denied", Some("write_only_grant")),
            "{args}: {err}"
        );
    }
    assert!(!marker.exists());
    assert_eq!(gitrepo::count(&repo), 1);
    assert!(!wt.exists());
}

#[test]
fn docker_runtime_refuses_writes_before_git_starts_and_reads_work() {
    let text = format!(
        "{FAMILY}\n[runtime]\nkind = \"docker\"\n\n[runtime.docker]\nimage = \"debian:12\"\n"
    );
    let fx = Fixture::new(&text);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    let repo = ws.join("repo");
    init(&repo);
    commit(&repo, &[("a.txt", "a\n")], "first");
    let marker = ws.join("hook-ran");
    marker_hook(&repo, "pre-commit", &marker);
    marker_hook(&repo, "post-commit", &marker);
    std::fs::write(repo.join("a.txt"), "staged\n").unwrap();
    git(&repo, &["add", "a.txt"]);
    let err = op(
        &ctx,
        json!({"operation": "commit", "path": "repo", "message": "m"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::GitWriteInContainer, "{err}");
    assert!(err.to_string().contains("docker"), "{err}");
    assert!(!marker.exists(), "git started");
    assert_eq!(gitrepo::count(&repo), 1);
    for args in every_write(&repo, &ws.join("wt")) {
        assert_eq!(code(op(&ctx, args)).0, "git_write_in_container");
    }
    assert!(!marker.exists());
    let v = ok(&ctx, json!({"operation": "status", "path": "repo"}));
    assert_eq!(v["entries"][0]["path"], "a.txt");
    assert_eq!(v["entries"][0]["index"], "modified");
    for args in every_read(&repo) {
        ok(&ctx, args);
    }
}

#[test]
fn writes_act_on_the_repository_with_arguments_never_taken_as_options() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let repo = fx.ws("alice").join("w");
    init(&repo);
    commit(&repo, &[("a.txt", "a\n")], "first");
    let status = |ctx: &ToolContext| -> BTreeMap<String, (String, String)> {
        let v = ok(ctx, json!({"operation": "status", "path": "w"}));
        v["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["path"].as_str().unwrap().to_string(),
                    (
                        e["index"].as_str().unwrap().to_string(),
                        e["worktree"].as_str().unwrap().to_string(),
                    ),
                )
            })
            .collect()
    };
    // A file named like an option is added as a file; nothing else is staged.
    std::fs::write(repo.join("-A"), "dash\n").unwrap();
    std::fs::write(repo.join("other.txt"), "other\n").unwrap();
    ok(
        &ctx,
        json!({"operation": "add", "path": "w", "paths": ["-A"]}),
    );
    let s = status(&ctx);
    assert_eq!(s["-A"], ("added".into(), "unmodified".into()));
    assert_eq!(s["other.txt"], ("untracked".into(), "untracked".into()));
    // A message like an option is a message.
    let v = ok(
        &ctx,
        json!({"operation": "commit", "path": "w", "message": "--amend"}),
    );
    assert_eq!(gitrepo::count(&repo), 2);
    let log = ok(&ctx, json!({"operation": "log", "path": "w"}));
    assert_eq!(log["commits"][0]["summary"], "--amend");
    assert_eq!(log["commits"][0]["id"], v["head"]);
    assert_eq!(log["commits"][0]["author_name"], "Repo Config");
    // Branches.
    ok(
        &ctx,
        json!({"operation": "branch_create", "path": "w", "branch": "topic"}),
    );
    ok(
        &ctx,
        json!({"operation": "checkout", "path": "w", "branch": "topic"}),
    );
    assert_eq!(
        ok(&ctx, json!({"operation": "status", "path": "w"}))["branch"],
        "topic"
    );
    ok(
        &ctx,
        json!({"operation": "checkout", "path": "w", "branch": "main"}),
    );
    ok(
        &ctx,
        json!({"operation": "branch_delete", "path": "w", "branch": "topic"}),
    );
    let b = ok(&ctx, json!({"operation": "branch", "path": "w"}));
    assert_eq!(b["branches"].as_array().unwrap().len(), 1, "{b}");
    for bad in ["-D", "--orphan", "a..b", "HEAD"] {
        let err = op(
            &ctx,
            json!({"operation": "branch_create", "path": "w", "branch": bad}),
        )
        .unwrap_err();
        assert_eq!(err.code(), ToolErrorCode::InvalidArgument, "{bad}: {err}");
    }
    let err = op(
        &ctx,
        json!({"operation": "add", "path": "w", "paths": ["../../escape"]}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::InvalidArgument, "{err}");
    // Stashes: push two, drop the older, pop the newer.
    std::fs::write(repo.join("a.txt"), "one\n").unwrap();
    ok(
        &ctx,
        json!({"operation": "stash_push", "path": "w", "message": "first stash"}),
    );
    assert_eq!(std::fs::read_to_string(repo.join("a.txt")).unwrap(), "a\n");
    std::fs::write(repo.join("a.txt"), "two\n").unwrap();
    ok(
        &ctx,
        json!({"operation": "stash_push", "path": "w", "message": "second stash", "paths": ["a.txt"]}),
    );
    let l = ok(&ctx, json!({"operation": "stash_list", "path": "w"}));
    assert_eq!(l["stashes"].as_array().unwrap().len(), 2);
    ok(
        &ctx,
        json!({"operation": "stash_drop", "path": "w", "index": 1}),
    );
    let l = ok(&ctx, json!({"operation": "stash_list", "path": "w"}));
    assert_eq!(l["stashes"].as_array().unwrap().len(), 1);
    assert!(l["stashes"][0]["message"]
        .as_str()
        .unwrap()
        .contains("second stash"));
    ok(&ctx, json!({"operation": "stash_pop", "path": "w"}));
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).unwrap(),
        "two\n"
    );
    let l = ok(&ctx, json!({"operation": "stash_list", "path": "w"}));
    assert!(l["stashes"].as_array().unwrap().is_empty());
    // A failing git command reports its stderr.
    let err = op(
        &ctx,
        json!({"operation": "checkout", "path": "w", "branch": "nope"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::CommandFailed);
    assert!(err.to_string().contains("nope"), "{err}");
    // A forbidden path inside the working tree is refused by the policy.
    let ws = fx.ws("alice");
    init(&ws);
    fx.write(&ws.join("secrets/key"), "k");
    let err = op(&ctx, json!({"operation": "add", "paths": ["secrets/key"]})).unwrap_err();
    assert_eq!(
        (err.code().as_str(), err.rule()),
        ("denied", Some("forbidden_path")),
        "{err}"
    );
}

#[test]
fn autonomy_gates_apply_writes_have_side_effects() {
    let fx = Fixture::new(FAMILY);
    let repo = fx.ws("rita").join("r");
    init(&repo);
    commit(&repo, &[("a.txt", "a\n")], "first");
    let ctx = fx.ctx("rita");
    ok(&ctx, json!({"operation": "status", "path": "r"}));
    ok(&ctx, json!({"operation": "log", "path": "r"}));
    let err = op(
        &ctx,
        json!({"operation": "branch_create", "path": "r", "branch": "x"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::Readonly, "{err}");
    let reg = warren_tools::Registry::builtin();
    let tool = reg.get("git_operations").unwrap();
    let check = |v: Value| tool.check(&v, &ctx).unwrap().side_effects;
    assert!(!check(json!({"operation": "status", "path": "r"})));
    assert!(check(json!({"operation": "worktree_prune", "path": "r"})));
    // The quick profile's budget counts writes only.
    let repo = fx.ws("quinn").join("q");
    init(&repo);
    commit(&repo, &[("a.txt", "a\n")], "first");
    let ctx = fx.ctx("quinn");
    for _ in 0..3 {
        ok(&ctx, json!({"operation": "status", "path": "q"}));
    }
    ok(
        &ctx,
        json!({"operation": "branch_create", "path": "q", "branch": "x1"}),
    );
    ok(
        &ctx,
        json!({"operation": "branch_create", "path": "q", "branch": "x2"}),
    );
    let err = op(
        &ctx,
        json!({"operation": "branch_create", "path": "q", "branch": "x3"}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::BudgetExhausted, "{err}");
}

#[test]
fn repository_config_cannot_point_reads_outside_the_grants() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let repo = fx.ws("alice").join("cfg");
    init(&repo);
    commit(&repo, &[("a.txt", "a\n")], "first");
    let erin = fx.ws("erin");
    fx.write(&erin.join("patterns"), "secret-guess\n");
    // The operator's global config may point anywhere.
    std::fs::write(
        fx.home.join(".gitconfig"),
        format!(
            "[core]\n\texcludesFile = {}\n",
            erin.join("patterns").display()
        ),
    )
    .unwrap();
    ok(&ctx, json!({"operation": "status", "path": "cfg"}));
    // The repository's own config may not.
    for (key, value) in [
        ("core.excludesFile", p(&erin.join("patterns"))),
        ("core.attributesFile", p(&erin.join("patterns"))),
        ("include.path", p(&erin.join("patterns"))),
        ("includeIf.gitdir:/.path", p(&erin.join("patterns"))),
    ] {
        git(&repo, &["config", key, &value]);
        let err = op(&ctx, json!({"operation": "status", "path": "cfg"})).unwrap_err();
        assert_eq!(err.rule(), Some("outside_workspace"), "{key}: {err}");
        let msg = err.to_string();
        assert!(msg.contains(&p(&erin.join("patterns"))), "{msg}");
        assert!(msg.contains(&key.to_ascii_lowercase()), "{msg}");
        git(&repo, &["config", "--unset", key]);
    }
    // Inside the grants is fine (a relative include is relative to the git directory).
    std::fs::write(
        repo.join(".git/extra.cfg"),
        "[core]\n\tignoreCase = false\n",
    )
    .unwrap();
    git(&repo, &["config", "include.path", "extra.cfg"]);
    ok(&ctx, json!({"operation": "status", "path": "cfg"}));

    // A linked worktree's own `config.worktree` includes relative to its git directory
    // (`.git/worktrees/<name>`), which is where libgit2 reads from.
    let ws = fx.ws("alice");
    let wt = ws.join("cfg-wt");
    git(&repo, &["worktree", "add", "-q", &p(&wt)]);
    git(&repo, &["config", "extensions.worktreeConfig", "true"]);
    ok(&ctx, json!({"operation": "status", "path": "cfg-wt"}));
    let rel = "../../../../../../erin/workspace/patterns";
    let from_gitdir =
        warren_policy::resolve::normalize(&repo.join(".git/worktrees/cfg-wt").join(rel));
    assert_eq!(from_gitdir, erin.join("patterns"));
    git(&wt, &["config", "--worktree", "include.path", rel]);
    let err = op(&ctx, json!({"operation": "status", "path": "cfg-wt"})).unwrap_err();
    assert_eq!(err.rule(), Some("outside_workspace"), "{err}");
    assert!(
        err.to_string().contains(&p(&erin.join("patterns"))),
        "{err}"
    );
    git(&wt, &["config", "--worktree", "--unset", "include.path"]);
    ok(&ctx, json!({"operation": "status", "path": "cfg-wt"}));

    // An included file's own relative include is relative to that file, which the entry does
    // not say: it is refused rather than checked against the wrong directory.
    fx.write(&erin.join("leak.cfg"), "[core]\n\tignoreCase = false\n");
    let rel = "../../erin/workspace/leak.cfg";
    assert_eq!(
        warren_policy::resolve::normalize(&ws.join(rel)),
        erin.join("leak.cfg")
    );
    fx.write(
        &ws.join("inc1.cfg"),
        &format!("[include]\n\tpath = {rel}\n"),
    );
    git(&repo, &["config", "include.path", &p(&ws.join("inc1.cfg"))]);
    let err = op(&ctx, json!({"operation": "status", "path": "cfg"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::GitMetadata, "{err}");
    assert!(err.to_string().contains(rel), "{err}");
    assert!(err.to_string().contains("include.path"), "{err}");
}

/// Porcelain v1 letters for the tool's states.
fn letter(state: &str) -> char {
    match state {
        "added" => 'A',
        "modified" => 'M',
        "deleted" => 'D',
        "renamed" => 'R',
        "typechange" => 'T',
        "untracked" => '?',
        _ => ' ',
    }
}

#[test]
fn status_agrees_with_git_status_across_directories() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let repo = fx.ws("alice").join("many");
    init(&repo);
    let mut files: Vec<(String, String)> = Vec::new();
    for dir in ["a", "b", "c", "d0", "d1", "d2", "z"] {
        for i in 0..4 {
            files.push((format!("{dir}/f{i}.txt"), format!("{dir} {i}\n")));
        }
    }
    files.push(("ROOT".into(), "root\n".into()));
    files.push(("top.txt".into(), "top\n".into()));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    commit(&repo, &refs, "many");
    std::fs::write(repo.join("a/f0.txt"), "changed\n").unwrap();
    std::fs::write(repo.join("b/f0.txt"), "staged\n").unwrap();
    git(&repo, &["add", "b/f0.txt"]);
    std::fs::write(repo.join("b/f0.txt"), "staged then changed\n").unwrap();
    std::fs::remove_dir_all(repo.join("c")).unwrap();
    git(&repo, &["mv", "d1/f1.txt", "d1/moved.txt"]);
    std::fs::remove_file(repo.join("d2/f2.txt")).unwrap();
    std::os::unix::fs::symlink("elsewhere", repo.join("d2/f2.txt")).unwrap();
    fx.write(&repo.join("new/x.txt"), "x");
    fx.write(&repo.join("new/y.txt"), "y");
    fx.write(&repo.join("UNTRACKED"), "u");
    fx.write(&repo.join("e/staged.txt"), "s");
    git(&repo, &["add", "e/staged.txt"]);
    git(&repo, &["rm", "-q", "top.txt"]);
    std::fs::write(repo.join("z/f3.txt"), "z changed\n").unwrap();

    let mut expected: Vec<String> = git(&repo, &["status", "--porcelain"])
        .lines()
        .map(str::to_string)
        .collect();
    expected.sort();
    let v = ok(&ctx, json!({"operation": "status", "path": "many"}));
    let mut got: Vec<String> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let x = letter(e["index"].as_str().unwrap());
            let y = letter(e["worktree"].as_str().unwrap());
            let path = e["path"].as_str().unwrap();
            match e["from"].as_str() {
                Some(from) => format!("{x}{y} {from} -> {path}"),
                None => format!("{x}{y} {path}"),
            }
        })
        .collect();
    got.sort();
    assert!(expected.len() >= 12, "{expected:?}");
    assert_eq!(got, expected);
}

#[test]
fn commit_works_under_bubblewrap_too() {
    let text = FAMILY.replace("sandbox = \"landlock\"", "sandbox = \"bubblewrap\"");
    let fx = Fixture::new(&text);
    let ctx = fx.ctx("alice");
    if ctx.sandbox.bwrap.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI needs bubblewrap: {:?}",
            ctx.sandbox.bwrap_problem
        );
        eprintln!(
            "skipped: bubblewrap unusable here: {}",
            ctx.sandbox.bwrap_problem.unwrap_or_default()
        );
        return;
    }
    let ws = fx.ws("alice");
    let repo = ws.join("bw");
    init(&repo);
    commit(&repo, &[("a.txt", "a\n")], "first");
    let inside = ws.join("marker-inside");
    let outside = fx.root.join("marker-outside");
    script(
        &repo.join(".git/hooks/post-commit"),
        &format!(
            "echo ran >> '{}'\necho ran >> '{}' 2>/dev/null\nexit 0",
            inside.display(),
            outside.display()
        ),
    );
    std::fs::write(repo.join("a.txt"), "b\n").unwrap();
    ok(
        &ctx,
        json!({"operation": "add", "path": "bw", "paths": ["a.txt"]}),
    );
    let v = ok(
        &ctx,
        json!({"operation": "commit", "path": "bw", "message": "under bwrap"}),
    );
    assert_eq!(v["sandbox"], "bubblewrap");
    assert_eq!(gitrepo::count(&repo), 2);
    assert!(inside.exists());
    assert!(!outside.exists());
}

#[test]
fn malformed_or_escaping_metadata_and_bad_paths_are_refused_naming_them() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");

    // Alternate object directories must be readable through a grant.
    let erin = fx.ws("erin").join("repo");
    init(&erin);
    commit(&erin, &[("secret.txt", "erin's\n")], "erin");
    let alt = ws.join("alt");
    init(&alt);
    commit(&alt, &[("a.txt", "a\n")], "first");
    ok(&ctx, json!({"operation": "log", "path": "alt"}));
    std::fs::write(
        alt.join(".git/objects/info/alternates"),
        format!("{}\n", erin.join(".git/objects").display()),
    )
    .unwrap();
    let err = op(&ctx, json!({"operation": "log", "path": "alt"})).unwrap_err();
    assert_eq!(
        (err.code().as_str(), err.rule()),
        ("denied", Some("outside_workspace")),
        "{err}"
    );
    assert!(
        err.to_string().contains("alternate object directory"),
        "{err}"
    );
    assert!(
        err.to_string().contains(&p(&erin.join(".git/objects"))),
        "{err}"
    );

    // A gitdir that passes through a symlink, even one `..` steps back out of.
    let real = ws.join("real");
    init(&real);
    commit(&real, &[("r.txt", "r\n")], "first");
    std::fs::create_dir_all(ws.join("elsewhere/deep")).unwrap();
    std::os::unix::fs::symlink(ws.join("elsewhere/deep"), ws.join("hop")).unwrap();
    let via = ws.join("via");
    std::fs::create_dir_all(&via).unwrap();
    std::fs::write(via.join(".git"), "gitdir: ../hop/../real/.git\n").unwrap();
    let err = op(&ctx, json!({"operation": "status", "path": "via"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::GitMetadataSymlink, "{err}");
    assert!(err.to_string().contains(&p(&ws.join("hop"))), "{err}");

    // A `.git` file without a `gitdir:` line.
    let bad = ws.join("bad");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join(".git"), "not a pointer\n").unwrap();
    let err = op(&ctx, json!({"operation": "status", "path": "bad"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::GitMetadata, "{err}");
    assert!(err.to_string().contains(&p(&bad.join(".git"))), "{err}");
    assert!(err.to_string().contains("gitdir"), "{err}");

    // `path` naming a file, or nothing.
    let err = op(&ctx, json!({"operation": "status", "path": "real/r.txt"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::InvalidArgument, "{err}");
    assert!(err.to_string().contains(&p(&real.join("r.txt"))), "{err}");
    assert!(err.to_string().contains("not a directory"), "{err}");
    let err = op(&ctx, json!({"operation": "status", "path": "missing"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::NotFound, "{err}");
    assert!(err.to_string().contains(&p(&ws.join("missing"))), "{err}");

    // `worktree_add` into a non-empty directory; `worktree_remove` of a non-worktree.
    std::fs::create_dir_all(ws.join("full")).unwrap();
    std::fs::write(ws.join("full/x"), "x").unwrap();
    let err = op(
        &ctx,
        json!({"operation": "worktree_add", "path": "real", "worktree_path": p(&ws.join("full"))}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::InvalidArgument, "{err}");
    assert!(err.to_string().contains("worktree_path"), "{err}");
    assert!(err.to_string().contains("not empty"), "{err}");
    let err = op(
        &ctx,
        json!({"operation": "worktree_add", "path": "real", "worktree_path": p(&ws.join("full/x"))}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::InvalidArgument, "{err}");
    assert!(err.to_string().contains(&p(&ws.join("full/x"))), "{err}");
    assert!(err.to_string().contains("not a directory"), "{err}");
    let err = op(
        &ctx,
        json!({"operation": "worktree_remove", "path": "real", "worktree_path": p(&ws.join("full"))}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::InvalidArgument, "{err}");
    assert!(err.to_string().contains("not a linked worktree"), "{err}");
    assert_eq!(std::fs::read_to_string(ws.join("full/x")).unwrap(), "x");
}

#[test]
fn alternates_inside_the_grants_work_at_every_depth_and_relative_to_the_objects() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    // base <- middle (absolute alternate) <- top (relative alternate): two levels deep.
    let base = ws.join("base");
    init(&base);
    let id = commit(&base, &[("a.txt", "a\n")], "from the base");
    let middle = ws.join("middle");
    init(&middle);
    std::fs::create_dir_all(middle.join(".git/objects/info")).unwrap();
    std::fs::write(
        middle.join(".git/objects/info/alternates"),
        format!("{}\n", p(&base.join(".git/objects"))),
    )
    .unwrap();
    let top = ws.join("top");
    init(&top);
    std::fs::create_dir_all(top.join(".git/objects/info")).unwrap();
    std::fs::write(
        top.join(".git/objects/info/alternates"),
        "../../../middle/.git/objects\n",
    )
    .unwrap();
    std::fs::write(top.join(".git/refs/heads/main"), format!("{id}\n")).unwrap();
    let v = ok(&ctx, json!({"operation": "log", "path": "top"}));
    assert_eq!(v["commits"][0]["summary"], "from the base", "{v}");
    // An alternate in bob's read grant is fine for reads too.
    let bob = fx.ws("bob").join("shared");
    init(&bob);
    let bid = commit(&bob, &[("b.txt", "b\n")], "bob's");
    std::fs::write(
        middle.join(".git/objects/info/alternates"),
        format!("{}\n", p(&bob.join(".git/objects"))),
    )
    .unwrap();
    std::fs::write(top.join(".git/refs/heads/main"), format!("{bid}\n")).unwrap();
    let v = ok(&ctx, json!({"operation": "log", "path": "top"}));
    assert_eq!(v["commits"][0]["summary"], "bob's", "{v}");
}

#[test]
fn status_and_diff_hide_forbidden_paths_and_writes_never_touch_them() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    // `secrets` is a forbidden path of alice's profile, inside her workspace repository.
    init(&ws);
    commit(
        &ws,
        &[("a.txt", "a\n"), ("secrets/.env", "TOKEN=1\n")],
        "first",
    );
    std::fs::write(ws.join("secrets/.env"), "TOKEN=2\n").unwrap();
    std::fs::write(ws.join("a.txt"), "b\n").unwrap();
    let v = ok(&ctx, json!({"operation": "status"}));
    let paths: Vec<&str> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.txt"], "{v}");
    let v = ok(&ctx, json!({"operation": "diff"}));
    assert!(!v.to_string().contains("TOKEN"), "{v}");
    assert_eq!(v["files"].as_array().unwrap().len(), 1, "{v}");
    // Adding everything would copy the forbidden file into the objects: refused, named.
    let err = op(&ctx, json!({"operation": "add", "paths": ["."]})).unwrap_err();
    assert_eq!(
        (err.code().as_str(), err.rule()),
        ("denied", Some("forbidden_path")),
        "{err}"
    );
    assert!(err.to_string().contains("workspace/secrets"), "{err}");
    // Adding what she may read works.
    ok(&ctx, json!({"operation": "add", "paths": ["a.txt"]}));
    assert_eq!(
        std::fs::read_to_string(ws.join("secrets/.env")).unwrap(),
        "TOKEN=2\n"
    );
}
