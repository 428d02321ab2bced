//! The config edits only the lifecycle service may make (rules §8): re-keying and removing
//! `[agents.<alias>]`, rewriting or scrubbing every reference to an alias, and putting an archived
//! block back. Comments and layout of everything else survive.

use crate::document::{ConfigDocument, DocumentError};
use toml_edit::{DocumentMut, Item, Key, Table, Value};
use warren_types::validate_alias;

/// A `[cron.<id>]` block taken out of the config by a delete.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemovedBlock {
    /// The agent alias or cron id.
    pub name: String,
    /// The block as TOML text, comments included.
    pub text: String,
}

fn invalid(alias: &str, reason: String) -> DocumentError {
    DocumentError::InvalidAlias {
        alias: alias.to_string(),
        reason,
    }
}

fn agents_table(doc: &mut DocumentMut) -> Result<&mut Table, DocumentError> {
    doc.get_mut("agents")
        .and_then(Item::as_table_mut)
        .ok_or(DocumentError::NotATable {
            path: "agents".into(),
        })
}

/// Renders `item` as a stand-alone TOML document under `[<section>.<name>]`.
fn render_block(section: &str, name: &str, item: Item) -> String {
    let mut doc = DocumentMut::new();
    let mut parent = Table::new();
    parent.set_implicit(true);
    parent.insert(name, item);
    doc.insert(section, Item::Table(parent));
    let text = doc.to_string();
    let trimmed = text.trim_start_matches('\n');
    format!("{}\n", trimmed.trim_end())
}

/// The top-level key a table header line (`[a.b]`, `[[a.b]]`, `[ "a" . b ]`) opens, or `None`
/// when the line is not a header.
fn header_section(line: &str) -> Option<String> {
    let t = line.trim_start();
    let inner = t.strip_prefix("[[").or_else(|| t.strip_prefix('['))?;
    let inner = inner.trim_start();
    let first = if let Some(rest) = inner.strip_prefix('"') {
        rest.split('"').next()?.to_string()
    } else if let Some(rest) = inner.strip_prefix('\'') {
        rest.split('\'').next()?.to_string()
    } else {
        inner.split(['.', ']']).next()?.trim().to_string()
    };
    (!first.is_empty()).then_some(first)
}

/// The byte offset just after the last table of `section` in `text`: the start of the
/// comment lines (and blank lines) that lead into the next table of another section, or the
/// end of the text. `None` when `section` has no table header. Lines inside multi-line strings
/// are never taken for headers.
fn section_end(text: &str, section: &str) -> Option<usize> {
    let mut offsets = Vec::new();
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        offsets.push((pos, line));
        pos += line.len();
    }
    let mut in_string: Option<&str> = None;
    let mut last_own: Option<usize> = None;
    let mut next_other: Option<usize> = None;
    for (i, (_, line)) in offsets.iter().enumerate() {
        if in_string.is_none() {
            match header_section(line) {
                Some(s) if s == section => {
                    last_own = Some(i);
                    next_other = None;
                }
                Some(_) if last_own.is_some() && next_other.is_none() => next_other = Some(i),
                _ => {}
            }
        }
        for quote in ["\"\"\"", "\'\'\'"] {
            let n = line.matches(quote).count();
            if n % 2 == 1 {
                in_string = match in_string {
                    Some(q) if q == quote => None,
                    None => Some(quote),
                    other => other,
                };
            }
        }
    }
    last_own?;
    let Some(mut j) = next_other else {
        return Some(text.len());
    };
    // The comments right above the next header are that table's.
    while j > 0 {
        let prev = offsets[j - 1].1.trim();
        if prev.starts_with('#') || prev.is_empty() {
            j -= 1;
        } else {
            break;
        }
    }
    Some(offsets[j].0)
}

