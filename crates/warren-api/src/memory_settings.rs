//! The install's memory backends (`[memory]`) from the window and the CLI (`warren memory
//! backends`): the install-wide default backend and each backend's connection settings,
//! previewed through the validator with the config diff, checked by opening every backend the
//! edited config would use the way an agent opens it, and saved only when that check passes.

use crate::profiles::{set_field, FieldValue, ProfilePreview};
use crate::Warren;
use serde::{Deserialize, Serialize};
use std::time::Instant;
use warren_config::ConfigDocument;
use warren_memory::MemoryStores;
use warren_types::{ApiError, Config, ErrorCode, MemoryBackendKind};

/// The `[memory]` settings as they are now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MemorySettingsView {
    /// The install-wide default backend.
    pub backend: MemoryBackendKind,
    /// `[memory.sqlite] path` (the default file when unset).
    pub sqlite_path: Option<String>,
    /// The SQLite file in use.
    pub sqlite_effective_path: String,
    /// `[memory.postgres] url`.
    pub postgres_url: Option<String>,
    /// `[memory.postgres] schema`.
    pub postgres_schema: Option<String>,
    /// `[memory.qdrant] url`.
    pub qdrant_url: Option<String>,
    /// `[memory.qdrant] collection`.
    pub qdrant_collection: Option<String>,
    /// `[memory.qdrant] api_key_env`.
    pub qdrant_api_key_env: Option<String>,
    /// `[memory.lucid] command`.
    pub lucid_command: Option<String>,
    /// The backends the agents use (their own or the default), each with its agents.
    pub in_use: Vec<BackendUse>,
}

/// One backend and the agents that keep their memory in it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct BackendUse {
    /// The backend.
    pub backend: MemoryBackendKind,
    /// Its agents, by alias.
    pub agents: Vec<String>,
}

/// A change of `[memory]`: a field left out stays as it is; an empty text removes the key (its
/// default applies).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MemorySettingsInput {
    /// The install-wide default backend.
    pub backend: Option<MemoryBackendKind>,
    /// `[memory.sqlite] path`.
    pub sqlite_path: Option<String>,
    /// `[memory.postgres] url`.
    pub postgres_url: Option<String>,
    /// `[memory.postgres] schema`.
    pub postgres_schema: Option<String>,
    /// `[memory.qdrant] url`.
    pub qdrant_url: Option<String>,
    /// `[memory.qdrant] collection`.
    pub qdrant_collection: Option<String>,
    /// `[memory.qdrant] api_key_env`.
    pub qdrant_api_key_env: Option<String>,
    /// `[memory.lucid] command`.
    pub lucid_command: Option<String>,
}

/// The connection check of one backend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct MemoryCheckView {
    /// The backend opened.
    pub backend: MemoryBackendKind,
    /// Whether it opened.
    pub ok: bool,
    /// What went wrong, naming the setting, when it did not.
    pub error: Option<String>,
    /// How long opening took, in milliseconds.
    pub duration_ms: u32,
}

fn apply(doc: &mut ConfigDocument, input: &MemorySettingsInput) -> Result<(), ApiError> {
    let text = |doc: &mut ConfigDocument, path: &[&str], v: &Option<String>| match v.as_deref() {
        None => Ok(()),
        Some(t) if t.trim().is_empty() => doc
            .remove(path)
            .map(|_| ())
            .map_err(|e| ApiError::new(ErrorCode::InvalidArgument, e.to_string())),
        Some(t) => set_field(doc, path, &FieldValue::Text(t.trim().to_string())),
    };
    if let Some(b) = input.backend {
        set_field(
            doc,
            &["memory", "backend"],
            &FieldValue::Text(b.as_str().to_string()),
        )?;
    }
    text(doc, &["memory", "sqlite", "path"], &input.sqlite_path)?;
    text(doc, &["memory", "postgres", "url"], &input.postgres_url)?;
    text(
        doc,
        &["memory", "postgres", "schema"],
        &input.postgres_schema,
    )?;
    text(doc, &["memory", "qdrant", "url"], &input.qdrant_url)?;
    text(
        doc,
        &["memory", "qdrant", "collection"],
        &input.qdrant_collection,
    )?;
    text(
        doc,
        &["memory", "qdrant", "api_key_env"],
        &input.qdrant_api_key_env,
    )?;
    text(doc, &["memory", "lucid", "command"], &input.lucid_command)?;
    Ok(())
}

