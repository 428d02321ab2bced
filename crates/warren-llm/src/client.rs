//! One provider entry's client: builds the vendor request, sends it, and decodes the streamed
//! or one-shot answer into a `ChatResponse`, forwarding `StreamEvent`s as they arrive.

use crate::assemble::{Assembler, DecodeError};
use crate::entry::ProviderEntry;
use crate::error::{describe, LlmError, TimeoutPhase};
use crate::keys::KeyResolver;
use crate::types::{ChatRequest, ChatResponse, StreamEvent};
use crate::wire::{self, Decoder, SseDecoder};
use reqwest::header::{HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use std::sync::Arc;
use warren_types::ProviderFamily;

/// The most of an error body kept for the message.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
/// The largest one-shot body accepted.
const FULL_BODY_LIMIT: usize = 32 * 1024 * 1024;

/// Calls one provider entry.
#[derive(Clone)]
pub struct ProviderClient {
    entry: ProviderEntry,
    url: String,
    http: reqwest::Client,
    keys: Arc<dyn KeyResolver>,
}

impl std::fmt::Debug for ProviderClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderClient")
            .field("entry", &self.entry)
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl ProviderClient {
    /// A client for `entry` sharing `http`'s connection pool.
    pub(crate) fn new(
        entry: ProviderEntry,
        http: reqwest::Client,
        keys: Arc<dyn KeyResolver>,
    ) -> Self {
        ProviderClient {
            url: entry.url(),
            entry,
            http,
            keys,
        }
    }

    /// The entry this client calls.
    pub fn entry(&self) -> &ProviderEntry {
        &self.entry
    }

    /// The request URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends `req` and returns the complete answer. Stream events (text and tool-call pieces,
    /// then usage) go to `on_event` as they arrive; for a one-shot answer they are sent after
    /// it is parsed. Dropping the future cancels the request.
    pub async fn chat(
        &self,
        req: &ChatRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ChatResponse, LlmError> {
        // No error leaves with a secret in its text (the key this client sent, echoed back).
        self.chat_once(req, on_event)
            .await
            .map_err(LlmError::redacted)
    }

    async fn chat_once(
        &self,
        req: &ChatRequest,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let key = self.api_key()?;
        let body = match self.entry.family {
            ProviderFamily::Openai => wire::openai::body(&self.entry, req),
            ProviderFamily::Anthropic => wire::anthropic::body(&self.entry, req),
            ProviderFamily::Ollama => wire::ollama::body(&self.entry, req),
        };
        let bytes = serde_json::to_vec(&body).map_err(|e| LlmError::InvalidRequest {
            entry: self.entry.reference.clone(),
            detail: format!("cannot encode the request body: {e}"),
        })?;
        tracing::debug!(
            provider = %self.entry.reference,
            url = %self.url,
            stream = req.stream,
            tools = req.tools.len(),
            "provider request"
        );
        let response = self.send(bytes, key.as_deref(), req.stream).await?;
        let status = response.status();
        if !status.is_success() {
            let body = self.read_limited(response, ERROR_BODY_LIMIT, true).await?;
            return Err(LlmError::Http {
                entry: self.entry.reference.clone(),
                url: self.url.clone(),
                status: status.as_u16(),
                body: wire::error_message(&body),
            });
        }
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let mut asm = Assembler::default();
        // follow what the server sent: some compatible servers ignore `stream`
        let streamed = is_sse || (req.stream && self.entry.family == ProviderFamily::Ollama);
        if streamed {
            self.decode_stream(response, &mut asm, on_event).await?;
        } else {
            let body = self.read_limited(response, FULL_BODY_LIMIT, false).await?;
            let parsed = match self.entry.family {
                ProviderFamily::Openai => wire::openai::parse_full(&body, &mut asm),
                ProviderFamily::Anthropic => wire::anthropic::parse_full(&body, &mut asm),
                ProviderFamily::Ollama => wire::ollama::parse_full(&body, &mut asm),
            };
            parsed.map_err(|e| self.decode_error(e))?;
            if asm.overflowed() {
                return Err(self.too_large());
            }
            asm.drain_events().for_each(&mut *on_event);
        }
        let mut resp = asm
            .finish(&self.entry.reference, &self.entry.model)
            .map_err(|e| self.decode_error(e))?;
        resp.cost_usd = self.entry.prices.cost_usd(resp.usage);
        on_event(StreamEvent::Usage {
            usage: resp.usage,
            cost_usd: resp.cost_usd,
        });
        Ok(resp)
    }

    /// The shared HTTP client this entry uses.
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// The API key from the first configured source that has one; `None` when the entry names
    /// no source.
    pub(crate) fn api_key(&self) -> Result<Option<String>, LlmError> {
        if self.entry.key_sources.is_empty() {
            return Ok(None);
        }
        for source in &self.entry.key_sources {
            if let Some(k) = self.keys.resolve(source).filter(|k| !k.trim().is_empty()) {
                // Known to the process from now on, so that no text carries it out.
                warren_types::redact::register(&k);
                return Ok(Some(k));
            }
        }
        let tried: Vec<String> = self
            .entry
            .key_sources
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        Err(LlmError::NoApiKey {
            entry: self.entry.reference.clone(),
            detail: format!("{} has no value", tried.join(", nor ")),
        })
    }

    async fn send(
        &self,
        body: Vec<u8>,
        key: Option<&str>,
        stream: bool,
    ) -> Result<reqwest::Response, LlmError> {
        let mut rb = self
            .http
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        let accept = match (stream, self.entry.family) {
            (false, _) => "application/json",
            (true, ProviderFamily::Ollama) => "application/x-ndjson",
            (true, _) => "text/event-stream",
        };
        rb = rb.header(ACCEPT, accept);
        match self.entry.family {
            ProviderFamily::Anthropic => {
                rb = rb.header("anthropic-version", wire::anthropic::API_VERSION);
                if let Some(k) = key {
                    rb = rb.header("x-api-key", self.header_value(k)?);
                }
            }
            ProviderFamily::Openai | ProviderFamily::Ollama => {
                if let Some(k) = key {
                    rb = rb.header(AUTHORIZATION, self.header_value(&format!("Bearer {k}"))?);
                }
            }
        }
        match tokio::time::timeout(self.entry.timeout, rb.send()).await {
            Err(_) => Err(self.timeout(TimeoutPhase::Response)),
            Ok(Err(e)) if e.is_timeout() => Err(self.timeout(TimeoutPhase::Response)),
            Ok(Err(e)) => Err(LlmError::Unreachable {
                entry: self.entry.reference.clone(),
                url: self.url.clone(),
                detail: describe(&e),
            }),
            Ok(Ok(r)) => Ok(r),
        }
    }

    pub(crate) fn header_value(&self, v: &str) -> Result<HeaderValue, LlmError> {
        let mut hv = HeaderValue::from_str(v).map_err(|_| LlmError::InvalidRequest {
            entry: self.entry.reference.clone(),
            detail: "the API key contains characters not allowed in an HTTP header".into(),
        })?;
        hv.set_sensitive(true);
        Ok(hv)
    }

    fn timeout(&self, phase: TimeoutPhase) -> LlmError {
        LlmError::Timeout {
            entry: self.entry.reference.clone(),
            url: self.url.clone(),
            after: self.entry.timeout,
            phase,
        }
    }

    fn decode_error(&self, e: DecodeError) -> LlmError {
        let (entry, url) = (self.entry.reference.clone(), self.url.clone());
        match e {
            DecodeError::Malformed(detail) => LlmError::MalformedResponse { entry, url, detail },
            DecodeError::Interrupted(detail) => LlmError::StreamInterrupted { entry, url, detail },
            DecodeError::Provider { kind, message } => LlmError::ProviderError {
                entry,
                url,
                kind,
                message,
            },
        }
    }

    /// The next body chunk, within the entry's timeout.
    async fn next_chunk(
        &self,
        response: &mut reqwest::Response,
        received: usize,
    ) -> Result<Option<bytes::Bytes>, LlmError> {
        match tokio::time::timeout(self.entry.timeout, response.chunk()).await {
            Err(_) => Err(self.timeout(TimeoutPhase::Body)),
            Ok(Err(e)) if e.is_timeout() => Err(self.timeout(TimeoutPhase::Body)),
            Ok(Err(e)) => Err(LlmError::StreamInterrupted {
                entry: self.entry.reference.clone(),
                url: self.url.clone(),
                detail: format!(
                    "the connection failed after {received} bytes of the body: {}",
                    describe(&e)
                ),
            }),
            Ok(Ok(c)) => Ok(c),
        }
    }

    fn too_large(&self) -> LlmError {
        LlmError::MalformedResponse {
            entry: self.entry.reference.clone(),
            url: self.url.clone(),
            detail: format!(
                "the reply holds more than {} MiB of text and tool arguments; the rest was not read",
                crate::assemble::MAX_REPLY_BYTES / (1024 * 1024)
            ),
        }
    }

    /// Reads a whole body up to `limit` bytes. For error bodies (`lenient`), a failure to read
    /// keeps what arrived instead of failing.
    async fn read_limited(
        &self,
        mut response: reqwest::Response,
        limit: usize,
        lenient: bool,
    ) -> Result<Vec<u8>, LlmError> {
        let mut out = Vec::new();
        loop {
            match self.next_chunk(&mut response, out.len()).await {
                Ok(Some(c)) => {
                    out.extend_from_slice(&c);
                    if out.len() >= limit {
                        if lenient {
                            out.truncate(limit);
                            return Ok(out);
                        }
                        return Err(LlmError::MalformedResponse {
                            entry: self.entry.reference.clone(),
                            url: self.url.clone(),
                            detail: format!("the response body is larger than {limit} bytes"),
                        });
                    }
                }
                Ok(None) => return Ok(out),
                Err(_) if lenient => return Ok(out),
                Err(e) => return Err(e),
            }
        }
    }

    async fn decode_stream(
        &self,
        mut response: reqwest::Response,
        asm: &mut Assembler,
        on_event: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<(), LlmError> {
        let mut decoder: Box<dyn Decoder> = match self.entry.family {
            ProviderFamily::Openai => {
                Box::new(SseDecoder::new(wire::openai::StreamHandler::default()))
            }
            ProviderFamily::Anthropic => {
                Box::new(SseDecoder::new(wire::anthropic::StreamHandler::default()))
            }
            ProviderFamily::Ollama => Box::new(wire::ollama::NdjsonDecoder::default()),
        };
        let mut received = 0usize;
        loop {
            let chunk = match self.next_chunk(&mut response, received).await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(LlmError::StreamInterrupted { entry, url, detail }) => {
                    return Err(LlmError::StreamInterrupted {
                        entry,
                        url,
                        detail: format!("{detail} ({})", decoder.progress()),
                    })
                }
                Err(e) => return Err(e),
            };
            received += chunk.len();
            let fed = decoder.feed(&chunk, asm);
            asm.drain_events().for_each(&mut *on_event);
            fed.map_err(|e| self.decode_error(e))?;
            if asm.overflowed() {
                // Dropping the response closes the connection: the rest is never read.
                return Err(self.too_large());
            }
        }
        decoder.finish(asm).map_err(|e| self.decode_error(e))?;
        asm.drain_events().for_each(&mut *on_event);
        Ok(())
    }
}
