//! Ollama's native chat API (`POST {base}/api/chat`), streamed as NDJSON lines ending with one
//! whose `done` is true. Ollama has no single-tool control and sends tool calls whole.

use super::{parse_json_bytes, Decoder};
use crate::assemble::{Assembler, DecodeError};
use crate::entry::ProviderEntry;
use crate::error::excerpt;
use crate::lines::{LineBuffer, MAX_LINE};
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
                let mut o = json!({"role": "assistant", "content": text});
                if !tool_calls.is_empty() {
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|c| json!({"function": {"name": c.name, "arguments": c.arguments}}))
                        .collect();
                    o["tool_calls"] = calls.into();
                }
                o
            }
            Message::Tool { name, content, .. } => {
                json!({"role": "tool", "content": content, "tool_name": name})
            }
        });
    }
    let mut b = Map::new();
    b.insert("model".into(), entry.model.as_str().into());
    b.insert("messages".into(), messages.into());
    if !req.tools.is_empty() && !req.forbid_tool_calls {
        let tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
        b.insert("tools".into(), tools.into());
    }
    if let Some(n) = req.max_tokens {
        b.insert("options".into(), json!({"num_predict": n}));
    }
    b.insert("stream".into(), req.stream.into());
    Value::Object(b)
}

#[derive(Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: Value,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    id: Option<String>,
    function: WireFunction,
}

#[derive(Deserialize, Default)]
struct WireMessage {
    #[serde(default)]
    content: String,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Deserialize)]
struct WireChunk {
    #[serde(default)]
    message: Option<WireMessage>,
    #[serde(default)]
    done: Option<bool>,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<Value>,
}

fn apply(chunk: WireChunk, place: &str, asm: &mut Assembler) -> Result<(), DecodeError> {
    if let Some(err) = chunk.error {
        return Err(DecodeError::Provider {
            kind: "error".into(),
            message: err.as_str().map(str::to_string).unwrap_or(err.to_string()),
        });
    }
    let Some(done) = chunk.done else {
        return Err(DecodeError::Malformed(format!(
            "{place} has no \"done\" field"
        )));
    };
    if let Some(m) = chunk.message {
        asm.text(&m.content);
        for tc in m.tool_calls {
            let args = match tc.function.arguments {
                Value::Null => Value::Object(Map::new()),
                // some models put the arguments object in a string
                Value::String(s) if s.trim().is_empty() => Value::Object(Map::new()),
                Value::String(s) => serde_json::from_str(&s).map_err(|e| {
                    DecodeError::Malformed(format!(
                        "{place}: arguments of tool call {} are not valid JSON ({e}): {:?}",
                        tc.function.name,
                        excerpt(&s, 200)
                    ))
                })?,
                v => v,
            };
            asm.whole_call(tc.id.as_deref().unwrap_or(""), &tc.function.name, args)?;
        }
    }
    if done {
        if let Some(n) = chunk.prompt_eval_count {
            asm.input_tokens(n);
        }
        if let Some(n) = chunk.eval_count {
            asm.output_tokens(n);
        }
        asm.stop(match chunk.done_reason.as_deref() {
            None | Some("stop") => StopReason::EndTurn,
            Some("length") => StopReason::MaxTokens,
            Some(other) => StopReason::Other(other.to_string()),
        });
        asm.done();
    }
    Ok(())
}

/// Parses a non-streamed chat response.
pub(crate) fn parse_full(bytes: &[u8], asm: &mut Assembler) -> Result<(), DecodeError> {
    let chunk: WireChunk = parse_json_bytes(bytes, "the chat response body")?;
    apply(chunk, "the chat response body", asm)?;
    if !asm.is_done() {
        return Err(DecodeError::Malformed(
            "the chat response body has \"done\": false in a non-streamed answer".into(),
        ));
    }
    Ok(())
}

/// Decodes an NDJSON stream.
#[derive(Default)]
pub(crate) struct NdjsonDecoder {
    lines: LineBuffer,
    count: usize,
}

impl Decoder for NdjsonDecoder {
    fn feed(&mut self, chunk: &[u8], asm: &mut Assembler) -> Result<(), DecodeError> {
        let count = &mut self.count;
        self.lines.feed(
            chunk,
            |line| {
                if line.iter().all(u8::is_ascii_whitespace) {
                    return Ok(());
                }
                *count += 1;
                if asm.is_done() {
                    return Ok(());
                }
                let place = format!("stream line {count}");
                let c: WireChunk = parse_json_bytes(line, &place)?;
                apply(c, &place, asm)
            },
            || DecodeError::Malformed(format!("stream line longer than {MAX_LINE} bytes")),
        )
    }

    fn finish(&mut self, asm: &mut Assembler) -> Result<(), DecodeError> {
        let rest = self.lines.rest();
        if !asm.is_done() && !rest.iter().all(u8::is_ascii_whitespace) {
            // the last line may lack its newline: accept it if it parses
            let rest = rest.to_vec();
            let place = format!("stream line {} (unterminated)", self.count + 1);
            match serde_json::from_slice::<WireChunk>(&rest) {
                Ok(c) => apply(c, &place, asm)?,
                Err(_) => {
                    return Err(DecodeError::Interrupted(format!(
                        "the stream ended after {} complete lines, inside line {}: {:?}",
                        self.count,
                        self.count + 1,
                        excerpt(&String::from_utf8_lossy(&rest), 120)
                    )))
                }
            }
        }
        if asm.is_done() {
            Ok(())
        } else {
            Err(DecodeError::Interrupted(format!(
                "the stream ended after {} lines without a line whose \"done\" is true",
                self.count
            )))
        }
    }

    fn progress(&self) -> String {
        let rest = self.lines.rest();
        let mut out = format!("after {} complete lines", self.count);
        if !rest.is_empty() {
            out.push_str(&format!(
                "; it stopped inside a line: {:?}",
                excerpt(&String::from_utf8_lossy(rest), 120)
            ));
        }
        out
    }
}
