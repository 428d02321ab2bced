//! Connecting a model from the window: the first-start hint opens the provider form; a finding
//! of the real validator shows at its field and Save stays off; a saved route's key goes to the
//! secret store (never into config.toml, comments kept) and the hint goes away; Test on the
//! Settings screen makes one real call (the fake vendor sees the stored key) and shows the
//! model's answer; removing a route an agent uses is refused and changes nothing.

use crate::harness::{launch, Desktop};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use std::time::{Duration, Instant};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_types::ProviderFamily;

const CONFIG: &str = r#"# Providers test install.
schema_version = 1

[agents.alice]
risk_profile = "sup"
model_provider = "ollama.local"

[risk_profiles.sup]
level = "supervised"

[providers.models.ollama.local]
model = "llama3.2"
uri = "http://127.0.0.1:9"
"#;

const KEY: &str = "sk-provider-form-0123456789abcdef";

async fn fill(d: &Desktop, testid: &str, text: &str) {
    let e = d.wait_for(&format!("[data-testid={testid}]")).await;
    e.clear().await.unwrap();
    e.send_keys(text).await.unwrap();
}

async fn save_enabled(d: &Desktop) -> bool {
    d.wait_for("[data-testid=provider-save]")
        .await
        .is_enabled()
        .await
        .unwrap()
}

