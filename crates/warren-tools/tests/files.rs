//! file_read, file_write, file_edit against the policy and the disk.

use crate::fixture::{call, code, Fixture, FAMILY};
use serde_json::json;
use std::os::unix::fs::symlink;
use warren_types::ToolErrorCode;

fn rc(code: &str, rule: &str) -> (String, Option<String>) {
    (code.to_string(), Some(rule.to_string()))
}

#[test]
fn read_grants_and_devices() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    fx.write(&ws.join("notes.txt"), "hello notes");
    fx.write(&fx.ws("bob").join("readme.md"), "bob's readme");
    fx.write(&fx.ws("carol").join("inbox.txt"), "carol's inbox");
    fx.write(&fx.ws("erin").join("private.txt"), "erin's");
    symlink(fx.ws("bob").join("readme.md"), ws.join("bob_link")).unwrap();

    let v = call(&ctx, "file_read", json!({"path": "notes.txt"})).unwrap();
    assert_eq!(v["content"], "hello notes");
    let v = call(&ctx, "file_read", json!({"path": "bob_link"})).unwrap();
    assert_eq!(v["content"], "bob's readme");
    let bob = fx.ws("bob").join("readme.md").display().to_string();
    assert_eq!(
        call(&ctx, "file_read", json!({"path": bob})).unwrap()["content"],
        "bob's readme"
    );

    let carol = fx.ws("carol").join("inbox.txt").display().to_string();
    assert_eq!(
        code(call(&ctx, "file_read", json!({"path": carol}))),
        rc("denied", "write_only_grant")
    );
    assert_eq!(
        code(call(
            &ctx,
            "file_read",
            json!({"path": "../../erin/workspace/private.txt"})
        )),
        rc("denied", "outside_workspace")
    );
    assert_eq!(
        code(call(&ctx, "file_read", json!({"path": "/etc/passwd"}))),
        rc("denied", "outside_workspace")
    );
    assert_eq!(
        code(call(&ctx, "file_read", json!({"path": "~/x"}))),
        rc("denied", "outside_workspace")
    );
    let cfg = fx.root.join("config.toml").display().to_string();
    assert_eq!(
        code(call(&ctx, "file_read", json!({"path": cfg}))),
        rc("denied", "runtime_state")
    );

    // The four devices, through file_read.
    let v = call(&ctx, "file_read", json!({"path": "/dev/null"})).unwrap();
    assert_eq!(v["bytes"], 0);
    let v = call(
        &ctx,
        "file_read",
        json!({"path": "/dev/zero", "max_bytes": 8}),
    )
    .unwrap();
    assert_eq!(v["bytes"], 8);
    assert_eq!(v["content"], "\0\0\0\0\0\0\0\0");
    for dev in ["/dev/urandom", "/dev/random"] {
        let v = call(&ctx, "file_read", json!({"path": dev, "max_bytes": 16})).unwrap();
        assert_eq!(v["bytes"], 16, "{dev}");
    }
}

