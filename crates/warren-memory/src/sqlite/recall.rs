//! The two statements of a keyword recall (the scope's statistics, then the ranked rows) as text
//! and parameters, run either over a blocking connection (one hand-off to a blocking thread for
//! both, no per-row channel) or through sqlx (the path that also handles an index gone
//! meanwhile).

use rusqlite::types::Value;
use rusqlite::Connection;
use uuid::Uuid;

use super::index;
use super::rank::{self, ScopeStats};
use super::rows::ReadError;
use super::rows::{EntryRow, ENTRY_COLUMNS};
use crate::grants::ScopeEntry;

/// A statement's text (`?` placeholders) and its parameters, in order.
pub(crate) struct Stmt {
    pub sql: String,
    pub params: Vec<Value>,
}

impl Stmt {
    fn new() -> Self {
        Stmt {
            sql: String::new(),
            params: Vec::new(),
        }
    }
    fn push(&mut self, s: &str) {
        self.sql.push_str(s);
    }
    fn bind(&mut self, v: Value) {
        self.sql.push('?');
        self.params.push(v);
    }

    /// The parameters as sqlx arguments.
    pub fn args(&self) -> Result<sqlx::sqlite::SqliteArguments<'_>, sqlx::Error> {
        use sqlx::Arguments;
        let mut a = sqlx::sqlite::SqliteArguments::default();
        for p in &self.params {
            match p {
                Value::Null => a.add(None::<i64>),
                Value::Integer(i) => a.add(*i),
                Value::Real(f) => a.add(*f),
                Value::Text(s) => a.add(s.as_str()),
                Value::Blob(b) => a.add(b.as_slice()),
            }
            .map_err(sqlx::Error::Encode)?;
        }
        Ok(a)
    }
}

fn blob(id: &Uuid) -> Value {
    Value::Blob(id.as_bytes().to_vec())
}

/// The statistics statement of a group of agents (see [`super::SqliteStore`]'s `scope_stats`):
/// per index, its averages record, then for each word the rows holding it.
pub(crate) fn stats_stmt(group: &[(&ScopeEntry, Option<Vec<String>>)], terms: &[String]) -> Stmt {
    let body = format!("body : ({})", crate::text::fts_terms_expr(terms));
    let mut st = Stmt::new();
    for (i, (entry, _)) in group.iter().enumerate() {
        let t = index::index_table(&entry.agent.id);
        if i > 0 {
            st.push(" UNION ALL ");
        }
        st.push("SELECT block");
        for _ in terms {
            st.push(", 0");
        }
        st.push(&format!(
            " FROM {t}_data WHERE id = 1 UNION ALL SELECT * FROM (SELECT NULL"
        ));
        for k in 0..terms.len() {
            st.push(&format!(", warren_df({t}, {k})"));
        }
        st.push(&format!(" FROM {t} WHERE {t} MATCH "));
        st.bind(Value::Text(body.clone()));
        st.push(" LIMIT 1)");
    }
    st
}

/// Adds one row of the statistics statement to `stats`; `Err` names what does not decode.
pub(crate) fn add_stats_row(
    stats: &mut ScopeStats,
    block: Option<&[u8]>,
    docs: impl Iterator<Item = i64>,
) -> Result<(), String> {
    if let Some(block) = block {
        let (n, tokens) = rank::decode_averages(block)
            .ok_or_else(|| "an index's averages record does not decode".to_string())?;
        stats.rows += n as f64;
        stats.tokens += tokens as f64;
    }
    for (d, v) in stats.docs.iter_mut().zip(docs) {
        *d += v as f64;
    }
    Ok(())
}

/// The ranked statement of a group of agents (see [`super::SqliteStore`]'s `recall_group`).
pub(crate) fn rank_stmt(
    group: &[(&ScopeEntry, Option<Vec<String>>)],
    terms: &[String],
    stats: &ScopeStats,
    session: Option<&str>,
    limit: i64,
) -> Stmt {
    let mut st = Stmt::new();
    st.push("SELECT ");
    st.push(ENTRY_COLUMNS);
    st.push(", f.rank, f.seq FROM (SELECT seq, rank FROM (");
    for (i, (entry, cats)) in group.iter().enumerate() {
        if i > 0 {
            st.push(" UNION ALL ");
        }
        let t = index::index_table(&entry.agent.id);
        st.push(&format!("SELECT rowid AS seq, warren_bm25({t}, "));
        st.bind(Value::Real(stats.rows));
        st.push(", ");
        st.bind(Value::Real(stats.avgdl()));
        for df in &stats.docs {
            st.push(", ");
            st.bind(Value::Real(*df));
        }
        st.push(&format!(") AS rank FROM {t} WHERE {t} MATCH "));
        st.bind(Value::Text(index::match_expr(
            terms,
            cats.as_deref(),
            session,
        )));
    }
    st.push(" LIMIT -1) ORDER BY rank, seq DESC LIMIT ");
    st.bind(Value::Integer(limit));
    st.push(
        ") f CROSS JOIN memories m ON m.seq = f.seq \
         CROSS JOIN agents a ON a.id = m.agent_id WHERE (",
    );
    // Defence in depth behind the per-agent indexes: each row is the allowlist's, in plain
    // SQL (exact comparison).
    for (i, (entry, cats)) in group.iter().enumerate() {
        st.push(if i > 0 {
            " OR (m.agent_id = "
        } else {
            "(m.agent_id = "
        });
        st.bind(blob(&entry.agent.id));
        if let Some(cats) = cats {
            st.push(" AND m.category IN (");
            for (k, c) in cats.iter().enumerate() {
                if k > 0 {
                    st.push(", ");
                }
                st.bind(Value::Text(c.clone()));
            }
            st.push(")");
        }
        st.push(")");
    }
    st.push(")");
    if let Some(s) = session {
        st.push(" AND m.session_id = ");
        st.bind(Value::Text(s.to_string()));
    }
    st.push(" ORDER BY f.rank, m.seq DESC LIMIT ");
    st.bind(Value::Integer(limit));
    st
}

/// Both statements of a recall over a blocking connection (every index of the group must
/// exist: any error sends the caller to the sqlx path, which handles a missing one).
pub(crate) fn run_blocking(
    conn: &Connection,
    group: &[(&ScopeEntry, Option<Vec<String>>)],
    terms: &[String],
    session: Option<&str>,
    limit: i64,
) -> Result<Vec<EntryRow>, ReadError> {
    let mut stats = ScopeStats {
        rows: 0.0,
        tokens: 0.0,
        docs: vec![0.0; terms.len()],
    };
    let st = stats_stmt(group, terms);
    let mut q = conn.prepare_cached(&st.sql)?;
    let mut rows = q.query(rusqlite::params_from_iter(st.params.iter()))?;
    while let Some(r) = rows.next()? {
        let block = r
            .get_ref(0)?
            .as_blob_or_null()
            .map_err(rusqlite::Error::from)?;
        let docs = (0..terms.len())
            .map(|k| r.get::<_, i64>(k + 1))
            .collect::<Result<Vec<_>, _>>()?;
        add_stats_row(&mut stats, block, docs.into_iter()).map_err(ReadError::Row)?;
    }
    drop(rows);
    let st = rank_stmt(group, terms, &stats, session, limit);
    let mut q = conn.prepare_cached(&st.sql)?;
    let mut rows = q.query(rusqlite::params_from_iter(st.params.iter()))?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        out.push(EntryRow::from_blocking(r)?);
    }
    Ok(out)
}
