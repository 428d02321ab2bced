//! Mapping SQLite rows to `MemoryEntry` and the SQL fragments shared by the SQLite queries.

use sqlx::{QueryBuilder, Sqlite};
use uuid::Uuid;

use crate::grants::RecallScope;
use crate::types::MemoryEntry;
use chrono::{DateTime, Utc};

/// The selected columns, decoded by name into an [`EntryRow`].
pub const ENTRY_COLUMNS: &str = "m.id, m.agent_id, a.alias, m.key, m.content, m.category, \
     m.session_id, m.importance, m.created_at, m.updated_at";

/// One row selected with [`ENTRY_COLUMNS`], with FTS5's `rank` when a keyword recall selects
/// it (absent elsewhere).
#[derive(sqlx::FromRow)]
pub struct EntryRow {
    id: Uuid,
    agent_id: Uuid,
    alias: String,
    key: String,
    content: String,
    category: String,
    session_id: Option<String>,
    importance: f64,
    created_at: i64,
    updated_at: i64,
    #[sqlx(default)]
    rank: Option<f64>,
}

impl EntryRow {
    /// The entry; FTS5's rank (lower is better) becomes the score (higher is better).
    pub fn into_entry(self) -> Result<MemoryEntry, String> {
        Ok(MemoryEntry {
            id: self.id,
            agent_id: self.agent_id,
            agent: self.alias,
            key: self.key,
            content: self.content,
            category: self.category,
            session_id: self.session_id,
            importance: self.importance,
            created_at: ts_from_micros(self.created_at)?,
            updated_at: ts_from_micros(self.updated_at)?,
            score: self.rank.map(|r| -r),
        })
    }
}

/// A row time as stored: microseconds since the Unix epoch (UTC).
pub fn micros(t: DateTime<Utc>) -> i64 {
    t.timestamp_micros()
}

/// The time of a stored row.
pub fn ts_from_micros(us: i64) -> Result<DateTime<Utc>, String> {
    DateTime::from_timestamp_micros(us).ok_or_else(|| format!("bad timestamp {us}"))
}

/// Pushes `(<allowlist>)` as SQL over `m.agent_id` / `m.category`. Returns `false` when the
/// scope admits nothing (the caller then answers with no rows).
pub fn push_scope_sql(
    qb: &mut QueryBuilder<'_, Sqlite>,
    scope: &RecallScope,
    category: Option<&str>,
) -> bool {
    let mut any = false;
    qb.push("(");
    for entry in &scope.entries {
        let Some(cats) = entry.effective_categories(category) else {
            continue;
        };
        if any {
            qb.push(" OR ");
        }
        any = true;
        qb.push("(m.agent_id = ");
        qb.push_bind(entry.agent.id);
        if let Some(cats) = cats {
            qb.push(" AND m.category IN (");
            let mut sep = qb.separated(", ");
            for c in cats {
                sep.push_bind(c);
            }
            qb.push(")");
        }
        qb.push(")");
    }
    qb.push(")");
    any
}

/// The whole FTS5 MATCH expression of a recall: the terms, the allowlist and the session
/// filter, or `None` when the scope admits nothing.
pub fn fts_match_expr(
    terms: &[String],
    scope: &RecallScope,
    category: Option<&str>,
    session: Option<&str>,
) -> Option<String> {
    let mut expr = format!(
        "body : ({}) AND {}",
        crate::text::fts_terms_expr(terms),
        fts_scope_expr(scope, category)?
    );
    if let Some(s) = session {
        expr.push_str(&format!(" AND scope : {}", crate::text::session_token(s)));
    }
    Some(expr)
}

/// The FTS5 `scope : (...)` expression of the allowlist, or `None` when it admits nothing.
pub fn fts_scope_expr(scope: &RecallScope, category: Option<&str>) -> Option<String> {
    let mut tokens = Vec::new();
    for entry in &scope.entries {
        match entry.effective_categories(category) {
            None => {}
            Some(None) => tokens.push(crate::text::agent_token(&entry.agent.id)),
            Some(Some(cats)) => {
                for c in cats {
                    tokens.push(crate::text::category_token(&entry.agent.id, &c));
                }
            }
        }
    }
    if tokens.is_empty() {
        None
    } else {
        Some(format!("scope : ({})", tokens.join(" OR ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grants::ScopeEntry;
    use crate::types::AgentRef;

    fn entry(n: u128, cats: Option<Vec<&str>>) -> ScopeEntry {
        ScopeEntry {
            agent: AgentRef {
                id: Uuid::from_u128(n),
                alias: format!("a{n}"),
            },
            categories: cats.map(|c| c.into_iter().map(String::from).collect()),
        }
    }

    #[test]
    fn scope_expression_carries_every_grant() {
        let scope = RecallScope {
            entries: vec![entry(1, None), entry(2, Some(vec!["core"]))],
        };
        let e = fts_scope_expr(&scope, None).unwrap_or_default();
        assert!(e.starts_with("scope : (ag"));
        assert!(e.contains(&crate::text::agent_token(&Uuid::from_u128(1))));
        assert!(e.contains(&crate::text::category_token(&Uuid::from_u128(2), "core")));
        assert!(!e.contains(&crate::text::agent_token(&Uuid::from_u128(2))));
        // A category filter the grant does not cover drops that peer entirely.
        let d = fts_scope_expr(&scope, Some("daily")).unwrap_or_default();
        assert!(!d.contains(&format!("{}", Uuid::from_u128(2).simple())));
        let nothing = RecallScope {
            entries: vec![entry(2, Some(vec![]))],
        };
        assert_eq!(fts_scope_expr(&nothing, None), None);
    }
}
