//! The allowlist of a recall as SQL, shared by the SQLite and Postgres stores.

use sqlx::{Database, Encode, QueryBuilder, Type};
use uuid::Uuid;

use crate::grants::RecallScope;

/// Pushes `(<allowlist>)` as SQL over `m.agent_id` / `m.category` (one bound parameter per
/// agent and category, in the database's placeholder style). Returns `false` when the scope
/// admits nothing (the caller then answers with no rows).
pub(crate) fn push_scope<'args, DB>(
    qb: &mut QueryBuilder<'args, DB>,
    scope: &RecallScope,
    category: Option<&str>,
) -> bool
where
    DB: Database,
    Uuid: Encode<'args, DB> + Type<DB>,
    String: Encode<'args, DB> + Type<DB>,
{
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
