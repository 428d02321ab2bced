//! Warren's desktop app: opens the install (creating the default one on first start), serves
//! the typed commands to the window and keeps running in the tray.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod core;
mod events;
mod notify;
mod rendering;
mod runtime;
mod shutdown;
mod tray;

use crate::core::{Core, InstallInfo};
use anyhow::Context;
use tauri::Manager;
use warren_api::Warren;
use warren_config::{resolve_install_root, HomeEnv, InstallLayout};

fn main() -> anyhow::Result<()> {
    // First, while this is the only thread: it sets and removes environment variables.
    let rendering = rendering::prepare();
    // No agent may read this process's environment (provider keys) or memory through /proc.
    warren_api::protect_process();
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let root = resolve_install_root(None, &HomeEnv::from_process(), &cwd)?;
    let layout = InstallLayout::new(root);
    let stderr_filter = std::env::var("WARREN_LOG").unwrap_or_else(|_| "info".into());
    let _logs = warren_api::logging::init_logging(&stderr_filter, Some(&layout.logs_dir()));
    tracing::info!("the window is drawn {rendering}");

    let warren = Warren::open_with_env(layout.clone(), warren_api::HostEnv::from_process());
    let start = warren
        .ensure_default_install()
        .map(|created_default| InstallInfo {
            root: layout.root().display().to_string(),
            config_path: layout.config_path().display().to_string(),
            created_default,
        });
    match &start {
        Ok(info) if info.created_default => {
            tracing::info!(path = %info.config_path, "created the default install");
        }
        Ok(_) => {}
        Err(e) => tracing::error!("first-start setup failed: {e}"),
    }
    // One runtime owner per install: refused while `warren serve` (or another app) runs it.
    // The refusal ends the app in `setup`, after a second window of this app was handed to
    // the first one by the single-instance plugin.
    let owner = warren.acquire_runtime("warren-desktop");
    if owner.is_ok() {
        // Renames, deletes and restores left unfinished are finished before any turn runs.
        tauri::async_runtime::block_on(warren.resume_pending());
    }

    let bindings = commands::specta_builder::<tauri::Wry>();
    tauri::Builder::default()
        .plugin(tauri_plugin_single_instance::init(|app, _argv, _cwd| {
            tray::show_main_window(app);
        }))
        .manage(Core {
            warren: std::sync::Arc::new(warren),
            start,
            live: warren_api::live::Live::new(),
        })
        .invoke_handler(bindings.invoke_handler())
        .manage(runtime::TrayRuntime::default())
        .setup(move |app| {
            // Refused: say who runs the install and end with exit code 1 (an error returned
            // from `setup` would make Tauri abort the process instead).
            let owner = match owner {
                Ok(owner) => owner,
                Err(e) => {
                    eprintln!("warren-desktop: {}", e.message);
                    tracing::error!("{}", e.message);
                    std::process::exit(1);
                }
            };
            runtime::start(app, owner);
            bindings.mount_events(app);
            events::spawn_bridge(app.handle());
            tray::install(app)?;
            tray::apply_start_hidden(app);
            events::spawn_pause_watch(app.handle());
            Ok(())
        })
        .manage(shutdown::Quitting::default())
        // A reloaded page has none of the old page's channels: forget their subscriptions.
        .on_page_load(|webview, payload| {
            if payload.event() == tauri::webview::PageLoadEvent::Started {
                if let Some(core) = webview.try_state::<Core>() {
                    core.live.unsubscribe_all();
                }
            }
        })
        .on_window_event(tray::on_window_event)
        .build(tauri::generate_context!())
        .context("starting the desktop app")?
        .run(|app, event| {
            if let tauri::RunEvent::ExitRequested { api, .. } = &event {
                shutdown::on_exit_requested(app, api);
            }
        });
    Ok(())
}
