//! Choosing a model from the provider's own list (`warren providers models`, the window's
//! model picker and first-run flow), and finding a local Ollama server: the vendor's list read
//! with the key the route would use, its errors in plain words without a secret.

use crate::Warren;
use serde::Serialize;
use warren_types::{ApiError, ErrorCode, LlmErrorCode, ProviderFamily};

/// One model a provider offers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProviderModelView {
    /// The name a route's `model` takes.
    pub id: String,
    /// The vendor's human name, when it gives one (Anthropic).
    pub display_name: Option<String>,
    /// When it was created or last changed, as the vendor wrote it.
    pub created: Option<String>,
    /// Who publishes it (OpenAI's `owned_by`).
    pub owned_by: Option<String>,
    /// Size on disk, in words (`2.0 GB`), for a local Ollama model.
    pub size: Option<String>,
    /// Parameter count and quantisation of a local Ollama model (`3.2B Q4_K_M`).
    pub details: Option<String>,
}

/// A provider's model list, or why it could not be read.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProviderModelsView {
    /// The route asked (`family.alias`; `ollama` for the probe of an address).
    pub reference: String,
    /// The list URL.
    pub url: String,
    /// Whether the list was read.
    pub ok: bool,
    /// The models, in the vendor's order (OpenAI's by name).
    pub models: Vec<ProviderModelView>,
    /// The provider error code when it failed.
    pub error_code: Option<LlmErrorCode>,
    /// What went wrong, in plain words.
    pub error: Option<String>,
}

/// Whether an Ollama server answers, for the first-run flow.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct OllamaStatus {
    /// The address probed.
    pub uri: String,
    /// The configured route at that address, when there is one (`ollama.local`).
    pub route: Option<String>,
    /// Whether it answered.
    pub running: bool,
    /// The models pulled there (empty when it is not running).
    pub models: Vec<ProviderModelView>,
    /// One line for the user: "Ollama is running at …, 3 models" or what to do.
    pub message: String,
}

/// A byte count in words (decimal units, as Ollama prints them).
fn size_words(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    let mut v = bytes as f64;
    let mut unit = "B";
    for u in UNITS {
        if v < 1000.0 {
            break;
        }
        v /= 1000.0;
        unit = u;
    }
    if unit == "B" {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {unit}")
    }
}

fn view(p: warren_runtime::provider_models::ProviderModels) -> ProviderModelsView {
    ProviderModelsView {
        reference: p.reference,
        url: p.url,
        ok: p.ok,
        models: p
            .models
            .into_iter()
            .map(|m| ProviderModelView {
                id: m.id,
                display_name: m.display_name,
                created: m.created,
                owned_by: m.owned_by,
                size: m.size_bytes.map(size_words),
                details: m.details,
            })
            .collect(),
        error_code: p.error_code,
        error: p.error,
    }
}

/// "1 model" / "3 models".
fn models_words(n: usize) -> String {
    format!("{n} model{}", if n == 1 { "" } else { "s" })
}

