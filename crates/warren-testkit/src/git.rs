//! Real git repositories for tests, built by the `git` program with a clean environment (no
//! inherited `GIT_*`, no global or system config) and fixed authors and dates.
//!
//! [`Repo`] is the builder: [`Repo::init`] (branch `main`, an identity in the repository's own
//! config), [`Repo::write`], [`Repo::commit`], [`Repo::branch`], [`Repo::bare`] for a remote to
//! push to. The free functions take a directory instead of a [`Repo`] for tests that keep paths.
//! Every helper panics with git's stderr when git fails: they build fixtures, so a failure is a
//! broken test, not an outcome.

use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The fixed author (and committer) of fixture commits, set in the environment of every command.
pub const AUTHOR_NAME: &str = "Ada Fixture";
/// Its email.
pub const AUTHOR_EMAIL: &str = "ada@fixture.test";
/// The identity [`Repo::init`] writes into the repository's own config (`user.name`).
pub const CONFIG_NAME: &str = "Repo Config";
/// Its email (`user.email`).
pub const CONFIG_EMAIL: &str = "repo@config.test";
/// The first commit's date (unix seconds, UTC); each later commit is one hour later.
pub const FIRST_DATE: i64 = 1_700_000_000;

/// Unwraps a fixture step or panics naming it.
fn must<T, E: Display>(r: Result<T, E>, what: impl Display) -> T {
    match r {
        Ok(v) => v,
        Err(e) => panic!("{what}: {e}"),
    }
}

/// A `git` command in `dir` with a clean environment: PATH, a HOME without config, no system
/// config, and the fixed author and committer.
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

fn output(c: &mut Command, dir: &Path, args: &[&str]) -> Output {
    must(
        c.output(),
        format_args!("starting git {args:?} in {}", dir.display()),
    )
}

/// Runs git in `dir`; panics with its stderr when it fails. Returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = output(command(dir).args(args), dir, args);
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
    output(command(dir).args(args), dir, args).status.success()
}

/// Creates `dir` as a repository on branch `main` with [`CONFIG_NAME`] in its config.
pub fn init(dir: &Path) -> Repo {
    Repo::init(dir)
}

/// Number of commits reachable from HEAD in `dir` (0 when unborn).
pub fn count(dir: &Path) -> usize {
    Repo::open(dir).count()
}

/// Writes `files` (path, content) into `dir`, stages everything and commits; see
/// [`Repo::commit`]. Returns the new commit id.
pub fn commit(dir: &Path, files: &[(&str, &str)], message: &str) -> String {
    Repo::open(dir).commit(files, message)
}

/// The HEAD commit id of `dir`.
pub fn head(dir: &Path) -> String {
    Repo::open(dir).head()
}

/// Installs an executable shell script (a hook, a filter) at `path`: `#!/bin/sh`, then `body`.
pub fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    write_file(path, &format!("#!/bin/sh\n{body}\n"));
    must(
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)),
        format_args!("chmod {}", path.display()),
    );
}

fn write_file(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        must(
            std::fs::create_dir_all(parent),
            format_args!("creating {}", parent.display()),
        );
    }
    must(
        std::fs::write(path, text),
        format_args!("writing {}", path.display()),
    );
}

/// A repository (or a bare one) at a path, driven by the `git` program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    path: PathBuf,
}

impl Repo {
    /// Creates `dir` (and its parents) as a repository on branch `main`, with [`CONFIG_NAME`]
    /// and [`CONFIG_EMAIL`] as `user.name` / `user.email` in its own config.
    pub fn init(dir: &Path) -> Repo {
        Self::init_on(dir, "main")
    }

    /// [`Repo::init`] with `branch` as the initial branch.
    pub fn init_on(dir: &Path, branch: &str) -> Repo {
        must(
            std::fs::create_dir_all(dir),
            format_args!("creating {}", dir.display()),
        );
        git(dir, &["init", "-q", "-b", branch]);
        git(dir, &["config", "user.name", CONFIG_NAME]);
        git(dir, &["config", "user.email", CONFIG_EMAIL]);
        Repo::open(dir)
    }

    /// Creates `dir` as a bare repository on branch `main` (a remote to push to or clone from).
    pub fn bare(dir: &Path) -> Repo {
        must(
            std::fs::create_dir_all(dir),
            format_args!("creating {}", dir.display()),
        );
        git(dir, &["init", "-q", "--bare", "-b", "main"]);
        Repo::open(dir)
    }

