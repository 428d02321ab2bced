//! How the window's own process draws: without OpenGL unless asked.
//!
//! On X11, GTK picks its window visuals through GLX and WebKitGTK opens an EGL display to find
//! the render device, even when nothing in the window is ever composited on the GPU. Either one
//! loads the system's GL driver, and on Debian that is Mesa's megadriver, which brings libLLVM:
//! about 55-60 MB of the app's resident memory, for a window that shows tables and text. So by
//! default the app process keeps OpenGL out: GTK is initialised with `GDK_GL=disable` and the GL
//! vendor library (libglvnd) is started with no EGL vendor, then both variables are removed again
//! so that WebKit's web process, started later, renders with the system's normal setup (WebKit
//! then draws the page on the CPU, which this UI does not notice).
//!
//! `WARREN_GPU=1` keeps GL in the app process. A user who already set `GDK_GL` or one of
//! libglvnd's EGL vendor variables gets exactly what they set. Under Wayland nothing changes:
//! there the app process needs EGL to show the page.

use std::ffi::{c_char, c_int, c_void};

/// The variable that asks for GPU drawing in the app process.
pub const GPU_ENV: &str = "WARREN_GPU";

/// Variables a user may have set to steer GL themselves; any of them disables our choice.
const USER_OVERRIDES: [&str; 3] = [
    "GDK_GL",
    "__EGL_VENDOR_LIBRARY_FILENAMES",
    "__EGL_VENDOR_LIBRARY_DIRS",
];

/// A vendor file that cannot exist (`/dev/null` is not a directory): libglvnd loads no vendor.
const NO_EGL_VENDOR: &str = "/dev/null/no-egl-vendor.json";

/// What `prepare` decided, for the startup log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rendering {
    /// GL kept out of the app process (the default).
    WithoutGl,
    /// `WARREN_GPU` asked for GL.
    Gpu,
    /// The user's own GL variables were left as they are; names the first one found.
    UserSettings(&'static str),
    /// GTK could not start here (no display); nothing was changed.
    NoDisplay,
    /// A Wayland session: the app process needs EGL to show the page there, so nothing is
    /// changed.
    Wayland,
    /// GTK started, but no libglvnd EGL was found to start without a vendor; GTK's own GL is
    /// off, WebKit may still load a driver.
    GtkOnly,
}

impl std::fmt::Display for Rendering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rendering::WithoutGl => write!(f, "without OpenGL ({GPU_ENV}=1 uses the GPU)"),
            Rendering::Gpu => write!(f, "with OpenGL ({GPU_ENV} is set)"),
            Rendering::UserSettings(name) => write!(f, "as the environment asks ({name} is set)"),
            Rendering::NoDisplay => write!(f, "not prepared: GTK could not open a display"),
            Rendering::Wayland => write!(f, "with OpenGL (a Wayland session needs it)"),
            Rendering::GtkOnly => write!(
                f,
                "with GTK's OpenGL off; libEGL could not be started without a vendor"
            ),
        }
    }
}

/// Whether a `WARREN_GPU` value asks for the GPU.
pub fn wants_gpu(value: Option<&str>) -> bool {
    matches!(
        value.map(|v| v.trim().to_ascii_lowercase()).as_deref(),
        Some("1" | "true" | "yes" | "on")
    )
}

/// Decides from the environment alone, without touching it.
pub fn choose(env: impl Fn(&str) -> Option<String>) -> Rendering {
    if wants_gpu(env(GPU_ENV).as_deref()) {
        return Rendering::Gpu;
    }
    if let Some(name) = USER_OVERRIDES.iter().find(|name| env(name).is_some()) {
        return Rendering::UserSettings(name);
    }
    // GTK prefers Wayland when both are there, unless GDK_BACKEND names x11 first.
    let x11_first = env("GDK_BACKEND")
        .map(|b| b.trim_start().starts_with("x11"))
        .unwrap_or(false);
    if env("WAYLAND_DISPLAY").is_some_and(|d| !d.is_empty()) && !x11_first {
        return Rendering::Wayland;
    }
    Rendering::WithoutGl
}

