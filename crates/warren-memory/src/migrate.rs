//! One runner for the versioned schemas of Warren's databases: the SQLite and PostgreSQL memory
//! stores here, and `warren-state`'s `sessions.db` and `cron.db` above.
//!
//! A database records the version its schema is at (each [`Schema`] says where); [`run`] applies
//! the steps above it one at a time, each in its own transaction that first takes the
//! database's lock and reads the version again, so two processes opening an old database at
//! once migrate it once (the second finds the step done). A step and its record commit together:
//! a process killed part way leaves the step undone, and the next open does it.
//!
//! `sqlx::migrate!` is not used: it keeps its own table (`_sqlx_migrations`, with checksums), so
//! the databases existing installs have, which record their version in `warren_memory_meta` or
//! not at all, would see every step as not applied and run the first again (`CREATE TABLE
//! agents` on a file that has it); it runs only SQL (the memory file's version 3 is code); and
//! its statements cannot name the PostgreSQL schema an install chose.

use async_trait::async_trait;
use sqlx::{Connection, Database};

/// What [`run`] needs to know of one database's schema.
#[async_trait]
pub trait Schema<DB: Database>: Sync {
    /// The version this code writes: the number of steps.
    fn latest(&self) -> i64;

    /// The statement that opens a step's transaction (SQLite: `BEGIN IMMEDIATE`, which takes
    /// the write lock before the version is read).
    fn begin(&self) -> &'static str {
        "BEGIN"
    }

    /// Runs first in every step's transaction, before the version is read: takes a lock the
    /// transaction's start does not, creates where the version is kept.
    async fn prepare(&self, _tx: &mut DB::Connection) -> Result<(), sqlx::Error> {
        Ok(())
    }

    /// The version recorded (0: nothing applied yet).
    async fn version(&self, tx: &mut DB::Connection) -> Result<i64, sqlx::Error>;

    /// Applies the step that leads to `version` and records `version`.
    async fn step(&self, tx: &mut DB::Connection, version: i64) -> Result<(), sqlx::Error>;

    /// Why a database at `version`, above [`Schema::latest`] (written by a newer Warren), is
    /// refused; `None`: it is used as it is.
    fn newer(&self, version: i64) -> Option<String>;
}

/// Applies the steps of `schema` not yet applied to the database behind `conn`, each in its own
/// transaction; returns the version the code writes ([`Schema::latest`]).
pub async fn run<DB, S>(conn: &mut DB::Connection, schema: &S) -> Result<i64, sqlx::Error>
where
    DB: Database,
    S: Schema<DB>,
{
    loop {
        let mut tx = conn.begin_with(schema.begin()).await?;
        schema.prepare(&mut tx).await?;
        let current = schema.version(&mut tx).await?;
        if current >= schema.latest() {
            tx.rollback().await?;
            return match schema.newer(current) {
                Some(why) if current > schema.latest() => Err(sqlx::Error::Protocol(why)),
                _ => Ok(schema.latest()),
            };
        }
        schema.step(&mut tx, current + 1).await?;
        tx.commit().await?;
    }
}
