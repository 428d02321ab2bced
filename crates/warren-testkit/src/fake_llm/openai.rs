//! The OpenAI Chat Completions wire format as the fake server writes it.

use super::script::{halves, pieces, Answer, RenderCtx, Rendered, Reply};
use serde_json::{json, Value};

fn sse(data: &Value) -> String {
    format!("data: {data}\n\n")
}

fn call_id(ctx: &RenderCtx<'_>, i: usize, given: &Option<String>) -> String {
    given
        .clone()
        .unwrap_or_else(|| format!("call_{}_{}", ctx.serial, i + 1))
}

fn error_type(status: u16) -> &'static str {
    match status {
        401 => "invalid_api_key",
        429 => "rate_limit_exceeded",
        s if s >= 500 => "server_error",
        _ => "invalid_request_error",
    }
}

/// Renders `reply` for one request.
pub(crate) fn render(reply: &Reply, ctx: &RenderCtx<'_>, stream: bool) -> Rendered {
    let id = format!("chatcmpl-fake-{}", ctx.serial);
    match &reply.answer {
        Answer::Error { status, message } => Rendered::json(
            *status,
            &json!({"error": {"message": message, "type": error_type(*status),
                "param": null, "code": null}}),
        ),
        Answer::Raw {
            status,
            content_type,
            body,
        } => Rendered::new(*status, content_type, vec![body.clone()]),
        Answer::Malformed if !stream => Rendered::new(
            200,
            "application/json",
            vec![format!(
                "{{\"id\": \"{id}\", \"object\": \"chat.completion\", \"choices\": [{{\"index\": 0, \"message\": "
            )],
        ),
        Answer::Malformed => Rendered::new(
            200,
            "text/event-stream",
            vec![
                sse(&chunk(&id, ctx, json!({"role": "assistant", "content": "Hel"}), None)),
                "data: {\"id\": \"broken\", \"choices\": [{\"delta\": {\"content\": \"lo\"}\n\n"
                    .to_string(),
                "data: [DONE]\n\n".to_string(),
            ],
        ),
        Answer::Message {
            text,
            calls,
            stop_reason,
        } => {
            let finish = stop_reason.clone().unwrap_or_else(|| {
                if calls.is_empty() { "stop" } else { "tool_calls" }.to_string()
            });
            let usage = json!({"prompt_tokens": reply.usage.0, "completion_tokens": reply.usage.1,
                "total_tokens": reply.usage.0 + reply.usage.1});
            if !stream {
                let tool_calls: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        json!({"id": call_id(ctx, i, &c.id), "type": "function", "function": {
                            "name": c.name, "arguments": c.arguments.to_string()}})
                    })
                    .collect();
                let mut message = json!({"role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { text.as_str().into() },
                    "refusal": null});
                if !tool_calls.is_empty() {
                    message["tool_calls"] = tool_calls.into();
                }
                return Rendered::json(
                    200,
                    &json!({"id": id, "object": "chat.completion", "created": 1_700_000_000,
                        "model": ctx.model,
                        "choices": [{"index": 0, "message": message, "logprobs": null,
                            "finish_reason": finish}],
                        "usage": usage}),
                );
            }
            let mut frames = vec![sse(&chunk(
                &id,
                ctx,
                json!({"role": "assistant", "content": ""}),
                None,
            ))];
            for p in pieces(text) {
                frames.push(sse(&chunk(&id, ctx, json!({"content": p}), None)));
            }
            for (i, c) in calls.iter().enumerate() {
                frames.push(sse(&chunk(
                    &id,
                    ctx,
                    json!({"tool_calls": [{"index": i, "id": call_id(ctx, i, &c.id), "type": "function",
                        "function": {"name": c.name, "arguments": ""}}]}),
                    None,
                )));
                let (a, b) = halves(&c.arguments.to_string());
                for part in [a, b] {
                    frames.push(sse(&chunk(
                        &id,
                        ctx,
                        json!({"tool_calls": [{"index": i, "function": {"arguments": part}}]}),
                        None,
                    )));
                }
            }
            frames.push(sse(&chunk(&id, ctx, json!({}), Some(&finish))));
            if ctx.body["stream_options"]["include_usage"] == true {
                frames.push(sse(&json!({"id": id, "object": "chat.completion.chunk",
                    "created": 1_700_000_000, "model": ctx.model, "choices": [], "usage": usage})));
            }
            frames.push("data: [DONE]\n\n".to_string());
            Rendered::new(200, "text/event-stream", frames)
        }
    }
}

fn chunk(id: &str, ctx: &RenderCtx<'_>, delta: Value, finish: Option<&str>) -> Value {
    let mut v = json!({"id": id, "object": "chat.completion.chunk", "created": 1_700_000_000,
        "model": ctx.model,
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]});
    if ctx.body["stream_options"]["include_usage"] == true {
        v["usage"] = Value::Null;
    }
    v
}

/// The model list (`GET /v1/models`) as OpenAI writes it.
pub(crate) fn models(ids: &[String]) -> Value {
    let data: Vec<Value> = ids
        .iter()
        .map(|id| json!({"id": id, "object": "model", "created": 1_700_000_000, "owned_by": "fake-llm"}))
        .collect();
    json!({"object": "list", "data": data})
}
