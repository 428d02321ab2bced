//! Lifecycle operations: rename (O(1)), streamed export, purge, import with the same UUID.

use futures::{StreamExt, TryStreamExt};
use warren_memory::{AgentMemoryAdmin, MemoryEntry, MemoryError, NewMemory, RecallQuery};

use crate::support::{pg_url, Env, PgSchema};

async fn admin(env: &Env, alias: &str) -> AgentMemoryAdmin {
    let kind = env.config.memory.backend;
    env.stores
        .admin_for_backend(&env.config, kind, alias)
        .await
        .unwrap()
}

async fn export(a: &AgentMemoryAdmin) -> Vec<MemoryEntry> {
    a.export().await.unwrap().try_collect().await.unwrap()
}

async fn lifecycle(env: &Env) {
    let n = env.name;
    let alice = env.h("alice").await;
    let bob = env.h("bob").await;
    let rows: Vec<NewMemory> = (0..2500)
        .map(|i| NewMemory::new(format!("k{i:04}"), format!("fact number {i}")).category("daily"))
        .collect();
    alice.store_batch(rows).await.unwrap();
    alice
        .store(NewMemory::new("late", "stored later"))
        .await
        .unwrap();
    bob.store(NewMemory::new("k0001", "bob's own"))
        .await
        .unwrap();

    let a = admin(env, "alice").await;
    let id = a.agent_id().await.unwrap().unwrap();
    assert_eq!(a.count().await.unwrap(), 2501, "[{n}]");

    // Export streams every row once, in (created_at, id) order, across several pages.
    let out = export(&a).await;
    assert_eq!(out.len(), 2501, "[{n}] export");
    let mut ids: Vec<_> = out.iter().map(|r| r.id).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 2501, "[{n}] no duplicates");
    assert!(out
        .windows(2)
        .all(|w| (w[0].created_at, w[0].id) < (w[1].created_at, w[1].id)));
    assert_eq!(out.last().map(|r| r.key.as_str()), Some("late"));
    assert!(out.iter().all(|r| r.agent_id == id && r.agent == "alice"));

    // Rename re-points the alias: same UUID, same rows, untouched timestamps.
    assert!(a.rename_to("alicia").await.unwrap(), "[{n}] rename");
    let renamed = admin(env, "alicia").await;
    assert_eq!(renamed.agent_id().await.unwrap(), Some(id));
    assert_eq!(admin(env, "alice").await.agent_id().await.unwrap(), None);
    let after = export(&renamed).await;
    assert_eq!(after.len(), 2501);
    assert!(after.iter().all(|r| r.agent == "alicia"));
    assert_eq!(
        after
            .iter()
            .map(|r| (r.id, r.updated_at))
            .collect::<Vec<_>>(),
        out.iter().map(|r| (r.id, r.updated_at)).collect::<Vec<_>>(),
        "[{n}] no row rewritten"
    );
    // Renaming onto an alias that owns rows is refused.
    let err = renamed.rename_to("bob").await.err().unwrap();
    assert!(
        matches!(err, MemoryError::AliasTaken { ref alias, .. } if alias == "bob"),
        "{err}"
    );

    // Purge removes every row of the agent and nothing of bob.
    assert_eq!(renamed.purge().await.unwrap(), 2501, "[{n}] purge");
    assert_eq!(renamed.count().await.unwrap(), 0);
    assert_eq!(renamed.agent_id().await.unwrap(), None);
    assert_eq!(bob.count().await.unwrap(), 1, "[{n}] bob untouched");

    // Import restores under the same UUID and row ids when they are free.
    let restore = admin(env, "alice").await;
    let report = restore.import(id, &out).await.unwrap();
    assert!(report.kept_agent_id, "[{n}] same UUID");
    assert_eq!((report.imported, report.skipped), (2501, 0));
    assert_eq!(restore.agent_id().await.unwrap(), Some(id));
    let back = export(&restore).await;
    assert_eq!(
        back.iter()
            .map(|r| (r.id, r.key.clone(), r.created_at))
            .collect::<Vec<_>>(),
        out.iter()
            .map(|r| (r.id, r.key.clone(), r.created_at))
            .collect::<Vec<_>>(),
        "[{n}] rows restored as they were"
    );
    let fresh = env.h("alice").await;
    let hit = fresh
        .recall(&RecallQuery::new("stored later"))
        .await
        .unwrap();
    assert_eq!(
        hit.first().map(|r| r.key.as_str()),
        Some("late"),
        "[{n}] index rebuilt"
    );

    // The same UUID under another alias is taken: a new UUID and new row ids are used.
    let twin = admin(env, "twin").await;
    let r2 = twin.import(id, &out[..3]).await.unwrap();
    assert!(
        !r2.kept_agent_id && r2.agent_id != id && r2.imported == 3,
        "[{n}] {r2:?}"
    );
    // Importing into an alias that owns rows is refused.
    let err = admin(env, "bob")
        .await
        .import(uuid::Uuid::new_v4(), &out[..1])
        .await;
    assert!(
        matches!(err, Err(MemoryError::AliasTaken { .. })),
        "[{n}] {err:?}"
    );
}

