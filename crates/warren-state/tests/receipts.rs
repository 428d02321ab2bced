//! Receipt chains: append, verify, and detection of edited, removed and reordered records.

use serde_json::json;
use sqlx::SqlitePool;
use warren_state::db::open_sessions_db;
use warren_state::receipts::ReceiptLog;
use warren_state::secrets::FileSecretStore;
use warren_testkit::TestInstall;

async fn log_with(n: usize, t: &TestInstall) -> (ReceiptLog, SqlitePool) {
    let pool = open_sessions_db(&t.layout().sessions_db()).await.unwrap();
    let secrets = FileSecretStore::for_install(&t.layout());
    let log = ReceiptLog::new(pool.clone(), &secrets).unwrap();
    for i in 0..n {
        log.append(
            "alice",
            "file_read",
            &json!({"path": format!("f{i}")}),
            &format!("content {i}"),
        )
        .await
        .unwrap();
    }
    // Another agent's chain is independent.
    log.append("bob", "shell", &json!({"command": "ls"}), "ok")
        .await
        .unwrap();
    (log, pool)
}

#[tokio::test]
async fn intact_chain_verifies_and_survives_reopen() {
    let t = TestInstall::empty().unwrap();
    let (log, _) = log_with(5, &t).await;
    let v = log.verify("alice").await.unwrap();
    assert!(v.ok, "{:?}", v.problems);
    assert_eq!(v.checked, 5);
    drop(log);
    let (log2, _) = log_with(0, &t).await;
    let v = log2.verify("alice").await.unwrap();
    assert!(v.ok && v.checked == 5, "{v:?}");
    assert!(log2.verify("bob").await.unwrap().ok);
}

#[tokio::test]
async fn flipping_one_byte_is_detected_and_named() {
    let t = TestInstall::empty().unwrap();
    let (log, pool) = log_with(5, &t).await;
    let id: String = sqlx::query_scalar("SELECT r.id FROM receipts r JOIN agents a ON a.id = r.agent_id WHERE a.alias = 'alice' AND seq = 3")
        .fetch_one(&pool).await.unwrap();
    // Flip one hex digit of the result hash.
    sqlx::query("UPDATE receipts SET result_hash = CASE substr(result_hash,1,1) WHEN '0' THEN '1' || substr(result_hash,2) ELSE '0' || substr(result_hash,2) END WHERE id = ?")
        .bind(&id).execute(&pool).await.unwrap();
    let v = log.verify("alice").await.unwrap();
    assert!(!v.ok);
    assert_eq!(v.problems.len(), 1, "{:?}", v.problems);
    assert!(
        v.problems[0].contains(&format!("receipt #3 (id {id})")),
        "{:?}",
        v.problems
    );
    assert!(v.problems[0].contains("edited"));
    assert!(
        log.verify("bob").await.unwrap().ok,
        "other agents unaffected"
    );
}

#[tokio::test]
async fn removed_middle_and_newest_records_are_detected() {
    let t = TestInstall::empty().unwrap();
    let (log, pool) = log_with(5, &t).await;
    sqlx::query("DELETE FROM receipts WHERE seq = 2 AND agent_id = (SELECT id FROM agents WHERE alias='alice')")
        .execute(&pool).await.unwrap();
    let v = log.verify("alice").await.unwrap();
    assert!(!v.ok);
    assert!(
        v.problems
            .iter()
            .any(|p| p.starts_with("receipt #3") && p.contains("missing")),
        "{:?}",
        v.problems
    );

    let t2 = TestInstall::empty().unwrap();
    let (log, pool) = log_with(5, &t2).await;
    sqlx::query("DELETE FROM receipts WHERE seq = 5 AND agent_id = (SELECT id FROM agents WHERE alias='alice')")
        .execute(&pool).await.unwrap();
    let v = log.verify("alice").await.unwrap();
    assert!(!v.ok);
    assert!(
        v.problems[0].contains("should end at receipt #5"),
        "{:?}",
        v.problems
    );
}

