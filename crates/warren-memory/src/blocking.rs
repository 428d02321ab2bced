//! Running a short blocking SQLite call from async code without a thread hand-off.
//!
//! sqlx runs each SQLite connection on a thread of its own: every statement is a message to that
//! thread and a wake-up back, which for a one-row write costs about as much as the write. The
//! hot writes (a memory store, a turn's rows) instead run on a plain blocking connection, on the
//! task's own worker thread, through [`run`]: tokio's `block_in_place` lets the worker block
//! while the runtime's other tasks move to another worker, so a write that waits on SQLite's
//! lock (another process writing) stalls no other task. A runtime that cannot lend its worker
//! (a current-thread runtime: tests, one-shot CLI commands) gets the call on a blocking thread,
//! which is what every call cost before.

use tokio::runtime::{Handle, RuntimeFlavor};

/// Runs `f`, which may block (on disk or on SQLite's lock), from async code: on this worker
/// thread in a multi-thread runtime, on a blocking thread otherwise. `None` when the blocking
/// thread panicked (or the runtime is shutting down).
pub async fn run<T, F>(f: F) -> Option<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::MultiThread => {
            Some(tokio::task::block_in_place(f))
        }
        Ok(_) => tokio::task::spawn_blocking(f).await.ok(),
        // Outside any runtime: blocking here is what the caller asked for.
        Err(_) => Some(f()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_multi_thread_runtime_runs_the_call_on_the_calling_worker() {
        let on_worker = tokio::spawn(async {
            let here = std::thread::current().id();
            let there = run(move || std::thread::current().id()).await;
            there == Some(here)
        });
        assert_eq!(on_worker.await.ok(), Some(true));
    }

    #[tokio::test]
    async fn a_current_thread_runtime_runs_the_call_on_a_blocking_thread() {
        let here = std::thread::current().id();
        let there = run(move || std::thread::current().id()).await;
        assert!(there.is_some_and(|t| t != here));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 1)]
    async fn the_runtimes_other_tasks_run_while_a_call_blocks_its_only_worker() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        // The call blocks the runtime's only worker until another task of the runtime answers:
        // that task runs only if the worker's other work moved to another thread.
        let blocked = tokio::spawn(async move {
            let other = tokio::spawn(async move { tx.send(()) });
            let got = run(move || rx.recv_timeout(std::time::Duration::from_secs(10))).await;
            (got, other.await.is_ok())
        });
        assert_eq!(blocked.await.ok(), Some((Some(Ok(())), true)));
    }
}
