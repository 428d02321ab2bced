//! The SQLite store's per-agent full-text indexes: a recall over more agents than one statement
//! asks (groups merged), each agent's index holding exactly its own rows, and an agent's words
//! never reaching another agent's recall.

use chrono::Utc;
use warren_memory::sqlite::index::index_table;
use warren_memory::{
    AgentRef, MemoryStore, NewMemory, RecallQuery, RecallScope, ScopeEntry, SqliteStore,
};

/// A new store in a directory of its own (kept until the guard is dropped).
async fn fresh() -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(&dir.path().join("memory.db"))
        .await
        .unwrap();
    (dir, store)
}

fn whole(agent: &AgentRef) -> ScopeEntry {
    ScopeEntry {
        agent: agent.clone(),
        categories: None,
    }
}

/// 250 agents (two statements' worth): the best ten rows of all of them, scored by BM25 over
/// every agent asked (the scores are computed here from the rows' lengths and word counts).
#[tokio::test]
async fn a_recall_over_many_agents_keeps_the_best_rows_of_all_groups() {
    let (_dir, store) = fresh().await;
    let mut agents = Vec::new();
    let mut every = Vec::new();
    // (kestrels, tokens of the hit row) per agent; rows and tokens of all agents.
    let mut shape = Vec::new();
    let (mut rows_all, mut tokens_all) = (0f64, 0f64);
    for a in 0..250usize {
        let agent = store.ensure_agent(&format!("agent{a}")).await.unwrap();
        // Each agent has a row with the word repeated a different number of times among a
        // different number of others, and rows without it.
        let mut rows = vec![NewMemory::new(
            "hit",
            format!(
                "{} {}",
                "kestrel ".repeat(1 + a % 7),
                "filler ".repeat(1 + (a * 13) % 17)
            ),
        )
        .category(if a % 2 == 0 { "core" } else { "daily" })];
        for i in 0..(1 + a % 4) {
            rows.push(NewMemory::new(format!("other{i}"), "nothing to see here"));
        }
        store
            .store_with_agent(&agent, &rows, Utc::now())
            .await
            .unwrap();
        let own = store
            .recall_for_agents(
                &RecallScope {
                    entries: vec![whole(&agent)],
                },
                &RecallQuery::new("kestrel").limit(10),
            )
            .await
            .unwrap();
        assert_eq!(own.len(), 1, "agent{a}: only its own row");
        // "hit" + kestrels + fillers; each other row is 5 tokens ("otherN nothing to see
        // here"); every row has one more, its category token.
        let (m, f) = (1 + a % 7, 1 + (a * 13) % 17);
        shape.push((m as f64, (2 + m + f) as f64));
        rows_all += (2 + a % 4) as f64;
        tokens_all += (2 + m + f + 6 * (1 + a % 4)) as f64;
        agents.push(agent);
    }
    let idf = warren_memory::sqlite::rank::idf(rows_all, 250.0);
    let avgdl = tokens_all / rows_all;
    for (a, (m, dl)) in shape.iter().enumerate() {
        let score = idf * (m * 2.2) / (m + 1.2 * (0.25 + 0.75 * dl / avgdl));
        every.push((score, format!("agent{a}"), a % 2 == 0));
    }
    every.sort_by(|x, y| y.0.total_cmp(&x.0));
    let scope = RecallScope {
        entries: agents.iter().map(whole).collect(),
    };
    let got = store
        .recall_for_agents(&scope, &RecallQuery::new("kestrel").limit(10))
        .await
        .unwrap();
    let got_scores: Vec<String> = got
        .iter()
        .map(|r| format!("{:.9}", r.score.unwrap()))
        .collect();
    let want: Vec<String> = every[..10]
        .iter()
        .map(|(s, _, _)| format!("{s:.9}"))
        .collect();
    assert_eq!(got_scores, want);
    for r in &got {
        assert_eq!(r.key, "hit");
        assert!(every
            .iter()
            .any(|(s, a, _)| *a == r.agent
                && format!("{s:.9}") == format!("{:.9}", r.score.unwrap())));
    }
    // A category grant on every agent (both groups): only `core` rows, the best ten of them.
    let core_only = RecallScope {
        entries: agents
            .iter()
            .map(|a| ScopeEntry {
                agent: a.clone(),
                categories: Some(vec!["core".into()]),
            })
            .collect(),
    };
    let got = store
        .recall_for_agents(&core_only, &RecallQuery::new("kestrel").limit(10))
        .await
        .unwrap();
    assert_eq!(got.len(), 10);
    assert!(got.iter().all(|r| r.category == "core"));
    let want: Vec<String> = every
        .iter()
        .filter(|(_, _, core)| *core)
        .take(10)
        .map(|(s, _, _)| format!("{s:.9}"))
        .collect();
    let got_scores: Vec<String> = got
        .iter()
        .map(|r| format!("{:.9}", r.score.unwrap()))
        .collect();
    assert_eq!(got_scores, want);
    // A category filter the grant does not cover: nothing, from every group.
    let none = store
        .recall_for_agents(
            &core_only,
            &RecallQuery::new("kestrel").limit(10).category("daily"),
        )
        .await
        .unwrap();
    assert!(none.is_empty());
    store.close().await;
}

