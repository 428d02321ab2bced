//! The Anthropic Messages wire format as the fake server writes it.

use super::script::{halves, pieces, Answer, RenderCtx, Rendered, Reply};
use serde_json::{json, Value};

fn sse(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

fn error_type(status: u16) -> &'static str {
    match status {
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        s if s >= 500 => "api_error",
        _ => "invalid_request_error",
    }
}

/// Renders `reply` for one request.
pub(crate) fn render(reply: &Reply, ctx: &RenderCtx<'_>, stream: bool) -> Rendered {
    let id = format!("msg_fake_{}", ctx.serial);
    let (input, output) = reply.usage;
    match &reply.answer {
        Answer::Error { status, message } => Rendered::json(
            *status,
            &json!({"type": "error", "error": {"type": error_type(*status), "message": message}}),
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
                "{{\"id\": \"{id}\", \"type\": \"message\", \"content\": [{{\"type\": \"text\", \"text\": "
            )],
        ),
        Answer::Malformed => Rendered::new(
            200,
            "text/event-stream",
            vec![
                sse("message_start", &start(&id, ctx, input)),
                "event: content_block_start\ndata: {\"type\": \"content_block_start\", \"index\": 0,\n\n"
                    .to_string(),
                sse("message_stop", &json!({"type": "message_stop"})),
            ],
        ),
        Answer::Message {
            text,
            calls,
            stop_reason,
        } => {
            let stop = stop_reason.clone().unwrap_or_else(|| {
                if calls.is_empty() { "end_turn" } else { "tool_use" }.to_string()
            });
            let call_id = |i: usize, given: &Option<String>| {
                given
                    .clone()
                    .unwrap_or_else(|| format!("toolu_fake_{}_{}", ctx.serial, i + 1))
            };
            if !stream {
                let mut content = Vec::new();
                if !text.is_empty() {
                    content.push(json!({"type": "text", "text": text}));
                }
                for (i, c) in calls.iter().enumerate() {
                    content.push(json!({"type": "tool_use", "id": call_id(i, &c.id),
                        "name": c.name, "input": c.arguments}));
                }
                return Rendered::json(
                    200,
                    &json!({"id": id, "type": "message", "role": "assistant", "model": ctx.model,
                        "content": content, "stop_reason": stop, "stop_sequence": null,
                        "usage": {"input_tokens": input, "output_tokens": output}}),
                );
            }
            let mut frames = vec![
                sse("message_start", &start(&id, ctx, input)),
                sse("ping", &json!({"type": "ping"})),
            ];
            let mut index = 0;
            if !text.is_empty() {
                frames.push(sse(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "text", "text": ""}}),
                ));
                for p in pieces(text) {
                    frames.push(sse(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": p}}),
                    ));
                }
                frames.push(sse(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": index}),
                ));
                index += 1;
            }
            for (i, c) in calls.iter().enumerate() {
                frames.push(sse(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index,
                        "content_block": {"type": "tool_use", "id": call_id(i, &c.id),
                            "name": c.name, "input": {}}}),
                ));
                let (a, b) = halves(&c.arguments.to_string());
                for part in [a, b] {
                    frames.push(sse(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": part}}),
                    ));
                }
                frames.push(sse(
                    "content_block_stop",
                    &json!({"type": "content_block_stop", "index": index}),
                ));
                index += 1;
            }
            frames.push(sse(
                "message_delta",
                &json!({"type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": null},
                    "usage": {"output_tokens": output}}),
            ));
            frames.push(sse("message_stop", &json!({"type": "message_stop"})));
            Rendered::new(200, "text/event-stream", frames)
        }
    }
}

fn start(id: &str, ctx: &RenderCtx<'_>, input: u64) -> Value {
    json!({"type": "message_start", "message": {"id": id, "type": "message", "role": "assistant",
        "model": ctx.model, "content": [], "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input, "output_tokens": 1}}})
}

/// One page of the model list (`GET /v1/models?limit=N&after_id=ID`) as Anthropic writes it:
/// newest first, at most `limit` (default 20, capped at `page_cap`) models after `after_id`.
pub(crate) fn models(ids: &[String], query: Option<&str>, page_cap: usize) -> Value {
    let param = |name: &str| {
        query?
            .split('&')
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    let limit = param("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .unwrap_or(20)
        .clamp(1, page_cap.max(1));
    let start = param("after_id")
        .and_then(|after| ids.iter().position(|id| id == after).map(|i| i + 1))
        .unwrap_or(0);
    let page: Vec<&String> = ids.iter().skip(start).take(limit).collect();
    let data: Vec<Value> = page
        .iter()
        .map(|id| {
            json!({"type": "model", "id": id, "display_name": format!("Fake {id}"),
                "created_at": "2025-02-19T00:00:00Z"})
        })
        .collect();
    json!({"data": data, "has_more": start + page.len() < ids.len(),
        "first_id": page.first(), "last_id": page.last()})
}
