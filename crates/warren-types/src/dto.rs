//! Data transfer objects returned by `warren-api` to the CLI and the desktop app.

use crate::config::{AccessMode, MemoryBackendKind, ProviderFamily};
use serde::{Deserialize, Serialize};

/// Where user secrets (API keys) are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SecretBackendKind {
    /// The desktop keyring (Secret Service).
    Keyring,
    /// The encrypted file under the install.
    File,
}

impl SecretBackendKind {
    /// The wire spelling (`keyring`, `file`).
    pub fn as_str(self) -> &'static str {
        match self {
            SecretBackendKind::Keyring => "keyring",
            SecretBackendKind::File => "file",
        }
    }
}

impl std::fmt::Display for SecretBackendKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One agent as listed by `warren agents list` and the Agents screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentSummary {
    /// The alias.
    pub alias: String,
    /// Whether it may run turns.
    pub enabled: bool,
    /// Risk profile name.
    pub risk_profile: String,
    /// Runtime profile name, if set.
    pub runtime_profile: Option<String>,
    /// `"family.alias"` provider reference, if set.
    pub model_provider: Option<String>,
    /// Effective memory backend.
    pub memory_backend: MemoryBackendKind,
    /// Absolute workspace path.
    pub workspace: String,
}

/// What a grant on a sibling gives: access to its workspace, or reading its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum GrantAccess {
    /// Read its workspace.
    Read,
    /// Write its workspace, never read it.
    Write,
    /// Read and write its workspace.
    ReadWrite,
    /// Read its memory (a `read_memory_from` entry).
    Memory,
}

impl GrantAccess {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            GrantAccess::Read => "read",
            GrantAccess::Write => "write",
            GrantAccess::ReadWrite => "read_write",
            GrantAccess::Memory => "memory",
        }
    }
}

impl From<AccessMode> for GrantAccess {
    fn from(m: AccessMode) -> Self {
        match m {
            AccessMode::Read => GrantAccess::Read,
            AccessMode::Write => GrantAccess::Write,
            AccessMode::ReadWrite => GrantAccess::ReadWrite,
        }
    }
}

impl std::fmt::Display for GrantAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One grant as shown by `warren agents show`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GrantSummary {
    /// The sibling's alias.
    pub agent: String,
    /// The workspace access of a workspace grant; `memory` for a memory grant.
    pub access: GrantAccess,
    /// Category names of a scoped memory grant.
    pub categories: Option<Vec<String>>,
}

/// Everything about one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentDetail {
    /// The summary fields.
    pub summary: AgentSummary,
    /// Agents this one may delegate to.
    pub delegates: Vec<String>,
    /// Workspace grants on siblings.
    pub workspace_grants: Vec<GrantSummary>,
    /// Memory grants on siblings.
    pub memory_grants: Vec<GrantSummary>,
    /// Whether `workspace_only` is turned off for this agent.
    pub unrestricted_filesystem: bool,
    /// Cron job ids that run as this agent.
    pub cron_jobs: Vec<String>,
    /// Who else in the config refers to this agent, and how.
    pub referenced_by: Vec<AgentReference>,
}

/// Where a config reference to an agent sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ReferenceKind {
    /// An entry of another agent's `delegates`.
    Delegate,
    /// A key of another agent's `workspace.access`.
    WorkspaceAccess,
    /// An entry of another agent's `read_memory_from`.
    ReadMemoryFrom,
    /// `cron.<id>.agent`.
    CronAgent,
}

impl ReferenceKind {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ReferenceKind::Delegate => "delegate",
            ReferenceKind::WorkspaceAccess => "workspace_access",
            ReferenceKind::ReadMemoryFrom => "read_memory_from",
            ReferenceKind::CronAgent => "cron_agent",
        }
    }
}