#[tokio::test]
async fn lifecycle_sqlite() {
    lifecycle(&Env::new("sqlite", "", true)).await;
}

#[tokio::test]
async fn lifecycle_postgres() {
    let Some(url) = pg_url() else { return };
    let schema = PgSchema::fresh(&url);
    let env = Env::new("postgres", &schema.memory_section(), true);
    lifecycle(&env).await;
    env.stores.close().await;
}

#[tokio::test]
async fn lifecycle_qdrant() {
    let Some(q) = crate::qdrant::QdrantScratch::fresh() else {
        return;
    };
    lifecycle(&Env::new("qdrant", &q.memory_section(), true)).await;
}

#[tokio::test]
async fn lifecycle_markdown() {
    let env = Env::new("markdown", "[memory]\nbackend = \"markdown\"\n", false);
    let alice = env.h("alice").await;
    alice.store(NewMemory::new("a", "one")).await.unwrap();
    alice
        .store(NewMemory::new("b", "two").category("daily"))
        .await
        .unwrap();
    let admin = env.stores.admin_for(&env.config, "alice").await.unwrap();
    let rows = export(&admin).await;
    assert_eq!(rows.len(), 2);
    assert!(
        !admin.rename_to("x").await.unwrap(),
        "files move with the workspace"
    );
    assert_eq!(admin.purge().await.unwrap(), 2);
    assert_eq!(alice.count().await.unwrap(), 0);
    let report = admin.import(rows[0].agent_id, &rows).await.unwrap();
    assert_eq!(report.imported, 2);
    let b = alice.get("b").await.unwrap().unwrap();
    assert_eq!((b.content.as_str(), b.category.as_str()), ("two", "daily"));
    assert_eq!(b.created_at, rows[1].created_at);
}

/// One batch may name the same key twice: the later row wins and both receipts name one row,
/// whether the repeat is in the same statement (SQLite: up to 500 rows a statement; Postgres:
/// 1,000) or in a later statement of the batch's transaction.
async fn repeated_keys(env: &Env) {
    let alice = env.h("alice").await;
    let mut rows: Vec<NewMemory> = (0..1050)
        .map(|i| NewMemory::new(format!("k{i}"), format!("fact {i}")))
        .collect();
    // k3 is first in the first statement and again in the third; k1049 twice in the third.
    rows.push(NewMemory::new("k3", "fact 3, revised"));
    rows.push(NewMemory::new("k1049", "fact 1049, revised"));
    let out = alice.store_batch(rows).await.unwrap();
    assert_eq!(out.len(), 1052);
    assert_eq!(out[3].entry.id, out[1050].entry.id);
    assert_eq!(out[1049].entry.id, out[1051].entry.id);
    assert_eq!(
        alice.get("k3").await.unwrap().unwrap().content,
        "fact 3, revised"
    );
    assert_eq!(
        alice.get("k1049").await.unwrap().unwrap().content,
        "fact 1049, revised"
    );
    let a = admin(env, "alice").await;
    assert_eq!(a.count().await.unwrap(), 1050);

    // A small batch (one statement) with a repeat, and a single row replacing a stored one.
    let bob = env.h("bob").await;
    let out = bob
        .store_batch(vec![
            NewMemory::new("x", "first"),
            NewMemory::new("y", "other"),
            NewMemory::new("x", "second"),
        ])
        .await
        .unwrap();
    assert_eq!(out[0].entry.id, out[2].entry.id);
    assert_ne!(out[0].entry.id, out[1].entry.id);
    assert_eq!(bob.get("x").await.unwrap().unwrap().content, "second");
    let again = bob.store(NewMemory::new("x", "third")).await.unwrap();
    assert_eq!(again.entry.id, out[0].entry.id);
    assert_eq!(again.entry.created_at, out[0].entry.created_at);
    assert_eq!(bob.get("x").await.unwrap().unwrap().content, "third");
    assert_eq!(bob.count().await.unwrap(), 2);
    assert!(bob.store_batch(Vec::new()).await.unwrap().is_empty());
    // Every row of the batches is found by its words once, with its last content.
    let hits = alice
        .recall(&RecallQuery::new("revised").limit(10))
        .await
        .unwrap();
    let mut keys: Vec<&str> = hits.iter().map(|r| r.key.as_str()).collect();
    keys.sort();
    assert_eq!(keys, ["k1049", "k3"], "[{}]", env.name);
    let old = bob
        .recall(&RecallQuery::new("first second").limit(10))
        .await
        .unwrap();
    assert!(old.is_empty(), "[{}] {old:?}", env.name);
}