/// Replaces string values equal to `old` in an array with `new` (or drops them when `new` is
/// `None`); returns how many matched.
fn edit_string_array(item: &mut Item, old: &str, new: Option<&str>) -> usize {
    let Some(arr) = item.as_array_mut() else {
        return 0;
    };
    let mut n = 0;
    match new {
        Some(new) => {
            for v in arr.iter_mut() {
                if v.as_str() == Some(old) {
                    let decor = v.decor().clone();
                    *v = Value::from(new);
                    *v.decor_mut() = decor;
                    n += 1;
                }
            }
        }
        None => {
            let before = arr.len();
            arr.retain(|v| v.as_str() != Some(old));
            n = before - arr.len();
        }
    }
    n
}

/// Rewrites or drops `read_memory_from` entries naming `old` (plain strings and
/// `{ agent = ... }` inline tables).
fn edit_memory_grants(item: &mut Item, old: &str, new: Option<&str>) -> usize {
    let Some(arr) = item.as_array_mut() else {
        return 0;
    };
    let names = |v: &Value| match v {
        Value::String(s) => s.value() == old,
        Value::InlineTable(t) => t.get("agent").and_then(Value::as_str) == Some(old),
        _ => false,
    };
    let mut n = 0;
    match new {
        Some(new) => {
            for v in arr.iter_mut() {
                if !names(v) {
                    continue;
                }
                n += 1;
                match v {
                    Value::InlineTable(t) => {
                        if let Some(a) = t.get_mut("agent") {
                            let decor = a.decor().clone();
                            *a = Value::from(new);
                            *a.decor_mut() = decor;
                        }
                    }
                    other => {
                        let decor = other.decor().clone();
                        *other = Value::from(new);
                        *other.decor_mut() = decor;
                    }
                }
            }
        }
        None => {
            let before = arr.len();
            arr.retain(|v| !names(v));
            n = before - arr.len();
        }
    }
    n
}

/// Re-keys (or removes) `old` in a table or inline table, keeping the order of the keys.
fn edit_key(item: &mut Item, old: &str, new: Option<&str>) -> usize {
    let rename = |k: Key| new.map(|new| Key::new(new).with_leaf_decor(k.leaf_decor().clone()));
    match item {
        Item::Table(t) => {
            if !t.contains_key(old) {
                return 0;
            }
            let keys: Vec<String> = t.iter().map(|(k, _)| k.to_string()).collect();
            for k in keys {
                if let Some((key, v)) = t.remove_entry(&k) {
                    let key = if k == old { rename(key) } else { Some(key) };
                    if let Some(key) = key {
                        t.insert_formatted(&key, v);
                    }
                }
            }
            1
        }
        Item::Value(Value::InlineTable(t)) => {
            if !t.contains_key(old) {
                return 0;
            }
            let keys: Vec<String> = t.iter().map(|(k, _)| k.to_string()).collect();
            for k in keys {
                if let Some((key, v)) = t.remove_entry(&k) {
                    let key = if k == old { rename(key) } else { Some(key) };
                    if let Some(key) = key {
                        t.insert_formatted(&key, v);
                    }
                }
            }
            1
        }
        _ => 0,
    }
}

impl ConfigDocument {
    /// Whether `[agents.<alias>]` exists.
    pub fn has_agent(&self, alias: &str) -> bool {
        self.doc
            .get("agents")
            .and_then(Item::as_table_like)
            .is_some_and(|t| t.contains_key(alias))
    }

    /// Re-keys `[agents.<old>]` (and its sub-tables) to `new`, keeping its place and comments.
    pub fn rename_agent_table(&mut self, old: &str, new: &str) -> Result<(), DocumentError> {
        validate_alias(new).map_err(|e| invalid(new, e.to_string()))?;
        let agents = agents_table(&mut self.doc)?;
        if agents.contains_key(new) {
            return Err(DocumentError::AlreadyExists {
                what: "agent".into(),
                name: new.into(),
            });
        }
        let (k, item) = agents
            .remove_entry(old)
            .ok_or_else(|| DocumentError::NotFound {
                what: "agent".into(),
                name: old.into(),
            })?;
        let key = Key::new(new).with_leaf_decor(k.leaf_decor().clone());
        agents.insert_formatted(&key, item);
        Ok(())
    }

