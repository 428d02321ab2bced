//! The Agents screen: a hand-written three-agent install, the first start with no config, and
//! creating an agent from the form (inline validation, then the file on disk).

use crate::harness::{comm, launch, rss_anon_kib, rss_kib};
use crate::{block_on, serial};
use fantoccini::Locator;
use std::path::Path;
use std::time::{Duration, Instant};

const THREE_AGENTS: &str = r#"# Hand-written test install: three agents.
schema_version = 1

# The writer drafts text.
[agents.alice]
risk_profile = "balanced"
runtime_profile = "standard"
model_provider = "openai.main"

[agents.bob]
risk_profile = "locked_down"
model_provider = "ollama.local"
delegates = ["alice"]

[agents.bob.memory]
backend = "markdown"

[agents.carol]
enabled = false
risk_profile = "balanced"

[agents.carol.workspace.access]
alice = "read_write"

[risk_profiles.balanced]
level = "supervised"

[risk_profiles.locked_down]
level = "readonly"

[runtime_profiles.standard]
max_tool_iterations = 10

[providers.models.openai.main]
model = "gpt-4o-mini"
api_key_env = "OPENAI_API_KEY"

[providers.models.ollama.local]
model = "llama3.2"

[memory]
backend = "sqlite"
"#;

/// The aliases listed in the Agents table, in screen order.
async fn listed_aliases(d: &crate::harness::Desktop) -> Vec<String> {
    d.wait_for("[data-testid=agents-table]").await;
    let mut out = Vec::new();
    for row in d
        .client
        .find_all(Locator::Css("[data-testid=agent-row]"))
        .await
        .unwrap()
    {
        out.push(row.attr("data-alias").await.unwrap().unwrap_or_default());
    }
    out
}