/// Each index holds exactly its agent's rows: stores, updates, forgets, a rename and an import
/// keep the entry count equal to the row count, and one agent's word is never found through
/// another agent's scope.
#[tokio::test]
async fn each_index_holds_exactly_its_agents_rows() {
    let (_dir, store) = fresh().await;
    let ann = store.ensure_agent("ann").await.unwrap();
    let ben = store.ensure_agent("ben").await.unwrap();
    let rows: Vec<NewMemory> = (0..40)
        .map(|i| NewMemory::new(format!("k{i}"), format!("zqann secret number {i}")))
        .collect();
    store
        .store_with_agent(&ann, &rows, Utc::now())
        .await
        .unwrap();
    store
        .store_with_agent(&ben, &[NewMemory::new("b", "zqben plain note")], Utc::now())
        .await
        .unwrap();
    // Updates replace entries (the old words are gone), forgets remove them.
    store
        .store_with_agent(
            &ann,
            &[NewMemory::new("k1", "rewritten without the word")],
            Utc::now(),
        )
        .await
        .unwrap();
    assert!(store.forget_for_agent(&ann, "k2").await.unwrap());
    assert!(store.rename_agent("ann", "anna").await.unwrap());
    let anna = AgentRef {
        id: ann.id,
        alias: "anna".into(),
    };
    let entries = |id: uuid::Uuid, word: &'static str| {
        let pool = store.pool().clone();
        async move {
            let t = index_table(&id);
            sqlx::query_scalar::<_, i64>(&format!("SELECT count(*) FROM {t} WHERE {t} MATCH ?"))
                .bind(word)
                .fetch_one(&pool)
                .await
                .unwrap()
        }
    };
    assert_eq!(
        entries(ann.id, "zqann").await,
        38,
        "40 stored, 1 rewritten, 1 forgotten"
    );
    assert_eq!(entries(ann.id, "rewritten").await, 1);
    assert_eq!(entries(ann.id, "zqben").await, 0);
    assert_eq!(entries(ben.id, "zqann").await, 0);
    assert_eq!(store.count_for_agent(&anna).await.unwrap(), 39);

    // Through ben's own scope, none of anna's words; with a grant, all of them.
    let q = RecallQuery::new("zqann").limit(100);
    let own = RecallScope {
        entries: vec![whole(&ben)],
    };
    assert!(store.recall_for_agents(&own, &q).await.unwrap().is_empty());
    let granted = RecallScope {
        entries: vec![whole(&ben), whole(&anna)],
    };
    let hits = store.recall_for_agents(&granted, &q).await.unwrap();
    assert_eq!(hits.len(), 38);
    assert!(hits.iter().all(|r| r.agent == "anna"));

    // An agent re-created from an export under a new alias gets a full index of its own.
    let exported: Vec<_> = (0..39)
        .filter(|i| *i != 2)
        .map(|i| warren_memory::MemoryEntry {
            id: uuid::Uuid::now_v7(),
            agent_id: ann.id,
            agent: "anna".into(),
            key: format!("c{i}"),
            content: format!("zqcopy {i}"),
            category: "core".into(),
            session_id: None,
            importance: 0.5,
            created_at: Utc::now(),
            updated_at: Utc::now(),
            score: None,
        })
        .collect();
    let report = store
        .import_agent("copy", uuid::Uuid::new_v4(), &exported)
        .await
        .unwrap();
    assert_eq!(report.imported, 38);
    assert_eq!(entries(report.agent_id, "zqcopy").await, 38);
    assert_eq!(entries(ann.id, "zqcopy").await, 0);
    store.close().await;
}

