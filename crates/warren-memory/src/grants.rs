//! Grant resolution (rules §7): which agents' rows, and which of their categories, an agent may
//! recall. Pure functions over the config; the backends turn the result into query filters.

use warren_types::{Config, MemoryBackendKind, MemoryGrant};

use crate::error::MemoryError;
use crate::types::{AgentRef, MemoryEntry};

/// What one agent may read of another (or of itself): all categories, or exactly these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrantSpec {
    /// The alias whose rows are visible.
    pub alias: String,
    /// `None` = every category; `Some(list)` = exactly these names (case-sensitive).
    pub categories: Option<Vec<String>>,
}

/// The resolved allowlist of an agent, by alias. The agent itself always comes first, with
/// every category. Only the agent's own `read_memory_from` is read: grants are not transitive.
pub fn resolve_grants(config: &Config, alias: &str) -> Result<Vec<GrantSpec>, MemoryError> {
    let agent = config
        .agents
        .get(alias)
        .ok_or_else(|| MemoryError::UnknownAgent {
            alias: alias.to_string(),
        })?;
    let mut out = vec![GrantSpec {
        alias: alias.to_string(),
        categories: None,
    }];
    for grant in &agent.workspace.read_memory_from {
        let peer = grant.agent();
        if peer == alias {
            // The agent always owns its memory; a self grant adds nothing.
            continue;
        }
        let cats = grant.categories().map(<[std::string::String]>::to_vec);
        match out.iter_mut().find(|g| g.alias == peer) {
            // Two grants for one agent are rejected by the validator; merge defensively.
            Some(existing) => {
                existing.categories = union_categories(existing.categories.take(), cats);
            }
            None => out.push(GrantSpec {
                alias: peer.to_string(),
                categories: cats,
            }),
        }
    }
    Ok(out)
}

/// What two grants of one agent allow together: every category when either does, else the
/// sorted union of their lists.
pub fn union_categories(a: Option<Vec<String>>, b: Option<Vec<String>>) -> Option<Vec<String>> {
    match (a, b) {
        (Some(mut a), Some(b)) => {
            a.extend(b);
            a.sort();
            a.dedup();
            Some(a)
        }
        _ => None,
    }
}

/// Checks the grants of `alias` against the backends (rules §1.2, repeated by the factory):
/// peers must be defined and on the same backend, and Markdown takes whole-agent grants only.
pub fn check_grants(config: &Config, alias: &str) -> Result<MemoryBackendKind, MemoryError> {
    let backend =
        config
            .effective_memory_backend(alias)
            .ok_or_else(|| MemoryError::UnknownAgent {
                alias: alias.to_string(),
            })?;
    let Some(agent) = config.agents.get(alias) else {
        return Err(MemoryError::UnknownAgent {
            alias: alias.to_string(),
        });
    };
    for grant in &agent.workspace.read_memory_from {
        let peer = grant.agent();
        let peer_backend =
            config
                .effective_memory_backend(peer)
                .ok_or_else(|| MemoryError::UnknownAgent {
                    alias: peer.to_string(),
                })?;
        if peer_backend != backend {
            return Err(MemoryError::CrossBackend {
                alias: alias.to_string(),
                backend: backend.as_str(),
                peer: peer.to_string(),
                peer_backend: peer_backend.as_str(),
            });
        }
        let scoped = matches!(grant, MemoryGrant::Scoped { .. });
        if scoped
            && (backend == MemoryBackendKind::Markdown
                || peer_backend == MemoryBackendKind::Markdown)
        {
            return Err(MemoryError::MarkdownCategoryGrant {
                alias: alias.to_string(),
                peer: peer.to_string(),
            });
        }
    }
    Ok(backend)
}

/// One entry of a resolved allowlist, bound to the store's UUIDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeEntry {
    /// The visible agent.
    pub agent: AgentRef,
    /// `None` = every category; `Some(list)` = exactly these.
    pub categories: Option<Vec<String>>,
}

impl ScopeEntry {
    /// Whether a row of this agent in `category` is visible through this entry.
    pub fn allows_category(&self, category: &str) -> bool {
        match &self.categories {
            None => true,
            Some(list) => list.iter().any(|c| c == category),
        }
    }

    /// The categories this entry contributes to a recall with an optional category filter:
    /// `Some(None)` = all, `Some(Some(list))` = exactly these, `None` = nothing at all.
    pub fn effective_categories(&self, filter: Option<&str>) -> Option<Option<Vec<String>>> {
        match (filter, &self.categories) {
            (None, None) => Some(None),
            (None, Some(list)) if list.is_empty() => None,
            (None, Some(list)) => Some(Some(list.clone())),
            (Some(f), _) if self.allows_category(f) => Some(Some(vec![f.to_string()])),
            (Some(_), _) => None,
        }
    }
}

