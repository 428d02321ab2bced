//! The app process keeps OpenGL out by default (no GL driver, no libLLVM mapped), the page still
//! renders, WebKit's own processes get a clean environment, and `WARREN_GPU=1` brings GL back.

use crate::harness::{environ, launch_with_env, Bus, Desktop};
use crate::{block_on, serial};

const CONFIG: &str = r#"[risk_profiles.p]
level = "supervised"

[agents.alice]
risk_profile = "p"
"#;

/// The GL libraries mapped into a process: Mesa's DRI drivers and the LLVM they bring.
fn gl_mappings(pid: u32) -> Vec<String> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .unwrap_or_else(|e| panic!("reading /proc/{pid}/maps: {e}"));
    let mut found: Vec<String> = maps
        .lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .filter(|path| path.contains("_dri.so") || path.contains("libLLVM"))
        .map(str::to_string)
        .collect();
    found.sort();
    found.dedup();
    found
}

async fn rendered(d: &Desktop) {
    d.wait_for("[data-alias=alice]").await;
}

#[test]
fn the_app_process_draws_without_opengl_unless_asked() {
    let _serial = serial();
    block_on(async {
        // As users start it: WebKit's compositing on (the harness turns it off elsewhere).
        let d = launch_with_env(
            Bus::None,
            &[("WEBKIT_DISABLE_COMPOSITING_MODE", "0")],
            |home| std::fs::write(home.join("config.toml"), CONFIG).unwrap(),
        )
        .await;
        rendered(&d).await;
        let shot = d.screenshot("rendering-without-gl").await;
        let pid = d.backend_pid().expect("backend process not found");
        assert_eq!(
            gl_mappings(pid),
            Vec::<String>::new(),
            "the app process mapped GL libraries"
        );
        // The variables that kept GL out are gone again: WebKit's processes start with the
        // environment the app was given.
        let mut helpers = 0;
        for p in d.other_pids() {
            let comm = crate::harness::comm(p);
            if !comm.starts_with("WebKit") || comm.starts_with("WebKitWebDriver") {
                continue;
            }
            helpers += 1;
            let env = environ(p);
            for name in ["GDK_GL=", "__EGL_VENDOR_LIBRARY_FILENAMES="] {
                assert!(
                    !env.iter().any(|v| v.starts_with(name)),
                    "{comm} ({p}) inherited {name}"
                );
            }
        }
        assert!(helpers > 0, "no WebKit helper process found");
        // The page is drawn, not a blank window: a screenshot of text and tables has many
        // colours (anti-aliased glyphs); a blank or black window has one or two.
        let colours = std::process::Command::new("identify")
            .args(["-format", "%k"])
            .arg(&shot)
            .output()
            .unwrap();
        let colours: u32 = String::from_utf8_lossy(&colours.stdout)
            .trim()
            .parse()
            .unwrap_or(0);
        assert!(
            colours > 20,
            "the window looks blank: {colours} colours in {}",
            shot.display()
        );
        d.close().await;

        // Asked for: GL is loaded into the app process (Mesa's driver, under Xvfb).
        let d = launch_with_env(Bus::None, &[("WARREN_GPU", "1")], |home| {
            std::fs::write(home.join("config.toml"), CONFIG).unwrap();
        })
        .await;
        rendered(&d).await;
        let pid = d.backend_pid().expect("backend process not found");
        assert!(
            !gl_mappings(pid).is_empty(),
            "WARREN_GPU=1: no GL driver in the app process"
        );
        d.close().await;
    });
}
