//! Broken answers give clear errors: malformed JSON, cut streams, missing end markers, errors
//! inside a stream, missing keys, and the fake server's own loud failure.

use crate::common::*;
use std::sync::Arc;
use warren_llm::{KeySource, LlmError, NoKeys, ProviderFamily};
use warren_testkit::fake_llm::Reply;
use warren_types::LlmErrorCode;

fn assert_names_entry_and_url(err: &LlmError, f: ProviderFamily) {
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("{}.main", f.as_str())),
        "names the entry: {msg}"
    );
    assert!(msg.contains("http://127.0.0.1:"), "names the URL: {msg}");
}

async fn malformed_json_in_stream(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::malformed());
    let (res, events) = chat(&route_to(&fake), &hello()).await;
    let err = res.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::MalformedResponse, "{err}");
    assert!(!err.moves_to_fallback());
    assert_names_entry_and_url(&err, f);
    let msg = err.to_string();
    let place = match f {
        ProviderFamily::Ollama => "stream line 2",
        _ => "stream event 2",
    };
    assert!(msg.contains(place), "names where: {msg}");
    assert!(
        msg.contains("broken") || msg.contains("content_block_start"),
        "shows the data: {msg}"
    );
    // what came before the bad event was shown, no usage was claimed
    assert!(!failures(&events).is_empty());
}

async fn malformed_json_one_shot(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::malformed());
    let mut req = hello();
    req.stream = false;
    let err = chat(&route_to(&fake), &req).await.0.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::MalformedResponse, "{err}");
    assert_names_entry_and_url(&err, f);
    assert!(
        err.to_string().contains("body is not the expected JSON"),
        "{err}"
    );
}

async fn stream_cut_mid_message(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("this answer will be cut somewhere in the middle").cut_after(3));
    let (res, events) = chat(&route_to(&fake), &with_tools()).await;
    let err = res.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::StreamInterrupted, "{err}");
    assert_names_entry_and_url(&err, f);
    assert!(!stream_events(&events)
        .iter()
        .any(|e| matches!(e, warren_llm::StreamEvent::Usage { .. })));
}

async fn tool_call_cut_mid_arguments(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(
        Reply::tool_call(
            "file_read",
            serde_json::json!({"path": "a/very/long/path.txt"}),
        )
        .cut_after(3),
    );
    let err = chat(&route_to(&fake), &with_tools()).await.0.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::StreamInterrupted, "{err}");
}

async fn one_shot_body_cut(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("a complete answer").cut_after(0));
    let mut req = hello();
    req.stream = false;
    let err = chat(&route_to(&fake), &req).await.0.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::StreamInterrupted, "{err}");
}

async fn clean_end_without_end_marker(f: ProviderFamily) {
    let fake = fake(f);
    let (ct, body, marker) = match f {
        ProviderFamily::Openai => (
            "text/event-stream",
            "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"hi\"}, \"finish_reason\": null}]}\n\n",
            "[DONE]",
        ),
        ProviderFamily::Anthropic => (
            "text/event-stream",
            "event: message_start\ndata: {\"type\": \"message_start\", \"message\": {\"id\": \"m\", \"type\": \"message\", \"role\": \"assistant\", \"content\": [], \"usage\": {\"input_tokens\": 3, \"output_tokens\": 1}}}\n\n",
            "message_stop",
        ),
        ProviderFamily::Ollama => (
            "application/x-ndjson",
            "{\"model\": \"m\", \"message\": {\"role\": \"assistant\", \"content\": \"hi\"}, \"done\": false}\n",
            "\"done\" is true",
        ),
    };
    fake.push(Reply::raw(200, ct, body));
    let err = chat(&route_to(&fake), &hello()).await.0.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::StreamInterrupted, "{err}");
    assert!(
        err.to_string().contains(marker),
        "names the missing marker: {err}"
    );
}

async fn error_inside_the_stream(f: ProviderFamily) {
    let fake = fake(f);
    let (ct, body) = match f {
        ProviderFamily::Openai => (
            "text/event-stream",
            "data: {\"error\": {\"message\": \"model melted\", \"type\": \"server_error\"}}\n\n",
        ),
        ProviderFamily::Anthropic => (
            "text/event-stream",
            "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"model melted\"}}\n\n",
        ),
        ProviderFamily::Ollama => ("application/x-ndjson", "{\"error\": \"model melted\"}\n"),
    };
    fake.push(Reply::raw(200, ct, body));
    let err = chat(&route_to(&fake), &hello()).await.0.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::ProviderError, "{err}");
    assert!(err.to_string().contains("model melted"), "{err}");
}

async fn missing_api_key_sends_nothing(f: ProviderFamily) {
    let fake = fake(f);
    let mut e = entry(&fake, "main");
    e.key_sources = vec![
        KeySource::Env("WARREN_TEST_MISSING_KEY".into()),
        KeySource::Secret("agent:bob/KEY".into()),
    ];
    let route = providers_with_keys(Arc::new(NoKeys)).route_of(vec![e]);
    let err = chat(&route, &hello()).await.0.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::NoApiKey);
    let msg = err.to_string();
    assert!(
        msg.contains("WARREN_TEST_MISSING_KEY") && msg.contains("agent:bob/KEY"),
        "names the sources: {msg}"
    );
    assert_eq!(fake.request_count(), 0);
}

