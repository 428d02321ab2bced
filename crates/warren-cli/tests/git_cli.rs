//! `warren tool --agent A git_operations` as a black box: the same refusal the agent loop gets
//! for git metadata that links into an ungranted sibling's repository.

use crate::common::warren;
use std::path::{Path, PathBuf};
use std::process::Command;
use warren_testkit::TestInstall;

const CONFIG: &str = r#"schema_version = 1

[risk_profiles.full]
level = "full"
allowed_commands = ["*"]

[agents.mallory]
risk_profile = "full"
[agents.erin]
risk_profile = "full"
"#;

/// Text that must never appear in anything mallory gets back.
const CANARY: &str = "CANARY-git-cli-5813";

fn ws(root: &Path, alias: &str) -> PathBuf {
    std::fs::canonicalize(root)
        .unwrap()
        .join("agents")
        .join(alias)
        .join("workspace")
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", "/nonexistent-warren-git-cli-home")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Fixture")
        .env("GIT_AUTHOR_EMAIL", "fixture@example.test")
        .env("GIT_COMMITTER_NAME", "Fixture")
        .env("GIT_COMMITTER_EMAIL", "fixture@example.test")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn repo(dir: &Path, file: &str, message: &str) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join(file), format!("{message}\n")).unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", message]);
}

#[test]
fn a_refs_link_into_a_siblings_repository_is_refused_by_warren_tool() {
    let t = TestInstall::with_config(CONFIG).unwrap();
    let root = t.root();
    for a in ["mallory", "erin"] {
        std::fs::create_dir_all(ws(root, a)).unwrap();
    }
    let erin = ws(root, "erin").join("repo");
    repo(&erin, "plans.txt", &format!("{CANARY} erin"));
    git(&erin, &["branch", CANARY]);
    let mine = ws(root, "mallory").join("proj");
    repo(&mine, "mine.txt", "mallory's");
    std::os::unix::fs::symlink(
        erin.join(".git/refs/heads"),
        mine.join(".git/refs/heads/leak"),
    )
    .unwrap();
    for op in ["branch", "log", "status"] {
        let args = format!(r#"{{"operation": "{op}", "path": "proj"}}"#);
        let r = warren(
            root,
            &[
                "--json",
                "tool",
                "--agent",
                "mallory",
                "git_operations",
                &args,
            ],
        );
        assert!(!r.stdout.contains(CANARY), "{op}: {}", r.stdout);
        assert!(!r.stderr.contains(CANARY), "{op}: {}", r.stderr);
        assert_eq!(r.code, 1, "{op}: {} {}", r.stdout, r.stderr);
        let v = r.json();
        assert_eq!(v["ok"], false, "{v}");
        assert_eq!(v["error"]["code"], "git_metadata_symlink", "{v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("refs/heads/leak"),
            "{v}"
        );
    }
    // Her own repository without the link reads fine through the same command.
    std::fs::remove_file(mine.join(".git/refs/heads/leak")).unwrap();
    let r = warren(
        root,
        &[
            "--json",
            "tool",
            "--agent",
            "mallory",
            "git_operations",
            r#"{"operation": "branch", "path": "proj"}"#,
        ],
    );
    assert_eq!(r.code, 0, "{} {}", r.stdout, r.stderr);
    assert_eq!(r.json()["output"]["branches"][0]["name"], "main");
}
