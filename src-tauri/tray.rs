//! The tray icon and its menu, the main window's show/hide, and close-to-tray.
//! Linux delivers no clicks on the tray icon itself, so everything lives in the menu.

use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{image::Image, App, AppHandle, Manager, Runtime, Window, WindowEvent};

/// The label of the one window.
pub const MAIN_WINDOW: &str = "main";

const ICON_IDLE: &[u8] = include_bytes!("../icons/tray-idle.png");

/// Whether closing the window hides it (the tray keeps the app reachable) or quits.
pub struct CloseBehaviour {
    /// True when a tray icon was created and a tray host shows it.
    pub to_tray: bool,
}

/// Whether a StatusNotifier host (what draws tray icons on Linux desktops) owns its name on
/// the session bus. GNOME without the AppIndicator extension, or no session bus, has none.
fn tray_host_present() -> bool {
    let Ok(bus) = zbus::blocking::Connection::session() else {
        return false;
    };
    bus.call_method(
        Some("org.freedesktop.DBus"),
        "/org/freedesktop/DBus",
        Some("org.freedesktop.DBus"),
        "NameHasOwner",
        &("org.kde.StatusNotifierWatcher",),
    )
    .ok()
    .and_then(|reply| reply.body().deserialize::<bool>().ok())
    .unwrap_or(false)
}

/// Creates the tray icon with its menu. Closing the window hides it into the tray only when a
/// tray host can show the icon; otherwise closing the window quits.
pub fn install<R: Runtime>(app: &App<R>) -> tauri::Result<()> {
    let show = MenuItem::with_id(app, "show", "Show Warren", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Warren", true, None::<&str>)?;
    let menu = Menu::with_items(app, &[&show, &PredefinedMenuItem::separator(app)?, &quit])?;
    let built = TrayIconBuilder::with_id("warren")
        .icon(Image::from_bytes(ICON_IDLE)?)
        .tooltip("Warren")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| match event.id.as_ref() {
            "show" => show_main_window(app),
            "quit" => app.exit(0),
            _ => {}
        })
        .build(app);
    let to_tray = match built {
        Ok(_) => tray_host_present(),
        Err(e) => {
            tracing::warn!("tray icon unavailable, closing the window quits: {e}");
            false
        }
    };
    if to_tray {
        tracing::info!(
            to_tray,
            "a tray host shows the icon: closing the window hides it"
        );
    } else {
        tracing::info!(to_tray, "no tray host: closing the window quits");
    }
    app.manage(CloseBehaviour { to_tray });
    Ok(())
}

/// Shows, un-minimises and focuses the main window (tray menu, second launch).
pub fn show_main_window<R: Runtime>(app: &AppHandle<R>) {
    if let Some(w) = app.get_webview_window(MAIN_WINDOW) {
        let _ = w.show();
        let _ = w.unminimize();
        let _ = w.set_focus();
    }
}

/// Close-to-tray: hides the main window instead of closing it when the tray can bring it back.
pub fn on_window_event<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if let WindowEvent::CloseRequested { api, .. } = event {
        let to_tray = window
            .try_state::<CloseBehaviour>()
            .is_some_and(|b| b.to_tray);
        if to_tray && window.label() == MAIN_WINDOW {
            api.prevent_close();
            let _ = window.hide();
        }
    }
}