    /// Points every reference to `old` at `new`: `delegates`, `workspace.access` keys,
    /// `read_memory_from` entries of every agent, and `cron.<id>.agent`. Returns the number of
    /// references rewritten.
    pub fn rewrite_agent_references(&mut self, old: &str, new: &str) -> usize {
        self.edit_references(old, Some(new), true)
    }

    /// Removes the soft references to `alias` from the other agents (`delegates`,
    /// `workspace.access` keys, `read_memory_from` entries). Cron blocks are taken out by
    /// [`ConfigDocument::remove_cron_blocks_for`]. Returns the number removed.
    pub fn scrub_agent_references(&mut self, alias: &str) -> usize {
        let n = self.edit_references(alias, None, false);
        // A grant table (or workspace table) left empty goes with its header.
        let holders: Vec<String> = self
            .doc
            .get("agents")
            .and_then(Item::as_table_like)
            .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
            .unwrap_or_default();
        for h in &holders {
            self.prune_emptied(&["agents", h, "workspace", "access"]);
        }
        n
    }

    fn edit_references(&mut self, old: &str, new: Option<&str>, cron: bool) -> usize {
        let mut n = 0;
        if let Some(agents) = self.doc.get_mut("agents").and_then(Item::as_table_like_mut) {
            for (_, agent) in agents.iter_mut() {
                let Some(agent) = agent.as_table_like_mut() else {
                    continue;
                };
                if let Some(d) = agent.get_mut("delegates") {
                    n += edit_string_array(d, old, new);
                }
                let Some(ws) = agent.get_mut("workspace").and_then(Item::as_table_like_mut) else {
                    continue;
                };
                if let Some(access) = ws.get_mut("access") {
                    n += edit_key(access, old, new);
                }
                if let Some(grants) = ws.get_mut("read_memory_from") {
                    n += edit_memory_grants(grants, old, new);
                }
            }
        }
        if cron {
            if let Some(jobs) = self.doc.get_mut("cron").and_then(Item::as_table_like_mut) {
                for (_, job) in jobs.iter_mut() {
                    let Some(agent) = job.as_table_like_mut().and_then(|j| j.get_mut("agent"))
                    else {
                        continue;
                    };
                    if agent.as_str() == Some(old) {
                        if let (Some(new), Some(v)) = (new, agent.as_value_mut()) {
                            let decor = v.decor().clone();
                            *v = Value::from(new);
                            *v.decor_mut() = decor;
                            n += 1;
                        }
                    }
                }
            }
        }
        if let Some(new) = new {
            n += self.rewrite_secret_namespace(old, new);
        }
        n
    }

    /// Re-points provider keys kept in an agent's secret namespace (`secret =
    /// "agent:<old>/NAME"` in `[providers.models.<family>.<alias>]`) to the renamed agent.
    fn rewrite_secret_namespace(&mut self, old: &str, new: &str) -> usize {
        let prefix = format!("agent:{old}/");
        let mut n = 0;
        let Some(families) = self
            .doc
            .get_mut("providers")
            .and_then(Item::as_table_like_mut)
            .and_then(|p| p.get_mut("models"))
            .and_then(Item::as_table_like_mut)
        else {
            return 0;
        };
        for (_, family) in families.iter_mut() {
            let Some(entries) = family.as_table_like_mut() else {
                continue;
            };
            for (_, entry) in entries.iter_mut() {
                let Some(secret) = entry.as_table_like_mut().and_then(|e| e.get_mut("secret"))
                else {
                    continue;
                };
                let Some(rest) = secret.as_str().and_then(|s| s.strip_prefix(&prefix)) else {
                    continue;
                };
                let renamed = format!("agent:{new}/{rest}");
                if let Some(v) = secret.as_value_mut() {
                    let decor = v.decor().clone();
                    *v = Value::from(renamed);
                    *v.decor_mut() = decor;
                    n += 1;
                }
            }
        }
        n
    }

