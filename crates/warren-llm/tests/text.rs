//! Text answers, streamed and one-shot; usage and cost; request shape and headers per family.

use crate::common::*;
use serde_json::{json, Value};
use std::sync::Arc;
use warren_llm::{
    ChatRequest, Message, ProviderFamily, StaticKeys, StopReason, StreamEvent, ToolCall,
};
use warren_testkit::fake_llm::Reply;

async fn text_streaming(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("Hello there, world").usage(21, 4));
    let (res, events) = chat(&route_to(&fake), &hello()).await;
    let resp = res.unwrap();
    assert_eq!(resp.text, "Hello there, world");
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
    assert!(resp.tool_calls.is_empty());
    assert_eq!(resp.provider, format!("{}.main", f.as_str()));
    assert_eq!(resp.usage.input_tokens, 21);
    assert_eq!(resp.usage.output_tokens, 4);
    let deltas = text_deltas(&events);
    assert!(deltas.len() >= 3, "expected several deltas, got {deltas:?}");
    assert_eq!(deltas.concat(), "Hello there, world");
    // usage comes last, once
    let stream = stream_events(&events);
    let usage: Vec<_> = stream
        .iter()
        .filter(|e| matches!(e, StreamEvent::Usage { .. }))
        .collect();
    assert_eq!(usage.len(), 1);
    assert!(matches!(stream.last(), Some(StreamEvent::Usage { .. })));

    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    let body = &reqs[0].body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["model"], "fake-model");
    match f {
        ProviderFamily::Openai => {
            assert_eq!(
                body["messages"][0],
                json!({"role": "system", "content": "You are terse."})
            );
            assert_eq!(
                body["messages"][1],
                json!({"role": "user", "content": "Say hello"})
            );
            assert_eq!(body["stream_options"]["include_usage"], true);
            assert!(body.get("tools").is_none());
        }
        ProviderFamily::Anthropic => {
            assert_eq!(body["system"], "You are terse.");
            assert_eq!(
                body["messages"],
                json!([{"role": "user", "content": [{"type": "text", "text": "Say hello"}]}])
            );
            assert_eq!(body["max_tokens"], 4096);
        }
        ProviderFamily::Ollama => {
            assert_eq!(body["messages"][0]["role"], "system");
            assert_eq!(
                body["messages"][1],
                json!({"role": "user", "content": "Say hello"})
            );
        }
    }
}

async fn text_one_shot(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("One shot answer").usage(7, 3));
    let mut req = hello();
    req.stream = false;
    req.max_tokens = Some(100);
    let (res, events) = chat(&route_to(&fake), &req).await;
    let resp = res.unwrap();
    assert_eq!(resp.text, "One shot answer");
    assert_eq!((resp.usage.input_tokens, resp.usage.output_tokens), (7, 3));
    assert_eq!(text_deltas(&events), ["One shot answer"]);
    let body = &fake.requests()[0].body;
    assert_eq!(body["stream"], false);
    match f {
        ProviderFamily::Openai => {
            assert_eq!(body["max_completion_tokens"], 100);
            assert!(body.get("stream_options").is_none());
        }
        ProviderFamily::Anthropic => assert_eq!(body["max_tokens"], 100),
        ProviderFamily::Ollama => assert_eq!(body["options"]["num_predict"], 100),
    }
}

async fn usage_and_cost(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("priced").usage(2_000, 1_000));
    let mut e = entry(&fake, "main");
    e.prices.input_per_mtok = Some(3.0);
    e.prices.output_per_mtok = Some(15.0);
    let route = providers().route_of(vec![e]);
    let (res, events) = chat(&route, &hello()).await;
    let resp = res.unwrap();
    let want = 2_000.0 * 3.0 / 1e6 + 1_000.0 * 15.0 / 1e6;
    assert!(
        (resp.cost_usd - want).abs() < 1e-12,
        "cost {}",
        resp.cost_usd
    );
    let reported = stream_events(&events).into_iter().find_map(|e| match e {
        StreamEvent::Usage { usage, cost_usd } => Some((usage, cost_usd)),
        _ => None,
    });
    let (usage, cost) = reported.unwrap();
    assert_eq!((usage.input_tokens, usage.output_tokens), (2_000, 1_000));
    assert!((cost - want).abs() < 1e-12);
}

async fn unpriced_entry_costs_nothing(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("free").usage(500, 500));
    let (res, _) = chat(&route_to(&fake), &hello()).await;
    assert_eq!(res.unwrap().cost_usd, 0.0);
}

