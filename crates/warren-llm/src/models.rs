//! The models a provider offers, from each vendor's own list endpoint: OpenAI (and compatible
//! servers) `GET /v1/models` with the bearer key, Anthropic `GET /v1/models` with `x-api-key`
//! and `anthropic-version` (every page), Ollama `GET /api/tags` (the models pulled locally).

use crate::client::ProviderClient;
use crate::error::{describe, excerpt, LlmError, TimeoutPhase};
use reqwest::header::{ACCEPT, AUTHORIZATION};
use serde::Deserialize;
use warren_types::ProviderFamily;

/// The largest model list body accepted.
const LIST_BODY_LIMIT: usize = 8 * 1024 * 1024;
/// Anthropic pages followed at most (1000 models each).
const MAX_PAGES: usize = 20;

/// One model a provider offers, as its list endpoint describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// The name to put in a route's `model`.
    pub id: String,
    /// A human name, when the vendor gives one (Anthropic's `display_name`).
    pub display_name: Option<String>,
    /// When the model was created or last changed, as the vendor wrote it (RFC 3339, or Unix
    /// seconds for OpenAI).
    pub created: Option<String>,
    /// Who publishes it (OpenAI's `owned_by`).
    pub owned_by: Option<String>,
    /// Size on disk in bytes (Ollama).
    pub size_bytes: Option<u64>,
    /// Parameter count and quantisation (Ollama's `details`), e.g. `3.2B Q4_K_M`.
    pub details: Option<String>,
}

#[derive(Deserialize)]
struct OpenaiList {
    data: Vec<OpenaiModel>,
}

#[derive(Deserialize)]
struct OpenaiModel {
    id: String,
    #[serde(default)]
    created: Option<i64>,
    #[serde(default)]
    owned_by: Option<String>,
}

#[derive(Deserialize)]
struct AnthropicPage {
    data: Vec<AnthropicModel>,
    #[serde(default)]
    has_more: bool,
    #[serde(default)]
    last_id: Option<String>,
}

#[derive(Deserialize)]
struct AnthropicModel {
    id: String,
    #[serde(default)]
    display_name: Option<String>,
    #[serde(default)]
    created_at: Option<String>,
}

#[derive(Deserialize)]
struct OllamaTags {
    models: Vec<OllamaModel>,
}

#[derive(Deserialize)]
struct OllamaModel {
    name: String,
    #[serde(default)]
    modified_at: Option<String>,
    #[serde(default)]
    size: Option<u64>,
    #[serde(default)]
    details: Option<OllamaDetails>,
}

#[derive(Deserialize)]
struct OllamaDetails {
    #[serde(default)]
    parameter_size: Option<String>,
    #[serde(default)]
    quantization_level: Option<String>,
}

impl ProviderClient {
    /// The URL of the vendor's model list for this entry.
    pub fn models_url(&self) -> String {
        let base = &self.entry().base_uri;
        match self.entry().family {
            ProviderFamily::Openai => format!("{base}/models"),
            ProviderFamily::Anthropic => format!("{base}/v1/models"),
            ProviderFamily::Ollama => format!("{base}/api/tags"),
        }
    }

