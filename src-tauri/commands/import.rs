//! The first-start offer to import a ZeroClaw install: where one was found, its dry-run plan
//! (nothing written), and the import itself with its progress sent on a channel.

use super::Core;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tauri::ipc::Channel;
use tauri::State;
use warren_api::import::{Collision, ImportOptions, ImportProgress, ImportReport, ZeroclawInstall};
use warren_types::{ApiError, ErrorCode};

/// The ZeroClaw install at ZeroClaw's default place, if there is one.
#[tauri::command]
#[specta::specta]
pub async fn zeroclaw_install(core: State<'_, Core>) -> Result<Option<ZeroclawInstall>, ApiError> {
    super::blocking(&core, warren_api::Warren::zeroclaw_install).await
}

fn options(
    path: String,
    prefix: String,
    collisions: Option<String>,
    dry_run: bool,
) -> Result<ImportOptions, ApiError> {
    let collision = match collisions.as_deref() {
        None | Some("") => None,
        Some(c) => Some(Collision::from_name(c).ok_or_else(|| {
            ApiError::new(
                ErrorCode::InvalidArgument,
                format!("collisions `{c}`: expected rename, skip or replace"),
            )
        })?),
    };
    Ok(ImportOptions {
        path: Some(PathBuf::from(path)),
        dry_run,
        prefix,
        update: false,
        collision,
    })
}

async fn run_import(
    core: &Core,
    opts: ImportOptions,
    progress: impl Fn(&ImportProgress) + Send + Sync + 'static,
) -> Result<ImportReport, ApiError> {
    core.warren.import_zeroclaw(&opts, &progress).await
}

/// The whole plan of importing the install at `path` with `prefix`; writes nothing.
/// `collisions` (`rename`, `skip`, `replace`) settles entries whose names Warren already uses
/// for other settings.
#[tauri::command]
#[specta::specta]
pub async fn plan_zeroclaw_import(
    core: State<'_, Core>,
    path: String,
    prefix: String,
    collisions: Option<String>,
) -> Result<ImportReport, ApiError> {
    run_import(&core, options(path, prefix, collisions, true)?, |_| {}).await
}

/// How often progress is sent to the window at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Imports the install at `path` with `prefix` (one journaled operation, resumed at the next
/// start if interrupted), sending progress on `progress`, and returns what was written.
#[tauri::command]
#[specta::specta]
pub async fn import_zeroclaw(
    core: State<'_, Core>,
    path: String,
    prefix: String,
    collisions: Option<String>,
    progress: Channel<ImportProgress>,
) -> Result<ImportReport, ApiError> {
    let last = Mutex::new(None::<Instant>);
    let report = move |p: &ImportProgress| {
        let mut last = last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let due = last.is_none_or(|t| t.elapsed() >= PROGRESS_EVERY);
        if due || p.overall_done >= p.overall_total {
            *last = Some(Instant::now());
            if let Err(e) = progress.send(p.clone()) {
                tracing::debug!(error = %e, "import progress not delivered");
            }
        }
    };
    run_import(&core, options(path, prefix, collisions, false)?, report).await
}
