//! The agent settings editor (the agent's detail view and `warren agents set | grant |
//! memory-grant`): an edit of one agent's entry is previewed through the real validator (the
//! findings at their dotted paths, each placed at the form's setting it concerns, and a diff of
//! `config.toml`), then saved atomically with only
//! the changed keys written, so comments and layout stay. Turns read the config when they
//! start, so a saved change applies to the agent's next turn.

use crate::profiles::{DiffLine, FieldValue, ProfilePreview};
use crate::Warren;
use serde::{Deserialize, Serialize};
use warren_config::ConfigDocument;
use warren_types::{
    AccessMode, AgentDetail, ApiError, Config, ConfigIssue, ErrorCode, MemoryBackendKind,
};

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

    /// The dotted key under `[agents.<alias>]` beneath which the validator's findings belong
    /// beside this field: its own key, and for the memory backend the agent's whole `memory`
    /// table.
    fn findings_key(self) -> String {
        match self {
            AgentField::MemoryBackend => "memory".into(),
            f => f.path().join("."),
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

/// Where the settings form shows a finding of the validator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AgentSettingPlace {
    /// Beside a field.
    Field {
        /// The field.
        field: AgentField,
    },
    /// Beside the workspace grant on a sibling.
    Grant {
        /// The sibling.
        peer: String,
    },
    /// Beside the memory grants (`workspace.read_memory_from`).
    MemoryGrants,
}

/// A validator finding on an edited agent, with the place of the form it belongs beside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentIssue {
    /// The finding (its fields at the top level).
    #[serde(flatten)]
    pub issue: ConfigIssue,
    /// Where the form shows it; none for a finding no setting of the form is about (shown
    /// under the form with its path).
    pub place: Option<AgentSettingPlace>,
}

/// What saving an agent edit would do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentEditPreview {
    /// The changed lines of `config.toml`, with two lines of context.
    pub diff: Vec<DiffLine>,
    /// The validator's findings on the edited config, each with its place (saving is refused
    /// while any exist).
    pub errors: Vec<AgentIssue>,
}

impl From<AgentEditPreview> for ProfilePreview {
    /// The preview without the places (what `warren agents set --dry-run` prints).
    fn from(p: AgentEditPreview) -> Self {
        ProfilePreview {
            diff: p.diff,
            errors: p.errors.into_iter().map(|i| i.issue).collect(),
        }
    }
}

/// The rest of `path` below `prefix` (empty when it is `prefix` itself), or none when `path`
/// does not lie beneath it.
fn below<'a>(path: &'a str, prefix: &str) -> Option<&'a str> {
    let rest = path.strip_prefix(prefix)?;
    (rest.is_empty() || rest.starts_with(['.', '['])).then_some(rest)
}

