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

const SCREENS: [&str; 9] = [
    "agents",
    "live/alice",
    "profiles",
    "approvals",
    "memory/alice",
    "usage",
    "logs",
    "network",
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
        assert_eq!(m[0].as_u64(), Some(10), "{m}");
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
            std::fs::write(home.join("config.toml"), CONFIG).unwrap();
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

/// Agents with the longest aliases the config allows (63 characters), long profile and provider
/// names: every screen stays inside the window at its default size (long names wrap or give way
/// inside their cell), and the aliases read as written.
#[test]
fn long_names_stay_inside_the_window() {
    let _serial = serial();
    let long_a = format!("research{}_abcdef", "_abcdefg".repeat(6));
    let long_b = format!("reviewer{}_uvwxyz", "_uvwxyzq".repeat(6));
    assert_eq!(long_a.len(), 63);
    let config = format!(
        r#"[risk_profiles.supervised-with-a-rather-long-descriptive-profile-name]
level = "supervised"

[providers.models.openai.an-openai-compatible-route-with-a-very-long-name]
model = "a-model-name-that-goes-on-and-on-2026-12-01-preview-experimental"
uri = "http://127.0.0.1:9"

[agents.{long_a}]
risk_profile = "supervised-with-a-rather-long-descriptive-profile-name"
model_provider = "openai.an-openai-compatible-route-with-a-very-long-name"
[agents.{long_a}.workspace.access]
{long_b} = "read"

[agents.{long_b}]
risk_profile = "supervised-with-a-rather-long-descriptive-profile-name"
"#
    );
    block_on(async {
        let d = launch(|home| std::fs::write(home.join("config.toml"), &config).unwrap()).await;
        d.wait_for(&format!("[data-alias={long_a}]")).await;
        let mut overflowing = Vec::new();
        let screens = [
            "agents".to_string(),
            format!("live/{long_a}"),
            "profiles".to_string(),
            "permissions".to_string(),
            "approvals".to_string(),
            format!("memory/{long_a}"),
            "usage".to_string(),
            "logs".to_string(),
            "network".to_string(),
            "settings".to_string(),
        ];
        for screen in &screens {
            eval(&d, &format!("location.hash = '#{screen}'; return true;")).await;
            tokio::time::sleep(Duration::from_millis(600)).await;
            let m = eval(
                &d,
                "const e = document.documentElement; return [e.scrollWidth, e.clientWidth, document.body.innerText];",
            )
            .await;
            let (scroll, client) = (m[0].as_f64().unwrap(), m[1].as_f64().unwrap());
            let text = m[2].as_str().unwrap_or_default();
            if scroll > client + 1.0 {
                overflowing.push(format!("#{screen}: {scroll} > {client}"));
            }
            let name = screen.split('/').next().unwrap_or_default();
            d.screenshot(&format!("long-names-{name}")).await;
            if name == "memory" {
                // The long-named agent has stored nothing: the screen says so, no empty table.
                assert!(
                    text.contains(&format!("No rows yet: what {long_a} stores shows here.")),
                    "#{screen}: {text}"
                );
            }
            if ["agents", "permissions"].contains(&name) {
                assert!(
                    text.contains(&long_a) && text.contains(&long_b),
                    "#{screen} does not show both aliases as written"
                );
            }
        }
        assert!(
            overflowing.is_empty(),
            "screens wider than the window with long names: {overflowing:?}"
        );
        d.close().await;
    });
}
