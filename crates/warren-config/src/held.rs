//! The grants other agents hold on an agent (`delegates`, `workspace.access`,
//! `read_memory_from`): captured before a delete removes them, so that a restore can put
//! back those whose holder still exists.

use crate::document::{ConfigDocument, DocumentError};
use serde::{Deserialize, Serialize};
use toml_edit::{Array, InlineTable, Item, Table, Value};
use warren_types::{AccessMode, Config, MemoryGrant};

/// One grant another agent (the holder) has on an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HeldReference {
    /// `agents.<holder>.delegates` names the agent.
    Delegate {
        /// The agent that may delegate to it.
        holder: String,
    },
    /// `agents.<holder>.workspace.access.<agent> = <mode>`.
    Access {
        /// The agent granted access to its workspace.
        holder: String,
        /// The access mode.
        mode: AccessMode,
    },
    /// `agents.<holder>.workspace.read_memory_from` names the agent.
    MemoryGrant {
        /// The agent that reads its memory.
        holder: String,
        /// The categories, or `None` for all of them.
        categories: Option<Vec<String>>,
    },
}

fn mode_str(m: AccessMode) -> &'static str {
    match m {
        AccessMode::Read => "read",
        AccessMode::Write => "write",
        AccessMode::ReadWrite => "read_write",
    }
}

impl HeldReference {
    /// The agent holding the grant.
    pub fn holder(&self) -> &str {
        match self {
            HeldReference::Delegate { holder }
            | HeldReference::Access { holder, .. }
            | HeldReference::MemoryGrant { holder, .. } => holder,
        }
    }

    /// The same grant held by `holder` (the holder renamed since).
    pub fn with_holder(&self, holder: &str) -> HeldReference {
        let mut r = self.clone();
        match &mut r {
            HeldReference::Delegate { holder: h }
            | HeldReference::Access { holder: h, .. }
            | HeldReference::MemoryGrant { holder: h, .. } => *h = holder.to_string(),
        }
        r
    }

    /// The dotted config path of the grant on `alias`.
    pub fn path(&self, alias: &str) -> String {
        match self {
            HeldReference::Delegate { holder } => format!("agents.{holder}.delegates"),
            HeldReference::Access { holder, .. } => {
                format!("agents.{holder}.workspace.access.{alias}")
            }
            HeldReference::MemoryGrant { holder, .. } => {
                format!("agents.{holder}.workspace.read_memory_from")
            }
        }
    }

    /// The kind of reference it is.
    pub fn kind(&self) -> crate::RefKind {
        match self {
            HeldReference::Delegate { .. } => crate::RefKind::Delegate,
            HeldReference::Access { .. } => crate::RefKind::WorkspaceAccess,
            HeldReference::MemoryGrant { .. } => crate::RefKind::ReadMemoryFrom,
        }
    }

    /// The grant as a config line, for `alias`: `agents.bob.workspace.access.carol = "read"`.
    pub fn describe(&self, alias: &str) -> String {
        match self {
            HeldReference::Delegate { holder } => {
                format!("agents.{holder}.delegates includes `{alias}`")
            }
            HeldReference::Access { holder, mode } => format!(
                "agents.{holder}.workspace.access.{alias} = \"{}\"",
                mode_str(*mode)
            ),
            HeldReference::MemoryGrant { holder, categories } => match categories {
                None => format!("agents.{holder}.workspace.read_memory_from includes `{alias}`"),
                Some(c) => format!(
                    "agents.{holder}.workspace.read_memory_from includes `{alias}` (categories {})",
                    c.join(", ")
                ),
            },
        }
    }
}

/// Every grant the other agents of `config` hold on `alias`, in a stable order.
pub fn held_references(config: &Config, alias: &str) -> Vec<HeldReference> {
    let mut out = Vec::new();
    for (holder, agent) in config.agents.iter().filter(|(a, _)| a.as_str() != alias) {
        if agent.delegates.iter().any(|d| d == alias) {
            out.push(HeldReference::Delegate {
                holder: holder.clone(),
            });
        }
        if let Some(mode) = agent.workspace.access.get(alias) {
            out.push(HeldReference::Access {
                holder: holder.clone(),
                mode: *mode,
            });
        }
        for g in agent
            .workspace
            .read_memory_from
            .iter()
            .filter(|g| g.agent() == alias)
        {
            out.push(HeldReference::MemoryGrant {
                holder: holder.clone(),
                categories: match g {
                    MemoryGrant::Agent(_) => None,
                    MemoryGrant::Scoped { categories, .. } => Some(categories.clone()),
                },
            });
        }
    }
    out
}

impl ConfigDocument {
    /// Puts `r` back as a grant on `alias`. `Ok(false)` when its holder is not in the config
    /// (nothing is written) or the grant is already there.
    pub fn restore_reference(
        &mut self,
        alias: &str,
        r: &HeldReference,
    ) -> Result<bool, DocumentError> {
        let Some(holder) = self
            .doc
            .get_mut("agents")
            .and_then(Item::as_table_like_mut)
            .and_then(|t| t.get_mut(r.holder()))
            .and_then(Item::as_table_like_mut)
        else {
            return Ok(false);
        };
        let not_a_table = || DocumentError::NotATable {
            path: format!("agents.{}.workspace", r.holder()),
        };
        match r {
            HeldReference::Delegate { .. } => {
                let item = holder
                    .entry("delegates")
                    .or_insert(Item::Value(Value::Array(Array::new())));
                let Some(arr) = item.as_array_mut() else {
                    return Err(DocumentError::NotATable {
                        path: format!("agents.{}.delegates", r.holder()),
                    });
                };
                if arr.iter().any(|v| v.as_str() == Some(alias)) {
                    return Ok(false);
                }
                arr.push(alias);
            }
            HeldReference::Access { mode, .. } => {
                let ws = holder.entry("workspace").or_insert_with(implicit_table);
                let ws = ws.as_table_like_mut().ok_or_else(not_a_table)?;
                let access = ws.entry("access").or_insert_with(|| {
                    let mut t = Table::new();
                    t.set_implicit(false);
                    Item::Table(t)
                });
                let access = access.as_table_like_mut().ok_or_else(not_a_table)?;
                if access.contains_key(alias) {
                    return Ok(false);
                }
                access.insert(alias, Item::Value(Value::from(mode_str(*mode))));
            }
            HeldReference::MemoryGrant { categories, .. } => {
                let ws = holder.entry("workspace").or_insert_with(implicit_table);
                let ws = ws.as_table_like_mut().ok_or_else(not_a_table)?;
                let item = ws
                    .entry("read_memory_from")
                    .or_insert(Item::Value(Value::Array(Array::new())));
                let Some(arr) = item.as_array_mut() else {
                    return Err(not_a_table());
                };
                let present = arr.iter().any(|v| {
                    v.as_str() == Some(alias)
                        || v.as_inline_table()
                            .and_then(|t| t.get("agent"))
                            .and_then(Value::as_str)
                            == Some(alias)
                });
                if present {
                    return Ok(false);
                }
                match categories {
                    None => arr.push(alias),
                    Some(c) => {
                        let mut t = InlineTable::new();
                        t.insert("agent", Value::from(alias));
                        let mut cats = Array::new();
                        for x in c {
                            cats.push(x.as_str());
                        }
                        t.insert("categories", Value::Array(cats));
                        arr.push(Value::InlineTable(t));
                    }
                }
            }
        }
        Ok(true)
    }
}

fn implicit_table() -> Item {
    let mut t = Table::new();
    t.set_implicit(true);
    Item::Table(t)
}
