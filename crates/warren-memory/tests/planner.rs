//! Plans of the statements FTS5 runs on its own tables, on a store that was opened new and then
//! grew (the planner statistics recorded on the new file must not make them scan).

use chrono::Utc;
use uuid::Uuid;
use warren_memory::{MemoryEntry, MemoryStore, SqliteStore};

const ALICE: Uuid = Uuid::from_u128(0xa11ce);

/// The plan of FTS5's segment delete (the statement it runs when a merge drops a segment) on
/// alice's index.
async fn segment_delete_plan(store: &SqliteStore) -> String {
    let t = warren_memory::sqlite::index::index_table(&ALICE);
    let rows: Vec<(i64, i64, i64, String)> = sqlx::query_as(&format!(
        "EXPLAIN QUERY PLAN DELETE FROM 'main'.'{t}_data' WHERE id>=? AND id<=?"
    ))
    .bind(1i64)
    .bind(2i64)
    .fetch_all(store.writer())
    .await
    .unwrap();
    rows.into_iter().map(|r| r.3).collect::<Vec<_>>().join("; ")
}

#[tokio::test]
async fn fts_segment_deletes_use_the_rowid_range_after_the_store_grows() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("memory.db");
    let store = SqliteStore::open(&db).await.unwrap();
    let now = Utc::now();
    let rows: Vec<MemoryEntry> = (0..3000)
        .map(|i| MemoryEntry {
            id: Uuid::now_v7(),
            agent_id: Uuid::nil(),
            agent: String::new(),
            key: format!("k{i}"),
            content: format!("fact {i} about the garden shed"),
            category: "core".into(),
            session_id: None,
            importance: 0.5,
            created_at: now,
            updated_at: now,
            score: None,
        })
        .collect();
    store.import_agent("alice", ALICE, &rows).await.unwrap();
    let plan = segment_delete_plan(&store).await;
    assert!(plan.contains("INTEGER PRIMARY KEY"), "{plan}");
    store.close().await;

    // Opened again (statistics refreshed for the grown tables): still the rowid range.
    let again = SqliteStore::open(&db).await.unwrap();
    let plan = segment_delete_plan(&again).await;
    assert!(plan.contains("INTEGER PRIMARY KEY"), "{plan}");
    let stats: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM sqlite_stat1 WHERE tbl LIKE 'memfts\\_%' ESCAPE '\\'",
    )
    .fetch_one(again.pool())
    .await
    .unwrap();
    assert_eq!(stats, 0, "no statistics kept for FTS5's tables");
    again.close().await;
}

/// A listing is by last change, newest first: a row changed after it was stored comes before
/// the rows stored since, whether it is read from the recency index (rows changed since they
/// were stored) or from the creation index (the others). Pages and filters keep that order,
/// only changed rows are in the recency index, and the listing is read in index order, not
/// sorted.
#[tokio::test]
async fn a_listing_is_by_last_change_from_the_two_indexes() {
    use chrono::Duration;
    use warren_memory::{ListQuery, NewMemory};
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("memory.db"))
        .await
        .unwrap();
    let ann = store.ensure_agent("ann").await.unwrap();
    let t0 = Utc::now() - Duration::hours(1);
    for (i, key) in ["a", "b", "c", "d"].into_iter().enumerate() {
        let cat = if i % 2 == 0 { "core" } else { "daily" };
        store
            .store_with_agent(
                &ann,
                &[NewMemory::new(key, format!("row {key}")).category(cat)],
                t0 + Duration::seconds(i as i64),
            )
            .await
            .unwrap();
    }
    // `a` changes after `d` was stored; `c` is stored again with the same time (no change).
    store
        .store_with_agent(
            &ann,
            &[NewMemory::new("a", "row a, changed").category("core")],
            t0 + Duration::seconds(10),
        )
        .await
        .unwrap();
    store
        .store_with_agent(
            &ann,
            &[NewMemory::new("c", "row c").category("core")],
            t0 + Duration::seconds(2),
        )
        .await
        .unwrap();
    let keys = |q: ListQuery| {
        let store = &store;
        let ann = &ann;
        async move {
            let page = store.list_for_agent(ann, &q).await.unwrap();
            (
                page.entries
                    .iter()
                    .map(|e| e.key.clone())
                    .collect::<Vec<_>>(),
                page.total,
            )
        }
    };
    assert_eq!(
        keys(ListQuery::default()).await,
        (vec!["a".into(), "d".into(), "c".into(), "b".into()], 4)
    );
    let page2 = keys(ListQuery {
        offset: 1,
        limit: Some(2),
        ..ListQuery::default()
    })
    .await;
    assert_eq!(page2, (vec!["d".to_string(), "c".to_string()], 4));
    let core = keys(ListQuery {
        category: Some("core".into()),
        ..ListQuery::default()
    })
    .await;
    assert_eq!(core, (vec!["a".to_string(), "c".to_string()], 2));

    // Only `a` is in the recency index.
    let sql: String =
        sqlx::query_scalar("SELECT sql FROM sqlite_schema WHERE name = 'memories_agent_changed'")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert!(sql.ends_with("WHERE updated_at <> created_at"), "{sql}");
    let changed: Vec<String> = sqlx::query_scalar(
        "SELECT key FROM memories INDEXED BY memories_agent_changed \
         WHERE agent_id = ? AND updated_at <> created_at",
    )
    .bind(ann.id)
    .fetch_all(store.pool())
    .await
    .unwrap();
    assert_eq!(changed, vec!["a".to_string()]);
    // The listing's statement shape reads both indexes in order and merges them.
    let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(
        "EXPLAIN QUERY PLAN SELECT m.id, m.created_at AS changed FROM memories m \
         WHERE m.agent_id = ?1 AND m.updated_at = m.created_at UNION ALL \
         SELECT m.id, m.updated_at AS changed FROM memories m \
         WHERE m.agent_id = ?1 AND m.updated_at <> m.created_at ORDER BY 2 DESC, 1 DESC",
    )
    .bind(ann.id)
    .fetch_all(store.pool())
    .await
    .unwrap();
    let plan: Vec<String> = plan.into_iter().map(|r| r.3).collect();
    assert!(plan.iter().any(|p| p.contains("MERGE")), "{plan:?}");
    assert!(
        plan.iter().any(|p| p.contains("memories_agent_changed")),
        "{plan:?}"
    );
    assert!(!plan.iter().any(|p| p.contains("TEMP B-TREE")), "{plan:?}");
    store.close().await;
}
