//! How the window's own process draws: without OpenGL unless asked.
//!
//! On X11, GTK picks its window visuals through GLX and WebKitGTK opens an EGL display to find
//! the render device, even when nothing in the window is ever composited on the GPU. Either one
//! loads the system's GL driver, and on Debian that is Mesa's megadriver, which brings libLLVM:
//! about 65 MB of the app's resident memory, for a window that shows tables and text. So by
//! default the app process keeps OpenGL out: GTK is initialised with `GDK_GL=disable` and the GL
//! vendor library (libglvnd) is started with no EGL vendor, then both variables are removed again
//! so that WebKit's web process, started later, renders with the system's normal setup (WebKit
//! then draws the page on the CPU, which this UI does not notice).
//!
//! `WARREN_GPU=1` keeps GL in the app process. A user who already set `GDK_GL` or one of
//! libglvnd's EGL vendor variables gets exactly what they set.

use std::ffi::{c_char, c_int, c_void, CStr};

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
}

impl std::fmt::Display for Rendering {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rendering::WithoutGl => write!(f, "without OpenGL ({GPU_ENV}=1 uses the GPU)"),
            Rendering::Gpu => write!(f, "with OpenGL ({GPU_ENV} is set)"),
            Rendering::UserSettings(name) => write!(f, "as the environment asks ({name} is set)"),
            Rendering::NoDisplay => write!(f, "not prepared: GTK could not open a display"),
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
    match USER_OVERRIDES.iter().find(|name| env(name).is_some()) {
        Some(name) => Rendering::UserSettings(name),
        None => Rendering::WithoutGl,
    }
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
    let gtk_ready = gtk::init().is_ok();
    if gtk_ready {
        start_egl_without_vendor();
    }
    std::env::remove_var("GDK_GL");
    std::env::remove_var("__EGL_VENDOR_LIBRARY_FILENAMES");
    if gtk_ready {
        Rendering::WithoutGl
    } else {
        Rendering::NoDisplay
    }
}

/// Makes libglvnd load its EGL vendor list (empty, given the variable) by asking for the client
/// extensions, the same first call WebKit makes. Without libEGL there is nothing to keep out.
fn start_egl_without_vendor() {
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
            return;
        }
        let query = libc::dlsym(handle, symbol.as_ptr());
        if query.is_null() {
            return;
        }
        let query: QueryString = std::mem::transmute::<*mut c_void, QueryString>(query);
        let extensions = query(std::ptr::null_mut(), EGL_EXTENSIONS);
        if !extensions.is_null() {
            tracing::debug!(
                extensions = %CStr::from_ptr(extensions).to_string_lossy(),
                "EGL client extensions"
            );
        }
    }
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
