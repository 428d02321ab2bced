//! A context working in another directory than the workspace (an ACP session's cwd): relative
//! paths of every tool and the shell's current directory start there, decided by the same
//! policy check.

use crate::fixture::{call, code, Fixture};
use serde_json::json;
use std::path::Path;
use warren_policy::Access;

/// alice may read and write carol's workspace; erin is not granted.
const CWD: &str = r#"
[risk_profiles.full]
level = "full"
allowed_commands = ["*"]
sandbox = "landlock"

[agents.alice]
risk_profile = "full"
[agents.alice.workspace.access]
carol = "read_write"

[agents.carol]
risk_profile = "full"
[agents.erin]
risk_profile = "full"
"#;

#[test]
fn relative_paths_and_the_shell_start_in_the_working_directory() {
    let fx = Fixture::new(CWD);
    let (own, carol) = (fx.ws("alice"), fx.ws("carol"));
    fx.write(&carol.join("notes.txt"), "carol's notes");
    fx.write(&fx.ws("erin").join("secret.txt"), "erin's");
    let ctx = fx.ctx("alice").in_dir(carol.clone());

    call(
        &ctx,
        "file_write",
        json!({"path": "made.txt", "content": "here"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(carol.join("made.txt")).unwrap(),
        "here"
    );
    assert!(!own.join("made.txt").exists());
    let v = call(&ctx, "file_read", json!({"path": "notes.txt"})).unwrap();
    assert_eq!(v["content"], "carol's notes");
    call(
        &ctx,
        "file_edit",
        json!({"path": "made.txt", "old_text": "here", "new_text": "edited"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(carol.join("made.txt")).unwrap(),
        "edited"
    );
    let found = call(&ctx, "glob_search", json!({"pattern": "*.txt"})).unwrap();
    assert!(found.to_string().contains("notes.txt"), "{found}");
    // `..` leaves the working directory, not the workspace: erin is still refused.
    let (c, rule) = code(call(
        &ctx,
        "file_read",
        json!({"path": "../../erin/workspace/secret.txt"}),
    ));
    assert_eq!(
        (c.as_str(), rule.as_deref()),
        ("denied", Some("outside_workspace"))
    );

    let out = call(&ctx, "shell", json!({"command": "pwd"})).unwrap();
    assert_eq!(out["stdout"], format!("{}\n", carol.display()), "{out}");
    let out = call(&ctx, "shell", json!({"command": "cat notes.txt"})).unwrap();
    assert_eq!(out["stdout"], "carol's notes", "{out}");

    // The same context without a working directory stays in the workspace.
    let ctx = fx.ctx("alice");
    call(
        &ctx,
        "file_write",
        json!({"path": "made.txt", "content": "own"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(own.join("made.txt")).unwrap(),
        "own"
    );
    let out = call(&ctx, "shell", json!({"command": "pwd"})).unwrap();
    assert_eq!(out["stdout"], format!("{}\n", own.display()), "{out}");
}

#[test]
fn the_policy_anchors_relative_paths_at_the_given_base() {
    let fx = Fixture::new(CWD);
    let (own, carol) = (fx.ws("alice"), fx.ws("carol"));
    let policy = fx.policy("alice");
    let d = policy.check_from(&carol, Path::new("x/../made.txt"), Access::Write);
    assert!(d.allowed, "{d:?}");
    assert_eq!(d.path, carol.join("made.txt"));
    assert_eq!(
        policy.check(Path::new("made.txt"), Access::Write).path,
        own.join("made.txt")
    );
    let plan = policy.check_shell_from(&carol, "cat made.txt").unwrap();
    assert_eq!(plan.paths, vec![carol.join("made.txt")]);
    // A shell word leaving the base for an ungranted place is refused as from the workspace.
    assert!(policy
        .check_shell_from(&carol, "cat ../../erin/workspace/secret.txt")
        .is_err());
}