/// The tool exchange of a previous round reaches the vendor in its own shape.
async fn history_round_trip(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("done"));
    let c1 = ToolCall {
        id: "id_1".into(),
        name: "file_read".into(),
        arguments: json!({"path": "a.txt"}),
    };
    let c2 = ToolCall {
        id: "id_2".into(),
        name: "shell".into(),
        arguments: json!({"command": "ls"}),
    };
    let req = ChatRequest::new(
        "",
        vec![
            Message::user("read a.txt and list"),
            Message::Assistant {
                text: "Sure.".into(),
                tool_calls: vec![c1.clone(), c2.clone()],
            },
            Message::tool_result(&c1, "hello"),
            Message::Tool {
                call_id: "id_2".into(),
                name: "shell".into(),
                content: "denied".into(),
                is_error: true,
            },
        ],
    )
    .with_tools(tools());
    let (res, _) = chat(&route_to(&fake), &req).await;
    assert_eq!(res.unwrap().text, "done");
    let body = &fake.requests()[0].body;
    let msgs = body["messages"].as_array().unwrap();
    match f {
        ProviderFamily::Openai => {
            assert_eq!(msgs.len(), 4, "no system message when the prompt is empty");
            assert_eq!(msgs[1]["content"], "Sure.");
            assert_eq!(msgs[1]["tool_calls"][1]["id"], "id_2");
            assert_eq!(msgs[1]["tool_calls"][1]["type"], "function");
            let args: Value = serde_json::from_str(
                msgs[1]["tool_calls"][0]["function"]["arguments"]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(args, json!({"path": "a.txt"}));
            assert_eq!(
                msgs[2],
                json!({"role": "tool", "tool_call_id": "id_1", "content": "hello"})
            );
            assert_eq!(msgs[3]["tool_call_id"], "id_2");
        }
        ProviderFamily::Anthropic => {
            assert!(body.get("system").is_none());
            assert_eq!(
                msgs.len(),
                3,
                "both results travel in one user turn: {msgs:?}"
            );
            assert_eq!(msgs[1]["content"][1]["type"], "tool_use");
            assert_eq!(msgs[1]["content"][1]["input"], json!({"path": "a.txt"}));
            assert_eq!(msgs[2]["role"], "user");
            assert_eq!(
                msgs[2]["content"],
                json!([{"type": "tool_result", "tool_use_id": "id_1", "content": "hello"},
                       {"type": "tool_result", "tool_use_id": "id_2", "content": "denied",
                        "is_error": true}])
            );
        }
        ProviderFamily::Ollama => {
            assert_eq!(msgs.len(), 4);
            assert_eq!(
                msgs[1]["tool_calls"][0]["function"]["arguments"],
                json!({"path": "a.txt"})
            );
            assert_eq!(
                msgs[2],
                json!({"role": "tool", "content": "hello", "tool_name": "file_read"})
            );
            assert_eq!(msgs[3]["tool_name"], "shell");
        }
    }
}

async fn api_key_headers(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("ok"));
    let mut e = entry(&fake, "main");
    e.key_sources = vec![warren_llm::KeySource::Env("FAKE_KEY".into())];
    let p = providers_with_keys(Arc::new(StaticKeys::new().env("FAKE_KEY", "sk-test-123")));
    let (res, _) = chat(&p.route_of(vec![e]), &hello()).await;
    res.unwrap();
    let r = &fake.requests()[0];
    assert_eq!(r.header("content-type"), Some("application/json"));
    match f {
        ProviderFamily::Anthropic => {
            assert_eq!(r.header("x-api-key"), Some("sk-test-123"));
            assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
            assert_eq!(r.header("authorization"), None);
        }
        _ => assert_eq!(r.header("authorization"), Some("Bearer sk-test-123")),
    }
}

async fn no_key_source_sends_no_key(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("ok"));
    chat(&route_to(&fake), &hello()).await.0.unwrap();
    let r = &fake.requests()[0];
    assert_eq!(r.header("authorization"), None);
    assert_eq!(r.header("x-api-key"), None);
}

/// An OpenAI-compatible server that ignores `stream` and answers with one JSON body still works.
#[tokio::test]
async fn json_answer_to_a_streaming_request() {
    let fake = fake(ProviderFamily::Openai);
    fake.push(Reply::raw(
        200,
        "application/json",
        r#"{"id": "x", "object": "chat.completion", "choices": [{"index": 0,
            "message": {"role": "assistant", "content": "plain json"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 4, "completion_tokens": 2}}"#,
    ));
    let (res, events) = chat(&route_to(&fake), &hello()).await;
    let resp = res.unwrap();
    assert_eq!(resp.text, "plain json");
    assert_eq!(resp.usage.output_tokens, 2);
    assert_eq!(text_deltas(&events), ["plain json"]);
}

/// An empty assistant answer in the history is left out of an Anthropic request (the API
/// refuses messages without content); the other families keep it.
#[tokio::test]
async fn empty_assistant_message_is_skipped_for_anthropic() {
    let fake = fake(ProviderFamily::Anthropic);
    fake.push(Reply::text("ok"));
    let req = ChatRequest::new(
        "",
        vec![
            Message::user("first"),
            Message::assistant(""),
            Message::user("second"),
        ],
    );
    chat(&route_to(&fake), &req).await.0.unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "first"},
                                           {"type": "text", "text": "second"}]}])
    );
}

/// Comments and keep-alive lines in an event stream are ignored.
#[tokio::test]
async fn sse_comments_are_ignored() {
    let fake = fake(ProviderFamily::Openai);
    fake.push(Reply::raw(
        200,
        "text/event-stream",
        concat!(
            ": PROCESSING\n\n",
            "data: {\"choices\": [{\"index\": 0, \"delta\": {\"content\": \"hi\"}}]}\r\n\r\n",
            ": keep-alive\n\n",
            "data: {\"choices\": [{\"index\": 0, \"delta\": {}, \"finish_reason\": \"stop\"}]}\n\n",
            "data: [DONE]\n\n"
        ),
    ));
    let resp = chat(&route_to(&fake), &hello()).await.0.unwrap();
    assert_eq!(resp.text, "hi");
    assert_eq!(resp.stop_reason, StopReason::EndTurn);
}

per_family!(
    text_streaming,
    text_one_shot,
    usage_and_cost,
    unpriced_entry_costs_nothing,
    history_round_trip,
    api_key_headers,
    no_key_source_sends_no_key,
);
