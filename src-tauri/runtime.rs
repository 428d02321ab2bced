//! The tray runtime: while the app lives (window shown or closed to the tray) it runs what
//! `warren serve` runs — the cron scheduler, ACP session liveness, journal resume — as the
//! install's one runtime owner (`data/runtime.lock`). Quitting stops it: running turns are
//! cancelled and recorded before the app exits (see `shutdown.rs`). A config that does not
//! load stops it at start; "Check again" in the window starts it once the config loads.

use crate::core::Core;
use std::sync::Mutex;
use tauri::{App, AppHandle, Manager, Runtime};
use warren_api::runtime_owner::{RuntimeControl, RuntimeOwner};

/// Starts the runtime again (set when the app starts it).
type Restart = Box<dyn Fn() -> Result<(), warren_api::ApiError> + Send + Sync>;

/// The control of the app's runtime loop (app state).
#[derive(Default)]
pub struct TrayRuntime(pub RuntimeControl, Mutex<Option<Restart>>);

impl TrayRuntime {
    /// Starts the runtime loop again when it is not running (it stopped on a config that did
    /// not load); nothing when it runs or this app never ran it.
    pub fn restart_if_stopped(&self) -> Result<(), warren_api::ApiError> {
        if self.0.is_running() {
            return Ok(());
        }
        let restart = self.1.lock().map_err(|_| {
            warren_api::ApiError::new(warren_api::ErrorCode::Internal, "runtime state poisoned")
        })?;
        match restart.as_ref() {
            Some(r) => r(),
            None => Ok(()),
        }
    }
}

/// Starts the runtime loop in the background as `owner`.
pub fn start<R: Runtime>(app: &App<R>, owner: RuntimeOwner) {
    let handle = app.handle().clone();
    if let Some(tray) = handle.try_state::<TrayRuntime>() {
        let h = handle.clone();
        let restart: Restart = Box::new(move || {
            let Some(core) = h.try_state::<Core>() else {
                return Ok(());
            };
            let owner = core.warren.acquire_runtime("warren-desktop")?;
            tauri::async_runtime::spawn(runtime_loop(h.clone(), owner));
            Ok(())
        });
        if let Ok(mut slot) = tray.1.lock() {
            *slot = Some(restart);
        }
    }
    tauri::async_runtime::spawn(runtime_loop(handle, owner));
}

async fn runtime_loop<R: Runtime>(handle: AppHandle<R>, owner: RuntimeOwner) {
    let (Some(core), Some(runtime)) = (
        handle.try_state::<Core>(),
        handle.try_state::<TrayRuntime>(),
    ) else {
        return;
    };
    match core.warren.run_runtime(owner, &runtime.0).await {
        Ok(r) => tracing::info!(
            runs_started = r.runs_started,
            cancelled = r.cancelled_at_shutdown,
            "runtime stopped"
        ),
        Err(e) => tracing::error!("the runtime stopped: {e}"),
    }
}
