//! The Settings screen: a provider key typed in the window goes to the desktop keyring when one
//! answers (else to the encrypted file), is never shown back and never reaches config.toml;
//! start on login writes and removes the XDG autostart entry; start hidden is persisted and a
//! start with it leaves the window unmapped until the app is asked to show it.

use crate::harness::{launch_with, Bus, Desktop};
use crate::{block_on, serial};
use fantoccini::Locator;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use warren_api::{HostEnv, Warren};
use warren_config::InstallLayout;
use warren_types::SecretBackendKind;

const CONFIG: &str = r#"# Settings test install.
schema_version = 1

[agents.alice]
risk_profile = "sup"
model_provider = "openai.main"

[risk_profiles.sup]
level = "supervised"

[agents.zed]
risk_profile = "fallback"
model_provider = "openai.main"

[risk_profiles.fallback]
sandbox = "landlock"

[providers.models.openai.main]
model = "gpt-test"
uri = "http://127.0.0.1:9/v1"

[providers.models.ollama.local]
model = "llama-test"
uri = "http://127.0.0.1:9"
"#;

const KEY: &str = "sk-settings-test-0123456789abcdef";

fn write_config(home: &Path) {
    std::fs::write(home.join("config.toml"), CONFIG).unwrap();
}

/// The api as a process on the app's session bus sees the install.
fn api(d: &Desktop) -> Warren {
    let mut vars = BTreeMap::new();
    vars.insert(
        "DBUS_SESSION_BUS_ADDRESS".to_string(),
        d.bus_address.clone(),
    );
    // The same PATH as the app, so both find the same `bwrap`.
    vars.insert(
        "PATH".to_string(),
        std::env::var("PATH").unwrap_or_default(),
    );
    Warren::open_with_env(
        InstallLayout::new(d.home.clone()),
        HostEnv { home: None, vars },
    )
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &str) -> Vec<String> {
    let mut hits = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return hits;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            hits.extend(files_containing(&p, needle));
        } else if let Ok(bytes) = std::fs::read(&p) {
            if bytes.windows(needle.len()).any(|w| w == needle.as_bytes()) {
                hits.push(p.display().to_string());
            }
        }
    }
    hits
}

/// Types the key into the `openai.main` row, saves it, and checks that the window shows only
/// "set" and the store, never the value.
async fn set_key_in_window(d: &Desktop, store: &str) {
    // Ollama takes no key: its row asks for none.
    let ollama = "[data-testid=provider-row][data-reference='ollama.local']";
    let none = d
        .wait_text(&format!("{ollama} [data-testid=provider-key-none]"), |t| {
            !t.is_empty()
        })
        .await;
    assert!(none.contains("none needed"), "{none}");
    assert!(d
        .client
        .find(Locator::Css(&format!(
            "{ollama} [data-testid=provider-key-input]"
        )))
        .await
        .is_err());
    let row = "[data-testid=provider-row][data-reference='openai.main']";
    d.wait_text(&format!("{row} [data-testid=provider-key-state]"), |t| {
        t == "not set"
    })
    .await;
    d.wait_for(&format!("{row} [data-testid=provider-key-input]"))
        .await
        .send_keys(KEY)
        .await
        .unwrap();
    d.click(&format!("{row} [data-testid=provider-key-save]"))
        .await;
    d.wait_text(&format!("{row} [data-testid=provider-key-state]"), |t| {
        t == "set"
    })
    .await;
    let shown = d
        .wait_for(&format!("{row} [data-testid=provider-key-store]"))
        .await
        .attr("data-store")
        .await
        .unwrap();
    assert_eq!(shown.as_deref(), Some(store));
    let input = d
        .wait_for(&format!("{row} [data-testid=provider-key-input]"))
        .await
        .prop("value")
        .await
        .unwrap();
    assert_eq!(input.as_deref(), Some(""), "the key field keeps the value");
    let source = d.client.source().await.unwrap();
    assert!(!source.contains(KEY), "the key is in the DOM");
    let config = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
    assert!(
        !config.contains(KEY),
        "the key reached config.toml:\n{config}"
    );
    assert!(
        config.contains("secret = \"OPENAI_MAIN_API_KEY\""),
        "the route does not name its secret:\n{config}"
    );
    assert!(
        config.contains("# Settings test install."),
        "config.toml lost its comment"
    );
}