/// Where the form of agent `alias` shows a finding at dotted `path`.
fn place_of(alias: &str, path: &str) -> Option<AgentSettingPlace> {
    // What a chosen backend lacks in the install's [memory] settings is said at the backend.
    if below(path, "memory").is_some() {
        return Some(AgentSettingPlace::Field {
            field: AgentField::MemoryBackend,
        });
    }
    let own = below(path, &format!("agents.{alias}"))?.strip_prefix('.')?;
    if let Some(rest) = own.strip_prefix("workspace.access.") {
        let peer = rest.split(['.', '[']).next().unwrap_or_default();
        return Some(AgentSettingPlace::Grant { peer: peer.into() });
    }
    if below(own, "workspace.read_memory_from").is_some() {
        return Some(AgentSettingPlace::MemoryGrants);
    }
    AgentField::ALL
        .into_iter()
        .find(|f| below(own, &f.findings_key()).is_some())
        .map(|field| AgentSettingPlace::Field { field })
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
    /// result (each at its dotted path and the place of the form it belongs beside). Nothing
    /// is written.
    pub fn preview_agent_edit(&self, edit: &AgentEdit) -> Result<AgentEditPreview, ApiError> {
        let p = self.preview_config_edit(|doc| apply(doc, edit))?;
        Ok(AgentEditPreview {
            diff: p.diff,
            errors: p
                .errors
                .into_iter()
                .map(|issue| AgentIssue {
                    place: place_of(&edit.alias, &issue.path),
                    issue,
                })
                .collect(),
        })
    }

    /// Saves `edit` when the whole config still validates; otherwise nothing is written and
    /// the error lists every finding with its dotted path. Returns the agent as saved.
    pub fn save_agent_edit(&self, edit: &AgentEdit) -> Result<AgentDetail, ApiError> {
        self.save_config_edit(|doc| apply(doc, edit))?;
        tracing::info!(agent = %edit.alias, changes = edit.changes.len(), "agent settings saved");
        self.show_agent(&edit.alias)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "[risk_profiles.p]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"p\"\n\n[agents.bob]\nrisk_profile = \"p\"\n";

    fn set(field: AgentField, value: &str) -> AgentChange {
        AgentChange::Set {
            field,
            value: Some(FieldValue::Text(value.into())),
        }
    }

    /// The previewed findings of `changes` on alice, as (path, place).
    fn placed(changes: Vec<AgentChange>) -> Vec<(String, Option<AgentSettingPlace>)> {
        let (_dir, w) = crate::test_support::install(TWO);
        let edit = AgentEdit {
            alias: "alice".into(),
            changes,
        };
        let p = w.preview_agent_edit(&edit).unwrap();
        p.errors
            .into_iter()
            .map(|i| (i.issue.path, i.place))
            .collect()
    }

    #[test]
    fn a_finding_on_a_field_comes_back_tagged_with_that_field() {
        let found = placed(vec![set(AgentField::RuntimeProfile, "ghost")]);
        assert_eq!(
            found,
            vec![(
                "agents.alice.runtime_profile".to_string(),
                Some(AgentSettingPlace::Field {
                    field: AgentField::RuntimeProfile
                })
            )]
        );
        let found = placed(vec![set(AgentField::RiskProfile, "nope")]);
        assert!(
            !found.is_empty()
                && found.iter().all(|(_, at)| at
                    == &Some(AgentSettingPlace::Field {
                        field: AgentField::RiskProfile
                    })),
            "{found:?}"
        );
        let found = placed(vec![AgentChange::Grant {
            peer: "ghost".into(),
            access: Some(AccessMode::Read),
        }]);
        assert!(
            !found.is_empty()
                && found.iter().all(|(_, at)| at
                    == &Some(AgentSettingPlace::Grant {
                        peer: "ghost".into()
                    })),
            "{found:?}"
        );
    }

    #[test]
    fn the_preview_keeps_the_finding_flat_and_the_cli_gets_it_without_places() {
        let (_dir, w) = crate::test_support::install(TWO);
        let edit = AgentEdit {
            alias: "alice".into(),
            changes: vec![set(AgentField::RuntimeProfile, "ghost")],
        };
        let p = w.preview_agent_edit(&edit).unwrap();
        let v = serde_json::to_value(&p).unwrap();
        assert_eq!(
            v["errors"][0]["path"], "agents.alice.runtime_profile",
            "{v}"
        );
        assert_eq!(v["errors"][0]["place"]["kind"], "field", "{v}");
        assert_eq!(v["errors"][0]["place"]["field"], "runtime_profile", "{v}");
        let plain = serde_json::to_value(ProfilePreview::from(p)).unwrap();
        assert!(plain["errors"][0].get("place").is_none(), "{plain}");
        assert_eq!(plain["errors"][0]["message"], v["errors"][0]["message"]);
        assert_eq!(plain["diff"], v["diff"]);
    }

    #[test]
    fn each_dotted_path_has_its_place_on_the_form() {
        let field = |field| Some(AgentSettingPlace::Field { field });
        let grant = |peer: &str| Some(AgentSettingPlace::Grant { peer: peer.into() });
        let table = [
            ("agents.alice.risk_profile", field(AgentField::RiskProfile)),
            (
                "agents.alice.model_provider",
                field(AgentField::ModelProvider),
            ),
            ("agents.alice.enabled", field(AgentField::Enabled)),
            ("agents.alice.delegates[1]", field(AgentField::Delegates)),
            ("agents.alice.memory", field(AgentField::MemoryBackend)),
            (
                "agents.alice.memory.backend",
                field(AgentField::MemoryBackend),
            ),
            ("memory.postgres.url", field(AgentField::MemoryBackend)),
            ("memory", field(AgentField::MemoryBackend)),
            (
                "agents.alice.workspace.unrestricted_filesystem",
                field(AgentField::UnrestrictedFilesystem),
            ),
            ("agents.alice.workspace.access.bob", grant("bob")),
            ("agents.alice.workspace.access.bob.mode", grant("bob")),
            (
                "agents.alice.workspace.read_memory_from",
                Some(AgentSettingPlace::MemoryGrants),
            ),
            (
                "agents.alice.workspace.read_memory_from[0].categories",
                Some(AgentSettingPlace::MemoryGrants),
            ),
            // Not a setting of the form, or not this agent's.
            ("agents.alice", None),
            ("agents.alice.workspace", None),
            ("agents.alice.workspace.access", None),
            ("agents.alice.mcp_servers", None),
            ("agents.alicea.risk_profile", None),
            ("agents.bob.risk_profile", None),
            ("memoryx", None),
            ("risk_profiles.p.level", None),
        ];
        for (path, want) in table {
            assert_eq!(place_of("alice", path), want, "{path}");
        }
    }
}
