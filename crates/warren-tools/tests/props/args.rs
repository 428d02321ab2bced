//! Every built-in tool called with generated arguments: the keys of its own schema (and
//! unknown ones), each with values of every JSON type, path-like strings that climb, name
//! siblings, carry NUL bytes or run long. No call panics; a refused argument is named in the
//! error; and nothing outside what the agent may write changed.

use crate::fixture::{call, Fixture, FAMILY};
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;
use warren_testkit::props::{args_for, schema_keys};
use warren_tools::Registry;
use warren_types::ToolErrorCode;

/// Every file under `root` (not following links) with its bytes or link target.
fn snapshot(root: &Path, skip: &[&Path]) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            if skip.iter().any(|s| p.starts_with(s)) {
                continue;
            }
            let key = p.strip_prefix(root).unwrap().display().to_string();
            let ft = e.file_type().unwrap();
            if ft.is_symlink() {
                out.insert(
                    key,
                    std::fs::read_link(&p)
                        .unwrap()
                        .into_os_string()
                        .into_encoded_bytes(),
                );
            } else if ft.is_dir() {
                out.insert(key + "/", Vec::new());
                stack.push(p);
            } else {
                out.insert(key, std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

#[test]
fn no_arguments_make_a_tool_panic_or_reach_outside_its_grant() {
    let text = FAMILY.replace(
        "allowed_commands = [\"*\"]",
        "allowed_commands = [\"ls\", \"cat\", \"echo\", \"git\"]",
    );
    let fx = Fixture::new(&text);
    let ws = fx.ws("alice");
    fx.write(&ws.join("a.txt"), "alpha\n");
    fx.write(&ws.join("sub/b.txt"), "beta\n");
    fx.write(&fx.ws("bob").join("notes.md"), "bob's notes\n");
    fx.write(&fx.ws("erin").join("secret.txt"), "erin's secret\n");
    fx.write(&fx.home.join("x"), "home\n");
    // alice writes her workspace and carol's (a write grant); everything else stays as it was.
    let carol = fx.ws("carol");
    let before = snapshot(&fx.root, &[&ws, &carol]);
    let ctx = fx.ctx("alice");
    let registry = Registry::builtin();
    let specs = registry.specs_for(&ctx);
    assert!(specs.len() >= 7, "built-in tools offered: {}", specs.len());
    let tools: Vec<(String, Vec<(String, String)>)> = specs
        .iter()
        .map(|s| {
            let keys = schema_keys(&s.parameters);
            (s.name.to_string(), keys)
        })
        .collect();
    let strategy =
        proptest::sample::select(tools).prop_flat_map(|(name, keys)| (Just(name), args_for(keys)));
    let mut runner = TestRunner::new(crate::config(1500));
    let tally = std::cell::Cell::new((0u32, 0u32));
    let result = runner.run(&strategy, |(name, args)| {
        let (mut ok, mut refused) = tally.get();
        let started = std::time::Instant::now();
        let outcome = call(&ctx, &name, args.clone());
        if std::env::var("WARREN_PROPTEST_SHOW").is_ok() && started.elapsed().as_millis() > 300 {
            eprintln!("slow {name} {args}: {:?}", started.elapsed());
        }
        match outcome {
            Ok(_) => ok += 1,
            Err(e) => {
                refused += 1;
                if std::env::var("WARREN_PROPTEST_SHOW").is_ok() {
                    eprintln!("refused {name}: {}: {e}", e.code());
                }
                if e.code() == ToolErrorCode::InvalidArgument {
                    let msg = e.to_string();
                    prop_assert!(
                        msg.contains('`') || msg.contains("argument"),
                        "{name} {args}: the refusal names no argument: {msg}"
                    );
                }
            }
        }
        tally.set((ok, refused));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (ok, refused) = tally.get();
    eprintln!("generated calls: {ok} ran, {refused} refused");
    assert!(ok > 40, "only {ok} generated calls ran");
    let after = snapshot(&fx.root, &[&ws, &carol]);
    let changed: Vec<_> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .chain(before.keys().filter(|k| !after.contains_key(*k)).cloned())
        .collect();
    assert!(changed.is_empty(), "changed outside the grant: {changed:?}");
}

/// Found by the property above: a shell line the lexer cannot read was refused without
/// naming the argument.
#[test]
fn an_unreadable_shell_line_names_its_argument() {
    let fx = Fixture::new(FAMILY);
    let ctx = fx.ctx("alice");
    for line in ["(", "", "echo 'open"] {
        let e = call(&ctx, "shell", json!({ "command": line })).unwrap_err();
        assert_eq!(e.code(), ToolErrorCode::InvalidArgument, "{line:?}");
        assert!(
            e.to_string().starts_with("argument `command`: "),
            "{line:?}: {e}"
        );
    }
    // Control: a readable line runs.
    assert!(call(&ctx, "shell", json!({ "command": "true" })).is_ok());
}
