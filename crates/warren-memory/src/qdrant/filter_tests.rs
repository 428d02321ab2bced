//! The recall filter as Qdrant would apply it: a small interpreter of the built
//! `qdrant_client` filter over in-memory payloads stands in for the server, so the scoping the
//! server does (and what it leaves to the post-filter) is checked without one.

use qdrant_client::qdrant::condition::ConditionOneOf;
use qdrant_client::qdrant::r#match::MatchValue;
use qdrant_client::qdrant::{Condition, FieldCondition, Filter};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::logic::{field, payload_for, point_id, post_filter, server_filter};
use crate::grants::{RecallScope, ScopeEntry};
use crate::types::{parse_ts, AgentRef, MemoryEntry, RecallQuery};

/// Whether a payload satisfies a filter, with Qdrant's semantics: every `must`, no `must_not`,
/// and at least one `should` when there are any.
fn eval(f: &Filter, p: &Map<String, Value>) -> bool {
    assert!(
        f.min_should.is_none(),
        "min_should is not used by the store"
    );
    f.must.iter().all(|c| cond(c, p))
        && !f.must_not.iter().any(|c| cond(c, p))
        && (f.should.is_empty() || f.should.iter().any(|c| cond(c, p)))
}

fn cond(c: &Condition, p: &Map<String, Value>) -> bool {
    match c.condition_one_of.as_ref().expect("empty condition") {
        ConditionOneOf::Filter(f) => eval(f, p),
        ConditionOneOf::Field(fc) => field_matches(fc, p),
        other => panic!("condition not interpreted here: {other:?}"),
    }
}

fn field_matches(fc: &FieldCondition, p: &Map<String, Value>) -> bool {
    let value = p.get(&fc.key).and_then(Value::as_str);
    let m = fc.r#match.as_ref().and_then(|m| m.match_value.as_ref());
    match (m, value) {
        (Some(MatchValue::Keyword(k)), Some(v)) => k == v,
        (Some(MatchValue::Keywords(ks)), Some(v)) => ks.strings.iter().any(|k| k == v),
        (Some(MatchValue::Keyword(_) | MatchValue::Keywords(_)), None) => false,
        other => panic!("match not interpreted here on {}: {other:?}", fc.key),
    }
}

/// The server's answer: matching points, best score first, at most `limit`.
fn serve(filter: &Filter, points: &[MemoryEntry], limit: usize) -> Vec<MemoryEntry> {
    let mut hits: Vec<MemoryEntry> = points
        .iter()
        .filter(|r| eval(filter, &payload_for(r)))
        .cloned()
        .collect();
    hits.sort_by(|a, b| b.score.partial_cmp(&a.score).expect("scores are numbers"));
    hits.truncate(limit);
    hits
}

/// The store's recall over a simulated server: filter, ask for `q.limit`, post-filter.
fn recall(scope: &RecallScope, points: &[MemoryEntry], q: &RecallQuery) -> Vec<MemoryEntry> {
    let Some(sf) = server_filter(scope, q) else {
        return Vec::new();
    };
    post_filter(scope, serve(&sf.to_qdrant(), points, q.limit), q)
}

fn agent(n: u128, alias: &str) -> AgentRef {
    AgentRef {
        id: Uuid::from_u128(n),
        alias: alias.into(),
    }
}

fn row(owner: &AgentRef, key: &str, category: &str, score: f64) -> MemoryEntry {
    let t = parse_ts("2026-01-01T00:00:00Z").unwrap();
    MemoryEntry {
        id: point_id(&owner.id, key),
        agent_id: owner.id,
        agent: owner.alias.clone(),
        key: key.into(),
        content: format!("content of {key}"),
        category: category.into(),
        session_id: None,
        importance: 0.5,
        created_at: t,
        updated_at: t,
        score: Some(score),
    }
}

/// Carol: herself, plus bob limited to `core`.
fn carol_scope(carol: &AgentRef, bob: &AgentRef) -> RecallScope {
    RecallScope {
        entries: vec![
            ScopeEntry {
                agent: carol.clone(),
                categories: None,
            },
            ScopeEntry {
                agent: bob.clone(),
                categories: Some(vec!["core".into()]),
            },
        ],
    }
}

/// The nested filter of one `should` clause, as (field, match) pairs.
fn clause_matches(c: &Condition) -> Vec<(String, MatchValue)> {
    let Some(ConditionOneOf::Filter(f)) = &c.condition_one_of else {
        panic!("a scope clause is a nested filter: {c:?}");
    };
    assert!(f.should.is_empty() && f.must_not.is_empty());
    f.must
        .iter()
        .map(|m| match &m.condition_one_of {
            Some(ConditionOneOf::Field(fc)) => (
                fc.key.clone(),
                fc.r#match
                    .as_ref()
                    .and_then(|m| m.match_value.clone())
                    .expect("a match"),
            ),
            other => panic!("clause condition: {other:?}"),
        })
        .collect()
}

