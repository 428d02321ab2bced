//! `warren memory backends show | check | set` as a black box: a backend that does not open is
//! reported by name and its settings are not saved (the config stays byte for byte); a dry run
//! writes nothing; a saved SQLite path is the file agents then use; a real PostgreSQL checks ok.

use crate::common::warren;
use warren_testkit::TestInstall;

const CONFIG: &str = r#"schema_version = 1

# memory settings test
[risk_profiles.p]
level = "supervised"

[agents.alice]
risk_profile = "p"

[agents.mark]
risk_profile = "p"
[agents.mark.memory]
backend = "markdown"
"#;

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn show_lists_the_backends_in_use() {
    let t = TestInstall::with_config(CONFIG).unwrap();
    let r = warren(t.root(), &["--json", "memory", "backends", "show"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["backend"], "sqlite");
    assert!(v["sqlite_effective_path"]
        .as_str()
        .unwrap()
        .ends_with("data/memory/memory.db"));
    let uses = v["in_use"].as_array().unwrap();
    assert_eq!(uses.len(), 2, "{v}");
    assert!(uses
        .iter()
        .any(|u| u["backend"] == "markdown" && u["agents"] == serde_json::json!(["mark"])));
    assert!(uses
        .iter()
        .any(|u| u["backend"] == "sqlite" && u["agents"] == serde_json::json!(["alice"])));
}

#[test]
fn a_backend_that_does_not_open_is_named_and_nothing_is_saved() {
    let t = TestInstall::with_config(CONFIG).unwrap();
    let before = std::fs::read(t.root().join("config.toml")).unwrap();
    let url = format!("postgres://nobody@127.0.0.1:{}/none", closed_port());
    let args = ["--backend", "postgres", "--postgres-url", url.as_str()];

    let check = warren(
        t.root(),
        &[&["--json", "memory", "backends", "check"][..], &args[..]].concat(),
    );
    assert_eq!(check.code, 1, "{}{}", check.stdout, check.stderr);
    let v = check.json();
    let pg = v
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["backend"] == "postgres")
        .unwrap();
    assert_eq!(pg["ok"], false);
    assert!(!pg["error"].as_str().unwrap().is_empty());

    let set = warren(
        t.root(),
        &[&["--json", "memory", "backends", "set"][..], &args[..]].concat(),
    );
    assert_ne!(set.code, 0);
    let err: serde_json::Value = serde_json::from_str(&set.stderr)
        .or_else(|_| serde_json::from_str(&set.stdout))
        .unwrap_or_else(|_| panic!("no JSON error: {}{}", set.stdout, set.stderr));
    assert_eq!(err["error"]["code"], "storage", "{err}");
    assert!(
        err["error"]["message"]
            .as_str()
            .unwrap()
            .contains("postgres did not open"),
        "{err}"
    );
    assert_eq!(std::fs::read(t.root().join("config.toml")).unwrap(), before);

    // A value that is not a backend is refused before anything is opened.
    let bad = warren(
        t.root(),
        &["memory", "backends", "set", "--backend", "mongo"],
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains("mongo"), "{}", bad.stderr);
    assert_eq!(std::fs::read(t.root().join("config.toml")).unwrap(), before);
}

#[test]
fn a_sqlite_path_is_previewed_then_saved_and_used() {
    let t = TestInstall::with_config(CONFIG).unwrap();
    let before = std::fs::read(t.root().join("config.toml")).unwrap();
    let dry = warren(
        t.root(),
        &[
            "memory",
            "backends",
            "set",
            "--sqlite-path",
            "data/memory/team.db",
            "--dry-run",
        ],
    );
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert!(dry.stdout.contains("team.db"), "{}", dry.stdout);
    assert_eq!(std::fs::read(t.root().join("config.toml")).unwrap(), before);
    assert!(!t.root().join("data/memory/team.db").exists());

    let set = warren(
        t.root(),
        &[
            "--json",
            "memory",
            "backends",
            "set",
            "--sqlite-path",
            "data/memory/team.db",
        ],
    );
    assert_eq!(set.code, 0, "{}", set.stderr);
    assert!(set.json()["sqlite_effective_path"]
        .as_str()
        .unwrap()
        .ends_with("data/memory/team.db"));
    let text = std::fs::read_to_string(t.root().join("config.toml")).unwrap();
    assert!(text.contains("# memory settings test"), "{text}");
    assert!(text.contains("path = \"data/memory/team.db\""), "{text}");
    // The check opened the new file as an agent would; alice's memory goes there now.
    assert!(t.root().join("data/memory/team.db").exists());
    let store = warren(
        t.root(),
        &[
            "memory",
            "store",
            "--agent",
            "alice",
            "--key",
            "k",
            "kept in the team file",
        ],
    );
    assert_eq!(store.code, 0, "{}", store.stderr);
    let db = std::fs::read(t.root().join("data/memory/team.db")).unwrap();
    let wal = std::fs::read(t.root().join("data/memory/team.db-wal")).unwrap_or_default();
    let needle = b"kept in the team file";
    assert!(
        db.windows(needle.len()).any(|w| w == needle)
            || wal.windows(needle.len()).any(|w| w == needle),
        "the row is not in the configured file"
    );
}

#[test]
fn a_reachable_postgres_checks_ok() {
    let Ok(url) = std::env::var("WARREN_TEST_POSTGRES_URL") else {
        eprintln!("WARREN_TEST_POSTGRES_URL is not set: the PostgreSQL check is not run");
        return;
    };
    let t = TestInstall::with_config(CONFIG).unwrap();
    let r = warren(
        t.root(),
        &[
            "--json",
            "memory",
            "backends",
            "check",
            "--backend",
            "postgres",
            "--postgres-url",
            &url,
            "--postgres-schema",
            "warren_backends_check",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let v = r.json();
    assert!(v
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["backend"] == "postgres" && c["ok"] == true));
}
