//! Provider routes from the window and the CLI (`warren providers list | add | test | rm`):
//! add or change a `[providers.models.<family>.<alias>]` entry (its key goes to the secret
//! store, never into `config.toml`), remove one no agent or fallback uses, and test one with a
//! small call that answers with the model's words or the vendor's error in plain words.

use crate::profiles::{set_field, FieldValue, ProfilePreview};
use crate::{errors::config_error, settings::ProviderKeyView, Warren};
use serde::{Deserialize, Serialize};
use warren_config::{ConfigDocument, ConfigError};
use warren_types::{ApiError, ErrorCode, ProviderFamily};

/// A provider entry to add or change. Fields left out keep their current value (or the
/// default, for a new entry).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProviderInput {
    /// `"family.alias"`: family `openai` (also any OpenAI-compatible server), `anthropic` or
    /// `ollama`.
    pub reference: String,
    /// The vendor's model name.
    pub model: Option<String>,
    /// Base URL (for an OpenAI-compatible server, or a remote Ollama).
    pub uri: Option<String>,
    /// Entries to fall back to, in order.
    pub fallbacks: Option<Vec<String>>,
    /// Request timeout in seconds.
    pub timeout_secs: Option<u32>,
    /// Force the single-tool control on or off for this entry.
    pub single_tool_control: Option<bool>,
    /// Read the key from this environment variable instead of the secret store.
    pub api_key_env: Option<String>,
}

pub use warren_types::ProviderTestView;

fn invalid(m: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidArgument, m)
}

fn split(reference: &str) -> Result<(&str, &str), ApiError> {
    let (family, alias) = reference.split_once('.').ok_or_else(|| {
        invalid(format!(
            "`{reference}` is not a `family.alias` route (for example `openai.main`)"
        ))
    })?;
    if ProviderFamily::from_name(family).is_none() {
        return Err(invalid(format!(
            "unknown provider family `{family}` in `{reference}` (expected openai, anthropic or \
             ollama; an OpenAI-compatible server is `openai` with its `uri`)"
        )));
    }
    warren_types::validate_alias(alias)
        .map_err(|e| invalid(format!("provider alias `{alias}` in `{reference}`: {e}")))?;
    Ok((family, alias))
}

/// The secret name a route's key is stored under when the entry does not name one.
fn default_secret(family: &str, alias: &str) -> String {
    format!("{family}_{alias}_API_KEY").to_ascii_uppercase()
}

fn apply(
    doc: &mut ConfigDocument,
    input: &ProviderInput,
    secret: Option<&str>,
) -> Result<(), ApiError> {
    let (family, alias) = split(&input.reference)?;
    let set = |doc: &mut ConfigDocument, key: &str, v: FieldValue| {
        set_field(doc, &["providers", "models", family, alias, key], &v)
    };
    let exists = doc
        .document()
        .get("providers")
        .and_then(|p| p.get("models"))
        .and_then(|m| m.get(family))
        .and_then(|f| f.get(alias))
        .is_some();
    match (&input.model, exists) {
        (Some(m), _) => set(doc, "model", FieldValue::Text(m.clone()))?,
        (None, false) => {
            return Err(invalid(format!(
                "a new provider `{}` needs a model",
                input.reference
            )))
        }
        (None, true) => {}
    }
    if let Some(u) = &input.uri {
        set(doc, "uri", FieldValue::Text(u.clone()))?;
    }
    if let Some(f) = &input.fallbacks {
        set(doc, "fallbacks", FieldValue::List(f.clone()))?;
    }
    if let Some(t) = input.timeout_secs {
        set(doc, "timeout_secs", FieldValue::Number(f64::from(t)))?;
    }
    if let Some(s) = input.single_tool_control {
        set(doc, "single_tool_control", FieldValue::Bool(s))?;
    }
    if let Some(v) = &input.api_key_env {
        set(doc, "api_key_env", FieldValue::Text(v.clone()))?;
    }
    if let Some(s) = secret {
        set(doc, "secret", FieldValue::Text(s.to_string()))?;
    }
    Ok(())
}

impl Warren {
    /// What saving `input` would change in `config.toml`, with the validator's findings.
    pub fn preview_provider(&self, input: &ProviderInput) -> Result<ProfilePreview, ApiError> {
        self.preview_config_edit(|doc| apply(doc, input, None))
    }