/// Waits until `css`'s text satisfies `ok`, returning the last text seen.
async fn wait_text(d: &crate::harness::Desktop, css: &str, ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + crate::harness::UI_TIMEOUT;
    loop {
        let text = d.wait_for(css).await.text().await.unwrap_or_default();
        if ok(&text) || Instant::now() > deadline {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[test]
fn agents_screen_lists_a_three_agent_install_and_creates_an_agent() {
    let _serial = serial();
    block_on(async {
        let started = Instant::now();
        let d =
            launch(|home| std::fs::write(home.join("config.toml"), THREE_AGENTS).unwrap()).await;
        assert_eq!(listed_aliases(&d).await, ["alice", "bob", "carol"]);
        let cold = started.elapsed();
        eprintln!(
            "figure: cold start to Agents screen (WebDriver session + app + first render): {} ms \
             (session ready after {} ms)",
            cold.as_millis(),
            d.session_started.as_millis()
        );
        if let Some(pid) = d.backend_pid() {
            eprintln!(
                "figure: backend RSS, 3 agents, window open: {} KiB",
                rss_kib(pid).unwrap_or(0)
            );
        }
        for pid in d.other_pids() {
            eprintln!(
                "figure: {} RSS: {} KiB",
                comm(pid),
                rss_kib(pid).unwrap_or(0)
            );
        }

        // Columns come from the config: profile, provider, memory backend, enabled state.
        let bob = d.wait_for("[data-alias=bob]").await.text().await.unwrap();
        assert!(bob.contains("locked_down"), "bob row: {bob}");
        assert!(bob.contains("ollama.local"), "bob row: {bob}");
        assert!(bob.contains("markdown"), "bob row: {bob}");
        let carol = d.wait_for("[data-alias=carol]").await.text().await.unwrap();
        assert!(carol.contains("disabled"), "carol row: {carol}");
        // A hosted provider exists, so no "connect a provider" hint.
        assert!(d
            .client
            .find(Locator::Css("[data-testid=provider-hint]"))
            .await
            .is_err());
        d.screenshot("agents-three").await;

        // A row opens the agent's details, read through show_agent.
        d.wait_for("[data-alias=alice] [data-testid=agent-open]")
            .await
            .click()
            .await
            .unwrap();
        let want = d.home.join("agents/alice/workspace").display().to_string();
        let ws = wait_text(&d, "[data-testid=detail-workspace]", |t| t == want).await;
        assert_eq!(ws, want);
        // Who refers to alice, in words; the config path is only the tooltip.
        let refs = wait_text(&d, "[data-testid=detail-referenced-by]", |t| {
            t.contains("carol")
        })
        .await;
        assert!(refs.contains("bob may delegate to it"), "{refs}");
        assert!(
            refs.contains("carol has read-write access to its workspace"),
            "{refs}"
        );
        assert!(!refs.contains("agents."), "{refs}");
        d.screenshot("agents-detail").await;
        d.narrow_screenshot("agents-detail-narrow").await;

        // Inline alias validation comes from the backend's alias rules.
        let alias = d.wait_for("[data-testid=create-alias]").await;
        alias.send_keys("bad__alias").await.unwrap();
        let msg = wait_text(&d, "[data-testid=alias-error]", |t| t.contains("__")).await;
        assert!(msg.contains("`__`"), "inline alias error: {msg:?}");
        let submit = d.wait_for("[data-testid=create-submit]").await;
        assert!(
            !submit.is_enabled().await.unwrap(),
            "submit enabled for a bad alias"
        );
        d.screenshot("agents-create-invalid").await;

        alias.clear().await.unwrap();
        alias.send_keys("writer").await.unwrap();
        wait_text(&d, "[data-testid=alias-error]", str::is_empty).await;
        submit.click().await.unwrap();
        let ok = wait_text(&d, "[data-testid=create-ok]", |t| t.contains("writer")).await;
        assert!(ok.contains("writer"), "create confirmation: {ok:?}");
        assert_eq!(
            listed_aliases(&d).await,
            ["alice", "bob", "carol", "writer"]
        );
        d.screenshot("agents-created").await;

        let on_disk = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(
            on_disk.contains("[agents.writer]"),
            "config after create:\n{on_disk}"
        );
        assert!(
            on_disk.contains("# The writer drafts text."),
            "comment lost:\n{on_disk}"
        );
        assert!(d.home.join("agents/writer/workspace").is_dir());
        d.close().await;
    });
}

#[test]
fn first_start_creates_the_default_install_and_says_how_to_connect_a_provider() {
    let _serial = serial();
    block_on(async {
        let d = launch(|_| {}).await;
        assert_eq!(listed_aliases(&d).await, ["assistant"]);
        let config = d.home.join("config.toml");
        let text = std::fs::read_to_string(&config)
            .unwrap_or_else(|e| panic!("{} not created: {e}", config.display()));
        assert!(
            text.contains("[agents.assistant]"),
            "default config:\n{text}"
        );
        assert!(
            text.contains("risk_profile = \"balanced\""),
            "default config:\n{text}"
        );

        let row = d
            .wait_for("[data-alias=assistant]")
            .await
            .text()
            .await
            .unwrap();
        assert!(row.contains("balanced") && row.contains("ollama.local") && row.contains("sqlite"));
        let hint = d
            .wait_for("[data-testid=provider-hint]")
            .await
            .text()
            .await
            .unwrap();
        assert!(
            hint.contains("No hosted model provider is connected yet"),
            "hint: {hint}"
        );
        assert!(
            hint.contains("Connect a model provider"),
            "the hint offers the provider form: {hint}"
        );
        assert!(
            hint.contains(&config.display().to_string()),
            "hint names the file: {hint}"
        );
        let created = d
            .wait_for("[data-testid=created-default]")
            .await
            .text()
            .await
            .unwrap();
        assert!(created.contains("created a default install"), "{created}");
        d.screenshot("agents-first-start").await;
        d.click("[data-testid=created-dismiss]").await;
        let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
        while d
            .client
            .find(fantoccini::Locator::Css("[data-testid=created-default]"))
            .await
            .is_ok()
        {
            assert!(
                std::time::Instant::now() < deadline,
                "the notice stayed after Dismiss"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        d.close().await;
    });
}

#[test]
fn an_invalid_config_is_shown_with_every_error() {
    let _serial = serial();
    block_on(async {
        let d = launch(|home| {
            let bad =
                THREE_AGENTS.replace("risk_profile = \"locked_down\"", "risk_profile = \"nope\"");
            std::fs::write(home.join("config.toml"), bad).unwrap();
        })
        .await;
        let err = wait_text(&d, "[data-testid=load-error]", |t| t.contains("nope")).await;
        assert!(
            err.contains("agents.bob.risk_profile"),
            "error panel: {err}"
        );
        d.screenshot("agents-invalid-config").await;
        let untouched = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(
            untouched.contains("\"nope\""),
            "the app must not rewrite an invalid config"
        );
        assert!(!Path::new(&d.home.join("config.toml.tmp")).exists());
        d.close().await;
    });
}

#[test]
fn a_broken_config_stops_the_runtime_offers_the_file_and_checks_again() {
    let _serial = serial();
    block_on(async {
        let d = launch(|home| {
            let bad = THREE_AGENTS.replace(
                "risk_profile = \"locked_down\"",
                "risk_profile = \"locked_dwn\"",
            );
            std::fs::write(home.join("config.toml"), bad).unwrap();
        })
        .await;
        let lock = d.home.join("data/runtime.lock");
        let err = wait_text(&d, "[data-testid=load-error]", |t| t.contains("locked_dwn")).await;
        assert!(err.contains("agents.bob.risk_profile (line"), "{err}");
        assert!(err.contains("did you mean `locked_down`?"), "{err}");
        let stopped = wait_text(&d, "[data-testid=runtime-stopped]", |t| !t.is_empty()).await;
        assert!(stopped.contains("The runtime is stopped"), "{stopped}");
        let strip = wait_text(&d, "[data-testid=strip-state]", |t| t.contains("stopped")).await;
        assert_eq!(strip, "runtime stopped");
        wait_text(&d, "[data-testid=strip-stopped]", |t| {
            t.contains("config.toml has errors")
        })
        .await;
        // The runtime really is stopped: its lock is free.
        drop(
            warren_api::runtime_owner::acquire(&lock, "test")
                .expect("the stopped runtime still holds its lock"),
        );
        let path = d
            .wait_for("[data-testid=config-path]")
            .await
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default();
        assert!(path.ends_with("config.toml"), "{path}");
        // No opener on this machine: the window says so (the path is there to copy).
        let has_opener = std::process::Command::new("sh")
            .args(["-c", "command -v xdg-open"])
            .status()
            .is_ok_and(|s| s.success());
        d.click("[data-testid=config-open]").await;
        if !has_opener {
            let why = wait_text(&d, "[data-testid=config-open-problem]", |t| !t.is_empty()).await;
            assert!(why.contains("open it yourself"), "{why}");
        }
        d.screenshot("broken-config").await;

        // Checked again while still broken: the panel stays.
        d.click("[data-testid=config-check]").await;
        wait_text(&d, "[data-testid=config-still-broken]", |t| !t.is_empty()).await;
        // Fixed on disk: the window notices the file by itself, the agents show and the runtime
        // runs again (lock held) without a click (Check again restarts it the same way).
        // The lock is watched through its holder record, never by taking it: a probe that held
        // the lock for an instant could meet the window's own restart and make it fail.
        let before = warren_api::runtime_owner::read_holder(&lock).map(|h| (h.pid, h.started_at));
        std::fs::write(d.home.join("config.toml"), THREE_AGENTS).unwrap();
        assert_eq!(listed_aliases(&d).await, ["alice", "bob", "carol"]);
        wait_text(&d, "[data-testid=strip-state]", |t| t.contains("running")).await;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let now = warren_api::runtime_owner::read_holder(&lock);
            if let Some(h) = &now {
                if h.program == "warren-desktop" && Some((h.pid, h.started_at.clone())) != before {
                    break;
                }
            }
            assert!(
                Instant::now() < deadline,
                "the runtime never started again: {now:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Now held by the window: a second taker is told who runs it.
        let e = warren_api::runtime_owner::acquire(&lock, "test").unwrap_err();
        assert_eq!(e.code, warren_api::ErrorCode::RuntimeOwned, "{e:?}");
        d.close().await;
    });
}

#[test]
fn figures_twenty_agents_cold_start_and_backend_rss() {
    let _serial = serial();
    block_on(async {
        let mut config = String::from(
            "schema_version = 1\n[risk_profiles.balanced]\nlevel = \"supervised\"\n\
             [providers.models.ollama.local]\nmodel = \"llama3.2\"\n",
        );
        let aliases: Vec<String> = (1..=20).map(|i| format!("agent_{i:02}")).collect();
        for a in &aliases {
            config.push_str(&format!(
                "[agents.{a}]\nrisk_profile = \"balanced\"\nmodel_provider = \"ollama.local\"\n"
            ));
        }
        let started = Instant::now();
        let d = launch(|home| std::fs::write(home.join("config.toml"), &config).unwrap()).await;
        assert_eq!(listed_aliases(&d).await, aliases);
        let cold = started.elapsed();
        // Let the window settle before reading memory.
        tokio::time::sleep(Duration::from_secs(2)).await;
        let pid = d.backend_pid().expect("backend process not found");
        eprintln!(
            "figure: 20 agents: cold start to Agents screen {} ms; backend RSS idle {} KiB \
             ({} KiB anonymous)",
            cold.as_millis(),
            rss_kib(pid).unwrap_or(0),
            rss_anon_kib(pid).unwrap_or(0)
        );
        for p in d.other_pids() {
            eprintln!(
                "figure: 20 agents: {} RSS {} KiB",
                comm(p),
                rss_kib(p).unwrap_or(0)
            );
        }
        d.screenshot("agents-twenty").await;
        d.close().await;
    });
}

#[test]
fn a_second_launch_hands_over_to_the_running_window_and_exits() {
    let _serial = serial();
    block_on(async {
        let d = crate::harness::launch_with(crate::harness::Bus::Private, |home| {
            std::fs::write(home.join("config.toml"), THREE_AGENTS).unwrap();
        })
        .await;
        assert_eq!(listed_aliases(&d).await, ["alice", "bob", "carol"]);

        let mut second = d.second_instance();
        let deadline = Instant::now() + Duration::from_secs(20);
        let status = loop {
            if let Some(status) = second.try_wait().unwrap() {
                break Some(status);
            }
            if Instant::now() > deadline {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        if status.is_none() {
            let _ = second.kill();
            let _ = second.wait();
        }
        let status = status.expect("the second instance kept running instead of handing over");
        assert!(status.success(), "second instance exited with {status}");

        // The first window is still there and still answers.
        assert_eq!(listed_aliases(&d).await, ["alice", "bob", "carol"]);
        d.close().await;
    });
}

/// Asks the window to close the way a window manager's close button does: through Tauri's
/// close request, which the app may intercept. (WebDriver's own "close window" tears the
/// webview down directly and never asks the app.)
async fn request_close(d: &crate::harness::Desktop) {
    let _ = d
        .client
        .execute(
            "window.__TAURI_INTERNALS__.invoke('plugin:window|close', { label: 'main' }); return true;",
            vec![],
        )
        .await;
}

#[test]
fn closing_the_window_without_a_tray_host_quits_the_app() {
    let _serial = serial();
    block_on(async {
        // A session bus, but no StatusNotifier host on it: nothing could show the tray icon.
        let d = crate::harness::launch_with(crate::harness::Bus::Private, |home| {
            std::fs::write(home.join("config.toml"), THREE_AGENTS).unwrap();
        })
        .await;
        assert_eq!(listed_aliases(&d).await, ["alice", "bob", "carol"]);
        let pid = d.backend_pid().expect("backend process not found");
        request_close(&d).await;
        let deadline = Instant::now() + Duration::from_secs(20);
        while crate::harness::rss_kib(pid).is_some() && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            crate::harness::rss_kib(pid).is_none(),
            "the app kept running after its window was closed with no tray to return to"
        );
        d.close().await;
    });
}

#[test]
fn closing_the_window_with_a_tray_host_keeps_the_app_running() {
    let _serial = serial();
    block_on(async {
        let d = crate::harness::launch_with(crate::harness::Bus::PrivateWithTrayHost, |home| {
            std::fs::write(home.join("config.toml"), THREE_AGENTS).unwrap();
        })
        .await;
        assert_eq!(listed_aliases(&d).await, ["alice", "bob", "carol"]);
        let pid = d.backend_pid().expect("backend process not found");
        request_close(&d).await;
        tokio::time::sleep(Duration::from_secs(3)).await;
        let logs: String = std::fs::read_dir(d.home.join("logs"))
            .unwrap()
            .flatten()
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect();
        assert!(
            crate::harness::rss_kib(pid).is_some(),
            "closing the window quit the app although the tray can bring it back; logs:\n{logs}"
        );
        d.close().await;
    });
}
