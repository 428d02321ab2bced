//! The three vendors' wire formats: request bodies, one-shot responses and stream decoders.

pub(crate) mod anthropic;
pub(crate) mod ollama;
pub(crate) mod openai;

use crate::assemble::{Assembler, DecodeError};
use crate::error::excerpt;
use crate::sse::{SseEvent, SseParser};
use serde::de::DeserializeOwned;

/// Turns a response body, chunk by chunk, into assembler calls.
pub(crate) trait Decoder: Send {
    /// Feeds the next chunk of the body.
    fn feed(&mut self, chunk: &[u8], asm: &mut Assembler) -> Result<(), DecodeError>;
    /// The body ended cleanly; errors when the vendor's end marker is missing.
    fn finish(&mut self, asm: &mut Assembler) -> Result<(), DecodeError>;
    /// How far decoding got, for the message when the connection fails mid-body.
    fn progress(&self) -> String;
}

/// Handles one SSE event of a vendor stream.
pub(crate) trait SseHandler: Send {
    /// What ends the vendor's stream, for error messages.
    const END_MARKER: &'static str;
    /// Handles event number `n` (1-based).
    fn event(&mut self, n: usize, ev: &SseEvent, asm: &mut Assembler) -> Result<(), DecodeError>;
}

/// An SSE stream decoded by a vendor handler.
pub(crate) struct SseDecoder<H> {
    parser: SseParser,
    handler: H,
    buf: Vec<SseEvent>,
    count: usize,
}

impl<H: SseHandler> SseDecoder<H> {
    pub(crate) fn new(handler: H) -> Self {
        SseDecoder {
            parser: SseParser::new(),
            handler,
            buf: Vec::new(),
            count: 0,
        }
    }
}

impl<H: SseHandler> Decoder for SseDecoder<H> {
    fn feed(&mut self, chunk: &[u8], asm: &mut Assembler) -> Result<(), DecodeError> {
        self.parser
            .feed(chunk, &mut self.buf)
            .map_err(DecodeError::Malformed)?;
        for ev in self.buf.drain(..) {
            self.count += 1;
            if asm.is_done() {
                continue; // anything after the end marker is ignored, as the vendors' SDKs do
            }
            self.handler.event(self.count, &ev, asm)?;
        }
        Ok(())
    }

    fn finish(&mut self, asm: &mut Assembler) -> Result<(), DecodeError> {
        if asm.is_done() {
            return Ok(());
        }
        Err(DecodeError::Interrupted(format!(
            "the event stream ended without {}, {}",
            H::END_MARKER,
            self.progress()
        )))
    }

    fn progress(&self) -> String {
        let mut out = format!("after {} complete events", self.count);
        if self.parser.in_event() {
            out.push_str(&format!(
                "; it stopped inside an event: {:?}",
                excerpt(&self.parser.partial(), 120)
            ));
        }
        out
    }
}

/// Parses JSON with an error naming where it came from and what it looked like.
pub(crate) fn parse_json<T: DeserializeOwned>(text: &str, place: &str) -> Result<T, DecodeError> {
    serde_json::from_str(text).map_err(|e| {
        DecodeError::Malformed(format!(
            "{place} is not the expected JSON ({e}): {:?}",
            excerpt(text, 200)
        ))
    })
}

/// Parses JSON bytes like [`parse_json`].
pub(crate) fn parse_json_bytes<T: DeserializeOwned>(
    bytes: &[u8],
    place: &str,
) -> Result<T, DecodeError> {
    serde_json::from_slice(bytes).map_err(|e| {
        DecodeError::Malformed(format!(
            "{place} is not the expected JSON ({e}): {:?}",
            excerpt(&String::from_utf8_lossy(bytes), 200)
        ))
    })
}

/// The vendor's error message in an HTTP error body (`{"error": {"message"}}` for OpenAI and
/// Anthropic, `{"error": "..."}` for Ollama), else an excerpt of the body.
pub(crate) fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        let err = &v["error"];
        if let Some(m) = err["message"].as_str() {
            return match err["type"].as_str() {
                Some(t) => format!("{t}: {}", excerpt(m, 500)),
                None => excerpt(m, 500),
            };
        }
        if let Some(m) = err.as_str() {
            return excerpt(m, 500);
        }
    }
    if text.trim().is_empty() {
        "(empty body)".to_string()
    } else {
        excerpt(&text, 500)
    }
}
