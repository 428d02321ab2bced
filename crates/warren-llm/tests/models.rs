//! Model lists from each vendor's own endpoint, against the fake servers: the request the
//! vendor expects (path, auth header), the answer decoded, and a refusal in words without the
//! key.

use crate::common::{entry, fake, providers_with_keys};
use std::sync::Arc;
use warren_llm::{KeySource, LlmError, ProviderEntry, StaticKeys};
use warren_testkit::fake_llm::{closed_port_uri, FakeLlm, ProviderFamily};
use warren_types::LlmErrorCode;

const KEY: &str = "sk-model-list-4f1c2a9e7d3b5a60";

/// The entry `<family>.main` at `fake`, reading its key from the secret `MAIN_KEY`.
fn keyed(fake: &FakeLlm) -> (ProviderEntry, Arc<StaticKeys>) {
    let mut e = entry(fake, "main");
    e.key_sources = vec![KeySource::Secret("MAIN_KEY".into())];
    (e, Arc::new(StaticKeys::new().secret("MAIN_KEY", KEY)))
}

#[tokio::test]
async fn openai_lists_v1_models_with_the_bearer_key_sorted_by_name() {
    let fake = fake(ProviderFamily::Openai);
    fake.set_models(["gpt-4o-mini", "gpt-4.1", "text-embedding-3-small"]);
    let (e, keys) = keyed(&fake);
    let client = providers_with_keys(keys).client(e);
    assert_eq!(client.models_url(), format!("{}/models", fake.uri()));
    let models = client.list_models().await.unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["gpt-4.1", "gpt-4o-mini", "text-embedding-3-small"]);
    assert_eq!(models[0].owned_by.as_deref(), Some("fake-llm"));
    assert_eq!(models[0].created.as_deref(), Some("1700000000"));
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(
        reqs[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
}

#[tokio::test]
async fn anthropic_lists_v1_models_with_x_api_key_and_the_version_header() {
    let fake = fake(ProviderFamily::Anthropic);
    fake.set_models(["claude-sonnet-4-5", "claude-3-5-haiku-latest"]);
    let (e, keys) = keyed(&fake);
    let models = providers_with_keys(keys)
        .client(e)
        .list_models()
        .await
        .unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(
        ids,
        ["claude-sonnet-4-5", "claude-3-5-haiku-latest"],
        "vendor order kept"
    );
    assert_eq!(
        models[0].display_name.as_deref(),
        Some("Fake claude-sonnet-4-5")
    );
    assert_eq!(models[0].created.as_deref(), Some("2025-02-19T00:00:00Z"));
    let reqs = fake.requests();
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(reqs[0].header("x-api-key"), Some(KEY));
    assert_eq!(reqs[0].header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(
        reqs[0].header("authorization"),
        None,
        "Anthropic takes no bearer"
    );
}

#[tokio::test]
async fn anthropic_pages_are_followed_with_after_id_until_has_more_is_false() {
    let fake = fake(ProviderFamily::Anthropic);
    fake.set_models(["m1", "m2", "m3", "m4", "m5"]);
    fake.models_page_size(2);
    let (e, keys) = keyed(&fake);
    let models = providers_with_keys(keys)
        .client(e)
        .list_models()
        .await
        .unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["m1", "m2", "m3", "m4", "m5"]);
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 3, "three pages");
    assert!(reqs.iter().all(|r| r.header("x-api-key") == Some(KEY)));
}

#[tokio::test]
async fn ollama_lists_the_pulled_models_from_api_tags_without_a_key() {
    let fake = fake(ProviderFamily::Ollama);
    fake.set_models(["llama3.2:latest", "qwen2.5-coder:7b"]);
    let models = crate::common::providers()
        .client(entry(&fake, "local"))
        .list_models()
        .await
        .unwrap();
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["llama3.2:latest", "qwen2.5-coder:7b"]);
    assert_eq!(models[0].size_bytes, Some(2_019_393_189));
    assert_eq!(models[0].details.as_deref(), Some("3.2B Q4_K_M"));
    let reqs = fake.requests();
    assert_eq!(
        (reqs[0].method.as_str(), reqs[0].path.as_str()),
        ("GET", "/api/tags")
    );
    assert_eq!(reqs[0].header("authorization"), None);
}

#[tokio::test]
async fn a_refused_key_is_an_http_error_in_words_without_the_key() {
    for family in [ProviderFamily::Openai, ProviderFamily::Anthropic] {
        let fake = fake(family);
        // Vendors echo (part of) the key they were sent.
        fake.refuse_models(401, &format!("Incorrect API key provided: {KEY}"));
        let (e, keys) = keyed(&fake);
        let err = providers_with_keys(keys)
            .client(e)
            .list_models()
            .await
            .unwrap_err();
        assert_eq!(err.code(), LlmErrorCode::ProviderHttp, "{family:?}: {err}");
        assert_eq!(err.http_status(), Some(401));
        let text = err.to_string();
        assert!(text.contains("Incorrect API key provided"), "{text}");
        assert!(text.contains("/v1/models"), "names the URL: {text}");
        assert!(!text.contains(KEY), "the key leaked: {text}");
        assert!(text.contains("[redacted]"), "{text}");
    }
}

#[tokio::test]
async fn a_missing_key_and_a_closed_port_say_what_is_wrong() {
    let fake = fake(ProviderFamily::Openai);
    let mut e = entry(&fake, "main");
    e.key_sources = vec![KeySource::Secret("NOT_STORED".into())];
    let err = crate::common::providers()
        .client(e)
        .list_models()
        .await
        .unwrap_err();
    assert!(matches!(err, LlmError::NoApiKey { .. }), "{err}");
    assert!(err.to_string().contains("secret NOT_STORED"), "{err}");
    assert_eq!(fake.request_count(), 0, "nothing sent without the key");

    let uri = closed_port_uri().unwrap();
    let e = crate::common::entry_at(ProviderFamily::Ollama, "local", &uri);
    let err = crate::common::providers()
        .client(e)
        .list_models()
        .await
        .unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::ProviderUnreachable, "{err}");
    assert!(
        err.to_string().contains(&format!("{uri}/api/tags")),
        "{err}"
    );
}

#[tokio::test]
async fn a_model_list_without_end_is_cut_at_the_limit_without_reading_it_all() {
    use std::io::Write;
    use std::sync::atomic::{AtomicUsize, Ordering};
    // A server that answers 200 with no length and streams up to 64 MiB: the client must stop
    // at its 8 MiB limit and say so, not hold the whole body.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let sent = Arc::new(AtomicUsize::new(0));
    let counter = sent.clone();
    std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else { return };
        let mut head = [0u8; 4096];
        let _ = std::io::Read::read(&mut s, &mut head);
        let _ = s.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"data\":[",
        );
        let block = vec![b' '; 64 * 1024];
        for _ in 0..1024 {
            if s.write_all(&block).is_err() {
                return; // the client hung up: what it should do
            }
            counter.fetch_add(block.len(), Ordering::SeqCst);
        }
    });
    let e = crate::common::entry_at(
        warren_testkit::fake_llm::ProviderFamily::Openai,
        "endless",
        &format!("http://127.0.0.1:{port}/v1"),
    );
    let err = crate::common::providers()
        .client(e)
        .list_models()
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("the model list is larger than 8388608 bytes"),
        "{err}"
    );
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let sent = sent.load(Ordering::SeqCst);
    assert!(
        sent < 32 * 1024 * 1024,
        "the server could send {sent} bytes: the client kept reading past its limit"
    );
}