/// One reference to an agent from elsewhere in the config, as `warren agents show` and the
/// agent's detail pane show it: who holds it and what it lets them do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentReference {
    /// Who holds the reference: the other agent's alias, or the cron job's id (`cron_agent`).
    pub holder: String,
    /// What the reference is.
    pub kind: ReferenceKind,
    /// The access the holder has on this agent's workspace (`workspace_access` only; `None` for
    /// every other kind).
    pub access: Option<AccessMode>,
    /// True when the reference stops this agent from being deleted (an enabled cron job runs as
    /// it). Every other reference is removed by a delete and rewritten by a rename.
    pub blocks_delete: bool,
    /// Dotted config path of the referencing key, e.g. `agents.bob.delegates[0]`.
    pub path: String,
}

impl AgentReference {
    /// What the reference lets its holder do, as a sentence about the referenced agent ("bob
    /// may delegate to it"); the window says the same, with the holder emphasised.
    pub fn in_words(&self) -> String {
        let h = &self.holder;
        match self.kind {
            ReferenceKind::Delegate => format!("{h} may delegate to it"),
            ReferenceKind::WorkspaceAccess => match self.access {
                Some(AccessMode::Read) => format!("{h} has read access to its workspace"),
                Some(AccessMode::Write) => format!("{h} has write access to its workspace"),
                Some(AccessMode::ReadWrite) => {
                    format!("{h} has read-write access to its workspace")
                }
                None => format!("{h} has access to its workspace"),
            },
            ReferenceKind::ReadMemoryFrom => format!("{h} reads its memory"),
            ReferenceKind::CronAgent if self.blocks_delete => {
                format!("cron job {h} runs as it (blocks deletion)")
            }
            ReferenceKind::CronAgent => format!("cron job {h} runs as it (disabled)"),
        }
    }
}

/// What `warren agents create` and the create form send.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CreateAgentRequest {
    /// New alias.
    pub alias: String,
    /// Risk profile name.
    pub risk_profile: String,
    /// Runtime profile name.
    pub runtime_profile: Option<String>,
    /// `"family.alias"` provider reference.
    pub model_provider: Option<String>,
    /// Memory backend override.
    pub memory_backend: Option<MemoryBackendKind>,
}

/// What a new agent starts with and may choose from: the create form's selects and the
/// defaults `warren agents create` uses for what it is not given (one place for both).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct NewAgentChoices {
    /// The risk profile a new agent gets unless another is chosen (`balanced` when the install
    /// has it, else its first risk profile; empty when it has none).
    pub risk_profile: String,
    /// The runtime profile a new agent gets (`None`: the built-in defaults).
    pub runtime_profile: Option<String>,
    /// The provider route a new agent gets (`None`: none).
    pub model_provider: Option<String>,
    /// The memory backend a new agent gets (`None`: the install's default).
    pub memory_backend: Option<MemoryBackendKind>,
    /// Every risk profile of the install, by name.
    pub risk_profiles: Vec<String>,
    /// Every runtime profile of the install, by name.
    pub runtime_profiles: Vec<String>,
    /// Every provider route, as `family.alias`.
    pub providers: Vec<String>,
}

/// One configured provider route entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProviderSummary {
    /// `"family.alias"`.
    pub reference: String,
    /// Wire protocol family.
    pub family: ProviderFamily,
    /// Vendor model name.
    pub model: String,
    /// Effective base URL.
    pub uri: String,
    /// Whether a key source (env var or secret) is configured.
    pub has_key_source: bool,
}

/// One finding of `warren config validate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ConfigIssue {
    /// Dotted path.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
}

