//! The typed config schema of `config.toml` (rules §1.1). Loading, validation and saving live in
//! `warren-config`; these are the plain data types.

use crate::network::NetworkAccess;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The current config schema version.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole config file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Schema version of the file.
    pub schema_version: u32,
    /// Agents by alias.
    pub agents: BTreeMap<String, AgentConfig>,
    /// Risk profiles by name.
    pub risk_profiles: BTreeMap<String, RiskProfile>,
    /// Runtime profiles by name.
    pub runtime_profiles: BTreeMap<String, RuntimeProfile>,
    /// LLM providers.
    pub providers: ProvidersConfig,
    /// Install-wide memory settings.
    pub memory: MemoryConfig,
    /// Where tools run.
    pub runtime: RuntimeConfig,
    /// Scheduled prompts by id.
    pub cron: BTreeMap<String, CronJobConfig>,
    /// MCP servers agents may use, by name.
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            schema_version: SCHEMA_VERSION,
            agents: BTreeMap::new(),
            risk_profiles: BTreeMap::new(),
            runtime_profiles: BTreeMap::new(),
            providers: ProvidersConfig::default(),
            memory: MemoryConfig::default(),
            runtime: RuntimeConfig::default(),
            cron: BTreeMap::new(),
            mcp_servers: BTreeMap::new(),
        }
    }
}

impl Config {
    /// The memory backend an agent effectively uses: its own, else the install-wide default.
    pub fn effective_memory_backend(&self, alias: &str) -> Option<MemoryBackendKind> {
        let agent = self.agents.get(alias)?;
        Some(agent.memory.backend.unwrap_or(self.memory.backend))
    }

    /// Looks up a provider entry by its `"family.alias"` reference.
    pub fn provider(&self, reference: &str) -> Option<(ProviderFamily, &ProviderModel)> {
        let (family, alias) = reference.split_once('.')?;
        let fam = ProviderFamily::from_name(family)?;
        let entry = self.providers.models.get(family)?.get(alias)?;
        Some((fam, entry))
    }
}

/// One agent (`[agents.<alias>]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct AgentConfig {
    /// Whether the agent may run turns.
    pub enabled: bool,
    /// `"family.alias"` of the provider entry.
    pub model_provider: Option<String>,
    /// Name of the risk profile (required).
    pub risk_profile: String,
    /// Name of the runtime profile; defaults apply when unset.
    pub runtime_profile: Option<String>,
    /// Agents this one may delegate to.
    pub delegates: Vec<String>,
    /// Cron job ids owned by the agent.
    pub cron_jobs: Vec<String>,
    /// Names of the `[mcp_servers]` whose tools the agent gets.
    pub mcp_servers: Vec<String>,
    /// Workspace and grants.
    pub workspace: WorkspaceConfig,
    /// Memory backend choice.
    pub memory: AgentMemoryConfig,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            enabled: true,
            model_provider: None,
            risk_profile: String::new(),
            runtime_profile: None,
            delegates: Vec::new(),
            cron_jobs: Vec::new(),
            mcp_servers: Vec::new(),
            workspace: WorkspaceConfig::default(),
            memory: AgentMemoryConfig::default(),
        }
    }
}

/// `[agents.<alias>.workspace]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceConfig {
    /// Absolute path overriding `<install>/agents/<alias>/workspace/`.
    pub path: Option<String>,
    /// Turns `workspace_only` off for this agent.
    pub unrestricted_filesystem: bool,
    /// Memory read grants.
    pub read_memory_from: Vec<MemoryGrant>,
    /// Sibling workspace grants: alias → access mode.
    pub access: BTreeMap<String, AccessMode>,
}

/// Access granted on a sibling's workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum AccessMode {
    /// Read-only.
    Read,
    /// Write-only (no read).
    Write,
    /// Read and write.
    ReadWrite,
}

/// A `read_memory_from` entry: a plain alias (all categories) or a category-scoped grant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(untagged)]
pub enum MemoryGrant {
    /// All of the sibling's categories.
    Agent(String),
    /// Only the listed categories (exact, case-sensitive).
    Scoped {
        /// The sibling's alias.
        agent: String,
        /// Category names.
        categories: Vec<String>,
    },
}

