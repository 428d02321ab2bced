//! The behavioural suite: one generic function run against every backend that can hold the
//! scenario (SQLite, Postgres, Markdown, Qdrant when a server is given).

use warren_memory::{ListQuery, Memory, MemoryEntry, NewMemory, RecallQuery};

use crate::support::Env;

fn keys(rows: &[MemoryEntry]) -> Vec<String> {
    rows.iter()
        .map(|r| format!("{}:{}", r.agent, r.key))
        .collect()
}

fn has(rows: &[MemoryEntry], agent: &str, key: &str) -> bool {
    rows.iter().any(|r| r.agent == agent && r.key == key)
}

async fn store(h: &dyn Memory, key: &str, content: &str, category: &str) {
    let r = h
        .store(NewMemory::new(key, content).category(category))
        .await
        .unwrap_or_else(|e| panic!("store {key}: {e}"));
    assert_eq!(r.entry.agent, h.agent(), "store stamps the bound agent");
}

async fn recall(h: &dyn Memory, q: RecallQuery) -> Vec<MemoryEntry> {
    h.recall(&q)
        .await
        .unwrap_or_else(|e| panic!("recall {:?} as {}: {e}", q.query, h.agent()))
}

/// Every acceptance bullet of the memory issue that a backend can hold.
pub async fn behavioural_suite(env: &Env) {
    let n = env.name;
    let (alice, bob, carol, dave, erin) = (
        env.h("alice").await,
        env.h("bob").await,
        env.h("carol").await,
        env.h("dave").await,
        env.h("erin").await,
    );
    store(&*alice, "a_note", "zebra crossing near the office", "core").await;
    store(&*bob, "b_core", "zebra facts for the core file", "core").await;
    store(&*bob, "b_daily", "zebra seen on the daily walk", "daily").await;
    store(&*bob, "b_proj", "zebra project plan", "projects").await;
    store(&*erin, "e_secret", "zebra secret of erin", "core").await;

    // Own rows are always visible.
    let a = recall(&*alice, RecallQuery::new("zebra").limit(50)).await;
    assert!(has(&a, "alice", "a_note"), "[{n}] own row: {:?}", keys(&a));
    let e = recall(&*erin, RecallQuery::new("zebra").limit(50)).await;
    assert_eq!(
        keys(&e),
        vec!["erin:e_secret"],
        "[{n}] erin sees only herself"
    );

    // A plain grant sees all of bob's categories.
    for k in ["b_core", "b_daily", "b_proj"] {
        assert!(
            has(&a, "bob", k),
            "[{n}] plain grant misses {k}: {:?}",
            keys(&a)
        );
    }
    // Not transitive: alice → bob → erin does not let alice see erin.
    assert!(
        !has(&a, "erin", "e_secret"),
        "[{n}] transitive leak: {:?}",
        keys(&a)
    );
    let b = recall(&*bob, RecallQuery::new("zebra").limit(50)).await;
    assert!(
        has(&b, "erin", "e_secret"),
        "[{n}] bob reads erin: {:?}",
        keys(&b)
    );
    // Not symmetric: bob cannot see alice without his own grant.
    assert!(
        !has(&b, "alice", "a_note"),
        "[{n}] bob sees alice: {:?}",
        keys(&b)
    );

    if env.categories {
        // A structured grant sees exactly the listed categories.
        let c = recall(&*carol, RecallQuery::new("zebra").limit(50)).await;
        assert_eq!(keys(&c), vec!["bob:b_core"], "[{n}] structured grant");
        // Case-sensitive, and a category filter outside the grant gives nothing of bob.
        let c2 = recall(&*carol, RecallQuery::new("zebra").category("daily")).await;
        assert!(
            c2.is_empty(),
            "[{n}] category filter outside grant: {:?}",
            keys(&c2)
        );
        // An unknown category matches nothing.
        let d = recall(&*dave, RecallQuery::new("zebra").limit(50)).await;
        assert!(d.is_empty(), "[{n}] unknown category: {:?}", keys(&d));
        // Empty queries (most recent rows) are scoped the same way.
        let c3 = recall(&*carol, RecallQuery::new("").limit(50)).await;
        assert_eq!(
            keys(&c3),
            vec!["bob:b_core"],
            "[{n}] structured grant, empty query"
        );
    } else {
        let c = recall(&*carol, RecallQuery::new("zebra").limit(50)).await;
        assert!(
            c.is_empty(),
            "[{n}] carol has no grant here: {:?}",
            keys(&c)
        );
        let _ = &dave;
    }

    // Stores through alice never appear as bob's; same key, separate rows.
    store(&*alice, "shared", "zebra from alice", "core").await;
    store(&*bob, "shared", "zebra from bob", "core").await;
    let bs = bob.get("shared").await.ok().flatten().map(|r| r.content);
    assert_eq!(bs.as_deref(), Some("zebra from bob"), "[{n}] bob's row");
    let as_ = alice.get("shared").await.ok().flatten().map(|r| r.content);
    assert_eq!(
        as_.as_deref(),
        Some("zebra from alice"),
        "[{n}] alice's row"
    );
    let bob_list = bob
        .list(&ListQuery::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        bob_list.entries.iter().all(|r| r.agent == "bob"),
        "[{n}] bob's list has foreign rows"
    );
    assert_eq!(bob_list.total, 4, "[{n}] bob's rows");
    assert!(
        alice.get("b_core").await.ok().flatten().is_none(),
        "[{n}] get is own-only"
    );

    // Forget through alice never removes bob's row with the same key (or any of bob's keys).
    assert_eq!(
        alice.forget("shared").await.ok(),
        Some(true),
        "[{n}] forget own"
    );
    assert_eq!(
        alice.forget("shared").await.ok(),
        Some(false),
        "[{n}] forget twice"
    );
    assert_eq!(
        alice.forget("b_core").await.ok(),
        Some(false),
        "[{n}] forget foreign key"
    );
    assert!(
        bob.get("shared").await.ok().flatten().is_some(),
        "[{n}] bob's row survived"
    );
    assert!(
        bob.get("b_core").await.ok().flatten().is_some(),
        "[{n}] bob's b_core survived"
    );
    assert_eq!(bob.count().await.ok(), Some(4), "[{n}] bob's count");
    assert_eq!(alice.count().await.ok(), Some(1), "[{n}] alice's count");

    // Storing an existing key replaces the row and keeps its first-store time.
    let before = alice.get("a_note").await.ok().flatten();
    store(&*alice, "a_note", "zebra crossing moved", "core").await;
    let after = alice.get("a_note").await.ok().flatten();
    assert_eq!(
        after.as_ref().map(|r| r.content.as_str()),
        Some("zebra crossing moved")
    );
    assert_eq!(
        before.map(|r| r.created_at),
        after.as_ref().map(|r| r.created_at),
        "[{n}] created_at kept"
    );
    assert_eq!(alice.count().await.ok(), Some(1), "[{n}] replace, not add");

    // Session and category filters.
    alice
        .store(
            NewMemory::new("s_row", "zebra in session")
                .category("daily")
                .session("s1"),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = recall(&*alice, RecallQuery::new("zebra").session("s1").limit(50)).await;
    assert_eq!(keys(&s), vec!["alice:s_row"], "[{n}] session filter");
    let cat = recall(
        &*alice,
        RecallQuery::new("zebra").category("projects").limit(50),
    )
    .await;
    assert_eq!(
        keys(&cat),
        vec!["bob:b_proj"],
        "[{n}] category filter through grant"
    );

    // An empty query returns the most recent rows first.
    let recent = recall(&*alice, RecallQuery::new("").limit(2)).await;
    assert_eq!(
        keys(&recent),
        vec!["alice:s_row", "alice:a_note"],
        "[{n}] recency order"
    );

    limit_after_scoping(env, &*bob, &*erin).await;
    pagination(env, &*dave).await;
}

/// With 1,000 rows of bob ranking above erin's single match, erin (no grant to bob) still
/// gets her own row: the scope is applied before ranking and limit.
async fn limit_after_scoping(env: &Env, bob: &dyn Memory, erin: &dyn Memory) {
    let n = env.name;
    let rows: Vec<NewMemory> = (0..1000)
        .map(|i| {
            NewMemory::new(format!("noise{i}"), "needle needle needle needle").category("daily")
        })
        .collect();
    bob.store_batch(rows)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    store(
        erin,
        "mine",
        "a needle in a big haystack of other words here",
        "core",
    )
    .await;
    let got = recall(erin, RecallQuery::new("needle").limit(5)).await;
    assert_eq!(keys(&got), vec!["erin:mine"], "[{n}] limit after scoping");
    let b = recall(bob, RecallQuery::new("needle").limit(5)).await;
    assert_eq!(b.len(), 5, "[{n}] bob gets a full page");
    if env.categories {
        // The category grant is applied before the limit too: carol (bob's `core` only) gets
        // bob's weaker `core` match although 1,000 `daily` rows rank above it.
        store(
            bob,
            "core_needle",
            "one needle among many other plain words",
            "core",
        )
        .await;
        let carol = env.h("carol").await;
        let got = recall(&*carol, RecallQuery::new("needle").limit(5)).await;
        assert_eq!(
            keys(&got),
            vec!["bob:core_needle"],
            "[{n}] category grant before limit"
        );
    }
}

/// Lists have no hidden cap, and pages tile the whole set.
async fn pagination(env: &Env, dave: &dyn Memory) {
    let n = env.name;
    let rows: Vec<NewMemory> = (0..230)
        .map(|i| NewMemory::new(format!("p{i:03}"), format!("row {i}")).category("daily"))
        .collect();
    dave.store_batch(rows)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let all = dave
        .list(&ListQuery::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (all.entries.len(), all.total, all.next_offset),
        (230, 230, None),
        "[{n}]"
    );
    let mut seen = std::collections::BTreeSet::new();
    let mut q = ListQuery {
        limit: Some(40),
        ..ListQuery::default()
    };
    loop {
        let page = dave.list(&q).await.unwrap_or_else(|e| panic!("{e}"));
        for r in &page.entries {
            assert!(seen.insert(r.key.clone()), "[{n}] duplicate {}", r.key);
        }
        match page.next_offset {
            Some(o) => q.offset = o,
            None => break,
        }
    }
    assert_eq!(seen.len(), 230, "[{n}] pages cover every row");
    let daily = dave
        .list(&ListQuery {
            category: Some("core".into()),
            ..ListQuery::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(daily.total, 0, "[{n}] category filter on list");
}