async fn key_from_a_closure_resolver(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("ok"));
    let mut e = entry(&fake, "main");
    e.key_sources = vec![KeySource::Secret("OPENAI_API_KEY".into())];
    let resolver = |s: &KeySource| match s {
        KeySource::Secret(n) if n == "OPENAI_API_KEY" => Some("from-secret-store".to_string()),
        _ => None,
    };
    let route = providers_with_keys(Arc::new(resolver)).route_of(vec![e]);
    chat(&route, &hello()).await.0.unwrap();
    let r = &fake.requests()[0];
    let sent = r.header("x-api-key").or(r.header("authorization")).unwrap();
    assert!(sent.ends_with("from-secret-store"), "{sent}");
}

async fn unexpected_request_is_loud(f: ProviderFamily) {
    let fake = fake(f);
    // nothing scripted
    let err = chat(&route_to(&fake), &hello()).await.0.unwrap_err();
    assert_eq!(err.http_status(), Some(500));
    assert!(err.to_string().contains("script is exhausted"), "{err}");
    let failures = fake.acknowledge_failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("unexpected request #1"));
}

per_family!(
    malformed_json_in_stream,
    malformed_json_one_shot,
    stream_cut_mid_message,
    tool_call_cut_mid_arguments,
    one_shot_body_cut,
    clean_end_without_end_marker,
    error_inside_the_stream,
    missing_api_key_sends_nothing,
    key_from_a_closure_resolver,
    unexpected_request_is_loud,
);

/// Dropping a server that saw an unexpected request without acknowledging it panics.
#[tokio::test]
async fn unacknowledged_unexpected_request_panics_on_drop() {
    let fake = fake(ProviderFamily::Openai);
    let _ = chat(&route_to(&fake), &hello()).await;
    assert_eq!(fake.failures().len(), 1);
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(fake)));
    let payload = dropped.unwrap_err();
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(msg.contains("unexpected request"), "{msg}");
}

/// A wrong path is an unexpected request too.
#[tokio::test]
async fn wrong_path_is_recorded_as_a_failure() {
    let fake = fake(ProviderFamily::Anthropic);
    fake.push(Reply::text("never sent"));
    // an OpenAI-shaped entry pointed at the Anthropic fake: POST /v1/chat/completions
    let e = entry_at(
        ProviderFamily::Openai,
        "main",
        &format!("{}/v1", fake.uri()),
    );
    let err = chat(&providers().route_of(vec![e]), &hello())
        .await
        .0
        .unwrap_err();
    assert_eq!(err.http_status(), Some(404));
    let failures = fake.acknowledge_failures();
    assert!(
        failures[0].contains("POST /v1/chat/completions"),
        "{failures:?}"
    );
    assert_eq!(fake.remaining(), 1);
}

/// Tool-call arguments that are not JSON are a malformed response naming the call.
#[tokio::test]
async fn invalid_tool_arguments_name_the_call() {
    let fake = fake(ProviderFamily::Openai);
    let body = concat!(
        "data: {\"choices\": [{\"index\": 0, \"delta\": {\"tool_calls\": [{\"index\": 0, \"id\": \"call_9\", \"type\": \"function\", \"function\": {\"name\": \"shell\", \"arguments\": \"{\\\"command\\\": \"}}]}, \"finish_reason\": null}]}\n\n",
        "data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    fake.push(Reply::raw(200, "text/event-stream", body));
    let err = chat(&route_to(&fake), &with_tools()).await.0.unwrap_err();
    assert_eq!(err.code(), LlmErrorCode::MalformedResponse);
    let msg = err.to_string();
    assert!(msg.contains("call_9") && msg.contains("shell"), "{msg}");
}

/// A history with a tool call but no result is rejected like the real API would, and the fake
/// records it as a failure.
#[tokio::test]
async fn corrupt_history_is_rejected_like_the_vendor_does() {
    for f in [ProviderFamily::Openai, ProviderFamily::Anthropic] {
        let fake = fake(f);
        fake.push(Reply::text("never sent"));
        let call = warren_llm::ToolCall {
            id: "lonely".into(),
            name: "shell".into(),
            arguments: serde_json::json!({"command": "ls"}),
        };
        let req = warren_llm::ChatRequest::new(
            "",
            vec![
                warren_llm::Message::user("list"),
                warren_llm::Message::Assistant {
                    text: String::new(),
                    tool_calls: vec![call],
                },
                warren_llm::Message::user("and?"),
            ],
        )
        .with_tools(tools());
        let err = chat(&route_to(&fake), &req).await.0.unwrap_err();
        assert_eq!(err.http_status(), Some(400), "{f:?}: {err}");
        assert!(err.to_string().contains("lonely"), "{err}");
        let failures = fake.acknowledge_failures();
        assert_eq!(failures.len(), 1, "{failures:?}");
        assert!(failures[0].contains("would be rejected by the real API"));
        assert_eq!(fake.remaining(), 1, "the script was not consumed");
    }
}

/// A redirect is reported, not followed (the request carries the API key).
#[tokio::test]
async fn redirects_are_not_followed() {
    let fake = fake(ProviderFamily::Openai);
    let again = format!("{}/chat/completions", fake.uri());
    fake.push(Reply::raw(307, "text/plain", "moved").header("location", &again));
    let err = chat(&route_to(&fake), &hello()).await.0.unwrap_err();
    assert_eq!(err.http_status(), Some(307));
    assert!(!err.moves_to_fallback());
    assert_eq!(fake.request_count(), 1);
}
