//! The pure half of the Qdrant backend: point ids, payloads, the server-side filter and the
//! payload post-filter. No network here, so all of it is unit-tested.

use qdrant_client::qdrant::{Condition, Filter};
use serde_json::{json, Map, Value};
use uuid::Uuid;

use crate::grants::RecallScope;
use crate::types::{format_ts, parse_ts, MemoryEntry, RecallQuery};

/// Payload field names (rules §7), plus `updated_at` and `importance`.
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

/// One `should` clause of a recall's server filter: rows of this agent, and, when the grant
/// names categories, only rows whose `category` is one of them (exact, case-sensitive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeClause {
    /// `agent_id` must equal this.
    pub agent_id: String,
    /// `category` must be one of these, when set; `None` = every category of the agent.
    pub categories: Option<Vec<String>>,
}

/// The filter Qdrant evaluates: the whole recall scope (one clause per visible agent, with its
/// granted categories and the query's category folded in), plus the query's session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerFilter {
    /// A row must match at least one of these.
    pub clauses: Vec<ScopeClause>,
    /// `session_id` must equal this, when set.
    pub session: Option<String>,
}

impl ServerFilter {
    /// The `qdrant_client` filter: `must` holds the session, `should` one nested filter per
    /// scoped agent (`agent_id` match, plus a match-any on `category` when restricted).
    pub fn to_qdrant(&self) -> Filter {
        let should = self.clauses.iter().map(|c| {
            let mut conds = vec![Condition::matches(field::AGENT_ID, c.agent_id.clone())];
            if let Some(cats) = &c.categories {
                conds.push(Condition::matches(field::CATEGORY, cats.clone()));
            }
            Condition::from(Filter::must(conds))
        });
        let must = self
            .session
            .iter()
            .map(|s| Condition::matches(field::SESSION_ID, s.clone()));
        Filter {
            should: should.collect(),
            must: must.collect(),
            ..Filter::default()
        }
    }
}

/// The server-side filter of a recall, or `None` when the scope admits nothing. Every grant
/// restriction is in it, so the server never spends the limit on rows the scope drops.
pub fn server_filter(scope: &RecallScope, q: &RecallQuery) -> Option<ServerFilter> {
    let clauses: Vec<ScopeClause> = scope
        .entries
        .iter()
        .filter_map(|e| {
            e.effective_categories(q.category.as_deref())
                .map(|categories| ScopeClause {
                    agent_id: e.agent.id.to_string(),
                    categories,
                })
        })
        .collect();
    if clauses.is_empty() {
        return None;
    }
    Some(ServerFilter {
        clauses,
        session: q.session.clone(),
    })
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
        let agents: Vec<_> = f.clauses.iter().map(|c| c.agent_id.clone()).collect();
        assert_eq!(
            agents,
            vec![
                Uuid::from_u128(1).to_string(),
                Uuid::from_u128(2).to_string(),
                Uuid::from_u128(3).to_string()
            ]
        );
        assert_eq!(f.clauses[0].categories, None, "own rows: every category");
        assert_eq!(f.clauses[2].categories, Some(vec!["core".into()]));
        // A category filter c's grant does not cover removes c from the server filter, and
        // narrows every other clause to that category.
        let d = server_filter(&scope(), &RecallQuery::new("x").category("daily")).unwrap();
        assert_eq!(d.clauses.len(), 2);
        assert!(d
            .clauses
            .iter()
            .all(|c| c.categories == Some(vec!["daily".into()])));
        let nothing = RecallScope {
            entries: vec![ScopeEntry {
                agent: agent(3, "c"),
                categories: Some(vec![]),
            }],
        };
        assert_eq!(server_filter(&nothing, &RecallQuery::new("x")), None);
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
