//! The persistent action ledger (rules §2.3): `max_actions_per_hour` counted in the `actions`
//! table of `sessions.db`, keyed by the agent's stable id. Every process of the install (the
//! desktop, `warren run`, `warren tool`, `warren serve`) charges the same rows, a restart
//! forgets nothing, and a rename keeps the agent's id and so its window.
//!
//! [`ActionLedger`] is synchronous (the tool gate's `prepare` charges it; the turn loop runs
//! that on the blocking pool, and `warren tool` outside any runtime), so the ledger owns one
//! worker thread with its own small runtime and connection; each call is a job sent to it.

use crate::db::{open_sessions_db, DbError};
use futures::future::BoxFuture;
use sqlx::{Row, SqliteConnection, SqlitePool};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Sender};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use warren_policy::budget::BUDGET_WINDOW;
use warren_policy::{ActionLedger, ActionTicket, BudgetError};

type Job = Box<dyn FnOnce(&tokio::runtime::Runtime, &SqlitePool) + Send>;

/// An [`ActionLedger`] stored in the install's `sessions.db`.
pub struct DbLedger {
    jobs: Mutex<Sender<Job>>,
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
    /// Opens the ledger in the sessions database at `path` (created and migrated if missing).
    pub fn open(path: &Path) -> Result<Self, DbError> {
        let (tx, rx) = channel::<Job>();
        let (ready_tx, ready_rx) = channel::<Result<(), DbError>>();
        let db = path.to_path_buf();
        std::thread::Builder::new()
            .name("warren-action-ledger".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = ready_tx.send(Err(DbError::Query(sqlx::Error::Io(e))));
                        return;
                    }
                };
                let pool = match rt.block_on(open_sessions_db(&db)) {
                    Ok(p) => p,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(()));
                // Ends when the ledger (the only sender) is dropped.
                while let Ok(job) = rx.recv() {
                    job(&rt, &pool);
                }
                rt.block_on(pool.close());
            })
            .map_err(|e| DbError::Query(sqlx::Error::Io(e)))?;
        ready_rx
            .recv()
            .map_err(|_| DbError::Query(sqlx::Error::PoolClosed))??;
        Ok(DbLedger {
            jobs: Mutex::new(tx),
            path: path.to_path_buf(),
        })
    }

    /// Runs `f` on the worker and waits for its answer.
    fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(SqlitePool) -> BoxFuture<'static, Result<T, BudgetError>> + Send + 'static,
    ) -> Result<T, BudgetError> {
        let (tx, rx) = channel();
        let job: Job = Box::new(move |rt, pool| {
            let _ = tx.send(rt.block_on(f(pool.clone())));
        });
        let gone = || {
            BudgetError::Store(format!(
                "the action ledger in {} is closed",
                self.path.display()
            ))
        };
        self.jobs
            .lock()
            .map_err(|_| gone())?
            .send(job)
            .map_err(|_| gone())?;
        rx.recv().map_err(|_| gone())?
    }
}

fn store_err(e: impl std::fmt::Display) -> BudgetError {
    BudgetError::Store(format!("sessions database: {e}"))
}

/// The agent's stable id on `conn`, created on first use (inside the caller's transaction).
async fn agent_id(conn: &mut SqliteConnection, alias: &str) -> Result<String, sqlx::Error> {
    if let Some(id) = sqlx::query_scalar::<_, String>("SELECT id FROM agents WHERE alias = ?")
        .bind(alias)
        .fetch_optional(&mut *conn)
        .await?
    {
        return Ok(id);
    }
    let id = uuid::Uuid::new_v4().to_string();
    sqlx::query("INSERT INTO agents (id, alias) VALUES (?, ?)")
        .bind(&id)
        .bind(alias)
        .execute(&mut *conn)
        .await?;
    Ok(id)
}

/// Counts, and charges when below `limit`, in one immediate transaction: concurrent processes
/// queue on SQLite's write lock, so none can overspend.
async fn charge(
    conn: &mut SqliteConnection,
    alias: &str,
    limit: u32,
    at: i64,
) -> Result<Result<i64, (u32, i64)>, sqlx::Error> {
    let id = agent_id(conn, alias).await?;
    let row = sqlx::query(
        "SELECT COUNT(*) AS n, MIN(time_ms) AS oldest FROM actions WHERE agent_id = ? AND time_ms > ?",
    )
    .bind(&id)
    .bind(at.saturating_sub(window_ms()))
    .fetch_one(&mut *conn)
    .await?;
    let used: i64 = row.try_get("n")?;
    let oldest: Option<i64> = row.try_get("oldest")?;
    if used >= i64::from(limit) {
        return Ok(Err((limit, oldest.unwrap_or(at))));
    }
    let done = sqlx::query("INSERT INTO actions (agent_id, time_ms) VALUES (?, ?)")
        .bind(&id)
        .bind(at)
        .execute(&mut *conn)
        .await?;
    Ok(Ok(done.last_insert_rowid()))
}

impl ActionLedger for DbLedger {
    fn try_charge(
        &self,
        agent: &str,
        limit: u32,
        at: SystemTime,
    ) -> Result<ActionTicket, BudgetError> {
        let (alias, at_ms) = (agent.to_string(), millis(at));
        let outcome = self.run(move |pool| {
            Box::pin(async move {
                let mut conn = pool.acquire().await.map_err(store_err)?;
                sqlx::query("BEGIN IMMEDIATE")
                    .execute(&mut *conn)
                    .await
                    .map_err(store_err)?;
                let r = charge(&mut conn, &alias, limit, at_ms).await;
                let end = if matches!(r, Ok(Ok(_))) {
                    "COMMIT"
                } else {
                    "ROLLBACK"
                };
                let closed = sqlx::query(end).execute(&mut *conn).await;
                let r = r.map_err(store_err)?;
                closed.map_err(store_err)?;
                Ok(r)
            })
        })?;
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
        self.run(move |pool| {
            Box::pin(async move {
                sqlx::query("DELETE FROM actions WHERE rowid = ?")
                    .bind(id)
                    .execute(&pool)
                    .await
                    .map_err(store_err)?;
                Ok(())
            })
        })
    }

    fn used(&self, agent: &str, at: SystemTime) -> Result<u32, BudgetError> {
        let (alias, at_ms) = (agent.to_string(), millis(at));
        self.run(move |pool| {
            Box::pin(async move {
                let n: i64 = sqlx::query_scalar(
                    "SELECT COUNT(*) FROM actions JOIN agents ON agents.id = actions.agent_id
                     WHERE agents.alias = ? AND actions.time_ms > ?",
                )
                .bind(&alias)
                .bind(at_ms.saturating_sub(window_ms()))
                .fetch_one(&pool)
                .await
                .map_err(store_err)?;
                Ok(u32::try_from(n).unwrap_or(u32::MAX))
            })
        })
    }
}