impl MemoryGrant {
    /// The alias this grant points at.
    pub fn agent(&self) -> &str {
        match self {
            MemoryGrant::Agent(a) => a,
            MemoryGrant::Scoped { agent, .. } => agent,
        }
    }

    /// The categories, or `None` for a whole-agent grant.
    pub fn categories(&self) -> Option<&[String]> {
        match self {
            MemoryGrant::Agent(_) => None,
            MemoryGrant::Scoped { categories, .. } => Some(categories),
        }
    }
}

/// `[agents.<alias>.memory]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct AgentMemoryConfig {
    /// Backend; the install-wide `[memory].backend` when unset.
    pub backend: Option<MemoryBackendKind>,
}

/// Memory backends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum MemoryBackendKind {
    /// Embedded SQLite (default).
    #[default]
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// SQLite plus a mirror to an external `lucid` command.
    Lucid,
    /// Markdown files in the workspace.
    Markdown,
    /// Qdrant vector database.
    Qdrant,
    /// No memory.
    None,
}

impl MemoryBackendKind {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryBackendKind::Sqlite => "sqlite",
            MemoryBackendKind::Postgres => "postgres",
            MemoryBackendKind::Lucid => "lucid",
            MemoryBackendKind::Markdown => "markdown",
            MemoryBackendKind::Qdrant => "qdrant",
            MemoryBackendKind::None => "none",
        }
    }

    /// Parses the config spelling.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "sqlite" => MemoryBackendKind::Sqlite,
            "postgres" => MemoryBackendKind::Postgres,
            "lucid" => MemoryBackendKind::Lucid,
            "markdown" => MemoryBackendKind::Markdown,
            "qdrant" => MemoryBackendKind::Qdrant,
            "none" => MemoryBackendKind::None,
            _ => return None,
        })
    }
}

/// Autonomy level of a risk profile.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum AutonomyLevel {
    /// No side effects at all.
    Readonly,
    /// Asks before risky actions.
    #[default]
    Supervised,
    /// Never asks.
    Full,
}

impl AutonomyLevel {
    /// The config spelling (`readonly`, `supervised`, `full`).
    pub fn as_str(self) -> &'static str {
        match self {
            AutonomyLevel::Readonly => "readonly",
            AutonomyLevel::Supervised => "supervised",
            AutonomyLevel::Full => "full",
        }
    }
}

/// Sandbox choice.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SandboxKind {
    /// Best available: landlock, then bubblewrap, then none.
    #[default]
    Auto,
    /// Linux Landlock LSM.
    Landlock,
    /// bubblewrap mount namespaces.
    Bubblewrap,
    /// No OS confinement.
    None,
}

/// Whether a risk profile allows delegation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum DelegationMode {
    /// No `delegate` tool.
    #[default]
    Forbidden,
    /// `delegate` allowed.
    Allow,
}

/// The conservative default `allowed_commands`: read-mostly tools.
pub fn default_allowed_commands() -> Vec<String> {
    [
        "ls", "cat", "head", "tail", "wc", "grep", "find", "echo", "pwd", "date", "sort", "uniq",
        "diff", "stat", "file", "tree", "cut", "tr", "which", "git",
    ]
    .iter()
    .map(std::string::ToString::to_string)
    .collect()
}

