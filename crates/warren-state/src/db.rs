//! `<install>/data/sessions.db`: the SQLite database of sessions, usage, receipts and the stable
//! agent ids they are attributed to.

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Why the sessions database could not be used.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Opening or migrating failed (corrupt file, permissions, full disk).
    #[error("sessions database {path}: {source}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// The driver error.
        source: sqlx::Error,
    },
    /// A query failed.
    #[error("sessions database query failed: {0}")]
    Query(#[from] sqlx::Error),
    /// Opening or migrating through the synchronous driver failed.
    #[error("sessions database {path}: {source}")]
    OpenSync {
        /// The database file.
        path: PathBuf,
        /// The driver error.
        source: rusqlite::Error,
    },
}

pub(crate) const MIGRATIONS: &[&str] = &[
    "CREATE TABLE IF NOT EXISTS agents (
        id TEXT PRIMARY KEY,
        alias TEXT NOT NULL UNIQUE
    )",
    "CREATE TABLE IF NOT EXISTS receipts (
        agent_id TEXT NOT NULL REFERENCES agents(id),
        seq INTEGER NOT NULL,
        id TEXT NOT NULL UNIQUE,
        tool TEXT NOT NULL,
        args_hash TEXT NOT NULL,
        result_hash TEXT NOT NULL,
        time TEXT NOT NULL,
        prev_mac TEXT NOT NULL,
        mac TEXT NOT NULL,
        PRIMARY KEY (agent_id, seq)
    )",
    "CREATE TABLE IF NOT EXISTS receipt_heads (
        agent_id TEXT PRIMARY KEY REFERENCES agents(id),
        last_seq INTEGER NOT NULL,
        last_mac TEXT NOT NULL,
        head_mac TEXT NOT NULL
    )",
    "CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY,
        agent_id TEXT REFERENCES agents(id),
        kind TEXT NOT NULL,
        title TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        ended_at TEXT,
        pid INTEGER,
        heartbeat_at TEXT
    )",
    "CREATE INDEX IF NOT EXISTS sessions_agent ON sessions(agent_id, updated_at)",
    "CREATE TABLE IF NOT EXISTS messages (
        session_id TEXT NOT NULL REFERENCES sessions(id),
        seq INTEGER NOT NULL,
        turn_id TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
    )",
    "CREATE TABLE IF NOT EXISTS turns (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions(id),
        agent_id TEXT REFERENCES agents(id),
        trigger TEXT NOT NULL,
        prompt TEXT NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        final_text TEXT,
        error_code TEXT
    )",
    "CREATE INDEX IF NOT EXISTS turns_session ON turns(session_id, started_at)",
    "CREATE TABLE IF NOT EXISTS events (
        turn_id TEXT NOT NULL REFERENCES turns(id),
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        body TEXT NOT NULL,
        PRIMARY KEY (turn_id, seq)
    )",
    "CREATE TABLE IF NOT EXISTS usage (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        agent_id TEXT REFERENCES agents(id),
        session_id TEXT,
        turn_id TEXT,
        time TEXT NOT NULL,
        day TEXT NOT NULL,
        provider TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cost_usd REAL NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS usage_agent_day ON usage(agent_id, day)",
    "CREATE TABLE IF NOT EXISTS actions (
        agent_id TEXT NOT NULL REFERENCES agents(id),
        time_ms INTEGER NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS actions_agent_time ON actions(agent_id, time_ms)",
    // Connections through the network proxy (`network` by domain), see network_log.rs.
    "CREATE TABLE IF NOT EXISTS network (
        agent_id TEXT NOT NULL REFERENCES agents(id),
        time_ms INTEGER NOT NULL,
        host TEXT NOT NULL,
        port INTEGER NOT NULL,
        allowed INTEGER NOT NULL,
        rule TEXT NOT NULL,
        address TEXT,
        bytes_up INTEGER NOT NULL,
        bytes_down INTEGER NOT NULL,
        duration_ms INTEGER NOT NULL,
        kind TEXT NOT NULL
    )",
    "CREATE INDEX IF NOT EXISTS network_agent_time ON network(agent_id, time_ms)",
];

