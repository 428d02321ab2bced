//! `<install>/data/sessions.db`: the SQLite database of sessions, usage, receipts and the stable
//! agent ids they are attributed to.

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{SqliteConnection, SqlitePool};
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
    /// A statement on the synchronous connection failed (see [`SyncDb`]).
    #[error("sessions database query failed: {0}")]
    Sync(#[from] rusqlite::Error),
}

impl DbError {
    /// Whether the same write may succeed when tried again: not when SQLite refused the rows
    /// themselves (a unique, primary-key, foreign-key, not-null or check constraint) or a value
    /// could not be encoded; a busy, locked, full or failing file may clear.
    pub fn may_clear(&self) -> bool {
        match self {
            DbError::Query(sqlx::Error::Encode(_)) => false,
            DbError::Query(sqlx::Error::Database(d)) => {
                matches!(d.kind(), sqlx::error::ErrorKind::Other)
            }
            // SQLite's extended codes of the same constraints (sqlx's kinds above).
            DbError::Sync(rusqlite::Error::SqliteFailure(f, _)) => {
                !matches!(f.extended_code, 2067 | 1555 | 787 | 1299 | 275)
            }
            _ => true,
        }
    }
}

/// A blocking connection to `sessions.db`, opened on first use, for the writes and reads of a
/// turn's path: run through [`warren_memory::blocking::run`], on the task's own worker thread,
/// so a statement costs no hand-off to sqlx's connection thread and back (about as much as a
/// small write itself). Its user holds the file's [`WriteGate`] meanwhile. Its write
/// transactions begin `IMMEDIATE`: a deferred one that read first (an agent's id) could not
/// take the write lock once another connection (the action ledger's) had written since, and
/// would fail at once with `SQLITE_BUSY` instead of waiting its turn.
#[derive(Debug)]
pub(crate) struct SyncDb {
    path: PathBuf,
    conn: std::sync::Mutex<Option<rusqlite::Connection>>,
    /// The process's turn at writing the file (see [`write_gate`]).
    pub(crate) gate: WriteGate,
}

/// The turn of one process's writers of one database file: every writer of `sessions.db` in the
/// process that is on a turn's path (the blocking connection, receipts and their anchor) takes
/// it before writing, so they queue here instead of meeting SQLite's lock and sleeping in its
/// busy handler (milliseconds a time). Other processes, and this process's rarer writers, still
/// meet the busy timeout.
pub(crate) type WriteGate = std::sync::Arc<tokio::sync::Mutex<()>>;

/// The [`WriteGate`] of the database file at `path` in this process (one per path).
pub(crate) fn write_gate(path: &Path) -> WriteGate {
    type Gates = std::collections::HashMap<PathBuf, std::sync::Weak<tokio::sync::Mutex<()>>>;
    static GATES: std::sync::OnceLock<std::sync::Mutex<Gates>> = std::sync::OnceLock::new();
    let mut gates = GATES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(gate) = gates.get(path).and_then(std::sync::Weak::upgrade) {
        return gate;
    }
    // Gates of files no longer open in this process are dropped here.
    gates.retain(|_, g| g.strong_count() > 0);
    let gate = WriteGate::default();
    gates.insert(path.to_path_buf(), std::sync::Arc::downgrade(&gate));
    gate
}

impl SyncDb {
    pub(crate) fn new(path: &Path) -> Self {
        SyncDb {
            path: path.to_path_buf(),
            conn: std::sync::Mutex::new(None),
            gate: write_gate(path),
        }
    }

    /// Runs `f` on the connection (opened now if it is not yet). Blocks.
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut rusqlite::Connection) -> Result<T, DbError>,
    ) -> Result<T, DbError> {
        // A panic while the connection was held leaves it outside any transaction (a
        // transaction rolls back when dropped): still usable.
        let mut slot = self
            .conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let conn = match slot.as_mut() {
            Some(c) => c,
            None => slot.insert(self.open()?),
        };
        f(conn)
    }

    /// The settings of every other connection to the file: `synchronous = NORMAL`, foreign
    /// keys, a five-second wait for another process's write lock (WAL is the file's own).
    fn open(&self) -> Result<rusqlite::Connection, DbError> {
        let failed = |source| DbError::OpenSync {
            path: self.path.clone(),
            source,
        };
        let conn = rusqlite::Connection::open_with_flags(
            &self.path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(failed)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(failed)?;
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(failed)?;
        Ok(conn)
    }
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
/// `migrations` through the shared runner ([`warren_memory::migrate`]): they are the one step
/// that leads to version 1, kept in the file's `PRAGMA user_version` (no table of its own, so
/// the schema is the statements' alone). A file made before the version was kept is at 0: the
/// step runs once more on it, which changes nothing there (every statement is `IF NOT EXISTS`),
/// and records 1. Used for sessions.db and cron.db.
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
    let mut conn = pool.acquire().await?;
    // At every open but the first the file is at the version already: found without the write
    // lock the runner takes (another process's long write does not hold up this open). The
    // runner reads the version again under the lock.
    let at: i64 = sqlx::query_scalar("PRAGMA user_version")
        .fetch_one(&mut *conn)
        .await?;
    let schema = Statements(migrations);
    if at < warren_memory::migrate::Schema::<sqlx::Sqlite>::latest(&schema) {
        warren_memory::migrate::run(&mut *conn, &schema).await?;
    }
    drop(conn);
    Ok(pool)
}