/// The allowlist a recall runs under: the bound agent first, then its granted peers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallScope {
    /// Entries, the bound agent first.
    pub entries: Vec<ScopeEntry>,
}

impl RecallScope {
    /// A scope holding only the agent itself.
    pub fn own(agent: AgentRef) -> Self {
        RecallScope {
            entries: vec![ScopeEntry {
                agent,
                categories: None,
            }],
        }
    }

    /// Whether `row` may be shown under this scope (used by post-filters and tests).
    pub fn allows(&self, row: &MemoryEntry) -> bool {
        self.entries
            .iter()
            .any(|e| e.agent.id == row.agent_id && e.allows_category(&row.category))
    }

    /// Whether the scope contains a category-restricted entry (Qdrant over-fetches then).
    pub fn has_category_grants(&self) -> bool {
        self.entries.iter().any(|e| e.categories.is_some())
    }

    /// The alias of a visible agent, by UUID.
    pub fn alias_of(&self, id: &uuid::Uuid) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| &e.agent.id == id)
            .map(|e| e.agent.alias.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(text: &str) -> Config {
        toml::from_str(text).unwrap()
    }

    const THREE: &str = r#"
        [agents.a]
        risk_profile = "p"
        [agents.a.workspace]
        read_memory_from = ["b", { agent = "c", categories = ["core"] }]
        [agents.b]
        risk_profile = "p"
        [agents.b.workspace]
        read_memory_from = ["c"]
        [agents.c]
        risk_profile = "p"
    "#;

    #[test]
    fn own_plain_and_structured_grants() {
        let c = cfg(THREE);
        let g = resolve_grants(&c, "a").unwrap();
        assert_eq!(
            g,
            vec![
                GrantSpec {
                    alias: "a".into(),
                    categories: None
                },
                GrantSpec {
                    alias: "b".into(),
                    categories: None
                },
                GrantSpec {
                    alias: "c".into(),
                    categories: Some(vec!["core".into()])
                },
            ]
        );
    }

    #[test]
    fn grants_are_not_transitive_nor_symmetric() {
        let c = cfg(THREE);
        // b reads c, but that does not reach a; c reads nobody, and does not see a or b.
        let b: Vec<_> = resolve_grants(&c, "b")
            .unwrap()
            .into_iter()
            .map(|g| g.alias)
            .collect();
        assert_eq!(b, vec!["b", "c"]);
        let only_c: Vec<_> = resolve_grants(&c, "c")
            .unwrap()
            .into_iter()
            .map(|g| g.alias)
            .collect();
        assert_eq!(only_c, vec!["c"]);
    }

    #[test]
    fn unknown_agent_is_named() {
        let c = cfg(THREE);
        assert_eq!(
            resolve_grants(&c, "zed"),
            Err(MemoryError::UnknownAgent {
                alias: "zed".into()
            })
        );
    }

    #[test]
    fn category_rules_are_exact() {
        let e = ScopeEntry {
            agent: AgentRef {
                id: uuid::Uuid::nil(),
                alias: "c".into(),
            },
            categories: Some(vec!["core".into()]),
        };
        assert!(e.allows_category("core"));
        assert!(!e.allows_category("Core"));
        assert!(!e.allows_category("daily"));
        assert_eq!(
            e.effective_categories(None),
            Some(Some(vec!["core".into()]))
        );
        assert_eq!(
            e.effective_categories(Some("core")),
            Some(Some(vec!["core".into()]))
        );
        assert_eq!(e.effective_categories(Some("daily")), None);
        let all = ScopeEntry {
            categories: None,
            ..e.clone()
        };
        assert_eq!(all.effective_categories(None), Some(None));
        let none = ScopeEntry {
            categories: Some(vec![]),
            ..e
        };
        assert_eq!(none.effective_categories(None), None);
    }

    #[test]
    fn factory_checks_backends() {
        let cross = cfg(r#"
            [agents.a]
            risk_profile = "p"
            [agents.a.workspace]
            read_memory_from = ["b"]
            [agents.b]
            risk_profile = "p"
            [agents.b.memory]
            backend = "postgres"
        "#);
        assert!(matches!(
            check_grants(&cross, "a"),
            Err(MemoryError::CrossBackend { peer, peer_backend: "postgres", .. }) if peer == "b"
        ));
        let md = cfg(r#"
            [memory]
            backend = "markdown"
            [agents.a]
            risk_profile = "p"
            [agents.a.workspace]
            read_memory_from = [{ agent = "b", categories = ["core"] }]
            [agents.b]
            risk_profile = "p"
        "#);
        assert!(matches!(
            check_grants(&md, "a"),
            Err(MemoryError::MarkdownCategoryGrant { .. })
        ));
        assert_eq!(
            check_grants(&cfg(THREE), "a"),
            Ok(MemoryBackendKind::Sqlite)
        );
    }
}
