//! Appearance: every screen stays readable at 200% zoom (no page-wide horizontal scrolling; wide
//! tables scroll inside their own box), and the colours follow the system's light or dark
//! preference (a dark GTK theme gives the dark palette).

use crate::harness::{launch, launch_with_env, Bus, Desktop};
use crate::{block_on, serial};
use std::time::Duration;

const CONFIG: &str = r#"[risk_profiles.p]
level = "supervised"

[agents.alice]
risk_profile = "p"

[agents.bob]
risk_profile = "p"
"#;

const SCREENS: [&str; 8] = [
    "agents",
    "live/alice",
    "profiles",
    "approvals",
    "memory/alice",
    "usage",
    "logs",
    "settings",
];

async fn eval(d: &Desktop, script: &str) -> serde_json::Value {
    d.client.execute(script, vec![]).await.unwrap()
}

#[test]
fn every_screen_reflows_at_200_percent_zoom() {
    let _serial = serial();
    block_on(async {
        let d = launch(|home| std::fs::write(home.join("config.toml"), CONFIG).unwrap()).await;
        d.wait_for("[data-alias=alice]").await;
        eval(
            &d,
            "document.documentElement.style.zoom = '2'; return true;",
        )
        .await;
        let mut overflowing = Vec::new();
        for screen in SCREENS {
            eval(&d, &format!("location.hash = '#{screen}'; return true;")).await;
            tokio::time::sleep(Duration::from_millis(600)).await;
            let m = eval(
                &d,
                "const e = document.documentElement; return [e.scrollWidth, e.clientWidth, document.body.innerText.length];",
            )
            .await;
            let (scroll, client, text) = (
                m[0].as_f64().unwrap(),
                m[1].as_f64().unwrap(),
                m[2].as_f64().unwrap(),
            );
            assert!(text > 0.0, "#{screen} rendered nothing");
            if scroll > client + 1.0 {
                overflowing.push(format!("#{screen}: {scroll} > {client}"));
            }
            d.screenshot(&format!("zoom200-{}", screen.replace('/', "-")))
                .await;
            if screen == "settings" {
                // The sandbox table (its layers and limits) at this width too.
                d.wait_for("[data-testid=sandbox-row]").await;
                eval(
                    &d,
                    "document.querySelector('[data-testid=sandbox-row]').scrollIntoView(); return true;",
                )
                .await;
                d.screenshot("zoom200-settings-sandbox").await;
            }
        }
        assert!(
            overflowing.is_empty(),
            "screens wider than the window at 200%: {overflowing:?}"
        );
        d.close().await;
    });
}

/// At the default window size the screens' links sit on one line inside the window, and a long
/// install path gives way (shortened, its whole text in the tooltip).
#[test]
fn the_navigation_fits_on_one_line_at_the_default_window_size() {
    let _serial = serial();
    block_on(async {
        let d = launch(|home| std::fs::write(home.join("config.toml"), CONFIG).unwrap()).await;
        d.wait_for("[data-alias=alice]").await;
        let m = eval(
            &d,
            "const links = [...document.querySelectorAll('header nav a')]; \
             const tops = links.map((a) => Math.round(a.getBoundingClientRect().top)); \
             const right = Math.max(...links.map((a) => a.getBoundingClientRect().right)); \
             const home = document.querySelector('[data-testid=install-root]'); \
             return [links.length, new Set(tops).size, right, window.innerWidth, \
                     home.getBoundingClientRect().right, home.title, \
                     document.documentElement.scrollWidth];",
        )
        .await;
        assert_eq!(m[0].as_u64(), Some(9), "{m}");
        assert_eq!(m[1].as_u64(), Some(1), "the links wrap: {m}");
        let width = m[3].as_f64().unwrap();
        assert!(m[2].as_f64().unwrap() <= width, "{m}");
        assert!(m[4].as_f64().unwrap() <= width + 1.0, "{m}");
        assert!(
            m[5].as_str()
                .unwrap()
                .ends_with(&d.home.display().to_string()),
            "{m}"
        );
        assert!(m[6].as_f64().unwrap() <= width, "{m}");
        d.screenshot("navigation-default-size").await;
        d.close().await;
    });
}

#[test]
fn colours_follow_the_system_light_or_dark_preference() {
    let _serial = serial();
    block_on(async {
        let script = "return [matchMedia('(prefers-color-scheme: dark)').matches, getComputedStyle(document.documentElement).backgroundColor];";
        let light = launch(|home| std::fs::write(home.join("config.toml"), CONFIG).unwrap()).await;
        light.wait_for("[data-alias=alice]").await;
        let l = eval(&light, script).await;
        light.close().await;
        assert_eq!(l[0], false, "{l}");
        assert_eq!(l[1], "rgb(247, 247, 245)", "{l}");

        let dark = launch_with_env(Bus::None, &[("GTK_THEME", "Adwaita:dark")], |home| {
            std::fs::write(home.join("config.toml"), CONFIG).unwrap()
        })
        .await;
        dark.wait_for("[data-alias=alice]").await;
        let k = eval(&dark, script).await;
        dark.screenshot("agents-dark").await;
        dark.close().await;
        assert_eq!(k[0], true, "{k}");
        assert_eq!(k[1], "rgb(27, 28, 26)", "{k}");
    });
}
