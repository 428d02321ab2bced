//! Edits of one agent's `read_memory_from` list (the agent settings editor): replace or remove
//! the entry naming a peer while every other entry, comment and layout stays as it was.

use crate::document::{ConfigDocument, DocumentError};
use toml_edit::{Array, InlineTable, Item, Value};

fn names_peer(v: &Value, peer: &str) -> bool {
    match v {
        Value::String(s) => s.value() == peer,
        Value::InlineTable(t) => t.get("agent").and_then(Value::as_str) == Some(peer),
        _ => false,
    }
}

impl ConfigDocument {
    /// Sets `alias`'s memory grant on `peer`: every category when `categories` is none, else
    /// exactly those categories; `remove` drops the grant instead. An existing entry for the
    /// peer is replaced in place, a new one is appended. Returns whether the file changed.
    /// The validator judges the result (unknown peer, Markdown sides, empty lists).
    pub fn set_memory_grant(
        &mut self,
        alias: &str,
        peer: &str,
        categories: Option<&[String]>,
        remove: bool,
    ) -> Result<bool, DocumentError> {
        let agent = self
            .doc
            .get_mut("agents")
            .and_then(Item::as_table_like_mut)
            .and_then(|a| a.get_mut(alias))
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| DocumentError::NotFound {
                what: "agent".into(),
                name: alias.to_string(),
            })?;
        let workspace = agent.entry("workspace").or_insert_with(|| {
            let mut t = toml_edit::Table::new();
            t.set_implicit(false);
            Item::Table(t)
        });
        let workspace = workspace
            .as_table_like_mut()
            .ok_or_else(|| DocumentError::NotATable {
                path: format!("agents.{alias}.workspace"),
            })?;
        let entry = match categories {
            None => Value::from(peer),
            Some(cats) => {
                let mut t = InlineTable::new();
                t.insert("agent", Value::from(peer));
                let mut a = Array::new();
                for c in cats {
                    a.push(c.as_str());
                }
                t.insert("categories", Value::Array(a));
                Value::InlineTable(t)
            }
        };
        let item = workspace
            .entry("read_memory_from")
            .or_insert_with(|| Item::Value(Value::Array(Array::new())));
        let arr = item
            .as_array_mut()
            .ok_or_else(|| DocumentError::NotATable {
                path: format!("agents.{alias}.workspace.read_memory_from"),
            })?;
        let at = arr.iter().position(|v| names_peer(v, peer));
        let changed = match (at, remove) {
            (Some(i), true) => {
                arr.remove(i);
                arr.retain(|v| !names_peer(v, peer));
                true
            }
            (None, true) => false,
            (Some(i), false) => {
                let same = arr.get(i).map(|v| v.to_string().trim().to_string())
                    == Some(entry.to_string().trim().to_string());
                if let Some(v) = arr.get_mut(i) {
                    let decor = v.decor().clone();
                    *v = entry;
                    *v.decor_mut() = decor;
                }
                !same
            }
            (None, false) => {
                arr.push_formatted(entry);
                arr.fmt();
                true
            }
        };
        if arr.is_empty() {
            workspace.remove("read_memory_from");
            self.prune_emptied(&["agents", alias, "workspace"]);
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "[agents.a]\nrisk_profile = \"p\" # keep me\n[agents.a.workspace]\nread_memory_from = [\"b\", { agent = \"c\", categories = [\"core\"] }]\n";

    #[test]
    fn a_grant_is_replaced_in_place_appended_or_removed_and_comments_stay() {
        let mut d = ConfigDocument::parse(TEXT).unwrap();
        let cats = vec!["notes".to_string()];
        assert!(d.set_memory_grant("a", "b", Some(&cats), false).unwrap());
        let s = d.to_string();
        assert!(s.contains("# keep me"), "{s}");
        assert!(
            s.contains(r#"read_memory_from = [{ agent = "b", categories = ["notes"] }, { agent = "c", categories = ["core"] }]"#),
            "{s}"
        );
        assert!(d.set_memory_grant("a", "d", None, false).unwrap());
        assert!(
            d.to_string().contains(r#"categories = ["core"] }, "d"]"#),
            "{}",
            d
        );
        assert!(d.set_memory_grant("a", "c", None, true).unwrap());
        assert!(!d.to_string().contains("\"c\""), "{}", d);
        assert!(!d.set_memory_grant("a", "zz", None, true).unwrap());
        d.set_memory_grant("a", "b", None, true).unwrap();
        d.set_memory_grant("a", "d", None, true).unwrap();
        assert!(!d.to_string().contains("read_memory_from"), "{}", d);
    }

    #[test]
    fn an_unknown_agent_is_not_found() {
        let mut d = ConfigDocument::parse(TEXT).unwrap();
        assert!(matches!(
            d.set_memory_grant("nobody", "b", None, false),
            Err(DocumentError::NotFound { .. })
        ));
    }
}
