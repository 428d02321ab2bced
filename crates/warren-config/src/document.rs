//! Comment-preserving edits of `config.toml` through `toml_edit`. Generic edits refuse to remove
//! or re-key `[agents.<alias>]`: that is the lifecycle service's job (rules §8).

use toml_edit::{value, Array, DocumentMut, Item, Table};
use warren_types::{validate_alias, MemoryBackendKind};

/// A config file held as an editable document.
#[derive(Debug, Clone)]
pub struct ConfigDocument {
    pub(crate) doc: DocumentMut,
}

/// Why an edit was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DocumentError {
    /// The text is not valid TOML.
    #[error("TOML syntax error: {0}")]
    Syntax(String),
    /// The name is taken.
    #[error("{what} `{name}` already exists")]
    AlreadyExists {
        /// Kind of thing.
        what: String,
        /// Its name.
        name: String,
    },
    /// The name does not exist.
    #[error("{what} `{name}` does not exist")]
    NotFound {
        /// Kind of thing.
        what: String,
        /// Its name.
        name: String,
    },
    /// The alias breaks the alias rules.
    #[error("invalid agent alias `{alias}`: {reason}")]
    InvalidAlias {
        /// The alias.
        alias: String,
        /// Which rule.
        reason: String,
    },
    /// Renaming or removing agents must go through the lifecycle service.
    #[error("`{path}`: agents cannot be renamed or removed by editing the config; use `warren agents rename` or `warren agents delete` (or the Agents screen)")]
    LifecycleOnly {
        /// The refused path.
        path: String,
    },
    /// A section has an unexpected shape (for example `agents` is not a table).
    #[error("`{path}` is not a table")]
    NotATable {
        /// The dotted path.
        path: String,
    },
}

/// What `warren agents create` adds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewAgent {
    /// The alias.
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

impl ConfigDocument {
    /// Parses config text for editing.
    pub fn parse(text: &str) -> Result<Self, DocumentError> {
        text.parse::<DocumentMut>()
            .map(|doc| ConfigDocument { doc })
            .map_err(|e| DocumentError::Syntax(e.to_string()))
    }

    /// The underlying document (read-only).
    pub fn document(&self) -> &DocumentMut {
        &self.doc
    }

    fn section_mut(&mut self, key: &str) -> Result<&mut Table, DocumentError> {
        let item = self.doc.entry(key).or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        item.as_table_mut().ok_or_else(|| DocumentError::NotATable {
            path: key.to_string(),
        })
    }

    /// Appends a new `[agents.<alias>]` table after the existing agents, leaving every other
    /// byte of the file as it was.
    pub fn add_agent(&mut self, agent: &NewAgent) -> Result<(), DocumentError> {
        validate_alias(&agent.alias).map_err(|e| DocumentError::InvalidAlias {
            alias: agent.alias.clone(),
            reason: e.to_string(),
        })?;
        let agents = self.section_mut("agents")?;
        if agents.contains_key(&agent.alias) {
            return Err(DocumentError::AlreadyExists {
                what: "agent".into(),
                name: agent.alias.clone(),
            });
        }
        let mut t = Table::new();
        t.insert("risk_profile", value(agent.risk_profile.as_str()));
        if let Some(rp) = &agent.runtime_profile {
            t.insert("runtime_profile", value(rp.as_str()));
        }
        if let Some(mp) = &agent.model_provider {
            t.insert("model_provider", value(mp.as_str()));
        }
        if let Some(b) = agent.memory_backend {
            let mut m = Table::new();
            m.insert("backend", value(b.as_str()));
            t.insert("memory", Item::Table(m));
        }
        agents.insert(&agent.alias, Item::Table(t));
        Ok(())
    }

    /// Sets a value at a dotted path of plain keys (profile editors). Refuses any path that would
    /// create or re-key an agent table.
    pub fn set_value(&mut self, path: &[&str], v: toml_edit::Value) -> Result<(), DocumentError> {
        let joined = path.join(".");
        if path.first() == Some(&"agents") && path.len() <= 2 {
            return Err(DocumentError::LifecycleOnly { path: joined });
        }
        if path.first() == Some(&"agents") {
            let exists = self
                .doc
                .get("agents")
                .and_then(|a| a.as_table_like())
                .is_some_and(|a| a.contains_key(path[1]));
            if !exists {
                return Err(DocumentError::NotFound {
                    what: "agent".into(),
                    name: path[1].to_string(),
                });
            }
        }
        let (last, parents) = path.split_last().ok_or(DocumentError::NotATable {
            path: joined.clone(),
        })?;
        let mut table: &mut dyn toml_edit::TableLike = self.doc.as_table_mut();
        for key in parents {
            let item = table.entry(key).or_insert_with(|| {
                let mut t = Table::new();
                t.set_implicit(true);
                Item::Table(t)
            });
            table = item.as_table_like_mut().ok_or(DocumentError::NotATable {
                path: joined.clone(),
            })?;
        }
        match table.get_mut(last) {
            Some(Item::Value(old)) => {
                let decor = old.decor().clone();
                *old = v;
                *old.decor_mut() = decor;
            }
            _ => {
                table.insert(last, Item::Value(v));
            }
        }
        Ok(())
    }

    /// Removes a key at a dotted path (profile editors). Removing an agent table or anything
    /// directly under `agents` is refused.
    pub fn remove(&mut self, path: &[&str]) -> Result<bool, DocumentError> {
        let joined = path.join(".");
        if path.first() == Some(&"agents") && path.len() <= 2 {
            return Err(DocumentError::LifecycleOnly { path: joined });
        }
        let Some((last, parents)) = path.split_last() else {
            return Ok(false);
        };
        let mut table: &mut dyn toml_edit::TableLike = self.doc.as_table_mut();
        for key in parents {
            match table.get_mut(key).and_then(|i| i.as_table_like_mut()) {
                Some(t) => table = t,
                None => return Ok(false),
            }
        }
        let removed = table.remove(last).is_some();
        if removed {
            self.prune_emptied(parents);
        }
        Ok(removed)
    }

    /// Removes the tables along `path` that an edit left empty, deepest first, so no bare
    /// header stays behind (`[agents.x.workspace.access]` with nothing under it). Stops at the
    /// first table that still holds something, and never removes a section or a named entry
    /// (an agent, a profile, a provider route, a cron job, an MCP server).
    pub(crate) fn prune_emptied(&mut self, path: &[&str]) {
        let keep = match path.first().copied() {
            Some("agents" | "risk_profiles" | "runtime_profiles" | "cron" | "mcp_servers") => 2,
            Some("providers") => 4,
            _ => 1,
        };
        for depth in (keep + 1..=path.len()).rev() {
            let (last, parents) = match path[..depth].split_last() {
                Some(x) => x,
                None => return,
            };
            let mut table: &mut dyn toml_edit::TableLike = self.doc.as_table_mut();
            for key in parents {
                match table.get_mut(key).and_then(|i| i.as_table_like_mut()) {
                    Some(t) => table = t,
                    None => return,
                }
            }
            let empty = table
                .get(last)
                .and_then(Item::as_table_like)
                .is_some_and(|t| t.is_empty());
            if !empty {
                return;
            }
            table.remove(last);
        }
    }

    /// Builds a TOML array of strings.
    pub fn string_array<'a>(items: impl IntoIterator<Item = &'a str>) -> toml_edit::Value {
        let mut a = Array::new();
        for s in items {
            a.push(s);
        }
        toml_edit::Value::Array(a)
    }
}

impl std::fmt::Display for ConfigDocument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.doc)
    }
}
