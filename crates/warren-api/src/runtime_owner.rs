//! One runtime owner per install. The cron scheduler, ACP liveness and journal resume run in
//! exactly one process at a time: `warren serve` or the desktop app. The owner holds an
//! exclusive `flock` on `<install>/data/runtime.lock` for as long as it lives (the kernel drops
//! it when the process ends, also on a crash) and writes a small holder record into the file
//! (pid, program, start time) so a second starter can say who holds it.

use crate::Warren;
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use warren_types::{ApiError, ErrorCode};

/// Who owns the runtime of an install.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RuntimeHolder {
    /// The owner's process id.
    pub pid: u32,
    /// `warren serve` or `warren-desktop`.
    pub program: String,
    /// When it took the runtime (RFC 3339, UTC).
    pub started_at: String,
}

/// The held runtime lock: dropping it (or the process ending) releases the runtime.
#[derive(Debug)]
pub struct RuntimeOwner {
    _file: File,
    holder: RuntimeHolder,
    path: PathBuf,
}

impl RuntimeOwner {
    /// The record this process wrote.
    pub fn holder(&self) -> &RuntimeHolder {
        &self.holder
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn io(path: &Path, what: &str, e: std::io::Error) -> ApiError {
    ApiError::new(ErrorCode::Io, format!("{what} {}: {e}", path.display()))
}

/// Reads the holder record of a lock file (None when it is empty or not a record).
pub fn read_holder(path: &Path) -> Option<RuntimeHolder> {
    let mut text = String::new();
    File::open(path).ok()?.read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

/// The error a second starter gets.
fn owned_by(path: &Path, holder: Option<RuntimeHolder>) -> ApiError {
    let who = match holder {
        Some(h) => format!("{} (pid {}, since {})", h.program, h.pid, h.started_at),
        None => "another process (its holder record is not readable)".to_string(),
    };
    ApiError::new(
        ErrorCode::RuntimeOwned,
        format!(
            "the runtime of this install is already run by {who}; only one of `warren serve` \
             and the desktop app may run it (lock: {})",
            path.display()
        ),
    )
}

/// Takes the runtime lock at `path` for `program`, or says who holds it.
pub fn acquire(path: &Path, program: &str) -> Result<RuntimeOwner, ApiError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io(dir, "creating", e))?;
    }
    // Not truncated on open: the holder's record must stay readable until the lock is ours.
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| io(path, "opening", e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Err(owned_by(path, read_holder(path))),
        Err(TryLockError::Error(e)) => return Err(io(path, "locking", e)),
    }
    let holder = RuntimeHolder {
        pid: std::process::id(),
        program: program.to_string(),
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    let record = serde_json::to_string(&holder)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    file.set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| file.write_all(record.as_bytes()))
        .and_then(|()| file.sync_data())
        .map_err(|e| io(path, "writing the holder record to", e))?;
    Ok(RuntimeOwner {
        _file: file,
        holder,
        path: path.to_path_buf(),
    })
}

/// Starts and stops a runtime loop that runs in the background of an app (the desktop's
/// tray runtime): `stop` asks it to end, `finished` waits until it has recorded everything.
#[derive(Debug)]
pub struct RuntimeControl {
    stop: tokio::sync::watch::Sender<bool>,
    done: tokio::sync::watch::Sender<bool>,
    started: std::sync::atomic::AtomicBool,
}

impl Default for RuntimeControl {
    fn default() -> Self {
        RuntimeControl {
            stop: tokio::sync::watch::channel(false).0,
            done: tokio::sync::watch::channel(false).0,
            started: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl RuntimeControl {
    /// A control for a runtime not yet started.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the runtime to stop (running turns are cancelled and recorded).
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Whether the runtime was started and has not finished yet.
    pub fn is_running(&self) -> bool {
        self.started.load(std::sync::atomic::Ordering::SeqCst) && !*self.done.borrow()
    }

    /// Waits until the runtime has finished, at most `wait`; true when it did.
    pub async fn finished(&self, wait: std::time::Duration) -> bool {
        let mut rx = self.done.subscribe();
        let done = tokio::time::timeout(wait, rx.wait_for(|d| *d))
            .await
            .is_ok_and(|r| r.is_ok());
        done
    }
}

impl Warren {
    /// Runs the runtime loop as `owner` until `control` asks it to stop; the desktop app's
    /// tray runtime. Returns what `serve` reports.
    pub async fn run_runtime(
        &self,
        owner: RuntimeOwner,
        control: &RuntimeControl,
    ) -> Result<crate::ServeReport, ApiError> {
        // Started again after it ended (the config did not load): running until it ends.
        control.done.send_replace(false);
        control
            .started
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let mut stop = control.stop.subscribe();
        let stopped = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        let holder = owner.holder().clone();
        let result = self
            .serve(&owner, stopped, |agents, jobs| {
                tracing::info!(
                    pid = holder.pid,
                    program = %holder.program,
                    "runtime: ready ({agents} agents, {jobs} cron jobs)"
                );
            })
            .await;
        drop(owner);
        control.done.send_replace(true);
        result
    }

    /// `<install>/data/runtime.lock`.
    pub fn runtime_lock_path(&self) -> PathBuf {
        self.layout().data_dir().join("runtime.lock")
    }

    /// Takes the runtime of this install for `program` (`warren serve`, `warren-desktop`);
    /// fails with `runtime_owned`, naming the holder, while another process has it.
    pub fn acquire_runtime(&self, program: &str) -> Result<RuntimeOwner, ApiError> {
        acquire(&self.runtime_lock_path(), program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_owner_is_refused_with_the_holder_named_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data/runtime.lock");
        let first = acquire(&path, "warren serve").unwrap();
        assert_eq!(first.holder().pid, std::process::id());
        assert_eq!(read_holder(&path).as_ref(), Some(first.holder()));

        // flock locks belong to the open file description: a second open in this process
        // conflicts just as another process would.
        let e = acquire(&path, "warren-desktop").unwrap_err();
        assert_eq!(e.code, ErrorCode::RuntimeOwned);
        assert!(e.message.contains("warren serve (pid "), "{}", e.message);
        assert!(e.message.contains(&std::process::id().to_string()));
        // The refused starter left the record alone.
        assert_eq!(read_holder(&path).as_ref(), Some(first.holder()));

        drop(first);
        let second = acquire(&path, "warren-desktop").unwrap();
        assert_eq!(read_holder(&path).unwrap().program, "warren-desktop");
        drop(second);
    }
}
