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