#[test]
fn category_grant_is_in_the_server_filter() {
    let (carol, bob) = (agent(1, "carol"), agent(2, "bob"));
    let f = server_filter(&carol_scope(&carol, &bob), &RecallQuery::new("x"))
        .unwrap()
        .to_qdrant();
    assert!(f.must.is_empty() && f.must_not.is_empty());
    assert_eq!(f.should.len(), 2, "one clause per scoped agent: {f:?}");
    assert_eq!(
        clause_matches(&f.should[0]),
        vec![(
            field::AGENT_ID.to_string(),
            MatchValue::Keyword(carol.id.to_string())
        )],
        "the agent itself: every category"
    );
    let bob_clause = clause_matches(&f.should[1]);
    assert_eq!(bob_clause.len(), 2, "{bob_clause:?}");
    assert_eq!(
        bob_clause[0],
        (
            field::AGENT_ID.to_string(),
            MatchValue::Keyword(bob.id.to_string())
        )
    );
    let MatchValue::Keywords(cats) = &bob_clause[1].1 else {
        panic!("category is a match-any: {bob_clause:?}");
    };
    assert_eq!(bob_clause[1].0, field::CATEGORY);
    assert_eq!(cats.strings, vec!["core".to_string()]);
}

#[test]
fn session_filter_is_a_must() {
    let (carol, bob) = (agent(1, "carol"), agent(2, "bob"));
    let q = RecallQuery::new("x").session("s1");
    let f = server_filter(&carol_scope(&carol, &bob), &q)
        .unwrap()
        .to_qdrant();
    let mut in_session = row(&carol, "a", "daily", 0.5);
    in_session.session_id = Some("s1".into());
    let elsewhere = row(&carol, "b", "daily", 0.5);
    assert!(eval(&f, &payload_for(&in_session)));
    assert!(!eval(&f, &payload_for(&elsewhere)));
}

/// 1,000 of bob's `daily` rows outscore his single `core` row; carol may read only `core`.
/// The server must drop the `daily` rows itself, or they fill the limit and the post-filter
/// leaves carol with nothing.
#[test]
fn ungranted_categories_cannot_starve_a_category_grant() {
    let (carol, bob, erin) = (agent(1, "carol"), agent(2, "bob"), agent(3, "erin"));
    let mut points: Vec<MemoryEntry> = (0..1000)
        .map(|i| row(&bob, &format!("noise{i}"), "daily", 0.99))
        .collect();
    points.push(row(&erin, "e_core", "core", 0.98));
    points.push(row(&bob, "b_core", "core", 0.10));
    let scope = carol_scope(&carol, &bob);
    let q = RecallQuery::new("needle").limit(10);

    let got = recall(&scope, &points, &q);
    let keys: Vec<_> = got
        .iter()
        .map(|r| format!("{}:{}", r.agent, r.key))
        .collect();
    assert_eq!(
        keys,
        vec!["bob:b_core"],
        "the granted row survives the limit"
    );

    let f = server_filter(&scope, &q).unwrap().to_qdrant();
    let admitted: Vec<&str> = points
        .iter()
        .filter(|r| eval(&f, &payload_for(r)))
        .map(|r| r.key.as_str())
        .collect();
    assert_eq!(
        (admitted.len(), admitted.first().copied()),
        (1, Some("b_core")),
        "the filter itself excludes ungranted rows"
    );

    // A category filter outside the grant gives nothing of bob; inside it, bob's row.
    let daily = recall(&scope, &points, &RecallQuery::new("x").category("daily"));
    assert!(daily.is_empty(), "{daily:?}");
    let core = recall(&scope, &points, &RecallQuery::new("x").category("core"));
    assert_eq!(core.len(), 1);
}

/// The post-filter still stands behind the server filter: rows a server wrongly returns
/// (here: no filter applied at all) are dropped.
#[test]
fn post_filter_backs_up_a_server_that_ignores_the_filter() {
    let (carol, bob, erin) = (agent(1, "carol"), agent(2, "bob"), agent(3, "erin"));
    let points = vec![
        row(&bob, "b_daily", "daily", 0.9),
        row(&erin, "e_core", "core", 0.8),
        row(&bob, "b_core", "core", 0.7),
    ];
    let scope = carol_scope(&carol, &bob);
    let kept = post_filter(&scope, points, &RecallQuery::new("x"));
    let keys: Vec<_> = kept.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(keys, vec!["b_core"]);
}