    /// Removes `[agents.<alias>]` and returns it as TOML text, comments included.
    pub fn remove_agent_table(&mut self, alias: &str) -> Result<String, DocumentError> {
        let agents = agents_table(&mut self.doc)?;
        let item = agents
            .remove(alias)
            .ok_or_else(|| DocumentError::NotFound {
                what: "agent".into(),
                name: alias.into(),
            })?;
        Ok(render_block("agents", alias, item))
    }

    /// The text `[agents.<alias>]` would have if removed, without removing it (dry runs).
    pub fn agent_block_text(&self, alias: &str) -> Option<String> {
        let item = self.doc.get("agents")?.as_table_like()?.get(alias)?.clone();
        Some(render_block("agents", alias, item))
    }

    /// Takes every `[cron.<id>]` block whose `agent` is `alias` out of the config and returns
    /// them as text, in id order.
    pub fn remove_cron_blocks_for(&mut self, alias: &str) -> Vec<RemovedBlock> {
        let Some(jobs) = self.doc.get_mut("cron").and_then(Item::as_table_like_mut) else {
            return Vec::new();
        };
        let ids: Vec<String> = jobs
            .iter()
            .filter(|(_, j)| {
                j.as_table_like()
                    .and_then(|t| t.get("agent"))
                    .and_then(Item::as_str)
                    == Some(alias)
            })
            .map(|(id, _)| id.to_string())
            .collect();
        let mut out = Vec::new();
        for id in ids {
            if let Some(item) = jobs.remove(&id) {
                out.push(RemovedBlock {
                    text: render_block("cron", &id, item),
                    name: id,
                });
            }
        }
        out
    }

    /// Takes `[<section>.<name>]` (a profile, say) out of the config and returns it as text,
    /// comments included, or `None` when there is no such table. Agents are the lifecycle
    /// service's (refused).
    pub fn remove_named_block(
        &mut self,
        section: &str,
        name: &str,
    ) -> Result<Option<RemovedBlock>, DocumentError> {
        if section == "agents" {
            return Err(DocumentError::LifecycleOnly {
                path: format!("agents.{name}"),
            });
        }
        let Some(table) = self.doc.get_mut(section).and_then(Item::as_table_like_mut) else {
            return Ok(None);
        };
        Ok(table.remove(name).map(|item| RemovedBlock {
            text: render_block(section, name, item),
            name: name.to_string(),
        }))
    }

    /// Puts back a block [`ConfigDocument::remove_named_block`] took out: `block` must hold
    /// exactly `[<section>.<name>]`. Refuses a name that is taken.
    pub fn insert_named_block(
        &mut self,
        section: &str,
        name: &str,
        block: &str,
    ) -> Result<(), DocumentError> {
        if section == "agents" {
            return Err(DocumentError::LifecycleOnly {
                path: format!("agents.{name}"),
            });
        }
        let taken = self
            .doc
            .get(section)
            .and_then(Item::as_table_like)
            .is_some_and(|t| t.contains_key(name));
        if taken {
            return Err(DocumentError::AlreadyExists {
                what: section.trim_end_matches('s').replace('_', " "),
                name: name.into(),
            });
        }
        let piece = ConfigDocument::parse(block)?;
        let top: Vec<String> = piece.doc.iter().map(|(k, _)| k.to_string()).collect();
        let names: Vec<String> = piece
            .doc
            .get(section)
            .and_then(Item::as_table_like)
            .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
            .unwrap_or_default();
        if top != [section] || names != [name] {
            return Err(DocumentError::NotATable {
                path: format!("{section}.{name} (the block must hold exactly that table)"),
            });
        }
        self.insert_text_in_section(section, &piece.doc.to_string())
    }

