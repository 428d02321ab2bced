//! Provider errors: one enum with stable codes, each naming the route entry and URL involved.

use std::time::Duration;
use warren_types::LlmErrorCode;

/// Where a timeout struck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeoutPhase {
    /// Connecting, sending, or waiting for the response headers.
    Response,
    /// Waiting for the next piece of the body.
    Body,
}

impl std::fmt::Display for TimeoutPhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TimeoutPhase::Response => "waiting for the response",
            TimeoutPhase::Body => "waiting for the next part of the response body",
        })
    }
}

/// Everything that can go wrong calling a provider.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The server could not be reached (refused, DNS, TLS, reset before any response).
    #[error("provider {entry}: cannot reach {url}: {detail}{}", unreachable_hint(.entry))]
    Unreachable {
        /// Route entry, `"family.alias"`.
        entry: String,
        /// Request URL.
        url: String,
        /// The transport's own description.
        detail: String,
    },
    /// No answer within the entry's timeout.
    #[error("provider {entry}: timed out after {} ms {phase} from {url}", after.as_millis())]
    Timeout {
        /// Route entry.
        entry: String,
        /// Request URL.
        url: String,
        /// The timeout that expired.
        after: Duration,
        /// What the client was waiting for.
        phase: TimeoutPhase,
    },
    /// The server answered with an HTTP error status.
    #[error("provider {entry}: {url} answered HTTP {status}: {body}")]
    Http {
        /// Route entry.
        entry: String,
        /// Request URL.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The vendor's error message, or an excerpt of the body.
        body: String,
    },
    /// The response did not have the vendor's documented shape.
    #[error("provider {entry}: malformed response from {url}: {detail}")]
    MalformedResponse {
        /// Route entry.
        entry: String,
        /// Request URL.
        url: String,
        /// What was wrong and where (event number, field, excerpt).
        detail: String,
    },
    /// The response stopped before the vendor's end marker.
    #[error("provider {entry}: the response from {url} was cut off: {detail}")]
    StreamInterrupted {
        /// Route entry.
        entry: String,
        /// Request URL.
        url: String,
        /// What was received last, or the transport error.
        detail: String,
    },
    /// The vendor reported an error inside a successful (streamed) response.
    #[error("provider {entry}: {url} reported an error in the stream: {kind}: {message}")]
    ProviderError {
        /// Route entry.
        entry: String,
        /// Request URL.
        url: String,
        /// The vendor's error type (`overloaded_error`, ...), or `error`.
        kind: String,
        /// The vendor's message.
        message: String,
    },
    /// The entry names an API key source that has no value.
    #[error("provider {entry}: no API key: {detail}")]
    NoApiKey {
        /// Route entry.
        entry: String,
        /// Which sources were tried.
        detail: String,
    },
    /// A `"family.alias"` reference does not name a provider entry.
    #[error("unknown provider {reference}{}: {detail}", referenced_by.as_deref().map(|r| format!(" (a fallback of {r})")).unwrap_or_default())]
    UnknownProvider {
        /// The reference as written.
        reference: String,
        /// The entry whose `fallbacks` named it, if any.
        referenced_by: Option<String>,
        /// What is wrong with it.
        detail: String,
    },
    /// The request could not be built or sent for a reason other than the network.
    #[error("provider {entry}: invalid request: {detail}")]
    InvalidRequest {
        /// Route entry (empty for client set-up errors).
        entry: String,
        /// What is wrong.
        detail: String,
    },
}

impl LlmError {
    /// The stable machine-readable code.
    pub fn code(&self) -> LlmErrorCode {
        match self {
            LlmError::Unreachable { .. } => LlmErrorCode::ProviderUnreachable,
            LlmError::Timeout { .. } => LlmErrorCode::ProviderTimeout,
            LlmError::Http { .. } => LlmErrorCode::ProviderHttp,
            LlmError::MalformedResponse { .. } => LlmErrorCode::MalformedResponse,
            LlmError::StreamInterrupted { .. } => LlmErrorCode::StreamInterrupted,
            LlmError::ProviderError { .. } => LlmErrorCode::ProviderError,
            LlmError::NoApiKey { .. } => LlmErrorCode::NoApiKey,
            LlmError::UnknownProvider { .. } => LlmErrorCode::UnknownProvider,
            LlmError::InvalidRequest { .. } => LlmErrorCode::InvalidRequest,
        }
    }

    /// True when the route should try its next entry: connection errors, timeouts, HTTP 429
    /// and 5xx (rules §6.5). Other errors are final.
    pub fn moves_to_fallback(&self) -> bool {
        match self {
            LlmError::Unreachable { .. } | LlmError::Timeout { .. } => true,
            LlmError::Http { status, .. } => *status == 429 || (500..600).contains(status),
            _ => false,
        }
    }

    /// The route entry the error is about, when there is one.
    pub fn entry(&self) -> Option<&str> {
        match self {
            LlmError::Unreachable { entry, .. }
            | LlmError::Timeout { entry, .. }
            | LlmError::Http { entry, .. }
            | LlmError::MalformedResponse { entry, .. }
            | LlmError::StreamInterrupted { entry, .. }
            | LlmError::ProviderError { entry, .. }
            | LlmError::NoApiKey { entry, .. }
            | LlmError::InvalidRequest { entry, .. } => Some(entry),
            LlmError::UnknownProvider { .. } => None,
        }
    }

    /// The error with every registered secret removed from its text (a vendor that echoes the
    /// key it was sent, a URL carrying one). Every field is named, so a new one is not missed.
    pub fn redacted(mut self) -> Self {
        use warren_types::redact::redact_string as r;
        match &mut self {
            LlmError::Unreachable { entry, url, detail }
            | LlmError::MalformedResponse { entry, url, detail }
            | LlmError::StreamInterrupted { entry, url, detail } => {
                r(entry);
                r(url);
                r(detail);
            }
            LlmError::Timeout {
                entry,
                url,
                after: _,
                phase: _,
            } => {
                r(entry);
                r(url);
            }
            LlmError::Http {
                entry,
                url,
                status: _,
                body,
            } => {
                r(entry);
                r(url);
                r(body);
            }
            LlmError::ProviderError {
                entry,
                url,
                kind,
                message,
            } => {
                r(entry);
                r(url);
                r(kind);
                r(message);
            }
            LlmError::NoApiKey { entry, detail } | LlmError::InvalidRequest { entry, detail } => {
                r(entry);
                r(detail);
            }
            LlmError::UnknownProvider {
                reference,
                referenced_by,
                detail,
            } => {
                r(reference);
                if let Some(b) = referenced_by {
                    r(b);
                }
                r(detail);
            }
        }
        self
    }

    /// The HTTP status, for `provider_http`.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            LlmError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }
}

/// What to check when a route's server cannot be reached: for an Ollama route, whether Ollama
/// runs (the window and the CLI show the same words, since both show this message).
fn unreachable_hint(entry: &str) -> &'static str {
    if entry.starts_with("ollama.") {
        " (is `ollama serve` running?)"
    } else {
        ""
    }
}

/// Cuts `text` to at most `max` characters, marking the cut.
pub(crate) fn excerpt(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// A transport error with its chain of causes, e.g. "error sending request: connection refused".
pub(crate) fn describe(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !out.contains(&s_text) {
            out.push_str(": ");
            out.push_str(&s_text);
        }
        source = s.source();
    }
    out
}
