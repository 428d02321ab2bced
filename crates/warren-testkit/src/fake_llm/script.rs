//! What a fake provider answers: one scripted [`Reply`] per expected request, in order.

use serde_json::Value;
use std::time::Duration;

/// One tool call the fake model makes.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedCall {
    /// The call id; `None` lets the server number it (`call_1`, `toolu_1`, ...; Ollama sends none).
    pub id: Option<String>,
    /// The tool name.
    pub name: String,
    /// The arguments object.
    pub arguments: Value,
}

/// The kind of answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// A successful model message.
    Message {
        text: String,
        calls: Vec<ScriptedCall>,
        stop_reason: Option<String>,
    },
    /// An HTTP error with a vendor-shaped error body.
    Error { status: u16, message: String },
    /// A 200 whose JSON is broken (the whole body, or one stream event after a good one).
    Malformed,
    /// Exactly these bytes.
    Raw {
        status: u16,
        content_type: String,
        body: String,
    },
}

/// A scripted response. Built with the constructors, adjusted with the `with`-style methods.
/// Whether it streams follows the request's `stream` field, as the real servers do.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    pub(crate) answer: Answer,
    pub(crate) usage: (u64, u64),
    pub(crate) delay: Duration,
    pub(crate) frame_delay: Duration,
    pub(crate) cut_after: Option<usize>,
    pub(crate) headers: Vec<(String, String)>,
}

impl Reply {
    fn of(answer: Answer) -> Self {
        Reply {
            answer,
            usage: (10, 5),
            delay: Duration::ZERO,
            frame_delay: Duration::ZERO,
            cut_after: None,
            headers: Vec::new(),
        }
    }

    /// A text answer (streamed word by word).
    pub fn text(text: &str) -> Self {
        Self::of(Answer::Message {
            text: text.to_string(),
            calls: Vec::new(),
            stop_reason: None,
        })
    }

    /// One tool call, no text.
    pub fn tool_call(name: &str, arguments: Value) -> Self {
        Self::text_and_calls("", [(name, arguments)])
    }

    /// Several tool calls in one response, no text.
    pub fn tool_calls<'a>(calls: impl IntoIterator<Item = (&'a str, Value)>) -> Self {
        Self::text_and_calls("", calls)
    }

    /// Text followed by tool calls.
    pub fn text_and_calls<'a>(
        text: &str,
        calls: impl IntoIterator<Item = (&'a str, Value)>,
    ) -> Self {
        Self::of(Answer::Message {
            text: text.to_string(),
            calls: calls
                .into_iter()
                .map(|(name, arguments)| ScriptedCall {
                    id: None,
                    name: name.to_string(),
                    arguments,
                })
                .collect(),
            stop_reason: None,
        })
    }

    /// Tool calls given in full (with explicit ids).
    pub fn scripted_calls(text: &str, calls: Vec<ScriptedCall>) -> Self {
        Self::of(Answer::Message {
            text: text.to_string(),
            calls,
            stop_reason: None,
        })
    }

    /// An HTTP error status with the vendor's error body carrying `message`.
    pub fn error(status: u16, message: &str) -> Self {
        Self::of(Answer::Error {
            status,
            message: message.to_string(),
        })
    }

    /// HTTP 200 with broken JSON: the one-shot body is cut JSON; a stream sends one good event
    /// and then an event whose data is not JSON.
    pub fn malformed() -> Self {
        Self::of(Answer::Malformed)
    }

    /// Exactly `body` with this status and content type.
    pub fn raw(status: u16, content_type: &str, body: &str) -> Self {
        Self::of(Answer::Raw {
            status,
            content_type: content_type.to_string(),
            body: body.to_string(),
        })
    }

    /// Token counts reported by the answer (default 10 in, 5 out).
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.usage = (input_tokens, output_tokens);
        self
    }

    /// Waits this long before sending the response headers (for timeouts).
    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }

    /// Waits this long before each stream frame (a slow model).
    pub fn frame_delay(mut self, d: Duration) -> Self {
        self.frame_delay = d;
        self
    }

    /// Sends the first `frames` stream frames (SSE events / NDJSON lines), then half of the
    /// next one, then drops the connection. A one-shot body is cut in half.
    pub fn cut_after(mut self, frames: usize) -> Self {
        self.cut_after = Some(frames);
        self
    }

    /// Adds a response header (`retry-after`, `location`, ...).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// The vendor's stop reason, as spelled on the wire (default: derived from the content).
    pub fn stop_reason(mut self, reason: &str) -> Self {
        if let Answer::Message { stop_reason, .. } = &mut self.answer {
            *stop_reason = Some(reason.to_string());
        }
        self
    }
}

/// The rendered response before timing is applied.
#[derive(Debug)]
pub(crate) struct Rendered {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) frames: Vec<String>,
}

impl Rendered {
    /// A one-shot JSON body.
    pub(crate) fn json(status: u16, body: &Value) -> Self {
        Self::new(status, "application/json", vec![body.to_string()])
    }

    /// A response from its parts.
    pub(crate) fn new(status: u16, content_type: &str, frames: Vec<String>) -> Self {
        Rendered {
            status,
            content_type: content_type.to_string(),
            frames,
        }
    }
}

/// Splits text into word-sized pieces (each keeps its trailing space).
pub(crate) fn pieces(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_string).collect()
}

/// Splits a string in two at a character boundary near its middle.
pub(crate) fn halves(s: &str) -> (String, String) {
    let mut mid = s.len() / 2;
    while !s.is_char_boundary(mid) {
        mid += 1;
    }
    (s[..mid].to_string(), s[mid..].to_string())
}

/// The context a renderer needs from the request and the server.
pub(crate) struct RenderCtx<'a> {
    pub(crate) model: &'a str,
    pub(crate) body: &'a Value,
    pub(crate) serial: u64,
}
