//! The first-run flow in the real window: on a first start it covers the window; an
//! OpenAI-compatible server (the fake vendor) is connected with its key, tested, a model is
//! chosen from the server's own list and the default agent pointed at it; config.toml then has
//! the route with that model and `assistant` using it, never the key; a restart does not show
//! the flow again and Settings → "Run setup again" does. Skip ends it for good, and an Ollama
//! that does not answer is said in words. A ZeroClaw install found on the machine is offered
//! as the flow's last step and imported from there.

use crate::harness::{launch_first_run, launch_first_run_with_env, Desktop};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use warren_testkit::fake_llm::{closed_port_uri, FakeLlm, Reply};
use warren_types::ProviderFamily;

const KEY: &str = "sk-first-run-5b7e0c1d9a2f4e68";

async fn fill(d: &Desktop, css: &str, text: &str) {
    let e = d.wait_for(css).await;
    e.clear().await.unwrap();
    e.send_keys(text).await.unwrap();
}

/// Waits until nothing matches `css` (the flow closed).
async fn wait_gone(d: &Desktop, css: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while d.client.find(Locator::Css(css)).await.is_ok() {
        if Instant::now() > deadline {
            d.screenshot("first-run-stayed").await;
            panic!("`{css}` stayed on screen");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The Agents screen is loaded and, a moment later, the flow is still not there.
async fn flow_stays_closed(d: &Desktop) {
    d.wait_for("[data-testid=agents-screen][data-state=ready]")
        .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        d.client
            .find(Locator::Css("[data-testid=first-run]"))
            .await
            .is_err(),
        "the first-run flow showed again"
    );
}

/// Copies the install's config and data into a scratch dir, for a second start of the app.
fn keep_install(home: &Path) -> (tempfile::TempDir, PathBuf) {
    let kept = tempfile::tempdir().unwrap();
    let to = kept.path().join("home");
    std::fs::create_dir_all(&to).unwrap();
    std::fs::copy(home.join("config.toml"), to.join("config.toml")).unwrap();
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(home.join("data"))
        .arg(&to)
        .status()
        .unwrap()
        .success();
    assert!(ok, "copying the install's data failed");
    (kept, to)
}

fn restore_install(kept: &Path, home: &Path) {
    std::fs::copy(kept.join("config.toml"), home.join("config.toml")).unwrap();
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(kept.join("data"))
        .arg(home)
        .status()
        .unwrap()
        .success();
    assert!(ok, "restoring the install's data failed");
}

fn record(home: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(home.join("data").join("first_run.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_first_start_connects_a_model_in_one_flow_and_it_stays_done() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.set_models(["fake-model", "fake-model-large", "fake-model-mini"]);
        fake.push(Reply::text("ok"));
        // A first start: no config, the app writes the default install.
        let d = launch_first_run(|_| {}).await;
        d.wait_for("[data-testid=first-run][data-step=provider][data-probing=false]")
            .await;
        d.docs_screenshot("first-run-provider").await;

        // Step 1: an OpenAI-compatible server with its address and key.
        d.click("[data-testid=first-run-choice][data-choice=compatible]")
            .await;
        d.wait_text("[data-testid=first-run-route]", |t| {
            t == "openai.compatible"
        })
        .await;
        fill(&d, "[data-testid=first-run-uri]", &fake.uri()).await;
        fill(&d, "[data-testid=first-run-key]", KEY).await;
        d.click("[data-testid=first-run-connect]").await;

        // Step 2: Test makes one real call with the stored key.
        d.wait_for("[data-testid=first-run][data-step=test]").await;
        d.click("[data-testid=first-run-test-run]").await;
        let result = d
            .wait_text("[data-testid=first-run-test-result]", |t| !t.is_empty())
            .await;
        assert!(result.contains("It works"), "{result}");
        d.docs_screenshot("first-run-test").await;

        // Step 3: the server's own model list; one is chosen.
        d.click("[data-testid=first-run-next]").await;
        d.wait_for("[data-testid=first-run][data-step=model]").await;
        let listed = d
            .wait_text("[data-testid=first-run-models]", |t| {
                t.contains("fake-model-mini")
            })
            .await;
        assert!(listed.contains("fake-model-large"), "{listed}");
        d.click("[data-testid=first-run-model-option][data-model=fake-model-large]")
            .await;
        d.docs_screenshot("first-run").await;
        d.click("[data-testid=first-run-use-model]").await;

        // Step 4: the default agent is chosen; pointing it goes through the agent edit.
        d.wait_for("[data-testid=first-run][data-step=agents]")
            .await;
        let assistant = d
            .wait_for("[data-testid=point-agent][data-alias=assistant]")
            .await;
        assert_eq!(
            assistant.prop("checked").await.unwrap().as_deref(),
            Some("true"),
            "the default agent is chosen"
        );
        d.click("[data-testid=point-agents-apply]").await;
        d.wait_text("[data-testid=point-agents-done]", |t| {
            t.contains("assistant")
        })
        .await;
        d.docs_screenshot("first-run-agents").await;
        d.click("[data-testid=first-run-finish]").await;
        wait_gone(&d, "[data-testid=first-run]").await;

        // On disk: the route with the chosen model, the agent using it, never the key.
        let config = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(
            config.contains("[providers.models.openai.compatible]"),
            "{config}"
        );
        assert!(
            !config.contains(KEY),
            "the key reached config.toml:\n{config}"
        );
        let loaded = warren_api::Warren::open(warren_config::InstallLayout::new(d.home.clone()))
            .load()
            .unwrap()
            .config;
        let (_, route) = loaded.provider("openai.compatible").unwrap();
        assert_eq!(route.model, "fake-model-large");
        assert_eq!(route.uri.as_deref(), Some(fake.uri().as_str()));
        assert_eq!(
            loaded.agents["assistant"].model_provider.as_deref(),
            Some("openai.compatible")
        );
        assert_eq!(record(&d.home)["outcome"], "completed");
        assert_eq!(
            record(&d.home)["answered"],
            serde_json::json!(["openai.compatible"])
        );
        // The vendor saw the key on both requests: the test call and the model list.
        let reqs = fake.requests();
        let list = reqs
            .iter()
            .find(|r| r.method == "GET" && r.path == "/v1/models")
            .expect("the model list was asked for");
        assert_eq!(
            list.header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );
        assert!(reqs
            .iter()
            .any(|r| r.method == "POST" && r.path == "/v1/chat/completions"));
        assert!(!d.client.source().await.unwrap().contains(KEY));

        // A second start of the same install: the flow does not come back…
        let (_kept, kept_home) = keep_install(&d.home);
        d.close().await;
        let d = launch_first_run(|home| restore_install(&kept_home, home)).await;
        flow_stays_closed(&d).await;
        // …until Settings runs it again.
        d.nav("settings").await;
        d.wait_for("[data-testid=settings-run-setup]").await;
        tokio::time::sleep(Duration::from_millis(800)).await;
        d.screenshot("settings-run-setup").await;
        d.click("[data-testid=settings-run-setup]").await;
        d.wait_for("[data-testid=first-run][data-step=provider]")
            .await;
        d.click("[data-testid=first-run-skip]").await;
        wait_gone(&d, "[data-testid=first-run]").await;
        d.close().await;
    });
}

#[test]
fn skip_ends_the_flow_for_good_and_a_silent_ollama_is_named() {
    let _serial = serial();
    block_on_mt(async {
        let nowhere = closed_port_uri().unwrap();
        let config = format!(
            "schema_version = 1\n\n[agents.assistant]\nrisk_profile = \"sup\"\n\
             model_provider = \"ollama.local\"\n\n[risk_profiles.sup]\nlevel = \"supervised\"\n\n\
             [providers.models.ollama.local]\nmodel = \"llama3.2\"\nuri = \"{nowhere}\"\n"
        );
        // An install made by hand whose agent's route never answered: the flow shows.
        let d = launch_first_run(|home| std::fs::write(home.join("config.toml"), &config).unwrap())
            .await;
        d.wait_for("[data-testid=first-run][data-step=provider][data-probing=false]")
            .await;
        // Ollama does not answer: a hosted provider is offered first; the Ollama card says why.
        let picked = d
            .wait_for("[data-testid=first-run-choice][data-choice=openai]")
            .await;
        assert_eq!(
            picked.prop("checked").await.unwrap().as_deref(),
            Some("true")
        );
        d.click("[data-testid=first-run-choice][data-choice=ollama]")
            .await;
        let hint = d
            .wait_text("[data-testid=first-run-ollama][data-running=false]", |t| {
                !t.is_empty()
            })
            .await;
        assert!(hint.contains(&format!("not found at {nowhere}")), "{hint}");
        assert!(hint.contains("is `ollama serve` running?"), "{hint}");
        d.screenshot("first-run-ollama-missing").await;

        d.click("[data-testid=first-run-skip]").await;
        wait_gone(&d, "[data-testid=first-run]").await;
        assert_eq!(record(&d.home)["outcome"], "skipped");
        assert_eq!(
            std::fs::read_to_string(d.home.join("config.toml")).unwrap(),
            config,
            "skipping changes nothing in the config"
        );
        let (_kept, kept_home) = keep_install(&d.home);
        d.close().await;
        let d = launch_first_run(|home| restore_install(&kept_home, home)).await;
        flow_stays_closed(&d).await;
        d.close().await;
    });
}

#[test]
fn a_zeroclaw_install_found_is_imported_as_the_flows_last_step() {
    let _serial = serial();
    block_on_mt(async {
        let scratch = tempfile::tempdir().unwrap();
        let src =
            warren_testkit::zeroclaw::copy_zeroclaw_fixture(&scratch.path().join("zc")).unwrap();
        let src_text = src.display().to_string();
        let d = launch_first_run_with_env(&[("ZEROCLAW_CONFIG_DIR", &src_text)], |_| {}).await;
        d.wait_for("[data-testid=first-run][data-step=provider][data-probing=false]")
            .await;
        // Skipping the provider skips testing and choosing a model (no route to test); the
        // import comes after the agents.
        for next in ["agents", "import"] {
            d.click("[data-testid=first-run-next]").await;
            d.wait_for(&format!("[data-testid=first-run][data-step={next}]"))
                .await;
        }
        let shown = d
            .wait_text(
                "[data-testid=first-run-import] [data-testid=import-source]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(shown, src_text);
        d.click("[data-testid=first-run-import] [data-testid=import-review]")
            .await;
        // The first start wrote Warren's own `ollama.local`; ZeroClaw's differs: a choice.
        let problems = d
            .wait_text(
                "[data-testid=first-run-import] [data-testid=import-problems]",
                |t| t.contains("ollama.local"),
            )
            .await;
        assert!(problems.contains("choose to rename it"), "{problems}");
        d.click(
            "[data-testid=first-run-import] [data-testid=import-collisions] option[value=rename]",
        )
        .await;
        let deadline = Instant::now() + Duration::from_secs(20);
        while d
            .client
            .find(Locator::Css(
                "[data-testid=first-run-import] [data-testid=import-problems]",
            ))
            .await
            .is_ok()
        {
            assert!(
                Instant::now() < deadline,
                "the choice never cleared the plan"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        d.click("[data-testid=first-run-import] [data-testid=import-run]")
            .await;
        let done = d
            .wait_text(
                "[data-testid=first-run-import] [data-testid=import-done]",
                |t| !t.is_empty(),
            )
            .await;
        assert!(done.contains("Imported 4 agents"), "{done}");
        d.screenshot("first-run-import").await;
        d.click("[data-testid=first-run-finish]").await;
        wait_gone(&d, "[data-testid=first-run]").await;
        assert_eq!(record(&d.home)["outcome"], "completed");
        let config = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(config.contains("[agents.assistant]"), "{config}");
        assert!(config.contains("ollama.local_zeroclaw"), "{config}");
        // The imported agents are on the Agents screen behind the closed flow.
        d.wait_for("[data-testid=agent-row][data-alias=writer]")
            .await;
        d.close().await;
    });
}
