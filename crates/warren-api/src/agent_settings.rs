//! The agent settings editor (the agent's detail view and `warren agents set | grant |
//! memory-grant`): an edit of one agent's entry is previewed through the real validator (the
//! findings at their dotted paths and a diff of `config.toml`), then saved atomically with only
//! the changed keys written, so comments and layout stay. Turns read the config when they
//! start, so a saved change applies to the agent's next turn.

use crate::profiles::{FieldValue, ProfilePreview};
use crate::Warren;
use serde::{Deserialize, Serialize};
use warren_config::ConfigDocument;
use warren_types::{AccessMode, AgentDetail, ApiError, Config, ErrorCode, MemoryBackendKind};

/// A setting of `[agents.<alias>]` the editor changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum AgentField {
    /// `risk_profile` (text, required).
    RiskProfile,
    /// `runtime_profile` (text; none = defaults).
    RuntimeProfile,
    /// `model_provider` ("family.alias"; none = no provider).
    ModelProvider,
    /// `memory.backend` (none = the install-wide backend).
    MemoryBackend,
    /// `enabled` (bool).
    Enabled,
    /// `delegates` (list of aliases).
    Delegates,
    /// `workspace.unrestricted_filesystem` (bool).
    UnrestrictedFilesystem,
}

impl AgentField {
    /// Every field, in the order the CLI lists them.
    pub const ALL: [AgentField; 7] = [
        AgentField::RiskProfile,
        AgentField::RuntimeProfile,
        AgentField::ModelProvider,
        AgentField::MemoryBackend,
        AgentField::Enabled,
        AgentField::Delegates,
        AgentField::UnrestrictedFilesystem,
    ];

    /// The CLI's name of the field.
    pub fn name(self) -> &'static str {
        match self {
            AgentField::RiskProfile => "risk_profile",
            AgentField::RuntimeProfile => "runtime_profile",
            AgentField::ModelProvider => "model_provider",
            AgentField::MemoryBackend => "memory_backend",
            AgentField::Enabled => "enabled",
            AgentField::Delegates => "delegates",
            AgentField::UnrestrictedFilesystem => "unrestricted_filesystem",
        }
    }

    /// The field named `name` (also accepts the dotted config keys `memory.backend` and
    /// `workspace.unrestricted_filesystem`).
    pub fn from_name(name: &str) -> Option<AgentField> {
        match name {
            "memory.backend" => Some(AgentField::MemoryBackend),
            "workspace.unrestricted_filesystem" => Some(AgentField::UnrestrictedFilesystem),
            _ => Self::ALL.into_iter().find(|f| f.name() == name),
        }
    }

    /// The keys under `[agents.<alias>]`.
    fn path(self) -> &'static [&'static str] {
        match self {
            AgentField::RiskProfile => &["risk_profile"],
            AgentField::RuntimeProfile => &["runtime_profile"],
            AgentField::ModelProvider => &["model_provider"],
            AgentField::MemoryBackend => &["memory", "backend"],
            AgentField::Enabled => &["enabled"],
            AgentField::Delegates => &["delegates"],
            AgentField::UnrestrictedFilesystem => &["workspace", "unrestricted_filesystem"],
        }
    }
}

/// One change of an agent's entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentChange {
    /// Set a field (none removes the key so its default applies).
    Set {
        /// Which field.
        field: AgentField,
        /// The new value.
        value: Option<FieldValue>,
    },
    /// Grant access on a sibling's workspace (none removes the grant).
    Grant {
        /// The sibling.
        peer: String,
        /// `read`, `write`, `read_write`, or none.
        access: Option<AccessMode>,
    },
    /// Grant reading a sibling's memory: every category (none) or exactly the listed ones;
    /// `remove` drops the grant.
    MemoryGrant {
        /// The sibling.
        peer: String,
        /// Exact category names, or none for all.
        categories: Option<Vec<String>>,
        /// Drop the grant instead.
        remove: bool,
    },
}

/// An edit of one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentEdit {
    /// The agent's alias.
    pub alias: String,
    /// The changes, applied in order.
    pub changes: Vec<AgentChange>,
}

/// A setting the editor shows disabled, with the reason.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DisabledSetting {
    /// What is disabled: `memory_categories`, or `memory_grant.<peer>`.
    pub setting: String,
    /// Why, in plain words.
    pub reason: String,
}

/// Everything the settings editor needs for one agent: its current values and the choices.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentSettingsView {
    /// The agent as it is now.
    pub agent: AgentDetail,
    /// Risk profile names.
    pub risk_profiles: Vec<String>,
    /// Runtime profile names.
    pub runtime_profiles: Vec<String>,
    /// Provider references ("family.alias").
    pub providers: Vec<String>,
    /// Every other agent (the peers a grant or delegate may name).
    pub peers: Vec<String>,
    /// Settings the agent's memory backend does not allow, with the reason.
    pub disabled: Vec<DisabledSetting>,
}