    /// Adds or changes a provider entry. With `key`, the key is stored in the secret store
    /// (under the entry's `secret` name, or `<FAMILY>_<ALIAS>_API_KEY`, which the entry then
    /// names) only after the edited config validated, and before the config is written.
    pub fn save_provider(
        &self,
        input: &ProviderInput,
        key: Option<&str>,
    ) -> Result<ProviderKeyView, ApiError> {
        let (family, alias) = split(&input.reference)?;
        let key = key.map(str::trim);
        if key == Some("") {
            return Err(invalid("the API key is empty"));
        }
        let cfg = self.load()?.config;
        let secret = key.map(|_| {
            cfg.provider(&input.reference)
                .and_then(|(_, m)| m.secret.clone())
                .unwrap_or_else(|| default_secret(family, alias))
        });
        let preview = self.preview_config_edit(|doc| apply(doc, input, secret.as_deref()))?;
        if !preview.errors.is_empty() {
            let n = preview.errors.len();
            return Err(ApiError::new(
                ErrorCode::InvalidConfig,
                format!(
                    "provider `{}` was not saved: {n} problem{}",
                    input.reference,
                    if n == 1 { "" } else { "s" }
                ),
            )
            .with_details(
                preview
                    .errors
                    .iter()
                    .map(|i| format!("{}: {}", i.path, i.message))
                    .collect(),
            ));
        }
        if let (Some(k), Some(s)) = (key, secret.as_deref()) {
            self.set_secret(s, None, k)?;
        }
        self.save_config_edit(|doc| apply(doc, input, secret.as_deref()))?;
        tracing::info!(provider = %input.reference, key = key.is_some(), "provider saved");
        self.provider_keys()?
            .into_iter()
            .find(|p| p.reference == input.reference)
            .ok_or_else(|| ApiError::new(ErrorCode::Internal, "provider missing after saving"))
    }

    /// Removes a provider entry that no agent and no other entry's fallbacks use (refused
    /// with `denied`, naming them, otherwise). Its stored key is kept.
    pub fn remove_provider(&self, reference: &str) -> Result<(), ApiError> {
        let (family, alias) = split(reference)?;
        let cfg = self.load()?.config;
        if cfg.provider(reference).is_none() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("provider `{reference}` does not exist"),
            ));
        }
        let mut users: Vec<String> = cfg
            .agents
            .iter()
            .filter(|(_, a)| a.model_provider.as_deref() == Some(reference))
            .map(|(n, _)| format!("agents.{n}.model_provider"))
            .collect();
        for (fam, entries) in &cfg.providers.models {
            for (name, m) in entries {
                if m.fallbacks.iter().any(|f| f == reference) {
                    users.push(format!("providers.models.{fam}.{name}.fallbacks"));
                }
            }
        }
        if !users.is_empty() {
            return Err(ApiError::new(
                ErrorCode::Denied,
                format!(
                    "provider `{reference}` is still used by {}",
                    users.join(", ")
                ),
            )
            .with_details(users));
        }
        self.store
            .edit(|doc, _| {
                doc.remove(&["providers", "models", family, alias])
                    .map(|_| ())
                    .map_err(ConfigError::Edit)
            })
            .map_err(config_error)?;
        tracing::info!(provider = %reference, "provider removed");
        Ok(())
    }

    /// Calls the entry `reference` once with a tiny prompt (no fallbacks) and reports the
    /// answer or the vendor's error in plain words.
    pub async fn test_provider(&self, reference: &str) -> Result<ProviderTestView, ApiError> {
        let cfg = self.load()?.config;
        if cfg.provider(reference).is_none() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("provider `{reference}` does not exist"),
            ));
        }
        let host = self.host().await?;
        let p = host
            .probe_provider(&cfg, reference)
            .await
            .map_err(|e| invalid(e.to_string()))?;
        if p.ok {
            // The first-run flow ends by itself once an agent's route answered.
            if let Err(e) = self.record_answered(&p.reference) {
                tracing::warn!(provider = %p.reference, error = %e.message, "recording the answered test");
            }
        }
        Ok(p)
    }
}
