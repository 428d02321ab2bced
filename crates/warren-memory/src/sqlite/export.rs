//! Export pages of the SQLite store, read over a plain blocking connection on a blocking thread.
//!
//! sqlx runs each SQLite connection on a worker thread and sends every row of a result to the
//! calling task across a channel; for an export that hand-off is most of the time (5,000 rows:
//! about 25 ms, where SQLite reads them in about 2.5 ms). Here one page of rows is read and
//! turned into entries on the thread that steps the statement, and crosses to the caller once.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{params, Connection, OpenFlags};
use uuid::Uuid;

use super::rows::{ts_from_micros, ReadError};
use crate::types::MemoryEntry;

/// One page of an agent's rows after an optional `(created_at, id)` cursor. The join gives the
/// alias from the same snapshot as the rows; `memories_agent_created` orders them.
const PAGE_SQL: &str = "SELECT a.alias, m.id, m.key, m.content, m.category, m.session_id, \
     m.importance, m.created_at, m.updated_at \
     FROM memories m CROSS JOIN agents a ON a.id = m.agent_id \
     WHERE m.agent_id = ?1 AND (m.created_at, m.id) > (?2, ?3) \
     ORDER BY m.created_at, m.id LIMIT ?4";

/// A blocking read-only connection to the store's file, opened on first use and kept for the
/// next page (a page that finds it taken opens its own).
#[derive(Debug)]
pub(crate) struct BlockingReader {
    path: PathBuf,
    idle: Mutex<Option<Connection>>,
}

impl BlockingReader {
    pub(crate) fn new(path: &Path) -> Self {
        BlockingReader {
            path: path.to_path_buf(),
            idle: Mutex::new(None),
        }
    }

    fn open(&self) -> Result<Connection, ReadError> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.busy_timeout(Duration::from_secs(10))?;
        // Recalls rank with `warren_bm25` on this connection too (see [`super::rank`]).
        // SAFETY: the connection was just opened and is used by this thread only.
        unsafe { super::rank::register(conn.handle()) }.map_err(ReadError::Setup)?;
        Ok(conn)
    }

    /// Runs `f` on the idle connection (or a new one), keeping the connection for the next
    /// call when `f` succeeds. Blocks: call it on a blocking thread.
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, ReadError>,
    ) -> Result<T, ReadError> {
        let taken = self.slot().take();
        let conn = match taken {
            Some(c) => c,
            None => self.open()?,
        };
        let out = f(&conn);
        if out.is_ok() {
            let mut slot = self.slot();
            if slot.is_none() {
                *slot = Some(conn);
            }
        }
        out
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<Connection>> {
        // A panic while the slot was held leaves at worst no idle connection: still usable.
        self.idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Drops the idle connection (the store is closing).
    pub(crate) fn close(&self) {
        self.slot().take();
    }

    /// Up to `limit` rows of `agent_id` after `after` (`(created_at µs, id)`), in that order.
    /// Blocks: call it on a blocking thread.
    pub(crate) fn page(
        &self,
        agent_id: Uuid,
        after: Option<(i64, Uuid)>,
        limit: i64,
    ) -> Result<Vec<MemoryEntry>, ReadError> {
        self.with(|conn| read_page(conn, agent_id, after, limit))
    }
}

fn read_page(
    conn: &Connection,
    agent_id: Uuid,
    after: Option<(i64, Uuid)>,
    limit: i64,
) -> Result<Vec<MemoryEntry>, ReadError> {
    // Without a cursor, every row is after (i64::MIN, empty blob): one statement either way.
    let (after_ts, after_id): (i64, &[u8]) = match &after {
        Some((ts, id)) => (*ts, id.as_bytes().as_slice()),
        None => (i64::MIN, &[]),
    };
    let mut stmt = conn.prepare_cached(PAGE_SQL)?;
    let mut rows = stmt.query(params![
        agent_id.as_bytes().as_slice(),
        after_ts,
        after_id,
        limit
    ])?;
    let mut out = Vec::with_capacity(usize::try_from(limit).unwrap_or(0).min(4096));
    let mut alias: Option<String> = None;
    while let Some(r) = rows.next()? {
        let alias = match &alias {
            Some(a) => a.clone(),
            None => alias.insert(r.get::<_, String>(0)?).clone(),
        };
        let id = r.get_ref(1)?.as_blob().map_err(rusqlite::Error::from)?;
        let id = Uuid::from_slice(id).map_err(|e| ReadError::Row(format!("bad row id: {e}")))?;
        out.push(MemoryEntry {
            id,
            agent_id,
            agent: alias,
            key: r.get(2)?,
            content: r.get(3)?,
            category: r.get(4)?,
            session_id: r.get(5)?,
            importance: r.get(6)?,
            created_at: ts_from_micros(r.get(7)?).map_err(ReadError::Row)?,
            updated_at: ts_from_micros(r.get(8)?).map_err(ReadError::Row)?,
            score: None,
        });
    }
    Ok(out)
}
