//! OpenAI Chat Completions (`POST {base}/chat/completions`), streamed as SSE `data:` chunks
//! ending with `data: [DONE]`.

use super::{parse_json, parse_json_bytes, SseHandler};
use crate::assemble::{Assembler, DecodeError};
use crate::entry::ProviderEntry;
use crate::sse::SseEvent;
use crate::types::{ChatRequest, Message, StopReason};
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// The request body.
pub(crate) fn body(entry: &ProviderEntry, req: &ChatRequest) -> Value {
    let mut messages = Vec::with_capacity(req.messages.len() + 1);
    if !req.system.is_empty() {
        messages.push(json!({"role": "system", "content": req.system}));
    }
    for m in &req.messages {
        messages.push(match m {
            Message::User { content } => json!({"role": "user", "content": content}),
            Message::Assistant { text, tool_calls } => {
                let mut o = Map::new();
                o.insert("role".into(), "assistant".into());
                o.insert(
                    "content".into(),
                    if text.is_empty() && !tool_calls.is_empty() {
                        Value::Null
                    } else {
                        text.as_str().into()
                    },
                );
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| {
                            json!({"id": c.id, "type": "function", "function": {
                                "name": c.name, "arguments": c.arguments.to_string()}})
                        })
                        .collect();
                    o.insert("tool_calls".into(), calls.into());
                }
                Value::Object(o)
            }
            Message::Tool {
                call_id, content, ..
            } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        });
    }
    let mut b = Map::new();
    b.insert("model".into(), entry.model.as_str().into());
    b.insert("messages".into(), messages.into());
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        b.insert("tools".into(), tools.into());
        if req.forbid_tool_calls {
            b.insert("tool_choice".into(), "none".into());
        } else if req.single_tool && entry.single_tool_control {
            b.insert("parallel_tool_calls".into(), false.into());
        }
    }
    if let Some(n) = req.max_tokens {
        b.insert("max_completion_tokens".into(), n.into());
    }
    b.insert("stream".into(), req.stream.into());
    if req.stream {
        b.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(b)
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<u64>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize, Default)]
struct WireMessage {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireChoice {
    #[serde(default, alias = "delta")]
    message: Option<WireMessage>,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireCompletion {
    #[serde(default)]
    choices: Vec<WireChoice>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<Value>,
}

fn stop_reason(s: &str) -> StopReason {
    match s {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        other => StopReason::Other(other.to_string()),
    }
}

fn provider_error(err: &Value) -> DecodeError {
    DecodeError::Provider {
        kind: err["type"].as_str().unwrap_or("error").to_string(),
        message: err["message"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string()),
    }
}

/// Parses a non-streamed completion.
pub(crate) fn parse_full(bytes: &[u8], asm: &mut Assembler) -> Result<(), DecodeError> {
    let c: WireCompletion = parse_json_bytes(bytes, "the completion body")?;
    if let Some(err) = &c.error {
        return Err(provider_error(err));
    }
    let Some(choice) = c.choices.into_iter().next() else {
        return Err(DecodeError::Malformed(
            "the completion has no choices[0]".into(),
        ));
    };
    let msg = choice.message.unwrap_or_default();
    asm.text(msg.content.as_deref().unwrap_or(""));
    for (i, tc) in msg.tool_calls.unwrap_or_default().into_iter().enumerate() {
        let f = tc.function.ok_or_else(|| {
            DecodeError::Malformed(format!(
                "choices[0].message.tool_calls[{i}] has no function"
            ))
        })?;
        let key = i as u64;
        asm.start_call(
            key,
            tc.id.as_deref().unwrap_or(""),
            f.name.as_deref().unwrap_or(""),
        )?;
        asm.call_args(key, f.arguments.as_deref().unwrap_or(""))?;
    }
    if let Some(r) = &choice.finish_reason {
        asm.stop(stop_reason(r));
    }
    if let Some(u) = c.usage {
        asm.input_tokens(u.prompt_tokens);
        asm.output_tokens(u.completion_tokens);
    }
    asm.done();
    Ok(())
}

/// Handles `chat.completion.chunk` events.
#[derive(Default)]
pub(crate) struct StreamHandler {
    /// The key of the call that received the last piece (for servers that omit `index`).
    last_key: Option<u64>,
    next_key: u64,
}

impl SseHandler for StreamHandler {
    const END_MARKER: &'static str = "`data: [DONE]`";

    fn event(&mut self, n: usize, ev: &SseEvent, asm: &mut Assembler) -> Result<(), DecodeError> {
        let data = ev.data.trim();
        if data == "[DONE]" {
            asm.done();
            return Ok(());
        }
        let chunk: WireCompletion = parse_json(data, &format!("stream event {n}"))?;
        if let Some(err) = &chunk.error {
            return Err(provider_error(err));
        }
        if let Some(u) = chunk.usage {
            asm.input_tokens(u.prompt_tokens);
            asm.output_tokens(u.completion_tokens);
        }
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(()); // the usage chunk has no choices
        };
        if let Some(delta) = choice.message {
            if let Some(t) = &delta.content {
                asm.text(t);
            }
            for tc in delta.tool_calls.unwrap_or_default() {
                let key = match (tc.index, &tc.id) {
                    (Some(i), _) => i,
                    (None, Some(_)) => self.next_key,
                    (None, None) => self.last_key.ok_or_else(|| {
                        DecodeError::Malformed(format!(
                            "stream event {n}: a tool call piece with neither index nor id"
                        ))
                    })?,
                };
                let f = tc.function.unwrap_or(WireFunction {
                    name: None,
                    arguments: None,
                });
                if !asm.has_call(key) {
                    asm.start_call(
                        key,
                        tc.id.as_deref().unwrap_or(""),
                        f.name.as_deref().unwrap_or(""),
                    )
                    .map_err(|e| match e {
                        DecodeError::Malformed(m) => {
                            DecodeError::Malformed(format!("stream event {n}: {m}"))
                        }
                        other => other,
                    })?;
                    self.next_key = self.next_key.max(key + 1);
                }
                self.last_key = Some(key);
                asm.call_args(key, f.arguments.as_deref().unwrap_or(""))?;
            }
        }
        if let Some(r) = &choice.finish_reason {
            asm.stop(stop_reason(r));
        }
        Ok(())
    }
}
