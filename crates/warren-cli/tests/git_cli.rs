//! `warren tool --agent A git_operations` as a black box: the same refusal the agent loop gets
//! for git metadata that links into an ungranted sibling's repository.

use crate::common::warren;
use std::path::Path;
use warren_testkit::agents::Agents;
use warren_testkit::git::Repo;

/// Text that must never appear in anything mallory gets back.
const CANARY: &str = "CANARY-git-cli-5813";

/// `dir` as a repository whose one commit holds `file` with `message` as its text.
fn repo(dir: &Path, file: &str, message: &str) -> Repo {
    let repo = Repo::init(dir);
    repo.commit(&[(file, &format!("{message}\n"))], message);
    repo
}

#[test]
fn a_refs_link_into_a_siblings_repository_is_refused_by_warren_tool() {
    // Both on the default `full` profile (every command allowed).
    let team = Agents::new(&["mallory", "erin"]).install().unwrap();
    let root = team.root();
    let erin = team.workspace("erin").join("repo");
    repo(&erin, "plans.txt", &format!("{CANARY} erin")).branch(CANARY);
    let mine = team.workspace("mallory").join("proj");
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