    /// Puts back an archived `[agents.<original>]` block as `[agents.<alias>]` (re-keyed when the
    /// names differ), after the last agent's tables. Refuses a taken alias.
    pub fn insert_agent_block(&mut self, alias: &str, block: &str) -> Result<(), DocumentError> {
        validate_alias(alias).map_err(|e| invalid(alias, e.to_string()))?;
        if self.has_agent(alias) {
            return Err(DocumentError::AlreadyExists {
                what: "agent".into(),
                name: alias.into(),
            });
        }
        let mut piece = ConfigDocument::parse(block)?;
        let names: Vec<String> = piece
            .doc
            .get("agents")
            .and_then(Item::as_table_like)
            .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
            .unwrap_or_default();
        let [original] = names.as_slice() else {
            return Err(DocumentError::NotATable {
                path: "agents (the archived block must hold exactly one agent)".into(),
            });
        };
        if original != alias {
            piece.rename_agent_table(original, alias)?;
        }
        self.insert_text_in_section("agents", &piece.doc.to_string())
    }

    /// The agent of `[cron.<id>]`, when that job exists and names one.
    pub fn cron_agent(&self, id: &str) -> Option<String> {
        self.doc
            .get("cron")
            .and_then(Item::as_table_like)
            .and_then(|t| t.get(id))
            .and_then(Item::as_table_like)
            .and_then(|job| job.get("agent"))
            .and_then(Item::as_str)
            .map(str::to_string)
    }

    /// Puts back an archived `[cron.<id>]` block after the last cron job, re-pointed at
    /// `agent`. Refuses a taken id.
    pub fn insert_cron_block(
        &mut self,
        id: &str,
        block: &str,
        agent: &str,
    ) -> Result<(), DocumentError> {
        let taken = self
            .doc
            .get("cron")
            .and_then(Item::as_table_like)
            .is_some_and(|t| t.contains_key(id));
        if taken {
            return Err(DocumentError::AlreadyExists {
                what: "cron job".into(),
                name: id.into(),
            });
        }
        let mut piece = ConfigDocument::parse(block)?;
        if let Some(job) = piece
            .doc
            .get_mut("cron")
            .and_then(Item::as_table_like_mut)
            .and_then(|t| t.get_mut(id))
            .and_then(Item::as_table_like_mut)
        {
            job.insert("agent", toml_edit::value(agent));
        }
        self.insert_text_in_section("cron", &piece.doc.to_string())
    }