#[tokio::test]
async fn a_batch_with_a_repeated_key_keeps_the_later_row() {
    repeated_keys(&Env::new("sqlite", "", true)).await;
}

#[tokio::test]
async fn a_batch_with_a_repeated_key_keeps_the_later_row_postgres() {
    let Some(url) = pg_url() else { return };
    let schema = PgSchema::fresh(&url);
    let env = Env::new("postgres", &schema.memory_section(), true);
    repeated_keys(&env).await;
    env.stores.close().await;
}

/// Export gives back every field as stored (an importance with every digit of an f64, a
/// session, times to the microsecond), also on a store that reads exports over its own
/// connection.
async fn export_is_exact(env: &Env) {
    let n = env.name;
    let alice = env.h("alice").await;
    let importance = 0.123_456_789_012_345_67_f64;
    let mut exact = NewMemory::new("exact", "every digit \u{1F9ED} kept")
        .category("projects")
        .session("s-1");
    exact.importance = importance;
    let stored = alice
        .store_batch(vec![exact, NewMemory::new("plain", "nothing special")])
        .await
        .unwrap();
    let a = admin(env, "alice").await;
    let out = export(&a).await;
    assert_eq!(out.len(), 2, "[{n}]");
    let got = out.iter().find(|r| r.key == "exact").unwrap();
    assert_eq!(got.importance.to_bits(), importance.to_bits(), "[{n}]");
    assert_eq!(got.content, "every digit \u{1F9ED} kept");
    assert_eq!(got.session_id.as_deref(), Some("s-1"));
    assert_eq!(got.category, "projects");
    assert_eq!(got.id, stored[0].entry.id);
    assert_eq!(got.created_at, stored[0].entry.created_at, "[{n}]");
    assert_eq!(got.updated_at, stored[0].entry.updated_at, "[{n}]");
    assert_eq!(got.agent, "alice");
    // An agent the store does not know exports nothing.
    assert!(export(&admin(env, "nobody").await).await.is_empty());
}

#[tokio::test]
async fn export_is_exact_sqlite() {
    export_is_exact(&Env::new("sqlite", "", true)).await;
}

#[tokio::test]
async fn export_is_exact_postgres() {
    let Some(url) = pg_url() else { return };
    let schema = PgSchema::fresh(&url);
    let env = Env::new("postgres", &schema.memory_section(), true);
    export_is_exact(&env).await;
    env.stores.close().await;
}