#[test]
fn write_checks_before_creating_anything() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");

    let v = call(
        &ctx,
        "file_write",
        json!({"path": "a/b/c.txt", "content": "deep"}),
    )
    .unwrap();
    assert_eq!(v["created"], true);
    assert_eq!(
        std::fs::read_to_string(ws.join("a/b/c.txt")).unwrap(),
        "deep"
    );

    // Outside: denied, and no parent directory was created.
    assert_eq!(
        code(call(
            &ctx,
            "file_write",
            json!({"path": "../../erin/workspace/new/dir/f", "content": "x"})
        )),
        rc("denied", "outside_workspace")
    );
    assert!(!fx.ws("erin").join("new").exists());
    // Read-only sibling.
    let bob = fx.ws("bob").join("sub/w.txt").display().to_string();
    assert_eq!(
        code(call(
            &ctx,
            "file_write",
            json!({"path": bob, "content": "x"})
        )),
        rc("denied", "read_only_grant")
    );
    assert!(!fx.ws("bob").join("sub").exists());
    // Write-only sibling: writable.
    let carol = fx.ws("carol").join("drop/box.txt").display().to_string();
    call(
        &ctx,
        "file_write",
        json!({"path": carol, "content": "for carol"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(fx.ws("carol").join("drop/box.txt")).unwrap(),
        "for carol"
    );
    // Dangling symlink to a path outside every grant: denied, target never created.
    symlink(fx.root.join("outside/target.txt"), ws.join("dangling")).unwrap();
    assert_eq!(
        code(call(
            &ctx,
            "file_write",
            json!({"path": "dangling", "content": "x"})
        )),
        rc("denied", "outside_workspace")
    );
    assert!(!fx.root.join("outside").exists());
    // A symlink leaf inside the workspace, to a workspace file: refused, target untouched.
    fx.write(&ws.join("real.txt"), "original");
    symlink(ws.join("real.txt"), ws.join("alias.txt")).unwrap();
    let (c, _) = code(call(
        &ctx,
        "file_write",
        json!({"path": "alias.txt", "content": "x"}),
    ));
    assert_eq!(c, "symlink_leaf");
    assert_eq!(
        std::fs::read_to_string(ws.join("real.txt")).unwrap(),
        "original"
    );
    // Runtime state is never writable.
    let before = std::fs::read_to_string(fx.root.join("config.toml")).unwrap();
    for p in [
        fx.root.join("config.toml"),
        fx.root.join("data/memory/x.db"),
    ] {
        let p = p.display().to_string();
        assert_eq!(
            code(call(&ctx, "file_write", json!({"path": p, "content": "x"}))),
            rc("denied", "runtime_state")
        );
    }
    assert_eq!(
        std::fs::read_to_string(fx.root.join("config.toml")).unwrap(),
        before
    );
    assert!(!fx.root.join("data/memory").exists());
    // Forbidden path inside the workspace.
    assert_eq!(
        code(call(
            &ctx,
            "file_write",
            json!({"path": "secrets/k", "content": "x"})
        )),
        rc("denied", "forbidden_path")
    );
    assert!(!ws.join("secrets").exists());
    // /dev/null is writable.
    call(
        &ctx,
        "file_write",
        json!({"path": "/dev/null", "content": "gone"}),
    )
    .unwrap();
}

#[test]
fn edit_needs_read_and_write_and_leaks_nothing() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    fx.write(&ws.join("code.rs"), "fn a() {}\nfn b() {}\nfn b() {}\n");
    let v = call(
        &ctx,
        "file_edit",
        json!({"path": "code.rs", "old_text": "fn a()", "new_text": "fn alpha()"}),
    )
    .unwrap();
    assert_eq!(v["replaced"], 1);
    assert_eq!(
        std::fs::read_to_string(ws.join("code.rs")).unwrap(),
        "fn alpha() {}\nfn b() {}\nfn b() {}\n"
    );
    assert_eq!(
        code(call(
            &ctx,
            "file_edit",
            json!({"path": "code.rs", "old_text": "zzz", "new_text": "y"})
        ))
        .0,
        "edit_no_match"
    );
    assert_eq!(
        code(call(
            &ctx,
            "file_edit",
            json!({"path": "code.rs", "old_text": "fn b()", "new_text": "y"})
        ))
        .0,
        "edit_ambiguous"
    );

    // Write-only sibling: denied the same way whether or not the text matches.
    fx.write(&fx.ws("carol").join("c.txt"), "carol's secret text");
    let carol = fx.ws("carol").join("c.txt").display().to_string();
    let hit = call(
        &ctx,
        "file_edit",
        json!({"path": carol, "old_text": "secret", "new_text": "x"}),
    )
    .unwrap_err();
    let miss = call(
        &ctx,
        "file_edit",
        json!({"path": carol, "old_text": "absent", "new_text": "x"}),
    )
    .unwrap_err();
    assert_eq!(hit.code(), ToolErrorCode::Denied);
    assert_eq!(hit.rule(), Some("write_only_grant"));
    assert_eq!(hit.to_json(), miss.to_json());
    assert_eq!(
        std::fs::read_to_string(fx.ws("carol").join("c.txt")).unwrap(),
        "carol's secret text"
    );
    // Read-only sibling: denied for write.
    fx.write(&fx.ws("bob").join("b.txt"), "bob");
    let bob = fx.ws("bob").join("b.txt").display().to_string();
    assert_eq!(
        code(call(
            &ctx,
            "file_edit",
            json!({"path": bob, "old_text": "bob", "new_text": "x"})
        )),
        rc("denied", "read_only_grant")
    );
}

