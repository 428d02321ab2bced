//! Routes: an agent's `model_provider` followed by that entry's own `fallbacks` (rules §6.5).
//! Connection errors, timeouts, 429 and 5xx move to the next entry; anything else is final.

use crate::client::ProviderClient;
use crate::error::LlmError;
use crate::types::{ChatRequest, ChatResponse, StreamEvent};
use serde::Serialize;
use warren_types::LlmErrorCode;

/// What happened while a route was being called, in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RouteEvent {
    /// A request to one route entry is about to be sent (the loop's `model_request`).
    Attempt {
        /// The route entry, `"family.alias"`.
        entry: String,
        /// 1-based attempt number within this call.
        attempt: u32,
        /// The request URL.
        url: String,
    },
    /// An attempt failed.
    AttemptFailed {
        /// The route entry.
        entry: String,
        /// 1-based attempt number.
        attempt: u32,
        /// The error's stable code.
        code: LlmErrorCode,
        /// The error message.
        message: String,
        /// True when the next entry will be tried.
        falls_back: bool,
    },
    /// A piece of the answer of the current attempt.
    Stream(StreamEvent),
}

/// An ordered list of provider entries tried one after another.
#[derive(Debug, Clone)]
pub struct Route {
    clients: Vec<ProviderClient>,
}

impl Route {
    /// A route over `clients`, in order. Callers normally get one from
    /// [`crate::Providers::route`].
    pub fn new(clients: Vec<ProviderClient>) -> Self {
        Route { clients }
    }

    /// The entries' clients, primary first.
    pub fn clients(&self) -> &[ProviderClient] {
        &self.clients
    }

    /// The entry references, primary first.
    pub fn references(&self) -> Vec<&str> {
        self.clients
            .iter()
            .map(|c| c.entry().reference.as_str())
            .collect()
    }

    /// True only if every reachable entry carries a single-tool control (rules §6.4); an empty
    /// route supports nothing.
    pub fn supports_single_tool(&self) -> bool {
        !self.clients.is_empty() && self.clients.iter().all(|c| c.entry().single_tool_control)
    }

    /// Calls the route: each entry in turn until one answers or an error is final. An entry
    /// that already streamed part of an answer is never replaced by the next one (the partial
    /// answer has been shown), so its error is final. Returns the last error when every entry
    /// failed; earlier failures were reported as `AttemptFailed`.
    pub async fn chat(
        &self,
        req: &ChatRequest,
        on_event: &mut (dyn FnMut(RouteEvent) + Send),
    ) -> Result<ChatResponse, LlmError> {
        let mut last = None;
        for (i, client) in self.clients.iter().enumerate() {
            let attempt = i as u32 + 1;
            let entry = client.entry().reference.clone();
            on_event(RouteEvent::Attempt {
                entry: entry.clone(),
                attempt,
                url: client.url().to_string(),
            });
            let mut streamed = false;
            let result = {
                let mut forward = |ev: StreamEvent| {
                    if !matches!(ev, StreamEvent::Usage { .. }) {
                        streamed = true;
                    }
                    on_event(RouteEvent::Stream(ev));
                };
                client.chat(req, &mut forward).await
            };
            match result {
                Ok(resp) => return Ok(resp),
                Err(err) => {
                    let falls_back =
                        err.moves_to_fallback() && !streamed && i + 1 < self.clients.len();
                    // A warning only when another route takes over; the last failure is the
                    // turn's, which its caller shows (once) — the file log keeps it at info.
                    if falls_back {
                        tracing::warn!(
                            provider = %entry,
                            attempt,
                            code = %err.code(),
                            falls_back,
                            "provider attempt failed: {err}"
                        );
                    } else {
                        tracing::info!(
                            provider = %entry,
                            attempt,
                            code = %err.code(),
                            falls_back,
                            "provider attempt failed: {err}"
                        );
                    }
                    on_event(RouteEvent::AttemptFailed {
                        entry,
                        attempt,
                        code: err.code(),
                        message: err.to_string(),
                        falls_back,
                    });
                    if !falls_back {
                        return Err(err);
                    }
                    last = Some(err);
                }
            }
        }
        Err(last.unwrap_or_else(|| LlmError::InvalidRequest {
            entry: String::new(),
            detail: "the route has no provider entries".into(),
        }))
    }
}