fn wait_until(what: &str, ok: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_key_set_in_settings_goes_to_the_keyring_and_start_settings_persist() {
    let _serial = serial();
    block_on(async {
        let d = launch_with(Bus::Keyring, write_config).await;
        d.nav("settings").await;
        let backend = d
            .wait_for("[data-testid=secret-backend][data-backend=keyring]")
            .await;
        assert!(backend.text().await.unwrap().contains("desktop keyring"));

        set_key_in_window(&d, "keyring").await;
        let listed = api(&d).list_secrets().unwrap();
        let entry = listed
            .iter()
            .find(|e| e.reference == "OPENAI_MAIN_API_KEY")
            .unwrap_or_else(|| panic!("not listed: {listed:?}"));
        assert_eq!(entry.store, SecretBackendKind::Keyring);
        assert!(
            files_containing(&d.home, KEY).is_empty(),
            "the key is in plain text under the install"
        );

        // The sandbox each agent gets, from the doctor.
        let effective = d
            .wait_text(
                "[data-testid=sandbox-row][data-agent=alice] [data-testid=sandbox-effective]",
                |t| !t.is_empty(),
            )
            .await;
        let report = api(&d).doctor().unwrap();
        assert_eq!(
            Some(effective.as_str()),
            report.agents[0]
                .sandbox
                .effective
                .as_deref()
                .or(Some("unavailable"))
        );
        let backend = d
            .wait_text(
                "[data-testid=memory-backend-row][data-agent=alice] td:nth-child(2)",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(backend, "sqlite");
        d.screenshot("settings").await;
        // Each layer the doctor names is listed beside the agent, and so is what is not enforced.
        let layers = d
            .wait_text(
                "[data-testid=sandbox-row][data-agent=alice] [data-testid=sandbox-layers]",
                |t| t.contains("seccomp"),
            )
            .await;
        for l in &report.agents[0].sandbox.layers {
            let head = l.split(':').next().unwrap_or(l);
            assert!(layers.contains(head), "{head} missing from {layers:?}");
        }
        d.client
            .execute(
                "document.querySelector('[data-testid=sandbox-row]').scrollIntoView()",
                vec![],
            )
            .await
            .unwrap();
        d.screenshot("settings-sandbox").await;
        // An agent on the Landlock fallback lists what that backend does not enforce.
        let notes = d
            .wait_text(
                "[data-testid=sandbox-row][data-agent=zed] [data-testid=sandbox-not-enforced]",
                |t| t.contains("Limit:"),
            )
            .await;
        assert!(
            notes.contains("Unix socket") && notes.contains("chmod"),
            "{notes}"
        );

        // Start on login: the autostart entry appears with this binary, then disappears.
        let entry = d.xdg_config_home().join("autostart/warren.desktop");
        assert!(!entry.exists());
        d.click("[data-testid=start-on-login]").await;
        wait_until("the autostart entry exists", || entry.exists());
        let text = std::fs::read_to_string(&entry).unwrap();
        let exec = text
            .lines()
            .find_map(|l| l.strip_prefix("Exec="))
            .unwrap_or_else(|| panic!("no Exec line:\n{text}"));
        let bin = std::fs::canonicalize(env!("CARGO_BIN_EXE_warren-desktop")).unwrap();
        assert!(
            exec.ends_with(&bin.display().to_string()),
            "Exec={exec} does not start {}",
            bin.display()
        );
        assert!(
            exec.starts_with(&format!("env WARREN_HOME={} ", d.home.display())),
            "Exec={exec} does not open this install"
        );
        assert!(text.starts_with("[Desktop Entry]\n"), "{text}");
        d.click("[data-testid=start-on-login]").await;
        wait_until("the autostart entry is gone", || !entry.exists());

        // Start hidden is written to data/desktop.json.
        let settings = d.home.join("data/desktop.json");
        d.click("[data-testid=start-hidden]").await;
        wait_until("desktop.json says start_hidden", || {
            std::fs::read_to_string(&settings)
                .map(|t| t.contains("\"start_hidden\": true"))
                .unwrap_or(false)
        });
        d.close().await;
    });
}

#[test]
fn without_a_keyring_a_key_goes_to_the_encrypted_file() {
    let _serial = serial();
    block_on(async {
        let d = launch_with(Bus::None, write_config).await;
        d.nav("settings").await;
        let said = d
            .wait_text("[data-testid=secret-backend][data-backend=file]", |t| {
                t.contains("secrets.enc")
            })
            .await;
        // The store is named once, then where it is and why the keyring is not used.
        assert_eq!(said.matches("encrypted file").count(), 1, "{said}");
        set_key_in_window(&d, "file").await;
        let listed = api(&d).list_secrets().unwrap();
        let entry = listed
            .iter()
            .find(|e| e.reference == "OPENAI_MAIN_API_KEY")
            .unwrap_or_else(|| panic!("not listed: {listed:?}"));
        assert_eq!(entry.store, SecretBackendKind::File);
        assert!(
            files_containing(&d.home, KEY).is_empty(),
            "the key is in plain text under the install"
        );
        d.close().await;
    });
}

#[test]
fn start_hidden_leaves_the_window_unmapped_until_asked() {
    let _serial = serial();
    block_on(async {
        let d = launch_with(Bus::PrivateWithTrayHost, |home| {
            write_config(home);
            std::fs::create_dir_all(home.join("data")).unwrap();
            std::fs::write(
                home.join("data/desktop.json"),
                "{\n  \"start_hidden\": true\n}",
            )
            .unwrap();
        })
        .await;
        d.wait_for("[data-testid=nav-settings]").await;
        assert_eq!(d.window_map_state().as_deref(), Some("IsUnMapped"));
        // A second launch asks the first instance to show its window.
        let mut second = d.second_instance();
        let _ = second.wait();
        wait_until("the window is shown", || {
            d.window_map_state().as_deref() == Some("IsViewable")
        });
        d.close().await;
    });
}
