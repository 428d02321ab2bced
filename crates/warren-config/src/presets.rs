//! The commented config that `warren init` and the desktop app's first start write.

use std::fmt;
use std::str::FromStr;

/// Which risk profile the first agent uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Preset {
    /// Read-only autonomy, no shell beyond reading, landlock required.
    LockedDown,
    /// Supervised autonomy: asks before risky actions (the default).
    #[default]
    Balanced,
    /// Full autonomy inside the workspace; forbidden paths and the sandbox still apply.
    Yolo,
}

impl Preset {
    /// The profile name written to the config.
    pub fn as_str(self) -> &'static str {
        match self {
            Preset::LockedDown => "locked_down",
            Preset::Balanced => "balanced",
            Preset::Yolo => "yolo",
        }
    }
}

impl fmt::Display for Preset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Preset {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "locked_down" => Ok(Preset::LockedDown),
            "balanced" => Ok(Preset::Balanced),
            "yolo" => Ok(Preset::Yolo),
            other => Err(format!(
                "unknown preset `{other}` (expected locked_down, balanced or yolo)"
            )),
        }
    }
}

/// The text of a fresh config: the three preset risk profiles, a standard runtime profile, a
/// local Ollama route, SQLite memory and one agent, `assistant`, using `preset`.
pub fn default_config_text(preset: Preset) -> String {
    TEMPLATE.replace("@PRESET@", preset.as_str())
}

const TEMPLATE: &str = r#"# Warren configuration. Edit by hand or from the desktop app; comments are kept on every save.
# Reference: docs/configuration.md in Warren's source. Validate with `warren config validate`.
schema_version = 1

# ---------------------------------------------------------------------------------------------
# Agents. Each has its own workspace (<install>/agents/<alias>/workspace/ unless
# workspace.path is set), its own policy and its own memory.
# Rename or delete agents with `warren agents rename|delete`, not by editing this file.
# ---------------------------------------------------------------------------------------------
[agents.assistant]
risk_profile = "@PRESET@"
runtime_profile = "standard"
model_provider = "ollama.local"
# delegates = ["other_agent"]
# [agents.assistant.workspace.access]
# other_agent = "read"            # read | write | read_write
# [agents.assistant.memory]
# backend = "sqlite"              # sqlite | postgres | lucid | markdown | qdrant | none

# ---------------------------------------------------------------------------------------------
# Risk profiles: what an agent may do.
# ---------------------------------------------------------------------------------------------
[risk_profiles.locked_down]
level = "readonly"                 # no tool with side effects runs
workspace_only = true
allowed_commands = ["ls", "cat", "head", "tail", "wc", "grep", "find", "pwd"]
forbidden_paths = ["~/.ssh", "~/.gnupg", "~/.aws"]
sandbox = "landlock"
delegation = "forbidden"

[risk_profiles.balanced]
level = "supervised"               # asks before medium-risk actions
workspace_only = true
allowed_commands = ["ls", "cat", "head", "tail", "wc", "grep", "find", "echo", "pwd", "date",
  "sort", "uniq", "diff", "stat", "file", "tree", "cut", "tr", "which", "git", "mkdir", "touch",
  "cp", "mv", "python3", "cargo", "npm", "make"]
forbidden_paths = ["~/.ssh", "~/.gnupg", "~/.aws", "/etc/shadow"]
require_approval_for_medium_risk = true
block_high_risk_commands = true
auto_approve = ["file_read", "glob_search", "content_search", "memory_recall"]
sandbox = "auto"
delegation = "forbidden"

[risk_profiles.yolo]
level = "full"                     # never asks; forbidden paths and the sandbox still apply
workspace_only = true
allowed_commands = ["*"]
forbidden_paths = ["~/.ssh", "~/.gnupg", "~/.aws", "/etc/shadow"]
block_high_risk_commands = true
sandbox = "auto"
delegation = "allow"
network = true                     # sandboxed commands may use TCP (package managers, git)

# ---------------------------------------------------------------------------------------------
# Runtime profiles: budgets and loop behaviour.
# ---------------------------------------------------------------------------------------------
[runtime_profiles.standard]
max_tool_iterations = 10
parallel_tools = false
single_tool_rounds = false
max_actions_per_hour = 20
max_cost_per_day_cents = 500
shell_timeout_secs = 60
turn_timeout_secs = 600
max_delegation_depth = 1

# ---------------------------------------------------------------------------------------------
# Providers: [providers.models.<family>.<alias>], family = openai | anthropic | ollama.
# To connect a hosted model, add for example:
#   [providers.models.openai.main]
#   model = "gpt-4o-mini"
#   api_key_env = "OPENAI_API_KEY"   # or store it: `warren secrets set OPENAI_API_KEY`
# and point the agent at it: model_provider = "openai.main".
# ---------------------------------------------------------------------------------------------
[providers.models.ollama.local]
model = "llama3.2"
uri = "http://127.0.0.1:11434"

# ---------------------------------------------------------------------------------------------
# Memory: install-wide default backend.
# ---------------------------------------------------------------------------------------------
[memory]
backend = "sqlite"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_validates() {
        for p in [Preset::LockedDown, Preset::Balanced, Preset::Yolo] {
            let cfg = crate::parse_config(&default_config_text(p)).unwrap();
            assert_eq!(cfg.agents["assistant"].risk_profile, p.as_str());
            assert_eq!(cfg.risk_profiles.len(), 3);
        }
    }
}
