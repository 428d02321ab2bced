//! The full-text indexes of the SQLite store: one contentless FTS5 table per agent,
//! `memfts_<agent id as 32 hex digits>`, keyed by the row's `seq`.
//!
//! Each agent's index holds only its own rows, so a recall reads the doclists of the agents it
//! may see and nothing else: its cost follows the size of the allowlist's memory, not of the
//! whole file (a store of 1,000,000 rows answers like one of 100,000 when the agents in scope
//! hold as many rows). A purge drops the agent's table instead of deleting its rows from a
//! shared index one by one, and a store merges segments of one small index only.
//!
//! Columns: `body` (key and content, ranked by BM25) and `scope`, which holds the row's
//! category token (`c<hex>`) and, when it has one, its session token (`s<hex>`), so category
//! grants and filters are evaluated inside the index before ranking and before the limit.
//! BM25's statistics are the agent's own.
//!
//! The agent id in the table name comes from the `agents` table (a UUID the store made, printed
//! as hex digits): no text of an agent or a caller reaches the SQL as a name.

use sqlx::SqliteConnection;
use uuid::Uuid;

/// The FTS5 table of an agent.
pub fn index_table(agent: &Uuid) -> String {
    format!("memfts_{}", agent.simple())
}

/// `LIKE` pattern of every index table and its FTS5 shadow tables.
pub const INDEX_TABLES_LIKE: &str = "memfts\\_%";

/// The `scope` column of a `memories` row, in SQL over its columns (the tokens of
/// [`crate::text::category_token`] and [`crate::text::session_token`]).
const SCOPE_SQL: &str = "'c' || lower(hex(category)) \
     || CASE WHEN session_id IS NULL THEN '' ELSE ' s' || lower(hex(session_id)) END";

/// Whether the agent's index exists (on any connection or pool of the store).
pub async fn exists<'e, E>(db: E, agent: &Uuid) -> Result<bool, sqlx::Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
{
    let n: i64 =
        sqlx::query_scalar("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?")
            .bind(index_table(agent))
            .fetch_one(db)
            .await?;
    Ok(n > 0)
}

/// Creates the agent's index if it does not exist.
pub async fn create(conn: &mut SqliteConnection, agent: &Uuid) -> Result<(), sqlx::Error> {
    let t = index_table(agent);
    sqlx::query(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS {t} USING fts5(body, scope, content = '', \
         contentless_delete = 1, tokenize = 'unicode61')"
    ))
    .execute(&mut *conn)
    .await?;
    sqlx::query(&format!(
        "INSERT INTO {t} ({t}, rank) VALUES ('rank', 'bm25(1.0, 0.0)')"
    ))
    .execute(&mut *conn)
    .await?;
    Ok(())
}

/// Drops the agent's index (and with it every entry of the agent).
pub async fn drop(conn: &mut SqliteConnection, agent: &Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(&format!("DROP TABLE IF EXISTS {}", index_table(agent)))
        .execute(conn)
        .await?;
    Ok(())
}

/// Indexes (or re-indexes) the agent's rows of the given `seq` values, from their stored
/// columns, in one statement.
pub async fn put_seqs(
    conn: &mut SqliteConnection,
    agent: &Uuid,
    seqs: &[i64],
) -> Result<(), sqlx::Error> {
    if seqs.is_empty() {
        return Ok(());
    }
    let t = index_table(agent);
    let mut sql = format!(
        "INSERT OR REPLACE INTO {t} (rowid, body, scope) \
         SELECT seq, key || ' ' || content, {SCOPE_SQL} FROM memories WHERE seq IN ("
    );
    for i in 0..seqs.len() {
        sql.push_str(if i == 0 { "?" } else { ", ?" });
    }
    sql.push(')');
    // The full chunks of a store or import repeat; other lengths are not kept prepared.
    let keep = seqs.len() == 1 || seqs.len() == super::STORE_CHUNK;
    let mut q = sqlx::query(&sql).persistent(keep);
    for s in seqs {
        q = q.bind(s);
    }
    q.execute(conn).await?;
    Ok(())
}

/// The statement indexing (or re-indexing) the agent's rows of `n` keys, from their stored
/// columns: the agent id, then the keys, as parameters.
pub fn put_keys_sql(agent: &Uuid, n: usize) -> String {
    let t = index_table(agent);
    let mut sql = format!(
        "INSERT OR REPLACE INTO {t} (rowid, body, scope) \
         SELECT seq, key || ' ' || content, {SCOPE_SQL} FROM memories \
         WHERE agent_id = ? AND key IN ("
    );
    for i in 0..n {
        sql.push_str(if i == 0 { "?" } else { ", ?" });
    }
    sql.push(')');
    sql
}

/// Indexes every row of the agent whose `seq` is above `after` (rows an import appended).
pub async fn put_after(
    conn: &mut SqliteConnection,
    agent: &Uuid,
    after: i64,
) -> Result<(), sqlx::Error> {
    let t = index_table(agent);
    sqlx::query(&format!(
        "INSERT INTO {t} (rowid, body, scope) \
         SELECT seq, key || ' ' || content, {SCOPE_SQL} FROM memories \
         WHERE agent_id = ? AND seq > ? ORDER BY seq"
    ))
    .persistent(false)
    .bind(agent)
    .bind(after)
    .execute(conn)
    .await?;
    Ok(())
}

/// Removes one row from the agent's index.
pub async fn remove(
    conn: &mut SqliteConnection,
    agent: &Uuid,
    seq: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query(&format!(
        "DELETE FROM {} WHERE rowid = ?",
        index_table(agent)
    ))
    .bind(seq)
    .execute(conn)
    .await?;
    Ok(())
}

/// The FTS5 expression of a recall on one agent's index: the words, the categories the grant
/// and the filter leave (`None`: every category) and the session filter.
pub fn match_expr(
    terms: &[String],
    categories: Option<&[String]>,
    session: Option<&str>,
) -> String {
    let mut expr = format!("body : ({})", crate::text::fts_terms_expr(terms));
    if let Some(cats) = categories {
        let tokens: Vec<String> = cats
            .iter()
            .map(|c| crate::text::category_token(c))
            .collect();
        expr.push_str(&format!(" AND scope : ({})", tokens.join(" OR ")));
    }
    if let Some(s) = session {
        expr.push_str(&format!(" AND scope : {}", crate::text::session_token(s)));
    }
    expr
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_name_is_the_agent_id_in_hex() {
        let id = Uuid::from_u128(0xabc);
        let t = index_table(&id);
        assert_eq!(t, format!("memfts_{}", "0".repeat(29) + "abc"));
        assert!(t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    }

    #[test]
    fn expressions_carry_categories_and_session() {
        let t = vec!["harbour".to_string(), "x\"y".to_string()];
        assert_eq!(
            match_expr(&t, None, None),
            "body : (\"harbour\" OR \"x\"\"y\")"
        );
        let cats = vec!["core".to_string(), "Daily".to_string()];
        assert_eq!(
            match_expr(&t[..1], Some(&cats), Some("s1")),
            "body : (\"harbour\") AND scope : (c636f7265 OR c4461696c79) AND scope : s7331"
        );
    }
}