async fn wait_save(d: &Desktop, enabled: bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while save_enabled(d).await != enabled {
        if Instant::now() > deadline {
            d.screenshot("provider-save").await;
            panic!("Save never became enabled = {enabled}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn a_provider_connected_from_the_hint_is_saved_tested_and_guarded() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([Reply::text("pong from the fake vendor")]);
        let d = launch(|home| std::fs::write(home.join("config.toml"), CONFIG).unwrap()).await;

        d.wait_for("[data-testid=provider-hint]").await;
        d.click("[data-testid=hint-connect]").await;
        fill(&d, "provider-model", "fake-model").await;
        fill(&d, "provider-uri", &fake.uri()).await;
        // A fallback to a route that does not exist: the validator's finding sits at the field.
        fill(&d, "provider-fallbacks", "openai.nowhere").await;
        let err = d
            .wait_text(
                "[data-testid=provider-field-error][data-field=fallbacks]",
                |t| t.contains("openai.nowhere"),
            )
            .await;
        assert!(!err.is_empty());
        wait_save(&d, false).await;
        fill(&d, "provider-fallbacks", "ollama.local").await;
        fill(&d, "provider-key", KEY).await;
        d.wait_text("[data-testid=provider-diff]", |t| {
            t.contains("[providers.models.openai.main]") && t.contains("fallbacks")
        })
        .await;
        wait_save(&d, true).await;
        d.click("[data-testid=provider-save]").await;

        // Saved: the hint is gone once a hosted route exists; the key is not in the config.
        let deadline = Instant::now() + Duration::from_secs(15);
        while d
            .client
            .find(Locator::Css("[data-testid=provider-hint]"))
            .await
            .is_ok()
        {
            assert!(Instant::now() < deadline, "the hint stayed after saving");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let config = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(config.contains("# Providers test install."), "{config}");
        assert!(
            config.contains("[providers.models.openai.main]"),
            "{config}"
        );
        assert!(config.contains("model = \"fake-model\""), "{config}");
        assert!(
            config.contains("fallbacks = [\"ollama.local\"]"),
            "{config}"
        );
        assert!(
            config.contains("secret = \"OPENAI_MAIN_API_KEY\""),
            "{config}"
        );
        assert!(
            !config.contains(KEY),
            "the key reached config.toml:\n{config}"
        );
        assert!(!d.client.source().await.unwrap().contains(KEY));

        // The new route is offered to the agents: alice uses ollama.local, so she is not
        // chosen until asked; then she is pointed at it through a validated agent edit.
        let offer = d
            .wait_text("[data-testid=point-agents]", |t| t.contains("openai.main"))
            .await;
        assert!(offer.contains("uses ollama.local now"), "{offer}");
        let apply = d.wait_for("[data-testid=point-agents-apply]").await;
        assert!(!apply.is_enabled().await.unwrap(), "nobody chosen yet");
        d.click("[data-testid=point-agent][data-alias=alice]").await;
        d.screenshot("provider-point-agents").await;
        d.click("[data-testid=point-agents-apply]").await;
        let done = d
            .wait_text("[data-testid=point-agents-done]", |t| !t.is_empty())
            .await;
        assert_eq!(done, "alice uses openai.main now.");
        let config = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(
            config.contains(
                "[agents.alice]\nrisk_profile = \"sup\"\nmodel_provider = \"openai.main\""
            ),
            "{config}"
        );
        assert!(config.contains("# Providers test install."), "{config}");
        d.click("[data-testid=point-agents-dismiss]").await;

        // Test from the Settings screen: one call with the stored key, the answer shown.
        d.nav("settings").await;
        let row = "[data-testid=provider-row][data-reference='openai.main']";
        d.click(&format!("{row} [data-testid=provider-test]")).await;
        let answer = d
            .wait_text(&format!("{row} [data-testid=provider-test-result]"), |t| {
                !t.is_empty()
            })
            .await;
        assert!(answer.contains("pong from the fake vendor"), "{answer}");
        let requests = fake.requests();
        assert_eq!(requests.len(), 1, "one small call");
        assert_eq!(
            requests[0].header("authorization"),
            Some(format!("Bearer {KEY}").as_str())
        );

        // Removing the route openai.main falls back to is refused, naming the user; nothing
        // changes.
        let before = std::fs::read(d.home.join("config.toml")).unwrap();
        let ollama = "[data-testid=provider-row][data-reference='ollama.local']";
        d.click(&format!("{ollama} [data-testid=provider-remove]"))
            .await;
        let refused = d
            .wait_text("[data-testid=provider-error]", |t| !t.is_empty())
            .await;
        assert!(
            refused.contains("providers.models.openai.main.fallbacks"),
            "{refused}"
        );
        assert_eq!(std::fs::read(d.home.join("config.toml")).unwrap(), before);
        d.close().await;
    });
}

/// Editing a route, "Models offered" reads the provider's own list (here a local Ollama's
/// `/api/tags`, no key) and the model picked from it is what Save writes.
#[test]
fn a_routes_model_is_picked_from_the_list_its_provider_offers() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Ollama).unwrap();
        fake.set_models(["llama3.2", "qwen2.5-coder:7b"]);
        let config = format!(
            "[risk_profiles.sup]\nlevel = \"supervised\"\n\n[providers.models.ollama.local]\nmodel = \"llama3.2\"\nuri = \"{}\"\n\n[agents.alice]\nrisk_profile = \"sup\"\nmodel_provider = \"ollama.local\"\n",
            fake.uri()
        );
        let d = launch(|home| std::fs::write(home.join("config.toml"), &config).unwrap()).await;
        d.nav("settings").await;
        let row = "[data-testid=provider-row][data-reference='ollama.local']";
        d.click(&format!("{row} [data-testid=provider-edit]")).await;
        d.click("[data-testid=provider-list-models]").await;
        d.wait_for("[data-testid=provider-model-pick]").await;
        d.click("[data-testid=provider-model-pick] option[value='qwen2.5-coder:7b']")
            .await;
        let model = d
            .wait_for("[data-testid=provider-model]")
            .await
            .prop("value")
            .await
            .unwrap();
        assert_eq!(model.as_deref(), Some("qwen2.5-coder:7b"));
        d.wait_text("[data-testid=provider-diff]", |t| {
            t.contains("qwen2.5-coder:7b")
        })
        .await;
        wait_save(&d, true).await;
        d.screenshot("provider-model-picked").await;
        d.click("[data-testid=provider-save]").await;
        d.wait_for("[data-testid=provider-saved]").await;
        let saved = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(
            saved.contains("[providers.models.ollama.local]\nmodel = \"qwen2.5-coder:7b\""),
            "{saved}"
        );
        assert!(
            fake.requests().iter().any(|r| r.path == "/api/tags"),
            "the list was not read from the provider"
        );
        d.close().await;
    });
}
