//! Desktop notifications (freedesktop `org.freedesktop.Notifications` on the session bus): an
//! approval waiting or a turn failing, shown while the window is hidden or not focused and the
//! setting is on. Sending never blocks the bridge: each one goes out from a thread of its own.

use crate::core::Core;
use std::collections::HashMap;
use std::sync::Mutex;
use tauri::{AppHandle, Manager, Runtime};
use warren_api::live::StateChange;
use warren_api::notify::{Notification, Notifier};

static NOTIFIER: Mutex<Option<Notifier>> = Mutex::new(None);

/// Feeds one state change to the notifier and shows what it asks for, when it should be shown.
pub fn on_change<R: Runtime>(app: &AppHandle<R>, change: &StateChange) {
    let due = {
        let mut guard = NOTIFIER
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        guard.get_or_insert_with(Notifier::new).on_change(change)
    };
    if due.is_empty() || !wanted(app) {
        return;
    }
    for n in due {
        std::thread::spawn(move || {
            if let Err(e) = send(&n) {
                tracing::info!("desktop notification not shown: {e}");
            }
        });
    }
}

/// The setting is on and the window is not in front (hidden, or another window has focus).
fn wanted<R: Runtime>(app: &AppHandle<R>) -> bool {
    let on = app
        .try_state::<Core>()
        .and_then(|core| core.warren.desktop_settings().ok())
        .is_none_or(|s| s.notifications);
    if !on {
        return false;
    }
    match app.get_webview_window(crate::tray::MAIN_WINDOW) {
        Some(w) => {
            let visible = w.is_visible().unwrap_or(false);
            let focused = w.is_focused().unwrap_or(false);
            !(visible && focused)
        }
        None => true,
    }
}

fn send(n: &Notification) -> zbus::Result<()> {
    let conn = zbus::blocking::Connection::session()?;
    let hints: HashMap<&str, zbus::zvariant::Value<'_>> = HashMap::new();
    conn.call_method(
        Some("org.freedesktop.Notifications"),
        "/org/freedesktop/Notifications",
        Some("org.freedesktop.Notifications"),
        "Notify",
        &(
            "Warren",
            0u32,
            "warren",
            n.summary.as_str(),
            n.body.as_str(),
            Vec::<&str>::new(),
            hints,
            -1i32,
        ),
    )?;
    Ok(())
}
