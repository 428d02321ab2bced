//! Mapping SQLite rows to `MemoryEntry` and the SQL fragments shared by the SQLite queries.

use sqlx::sqlite::SqliteRow;
use sqlx::{QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use crate::grants::RecallScope;
use crate::types::MemoryEntry;
use chrono::{DateTime, Utc};

/// The selected columns, in the order [`entry_from_row`] reads them.
pub const ENTRY_COLUMNS: &str = "m.id, m.agent_id, a.alias, m.key, m.content, m.category, \
     m.session_id, m.importance, m.created_at, m.updated_at";

/// Reads one row selected with [`ENTRY_COLUMNS`] (plus an optional score column at index 10).
pub fn entry_from_row(row: &SqliteRow, with_score: bool) -> Result<MemoryEntry, String> {
    let text = |i: usize| row.try_get::<String, _>(i).map_err(|e| e.to_string());
    let uuid = |i: usize| row.try_get::<Uuid, _>(i).map_err(|e| e.to_string());
    let ts = |i: usize| -> Result<_, String> {
        let us = row.try_get::<i64, _>(i).map_err(|e| e.to_string())?;
        ts_from_micros(us)
    };
    let score = if with_score {
        row.try_get::<Option<f64>, _>(10)
            .map_err(|e| e.to_string())?
            .map(|r| -r)
    } else {
        None
    };
    Ok(MemoryEntry {
        id: uuid(0)?,
        agent_id: uuid(1)?,
        agent: text(2)?,
        key: text(3)?,
        content: text(4)?,
        category: text(5)?,
        session_id: row
            .try_get::<Option<String>, _>(6)
            .map_err(|e| e.to_string())?,
        importance: row.try_get::<f64, _>(7).map_err(|e| e.to_string())?,
        created_at: ts(8)?,
        updated_at: ts(9)?,
        score,
    })
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