/// A store whose index write fails (here: the agent's index was dropped behind the store's
/// back) stores nothing, and the next stores, of any size, are not caught in what it left open.
/// On a current-thread runtime a one-chunk store is written on a blocking thread.
#[tokio::test]
async fn a_store_that_fails_half_way_leaves_nothing_and_the_writer_usable() {
    fails_half_way().await;
}

/// The same on a multi-thread runtime, where a one-chunk store is written on the calling
/// task's worker thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_store_that_fails_half_way_on_the_callers_thread_leaves_nothing() {
    tokio::spawn(fails_half_way()).await.unwrap();
}

async fn fails_half_way() {
    let (_dir, store) = fresh().await;
    let ann = store.ensure_agent("ann").await.unwrap();
    let ben = store.ensure_agent("ben").await.unwrap();
    sqlx::query(&format!("DROP TABLE {}", index_table(&ann.id)))
        .execute(store.writer())
        .await
        .unwrap();
    for n in [1usize, 3, 700] {
        let rows: Vec<NewMemory> = (0..n)
            .map(|i| NewMemory::new(format!("k{i}"), "zqlost row"))
            .collect();
        let err = store
            .store_with_agent(&ann, &rows, Utc::now())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("memfts_"), "{n}: {err}");
        let kept: i64 = sqlx::query_scalar("SELECT count(*) FROM memories WHERE agent_id = ?")
            .bind(ann.id)
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(kept, 0, "{n}: nothing of the failed store is kept");
        // The writer is not left inside the failed transaction: ben's rows commit and are seen
        // by another connection.
        store
            .store_with_agent(
                &ben,
                &[NewMemory::new(format!("b{n}"), "zqben")],
                Utc::now(),
            )
            .await
            .unwrap();
        let seen: i64 = sqlx::query_scalar("SELECT count(*) FROM memories WHERE key = ?")
            .bind(format!("b{n}"))
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(seen, 1, "{n}");
    }
    store.close().await;
}

/// A peer purged by another process (another store on the same file) after an agent's
/// allowlist was resolved: the agent's recall still answers its own rows, and the peer's rows
/// are gone from it.
#[tokio::test]
async fn a_peer_purged_elsewhere_does_not_fail_the_recall() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memory.db");
    let here = SqliteStore::open(&path).await.unwrap();
    let there = SqliteStore::open(&path).await.unwrap();
    let ann = here.ensure_agent("ann").await.unwrap();
    let ben = here.ensure_agent("ben").await.unwrap();
    for (a, key) in [(&ann, "a"), (&ben, "b")] {
        here.store_with_agent(a, &[NewMemory::new(key, "zqshared word")], Utc::now())
            .await
            .unwrap();
    }
    let scope = RecallScope {
        entries: vec![whole(&ann), whole(&ben)],
    };
    let q = RecallQuery::new("zqshared").limit(10);
    assert_eq!(here.recall_for_agents(&scope, &q).await.unwrap().len(), 2);
    assert_eq!(there.purge_agent("ben").await.unwrap(), 1);
    let hits = here.recall_for_agents(&scope, &q).await.unwrap();
    assert_eq!(
        hits.iter().map(|r| r.key.as_str()).collect::<Vec<_>>(),
        ["a"]
    );
    // Only the purged peer in scope: nothing, no error.
    let only_ben = RecallScope {
        entries: vec![whole(&ben)],
    };
    assert!(here
        .recall_for_agents(&only_ben, &q)
        .await
        .unwrap()
        .is_empty());
    here.close().await;
    there.close().await;
}