/// Opens (creating when missing) a SQLite database of the runtime in WAL mode and applies
/// `migrations` in order (each idempotent). Used for sessions.db and cron.db.
pub async fn open_sqlite(
    path: &Path,
    migrations: &[&str],
    max_connections: u32,
) -> Result<SqlitePool, sqlx::Error> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(sqlx::Error::Io)?;
    }
    let opts = SqliteConnectOptions::from_str("sqlite://")?
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(std::time::Duration::from_secs(5));
    let pool = SqlitePoolOptions::new()
        .max_connections(max_connections)
        // Connections to a local file never go stale: no idle or lifetime reaping, so the pool
        // runs no background maintenance task, and no ping before each use (a round trip to
        // the connection's thread for every query).
        .idle_timeout(None)
        .max_lifetime(None)
        .test_before_acquire(false)
        .connect_with(opts)
        .await?;
    for m in migrations {
        sqlx::query(m).execute(&pool).await?;
    }
    Ok(pool)
}

/// Opens (creating when missing) the sessions database and applies its migrations. One
/// connection per process: writers (turns, the event writer, receipts) then queue in the pool
/// instead of meeting SQLite's lock and sleeping in its busy handler, which cost milliseconds
/// per tool round. Other processes still coordinate through the busy timeout.
pub async fn open_sessions_db(path: &Path) -> Result<SqlitePool, DbError> {
    open_sqlite(path, MIGRATIONS, 1)
        .await
        .map_err(|source| DbError::Open {
            path: path.to_path_buf(),
            source,
        })
}

/// The stable id of an agent in the sessions database, created on first use.
pub async fn agent_id(pool: &SqlitePool, alias: &str) -> Result<String, DbError> {
    if let Some(id) = sqlx::query_scalar::<_, String>("SELECT id FROM agents WHERE alias = ?")
        .bind(alias)
        .fetch_optional(pool)
        .await?
    {
        return Ok(id);
    }
    let id = uuid::Uuid::new_v4().to_string();
    sqlx::query("INSERT INTO agents (id, alias) VALUES (?, ?) ON CONFLICT(alias) DO NOTHING")
        .bind(&id)
        .bind(alias)
        .execute(pool)
        .await?;
    Ok(
        sqlx::query_scalar::<_, String>("SELECT id FROM agents WHERE alias = ?")
            .bind(alias)
            .fetch_one(pool)
            .await?,
    )
}

/// Column `column` of a row of `table`; a value that does not decode (a column whose type was
/// changed behind Warren's back) is an error naming both instead of a panic.
pub(crate) fn column<'r, T>(
    r: &'r sqlx::sqlite::SqliteRow,
    table: &str,
    column: &str,
) -> Result<T, DbError>
where
    T: sqlx::Decode<'r, sqlx::Sqlite> + sqlx::Type<sqlx::Sqlite>,
{
    sqlx::Row::try_get(r, column).map_err(|e| {
        let source: Box<dyn std::error::Error + Send + Sync> = match e {
            sqlx::Error::ColumnDecode { source, .. } => source,
            other => Box::new(other),
        };
        named(column, table, source)
    })
}

/// The error of a query whose rows decode into a [`sqlx::FromRow`] struct: a column that does
/// not decode, or is missing, is named as [`column`] names it, with the table `table_of` gives
/// for it; any other error is the query's.
pub(crate) fn row_error(e: sqlx::Error, table_of: impl Fn(&str) -> &'static str) -> DbError {
    match e {
        sqlx::Error::ColumnDecode { index, source } => {
            // `Row::try_get` spells the column as a quoted string.
            let column = index.trim_matches('"');
            named(column, table_of(column), source)
        }
        sqlx::Error::ColumnNotFound(column) => {
            let table = table_of(&column);
            let name = column.clone();
            named(&name, table, Box::new(sqlx::Error::ColumnNotFound(column)))
        }
        other => DbError::Query(other),
    }
}

/// A column of `table` that did not decode, because of `source`.
fn named(column: &str, table: &str, source: Box<dyn std::error::Error + Send + Sync>) -> DbError {
    DbError::Query(sqlx::Error::ColumnDecode {
        index: format!("`{column}` of table `{table}`"),
        source,
    })
}