/// `[risk_profiles.<p>]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct RiskProfile {
    /// Autonomy level.
    pub level: AutonomyLevel,
    /// Confine file access to the workspace and grants.
    pub workspace_only: bool,
    /// Commands the shell tool may run (`"*"` = any).
    pub allowed_commands: Vec<String>,
    /// Paths always denied (`~` expanded).
    pub forbidden_paths: Vec<String>,
    /// Extra read-write roots.
    pub allowed_roots: Vec<String>,
    /// Ask before medium-risk shell commands.
    pub require_approval_for_medium_risk: bool,
    /// Block high-risk shell commands.
    pub block_high_risk_commands: bool,
    /// Tools that never ask.
    pub auto_approve: Vec<String>,
    /// Tools that always ask (wins over `auto_approve`).
    pub always_ask: Vec<String>,
    /// Tools offered to the model (empty = all).
    pub allowed_tools: Vec<String>,
    /// Tools never offered.
    pub excluded_tools: Vec<String>,
    /// OS sandbox for child processes.
    pub sandbox: SandboxKind,
    /// Environment variables passed to shell commands.
    pub shell_env_passthrough: Vec<String>,
    /// Whether the `delegate` tool may be used.
    pub delegation: DelegationMode,
    /// The network of sandboxed commands: `false` (none, the default), `true` (the host's), or
    /// a table of domains reached through Warren's proxy ([`crate::network`]).
    pub network: NetworkAccess,
}

impl Default for RiskProfile {
    fn default() -> Self {
        RiskProfile {
            level: AutonomyLevel::Supervised,
            workspace_only: true,
            allowed_commands: default_allowed_commands(),
            forbidden_paths: Vec::new(),
            allowed_roots: Vec::new(),
            require_approval_for_medium_risk: true,
            block_high_risk_commands: true,
            auto_approve: Vec::new(),
            always_ask: Vec::new(),
            allowed_tools: Vec::new(),
            excluded_tools: Vec::new(),
            sandbox: SandboxKind::Auto,
            shell_env_passthrough: Vec::new(),
            delegation: DelegationMode::Forbidden,
            network: NetworkAccess::Switch(false),
        }
    }
}

/// `[runtime_profiles.<p>]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeProfile {
    /// Tool rounds per turn.
    pub max_tool_iterations: u32,
    /// Run an admitted batch of tool calls concurrently.
    pub parallel_tools: bool,
    /// At most one tool call per provider response.
    pub single_tool_rounds: bool,
    /// Side-effecting actions per hour (0 = none).
    pub max_actions_per_hour: u32,
    /// Provider spend per day, in US cents.
    pub max_cost_per_day_cents: u32,
    /// Shell command timeout.
    pub shell_timeout_secs: u32,
    /// Whole-turn timeout.
    pub turn_timeout_secs: u32,
    /// Maximum delegation depth.
    pub max_delegation_depth: u32,
    /// Context window cap.
    pub max_context_tokens: Option<u32>,
}

impl Default for RuntimeProfile {
    fn default() -> Self {
        RuntimeProfile {
            max_tool_iterations: 10,
            parallel_tools: false,
            single_tool_rounds: false,
            max_actions_per_hour: 20,
            max_cost_per_day_cents: 500,
            shell_timeout_secs: 60,
            turn_timeout_secs: 600,
            max_delegation_depth: 1,
            max_context_tokens: None,
        }
    }
}

/// `[providers]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct ProvidersConfig {
    /// `family` → `alias` → entry.
    pub models: BTreeMap<String, BTreeMap<String, ProviderModel>>,
}

/// LLM provider families and their wire protocols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ProviderFamily {
    /// OpenAI Chat Completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// Ollama native chat API.
    Ollama,
}

impl ProviderFamily {
    /// Parses a family name.
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "openai" => ProviderFamily::Openai,
            "anthropic" => ProviderFamily::Anthropic,
            "ollama" => ProviderFamily::Ollama,
            _ => return None,
        })
    }

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderFamily::Openai => "openai",
            ProviderFamily::Anthropic => "anthropic",
            ProviderFamily::Ollama => "ollama",
        }
    }

    /// The vendor's default base URL.
    pub fn default_uri(self) -> &'static str {
        match self {
            ProviderFamily::Openai => "https://api.openai.com/v1",
            ProviderFamily::Anthropic => "https://api.anthropic.com",
            ProviderFamily::Ollama => "http://127.0.0.1:11434",
        }
    }
}

