//! Whole-app tests: the real `warren-desktop` window driven through tauri-driver and
//! WebKitWebDriver under Xvfb, each test with its own `WARREN_HOME`. They need `Xvfb`,
//! `WebKitWebDriver` and `tauri-driver` (`scripts/setup.sh --test`) and a built UI
//! (`npm ci && npm run build` in `ui/`). Tests run one at a time: see `serial`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod activity;
mod agents;
mod appearance;
mod chat;
mod cron;
mod editor;
mod first_run;
mod harness;
mod import;
mod lifecycle;
mod live;
mod mcp;
mod memory;
mod memory_backends;
mod network;
mod pause;
mod pending;
mod profiles;
mod providers;
mod rendering;
mod settings;

use std::sync::{Mutex, MutexGuard};

static SERIAL: Mutex<()> = Mutex::new(());

/// Desktop tests share the machine's two cores and WebKit's startup; run them one at a time.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs an async test body on a fresh runtime.
pub fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// Runs an async test body on a multi-threaded runtime (a fake provider server lives in the
/// test process and must answer while the test waits on the window).
pub fn block_on_mt<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}