#[test]
fn bad_arguments_get_clear_errors_and_write_nothing() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice");
    let cases = vec![
        ("file_read", json!({}), "argument `path`: is required"),
        (
            "file_read",
            json!({"path": 42}),
            "argument `path`: must be a string, got a number",
        ),
        (
            "file_read",
            json!({"path": "a\u{0}b"}),
            "argument `path`: contains a NUL byte",
        ),
        (
            "file_read",
            json!({"path": ""}),
            "argument `path`: must not be empty",
        ),
        (
            "file_read",
            json!({"path": "x", "extra": 1}),
            "argument `extra`: unknown argument",
        ),
        ("file_read", json!("notes.txt"), "must be a JSON object"),
        (
            "file_write",
            json!({"path": "w.txt"}),
            "argument `content`: is required",
        ),
        (
            "file_write",
            json!({"path": "w.txt", "content": ["x"]}),
            "argument `content`: must be a string, got an array",
        ),
        (
            "file_write",
            json!({"path": "w\u{0}.txt", "content": "x"}),
            "contains a NUL byte",
        ),
        (
            "file_edit",
            json!({"path": "w.txt", "old_text": "", "new_text": "x"}),
            "argument `old_text`: must not be empty",
        ),
        (
            "glob_search",
            json!({"pattern": "../*"}),
            "argument `pattern`",
        ),
        (
            "content_search",
            json!({"query": "("}),
            "invalid regular expression",
        ),
        (
            "shell",
            json!({"command": true}),
            "argument `command`: must be a string, got a boolean",
        ),
    ];
    for (tool, args, want) in cases {
        let err = call(&ctx, tool, args.clone()).unwrap_err();
        assert_eq!(
            err.code(),
            ToolErrorCode::InvalidArgument,
            "{tool} {args}: {err}"
        );
        assert!(
            err.to_string().contains(want),
            "{tool} {args}: `{err}` lacks `{want}`"
        );
    }
    assert!(!ws.join("w.txt").exists());
    // Oversized: a 2 MiB file cannot be read; 2 MiB of content is not written.
    fx.write(&ws.join("big.txt"), &"x".repeat(2 * 1024 * 1024));
    let err = call(&ctx, "file_read", json!({"path": "big.txt"})).unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::TooLarge);
    assert!(err.to_string().contains("2097152 bytes"), "{err}");
    let err = call(
        &ctx,
        "file_write",
        json!({"path": "w.txt", "content": "y".repeat(2 * 1024 * 1024)}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::TooLarge);
    assert!(!ws.join("w.txt").exists());
    assert_eq!(
        code(call(&ctx, "file_read", json!({"path": "missing.txt"}))).0,
        "not_found"
    );
    assert_eq!(code(call(&ctx, "nope", json!({}))).0, "unknown_tool");
}

/// A memory database kept outside `data/` (`[memory.sqlite] path`) holds every agent's
/// memories: an agent without `workspace_only` can neither read nor replace it or the files
/// SQLite keeps beside it, through the file tools or a sandboxed shell.
#[test]
fn a_memory_file_outside_data_is_runtime_state() {
    let elsewhere = tempfile::tempdir().unwrap();
    let shared = std::fs::canonicalize(elsewhere.path())
        .unwrap()
        .join("shared-memory");
    let text = format!(
        "{FAMILY}\n[agents.open]\nrisk_profile = \"full\"\n[agents.open.workspace]\nunrestricted_filesystem = true\n\
         [memory.sqlite]\npath = \"{}\"\n",
        shared.join("memory.db").display()
    );
    let fx = Fixture::new(&text);
    fx.write(&shared.join("memory.db"), "every agent's memories");
    fx.write(&shared.join("memory.db-wal"), "recent memories");
    fx.write(&shared.join("notes.txt"), "a neighbour file");
    let ctx = fx.ctx("open");
    let db = shared.join("memory.db").display().to_string();
    let wal = shared.join("memory.db-wal").display().to_string();
    let journal = shared.join("memory.db-journal").display().to_string();
    for p in [&db, &wal] {
        assert_eq!(
            code(call(&ctx, "file_read", json!({"path": p}))),
            rc("denied", "runtime_state"),
            "{p}"
        );
    }
    for p in [&db, &journal] {
        assert_eq!(
            code(call(&ctx, "file_write", json!({"path": p, "content": "x"}))),
            rc("denied", "runtime_state"),
            "{p}"
        );
    }
    // Moving the directory that holds it away is refused as well.
    let dir = shared.display().to_string();
    let err = call(
        &ctx,
        "shell",
        json!({"command": format!("cat {db}; mv {dir} {dir}.gone")}),
    )
    .unwrap_err();
    assert_eq!(err.code(), ToolErrorCode::Denied, "{err}");
    // A neighbour file is an ordinary file of an unrestricted agent.
    let notes = shared.join("notes.txt").display().to_string();
    let v = call(&ctx, "file_read", json!({"path": notes})).unwrap();
    assert_eq!(v["content"], "a neighbour file");
    assert_eq!(
        std::fs::read_to_string(shared.join("memory.db")).unwrap(),
        "every agent's memories"
    );
    assert!(!shared.join("memory.db-journal").exists());
}