#[tokio::test]
async fn reordered_records_are_detected() {
    let t = TestInstall::empty().unwrap();
    let (log, pool) = log_with(4, &t).await;
    // Swap the sequence numbers of #2 and #3.
    let q = "UPDATE receipts SET seq = ? WHERE seq = ? AND agent_id = (SELECT id FROM agents WHERE alias='alice')";
    sqlx::query(q)
        .bind(100)
        .bind(2)
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query(q).bind(2).bind(3).execute(&pool).await.unwrap();
    sqlx::query(q)
        .bind(3)
        .bind(100)
        .execute(&pool)
        .await
        .unwrap();
    let v = log.verify("alice").await.unwrap();
    assert!(!v.ok);
    assert!(
        v.problems.iter().any(|p| p.starts_with("receipt #2")),
        "{:?}",
        v.problems
    );
}

/// A receipt column holding a value of the wrong type is an error naming the table and column,
/// for listing, verifying, appending and exporting alike, not a panic.
#[tokio::test]
async fn an_undecodable_receipt_column_is_an_error_naming_it() {
    use sqlx::Connection;
    let t = TestInstall::empty().unwrap();
    let (log, pool) = log_with(2, &t).await;
    let path = t.layout().sessions_db();
    let mut raw = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    // Text into the integer columns of alice's chain and head.
    sqlx::query(
        "UPDATE receipts SET seq = 'two' WHERE seq = 2
         AND agent_id = (SELECT id FROM agents WHERE alias = 'alice')",
    )
    .execute(&mut raw)
    .await
    .unwrap();
    sqlx::query(
        "UPDATE receipt_heads SET last_seq = 'two'
         WHERE agent_id = (SELECT id FROM agents WHERE alias = 'alice')",
    )
    .execute(&mut raw)
    .await
    .unwrap();
    raw.close().await.unwrap();

    let e = log.list("alice").await.unwrap_err();
    assert!(e.to_string().contains("`seq` of table `receipts`"), "{e}");
    let e = log.verify("alice").await.unwrap_err();
    assert!(e.to_string().contains("`seq` of table `receipts`"), "{e}");
    let e = log
        .append("alice", "file_read", &json!({}), "x")
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("`last_seq` of table `receipt_heads`"),
        "{e}"
    );
    let aid: String = sqlx::query_scalar("SELECT id FROM agents WHERE alias = 'alice'")
        .fetch_one(&pool)
        .await
        .unwrap();
    let e = warren_state::owned_state::export_receipts(&pool, &aid)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("`seq` of table `receipts`"), "{e}");
    // bob's chain is untouched and still verifies.
    assert!(log.verify("bob").await.unwrap().ok);
}

/// The anchor file's `seq` for `alias`'s chain (0 when it has none).
async fn anchored_seq(t: &TestInstall, pool: &SqlitePool, alias: &str) -> i64 {
    let aid: String = sqlx::query_scalar("SELECT id FROM agents WHERE alias = ?")
        .bind(alias)
        .fetch_one(pool)
        .await
        .unwrap();
    let path = warren_state::receipts::anchor_path(&t.layout());
    let Ok(bytes) = std::fs::read(&path) else {
        return 0;
    };
    let all: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    all[&aid]["seq"].as_i64().unwrap_or(0)
}

#[tokio::test]
async fn the_anchor_is_raised_after_the_commit_a_new_chain_at_once_a_longer_one_when_asked() {
    let t = TestInstall::empty().unwrap();
    let pool = open_sessions_db(&t.layout().sessions_db()).await.unwrap();
    let secrets = FileSecretStore::for_install(&t.layout());
    let log = ReceiptLog::new(pool.clone(), &secrets)
        .unwrap()
        .with_anchor(warren_state::receipts::anchor_path(&t.layout()));
    let args = json!({"path": "f"});
    let append = |_: usize| log.append("alice", "file_read", &args, "x");
    append(1).await.unwrap();
    // A new chain is anchored at once.
    assert_eq!(anchored_seq(&t, &pool, "alice").await, 1);
    for i in 2..=4 {
        append(i).await.unwrap();
    }
    // Longer chains wait for the end of the turn...
    assert_eq!(anchored_seq(&t, &pool, "alice").await, 1);
    assert!(log.verify("alice").await.unwrap().ok);
    log.anchor_pending().await.unwrap();
    assert_eq!(anchored_seq(&t, &pool, "alice").await, 4);
    // ... and nothing pending writes nothing.
    let before = std::fs::metadata(warren_state::receipts::anchor_path(&t.layout()))
        .unwrap()
        .modified()
        .unwrap();
    log.anchor_pending().await.unwrap();
    let after = std::fs::metadata(warren_state::receipts::anchor_path(&t.layout()))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);

    // A turn cut short (the log dropped with raises pending) leaves the anchor behind the
    // chain, never ahead: the chain verifies after a restart.
    append(5).await.unwrap();
    append(6).await.unwrap();
    drop(log);
    let log = ReceiptLog::new(pool.clone(), &secrets)
        .unwrap()
        .with_anchor(warren_state::receipts::anchor_path(&t.layout()));
    assert_eq!(anchored_seq(&t, &pool, "alice").await, 4);
    let v = log.verify("alice").await.unwrap();
    assert!(v.ok && v.checked == 6, "{v:?}");

    // A lagging anchor still catches the chain's end removed with its head: the head is
    // missing while receipts are left...
    sqlx::query("DELETE FROM receipts WHERE seq >= 5")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("DELETE FROM receipt_heads")
        .execute(&pool)
        .await
        .unwrap();
    let v = log.verify("alice").await.unwrap();
    assert!(!v.ok, "{v:?}");
    // ... and every receipt removed with the head, through the anchor.
    sqlx::query("DELETE FROM receipts")
        .execute(&pool)
        .await
        .unwrap();
    let v = log.verify("alice").await.unwrap();
    assert!(
        v.problems
            .iter()
            .any(|p| p.contains("receipts were removed")),
        "{v:?}"
    );
}

