//! Quitting: the exit is held until the tray runtime has stopped (its cron runs cancelled and
//! recorded) and every other running turn is cancelled and recorded as cancelled, then the
//! app exits and the runtime lock is free.

use crate::core::Core;
use crate::runtime::TrayRuntime;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tauri::{AppHandle, ExitRequestApi, Manager, Runtime};

/// How long quitting waits for cancelled turns to be recorded.
const TURN_WAIT: Duration = Duration::from_secs(10);

/// Set once the running turns were cancelled for quitting.
#[derive(Default)]
pub struct Quitting(AtomicBool);

impl Quitting {
    /// Whether the app is on its way out (nothing is to start again).
    pub fn is_quitting(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Handles an exit request: when turns run, holds the exit, cancels them, then exits.
pub fn on_exit_requested<R: Runtime>(app: &AppHandle<R>, api: &ExitRequestApi) {
    let Some(core) = app.try_state::<Core>() else {
        return;
    };
    let busy = !core.live.running_agents().is_empty();
    let runtime_on = app
        .try_state::<TrayRuntime>()
        .is_some_and(|r| r.0.is_running());
    let quitting = app.state::<Quitting>();
    if !(busy || runtime_on) || quitting.0.swap(true, Ordering::SeqCst) {
        return;
    }
    api.prevent_exit();
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let core = app.state::<Core>();
        if let Some(runtime) = app.try_state::<TrayRuntime>() {
            runtime.0.stop();
        }
        let cancelled = core
            .warren
            .cancel_running_turns(&core.live, TURN_WAIT)
            .await;
        tracing::info!(?cancelled, "cancelled the running turns before quitting");
        if let Some(runtime) = app.try_state::<TrayRuntime>() {
            if !runtime.0.finished(TURN_WAIT).await {
                tracing::warn!("the runtime did not stop in time; quitting anyway");
            }
        }
        app.exit(0);
    });
}
