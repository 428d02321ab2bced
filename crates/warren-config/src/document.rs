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
                .is_some_and(toml_edit::TableLike::is_empty);
            if !empty {
                return;
            }
            table.remove(last);
        }
    }

    /// Sets a risk profile's `network` (at `path`) to `rules`. A `network` that already is a
    /// table (inline, or a `[risk_profiles.<p>.network]` sub-table) is edited key by key: a
    /// list that did not change is left as written, one that did keeps its layout and the
    /// comments of the items it keeps, an empty `deny` and a false `allow_private` are removed
    /// (their defaults). Otherwise (`false`, `true`, no key) it becomes an inline table
    /// `{ allow = [...], deny = [...], allow_private = true }` holding only what differs from
    /// the defaults, the key's comments kept. `allow` is always written, so an empty one meets
    /// the validator.
    pub fn set_network_domains(
        &mut self,
        path: &[&str],
        rules: &warren_types::DomainRules,
    ) -> Result<(), DocumentError> {
        let joined = path.join(".");
        if path.first() == Some(&"agents") && path.len() <= 2 {
            return Err(DocumentError::LifecycleOnly { path: joined });
        }
        let (last, parents) = path
            .split_last()
            .ok_or(DocumentError::NotATable { path: joined })?;
        let existing = {
            let mut table: Option<&mut dyn toml_edit::TableLike> = Some(self.doc.as_table_mut());
            for key in parents {
                table = table
                    .and_then(|t| t.get_mut(key))
                    .and_then(Item::as_table_like_mut);
            }
            table
                .and_then(|t| t.get_mut(last))
                .and_then(Item::as_table_like_mut)
        };
        let Some(t) = existing else {
            let mut inline = toml_edit::InlineTable::new();
            inline.insert(
                "allow",
                Self::string_array(rules.allow.iter().map(String::as_str)),
            );
            if !rules.deny.is_empty() {
                inline.insert(
                    "deny",
                    Self::string_array(rules.deny.iter().map(String::as_str)),
                );
            }
            if rules.allow_private {
                inline.insert("allow_private", true.into());
            }
            inline.fmt();
            return self.set_value(path, toml_edit::Value::InlineTable(inline));
        };
        set_list_in_place(t, "allow", &rules.allow, true);
        set_list_in_place(t, "deny", &rules.deny, false);
        match (
            t.get("allow_private").and_then(Item::as_bool),
            rules.allow_private,
        ) {
            (Some(old), new) if old == new => {}
            (_, true) => match t.get_mut("allow_private") {
                Some(Item::Value(old)) => {
                    let decor = old.decor().clone();
                    *old = true.into();
                    *old.decor_mut() = decor;
                }
                _ => {
                    t.insert("allow_private", value(true));
                }
            },
            (_, false) => {
                t.remove("allow_private");
            }
        }
        Ok(())
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

/// Sets the list of strings `key` of `t` to `items`, editing what is written in place: nothing
/// when the list is the same, else the items kept keep their own formatting and comments and
/// a new item goes on a line of its own in a list written one a line. An empty list removes
/// the key unless `keep_empty`.
fn set_list_in_place(
    t: &mut dyn toml_edit::TableLike,
    key: &str,
    items: &[String],
    keep_empty: bool,
) {
    let old: Option<Vec<String>> = t
        .get(key)
        .and_then(Item::as_array)
        .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect());
    if old.as_deref() == Some(items) {
        return;
    }
    if items.is_empty() && !keep_empty {
        t.remove(key);
        return;
    }
    match t.get_mut(key) {
        Some(Item::Value(toml_edit::Value::Array(a))) if old.is_some() => {
            let before: Vec<toml_edit::Value> = a.iter().cloned().collect();
            // A list written one item a line: a new item goes on its own line, indented like
            // the last one (without the comment that may sit before that one).
            let line = before.last().and_then(|v| {
                let prefix = v.decor().prefix()?.as_str()?;
                let (_, indent) = prefix.rsplit_once('\n')?;
                Some(format!("\n{indent}"))
            });
            // Which item written before each one is (the first unused one with its text).
            let mut used = vec![false; before.len()];
            let chosen: Vec<Option<usize>> = items
                .iter()
                .map(|item| {
                    let i = (0..before.len())
                        .find(|i| !used[*i] && before[*i].as_str() == Some(item.as_str()))?;
                    used[i] = true;
                    Some(i)
                })
                .collect();
            // What follows the last item (`, # comment` and the line break before `]`): a new
            // item after it takes the comment's part, so the comment stays on its line.
            let trailing = a.trailing().as_str().unwrap_or_default().to_string();
            let mut trailing_taken = false;
            let mut after_last = false;
            let mut next = toml_edit::Array::new();
            for (item, kept) in items.iter().zip(chosen) {
                let follows_last = std::mem::replace(&mut after_last, false);
                match (kept, &line) {
                    (Some(i), _) => {
                        after_last = i + 1 == before.len();
                        let mut v = before[i].clone();
                        // A comment at the end of a removed item's line leaves with it.
                        if i > 0 && !used[i - 1] {
                            let prefix = v.decor().prefix().and_then(|p| p.as_str());
                            if let Some((_, rest)) = prefix.and_then(|p| p.split_once('\n')) {
                                let rest = format!("\n{rest}");
                                v.decor_mut().set_prefix(rest);
                            }
                        }
                        // In a one-line list the first item has no space before it, the
                        // others one.
                        if line.is_none() {
                            let blank = v
                                .decor()
                                .prefix()
                                .and_then(|p| p.as_str())
                                .is_none_or(|p| p.trim().is_empty());
                            if next.is_empty() {
                                v.decor_mut().set_prefix("");
                            } else if blank {
                                v.decor_mut().set_prefix(" ");
                            }
                        }
                        next.push_formatted(v);
                    }
                    (None, Some(line)) => {
                        let mut v = toml_edit::Value::from(item.as_str());
                        match trailing.split_once('\n') {
                            Some((comment, _)) if follows_last && !trailing_taken => {
                                trailing_taken = true;
                                v.decor_mut().set_prefix(format!("{comment}{line}"));
                            }
                            _ => v.decor_mut().set_prefix(line.as_str()),
                        }
                        v.decor_mut().set_suffix("");
                        next.push_formatted(v);
                    }
                    (None, None) => next.push(item.as_str()),
                }
            }
            match trailing.split_once('\n') {
                Some((_, rest)) if trailing_taken => next.set_trailing(format!("\n{rest}")),
                _ => next.set_trailing(a.trailing().clone()),
            }
            next.set_trailing_comma(a.trailing_comma());
            *next.decor_mut() = a.decor().clone();
            *a = next;
        }
        Some(Item::Value(old)) => {
            let decor = old.decor().clone();
            *old = ConfigDocument::string_array(items.iter().map(String::as_str));
            *old.decor_mut() = decor;
        }
        _ => {
            t.insert(
                key,
                Item::Value(ConfigDocument::string_array(
                    items.iter().map(String::as_str),
                )),
            );
        }
    }
}

impl std::fmt::Display for ConfigDocument {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.doc)
    }
}