/// A raise of the anchor cut off inside its transaction (its turn's task dropped while the
/// file is being replaced) leaves no transaction open on the pool's connection: the next write
/// commits, another connection sees it, and the chain still verifies.
#[test]
fn an_anchor_raise_dropped_inside_its_transaction_leaves_none_open() {
    // One blocking thread, kept busy: the raise's file replacement waits for it, so the raise
    // is surely parked after its BEGIN when it is dropped.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let t = TestInstall::empty().unwrap();
        let pool = open_sessions_db(&t.layout().sessions_db()).await.unwrap();
        let secrets = FileSecretStore::for_install(&t.layout());
        let log = ReceiptLog::new(pool.clone(), &secrets)
            .unwrap()
            .with_anchor(warren_state::receipts::anchor_path(&t.layout()));
        let args = json!({"path": "f"});
        for _ in 0..3 {
            log.append("alice", "file_read", &args, "x").await.unwrap();
        }
        let busy = tokio::task::spawn_blocking(|| {
            std::thread::sleep(std::time::Duration::from_millis(500));
        });
        let cut =
            tokio::time::timeout(std::time::Duration::from_millis(150), log.anchor_pending()).await;
        assert!(
            cut.is_err(),
            "the raise was to be cut off, it ended: {cut:?}"
        );

        // Another process's view of the file.
        let other = open_sessions_db(&t.layout().sessions_db()).await.unwrap();
        let count = || async {
            sqlx::query_scalar::<_, i64>("SELECT count(*) FROM receipts")
                .fetch_one(&other)
                .await
                .unwrap()
        };
        let before = count().await;
        log.append("bob", "shell", &json!({"command": "ls"}), "ok")
            .await
            .expect("a write after the cut raise");
        assert_eq!(count().await, before + 1, "the write was not committed");
        busy.await.unwrap();
        let v = log.verify("alice").await.unwrap();
        assert!(v.ok, "{v:?}");
    });
}

/// An append that starts while another connection (another process) holds the write lock
/// waits for it and lands next in the chain, instead of failing once that write commits
/// between its read of the head and its own write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_append_waits_behind_another_connections_write() {
    let t = TestInstall::empty().unwrap();
    let (log, _) = log_with(2, &t).await;
    let log = std::sync::Arc::new(log);
    let other = rusqlite::Connection::open(t.layout().sessions_db()).unwrap();
    other
        .execute_batch("BEGIN IMMEDIATE; CREATE TABLE other_writer (n INTEGER);")
        .unwrap();
    let append = {
        let log = log.clone();
        tokio::spawn(async move {
            log.append("alice", "file_read", &json!({"path": "f2"}), "content 2")
                .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        !append.is_finished(),
        "the append did not wait for the write lock"
    );
    other.execute_batch("COMMIT").unwrap();
    let r = append.await.unwrap().unwrap();
    assert_eq!(r.seq, 3);
    let v = log.verify("alice").await.unwrap();
    assert!(v.ok && v.checked == 3, "{v:?}");
}
