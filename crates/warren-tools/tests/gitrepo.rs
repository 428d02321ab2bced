//! Real git repositories for the git tool's tests, built by the `git` program with a clean
//! environment (no inherited `GIT_*`, no global or system config) and fixed authors and dates.

use std::path::Path;
use std::process::Command;

/// The fixed author of fixture commits.
pub const AUTHOR_NAME: &str = "Ada Fixture";
/// Its email.
pub const AUTHOR_EMAIL: &str = "ada@fixture.test";
/// The first commit's date (unix seconds, UTC); each later commit is one hour later.
pub const FIRST_DATE: i64 = 1_700_000_000;

/// A `git` command in `dir` with a clean environment: PATH, a HOME without config, no system
/// config, and a fixed committer.
pub fn command(dir: &Path) -> Command {
    let mut c = Command::new("git");
    c.current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", "/nonexistent-warren-git-fixture-home")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_COMMITTER_NAME", AUTHOR_NAME)
        .env("GIT_COMMITTER_EMAIL", AUTHOR_EMAIL)
        .env("GIT_AUTHOR_NAME", AUTHOR_NAME)
        .env("GIT_AUTHOR_EMAIL", AUTHOR_EMAIL);
    c
}

/// Runs git in `dir`; panics with its stderr when it fails. Returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = command(dir).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?} in {} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs git in `dir` and returns whether it succeeded (for expected failures like merges).
pub fn git_ok(dir: &Path, args: &[&str]) -> bool {
    command(dir).args(args).output().unwrap().status.success()
}

/// Creates `dir` as a repository on branch `main` with the fixture identity in its config.
pub fn init(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.name", "Repo Config"]);
    git(dir, &["config", "user.email", "repo@config.test"]);
}

/// Number of commits reachable from HEAD (0 when unborn).
pub fn count(dir: &Path) -> usize {
    let out = command(dir)
        .args(["rev-list", "--count", "HEAD"])
        .output()
        .unwrap();
    if !out.status.success() {
        return 0;
    }
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Writes `files` (path, content), stages everything and commits with the fixed author at
/// `FIRST_DATE` + one hour per existing commit.
pub fn commit(dir: &Path, files: &[(&str, &str)], message: &str) -> String {
    for (p, text) in files {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    git(dir, &["add", "-A"]);
    let date = format!("@{} +0000", FIRST_DATE + 3600 * count(dir) as i64);
    let out = command(dir)
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date)
        .args(["commit", "-q", "--no-verify", "-m", message])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "commit in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    head(dir)
}

/// The HEAD commit id.
pub fn head(dir: &Path) -> String {
    git(dir, &["rev-parse", "HEAD"]).trim().to_string()
}

/// Installs an executable hook (or any script) at `path`.
pub fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
