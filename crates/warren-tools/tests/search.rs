//! glob_search and content_search never list what the agent cannot read.

use crate::fixture::{call, Fixture, FAMILY};
use serde_json::json;
use std::os::unix::fs::symlink;

fn setup() -> Fixture {
    let fx = Fixture::new(FAMILY);
    let ws = fx.ws("alice");
    fx.write(&ws.join("src/main.rs"), "fn main() { needle(); }");
    fx.write(&ws.join("src/lib.rs"), "pub fn needle() {}");
    fx.write(&ws.join("docs/readme.md"), "no match here");
    fx.write(&ws.join("secrets/key.rs"), "needle in forbidden");
    fx.write(&fx.ws("erin").join("private.rs"), "needle of erin");
    fx.write(&fx.ws("bob").join("shared.rs"), "needle of bob");
    fx.write(&fx.ws("carol").join("inbox.rs"), "needle of carol");
    symlink(fx.ws("erin").join("private.rs"), ws.join("src/erin.rs")).unwrap();
    symlink(fx.ws("bob").join("shared.rs"), ws.join("src/bob.rs")).unwrap();
    symlink(fx.ws("carol"), ws.join("carol_dir")).unwrap();
    fx
}

#[test]
fn glob_drops_unreadable_matches() {
    let fx = setup();
    let ctx = fx.ctx("alice");
    let ws = fx.ws("alice").display().to_string();
    let v = call(&ctx, "glob_search", json!({"pattern": "**/*.rs"})).unwrap();
    let got: Vec<String> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().replace(&ws, ""))
        .collect();
    assert_eq!(got, vec!["/src/bob.rs", "/src/lib.rs", "/src/main.rs"]);
    // A root that is not readable is an error, not an empty list.
    let carol = fx.ws("carol").display().to_string();
    let err = call(&ctx, "glob_search", json!({"pattern": "*", "path": carol})).unwrap_err();
    assert_eq!(err.rule(), Some("write_only_grant"));
    // A readable sibling root works.
    let bob = fx.ws("bob").display().to_string();
    let v = call(&ctx, "glob_search", json!({"pattern": "*.rs", "path": bob})).unwrap();
    assert_eq!(v["matches"].as_array().unwrap().len(), 1);
}

#[test]
fn content_search_drops_unreadable_matches() {
    let fx = setup();
    let ctx = fx.ctx("alice");
    let v = call(&ctx, "content_search", json!({"query": "needle"})).unwrap();
    let texts: Vec<&str> = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert!(texts.contains(&"pub fn needle() {}"));
    assert!(texts.contains(&"needle of bob"));
    for leak in ["needle of erin", "needle in forbidden", "needle of carol"] {
        assert!(!texts.contains(&leak), "{leak} leaked: {texts:?}");
    }
    assert_eq!(texts.len(), 3, "{texts:?}");
    let m = v["matches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["text"] == "pub fn needle() {}")
        .unwrap();
    assert_eq!(m["line"], 1);
    // Searching one file.
    let v = call(
        &ctx,
        "content_search",
        json!({"query": "ne+dle", "path": "src/main.rs"}),
    )
    .unwrap();
    assert_eq!(v["matches"].as_array().unwrap().len(), 1);
}
