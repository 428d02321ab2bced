//! The configured MCP servers, edited by form in the window and by `warren mcp add | remove |
//! enable | disable`: add or change a stdio server and choose the agents that use it, remove one
//! (saying which agents lose it), enable or disable one for an agent. Every edit is previewed
//! through the config validator (findings at the field they concern, the diff) and saved
//! atomically with comments kept.

use crate::profiles::{line_diff, DiffLine};
use crate::{errors::document_error, Warren};
use serde::{Deserialize, Serialize};
use warren_config::{mcp_server_path, ConfigDocument, StdioServer};
use warren_types::redact::names_credential;
use warren_types::{ApiError, Config, ConfigIssue, ErrorCode};

/// One environment variable of a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpEnvVar {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: String,
}

/// A stdio server as the form (or `warren mcp add`) gives it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpServerInput {
    /// Its name in `[mcp_servers]`.
    pub name: String,
    /// The program (a name on `PATH`, or a path).
    pub command: String,
    /// Its arguments, one per entry.
    pub args: Vec<String>,
    /// Its environment variables.
    pub env: Vec<McpEnvVar>,
    /// The agents that use it (exactly these), or none to leave every agent's list as it is.
    pub agents: Option<Vec<String>>,
    /// True to change an existing server, false to add a new one (refused if the name exists).
    pub existing: bool,
}

/// The form field a finding concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum McpField {
    /// The server's name.
    Name,
    /// `command`.
    Command,
    /// `args`.
    Args,
    /// `env`.
    Env,
    /// The agents using it.
    Agents,
    /// Anything else in the config.
    Other,
}

/// A validator finding on an edited server, with the field it belongs beside.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpIssue {
    /// The field.
    pub field: McpField,
    /// The dotted path in `config.toml`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// What saving (or removing) a server would do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpEditPreview {
    /// The changed lines of `config.toml` (credential values hidden).
    pub diff: Vec<DiffLine>,
    /// The validator's findings on the result (saving is refused while any exist).
    pub errors: Vec<McpIssue>,
    /// Agents whose `mcp_servers` would lose the server.
    pub agents_losing: Vec<String>,
}

/// A configured server and the agents that use it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpServerEntry {
    /// Its name.
    pub name: String,
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment.
    pub env: Vec<McpEnvVar>,
    /// The endpoint of a streamable-HTTP server.
    pub url: Option<String>,
    /// The agents whose `mcp_servers` name it, in config order.
    pub agents: Vec<String>,
}

/// The agents and servers, for the MCP servers page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct McpServersOverview {
    /// Every configured server.
    pub servers: Vec<McpServerEntry>,
    /// Every agent's alias (the choices of "used by").
    pub agents: Vec<String>,
    /// Words that mark an environment variable's value as a credential (any case): the form
    /// hides such values (the rule of docs/security.md, kept in one place).
    pub credential_words: Vec<String>,
}

/// Whether an environment variable's value is a credential (hidden on screen, registered as a
/// secret when the server starts: docs/security.md).
pub fn is_credential(name: &str) -> bool {
    names_credential(name)
}

fn invalid(m: impl Into<String>) -> ApiError {
    ApiError::new(ErrorCode::InvalidArgument, m)
}

fn field_of(name: &str, path: &str) -> McpField {
    let base = mcp_server_path(name);
    if path == base {
        return McpField::Name;
    }
    if let Some(rest) = path.strip_prefix(&base).and_then(|r| r.strip_prefix('.')) {
        let key = rest.split(['.', '[']).next().unwrap_or("");
        return match key {
            "command" => McpField::Command,
            "args" => McpField::Args,
            "env" => McpField::Env,
            _ => McpField::Other,
        };
    }
    if path.starts_with("agents.") && path.contains(".mcp_servers") {
        return McpField::Agents;
    }
    McpField::Other
}

fn entries(cfg: &Config) -> Vec<McpServerEntry> {
    cfg.mcp_servers
        .iter()
        .map(|(name, s)| McpServerEntry {
            name: name.clone(),
            command: s.command.clone(),
            args: s.args.clone(),
            env: s
                .env
                .iter()
                .map(|(k, v)| McpEnvVar {
                    name: k.clone(),
                    value: v.clone(),
                })
                .collect(),
            url: s.url.clone(),
            agents: cfg
                .agents
                .iter()
                .filter(|(_, a)| a.mcp_servers.iter().any(|n| n == name))
                .map(|(alias, _)| alias.clone())
                .collect(),
        })
        .collect()
}