    /// Drops references inside `[agents.<alias>]` to agents (and `mcp_servers` entries naming
    /// MCP servers) the config does not define; returns the dropped names (a restored entry may
    /// point at agents or servers deleted since).
    pub fn drop_dangling_references(&mut self, alias: &str) -> Vec<String> {
        let keys = |section: &str| -> Vec<String> {
            self.doc
                .get(section)
                .and_then(Item::as_table_like)
                .map(|t| t.iter().map(|(k, _)| k.to_string()).collect())
                .unwrap_or_default()
        };
        let defined = keys("agents");
        let servers = keys("mcp_servers");
        let Some(agent) = self
            .doc
            .get_mut("agents")
            .and_then(Item::as_table_like_mut)
            .and_then(|t| t.get_mut(alias))
            .and_then(Item::as_table_like_mut)
        else {
            return Vec::new();
        };
        let mut gone_servers: Vec<String> = agent
            .get("mcp_servers")
            .and_then(Item::as_array)
            .map(|arr| {
                arr.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .filter(|n| !servers.contains(n))
                    .collect()
            })
            .unwrap_or_default();
        gone_servers.dedup();
        if let Some(item) = agent.get_mut("mcp_servers") {
            for gone in &gone_servers {
                edit_string_array(item, gone, None);
            }
        }
        let mut named: Vec<String> = Vec::new();
        if let Some(arr) = agent.get("delegates").and_then(Item::as_array) {
            named.extend(arr.iter().filter_map(|v| v.as_str().map(String::from)));
        }
        if let Some(ws) = agent.get("workspace").and_then(Item::as_table_like) {
            if let Some(t) = ws.get("access").and_then(Item::as_table_like) {
                named.extend(t.iter().map(|(k, _)| k.to_string()));
            }
            if let Some(arr) = ws.get("read_memory_from").and_then(Item::as_array) {
                for v in arr {
                    match v {
                        Value::String(s) => named.push(s.value().clone()),
                        Value::InlineTable(t) => {
                            if let Some(a) = t.get("agent").and_then(Value::as_str) {
                                named.push(a.to_string());
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        named.sort();
        named.dedup();
        let dangling: Vec<String> = named.into_iter().filter(|n| !defined.contains(n)).collect();
        for gone in &dangling {
            if let Some(d) = agent.get_mut("delegates") {
                edit_string_array(d, gone, None);
            }
            if let Some(ws) = agent.get_mut("workspace").and_then(Item::as_table_like_mut) {
                if let Some(access) = ws.get_mut("access") {
                    edit_key(access, gone, None);
                }
                if let Some(g) = ws.get_mut("read_memory_from") {
                    edit_memory_grants(g, gone, None);
                }
            }
        }
        self.prune_emptied(&["agents", alias, "workspace", "access"]);
        let mut dropped = dangling;
        dropped.extend(gone_servers.into_iter().map(|s| format!("mcp server {s}")));
        dropped
    }

    /// Puts `piece` (one `[<section>.<name>]` block) right after the last table of
    /// `section`, before the comments and header of whatever follows, so a restored agent
    /// goes back among the agents; appended at the end when the file has no such table.
    fn insert_text_in_section(&mut self, section: &str, piece: &str) -> Result<(), DocumentError> {
        let text = self.doc.to_string();
        let Some(at) = section_end(&text, section) else {
            return self.append_text(piece);
        };
        let (before, after) = text.split_at(at);
        let mut out = String::with_capacity(text.len() + piece.len() + 2);
        out.push_str(before.trim_end_matches('\n'));
        out.push_str("\n\n");
        out.push_str(piece.trim_matches('\n'));
        let after = after.trim_start_matches('\n');
        out.push_str(if after.is_empty() { "\n" } else { "\n\n" });
        out.push_str(after);
        *self = ConfigDocument::parse(&out)?;
        Ok(())
    }

    fn append_text(&mut self, piece: &str) -> Result<(), DocumentError> {
        let mut text = self.doc.to_string();
        if !text.ends_with('\n') && !text.is_empty() {
            text.push('\n');
        }
        if !text.is_empty() && !text.ends_with("\n\n") {
            text.push('\n');
        }
        text.push_str(piece.trim_start_matches('\n'));
        *self = ConfigDocument::parse(&text)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_removed_profile_block_goes_back_with_its_comments() {
        let text = "schema_version = 1\n\n# Careful work.\n[risk_profiles.careful]\nlevel = \"readonly\" # no side effects\n\n[risk_profiles.p]\nlevel = \"supervised\"\n";
        let mut doc = ConfigDocument::parse(text).unwrap();
        let removed = doc
            .remove_named_block("risk_profiles", "careful")
            .unwrap()
            .unwrap();
        assert!(removed.text.contains("# Careful work."), "{}", removed.text);
        assert!(
            removed.text.contains("# no side effects"),
            "{}",
            removed.text
        );
        assert!(!doc.to_string().contains("careful"));
        assert!(doc
            .remove_named_block("risk_profiles", "careful")
            .unwrap()
            .is_none());
        // Only the table it names, and never over a taken name.
        assert!(doc
            .insert_named_block("risk_profiles", "other", &removed.text)
            .is_err());
        assert!(doc
            .insert_named_block("runtime_profiles", "careful", &removed.text)
            .is_err());
        doc.insert_named_block("risk_profiles", "careful", &removed.text)
            .unwrap();
        let back = doc.to_string();
        assert!(
            back.contains(
                "# Careful work.\n[risk_profiles.careful]\nlevel = \"readonly\" # no side effects"
            ),
            "{back}"
        );
        assert!(doc
            .insert_named_block("risk_profiles", "careful", &removed.text)
            .is_err());
        assert!(doc.remove_named_block("agents", "x").is_err());
    }

    const CFG: &str = r#"schema_version = 1

[risk_profiles.p]
level = "supervised"

# Alice does research.
[agents.alice]
risk_profile = "p" # inline note
delegates = ["bob"]

[agents.alice.workspace]
read_memory_from = ["bob", { agent = "carol", categories = ["core"] }]

[agents.alice.workspace.access]
bob = "read" # read only

# Bob writes.
[agents.bob]
risk_profile = "p"
delegates = ["alice", "carol"]

[agents.bob.workspace]
read_memory_from = [{ agent = "alice", categories = ["core"] }]
access = { alice = "read_write" }

[agents.carol]
risk_profile = "p"

# nightly digest
[cron.digest]
agent = "alice"
schedule = "0 3 * * *"
prompt = "digest"
enabled = false
"#;

    #[test]
    fn rename_rewrites_every_reference_and_keeps_comments() {
        let mut d = ConfigDocument::parse(CFG).unwrap();
        d.rename_agent_table("alice", "ann").unwrap();
        assert_eq!(d.rewrite_agent_references("alice", "ann"), 4);
        let out = d.to_string();
        assert!(!out.contains("alice"), "{out}");
        assert!(
            out.contains("# Alice does research.\n[agents.ann]\n"),
            "{out}"
        );
        assert!(out.contains("risk_profile = \"p\" # inline note"), "{out}");
        assert!(out.contains("[agents.ann.workspace.access]\nbob = \"read\" # read only"));
        assert!(out.contains("delegates = [\"ann\", \"carol\"]"), "{out}");
        assert!(
            out.contains("{ agent = \"ann\", categories = [\"core\"] }"),
            "{out}"
        );
        assert!(out.contains("access = { ann = \"read_write\" }"), "{out}");
        assert!(out.contains("agent = \"ann\""), "{out}");
        // The block stays where it was: before bob.
        assert!(out.find("[agents.ann]").unwrap() < out.find("[agents.bob]").unwrap());
        crate::parse_config(&out).unwrap();
    }

    #[test]
    fn rename_repoints_provider_keys_in_the_agent_namespace_and_keeps_comments() {
        let cfg = format!(
            "{CFG}\n[providers.models.openai.alice_key]\n# her own key\nsecret = \"agent:alice/OPENAI\" # moved on rename\n\n[providers.models.openai.shared]\nsecret = \"OPENAI\"\n\n[providers.models.openai.al]\nsecret = \"agent:al/OPENAI\"\n"
        );
        let mut d = ConfigDocument::parse(&cfg).unwrap();
        d.rename_agent_table("alice", "ann").unwrap();
        // 4 agent references plus the one provider key.
        assert_eq!(d.rewrite_agent_references("alice", "ann"), 5);
        let out = d.to_string();
        assert!(
            out.contains("# her own key\nsecret = \"agent:ann/OPENAI\" # moved on rename"),
            "{out}"
        );
        assert!(out.contains("secret = \"OPENAI\""), "{out}");
        // Another agent whose alias is a prefix of the old one keeps its key.
        assert!(out.contains("secret = \"agent:al/OPENAI\""), "{out}");
        assert!(!out.contains("agent:alice/"), "{out}");
    }

    #[test]
    fn rename_refuses_taken_or_invalid_alias() {
        let mut d = ConfigDocument::parse(CFG).unwrap();
        assert!(matches!(
            d.rename_agent_table("alice", "bob"),
            Err(DocumentError::AlreadyExists { .. })
        ));
        assert!(matches!(
            d.rename_agent_table("alice", "Bad"),
            Err(DocumentError::InvalidAlias { .. })
        ));
        assert!(matches!(
            d.rename_agent_table("nobody", "x"),
            Err(DocumentError::NotFound { .. })
        ));
    }

    #[test]
    fn delete_scrubs_soft_references_and_returns_the_block() {
        let mut d = ConfigDocument::parse(CFG).unwrap();
        let block = d.remove_agent_table("alice").unwrap();
        assert!(
            block.starts_with("# Alice does research.\n[agents.alice]\n"),
            "{block}"
        );
        assert!(block.contains("[agents.alice.workspace.access]\nbob = \"read\" # read only"));
        assert_eq!(d.scrub_agent_references("alice"), 3);
        let cron = d.remove_cron_blocks_for("alice");
        assert_eq!(cron.len(), 1);
        assert!(
            cron[0].text.contains("# nightly digest\n[cron.digest]"),
            "{}",
            cron[0].text
        );
        let out = d.to_string();
        assert!(!out.contains("alice"), "{out}");
        crate::parse_config(&out).unwrap();
        // Back again, under another name.
        d.insert_agent_block("ann", &block).unwrap();
        d.insert_cron_block("digest", &cron[0].text, "ann").unwrap();
        let out = d.to_string();
        assert!(
            out.contains("# Alice does research.\n[agents.ann]\n"),
            "{out}"
        );
        assert!(out.contains("agent = \"ann\""), "{out}");
        crate::parse_config(&out).unwrap();
    }

    #[test]
    fn generic_edits_refuse_agent_tables_and_point_to_the_lifecycle() {
        let mut d = ConfigDocument::parse(CFG).unwrap();
        for err in [
            d.remove(&["agents", "alice"]).unwrap_err(),
            d.remove(&["agents"]).unwrap_err(),
            d.set_value(&["agents", "ann"], toml_edit::Value::from("x"))
                .unwrap_err(),
        ] {
            assert!(matches!(err, DocumentError::LifecycleOnly { .. }), "{err}");
            let msg = err.to_string();
            assert!(
                msg.contains("warren agents rename") && msg.contains("warren agents delete"),
                "{msg}"
            );
        }
        assert_eq!(d.to_string(), CFG, "nothing changed");
    }

    #[test]
    fn dangling_references_of_a_restored_entry_are_dropped() {
        let mut d = ConfigDocument::parse(CFG).unwrap();
        let block = d.remove_agent_table("alice").unwrap();
        d.scrub_agent_references("alice");
        d.remove_cron_blocks_for("alice");
        d.remove_agent_table("carol").unwrap();
        d.scrub_agent_references("carol");
        d.insert_agent_block("alice", &block).unwrap();
        assert_eq!(
            d.drop_dangling_references("alice"),
            vec!["carol".to_string()]
        );
        crate::parse_config(&d.to_string()).unwrap();
    }
    #[test]
    fn a_restored_entry_loses_references_to_deleted_mcp_servers() {
        let text = format!(
            "{CFG}\n[mcp_servers.fs]\ncommand = \"node\"\n[mcp_servers.gone]\ncommand = \"x\"\n"
        );
        let mut d = ConfigDocument::parse(&text).unwrap();
        d.set_value(
            &["agents", "alice", "mcp_servers"],
            ConfigDocument::string_array(["fs", "gone"]),
        )
        .unwrap();
        let block = d.remove_agent_table("alice").unwrap();
        d.scrub_agent_references("alice");
        d.remove_cron_blocks_for("alice");
        d.remove(&["mcp_servers", "gone"]).unwrap();
        d.insert_agent_block("alice", &block).unwrap();
        assert_eq!(
            d.drop_dangling_references("alice"),
            vec!["mcp server gone".to_string()]
        );
        let cfg = crate::parse_config(&d.to_string()).unwrap();
        assert_eq!(cfg.agents["alice"].mcp_servers, ["fs"]);
    }
}