    /// An existing repository at `dir` (nothing is run).
    pub fn open(dir: &Path) -> Repo {
        Repo {
            path: dir.to_path_buf(),
        }
    }

    /// The repository's folder (its work tree, or the bare repository itself).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs git in the repository; panics with its stderr when it fails. Returns stdout.
    pub fn git(&self, args: &[&str]) -> String {
        git(&self.path, args)
    }

    /// Writes `text` to `rel` inside the work tree (parents created); nothing is staged.
    pub fn write(&self, rel: &str, text: &str) -> &Self {
        write_file(&self.path.join(rel), text);
        self
    }

    /// Stages exactly `paths` (relative to the work tree).
    pub fn add(&self, paths: &[&str]) -> &Self {
        let mut args = vec!["add", "--"];
        args.extend_from_slice(paths);
        self.git(&args);
        self
    }

    /// Writes `files` (path, content), stages everything (`add -A`) and commits; see
    /// [`Repo::commit_staged`]. Returns the new commit id.
    pub fn commit(&self, files: &[(&str, &str)], message: &str) -> String {
        for (rel, text) in files {
            self.write(rel, text);
        }
        self.git(&["add", "-A"]);
        self.commit_staged(message)
    }

    /// Commits what is staged, with the fixed author at [`FIRST_DATE`] plus one hour per commit
    /// already reachable from HEAD, and without hooks. Returns the new commit id.
    pub fn commit_staged(&self, message: &str) -> String {
        let date = format!("@{} +0000", FIRST_DATE + 3600 * self.count() as i64);
        let args = ["commit", "-q", "--no-verify", "-m", message];
        let out = output(
            command(&self.path)
                .env("GIT_AUTHOR_DATE", &date)
                .env("GIT_COMMITTER_DATE", &date)
                .args(args),
            &self.path,
            &args,
        );
        assert!(
            out.status.success(),
            "commit in {}: {}",
            self.path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        self.head()
    }

    /// Creates branch `name` at HEAD (without checking it out).
    pub fn branch(&self, name: &str) -> &Self {
        self.git(&["branch", name]);
        self
    }

    /// Checks out the existing branch `name`.
    pub fn checkout(&self, name: &str) -> &Self {
        self.git(&["checkout", "-q", name]);
        self
    }

    /// Adds `url` as the remote `name`.
    pub fn remote(&self, name: &str, url: &str) -> &Self {
        self.git(&["remote", "add", name, url]);
        self
    }

    /// The HEAD commit id.
    pub fn head(&self) -> String {
        self.git(&["rev-parse", "HEAD"]).trim().to_string()
    }

    /// Number of commits reachable from HEAD (0 when unborn).
    pub fn count(&self) -> usize {
        let args = ["rev-list", "--count", "HEAD"];
        let out = output(command(&self.path).args(args), &self.path, &args);
        if !out.status.success() {
            return 0;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        must(
            text.trim().parse(),
            format_args!("rev-list --count: {text}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_have_the_fixed_author_and_hourly_dates_and_branches_push_to_a_bare_remote() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repo::init_on(&dir.path().join("work"), "trunk");
        assert_eq!(repo.count(), 0);
        let first = repo.commit(&[("a/b.txt", "one\n")], "first");
        repo.write("c.txt", "two\n").add(&["c.txt"]);
        let second = repo.commit_staged("second");
        assert_ne!(first, second);
        assert_eq!(repo.count(), 2);
        assert_eq!(repo.git(&["branch", "--show-current"]).trim(), "trunk");
        let log = repo.git(&["log", "--format=%an <%ae> %at", "--reverse"]);
        assert_eq!(
            log,
            format!(
                "{AUTHOR_NAME} <{AUTHOR_EMAIL}> {FIRST_DATE}\n{AUTHOR_NAME} <{AUTHOR_EMAIL}> {}\n",
                FIRST_DATE + 3600
            )
        );
        assert_eq!(repo.git(&["config", "user.name"]).trim(), CONFIG_NAME);

        let remote = Repo::bare(&dir.path().join("remote.git"));
        repo.branch("topic")
            .remote("origin", &remote.path().display().to_string());
        repo.git(&["push", "-q", "origin", "topic"]);
        assert_eq!(remote.git(&["rev-parse", "topic"]).trim(), second);
        assert!(!git_ok(
            remote.path(),
            &["rev-parse", "--verify", "-q", "main"]
        ));
    }

    #[test]
    fn scripts_are_executable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hooks/pre-commit");
        script(&path, "exit 3");
        let status = Command::new(&path).status().unwrap();
        assert_eq!(status.code(), Some(3));
    }
}