/// `[providers.models.<family>.<alias>]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct ProviderModel {
    /// Vendor model name.
    pub model: String,
    /// Base URL override.
    pub uri: Option<String>,
    /// Environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Secret store reference (`NAME` or `agent:<alias>/NAME`).
    pub secret: Option<String>,
    /// Fallback routes, `"family.alias"`.
    pub fallbacks: Vec<String>,
    /// Request timeout.
    pub timeout_secs: u32,
    /// Overrides the family's single-tool control support.
    pub single_tool_control: Option<bool>,
    /// USD per million input tokens.
    pub input_cost_per_mtok: Option<f64>,
    /// USD per million output tokens.
    pub output_cost_per_mtok: Option<f64>,
}

impl Default for ProviderModel {
    fn default() -> Self {
        ProviderModel {
            model: String::new(),
            uri: None,
            api_key_env: None,
            secret: None,
            fallbacks: Vec::new(),
            timeout_secs: 120,
            single_tool_control: None,
            input_cost_per_mtok: None,
            output_cost_per_mtok: None,
        }
    }
}

/// `[memory]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// Install-wide default backend.
    pub backend: MemoryBackendKind,
    /// `[memory.sqlite]`.
    pub sqlite: SqliteMemoryConfig,
    /// `[memory.postgres]`.
    pub postgres: PostgresMemoryConfig,
    /// `[memory.qdrant]`.
    pub qdrant: QdrantMemoryConfig,
    /// `[memory.lucid]`.
    pub lucid: LucidMemoryConfig,
    /// `[memory.embeddings]`.
    pub embeddings: EmbeddingsConfig,
}

/// `[memory.sqlite]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct SqliteMemoryConfig {
    /// Database file; `<install>/data/memory/memory.db` when unset.
    pub path: Option<String>,
}

/// `[memory.postgres]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct PostgresMemoryConfig {
    /// Connection URL.
    pub url: Option<String>,
    /// Schema name (`warren` when unset).
    pub schema: Option<String>,
}

/// `[memory.qdrant]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct QdrantMemoryConfig {
    /// Server URL.
    pub url: Option<String>,
    /// Collection name (`warren_memory` when unset).
    pub collection: Option<String>,
    /// Environment variable holding the API key.
    pub api_key_env: Option<String>,
}

/// `[memory.lucid]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct LucidMemoryConfig {
    /// The external mirror command.
    pub command: Option<String>,
}

/// `[memory.embeddings]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct EmbeddingsConfig {
    /// `"family.alias"` or `local`.
    pub provider: Option<String>,
    /// Vector dimensions.
    pub dimensions: Option<u32>,
}

/// Where tools run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RuntimeKind {
    /// On the host, under the agent's sandbox.
    #[default]
    Native,
    /// Inside a container.
    Docker,
}

/// `[runtime]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct RuntimeConfig {
    /// Native or docker.
    pub kind: RuntimeKind,
    /// `[runtime.docker]`.
    pub docker: DockerConfig,
}

/// `[runtime.docker]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct DockerConfig {
    /// Image to run commands in.
    pub image: Option<String>,
    /// Docker network (`none` when unset).
    pub network: Option<String>,
}

/// `[cron.<id>]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct CronJobConfig {
    /// Agent alias that runs the job.
    pub agent: String,
    /// Cron expression (UTC).
    pub schedule: String,
    /// Prompt sent at each run.
    pub prompt: String,
    /// Whether the job runs.
    pub enabled: bool,
}

impl Default for CronJobConfig {
    fn default() -> Self {
        CronJobConfig {
            agent: String::new(),
            schedule: String::new(),
            prompt: String::new(),
            enabled: true,
        }
    }
}

/// `[mcp_servers.<name>]`: a Model Context Protocol server, started as a child process over
/// stdio (`command`, `args`, `env`) or reached over streamable HTTP (`url`); exactly one of
/// `command` and `url`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(default, deny_unknown_fields)]
pub struct McpServerConfig {
    /// The program of a stdio server (a name looked up on `PATH`, or a path).
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set in its environment, on top of the sandbox's base environment.
    pub env: BTreeMap<String, String>,
    /// The endpoint of a streamable-HTTP server (`http://` or `https://`).
    pub url: Option<String>,
}
