//! The pure half of the Qdrant backend: point ids, payloads, the server-side filter, the
//! over-fetch size and the payload post-filter. No network here, so all of it is unit-tested.

use serde_json::{json, Map, Value};
use uuid::Uuid;

use crate::grants::RecallScope;
use crate::types::{format_ts, parse_ts, MemoryEntry, RecallQuery};

/// Payload field names (SPEC §7), plus `updated_at` and `importance`.
pub mod field {
    /// Owning agent's UUID.
    pub const AGENT_ID: &str = "agent_id";
    /// Owning agent's alias.
    pub const AGENT: &str = "agent";
    /// Key.
    pub const KEY: &str = "key";
    /// Text.
    pub const CONTENT: &str = "content";
    /// Category.
    pub const CATEGORY: &str = "category";
    /// Session.
    pub const SESSION_ID: &str = "session_id";
    /// First stored.
    pub const CREATED_AT: &str = "created_at";
    /// Last changed.
    pub const UPDATED_AT: &str = "updated_at";
    /// Importance.
    pub const IMPORTANCE: &str = "importance";
}

/// Most points asked for in one recall round when over-fetching.
pub const MAX_FETCH: u64 = 1000;

/// The point id of an agent's key: deterministic, so a store of an existing key replaces it.
pub fn point_id(agent_id: &Uuid, key: &str) -> Uuid {
    Uuid::new_v5(agent_id, key.as_bytes())
}

/// The payload of a row.
pub fn payload_for(e: &MemoryEntry) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(field::AGENT_ID.into(), json!(e.agent_id.to_string()));
    m.insert(field::AGENT.into(), json!(e.agent));
    m.insert(field::KEY.into(), json!(e.key));
    m.insert(field::CONTENT.into(), json!(e.content));
    m.insert(field::CATEGORY.into(), json!(e.category));
    m.insert(
        field::SESSION_ID.into(),
        e.session_id.as_ref().map_or(Value::Null, |s| json!(s)),
    );
    m.insert(field::CREATED_AT.into(), json!(format_ts(e.created_at)));
    m.insert(field::UPDATED_AT.into(), json!(format_ts(e.updated_at)));
    m.insert(field::IMPORTANCE.into(), json!(e.importance));
    m
}

/// Reads a row back from a point's id, payload and score. Missing or malformed fields are an
/// error naming the field, never a default that could widen visibility.
pub fn entry_from_payload(
    id: &str,
    p: &Map<String, Value>,
    score: Option<f64>,
) -> Result<MemoryEntry, String> {
    let text = |k: &str| -> Result<String, String> {
        p.get(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| format!("point {id}: payload field `{k}` is missing or not a string"))
    };
    let time = |k: &str| -> Result<_, String> {
        let s = text(k)?;
        parse_ts(&s).ok_or_else(|| format!("point {id}: `{k}` is not a time: {s:?}"))
    };
    let agent_id = text(field::AGENT_ID)?;
    Ok(MemoryEntry {
        id: Uuid::parse_str(id).map_err(|e| format!("point id {id:?}: {e}"))?,
        agent_id: Uuid::parse_str(&agent_id)
            .map_err(|e| format!("point {id}: agent_id {agent_id:?}: {e}"))?,
        agent: text(field::AGENT)?,
        key: text(field::KEY)?,
        content: text(field::CONTENT)?,
        category: text(field::CATEGORY)?,
        session_id: p
            .get(field::SESSION_ID)
            .and_then(Value::as_str)
            .map(str::to_string),
        importance: p
            .get(field::IMPORTANCE)
            .and_then(Value::as_f64)
            .unwrap_or(0.5),
        created_at: time(field::CREATED_AT)?,
        updated_at: time(field::UPDATED_AT)?,
        score,
    })
}

/// The filter Qdrant evaluates: rows of these agents, plus the query's own filters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFilter {
    /// `agent_id` must be one of these.
    pub agent_ids: Vec<String>,
    /// `category` must equal this, when set.
    pub category: Option<String>,
    /// `session_id` must equal this, when set.
    pub session: Option<String>,
}

/// The server-side filter of a recall, or `None` when the scope admits nothing.
pub fn server_filter(scope: &RecallScope, q: &RecallQuery) -> Option<ServerFilter> {
    let agent_ids: Vec<String> = scope
        .entries
        .iter()
        .filter(|e| e.effective_categories(q.category.as_deref()).is_some())
        .map(|e| e.agent.id.to_string())
        .collect();
    if agent_ids.is_empty() {
        return None;
    }
    Some(ServerFilter {
        agent_ids,
        category: q.category.clone(),
        session: q.session.clone(),
    })
}

/// How many points to ask for: the limit, or more when category grants will drop some rows.
pub fn fetch_size(scope: &RecallScope, limit: usize) -> u64 {
    let limit = limit as u64;
    if scope.has_category_grants() {
        (limit * 4 + 16).min(MAX_FETCH.max(limit))
    } else {
        limit
    }
}