/// The agents of the document, in file order.
fn aliases(doc: &ConfigDocument) -> Vec<String> {
    doc.document()
        .get("agents")
        .and_then(|a| a.as_table_like())
        .map(|a| a.iter().map(|(k, _)| k.to_string()).collect())
        .unwrap_or_default()
}

/// Applies `input` to the document; returns the agents that lose the server.
fn apply(doc: &mut ConfigDocument, input: &McpServerInput) -> Result<Vec<String>, ApiError> {
    let server = StdioServer {
        command: input.command.trim().to_string(),
        args: input.args.clone(),
        env: input
            .env
            .iter()
            .map(|v| (v.name.trim().to_string(), v.value.clone()))
            .collect(),
    };
    let mut seen = std::collections::BTreeSet::new();
    for v in &server.env {
        if !seen.insert(v.0.as_str()) {
            return Err(invalid(format!(
                "environment variable `{}` is given twice",
                v.0
            )));
        }
    }
    doc.set_mcp_server(&input.name, &server, !input.existing)
        .map_err(document_error)?;
    let mut losing = Vec::new();
    if let Some(wanted) = &input.agents {
        let all = aliases(doc);
        if let Some(unknown) = wanted.iter().find(|a| !all.contains(a)) {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!(
                    "agent `{unknown}` does not exist{}",
                    warren_types::did_you_mean_hint(unknown, all.iter())
                ),
            ));
        }
        for alias in all {
            let on = wanted.contains(&alias);
            if doc
                .set_agent_mcp_server(&alias, &input.name, on)
                .map_err(document_error)?
                && !on
            {
                losing.push(alias);
            }
        }
    }
    Ok(losing)
}

/// The diff with credential values (as written in the file) shown as dots.
fn hide_credentials(mut diff: Vec<DiffLine>, values: &[String]) -> Vec<DiffLine> {
    for line in &mut diff {
        for v in values {
            let quoted = format!("{v:?}");
            if line.text.contains(&quoted) {
                line.text = line.text.replace(&quoted, "\"••••••\"");
            } else if v.chars().count() >= 4 && line.text.contains(v.as_str()) {
                line.text = line.text.replace(v.as_str(), "••••••");
            }
        }
    }
    diff
}

impl Warren {
    /// Every configured MCP server with the agents using it, and every agent.
    pub fn mcp_servers_overview(&self) -> Result<McpServersOverview, ApiError> {
        let cfg = self.load()?.config;
        Ok(McpServersOverview {
            servers: entries(&cfg),
            agents: cfg.agents.keys().cloned().collect(),
            credential_words: warren_types::redact::CREDENTIAL_WORDS
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
        })
    }

    /// Runs `edit` on the config's text without saving: the diff (credentials hidden), the
    /// validator's findings placed at the field of `name` they concern, and what `edit` said.
    fn preview_mcp_edit(
        &self,
        name: &str,
        extra_credentials: &[String],
        edit: impl FnOnce(&mut ConfigDocument) -> Result<Vec<String>, ApiError>,
    ) -> Result<McpEditPreview, ApiError> {
        let mut losing = Vec::new();
        let (old, new, parsed) = self.edited_config(|doc| {
            losing = edit(doc)?;
            Ok(())
        })?;
        let mut hidden: Vec<String> = extra_credentials.to_vec();
        if let Ok(cfg) = self.load().map(|l| l.config) {
            for s in cfg.mcp_servers.values() {
                for (k, v) in &s.env {
                    if is_credential(k) && !v.is_empty() {
                        hidden.push(v.clone());
                    }
                }
            }
        }
        let errors: Vec<ConfigIssue> = parsed.err().unwrap_or_default();
        Ok(McpEditPreview {
            diff: hide_credentials(line_diff(&old, &new, 2), &hidden),
            errors: errors
                .into_iter()
                .map(|i| McpIssue {
                    field: field_of(name, &i.path),
                    path: i.path,
                    message: i.message,
                })
                .collect(),
            agents_losing: losing,
        })
    }

