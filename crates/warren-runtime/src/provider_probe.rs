//! "Test" for a provider route: one small call to that entry alone (no fallbacks), with the
//! key the route would use, answering with the model's words or the vendor's error in plain
//! words.

use crate::host::Host;
use std::time::{Duration, Instant};
use warren_llm::{ChatRequest, LlmError, Message, ProviderEntry};
use warren_types::ProviderTestView;

/// The longest a test call may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

pub(crate) fn plain_words(e: &LlmError) -> String {
    match e {
        LlmError::Http { status, body, .. } => {
            let what = match status {
                401 | 403 => "the provider refused the API key",
                404 => "the provider does not know this model or address",
                429 => "the provider is rate-limiting this key (or its quota is used up)",
                400 | 422 => "the provider rejected the request",
                s if *s >= 500 => "the provider had an internal error",
                _ => "the provider answered with an error",
            };
            format!("{what} (HTTP {status}): {body}")
        }
        LlmError::Unreachable { url, detail, .. } => {
            format!("cannot reach {url}: {detail}")
        }
        LlmError::Timeout { .. } => format!("no answer in time: {e}"),
        LlmError::NoApiKey { detail, .. } => format!("no API key is set for this route: {detail}"),
        other => other.to_string(),
    }
}

impl Host {
    /// Calls the route entry `reference` once with a tiny prompt and reports the outcome. An
    /// unknown entry is an error; a failing call is a probe with `ok: false`.
    pub async fn probe_provider(
        &self,
        config: &warren_types::Config,
        reference: &str,
    ) -> Result<ProviderTestView, LlmError> {
        let entry = ProviderEntry::from_config(config, reference, None)?;
        let client = self.kit().providers.client(entry);
        let req = ChatRequest {
            system: String::new(),
            messages: vec![Message::User {
                content: "Reply with the single word: ok".into(),
            }],
            tools: Vec::new(),
            single_tool: false,
            max_tokens: Some(16),
            forbid_tool_calls: false,
            stream: false,
        };
        let started = Instant::now();
        let outcome = tokio::time::timeout(PROBE_TIMEOUT, client.chat(&req, &mut |_| {})).await;
        let duration_ms = u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX);
        let (ok, answer, error_code, error) = match outcome {
            Ok(Ok(r)) => (true, Some(r.text), None, None),
            Ok(Err(e)) => (false, None, Some(e.code()), Some(plain_words(&e))),
            Err(_) => (
                false,
                None,
                Some(warren_types::LlmErrorCode::ProviderTimeout),
                Some(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
            ),
        };
        Ok(ProviderTestView {
            reference: reference.to_string(),
            model: client.entry().model.clone(),
            url: client.url().to_string(),
            ok,
            answer,
            error_code,
            error,
            duration_ms,
        })
    }
}