impl Warren {
    /// The models the route `reference` offers, read from the vendor's list endpoint with the
    /// route's key. An unknown route is `not_found`; a failing request is a view with `ok:
    /// false` and the reason in words.
    pub async fn provider_models(&self, reference: &str) -> Result<ProviderModelsView, ApiError> {
        let cfg = self.load()?.config;
        if cfg.provider(reference).is_none() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("provider `{reference}` does not exist"),
            ));
        }
        let host = self.host().await?;
        let listed = host
            .provider_models(&cfg, reference)
            .await
            .map_err(|e| ApiError::new(ErrorCode::InvalidArgument, e.redacted().to_string()))?;
        Ok(view(listed))
    }

    /// Whether Ollama runs at `uri`, or (without one) at the first configured Ollama route's
    /// address, else at Ollama's default `http://127.0.0.1:11434`.
    pub async fn detect_ollama(&self, uri: Option<&str>) -> Result<OllamaStatus, ApiError> {
        let cfg = self.load()?.config;
        let routes: Vec<(String, String)> =
            cfg.providers
                .models
                .get(ProviderFamily::Ollama.as_str())
                .map(|entries| {
                    entries
                        .iter()
                        .map(|(alias, m)| {
                            let uri = m.uri.clone().unwrap_or_else(|| {
                                ProviderFamily::Ollama.default_uri().to_string()
                            });
                            (format!("ollama.{alias}"), uri)
                        })
                        .collect()
                })
                .unwrap_or_default();
        let uri = match uri.map(str::trim).filter(|u| !u.is_empty()) {
            Some(u) => u.trim_end_matches('/').to_string(),
            None => routes
                .first()
                .map(|(_, u)| u.trim_end_matches('/').to_string())
                .unwrap_or_else(|| ProviderFamily::Ollama.default_uri().to_string()),
        };
        if !(uri.starts_with("http://") || uri.starts_with("https://")) {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "the Ollama address `{uri}` is not an http:// or https:// address; write it \
                     whole, for example http://127.0.0.1:11434"
                ),
            ));
        }
        let route = routes
            .iter()
            .find(|(_, u)| u.trim_end_matches('/') == uri)
            .map(|(r, _)| r.clone());
        let host = self.host().await?;
        let listed = view(host.probe_ollama(&uri).await);
        let message = if listed.ok {
            match listed.models.len() {
                0 => format!(
                    "Ollama is running at {uri}, but has no models yet: `ollama pull llama3.2` \
                     fetches one"
                ),
                n => format!("Ollama is running at {uri}, {}", models_words(n)),
            }
        } else if listed.error_code == Some(LlmErrorCode::ProviderUnreachable)
            || listed.error_code == Some(LlmErrorCode::ProviderTimeout)
        {
            format!("Ollama was not found at {uri} — is `ollama serve` running?")
        } else {
            format!(
                "something answers at {uri}, but not as Ollama does: {}",
                listed.error.as_deref().unwrap_or("unknown error")
            )
        };
        Ok(OllamaStatus {
            uri,
            route,
            running: listed.ok,
            models: listed.models,
            message,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::size_words;
    use crate::Warren;
    use warren_testkit::fake_llm::{closed_port_uri, FakeLlm};
    use warren_types::{ErrorCode, ProviderFamily};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn ollama_is_found_with_its_models_or_named_missing_in_words() {
        let fake = FakeLlm::start(ProviderFamily::Ollama).unwrap();
        fake.set_models(["llama3.2:latest", "qwen2.5-coder:7b"]);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            format!(
                "[providers.models.ollama.local]\nmodel = \"llama3.2\"\nuri = \"{}\"\n",
                fake.uri()
            ),
        )
        .unwrap();
        let w = Warren::open(warren_config::InstallLayout::new(dir.path()));

        // Without an address: the configured Ollama route's.
        let s = w.detect_ollama(None).await.unwrap();
        assert!(s.running, "{s:?}");
        assert_eq!(s.route.as_deref(), Some("ollama.local"));
        assert_eq!(
            s.message,
            format!("Ollama is running at {}, 2 models", fake.uri())
        );
        assert_eq!(s.models[0].id, "llama3.2:latest");
        assert_eq!(s.models[0].size.as_deref(), Some("2.0 GB"));
        assert_eq!(s.models[0].details.as_deref(), Some("3.2B Q4_K_M"));
        let req = &fake.requests()[0];
        assert_eq!(
            (req.method.as_str(), req.path.as_str()),
            ("GET", "/api/tags")
        );

        let nowhere = closed_port_uri().unwrap();
        let s = w.detect_ollama(Some(&nowhere)).await.unwrap();
        assert!(!s.running);
        assert_eq!(s.route, None, "no route at that address");
        assert_eq!(
            s.message,
            format!("Ollama was not found at {nowhere} — is `ollama serve` running?")
        );

        let e = w.detect_ollama(Some("localhost:11434")).await.unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(e.message.contains("`localhost:11434`"), "{e:?}");
    }

    #[test]
    fn sizes_read_as_ollama_prints_them() {
        assert_eq!(size_words(512), "512 B");
        assert_eq!(size_words(2_019_393_189), "2.0 GB");
        assert_eq!(size_words(4_700_000_000), "4.7 GB");
        assert_eq!(size_words(274_302_450), "274.3 MB");
    }
}