    /// What saving `input` would change in `config.toml`, with the validator's findings at
    /// their fields. Nothing is written.
    pub fn preview_mcp_server(&self, input: &McpServerInput) -> Result<McpEditPreview, ApiError> {
        let credentials: Vec<String> = input
            .env
            .iter()
            .filter(|v| is_credential(&v.name) && !v.value.is_empty())
            .map(|v| v.value.clone())
            .collect();
        self.preview_mcp_edit(&input.name, &credentials, |doc| apply(doc, input))
    }

    /// Adds or changes a stdio server (and which agents use it) when the whole config still
    /// validates; otherwise nothing is written and the error lists every finding.
    /// The entry it answers hides credential values (as the preview's diff does): it is what
    /// `warren mcp add` prints.
    pub fn save_mcp_server(&self, input: &McpServerInput) -> Result<McpServerEntry, ApiError> {
        self.save_config_edit(|doc| apply(doc, input).map(|_| ()))?;
        tracing::info!(server = %input.name, existing = input.existing, "MCP server saved");
        let mut entry = self
            .mcp_servers_overview()?
            .servers
            .into_iter()
            .find(|s| s.name == input.name)
            .ok_or_else(|| ApiError::new(ErrorCode::Internal, "server missing after saving"))?;
        for v in &mut entry.env {
            if is_credential(&v.name) && !v.value.is_empty() {
                v.value = warren_types::redact::REDACTED.to_string();
            }
        }
        Ok(entry)
    }

    /// What removing `name` would change, and the agents that would lose it.
    pub fn preview_remove_mcp_server(&self, name: &str) -> Result<McpEditPreview, ApiError> {
        self.preview_mcp_edit(name, &[], |doc| {
            doc.remove_mcp_server(name).map_err(document_error)
        })
    }

    /// Removes `[mcp_servers.<name>]` and the name from every agent's `mcp_servers`. Returns
    /// the agents that lost it.
    pub fn remove_mcp_server(&self, name: &str) -> Result<Vec<String>, ApiError> {
        let mut lost = Vec::new();
        self.save_config_edit(|doc| {
            lost = doc.remove_mcp_server(name).map_err(document_error)?;
            Ok(())
        })?;
        tracing::info!(server = %name, agents = ?lost, "MCP server removed");
        Ok(lost)
    }

    /// Enables (or disables) the server `server` for `alias` by editing the agent's
    /// `mcp_servers` through the validated edit. Returns the agent's servers afterwards.
    pub fn set_agent_mcp_server(
        &self,
        alias: &str,
        server: &str,
        enabled: bool,
    ) -> Result<Vec<String>, ApiError> {
        let cfg = self.save_config_edit(|doc| {
            if enabled && !doc.has_mcp_server(server) {
                return Err(ApiError::new(
                    ErrorCode::NotFound,
                    format!("MCP server `{server}` is not defined in [mcp_servers]"),
                ));
            }
            doc.set_agent_mcp_server(alias, server, enabled)
                .map(|_| ())
                .map_err(document_error)
        })?;
        tracing::info!(agent = %alias, server = %server, enabled, "MCP server set for agent");
        Ok(cfg
            .agents
            .get(alias)
            .map(|a| a.mcp_servers.clone())
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn findings_are_placed_at_their_field() {
        let table = [
            ("mcp_servers.fs", McpField::Name),
            ("mcp_servers.fs.command", McpField::Command),
            ("mcp_servers.fs.args", McpField::Args),
            ("mcp_servers.fs.env.DISPLAY", McpField::Env),
            ("mcp_servers.fs.env.\"A=B\"", McpField::Env),
            ("agents.bob.mcp_servers[0]", McpField::Agents),
            ("mcp_servers.fsx.command", McpField::Other),
            ("risk_profiles.p.level", McpField::Other),
        ];
        for (path, field) in table {
            assert_eq!(field_of("fs", path), field, "{path}");
        }
    }

    #[test]
    fn credential_values_are_hidden_in_the_diff() {
        let diff = vec![DiffLine {
            kind: crate::profiles::DiffKind::Add,
            text: r#"env = { API_TOKEN = "s3cr3t-value", LEVEL = "warn" }"#.into(),
        }];
        let out = hide_credentials(diff, &["s3cr3t-value".into()]);
        assert_eq!(
            out[0].text,
            r#"env = { API_TOKEN = "••••••", LEVEL = "warn" }"#
        );
    }
}