/// A runtime database's schema: its statements, all idempotent, as the step to version 1, the
/// version in `PRAGMA user_version`. A file at a higher version (a newer Warren's) is used as it
/// is, as it was before the version was kept.
struct Statements<'a>(&'a [&'a str]);

#[async_trait::async_trait]
impl warren_memory::migrate::Schema<sqlx::Sqlite> for Statements<'_> {
    fn latest(&self) -> i64 {
        1
    }

    fn begin(&self) -> &'static str {
        "BEGIN IMMEDIATE"
    }

    async fn version(&self, tx: &mut SqliteConnection) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar("PRAGMA user_version")
            .fetch_one(&mut *tx)
            .await
    }

    async fn step(&self, tx: &mut SqliteConnection, version: i64) -> Result<(), sqlx::Error> {
        for m in self.0 {
            sqlx::query(m).execute(&mut *tx).await?;
        }
        // A pragma takes no bound value; `version` is a number the runner counted.
        sqlx::query(&format!("PRAGMA user_version = {version}"))
            .execute(&mut *tx)
            .await?;
        Ok(())
    }

    fn newer(&self, _version: i64) -> Option<String> {
        None
    }
}

/// Opens (creating when missing) the sessions database and applies its migrations. One sqlx
/// connection per process: its writers queue in the pool instead of meeting SQLite's lock and
/// sleeping in its busy handler, which cost milliseconds per tool round. A turn's own rows go
/// over a blocking connection (`SyncDb`); it and the receipts take the file's write gate.
/// Other processes still coordinate through the busy timeout.
pub async fn open_sessions_db(path: &Path) -> Result<SqlitePool, DbError> {
    open_sqlite(path, MIGRATIONS, 1)
        .await
        .map_err(|source| DbError::Open {
            path: path.to_path_buf(),
            source,
        })
}

