//! Stores of up to one chunk of rows over a plain blocking connection, run on the calling task's
//! worker thread ([`crate::blocking::run`]).
//!
//! A one-row store through sqlx is a message to the connection's thread and the rows back over a
//! channel: the hand-off alone costs about what SQLite's own work does. Here the upsert and the
//! index statement run in one transaction on the thread that asked. Stores take turns at the
//! connection (its mutex); the store's other writes (forget, rename, purge, import, larger
//! batches) go over the sqlx writer and meet these at SQLite's lock, through the busy timeout,
//! as another process's writes do.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{params_from_iter, types::Value, Connection, OpenFlags};
use uuid::Uuid;

use super::rows::ReadError;

/// Prepared statements the connection keeps (rusqlite's default is 16).
const STATEMENTS_KEPT: usize = 256;

/// The connection's page cache (negative: KiB). With SQLite's default (2 MiB) this second
/// writing connection's cache raised the process's peak RSS by about 1.7 MiB in the memory
/// bench; at 512 KiB the corpus loads (batches of 500) took the same time (3.58 / 3.82 s
/// against 3.81 / 3.61 s) and one-row stores did not slow down.
const CACHE_KIB: i64 = -512;

/// What the upsert returns for each row: its key, id, creation time (µs) and `seq`.
pub(crate) type Returned = (String, Uuid, i64, i64);

/// The blocking writing connection, opened on first use and kept.
#[derive(Debug)]
pub(crate) struct BlockingWriter {
    path: PathBuf,
    conn: Mutex<Option<Connection>>,
}

impl BlockingWriter {
    pub(crate) fn new(path: &Path) -> Self {
        BlockingWriter {
            path: path.to_path_buf(),
            conn: Mutex::new(None),
        }
    }

    fn slot(&self) -> MutexGuard<'_, Option<Connection>> {
        // A panic while the slot was held leaves at worst a connection whose transaction was
        // rolled back by its drop guard: still usable.
        self.conn.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn open(path: &Path) -> Result<Connection, rusqlite::Error> {
        // The same settings as the sqlx connections of the store (WAL is the file's own).
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_secs(10))?;
        conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")?;
        // One-row stores keep two statements per agent prepared (the index statement names the
        // agent's index): room for a hundred or so agents storing in turn.
        conn.set_prepared_statement_cache_capacity(STATEMENTS_KEPT);
        conn.execute_batch(&format!("PRAGMA cache_size = {CACHE_KIB}"))?;
        Ok(conn)
    }

    /// Drops the connection (the store is closing).
    pub(crate) fn close(&self) {
        self.slot().take();
    }

    /// Whether the connection is open.
    #[cfg(test)]
    pub(crate) fn is_open(&self) -> bool {
        self.slot().is_some()
    }

    /// Runs `upsert` (bound with `values`) and then `index` (bound with `index_values`) in one
    /// `BEGIN IMMEDIATE` transaction; returns the upsert's rows. `keep`: the statements are kept
    /// prepared for the next call (one-row stores repeat; a 500-row statement is large and its
    /// length varies). `close_after`: the connection is closed once the store is done (see
    /// `SMALL_STORE_TEXT` in the store's module). Blocks (see the module).
    pub(crate) fn store(
        &self,
        upsert: &str,
        values: Vec<Value>,
        index: &str,
        index_values: Vec<Value>,
        keep: bool,
        close_after: bool,
    ) -> Result<Vec<Returned>, ReadError> {
        let mut slot = self.slot();
        let out = Self::store_on(
            &mut slot,
            &self.path,
            upsert,
            values,
            index,
            index_values,
            keep,
        );
        if close_after {
            slot.take();
        }
        out
    }

    fn store_on(
        slot: &mut Option<Connection>,
        path: &Path,
        upsert: &str,
        values: Vec<Value>,
        index: &str,
        index_values: Vec<Value>,
        keep: bool,
    ) -> Result<Vec<Returned>, ReadError> {
        let conn = match slot.as_mut() {
            Some(c) => c,
            None => slot.insert(Self::open(path)?),
        };
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut returned = Vec::new();
        let prepare = |sql: &str| -> rusqlite::Result<CachedOrNot<'_>> {
            Ok(if keep {
                CachedOrNot::Cached(tx.prepare_cached(sql)?)
            } else {
                CachedOrNot::Once(tx.prepare(sql)?)
            })
        };
        {
            let mut st = prepare(upsert)?;
            let mut rows = st.query(params_from_iter(values))?;
            while let Some(r) = rows.next()? {
                let id = r.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
                let id =
                    Uuid::from_slice(id).map_err(|e| ReadError::Row(format!("bad row id: {e}")))?;
                returned.push((r.get(0)?, id, r.get(2)?, r.get(3)?));
            }
        }
        prepare(index)?.execute(params_from_iter(index_values))?;
        // Not committed (an error above): the transaction's drop rolls it back.
        tx.commit()?;
        Ok(returned)
    }
}

/// A statement kept in the connection's cache or prepared for one call.
enum CachedOrNot<'c> {
    Cached(rusqlite::CachedStatement<'c>),
    Once(rusqlite::Statement<'c>),
}

impl<'c> std::ops::Deref for CachedOrNot<'c> {
    type Target = rusqlite::Statement<'c>;
    fn deref(&self) -> &Self::Target {
        match self {
            CachedOrNot::Cached(s) => s,
            CachedOrNot::Once(s) => s,
        }
    }
}

impl std::ops::DerefMut for CachedOrNot<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            CachedOrNot::Cached(s) => s,
            CachedOrNot::Once(s) => s,
        }
    }
}
