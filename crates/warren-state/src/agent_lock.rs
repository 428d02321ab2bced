//! The per-agent lock file that keeps one agent's turns and lifecycle operations apart across
//! processes (the desktop app, `warren serve`, a one-shot `warren run`, a CLI rename). Inside one
//! process the host's turn queue orders them; this file orders the processes. The lock is an
//! advisory `flock` on `<install>/data/locks/agent-<alias>.lock`, released by the kernel when
//! the holder exits, so a crashed process never leaves an agent locked.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;
use warren_config::InstallLayout;

/// How often a waiter tries again.
const POLL: Duration = Duration::from_millis(20);

/// Held while a turn or a lifecycle operation of one agent runs.
#[derive(Debug)]
pub struct AgentLock {
    _file: File,
}

/// The lock file of `alias`.
pub fn lock_path(layout: &InstallLayout, alias: &str) -> PathBuf {
    layout
        .data_dir()
        .join("locks")
        .join(format!("agent-{alias}.lock"))
}

/// Opens (creating it and its folder when missing) the lock file at `path`; the error names the
/// file. The file's content is never used: only its `flock`.
pub fn open_lock_file(path: &Path) -> io::Result<File> {
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(named)?;
    }
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(named)
}

fn open(layout: &InstallLayout, alias: &str) -> io::Result<File> {
    open_lock_file(&lock_path(layout, alias))
}

/// Takes the lock of `alias`, waiting while another process holds it: up to `wait`, or for as
/// long as it takes when `None`. `Ok(None)` when the wait ran out.
pub async fn acquire(
    layout: &InstallLayout,
    alias: &str,
    wait: Option<Duration>,
) -> io::Result<Option<AgentLock>> {
    let file = open(layout, alias)?;
    let deadline = wait.map(|w| tokio::time::Instant::now() + w);
    let mut told = false;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(AgentLock { _file: file })),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(e),
        }
        if !told {
            tracing::info!(agent = %alias, "the agent is busy in another process; waiting for it");
            told = true;
        }
        if let Some(d) = deadline {
            if tokio::time::Instant::now() >= d {
                return Ok(None);
            }
        }
        tokio::time::sleep(POLL).await;
    }
}
