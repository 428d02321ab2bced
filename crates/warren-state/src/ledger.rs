//! The persistent action ledger (rules §2.3): `max_actions_per_hour` counted in the `actions`
//! table of `sessions.db`, keyed by the agent's stable id. Every process of the install (the
//! desktop, `warren run`, `warren tool`, `warren serve`) charges the same rows, a restart
//! forgets nothing, and a rename keeps the agent's id and so its window.
//!
//! [`ActionLedger`] is synchronous: the tool gate's `prepare` charges it (the turn loop runs
//! that on the blocking pool, `warren tool` outside any runtime) and a permit that never ran
//! gives its unit back when dropped. So the ledger holds one connection of SQLite's synchronous
//! driver (the same library sqlx links) and never enters an async runtime.

use crate::db::{agent_id_sync, DbError, MIGRATIONS};
use rusqlite::{Connection, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use warren_policy::budget::BUDGET_WINDOW;
use warren_policy::{ActionLedger, ActionTicket, BudgetError};

/// An [`ActionLedger`] stored in the install's `sessions.db`.
pub struct DbLedger {
    conn: Mutex<Connection>,
    path: PathBuf,
}

fn millis(t: SystemTime) -> i64 {
    let ms = t
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_millis();
    i64::try_from(ms).unwrap_or(i64::MAX)
}

fn window_ms() -> i64 {
    i64::try_from(BUDGET_WINDOW.as_millis()).unwrap_or(i64::MAX)
}

impl DbLedger {
    /// Opens the ledger in the sessions database at `path` (created and migrated if missing),
    /// with the settings of every other connection to it: WAL, `synchronous = NORMAL`, foreign
    /// keys, and a five-second wait for another process's write lock.
    pub fn open(path: &Path) -> Result<Self, DbError> {
        let failed = |source| DbError::OpenSync {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| DbError::Open {
                path: path.to_path_buf(),
                source: sqlx::Error::Io(e),
            })?;
        }
        let conn = Connection::open(path).map_err(failed)?;
        conn.busy_timeout(Duration::from_secs(5)).map_err(failed)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(failed)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(failed)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(failed)?;
        for m in MIGRATIONS {
            conn.execute_batch(m).map_err(failed)?;
        }
        Ok(DbLedger {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
        })
    }

    fn conn(&self) -> Result<MutexGuard<'_, Connection>, BudgetError> {
        self.conn.lock().map_err(|_| {
            BudgetError::Store(format!(
                "the action ledger in {} is unusable after a failed call",
                self.path.display()
            ))
        })
    }
}

fn store_err(e: impl std::fmt::Display) -> BudgetError {
    BudgetError::Store(format!("sessions database: {e}"))
}

/// Counts, and charges when below `limit`, in one immediate transaction: concurrent processes
/// queue on SQLite's write lock, so none can overspend. `Err((limit, oldest))` when the window
/// is full.
fn charge(
    conn: &mut Connection,
    alias: &str,
    limit: u32,
    at: i64,
) -> Result<Result<i64, (u32, i64)>, DbError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let id = agent_id_sync(&tx, alias)?;
    let (used, oldest): (i64, Option<i64>) = tx.query_row(
        "SELECT COUNT(*), MIN(time_ms) FROM actions WHERE agent_id = ?1 AND time_ms > ?2",
        (&id, at.saturating_sub(window_ms())),
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if used >= i64::from(limit) {
        // Dropping the transaction rolls back the agent row it may have created.
        return Ok(Err((limit, oldest.unwrap_or(at))));
    }
    tx.execute(
        "INSERT INTO actions (agent_id, time_ms) VALUES (?1, ?2)",
        (&id, at),
    )?;
    let row = tx.last_insert_rowid();
    tx.commit()?;
    Ok(Ok(row))
}

impl ActionLedger for DbLedger {
    fn try_charge(
        &self,
        agent: &str,
        limit: u32,
        at: SystemTime,
    ) -> Result<ActionTicket, BudgetError> {
        let at_ms = millis(at);
        let mut conn = self.conn()?;
        let outcome = charge(&mut conn, agent, limit, at_ms).map_err(store_err)?;
        drop(conn);
        match outcome {
            Ok(id) => Ok(ActionTicket {
                agent: agent.to_string(),
                at,
                id: u64::try_from(id).unwrap_or_default(),
            }),
            Err((limit, oldest)) => {
                let retry_ms = if limit == 0 {
                    0
                } else {
                    (oldest + window_ms() - at_ms).max(0)
                };
                Err(BudgetError::Exhausted {
                    agent: agent.to_string(),
                    limit,
                    retry_after_secs: u64::try_from(retry_ms).unwrap_or_default().div_ceil(1000),
                })
            }
        }
    }

    fn refund(&self, ticket: &ActionTicket) -> Result<(), BudgetError> {
        let id = i64::try_from(ticket.id).unwrap_or(i64::MAX);
        self.conn()?
            .execute("DELETE FROM actions WHERE rowid = ?1", [id])
            .map_err(store_err)?;
        Ok(())
    }

    fn used(&self, agent: &str, at: SystemTime) -> Result<u32, BudgetError> {
        let n: i64 = self
            .conn()?
            .query_row(
                "SELECT COUNT(*) FROM actions JOIN agents ON agents.id = actions.agent_id
                 WHERE agents.alias = ?1 AND actions.time_ms > ?2",
                (agent, millis(at).saturating_sub(window_ms())),
                |r| r.get(0),
            )
            .map_err(store_err)?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Two ledgers on one file (as two processes have) charged from eight threads at once never
    /// overspend, a refund gives one unit back, and the window of a renamed agent is its id's.
    #[test]
    fn concurrent_charges_on_one_file_never_overspend() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/sessions.db");
        let a = Arc::new(DbLedger::open(&path).unwrap());
        let b = Arc::new(DbLedger::open(&path).unwrap());
        let now = SystemTime::now();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let l = if i % 2 == 0 { a.clone() } else { b.clone() };
                std::thread::spawn(move || {
                    (0..5)
                        .filter_map(|_| l.try_charge("alice", 12, now).ok())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let tickets: Vec<ActionTicket> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        assert_eq!(tickets.len(), 12);
        assert_eq!(a.used("alice", now).unwrap(), 12);
        match b.try_charge("alice", 12, now) {
            Err(BudgetError::Exhausted {
                limit,
                retry_after_secs,
                ..
            }) => {
                assert_eq!(limit, 12);
                assert!(retry_after_secs > 3_500, "{retry_after_secs}");
            }
            other => panic!("expected exhaustion, got {other:?}"),
        }
        b.refund(&tickets[3]).unwrap();
        assert_eq!(a.used("alice", now).unwrap(), 11);
        assert!(a.try_charge("alice", 12, now).is_ok());
        // A refused charge of a new agent leaves no agent row behind.
        assert!(a.try_charge("bob", 0, now).is_err());
        let rows: i64 = a
            .conn()
            .unwrap()
            .query_row("SELECT COUNT(*) FROM agents WHERE alias = 'bob'", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(rows, 0);
        // The window is the agent id's: a rename (same id, new alias) keeps the count.
        a.conn()
            .unwrap()
            .execute(
                "UPDATE agents SET alias = 'alicia' WHERE alias = 'alice'",
                [],
            )
            .unwrap();
        assert_eq!(b.used("alicia", now).unwrap(), 12);
        // An hour later the window is empty.
        assert_eq!(a.used("alicia", now + BUDGET_WINDOW).unwrap(), 0);
    }
}
