//! The tray icon and its menu, the main window's show/hide, and close-to-tray.
//! Linux delivers no clicks on the tray icon itself, so everything lives in the menu.

use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{image::Image, App, AppHandle, Manager, Runtime, Window, WindowEvent};
use warren_api::live::{AgentStatus, AgentStatusEntry};

/// The label of the one window.
pub const MAIN_WINDOW: &str = "main";

const TRAY_ID: &str = "warren";
const ICON_IDLE: &[u8] = include_bytes!("../icons/tray-idle.png");
const ICON_WORKING: &[u8] = include_bytes!("../icons/tray-working.png");
const ICON_APPROVAL: &[u8] = include_bytes!("../icons/tray-approval.png");
const ICON_ERROR: &[u8] = include_bytes!("../icons/tray-error.png");
const ICON_PAUSED: &[u8] = include_bytes!("../icons/tray-paused.png");

/// What the tray shows: the icon for the most pressing state, the tooltip and the menu lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrayState {
    /// `idle`, `working`, `approval`, `error` or `paused`.
    pub icon: &'static str,
    /// The tooltip with the counts.
    pub tooltip: String,
    /// The status line of the menu.
    pub status_line: String,
    /// The approvals entry of the menu.
    pub approvals_line: String,
}

/// The tray state for these agent statuses, this many approvals waiting and this many agents
/// paused: an approval wins over an error, an error over work, work over a pause, a pause over
/// idle.
pub fn tray_state(statuses: &[AgentStatusEntry], pending: usize, paused: usize) -> TrayState {
    let count = |s: AgentStatus| statuses.iter().filter(|e| e.status == s).count();
    let working = count(AgentStatus::Working) + count(AgentStatus::WaitingForApproval);
    let errors = count(AgentStatus::Error);
    let icon = if pending > 0 {
        "approval"
    } else if errors > 0 {
        "error"
    } else if working > 0 {
        "working"
    } else if paused > 0 {
        "paused"
    } else {
        "idle"
    };
    let mut status_line = format!("{working} working, {errors} in error");
    if paused > 0 {
        status_line.push_str(&format!(", {paused} paused"));
    }
    TrayState {
        icon,
        tooltip: format!("Warren: {status_line}, {pending} approvals waiting"),
        approvals_line: format!("Approvals ({pending})"),
        status_line,
    }
}

/// The menu entries whose text follows the runtime.
struct TrayItems<R: Runtime> {
    status: MenuItem<R>,
    approvals: MenuItem<R>,
}

/// Shows `state` on the tray icon and its menu (nothing happens when there is no tray).
pub fn reflect<R: Runtime>(app: &AppHandle<R>, state: &TrayState) {
    let bytes = match state.icon {
        "approval" => ICON_APPROVAL,
        "error" => ICON_ERROR,
        "working" => ICON_WORKING,
        "paused" => ICON_PAUSED,
        _ => ICON_IDLE,
    };
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        if let Ok(image) = Image::from_bytes(bytes) {
            let _ = tray.set_icon(Some(image));
        }
        let _ = tray.set_tooltip(Some(&state.tooltip));
    }
    if let Some(items) = app.try_state::<TrayItems<R>>() {
        let _ = items.status.set_text(&state.status_line);
        let _ = items.approvals.set_text(&state.approvals_line);
    }
}

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
    let initial = tray_state(&[], 0, 0);
    let status = MenuItem::with_id(app, "status", &initial.status_line, false, None::<&str>)?;
    let approvals = MenuItem::with_id(
        app,
        "approvals",
        &initial.approvals_line,
        true,
        None::<&str>,
    )?;
    let pause_all = MenuItem::with_id(app, "pause_all", "Pause all agents", true, None::<&str>)?;
    let resume_all = MenuItem::with_id(app, "resume_all", "Resume all agents", true, None::<&str>)?;
    let logs = MenuItem::with_id(app, "logs", "Open logs", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Warren", true, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &show,
            &status,
            &approvals,
            &PredefinedMenuItem::separator(app)?,
            &pause_all,
            &resume_all,
            &logs,
            &PredefinedMenuItem::separator(app)?,
            &quit,
        ],
    )?;
    app.manage(TrayItems { status, approvals });
    let built = TrayIconBuilder::with_id(TRAY_ID)
        .icon(Image::from_bytes(ICON_IDLE)?)
        .tooltip("Warren")
        .menu(&menu)
        .show_menu_on_left_click(true)
        .on_menu_event(|app, event| match event.id.as_ref() {
            "show" => show_main_window(app),
            "approvals" => {
                show_main_window(app);
                if let Some(w) = app.get_webview_window(MAIN_WINDOW) {
                    let _ = w.eval("location.hash = '#approvals'");
                }
            }
            "pause_all" => set_all_paused(app, true),
            "resume_all" => set_all_paused(app, false),
            "logs" => {
                show_main_window(app);
                if let Some(w) = app.get_webview_window(MAIN_WINDOW) {
                    let _ = w.eval("location.hash = '#logs'");
                }
            }
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

/// Pauses or resumes every agent (tray menu).
fn set_all_paused<R: Runtime>(app: &AppHandle<R>, paused: bool) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let Some(core) = app.try_state::<crate::core::Core>() else {
            return;
        };
        // The pause watch (events.rs) tells the window and updates the icon.
        if let Err(e) = core.warren.set_all_paused(paused).await {
            tracing::warn!(
                "{} all agents failed: {}",
                if paused { "pausing" } else { "resuming" },
                e.message
            );
        }
    });
}

/// Hides the main window at start when the user asked to start hidden and the tray can bring
/// it back (without a tray host the setting is ignored: the app would be unreachable).
pub fn apply_start_hidden<R: Runtime>(app: &App<R>) {
    let to_tray = app.try_state::<CloseBehaviour>().is_some_and(|b| b.to_tray);
    let hidden = app
        .try_state::<crate::core::Core>()
        .and_then(|core| core.warren.desktop_settings().ok())
        .is_some_and(|s| s.start_hidden);
    if hidden && to_tray {
        if let Some(w) = app.get_webview_window(MAIN_WINDOW) {
            let _ = w.hide();
            tracing::info!("started hidden: the window opens from the tray");
        }
    } else if hidden {
        tracing::info!("start hidden is on, but no tray host shows the icon: showing the window");
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(agent: &str, status: AgentStatus) -> AgentStatusEntry {
        AgentStatusEntry {
            agent: agent.into(),
            status,
        }
    }

    #[test]
    fn the_most_pressing_state_picks_the_icon() {
        assert_eq!(tray_state(&[], 0, 0).icon, "idle");
        let busy = [
            entry("a", AgentStatus::Working),
            entry("b", AgentStatus::Idle),
        ];
        assert_eq!(tray_state(&busy, 0, 0).icon, "working");
        let failed = [
            entry("a", AgentStatus::Working),
            entry("b", AgentStatus::Error),
        ];
        assert_eq!(tray_state(&failed, 0, 0).icon, "error");
        let s = tray_state(&failed, 2, 0);
        assert_eq!(s.icon, "approval");
        assert_eq!(s.approvals_line, "Approvals (2)");
        assert_eq!(
            s.tooltip,
            "Warren: 1 working, 1 in error, 2 approvals waiting"
        );
        let idle = [entry("a", AgentStatus::Idle)];
        let p = tray_state(&idle, 0, 1);
        assert_eq!(p.icon, "paused");
        assert_eq!(p.status_line, "0 working, 0 in error, 1 paused");
        assert_eq!(tray_state(&busy, 0, 1).icon, "working");
    }
}