/// Keeps only rows the scope and the query allow (whatever the server returned), with the
/// alias taken from the scope, in the server's order, at most `limit`.
pub fn post_filter(
    scope: &RecallScope,
    rows: Vec<MemoryEntry>,
    q: &RecallQuery,
) -> Vec<MemoryEntry> {
    rows.into_iter()
        .filter(|r| scope.allows(r))
        .filter(|r| q.category.as_ref().is_none_or(|c| &r.category == c))
        .filter(|r| q.session.is_none() || r.session_id == q.session)
        .map(|mut r| {
            if let Some(alias) = scope.alias_of(&r.agent_id) {
                r.agent = alias.to_string();
            }
            r
        })
        .take(q.limit)
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::grants::ScopeEntry;
    use crate::types::AgentRef;

    fn agent(n: u128, alias: &str) -> AgentRef {
        AgentRef {
            id: Uuid::from_u128(n),
            alias: alias.into(),
        }
    }

    fn scope() -> RecallScope {
        RecallScope {
            entries: vec![
                ScopeEntry {
                    agent: agent(1, "a"),
                    categories: None,
                },
                ScopeEntry {
                    agent: agent(2, "b"),
                    categories: None,
                },
                ScopeEntry {
                    agent: agent(3, "c"),
                    categories: Some(vec!["core".into()]),
                },
            ],
        }
    }

    fn row(agent_n: u128, alias: &str, key: &str, category: &str) -> MemoryEntry {
        let t = parse_ts("2026-01-01T00:00:00Z").unwrap();
        MemoryEntry {
            id: point_id(&Uuid::from_u128(agent_n), key),
            agent_id: Uuid::from_u128(agent_n),
            agent: alias.into(),
            key: key.into(),
            content: format!("content of {key}"),
            category: category.into(),
            session_id: None,
            importance: 0.5,
            created_at: t,
            updated_at: t,
            score: Some(0.9),
        }
    }

    #[test]
    fn payload_round_trip() {
        let mut r = row(1, "a", "k]ey", "Core");
        r.session_id = Some("s1".into());
        let p = payload_for(&r);
        for f in [
            "agent_id",
            "agent",
            "key",
            "content",
            "category",
            "session_id",
            "created_at",
        ] {
            assert!(p.contains_key(f), "{f}");
        }
        let back = entry_from_payload(&r.id.to_string(), &p, Some(0.9)).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn malformed_payload_is_an_error_naming_the_field() {
        let r = row(1, "a", "k", "core");
        let mut p = payload_for(&r);
        p.remove("agent_id");
        let err = entry_from_payload(&r.id.to_string(), &p, None).unwrap_err();
        assert!(err.contains("agent_id"), "{err}");
    }

    #[test]
    fn point_ids_are_per_agent_and_key() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        assert_eq!(point_id(&a, "k"), point_id(&a, "k"));
        assert_ne!(point_id(&a, "k"), point_id(&b, "k"));
        assert_ne!(point_id(&a, "k"), point_id(&a, "K"));
    }

    #[test]
    fn server_filter_names_every_visible_agent() {
        let f = server_filter(&scope(), &RecallQuery::new("x")).unwrap();
        assert_eq!(
            f.agent_ids,
            vec![
                Uuid::from_u128(1).to_string(),
                Uuid::from_u128(2).to_string(),
                Uuid::from_u128(3).to_string()
            ]
        );
        // A category filter c's grant does not cover removes c from the server filter.
        let d = server_filter(&scope(), &RecallQuery::new("x").category("daily")).unwrap();
        assert_eq!(d.agent_ids.len(), 2);
        assert_eq!(d.category.as_deref(), Some("daily"));
        let nothing = RecallScope {
            entries: vec![ScopeEntry {
                agent: agent(3, "c"),
                categories: Some(vec![]),
            }],
        };
        assert_eq!(server_filter(&nothing, &RecallQuery::new("x")), None);
    }

    #[test]
    fn over_fetch_only_with_category_grants() {
        assert_eq!(fetch_size(&scope(), 10), 56);
        assert_eq!(fetch_size(&RecallScope::own(agent(1, "a")), 10), 10);
        assert_eq!(fetch_size(&scope(), 5000), 5000);
    }

    #[test]
    fn post_filter_drops_what_the_server_should_not_have_sent() {
        let rows = vec![
            row(1, "a", "own", "daily"),
            row(9, "z", "stranger", "core"),
            row(3, "c", "c-daily", "daily"),
            row(3, "old-alias", "c-core", "core"),
            row(2, "b", "b-any", "whatever"),
            row(3, "c", "c-Core", "Core"),
        ];
        let kept = post_filter(&scope(), rows, &RecallQuery::new("x"));
        let keys: Vec<_> = kept.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, vec!["own", "c-core", "b-any"]);
        assert_eq!(kept[1].agent, "c", "alias comes from the scope");
        let limited = post_filter(
            &scope(),
            vec![row(1, "a", "1", "x"), row(1, "a", "2", "x")],
            &RecallQuery::new("x").limit(1),
        );
        assert_eq!(limited.len(), 1);
    }
}
