//! Quitting with turns running: the exit is held until every running turn is cancelled and
//! recorded as cancelled, then the app exits.

use crate::commands::Core;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tauri::{AppHandle, ExitRequestApi, Manager, Runtime};

/// How long quitting waits for cancelled turns to be recorded.
const TURN_WAIT: Duration = Duration::from_secs(10);

/// Set once the running turns were cancelled for quitting.
#[derive(Default)]
pub struct Quitting(AtomicBool);

/// Handles an exit request: when turns run, holds the exit, cancels them, then exits.
pub fn on_exit_requested<R: Runtime>(app: &AppHandle<R>, api: &ExitRequestApi) {
    let Some(core) = app.try_state::<Core>() else {
        return;
    };
    let busy = !core.live.running_agents().is_empty();
    let quitting = app.state::<Quitting>();
    if !busy || quitting.0.swap(true, Ordering::SeqCst) {
        return;
    }
    api.prevent_exit();
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let core = app.state::<Core>();
        let cancelled = core
            .warren
            .cancel_running_turns(&core.live, TURN_WAIT)
            .await;
        tracing::info!(?cancelled, "cancelled the running turns before quitting");
        app.exit(0);
    });
}
