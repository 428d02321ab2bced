//! Builds one `ChatResponse` from the pieces a decoder finds (streamed or not), queueing the
//! matching `StreamEvent`s for the caller as it goes.

use crate::types::{ChatResponse, StopReason, StreamEvent, ToolCall, Usage};
use serde_json::Value;

/// Why a response could not be completed; the client adds the entry and URL.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum DecodeError {
    /// The bytes are not what the vendor documents.
    Malformed(String),
    /// The stream ended before the vendor's end marker.
    Interrupted(String),
    /// The vendor put an error object in the stream.
    Provider { kind: String, message: String },
}

#[derive(Debug)]
struct PartialCall {
    key: u64,
    id: String,
    name: String,
    args: String,
    complete: Option<Value>,
}

/// The most answer text and tool-call arguments one reply may hold, counted as it arrives
/// (docs/security.md, "Limits"): a reply that says more is refused before it is all read.
pub const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// Accumulates a response.
#[derive(Debug, Default)]
pub(crate) struct Assembler {
    /// Bytes of text and arguments held so far.
    held: usize,
    /// Set once the reply went over [`MAX_REPLY_BYTES`]: nothing more is kept.
    over: bool,
    text: String,
    calls: Vec<PartialCall>,
    usage: Usage,
    stop: Option<StopReason>,
    events: Vec<StreamEvent>,
    done: bool,
}

impl Assembler {
    /// Appends answer text.
    pub(crate) fn text(&mut self, delta: &str) {
        if delta.is_empty() || !self.admit(delta.len()) {
            return;
        }
        self.text.push_str(delta);
        self.events.push(StreamEvent::TextDelta {
            text: delta.to_string(),
        });
    }

    /// Counts `n` more bytes against [`MAX_REPLY_BYTES`]; false (and nothing more is kept)
    /// once the reply is over it.
    fn admit(&mut self, n: usize) -> bool {
        if self.over || self.held.saturating_add(n) > MAX_REPLY_BYTES {
            self.over = true;
            return false;
        }
        self.held += n;
        true
    }

    /// True once the reply went over [`MAX_REPLY_BYTES`].
    pub(crate) fn overflowed(&self) -> bool {
        self.over
    }

    /// Position of the call the vendor numbers `key`, if started.
    fn position(&self, key: u64) -> Option<usize> {
        self.calls.iter().position(|c| c.key == key)
    }

    /// Starts a tool call the vendor numbers `key` (its index or content block number).
    pub(crate) fn start_call(&mut self, key: u64, id: &str, name: &str) -> Result<(), DecodeError> {
        if self.position(key).is_some() {
            return Err(DecodeError::Malformed(format!(
                "tool call #{key} started twice"
            )));
        }
        if name.is_empty() {
            return Err(DecodeError::Malformed(format!(
                "tool call #{key} has no function name"
            )));
        }
        let id = if id.is_empty() {
            format!("call_{}", uuid::Uuid::new_v4().simple())
        } else {
            id.to_string()
        };
        self.events.push(StreamEvent::ToolCallStarted {
            index: self.calls.len(),
            id: id.clone(),
            name: name.to_string(),
        });
        self.calls.push(PartialCall {
            key,
            id,
            name: name.to_string(),
            args: String::new(),
            complete: None,
        });
        Ok(())
    }

    /// True when the call numbered `key` was started.
    pub(crate) fn has_call(&self, key: u64) -> bool {
        self.position(key).is_some()
    }

    /// Appends raw JSON text to the arguments of call `key`.
    pub(crate) fn call_args(&mut self, key: u64, delta: &str) -> Result<(), DecodeError> {
        let Some(pos) = self.position(key) else {
            return Err(DecodeError::Malformed(format!(
                "arguments for tool call #{key}, which was never started"
            )));
        };
        if delta.is_empty() || !self.admit(delta.len()) {
            return Ok(());
        }
        self.calls[pos].args.push_str(delta);
        self.events.push(StreamEvent::ToolCallArgsDelta {
            index: pos,
            delta: delta.to_string(),
        });
        Ok(())
    }

    /// A call that arrives whole, with arguments already parsed (Ollama, Anthropic non-stream).
    pub(crate) fn whole_call(
        &mut self,
        id: &str,
        name: &str,
        arguments: Value,
    ) -> Result<(), DecodeError> {
        let key = u64::MAX - self.calls.len() as u64;
        self.start_call(key, id, name)?;
        let text = arguments.to_string();
        if !self.admit(text.len()) {
            return Ok(());
        }
        let pos = self.calls.len() - 1;
        self.events.push(StreamEvent::ToolCallArgsDelta {
            index: pos,
            delta: text.clone(),
        });
        self.calls[pos].args = text;
        self.calls[pos].complete = Some(arguments);
        Ok(())
    }

    /// Sets the prompt token count.
    pub(crate) fn input_tokens(&mut self, n: u64) {
        self.usage.input_tokens = n;
    }

    /// Sets the generated token count.
    pub(crate) fn output_tokens(&mut self, n: u64) {
        self.usage.output_tokens = n;
    }

    /// Records why generation stopped.
    pub(crate) fn stop(&mut self, reason: StopReason) {
        self.stop = Some(reason);
    }

    /// Marks the vendor's end marker as seen.
    pub(crate) fn done(&mut self) {
        self.done = true;
    }

    /// True once the end marker was seen.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Takes the events queued since the last call.
    pub(crate) fn drain_events(&mut self) -> std::vec::Drain<'_, StreamEvent> {
        self.events.drain(..)
    }

    /// Finishes the response: parses every call's arguments and fills in the stop reason.
    pub(crate) fn finish(self, provider: &str, model: &str) -> Result<ChatResponse, DecodeError> {
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for c in self.calls {
            let arguments = match c.complete {
                Some(v) => v,
                None if c.args.trim().is_empty() => Value::Object(Default::default()),
                None => serde_json::from_str(&c.args).map_err(|e| {
                    DecodeError::Malformed(format!(
                        "arguments of tool call {} ({}) are not valid JSON ({e}): {}",
                        c.id,
                        c.name,
                        crate::error::excerpt(&c.args, 200)
                    ))
                })?,
            };
            tool_calls.push(ToolCall {
                id: c.id,
                name: c.name,
                arguments,
            });
        }
        let stop_reason = match self.stop {
            Some(StopReason::EndTurn) if !tool_calls.is_empty() => StopReason::ToolUse,
            Some(r) => r,
            None if tool_calls.is_empty() => StopReason::EndTurn,
            None => StopReason::ToolUse,
        };
        Ok(ChatResponse {
            provider: provider.to_string(),
            model: model.to_string(),
            text: self.text,
            tool_calls,
            usage: self.usage,
            cost_usd: 0.0,
            stop_reason,
        })
    }
}
