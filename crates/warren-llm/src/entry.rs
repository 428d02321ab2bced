//! One resolved provider entry: everything a client needs from `[providers.models.<f>.<a>]`.

use crate::error::LlmError;
use crate::keys::KeySource;
use crate::types::Prices;
use std::time::Duration;
use warren_types::{Config, ProviderFamily, ProviderModel};

/// A provider entry ready to be called. Fields are public so tests and callers can adjust them
/// (a sub-second timeout, another base URL) after resolving from config.
#[derive(Debug, Clone, PartialEq)]
pub struct ProviderEntry {
    /// `"family.alias"`, as referenced in config.
    pub reference: String,
    /// The wire protocol.
    pub family: ProviderFamily,
    /// The vendor model name.
    pub model: String,
    /// Base URL, without a trailing slash (`https://api.openai.com/v1`, ...).
    pub base_uri: String,
    /// Where the API key comes from, in the order tried; empty: send no key.
    pub key_sources: Vec<KeySource>,
    /// Time allowed to get the response headers, and then between two pieces of the body.
    pub timeout: Duration,
    /// Whether requests may carry the vendor's single-tool control.
    pub single_tool_control: bool,
    /// Prices for cost accounting.
    pub prices: Prices,
    /// The entry's own `fallbacks`, as written.
    pub fallbacks: Vec<String>,
}

impl ProviderEntry {
    /// Builds the entry `reference` from its config block.
    pub fn new(reference: &str, family: ProviderFamily, model: &ProviderModel) -> Self {
        let base = model
            .uri
            .clone()
            .unwrap_or_else(|| family.default_uri().to_string());
        let mut key_sources = Vec::new();
        if let Some(env) = &model.api_key_env {
            key_sources.push(KeySource::Env(env.clone()));
        }
        if let Some(secret) = &model.secret {
            key_sources.push(KeySource::Secret(secret.clone()));
        }
        ProviderEntry {
            reference: reference.to_string(),
            family,
            model: model.model.clone(),
            base_uri: base.trim_end_matches('/').to_string(),
            key_sources,
            timeout: Duration::from_secs(u64::from(model.timeout_secs.max(1))),
            single_tool_control: model
                .single_tool_control
                .unwrap_or_else(|| family_supports_single_tool(family)),
            prices: Prices {
                input_per_mtok: model.input_cost_per_mtok,
                output_per_mtok: model.output_cost_per_mtok,
            },
            fallbacks: model.fallbacks.clone(),
        }
    }

    /// Looks `reference` up in `config`. `referenced_by` names the entry whose fallbacks
    /// mention it, for the error message.
    pub fn from_config(
        config: &Config,
        reference: &str,
        referenced_by: Option<&str>,
    ) -> Result<Self, LlmError> {
        let unknown = |detail: String| LlmError::UnknownProvider {
            reference: reference.to_string(),
            referenced_by: referenced_by.map(str::to_string),
            detail,
        };
        let Some((family, alias)) = reference.split_once('.') else {
            return Err(unknown(
                "expected \"family.alias\" (e.g. \"openai.main\")".into(),
            ));
        };
        if ProviderFamily::from_name(family).is_none() {
            return Err(unknown(format!(
                "unknown family {family:?} (expected openai, anthropic or ollama)"
            )));
        }
        match config.provider(reference) {
            Some((fam, model)) => Ok(Self::new(reference, fam, model)),
            None => Err(unknown(format!(
                "no [providers.models.{family}.{alias}] in the config"
            ))),
        }
    }

    /// The full request URL for this entry's family.
    pub fn url(&self) -> String {
        let path = match self.family {
            ProviderFamily::Openai => "/chat/completions",
            ProviderFamily::Anthropic => "/v1/messages",
            ProviderFamily::Ollama => "/api/chat",
        };
        format!("{}{}", self.base_uri, path)
    }
}

/// The family default of single-tool control (rules §6.4): OpenAI and Anthropic have it,
/// Ollama does not.
pub fn family_supports_single_tool(family: ProviderFamily) -> bool {
    match family {
        ProviderFamily::Openai | ProviderFamily::Anthropic => true,
        ProviderFamily::Ollama => false,
    }
}
