//! Unavailable stores: a clear error naming the backend and location, nothing lost, and a
//! handle the agent loop can still hold.

use warren_config::InstallLayout;
use warren_memory::{MemoryError, MemoryStores, NewMemory, RecallQuery};
use warren_types::MemoryBackendKind;

use crate::support::{suite_config, unvalidated_config};

fn assert_unavailable(err: &MemoryError, backend: &str, location_part: &str) {
    match err {
        MemoryError::Unavailable {
            backend: b,
            location,
            ..
        } => {
            assert_eq!(*b, backend, "{err}");
            assert!(location.contains(location_part), "{err}");
        }
        other => panic!("expected Unavailable from {backend}, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains(backend) && text.contains(location_part),
        "{text}"
    );
}

#[tokio::test]
async fn corrupted_sqlite_file_is_named_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let layout = InstallLayout::new(dir.path());
    let db = layout.memory_db();
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let garbage: Vec<u8> = (0..16384u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&db, &garbage).unwrap();

    let config = suite_config("", true);
    let stores = MemoryStores::new(layout.clone());
    let err = stores.handle_for(&config, "alice").await.err().unwrap();
    assert_unavailable(&err, "sqlite", &db.display().to_string());
    assert!(err.to_string().contains("corrupted"), "{err}");

    // The agent still gets a handle; every call reports memory unavailable.
    let handle = stores.handle_or_unavailable(&config, "alice").await;
    assert!(handle
        .unavailable
        .as_ref()
        .is_some_and(MemoryError::is_unavailable));
    assert_eq!(handle.memory.agent(), "alice");
    assert_eq!(handle.memory.backend(), MemoryBackendKind::Sqlite);
    let e = handle
        .memory
        .recall(&RecallQuery::new("x"))
        .await
        .err()
        .unwrap();
    assert_unavailable(&e, "sqlite", "memory.db");
    assert!(handle.memory.store(NewMemory::new("k", "v")).await.is_err());
    assert_eq!(e.code(), warren_types::ErrorCode::Storage);

    // Nothing was overwritten.
    assert_eq!(std::fs::read(&db).unwrap(), garbage);
}

#[tokio::test]
async fn unreachable_postgres_is_named_without_the_password() {
    let config = suite_config(
        "[memory]\nbackend = \"postgres\"\n[memory.postgres]\nurl = \"postgres://warren:hunter2@127.0.0.1:1/db\"\nschema = \"w\"\n",
        true,
    );
    let dir = tempfile::tempdir().unwrap();
    let stores = MemoryStores::new(InstallLayout::new(dir.path()));
    let err = stores.handle_for(&config, "alice").await.err().unwrap();
    assert_unavailable(&err, "postgres", "127.0.0.1:1");
    assert!(!err.to_string().contains("hunter2"), "{err}");
    assert!(err.to_string().contains("schema w"), "{err}");
    let handle = stores.handle_or_unavailable(&config, "alice").await;
    assert!(handle.unavailable.is_some());
    assert!(handle.memory.count().await.is_err());
}

#[tokio::test]
async fn unreachable_qdrant_is_named() {
    let config = suite_config(
        "[memory]\nbackend = \"qdrant\"\n[memory.qdrant]\nurl = \"http://127.0.0.1:1\"\n",
        true,
    );
    let dir = tempfile::tempdir().unwrap();
    let stores = MemoryStores::new(InstallLayout::new(dir.path()));
    let err = stores.handle_for(&config, "alice").await.err().unwrap();
    assert_unavailable(&err, "qdrant", "http://127.0.0.1:1");
    assert!(err.to_string().contains("warren_memory"), "{err}");
}

#[tokio::test]
async fn missing_backend_settings_are_config_errors() {
    let dir = tempfile::tempdir().unwrap();
    let stores = MemoryStores::new(InstallLayout::new(dir.path()));
    for (section, field) in [
        ("[memory]\nbackend = \"postgres\"\n", "memory.postgres.url"),
        ("[memory]\nbackend = \"qdrant\"\n", "memory.qdrant.url"),
        ("[memory]\nbackend = \"lucid\"\n", "memory.lucid.command"),
    ] {
        // The validator rejects these too; the factory must not rely on it.
        assert!(
            warren_config::parse_config(&format!(
                "{section}[risk_profiles.p]\n[agents.alice]\nrisk_profile = \"p\"\n"
            ))
            .is_err()
                || section.contains("lucid")
        );
        let config = unvalidated_config(section);
        let err = stores.handle_for(&config, "alice").await.err().unwrap();
        assert!(matches!(err, MemoryError::Config { .. }), "{err:?}");
        assert!(err.to_string().contains(field), "{err}");
    }
    let config = suite_config("", true);
    let err = stores.handle_for(&config, "nobody").await.err().unwrap();
    assert_eq!(
        err,
        MemoryError::UnknownAgent {
            alias: "nobody".into()
        }
    );
}
