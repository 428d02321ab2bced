//! Lucid: the local SQLite row always lands; the mirror is a real child process.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use warren_memory::{NewMemory, RecallQuery};
use warren_types::MemoryBackendKind;

use crate::support::Env;

fn script(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.display().to_string()
}

#[tokio::test]
async fn mirror_receives_each_stored_row() {
    let tools = tempfile::tempdir().unwrap();
    let log = tools.path().join("mirror.log");
    let cmd = script(
        tools.path(),
        "lucid",
        &format!("echo \"$1\" >> {0}; cat >> {0}; echo >> {0}", log.display()),
    );
    let env = Env::new(
        "lucid",
        &format!("[memory]\nbackend = \"lucid\"\n[memory.lucid]\ncommand = \"{cmd}\"\n"),
        true,
    );
    let alice = env.h("alice").await;
    assert_eq!(alice.backend(), MemoryBackendKind::Lucid);
    let r = alice
        .store(NewMemory::new("city", "lives in Lyon").category("core"))
        .await
        .unwrap();
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("store"));
    let json: serde_json::Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(json["key"], "city");
    assert_eq!(json["content"], "lives in Lyon");
    assert_eq!(json["category"], "core");
    assert!(json.get("agent").is_none() && json.get("agent_id").is_none());
    // Recall is served by the local store, scoped as usual.
    let got = alice.recall(&RecallQuery::new("Lyon")).await.unwrap();
    assert_eq!(got.len(), 1);
    assert!(env.layout().memory_db().is_file());
}

#[tokio::test]
async fn mirror_failures_are_reported_and_the_local_row_is_kept() {
    let tools = tempfile::tempdir().unwrap();
    let failing = script(tools.path(), "lucid", "echo 'lucid: disk full' >&2; exit 3");
    let env = Env::new(
        "lucid",
        &format!("[memory]\nbackend = \"lucid\"\n[memory.lucid]\ncommand = \"{failing}\"\n"),
        true,
    );
    let alice = env.h("alice").await;
    let r = alice.store(NewMemory::new("k", "precious")).await.unwrap();
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
    let w = &r.warnings[0];
    assert!(w.contains("lucid mirror") && w.contains("`k`"), "{w}");
    assert!(w.contains("disk full") && w.contains('3'), "{w}");
    assert_eq!(
        alice.get("k").await.unwrap().map(|e| e.content),
        Some("precious".to_string())
    );

    let missing = tools.path().join("no-such-lucid").display().to_string();
    let env2 = Env::new(
        "lucid",
        &format!("[memory]\nbackend = \"lucid\"\n[memory.lucid]\ncommand = \"{missing}\"\n"),
        true,
    );
    let h = env2.h("bob").await;
    let r = h.store(NewMemory::new("k", "kept")).await.unwrap();
    assert!(r.warnings[0].contains("cannot start"), "{:?}", r.warnings);
    assert_eq!(h.count().await.unwrap(), 1);
}

#[tokio::test]
async fn none_backend_keeps_nothing_but_is_a_handle() {
    let env = Env::new("none", "[memory]\nbackend = \"none\"\n", true);
    let alice = env.h("alice").await;
    assert_eq!(alice.backend(), MemoryBackendKind::None);
    assert_eq!(alice.agent(), "alice");
    let r = alice.store(NewMemory::new("k", "v")).await.unwrap();
    assert!(r.warnings[0].contains("none"));
    assert!(alice
        .recall(&RecallQuery::new("v"))
        .await
        .unwrap()
        .is_empty());
    assert_eq!(alice.count().await.unwrap(), 0);
    assert!(alice.get("k").await.unwrap().is_none());
    assert!(
        !env.layout().memory_db().exists(),
        "no store file for `none`"
    );
}