/// [`agent_id`] on a synchronous connection (inside the caller's transaction, if any).
pub(crate) fn agent_id_sync(conn: &rusqlite::Connection, alias: &str) -> Result<String, DbError> {
    use rusqlite::OptionalExtension;
    let find = |conn: &rusqlite::Connection| -> Result<Option<String>, rusqlite::Error> {
        conn.prepare_cached("SELECT id FROM agents WHERE alias = ?1")?
            .query_row([alias], |r| r.get(0))
            .optional()
    };
    if let Some(id) = find(conn)? {
        return Ok(id);
    }
    conn.prepare_cached(
        "INSERT INTO agents (id, alias) VALUES (?1, ?2) ON CONFLICT(alias) DO NOTHING",
    )?
    .execute([uuid::Uuid::new_v4().to_string().as_str(), alias])?;
    find(conn)?.ok_or(DbError::Sync(rusqlite::Error::QueryReturnedNoRows))
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

/// [`row_error`] for a statement on the synchronous connection: a column whose value has the
/// wrong type is named with the table `table_of` gives for it; any other error is the
/// statement's.
pub(crate) fn sync_row_error(
    e: rusqlite::Error,
    table_of: impl Fn(&str) -> &'static str,
) -> DbError {
    match e {
        rusqlite::Error::InvalidColumnType(index, column, ty) => {
            let table = table_of(&column);
            let source = rusqlite::Error::InvalidColumnType(index, column.clone(), ty);
            named(&column, table, Box::new(source))
        }
        other => DbError::Sync(other),
    }
}

/// A column of `table` that did not decode, because of `source`.
pub(crate) fn named(
    column: &str,
    table: &str,
    source: Box<dyn std::error::Error + Send + Sync>,
) -> DbError {
    DbError::Query(sqlx::Error::ColumnDecode {
        index: format!("`{column}` of table `{table}`"),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::{open_sessions_db, MIGRATIONS};
    use sqlx::{Connection, SqliteConnection, SqlitePool};
    use std::str::FromStr;

    /// A session write waits while another of this process's writers holds the file's gate (a
    /// receipt being appended), and goes on when it is released; another file's gate is not
    /// the same.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_session_write_waits_for_the_files_gate() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        let store = crate::sessions::SessionStore::new(open_sessions_db(&path).await.unwrap());
        let gate = super::write_gate(&path);
        assert!(!std::sync::Arc::ptr_eq(
            &gate,
            &super::write_gate(&dir.path().join("other.db"))
        ));
        let held = gate.clone().lock_owned().await;
        let write = tokio::spawn(async move {
            store
                .create_session(
                    "ann",
                    crate::sessions::SessionKind::Chat,
                    "hi",
                    chrono::Utc::now(),
                )
                .await
                .map(|s| s.id)
        });
        tokio::task::yield_now().await;
        // Nothing was written while the gate was held.
        let mut raw = SqliteConnection::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        for _ in 0..20 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            let n: i64 = sqlx::query_scalar("SELECT count(*) FROM sessions")
                .fetch_one(&mut raw)
                .await
                .unwrap();
            assert_eq!(n, 0);
            assert!(!write.is_finished());
        }
        drop(held);
        let id = write.await.unwrap().unwrap();
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM sessions WHERE id = ?")
            .bind(&id)
            .fetch_one(&mut raw)
            .await
            .unwrap();
        assert_eq!(n, 1);
    }

    /// Every table, index and trigger with its SQL, sorted.
    async fn schema(pool: &SqlitePool) -> Vec<(String, String, Option<String>)> {
        sqlx::query_as("SELECT type, name, sql FROM sqlite_schema ORDER BY type, name")
            .fetch_all(pool)
            .await
            .unwrap()
    }

    async fn user_version(pool: &SqlitePool) -> i64 {
        sqlx::query_scalar("PRAGMA user_version")
            .fetch_one(pool)
            .await
            .unwrap()
    }

    /// A sessions.db as Warren made it before the runner kept a version: every statement run
    /// at every open, nothing recorded. The runner takes it as it is (same schema, same rows),
    /// records version 1, and from then on runs nothing at an open.
    #[tokio::test]
    async fn a_database_made_before_the_version_was_kept_opens_as_it_is_and_migrates_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        {
            let opts = sqlx::sqlite::SqliteConnectOptions::from_str("sqlite://")
                .unwrap()
                .filename(&path)
                .create_if_missing(true)
                .foreign_keys(true);
            let mut old = SqliteConnection::connect_with(&opts).await.unwrap();
            for m in MIGRATIONS {
                sqlx::query(m).execute(&mut old).await.unwrap();
            }
            sqlx::query("INSERT INTO agents (id, alias) VALUES ('a1', 'alice')")
                .execute(&mut old)
                .await
                .unwrap();
            old.close().await.unwrap();
        }
        let fresh = open_sessions_db(&dir.path().join("fresh.db"))
            .await
            .unwrap();
        let made_now = schema(&fresh).await;

        let pool = open_sessions_db(&path).await.unwrap();
        assert_eq!(
            schema(&pool).await,
            made_now,
            "the same schema as a new file"
        );
        assert_eq!(user_version(&pool).await, 1);
        assert_eq!(user_version(&fresh).await, 1);
        let alias: String = sqlx::query_scalar("SELECT alias FROM agents WHERE id = 'a1'")
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(alias, "alice");

        // Version 1 is recorded: the next open runs no statement (an index dropped since
        // stays dropped; running the step again would create it).
        sqlx::query("DROP INDEX network_agent_time")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        let pool = open_sessions_db(&path).await.unwrap();
        let again = schema(&pool).await;
        assert!(
            !again
                .iter()
                .any(|(_, name, _)| name == "network_agent_time"),
            "{again:?}"
        );
        assert_eq!(user_version(&pool).await, 1);
    }

    /// A file a newer Warren recorded a higher version in is used as it is.
    #[tokio::test]
    async fn a_database_of_a_newer_version_is_used_as_it_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.db");
        let pool = open_sessions_db(&path).await.unwrap();
        sqlx::query("PRAGMA user_version = 7")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
        let pool = open_sessions_db(&path).await.unwrap();
        assert_eq!(user_version(&pool).await, 7);
    }
}