/// An index missing behind the store's back (rows stored by a program that did not keep the
/// per-agent indexes) is rebuilt from the rows when the agent is next registered; the same agent
/// named twice in a scope is asked once.
#[tokio::test]
async fn a_missing_index_is_rebuilt_and_a_repeated_scope_entry_is_asked_once() {
    let (_dir, store) = fresh().await;
    let ann = store.ensure_agent("ann").await.unwrap();
    let rows: Vec<NewMemory> = (0..5)
        .map(|i| NewMemory::new(format!("k{i}"), "zqkept row").category(["core", "daily"][i % 2]))
        .collect();
    store
        .store_with_agent(&ann, &rows, Utc::now())
        .await
        .unwrap();
    sqlx::query(&format!("DROP TABLE {}", index_table(&ann.id)))
        .execute(store.writer())
        .await
        .unwrap();
    let again = store.ensure_agent("ann").await.unwrap();
    assert_eq!(again.id, ann.id);
    let q = RecallQuery::new("zqkept").limit(50);
    let own = store
        .recall_for_agents(&RecallScope::own(ann.clone()), &q)
        .await
        .unwrap();
    assert_eq!(own.len(), 5, "every stored row is found again");

    let twice = RecallScope {
        entries: vec![
            ScopeEntry {
                agent: ann.clone(),
                categories: Some(vec!["core".into()]),
            },
            ScopeEntry {
                agent: ann.clone(),
                categories: Some(vec!["daily".into()]),
            },
        ],
    };
    let hits = store.recall_for_agents(&twice, &q).await.unwrap();
    let mut keys: Vec<&str> = hits.iter().map(|r| r.key.as_str()).collect();
    keys.sort();
    assert_eq!(keys, ["k0", "k1", "k2", "k3", "k4"], "once each");
    store.close().await;
}

/// Query text shaped like the index's own syntax or its scope tokens (a category token, a
/// session token, a column filter, FTS5 operators) is only words of the rows' text: it never
/// widens a category grant or matches the scope column.
#[tokio::test]
async fn query_text_cannot_reach_the_scope_column_or_the_expression() {
    let (_dir, store) = fresh().await;
    let ann = store.ensure_agent("ann").await.unwrap();
    let ben = store.ensure_agent("ben").await.unwrap();
    store
        .store_with_agent(
            &ben,
            &[
                NewMemory::new("secret", "hidden daily plan")
                    .category("daily")
                    .session("s1"),
                NewMemory::new("open", "visible core fact").category("core"),
            ],
            Utc::now(),
        )
        .await
        .unwrap();
    let scope = RecallScope {
        entries: vec![
            whole(&ann),
            ScopeEntry {
                agent: ben.clone(),
                categories: Some(vec!["core".into()]),
            },
        ],
    };
    let daily = warren_memory::text::category_token("daily");
    let session = warren_memory::text::session_token("s1");
    for q in [
        daily.clone(),
        format!("{daily} OR {session}"),
        format!("scope : {daily}"),
        "hidden OR NEAR(hidden plan) OR hid* OR \"plan\"".to_string(),
        format!("body) OR scope : ({daily}"),
        "{scope} : c*".to_string(),
    ] {
        let hits = store
            .recall_for_agents(&scope, &RecallQuery::new(q.clone()).limit(10))
            .await
            .unwrap();
        assert!(
            hits.iter().all(|r| r.key != "secret"),
            "{q}: {:?}",
            hits.iter().map(|r| &r.key).collect::<Vec<_>>()
        );
    }
    // The same words through a grant of every category find the row: the queries above were
    // looking for it.
    let all = RecallScope {
        entries: vec![whole(&ben)],
    };
    let hits = store
        .recall_for_agents(&all, &RecallQuery::new("hidden").limit(10))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    let hits = store
        .recall_for_agents(&scope, &RecallQuery::new("visible").limit(10))
        .await
        .unwrap();
    assert_eq!(hits.len(), 1);
    store.close().await;
}