/// The backends `cfg`'s agents use (their own or the default), each with its agents.
fn in_use(cfg: &Config) -> Vec<BackendUse> {
    let mut uses: Vec<BackendUse> = Vec::new();
    for (alias, agent) in &cfg.agents {
        let kind = agent.memory.backend.unwrap_or(cfg.memory.backend);
        match uses.iter_mut().find(|u| u.backend == kind) {
            Some(u) => u.agents.push(alias.clone()),
            None => uses.push(BackendUse {
                backend: kind,
                agents: vec![alias.clone()],
            }),
        }
    }
    uses.sort_by_key(|u| u.backend.as_str());
    uses
}

impl Warren {
    /// The `[memory]` settings and the backends in use.
    pub fn memory_settings(&self) -> Result<MemorySettingsView, ApiError> {
        let cfg = self.load()?.config;
        let m = &cfg.memory;
        Ok(MemorySettingsView {
            backend: m.backend,
            sqlite_path: m.sqlite.path.clone(),
            sqlite_effective_path: MemoryStores::new(self.layout().clone())
                .sqlite_path(&cfg)
                .display()
                .to_string(),
            postgres_url: m.postgres.url.clone(),
            postgres_schema: m.postgres.schema.clone(),
            qdrant_url: m.qdrant.url.clone(),
            qdrant_collection: m.qdrant.collection.clone(),
            qdrant_api_key_env: m.qdrant.api_key_env.clone(),
            lucid_command: m.lucid.command.clone(),
            in_use: in_use(&cfg),
        })
    }

    /// What saving `input` would change in `config.toml`, with the validator's findings.
    pub fn preview_memory_settings(
        &self,
        input: &MemorySettingsInput,
    ) -> Result<ProfilePreview, ApiError> {
        self.preview_config_edit(|doc| apply(doc, input))
    }

    /// Opens every shared backend the edited config would use (the default, and each agent's
    /// own) the way an agent opens it, and reports each. Opening creates Warren's tables (or
    /// collection) in a backend that lacks them, as an agent's first turn would. Markdown and
    /// none need no connection and are reported as they are.
    pub async fn check_memory_settings(
        &self,
        input: &MemorySettingsInput,
    ) -> Result<Vec<MemoryCheckView>, ApiError> {
        let (_, _, parsed) = self.edited_config(|doc| apply(doc, input))?;
        let cfg = parsed.map_err(|issues| {
            ApiError::new(
                ErrorCode::InvalidConfig,
                "the edited config is not valid; fix it before checking the connection",
            )
            .with_details(
                issues
                    .iter()
                    .map(|i| format!("{}: {}", i.path, i.message))
                    .collect(),
            )
        })?;
        let mut kinds: Vec<MemoryBackendKind> = in_use(&cfg).iter().map(|u| u.backend).collect();
        if !kinds.contains(&cfg.memory.backend) {
            kinds.push(cfg.memory.backend);
        }
        let vars = self.env.vars.clone();
        let stores = MemoryStores::new(self.layout().clone())
            .with_env(std::sync::Arc::new(move |k: &str| vars.get(k).cloned()));
        let mut out = Vec::new();
        for kind in kinds {
            let started = Instant::now();
            let result = match kind {
                MemoryBackendKind::Markdown | MemoryBackendKind::None => Ok(()),
                _ => stores.shared_store(&cfg, kind).await.map(|_| ()),
            };
            out.push(MemoryCheckView {
                backend: kind,
                ok: result.is_ok(),
                error: result.err().map(|e| e.to_string()),
                duration_ms: u32::try_from(started.elapsed().as_millis()).unwrap_or(u32::MAX),
            });
        }
        stores.close().await;
        Ok(out)
    }

    /// Saves `input` once the edited config validates and every backend it would use opens;
    /// otherwise nothing is written and the error says which backend failed and why.
    pub async fn save_memory_settings(
        &self,
        input: &MemorySettingsInput,
    ) -> Result<MemorySettingsView, ApiError> {
        let checks = self.check_memory_settings(input).await?;
        let failed: Vec<&MemoryCheckView> = checks.iter().filter(|c| !c.ok).collect();
        if !failed.is_empty() {
            let names: Vec<&str> = failed.iter().map(|c| c.backend.as_str()).collect();
            return Err(ApiError::new(
                ErrorCode::Storage,
                format!(
                    "the memory settings were not saved: {} did not open",
                    names.join(", ")
                ),
            )
            .with_details(
                failed
                    .iter()
                    .map(|c| {
                        format!(
                            "{}: {}",
                            c.backend.as_str(),
                            c.error.as_deref().unwrap_or("did not open")
                        )
                    })
                    .collect(),
            ));
        }
        self.save_config_edit(|doc| apply(doc, input))?;
        tracing::info!("memory settings saved");
        self.memory_settings()
    }
}
