//! Anthropic Messages (`POST {base}/v1/messages`, `anthropic-version` header), streamed as SSE
//! events from `message_start` to `message_stop`.

use super::{parse_json, parse_json_bytes, SseHandler};
use crate::assemble::{Assembler, DecodeError};
use crate::entry::ProviderEntry;
use crate::sse::SseEvent;
use crate::types::{ChatRequest, Message, StopReason};
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// The API version sent in `anthropic-version`.
pub(crate) const API_VERSION: &str = "2023-06-01";

/// Sent as `max_tokens` when the request leaves it open (the Messages API requires one).
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The request body. Consecutive messages of one role are merged into one turn, so that all
/// results of one round travel in one user message as the API expects.
pub(crate) fn body(entry: &ProviderEntry, req: &ChatRequest) -> Value {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for m in &req.messages {
        let (role, blocks) = match m {
            Message::User { content } => ("user", vec![json!({"type": "text", "text": content})]),
            Message::Assistant { text, tool_calls } => {
                let mut blocks = Vec::with_capacity(tool_calls.len() + 1);
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for c in tool_calls {
                    blocks.push(json!({"type": "tool_use", "id": c.id, "name": c.name,
                        "input": c.arguments}));
                }
                ("assistant", blocks)
            }
            Message::Tool {
                call_id,
                content,
                is_error,
                ..
            } => {
                let mut b = json!({"type": "tool_result", "tool_use_id": call_id,
                    "content": content});
                if *is_error {
                    b["is_error"] = true.into();
                }
                ("user", vec![b])
            }
        };
        if blocks.is_empty() {
            continue; // an empty answer: the API refuses messages without content
        }
        match turns.last_mut() {
            Some((r, existing)) if *r == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut b = Map::new();
    b.insert("model".into(), entry.model.as_str().into());
    b.insert(
        "max_tokens".into(),
        req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).into(),
    );
    if !req.system.is_empty() {
        b.insert("system".into(), req.system.as_str().into());
    }
    b.insert("messages".into(), messages.into());
    if !req.tools.is_empty() {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        b.insert("tools".into(), tools.into());
        if req.forbid_tool_calls {
            b.insert("tool_choice".into(), json!({"type": "none"}));
        } else if req.single_tool && entry.single_tool_control {
            b.insert(
                "tool_choice".into(),
                json!({"type": "auto", "disable_parallel_tool_use": true}),
            );
        }
    }
    b.insert("stream".into(), req.stream.into());
    Value::Object(b)
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    fn apply(&self, asm: &mut Assembler) {
        if let Some(i) = self.input_tokens {
            let cached = self.cache_creation_input_tokens.unwrap_or(0)
                + self.cache_read_input_tokens.unwrap_or(0);
            asm.input_tokens(i + cached);
        }
        if let Some(o) = self.output_tokens {
            asm.output_tokens(o);
        }
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    content: Vec<WireBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: WireUsage,
}

fn stop_reason(s: &str) -> StopReason {
    match s {
        "end_turn" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        "stop_sequence" => StopReason::StopSequence,
        other => StopReason::Other(other.to_string()),
    }
}

fn provider_error(v: &Value) -> DecodeError {
    let err = &v["error"];
    DecodeError::Provider {
        kind: err["type"].as_str().unwrap_or("error").to_string(),
        message: err["message"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| v.to_string()),
    }
}

/// Parses a non-streamed message.
pub(crate) fn parse_full(bytes: &[u8], asm: &mut Assembler) -> Result<(), DecodeError> {
    let v: Value = parse_json_bytes(bytes, "the message body")?;
    if v["type"] == "error" {
        return Err(provider_error(&v));
    }
    if v["type"] != "message" {
        return Err(DecodeError::Malformed(format!(
            "the body's \"type\" is {}, expected \"message\"",
            v["type"]
        )));
    }
    let m: WireMessage = serde_json::from_value(v)
        .map_err(|e| DecodeError::Malformed(format!("the message body: {e}")))?;
    for block in m.content {
        match block {
            WireBlock::Text { text } => asm.text(&text),
            WireBlock::ToolUse { id, name, input } => {
                let input = if input.is_null() {
                    Value::Object(Map::new())
                } else {
                    input
                };
                asm.whole_call(&id, &name, input)?;
            }
            WireBlock::Other => {}
        }
    }
    if let Some(r) = &m.stop_reason {
        asm.stop(stop_reason(r));
    }
    m.usage.apply(asm);
    asm.done();
    Ok(())
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireEvent {
    MessageStart {
        message: WireMessage,
    },
    ContentBlockStart {
        index: u64,
        content_block: WireBlock,
    },
    ContentBlockDelta {
        index: u64,
        delta: WireDelta,
    },
    ContentBlockStop {},
    MessageDelta {
        #[serde(default)]
        delta: WireMessageDelta,
        #[serde(default)]
        usage: WireUsage,
    },
    MessageStop {},
    Ping {},
    Error {},
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireDelta {
    TextDelta {
        text: String,
    },
    InputJsonDelta {
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct WireMessageDelta {
    #[serde(default)]
    stop_reason: Option<String>,
}

/// Handles Messages stream events.
#[derive(Default)]
pub(crate) struct StreamHandler {
    started: bool,
}

impl SseHandler for StreamHandler {
    const END_MARKER: &'static str = "`message_stop`";

    fn event(&mut self, n: usize, ev: &SseEvent, asm: &mut Assembler) -> Result<(), DecodeError> {
        let place = format!("stream event {n} ({})", ev.event);
        let raw: Value = parse_json(&ev.data, &place)?;
        if raw["type"] == "error" {
            return Err(provider_error(&raw));
        }
        let known = matches!(
            raw["type"].as_str(),
            Some(
                "message_start"
                    | "content_block_start"
                    | "content_block_delta"
                    | "content_block_stop"
                    | "message_delta"
                    | "message_stop"
                    | "ping"
            )
        );
        if !known {
            return Ok(()); // new event types are to be ignored, as the API documents
        }
        let event: WireEvent = serde_json::from_value(raw)
            .map_err(|e| DecodeError::Malformed(format!("{place}: {e}: {:?}", ev.data)))?;
        if !self.started && !matches!(event, WireEvent::MessageStart { .. } | WireEvent::Ping {}) {
            return Err(DecodeError::Malformed(format!(
                "{place} came before message_start"
            )));
        }
        match event {
            WireEvent::MessageStart { message } => {
                self.started = true;
                message.usage.apply(asm);
            }
            WireEvent::ContentBlockStart {
                index,
                content_block,
            } => match content_block {
                WireBlock::Text { text } => asm.text(&text),
                WireBlock::ToolUse { id, name, input } => {
                    asm.start_call(index, &id, &name)?;
                    if input.as_object().is_some_and(|o| !o.is_empty()) {
                        asm.call_args(index, &input.to_string())?;
                    }
                }
                WireBlock::Other => {}
            },
            WireEvent::ContentBlockDelta { index, delta } => match delta {
                WireDelta::TextDelta { text } => asm.text(&text),
                WireDelta::InputJsonDelta { partial_json } => {
                    asm.call_args(index, &partial_json)?;
                }
                WireDelta::Other => {}
            },
            WireEvent::MessageDelta { delta, usage } => {
                if let Some(r) = &delta.stop_reason {
                    asm.stop(stop_reason(r));
                }
                usage.apply(asm);
            }
            WireEvent::MessageStop {} => asm.done(),
            WireEvent::ContentBlockStop {} | WireEvent::Ping {} | WireEvent::Error {} => {}
        }
        Ok(())
    }
}