/// Must run first in `main`, while the process has one thread: it sets and removes environment
/// variables, and initialises GTK on this (the main) thread.
pub fn prepare() -> Rendering {
    let choice = choose(|name| std::env::var(name).ok());
    if choice != Rendering::WithoutGl {
        return choice;
    }
    std::env::set_var("GDK_GL", "disable");
    std::env::set_var("__EGL_VENDOR_LIBRARY_FILENAMES", NO_EGL_VENDOR);
    // GTK reads GDK_GL once, while it initialises; libglvnd reads its vendor list once, at the
    // first EGL call. Both happen now, so the variables can go before anything is started.
    // GTK may start helper threads while it initialises (GDBus, accessibility); they run
    // beside the removal below. A thread that read the environment at that moment could see
    // either state of these two variables, which only GTK and libglvnd (both done) look at.
    let gtk_ready = gtk::init().is_ok();
    let egl_started = gtk_ready && start_egl_without_vendor();
    std::env::remove_var("GDK_GL");
    std::env::remove_var("__EGL_VENDOR_LIBRARY_FILENAMES");
    match (gtk_ready, egl_started) {
        (false, _) => Rendering::NoDisplay,
        (true, false) => Rendering::GtkOnly,
        (true, true) => Rendering::WithoutGl,
    }
}

/// Makes libglvnd load its EGL vendor list (empty, given the variable) by asking for the client
/// extensions, the same first call WebKit makes. False when libEGL could not be called or an EGL
/// vendor library got loaded all the same.
fn start_egl_without_vendor() -> bool {
    const EGL_EXTENSIONS: c_int = 0x3055;
    type QueryString = unsafe extern "C" fn(*mut c_void, c_int) -> *const c_char;
    let library = c"libEGL.so.1";
    let symbol = c"eglQueryString";
    // SAFETY: dlopen/dlsym with valid NUL-terminated names; the handle is never closed, so the
    // function pointer stays valid; eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS) is defined
    // by EGL 1.5 and returns NULL or a static string.
    unsafe {
        let handle = libc::dlopen(library.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL);
        if handle.is_null() {
            return false;
        }
        let query = libc::dlsym(handle, symbol.as_ptr());
        if query.is_null() {
            return false;
        }
        let query: QueryString = std::mem::transmute::<*mut c_void, QueryString>(query);
        // NULL or a static string; its text does not matter, the call does.
        let _extensions: *const c_char = query(std::ptr::null_mut(), EGL_EXTENSIONS);
    }
    // libglvnd loads its vendors (libEGL_mesa, libEGL_nvidia, ...) on that first call: none
    // may be mapped now.
    std::fs::read_to_string("/proc/self/maps")
        .map(|maps| !maps.contains("/libEGL_"))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn keeps_gl_out_by_default() {
        assert_eq!(choose(env_of(&[])), Rendering::WithoutGl);
        assert_eq!(choose(env_of(&[("WARREN_GPU", "0")])), Rendering::WithoutGl);
        assert_eq!(choose(env_of(&[("WARREN_GPU", "")])), Rendering::WithoutGl);
    }

    #[test]
    fn warren_gpu_keeps_gl() {
        for value in ["1", "true", "YES", " on "] {
            assert_eq!(
                choose(env_of(&[("WARREN_GPU", value)])),
                Rendering::Gpu,
                "{value}"
            );
        }
    }

    #[test]
    fn a_wayland_session_is_left_alone_unless_gtk_is_told_x11() {
        assert_eq!(
            choose(env_of(&[
                ("WAYLAND_DISPLAY", "wayland-0"),
                ("DISPLAY", ":0")
            ])),
            Rendering::Wayland
        );
        assert_eq!(
            choose(env_of(&[
                ("WAYLAND_DISPLAY", "wayland-0"),
                ("GDK_BACKEND", "x11")
            ])),
            Rendering::WithoutGl
        );
        assert_eq!(
            choose(env_of(&[
                ("WAYLAND_DISPLAY", "wayland-0"),
                ("GDK_BACKEND", "x11,wayland")
            ])),
            Rendering::WithoutGl
        );
        assert_eq!(
            choose(env_of(&[
                ("WAYLAND_DISPLAY", "wayland-0"),
                ("GDK_BACKEND", "wayland")
            ])),
            Rendering::Wayland
        );
        assert_eq!(
            choose(env_of(&[("WAYLAND_DISPLAY", ""), ("DISPLAY", ":0")])),
            Rendering::WithoutGl
        );
    }

    #[test]
    fn a_users_own_gl_variables_win() {
        assert_eq!(
            choose(env_of(&[("GDK_GL", "always")])),
            Rendering::UserSettings("GDK_GL")
        );
        assert_eq!(
            choose(env_of(&[(
                "__EGL_VENDOR_LIBRARY_FILENAMES",
                "/usr/share/glvnd/egl_vendor.d/50_mesa.json"
            )])),
            Rendering::UserSettings("__EGL_VENDOR_LIBRARY_FILENAMES")
        );
        assert_eq!(
            choose(env_of(&[("__EGL_VENDOR_LIBRARY_DIRS", "/opt/egl")])),
            Rendering::UserSettings("__EGL_VENDOR_LIBRARY_DIRS")
        );
    }
}
