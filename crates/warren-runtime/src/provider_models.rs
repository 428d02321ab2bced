//! The models a provider route offers, from the vendor's own list (with the key the route
//! would use), and whether an Ollama server answers at an address: for choosing a route's
//! model instead of typing it, and for the first-run flow's "Ollama is running" line.

use crate::host::Host;
use crate::provider_probe::plain_words;
use std::time::Duration;
use warren_llm::{LlmError, ModelInfo, ProviderEntry};
use warren_types::ProviderFamily;

/// How long the Ollama probe waits (a local server answers at once, or is not there).
const OLLAMA_PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What one model list request gave.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderModels {
    /// The route entry asked (`"family.alias"`).
    pub reference: String,
    /// The list URL.
    pub url: String,
    /// Whether the list was read.
    pub ok: bool,
    /// The models, in the vendor's order.
    pub models: Vec<ModelInfo>,
    /// The error code when it failed.
    pub error_code: Option<warren_types::LlmErrorCode>,
    /// What went wrong, in plain words (never with a secret in it).
    pub error: Option<String>,
}

impl Host {
    /// Lists the models of the route entry `reference` (its own entry, no fallbacks). An
    /// unknown entry is an error; a failing request is a list with `ok: false`.
    pub async fn provider_models(
        &self,
        config: &warren_types::Config,
        reference: &str,
    ) -> Result<ProviderModels, LlmError> {
        let entry = ProviderEntry::from_config(config, reference, None)?;
        Ok(self.list_entry(entry).await)
    }

    /// Lists the models of an Ollama server at `uri` (no key): answers whether it runs.
    pub async fn probe_ollama(&self, uri: &str) -> ProviderModels {
        let entry = ProviderEntry {
            reference: "ollama".into(),
            family: ProviderFamily::Ollama,
            model: String::new(),
            base_uri: uri.trim().trim_end_matches('/').to_string(),
            key_sources: Vec::new(),
            timeout: OLLAMA_PROBE_TIMEOUT,
            single_tool_control: false,
            prices: Default::default(),
            fallbacks: Vec::new(),
        };
        self.list_entry(entry).await
    }

    async fn list_entry(&self, entry: ProviderEntry) -> ProviderModels {
        let reference = entry.reference.clone();
        let client = self.kit().providers.client(entry);
        let url = client.models_url();
        match client.list_models().await {
            Ok(models) => ProviderModels {
                reference,
                url,
                ok: true,
                models,
                error_code: None,
                error: None,
            },
            Err(e) => ProviderModels {
                reference,
                url,
                ok: false,
                models: Vec::new(),
                error_code: Some(e.code()),
                error: Some(plain_words(&e)),
            },
        }
    }
}