fn invalid(message: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidArgument, message)
}

fn access_value(m: AccessMode) -> &'static str {
    match m {
        AccessMode::Read => "read",
        AccessMode::Write => "write",
        AccessMode::ReadWrite => "read_write",
    }
}

fn apply(doc: &mut ConfigDocument, edit: &AgentEdit) -> Result<(), ApiError> {
    let a = edit.alias.as_str();
    if !doc
        .document()
        .get("agents")
        .and_then(|t| t.as_table_like())
        .is_some_and(|t| t.contains_key(a))
    {
        return Err(ApiError::new(
            ErrorCode::NotFound,
            format!("agent `{a}` does not exist"),
        ));
    }
    for c in &edit.changes {
        match c {
            AgentChange::Set { field, value } => {
                let mut path = vec!["agents", a];
                path.extend_from_slice(field.path());
                match value {
                    Some(v) => crate::profiles::set_field(doc, &path, v)?,
                    None => {
                        doc.remove(&path).map_err(|e| invalid(e.to_string()))?;
                    }
                }
            }
            AgentChange::Grant { peer, access } => {
                if peer == a {
                    return Err(invalid(format!(
                        "`{a}` always owns its workspace; a grant to itself is not needed"
                    )));
                }
                let path = ["agents", a, "workspace", "access", peer.as_str()];
                match access {
                    Some(m) => doc
                        .set_value(&path, access_value(*m).into())
                        .map_err(|e| invalid(e.to_string()))?,
                    None => {
                        doc.remove(&path).map_err(|e| invalid(e.to_string()))?;
                    }
                }
            }
            AgentChange::MemoryGrant {
                peer,
                categories,
                remove,
            } => {
                doc.set_memory_grant(a, peer, categories.as_deref(), *remove)
                    .map_err(|e| invalid(e.to_string()))?;
            }
        }
    }
    Ok(())
}

fn disabled(cfg: &Config, alias: &str) -> Vec<DisabledSetting> {
    let own = cfg.effective_memory_backend(alias).unwrap_or_default();
    let mut out = Vec::new();
    if own == MemoryBackendKind::Markdown {
        out.push(DisabledSetting {
            setting: "memory_categories".into(),
            reason: "Markdown memory does not keep categories per row, so memory grants of \
                     this agent cover every category"
                .into(),
        });
    }
    for peer in cfg.agents.keys().filter(|p| p.as_str() != alias) {
        let theirs = cfg.effective_memory_backend(peer).unwrap_or_default();
        if theirs != own {
            out.push(DisabledSetting {
                setting: format!("memory_grant.{peer}"),
                reason: format!(
                    "`{peer}` keeps its memory in {}, this agent in {}: memory is shared only \
                     within one backend",
                    theirs.as_str(),
                    own.as_str()
                ),
            });
        } else if theirs == MemoryBackendKind::Markdown && own != MemoryBackendKind::Markdown {
            out.push(DisabledSetting {
                setting: format!("memory_categories.{peer}"),
                reason: format!("`{peer}` keeps Markdown memory, which has no categories"),
            });
        }
    }
    out
}

impl Warren {
    /// The settings editor's view of one agent: its values, the choices, and the settings its
    /// memory backend does not allow.
    pub fn agent_settings(&self, alias: &str) -> Result<AgentSettingsView, ApiError> {
        let agent = self.show_agent(alias)?;
        let cfg = self.load()?.config;
        let mut providers = Vec::new();
        for (family, entries) in &cfg.providers.models {
            for name in entries.keys() {
                providers.push(format!("{family}.{name}"));
            }
        }
        Ok(AgentSettingsView {
            agent,
            risk_profiles: cfg.risk_profiles.keys().cloned().collect(),
            runtime_profiles: cfg.runtime_profiles.keys().cloned().collect(),
            providers,
            peers: cfg
                .agents
                .keys()
                .filter(|p| p.as_str() != alias)
                .cloned()
                .collect(),
            disabled: disabled(&cfg, alias),
        })
    }

    /// What saving `edit` would change in `config.toml`, and the validator's findings on the
    /// result (each at its dotted path). Nothing is written.
    pub fn preview_agent_edit(&self, edit: &AgentEdit) -> Result<ProfilePreview, ApiError> {
        self.preview_config_edit(|doc| apply(doc, edit))
    }

    /// Saves `edit` when the whole config still validates; otherwise nothing is written and
    /// the error lists every finding with its dotted path. Returns the agent as saved.
    pub fn save_agent_edit(&self, edit: &AgentEdit) -> Result<AgentDetail, ApiError> {
        self.save_config_edit(|doc| apply(doc, edit))?;
        tracing::info!(agent = %edit.alias, changes = edit.changes.len(), "agent settings saved");
        self.show_agent(&edit.alias)
    }
}