/// Scores are BM25 over every agent a recall asks: with one agent they are FTS5's own
/// `bm25()` of its index; an agent with few memories is not drowned by a large peer (with
/// statistics per index, a word in half of its two rows would weigh almost nothing).
#[tokio::test]
async fn scores_use_the_statistics_of_every_agent_asked() {
    let (_dir, store) = fresh().await;
    let small = store.ensure_agent("small").await.unwrap();
    let big = store.ensure_agent("big").await.unwrap();
    store
        .store_with_agent(
            &small,
            &[
                NewMemory::new("mine", "kestrel nest"),
                NewMemory::new("other", "unrelated words here"),
            ],
            Utc::now(),
        )
        .await
        .unwrap();
    let rows: Vec<NewMemory> = (0..100)
        .map(|i| {
            let text = if i % 20 == 0 {
                "a long note that mentions the kestrel once among many other words of the day"
            } else {
                "a long note about other things entirely with many words of the day"
            };
            NewMemory::new(format!("b{i}"), text)
        })
        .collect();
    store
        .store_with_agent(&big, &rows, Utc::now())
        .await
        .unwrap();

    // One agent: FTS5's bm25 of its index, to the digit.
    for a in [&small, &big] {
        let t = index_table(&a.id);
        let fts: Vec<f64> = sqlx::query_scalar(&format!(
            "SELECT -bm25({t}, 1.0, 0.0) FROM {t} WHERE {t} MATCH 'body : (\"kestrel\" OR \"nest\")' \
             ORDER BY 1 DESC"
        ))
        .fetch_all(store.pool())
        .await
        .unwrap();
        let ours: Vec<f64> = store
            .recall_for_agents(
                &RecallScope::own(a.clone()),
                &RecallQuery::new("kestrel nest").limit(50),
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.score.unwrap())
            .collect();
        assert_eq!(ours.len(), fts.len(), "{}", a.alias);
        for (o, f) in ours.iter().zip(&fts) {
            assert!((o - f).abs() < 1e-9, "{}: {ours:?} vs {fts:?}", a.alias);
        }
    }

    // Both: the small agent's short row about a kestrel is the best match.
    let both = RecallScope {
        entries: vec![whole(&small), whole(&big)],
    };
    let hits = store
        .recall_for_agents(&both, &RecallQuery::new("kestrel").limit(3))
        .await
        .unwrap();
    assert_eq!(hits[0].key, "mine", "{hits:?}");
    assert!(hits[0].score.unwrap() > 1.0, "{hits:?}");
    store.close().await;
}

/// Stores abandoned part-way (the caller stops waiting, as a cancelled turn does) leave each
/// batch wholly stored or not at all, rows and index entries in agreement, and the writer free
/// for the next store.
#[tokio::test]
async fn abandoned_stores_leave_rows_and_index_in_agreement() {
    let (_dir, store) = fresh().await;
    let ann = store.ensure_agent("ann").await.unwrap();
    let mut abandoned = 0;
    for round in 0..40u64 {
        let rows: Vec<NewMemory> = (0..500)
            .map(|i| NewMemory::new(format!("r{round}k{i}"), format!("zqcancel row {i}")))
            .collect();
        let wait = std::time::Duration::from_micros(200 * (round % 20));
        let done =
            tokio::time::timeout(wait, store.store_with_agent(&ann, &rows, Utc::now())).await;
        match done {
            Ok(stored) => {
                stored.unwrap();
            }
            Err(_) => abandoned += 1,
        }
    }
    assert!(abandoned > 0, "no store was abandoned");
    // The next store is not caught in what an abandoned one left open.
    store
        .store_with_agent(&ann, &[NewMemory::new("last", "zqcancel last")], Utc::now())
        .await
        .unwrap();
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM memories WHERE agent_id = ?")
        .bind(ann.id)
        .fetch_one(store.pool())
        .await
        .unwrap();
    let t = index_table(&ann.id);
    let indexed: i64 = sqlx::query_scalar(&format!(
        "SELECT count(*) FROM {t} WHERE {t} MATCH 'zqcancel'"
    ))
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(rows, indexed);
    assert_eq!((rows - 1) % 500, 0, "whole batches only: {rows}");
    store.close().await;
}

/// Rows of equal score at the limit: the most recently stored wins, in every statement.
#[tokio::test]
async fn ties_at_the_limit_go_to_the_newest_row() {
    let (_dir, store) = fresh().await;
    let ann = store.ensure_agent("ann").await.unwrap();
    let ben = store.ensure_agent("ben").await.unwrap();
    for key in ["first", "second", "third"] {
        for a in [&ann, &ben] {
            store
                .store_with_agent(a, &[NewMemory::new(key, "same words")], Utc::now())
                .await
                .unwrap();
        }
    }
    let scope = RecallScope {
        entries: vec![whole(&ann), whole(&ben)],
    };
    let hits = store
        .recall_for_agents(&scope, &RecallQuery::new("same").limit(2))
        .await
        .unwrap();
    let got: Vec<(&str, &str)> = hits
        .iter()
        .map(|r| (r.agent.as_str(), r.key.as_str()))
        .collect();
    // Every row is three tokens with one hit: all six tie; the two stored last come first.
    assert_eq!(hits[0].score, hits[1].score, "{got:?}");
    assert_eq!(got, [("ben", "third"), ("ann", "third")]);
    store.close().await;
}