/// The result of validating the config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ValidationReport {
    /// The file validated.
    pub path: String,
    /// True when there are no errors.
    pub ok: bool,
    /// Errors (the config is unusable while any exist).
    pub errors: Vec<ConfigIssue>,
    /// Warnings (the config is usable).
    pub warnings: Vec<ConfigIssue>,
    /// Number of agents defined, when valid.
    pub agents: u32,
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_reference_in_words_names_its_holder_and_what_it_gives() {
        let r = |kind, access, blocks_delete| AgentReference {
            holder: "bob".into(),
            kind,
            access,
            blocks_delete,
            path: "agents.bob.x".into(),
        };
        let said = [
            r(ReferenceKind::Delegate, None, false),
            r(
                ReferenceKind::WorkspaceAccess,
                Some(AccessMode::Read),
                false,
            ),
            r(
                ReferenceKind::WorkspaceAccess,
                Some(AccessMode::Write),
                false,
            ),
            r(
                ReferenceKind::WorkspaceAccess,
                Some(AccessMode::ReadWrite),
                false,
            ),
            r(ReferenceKind::WorkspaceAccess, None, false),
            r(ReferenceKind::ReadMemoryFrom, None, false),
            r(ReferenceKind::CronAgent, None, true),
            r(ReferenceKind::CronAgent, None, false),
        ]
        .map(|r| r.in_words());
        assert_eq!(
            said,
            [
                "bob may delegate to it",
                "bob has read access to its workspace",
                "bob has write access to its workspace",
                "bob has read-write access to its workspace",
                "bob has access to its workspace",
                "bob reads its memory",
                "cron job bob runs as it (blocks deletion)",
                "cron job bob runs as it (disabled)",
            ]
        );
    }

    use super::*;
    use crate::AutonomyLevel;

    use crate::codes::tests::wire;

    #[test]
    fn view_codes_are_their_documented_strings() {
        for (g, code) in [
            (GrantAccess::Read, "read"),
            (GrantAccess::Write, "write"),
            (GrantAccess::ReadWrite, "read_write"),
            (GrantAccess::Memory, "memory"),
        ] {
            assert_eq!((wire(g), g.as_str()), (code.to_string(), code));
            assert_eq!(
                serde_json::from_value::<GrantAccess>(code.into()).unwrap(),
                g
            );
        }
        // A workspace grant says its access mode as the config spells it.
        for m in [AccessMode::Read, AccessMode::Write, AccessMode::ReadWrite] {
            assert_eq!(wire(GrantAccess::from(m)), wire(m));
        }
        for (k, code) in [
            (ReferenceKind::Delegate, "delegate"),
            (ReferenceKind::WorkspaceAccess, "workspace_access"),
            (ReferenceKind::ReadMemoryFrom, "read_memory_from"),
            (ReferenceKind::CronAgent, "cron_agent"),
        ] {
            assert_eq!((wire(k), k.as_str()), (code.to_string(), code));
            assert_eq!(
                serde_json::from_value::<ReferenceKind>(code.into()).unwrap(),
                k
            );
        }
        for (b, code) in [
            (SecretBackendKind::Keyring, "keyring"),
            (SecretBackendKind::File, "file"),
        ] {
            assert_eq!((wire(b), b.as_str()), (code.to_string(), code));
        }
        for (l, code) in [
            (AutonomyLevel::Readonly, "readonly"),
            (AutonomyLevel::Supervised, "supervised"),
            (AutonomyLevel::Full, "full"),
        ] {
            assert_eq!((wire(l), l.as_str()), (code.to_string(), code));
        }
    }
}

/// The outcome of verifying one agent's receipt chain (`warren receipts verify`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReceiptVerification {
    /// The agent.
    pub agent: String,
    /// Receipts checked.
    pub checked: u32,
    /// True when the chain is intact.
    pub ok: bool,
    /// What is wrong, naming the record (`receipt #3 (id …): …`).
    pub problems: Vec<String>,
}

/// The outcome of a provider Test: one small call to one route entry (no fallbacks), made by the
/// runtime and shown as is by the CLI and the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProviderTestView {
    /// The route entry called (`"family.alias"`).
    pub reference: String,
    /// The model name sent.
    pub model: String,
    /// The request URL.
    pub url: String,
    /// Whether the call succeeded.
    pub ok: bool,
    /// The model's answer, when it succeeded.
    pub answer: Option<String>,
    /// The error code when the call failed (`provider_http`, `provider_unreachable`,
    /// `no_api_key`, ...).
    pub error_code: Option<crate::codes::LlmErrorCode>,
    /// What went wrong, in plain words, with the vendor's own message.
    pub error: Option<String>,
    /// How long the call took, in milliseconds.
    pub duration_ms: u32,
}