/// A bulk import: thousands of rows over several statement chunks, ids that collide with stored
/// rows, with each other and with nothing, keys the agent already has; every row keeps its
/// times to the microsecond and is found by recall.
async fn bulk_import(env: &Env) {
    let n = env.name;
    let base = chrono::DateTime::parse_from_rfc3339("2026-08-17T09:05:00.806122+00:00")
        .unwrap()
        .with_timezone(&chrono::Utc);
    let rows: Vec<MemoryEntry> = (0..3200u32)
        .map(|i| MemoryEntry {
            id: uuid::Uuid::new_v4(),
            agent_id: uuid::Uuid::nil(),
            agent: String::new(),
            key: format!("bulk_{i:05}"),
            content: format!("bulk fact {i} zq{i}x about the heat pump"),
            category: ["core", "daily", "conversation"][(i % 3) as usize].to_string(),
            session_id: (i % 3 == 2).then(|| format!("s{}", i % 7)),
            importance: f64::from(i % 10) / 10.0,
            created_at: base + chrono::Duration::microseconds(i64::from(i) * 1_000_003),
            updated_at: base + chrono::Duration::microseconds(i64::from(i) * 1_000_003 + 17),
            score: None,
        })
        .collect();
    let want = |alias: &str, rows: &[MemoryEntry]| {
        let mut v: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    alias.to_string(),
                    r.key.clone(),
                    r.content.clone(),
                    r.category.clone(),
                    r.session_id.clone(),
                    r.created_at,
                    r.updated_at,
                )
            })
            .collect();
        v.sort_by(|a, b| a.1.cmp(&b.1));
        v
    };
    let got = |rows: &[MemoryEntry]| {
        let mut v: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r.agent.clone(),
                    r.key.clone(),
                    r.content.clone(),
                    r.category.clone(),
                    r.session_id.clone(),
                    r.created_at,
                    r.updated_at,
                )
            })
            .collect();
        v.sort_by(|a, b| a.1.cmp(&b.1));
        v
    };

    // First the first 2,000 rows under alice: ids kept.
    let a = admin(env, "alice").await;
    let alice_id = uuid::Uuid::new_v4();
    let r = a.import(alice_id, &rows[..2000]).await.unwrap();
    assert_eq!((r.imported, r.skipped), (2000, 0), "[{n}]");
    assert!(r.kept_agent_id);
    let stored = export(&a).await;
    assert_eq!(got(&stored), want("alice", &rows[..2000]), "[{n}] alice");
    let mut kept: Vec<_> = stored.iter().map(|r| r.id).collect();
    let mut given: Vec<_> = rows[..2000].iter().map(|r| r.id).collect();
    kept.sort();
    given.sort();
    assert_eq!(kept, given, "[{n}] free ids are kept");

    // Every row under bob, with two rows sharing one id in the batch: the 2,000 ids alice holds
    // and the repeated one get new ids, the others are kept.
    let mut for_bob = rows.clone();
    for_bob[2500].id = for_bob[2100].id;
    let b = admin(env, "bob").await;
    let r = b.import(uuid::Uuid::new_v4(), &for_bob).await.unwrap();
    assert_eq!((r.imported, r.skipped), (3200, 0), "[{n}]");
    let bob_rows = export(&b).await;
    assert_eq!(got(&bob_rows), want("bob", &rows), "[{n}] bob");
    let mut all: Vec<_> = stored.iter().chain(&bob_rows).map(|r| r.id).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 5200, "[{n}] every row has its own id");
    let fresh: std::collections::HashSet<_> = rows[2000..].iter().map(|r| r.id).collect();
    let kept_by_bob = bob_rows.iter().filter(|r| fresh.contains(&r.id)).count();
    assert_eq!(kept_by_bob, 1199, "[{n}] free ids kept, the repeat renamed");

    // The rest under alice (an `--update`): the 2,000 keys she has are skipped.
    let r = a.import(alice_id, &rows).await.unwrap();
    assert_eq!((r.imported, r.skipped), (1200, 2000), "[{n}]");
    let again = a.import(alice_id, &rows).await.unwrap();
    assert_eq!((again.imported, again.skipped), (0, 3200), "[{n}]");
    assert_eq!(
        got(&export(&a).await),
        want("alice", &rows),
        "[{n}] alice, all"
    );

    // Recall finds rows of both batches, each under its own agent.
    let alice = env.h("alice").await;
    for i in [7u32, 1999, 2000, 3199] {
        let hits = alice
            .recall(&RecallQuery::new(format!("zq{i}x")).limit(5))
            .await
            .unwrap();
        // alice may also read bob's rows (the suite's grants): her own row is among the hits.
        assert_eq!(
            hits.iter()
                .filter(|h| h.agent == "alice")
                .map(|h| h.key.as_str())
                .collect::<Vec<_>>(),
            vec![format!("bulk_{i:05}")],
            "[{n}] recall of row {i}"
        );
    }
    let bob = env.h("bob").await;
    let hits = bob
        .recall(&RecallQuery::new("zq2500x").limit(5))
        .await
        .unwrap();
    assert!(
        hits.iter()
            .any(|h| h.agent == "bob" && h.key == "bulk_02500"),
        "[{n}] {hits:?}"
    );
}

#[tokio::test]
async fn bulk_import_sqlite() {
    bulk_import(&Env::new("sqlite", "", true)).await;
}

#[tokio::test]
async fn bulk_import_postgres() {
    let Some(url) = pg_url() else { return };
    let schema = PgSchema::fresh(&url);
    let env = Env::new("postgres", &schema.memory_section(), true);
    bulk_import(&env).await;
    env.stores.close().await;
}

/// An export read only in part and dropped gives its connection back: more partial exports
/// than the pool has connections, then the store still answers.
async fn partial_exports_release_their_connections(env: &Env) {
    let n = env.name;
    let alice = env.h("alice").await;
    let rows: Vec<NewMemory> = (0..2500)
        .map(|i| NewMemory::new(format!("k{i:04}"), format!("fact number {i}")))
        .collect();
    alice.store_batch(rows).await.unwrap();
    let a = admin(env, "alice").await;
    for _ in 0..12 {
        let mut s = a.export().await.unwrap();
        let first: Vec<MemoryEntry> = (&mut s).take(5).try_collect().await.unwrap();
        assert_eq!(first.len(), 5, "[{n}]");
        drop(s);
    }
    assert_eq!(a.count().await.unwrap(), 2500, "[{n}]");
    assert_eq!(export(&a).await.len(), 2500, "[{n}]");
    assert_eq!(a.purge().await.unwrap(), 2500, "[{n}]");
}

#[tokio::test]
async fn partial_exports_release_their_connections_sqlite() {
    partial_exports_release_their_connections(&Env::new("sqlite", "", true)).await;
}

#[tokio::test]
async fn partial_exports_release_their_connections_postgres() {
    let Some(url) = pg_url() else { return };
    let schema = PgSchema::fresh(&url);
    let env = Env::new("postgres", &schema.memory_section(), true);
    partial_exports_release_their_connections(&env).await;
    env.stores.close().await;
}
