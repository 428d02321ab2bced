//! Resolving routes from config: order, dedupe, no recursion, clear errors for bad references.

use crate::common::*;
use std::collections::BTreeMap;
use std::time::Duration;
use warren_llm::{resolve_route, LlmError, ProviderEntry, ProviderFamily};
use warren_types::LlmErrorCode;
use warren_types::{Config, ProviderModel};

fn model(name: &str, fallbacks: &[&str]) -> ProviderModel {
    ProviderModel {
        model: name.into(),
        fallbacks: fallbacks
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
        ..ProviderModel::default()
    }
}

/// A config built directly (bypassing load validation) to test the resolver's own rules.
fn config(entries: &[(&str, &str, ProviderModel)]) -> Config {
    let mut cfg = Config::default();
    for (family, alias, m) in entries {
        cfg.providers
            .models
            .entry(family.to_string())
            .or_insert_with(BTreeMap::new)
            .insert(alias.to_string(), m.clone());
    }
    cfg
}

fn refs(entries: &[ProviderEntry]) -> Vec<&str> {
    entries.iter().map(|e| e.reference.as_str()).collect()
}

#[test]
fn duplicates_and_self_references_are_dropped() {
    let cfg = config(&[
        (
            "openai",
            "main",
            model(
                "gpt",
                &["anthropic.a", "openai.main", "anthropic.a", "ollama.o"],
            ),
        ),
        ("anthropic", "a", model("claude", &["openai.main"])),
        ("ollama", "o", model("llama", &[])),
    ]);
    let route = resolve_route(&cfg, "openai.main").unwrap();
    assert_eq!(refs(&route), ["openai.main", "anthropic.a", "ollama.o"]);
}

#[test]
fn fallbacks_of_fallbacks_are_not_followed() {
    let cfg = config(&[
        ("openai", "main", model("gpt", &["anthropic.a"])),
        ("anthropic", "a", model("claude", &["ollama.o"])),
        ("ollama", "o", model("llama", &[])),
    ]);
    assert_eq!(
        refs(&resolve_route(&cfg, "openai.main").unwrap()),
        ["openai.main", "anthropic.a"]
    );
}

#[test]
fn bad_references_are_named() {
    let cfg = config(&[("openai", "main", model("gpt", &["anthropic.gone"]))]);
    let cases: &[(&str, &[&str])] = &[
        (
            "openai.nope",
            &["openai.nope", "no [providers.models.openai.nope]"],
        ),
        ("mistral.x", &["mistral.x", "unknown family \"mistral\""]),
        ("noalias", &["noalias", "family.alias"]),
        (
            "openai.main",
            &["anthropic.gone", "a fallback of openai.main"],
        ),
    ];
    for (reference, needles) in cases {
        let err = resolve_route(&cfg, reference).unwrap_err();
        assert!(matches!(err, LlmError::UnknownProvider { .. }), "{err:?}");
        assert_eq!(err.code(), LlmErrorCode::UnknownProvider);
        let msg = err.to_string();
        for n in *needles {
            assert!(msg.contains(n), "{reference}: {msg:?} lacks {n:?}");
        }
    }
}

#[test]
fn entries_take_their_settings_from_config() {
    let cfg = warren_config::parse_config(
        r#"
schema_version = 1
[providers.models.openai.main]
model = "gpt-4o"
api_key_env = "OPENAI_API_KEY"
timeout_secs = 30
input_cost_per_mtok = 2.5
output_cost_per_mtok = 10.0
[providers.models.anthropic.claude]
model = "claude-x"
uri = "https://example.invalid/"
[providers.models.ollama.local]
model = "llama3"
"#,
    )
    .unwrap();
    let p = providers();
    let o = p.route(&cfg, "openai.main").unwrap();
    let e = o.clients()[0].entry();
    assert_eq!(e.family, ProviderFamily::Openai);
    assert_eq!(e.model, "gpt-4o");
    assert_eq!(e.timeout, Duration::from_secs(30));
    assert_eq!(e.prices.input_per_mtok, Some(2.5));
    assert_eq!(
        e.key_sources,
        [warren_llm::KeySource::Env("OPENAI_API_KEY".into())]
    );
    assert_eq!(
        o.clients()[0].url(),
        "https://api.openai.com/v1/chat/completions"
    );
    let a = p.route(&cfg, "anthropic.claude").unwrap();
    assert_eq!(a.clients()[0].url(), "https://example.invalid/v1/messages");
    assert_eq!(a.clients()[0].entry().timeout, Duration::from_secs(120));
    let l = p.route(&cfg, "ollama.local").unwrap();
    assert_eq!(l.clients()[0].url(), "http://127.0.0.1:11434/api/chat");
    assert!(l.clients()[0].entry().key_sources.is_empty());
}

/// The route future can be spawned onto a multi-threaded runtime (the loop will do so).
#[test]
fn route_chat_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let route = warren_llm::Route::new(Vec::new());
    let req = hello();
    let mut sink = |_e: warren_llm::RouteEvent| {};
    let fut = route.chat(&req, &mut sink);
    assert_send(&fut);
}

#[tokio::test]
async fn an_empty_route_is_an_error_not_a_hang() {
    let route = warren_llm::Route::new(Vec::new());
    assert!(!route.supports_single_tool());
    let err = chat(&route, &hello()).await.0.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::InvalidRequest);
}