    /// The models the provider offers, in the vendor's order (OpenAI's sorted by name). Errors
    /// name the entry and URL and never carry a secret.
    pub async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        self.list_models_inner().await.map_err(LlmError::redacted)
    }

    async fn list_models_inner(&self) -> Result<Vec<ModelInfo>, LlmError> {
        let key = self.api_key()?;
        let url = self.models_url();
        match self.entry().family {
            ProviderFamily::Openai => {
                let body = self.get(&url, key.as_deref()).await?;
                let list: OpenaiList = self.parse(&url, &body, "the model list")?;
                let mut out: Vec<ModelInfo> = list
                    .data
                    .into_iter()
                    .map(|m| ModelInfo {
                        id: m.id,
                        display_name: None,
                        created: m.created.map(|c| c.to_string()),
                        owned_by: m.owned_by,
                        size_bytes: None,
                        details: None,
                    })
                    .collect();
                out.sort_by(|a, b| a.id.cmp(&b.id));
                Ok(out)
            }
            ProviderFamily::Anthropic => {
                let mut out = Vec::new();
                let mut after: Option<String> = None;
                for _ in 0..MAX_PAGES {
                    let page_url = match &after {
                        Some(id) => format!("{url}?limit=1000&after_id={}", query_value(id)),
                        None => format!("{url}?limit=1000"),
                    };
                    let body = self.get(&page_url, key.as_deref()).await?;
                    let page: AnthropicPage = self.parse(&url, &body, "the model list")?;
                    out.extend(page.data.into_iter().map(|m| ModelInfo {
                        id: m.id,
                        display_name: m.display_name,
                        created: m.created_at,
                        owned_by: None,
                        size_bytes: None,
                        details: None,
                    }));
                    match (page.has_more, page.last_id) {
                        (true, Some(last)) => after = Some(last),
                        _ => break,
                    }
                }
                Ok(out)
            }
            ProviderFamily::Ollama => {
                let body = self.get(&url, key.as_deref()).await?;
                let tags: OllamaTags = self.parse(&url, &body, "the model list")?;
                Ok(tags
                    .models
                    .into_iter()
                    .map(|m| {
                        let details = m.details.and_then(|d| {
                            let parts: Vec<String> = [d.parameter_size, d.quantization_level]
                                .into_iter()
                                .flatten()
                                .filter(|s| !s.is_empty())
                                .collect();
                            (!parts.is_empty()).then(|| parts.join(" "))
                        });
                        ModelInfo {
                            id: m.name,
                            display_name: None,
                            created: m.modified_at,
                            owned_by: None,
                            size_bytes: m.size,
                            details,
                        }
                    })
                    .collect())
            }
        }
    }

    /// One GET with the family's auth headers; the body of a success, or the vendor's error.
    async fn get(&self, url: &str, key: Option<&str>) -> Result<Vec<u8>, LlmError> {
        let entry = self.entry();
        let mut rb = self.http().get(url).header(ACCEPT, "application/json");
        match entry.family {
            ProviderFamily::Anthropic => {
                rb = rb.header("anthropic-version", crate::wire::anthropic::API_VERSION);
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
        let timeout = |phase| LlmError::Timeout {
            entry: entry.reference.clone(),
            url: url.to_string(),
            after: entry.timeout,
            phase,
        };
        let response = match tokio::time::timeout(entry.timeout, rb.send()).await {
            Err(_) => return Err(timeout(TimeoutPhase::Response)),
            Ok(Err(e)) if e.is_timeout() => return Err(timeout(TimeoutPhase::Response)),
            Ok(Err(e)) => {
                return Err(LlmError::Unreachable {
                    entry: entry.reference.clone(),
                    url: url.to_string(),
                    detail: describe(&e),
                })
            }
            Ok(Ok(r)) => r,
        };
        let status = response.status();
        // Read at most the limit: a server that streams without end (or lies about its length)
        // costs no more than LIST_BODY_LIMIT bytes of memory.
        let body = match tokio::time::timeout(
            entry.timeout,
            read_bounded(response, LIST_BODY_LIMIT),
        )
        .await
        {
            Err(_) => return Err(timeout(TimeoutPhase::Body)),
            Ok(Err(e)) if status.is_success() => {
                return Err(LlmError::StreamInterrupted {
                    entry: entry.reference.clone(),
                    url: url.to_string(),
                    detail: describe(&e),
                })
            }
            Ok(Err(_)) => Some(Vec::new()),
            Ok(Ok(b)) => b,
        };
        let Some(body) = body else {
            return Err(LlmError::MalformedResponse {
                entry: entry.reference.clone(),
                url: url.to_string(),
                detail: format!("the model list is larger than {LIST_BODY_LIMIT} bytes"),
            });
        };
        if !status.is_success() {
            return Err(LlmError::Http {
                entry: entry.reference.clone(),
                url: url.to_string(),
                status: status.as_u16(),
                body: crate::wire::error_message(&body),
            });
        }
        Ok(body)
    }

    fn parse<T: serde::de::DeserializeOwned>(
        &self,
        url: &str,
        body: &[u8],
        what: &str,
    ) -> Result<T, LlmError> {
        serde_json::from_slice(body).map_err(|e| LlmError::MalformedResponse {
            entry: self.entry().reference.clone(),
            url: url.to_string(),
            detail: format!(
                "{what} is not the vendor's documented JSON ({e}): {:?}",
                excerpt(&String::from_utf8_lossy(body), 200)
            ),
        })
    }
}

/// The body of `response`, read chunk by chunk; `None` as soon as it exceeds `limit` bytes
/// (the rest is never read).
async fn read_bounded(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    let mut out = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if out.len() + chunk.len() > limit {
            return Ok(None);
        }
        out.extend_from_slice(&chunk);
    }
    Ok(Some(out))
}

/// `value` percent-encoded for a query string (a server-given id may hold `&`, `#` or spaces).
fn query_value(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod query_tests {
    #[test]
    fn a_server_given_id_is_encoded_for_the_next_page() {
        assert_eq!(super::query_value("claude-3-5"), "claude-3-5");
        assert_eq!(super::query_value("a&b#c d"), "a%26b%23c%20d");
    }
}
