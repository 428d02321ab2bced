//! The tray runtime: while the app lives (window shown or closed to the tray) it runs what
//! `warren serve` runs — the cron scheduler, ACP session liveness, journal resume — as the
//! install's one runtime owner (`data/runtime.lock`). Quitting stops it: running turns are
//! cancelled and recorded before the app exits (see `shutdown.rs`).

use crate::commands::Core;
use tauri::{App, Manager, Runtime};
use warren_api::runtime_owner::{RuntimeControl, RuntimeOwner};

/// The control of the app's runtime loop (app state).
#[derive(Default)]
pub struct TrayRuntime(pub RuntimeControl);

/// Starts the runtime loop in the background as `owner`.
pub fn start<R: Runtime>(app: &App<R>, owner: RuntimeOwner) {
    let handle = app.handle().clone();
    tauri::async_runtime::spawn(runtime_loop(handle, owner));
}

async fn runtime_loop<R: Runtime>(handle: tauri::AppHandle<R>, owner: RuntimeOwner) {
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
