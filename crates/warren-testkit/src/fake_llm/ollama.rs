//! Ollama's native chat API as the fake server writes it (NDJSON when streaming).

use super::script::{pieces, Answer, RenderCtx, Rendered, Reply};
use serde_json::{json, Value};

const CREATED_AT: &str = "2024-01-01T00:00:00.000000Z";

fn line(v: &Value) -> String {
    format!("{v}\n")
}

fn partial(ctx: &RenderCtx<'_>, message: Value) -> Value {
    json!({"model": ctx.model, "created_at": CREATED_AT, "message": message, "done": false})
}

fn last(ctx: &RenderCtx<'_>, message: Value, reason: &str, usage: (u64, u64)) -> Value {
    json!({"model": ctx.model, "created_at": CREATED_AT, "message": message, "done": true,
        "done_reason": reason, "total_duration": 1_000_000, "load_duration": 1_000,
        "prompt_eval_count": usage.0, "prompt_eval_duration": 1_000,
        "eval_count": usage.1, "eval_duration": 1_000})
}

/// Renders `reply` for one request.
pub(crate) fn render(reply: &Reply, ctx: &RenderCtx<'_>, stream: bool) -> Rendered {
    match &reply.answer {
        Answer::Error { status, message } => Rendered::json(*status, &json!({"error": message})),
        Answer::Raw {
            status,
            content_type,
            body,
        } => Rendered::new(*status, content_type, vec![body.clone()]),
        Answer::Malformed if !stream => Rendered::new(
            200,
            "application/json",
            vec![format!(
                "{{\"model\": \"{}\", \"message\": {{\"role\": \"assistant\", \"content\": ",
                ctx.model
            )],
        ),
        Answer::Malformed => Rendered::new(
            200,
            "application/x-ndjson",
            vec![
                line(&partial(
                    ctx,
                    json!({"role": "assistant", "content": "Hel"}),
                )),
                "{\"model\": \"broken\", \"message\": {\"content\": \"lo\"\n".to_string(),
                line(&last(
                    ctx,
                    json!({"role": "assistant", "content": ""}),
                    "stop",
                    reply.usage,
                )),
            ],
        ),
        Answer::Message {
            text,
            calls,
            stop_reason,
        } => {
            let reason = stop_reason.clone().unwrap_or_else(|| "stop".to_string());
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|c| {
                    let mut f = json!({"function": {"name": c.name, "arguments": c.arguments}});
                    if let Some(id) = &c.id {
                        f["id"] = id.as_str().into();
                    }
                    f
                })
                .collect();
            if !stream {
                let mut message = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    message["tool_calls"] = tool_calls.into();
                }
                return Rendered::json(200, &last(ctx, message, &reason, reply.usage));
            }
            let mut frames: Vec<String> = pieces(text)
                .into_iter()
                .map(|p| line(&partial(ctx, json!({"role": "assistant", "content": p}))))
                .collect();
            if !tool_calls.is_empty() {
                frames.push(line(&partial(
                    ctx,
                    json!({"role": "assistant", "content": "", "tool_calls": tool_calls}),
                )));
            }
            frames.push(line(&last(
                ctx,
                json!({"role": "assistant", "content": ""}),
                &reason,
                reply.usage,
            )));
            Rendered::new(200, "application/x-ndjson", frames)
        }
    }
}

/// The local model list (`GET /api/tags`) as Ollama writes it.
pub(crate) fn models(ids: &[String]) -> Value {
    let models: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({"name": id, "model": id, "modified_at": "2024-12-01T10:00:00.000000Z",
                "size": 2_019_393_189_u64,
                "digest": "a80c4f17acd55265feec403c7aef86be0c25983ab279d83f3bcd3abbcb5b8b72",
                "details": {"parent_model": "", "format": "gguf", "family": "llama",
                    "families": ["llama"], "parameter_size": "3.2B",
                    "quantization_level": "Q4_K_M"}})
        })
        .collect();
    json!({"models": models})
}
