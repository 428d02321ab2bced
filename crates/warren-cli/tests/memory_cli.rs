//! `warren memory store | recall | list | forget` as a black box (SQLite backend by default,
//! Markdown by config), including grants and the JSON shape of rules §9.1.

use crate::common::warren;
use warren_testkit::TestInstall;

const GRANTS: &str = r#"schema_version = 1

[risk_profiles.p]

[agents.alice]
risk_profile = "p"
[agents.alice.workspace]
read_memory_from = [{ agent = "bob", categories = ["core"] }]

[agents.bob]
risk_profile = "p"
"#;

fn ok(t: &TestInstall, args: &[&str]) -> crate::common::Run {
    let r = warren(t.root(), args);
    assert_eq!(
        r.code, 0,
        "{args:?}\nstdout:\n{}\nstderr:\n{}",
        r.stdout, r.stderr
    );
    r
}

#[test]
fn store_recall_list_forget_with_json_and_grants() {
    let t = TestInstall::with_config(GRANTS).unwrap();
    ok(
        &t,
        &[
            "memory",
            "store",
            "--agent",
            "bob",
            "--key",
            "colour",
            "favourite colour is teal",
        ],
    );
    ok(
        &t,
        &[
            "memory",
            "store",
            "--agent",
            "bob",
            "--key",
            "walk",
            "--category",
            "daily",
            "colour of the sky at dusk",
        ],
    );
    let r = ok(
        &t,
        &[
            "--json",
            "memory",
            "store",
            "--agent",
            "alice",
            "--key",
            "mine",
            "--session",
            "s1",
            "my colour is gold",
        ],
    );
    assert_eq!(r.json()["item"]["agent"], "alice");
    assert!(
        t.layout().memory_db().is_file(),
        "SQLite store at data/memory/memory.db"
    );

    // Recall as alice: her own row plus bob's `core` row, not bob's `daily` one.
    let v = ok(
        &t,
        &["--json", "memory", "recall", "--agent", "alice", "colour"],
    )
    .json();
    let rows = v.as_array().unwrap();
    let seen: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["agent"].as_str().unwrap().into(),
                r["key"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(seen.contains(&("alice".into(), "mine".into())), "{seen:?}");
    assert!(seen.contains(&("bob".into(), "colour".into())), "{seen:?}");
    assert!(!seen.iter().any(|(_, k)| k == "walk"), "{seen:?}");
    for r in rows {
        for field in [
            "agent",
            "key",
            "content",
            "category",
            "session",
            "score",
            "created_at",
            "updated_at",
        ] {
            assert!(r.get(field).is_some(), "missing {field} in {r}");
        }
        // Never changed since stored: the two times are the same.
        assert_eq!(r["created_at"], r["updated_at"], "{r}");
        assert!(
            r["score"].as_f64().is_some(),
            "keyword recall has a score: {r}"
        );
    }
    let mine = rows.iter().find(|r| r["key"] == "mine").unwrap();
    assert_eq!(mine["session"], "s1");
    assert_eq!(mine["category"], "core");

    // Bob has no grant: he never sees alice.
    let v = ok(
        &t,
        &[
            "--json", "memory", "recall", "--agent", "bob", "--limit", "5", "colour",
        ],
    )
    .json();
    assert!(
        v.as_array().unwrap().iter().all(|r| r["agent"] == "bob"),
        "{v}"
    );

    // List is own rows only; human output names the agent.
    let v = ok(&t, &["--json", "memory", "list", "--agent", "bob"]).json();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert!(v[0]["score"].is_null());
    let text = ok(&t, &["memory", "list", "--agent", "alice"]).stdout;
    assert!(
        text.contains("[alice] mine (core): my colour is gold"),
        "{text}"
    );

    // Forget through alice never touches bob's row with the same key.
    ok(
        &t,
        &[
            "memory",
            "store",
            "--agent",
            "alice",
            "--key",
            "colour",
            "alice's colour",
        ],
    );
    ok(&t, &["memory", "forget", "--agent", "alice", "colour"]);
    let r = warren(
        t.root(),
        &["--json", "memory", "forget", "--agent", "alice", "colour"],
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.json()["error"]["code"], "not_found");
    let v = ok(&t, &["--json", "memory", "list", "--agent", "bob"]).json();
    assert!(
        v.as_array().unwrap().iter().any(|r| r["key"] == "colour"),
        "{v}"
    );
}

#[test]
fn bad_input_is_named() {
    let t = TestInstall::with_config(GRANTS).unwrap();
    let r = warren(
        t.root(),
        &[
            "--json", "memory", "store", "--agent", "ghost", "--key", "k", "v",
        ],
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");
    assert!(r.stderr.contains("ghost"), "{}", r.stderr);
    let r = warren(
        t.root(),
        &[
            "--json", "memory", "store", "--agent", "bob", "--key", " ", "v",
        ],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.json()["error"]["code"], "invalid_argument");
    assert!(r.stderr.contains("key"), "{}", r.stderr);
    let r = warren(
        t.root(),
        &["memory", "recall", "--agent", "bob", "--limit", "0", "x"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn corrupted_store_is_reported_with_its_path() {
    let t = TestInstall::with_config(GRANTS).unwrap();
    let db = t.layout().memory_db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    std::fs::write(&db, vec![0x5au8; 8192]).unwrap();
    let r = warren(t.root(), &["--json", "memory", "list", "--agent", "bob"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "storage");
    assert!(
        r.stderr.contains("sqlite") && r.stderr.contains("memory.db"),
        "{}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        vec![0x5au8; 8192],
        "file left as it was"
    );
}

#[test]
fn markdown_backend_writes_the_workspace_files() {
    let t = TestInstall::with_config(
        "schema_version = 1\n[memory]\nbackend = \"markdown\"\n[risk_profiles.p]\n[agents.alice]\nrisk_profile = \"p\"\n[agents.alice.workspace]\nread_memory_from = [\"bob\"]\n[agents.bob]\nrisk_profile = \"p\"\n",
    )
    .unwrap();
    ok(
        &t,
        &[
            "memory",
            "store",
            "--agent",
            "bob",
            "--key",
            "pet",
            "a cat named Miso",
        ],
    );
    let md =
        std::fs::read_to_string(t.layout().default_workspace("bob").join("MEMORY.md")).unwrap();
    assert!(
        md.contains("[key:pet] [category:core]") && md.contains("a cat named Miso"),
        "{md}"
    );
    let v = ok(
        &t,
        &["--json", "memory", "recall", "--agent", "alice", "cat"],
    )
    .json();
    assert_eq!(v[0]["agent"], "bob");
    assert_eq!(v[0]["content"], "[bob] a cat named Miso");
}
