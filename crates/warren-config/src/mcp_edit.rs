//! Edits of `[mcp_servers.<name>]` and of agents' `mcp_servers` lists (the MCP servers form and
//! `warren mcp add | remove | enable | disable`): every other entry, comment and layout stays as
//! it was. The validator judges the result (names, `command`, environment rules, references).

use crate::document::{ConfigDocument, DocumentError};
use crate::issue::join;
use toml_edit::{Array, InlineTable, Item, Table, Value};

/// A stdio MCP server as the form and the CLI write it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StdioServer {
    /// The program (a name on `PATH`, or a path).
    pub command: String,
    /// Its arguments, in order.
    pub args: Vec<String>,
    /// Its environment variables, in the order given.
    pub env: Vec<(String, String)>,
}

/// The dotted path of `[mcp_servers.<name>]` as the validator names it in its findings.
pub fn mcp_server_path(name: &str) -> String {
    join("mcp_servers", name)
}

fn not_found(what: &str, name: &str) -> DocumentError {
    DocumentError::NotFound {
        what: what.into(),
        name: name.to_string(),
    }
}

/// Replaces the value at `key` keeping its comments, or inserts it.
fn put(table: &mut Table, key: &str, v: Value) {
    match table.get_mut(key) {
        Some(Item::Value(old)) => {
            let decor = old.decor().clone();
            *old = v;
            *old.decor_mut() = decor;
        }
        _ => {
            table.insert(key, Item::Value(v));
        }
    }
}

impl ConfigDocument {
    /// Whether `[mcp_servers.<name>]` exists.
    pub fn has_mcp_server(&self, name: &str) -> bool {
        self.doc
            .get("mcp_servers")
            .and_then(Item::as_table_like)
            .is_some_and(|t| t.contains_key(name))
    }

    /// Writes `[mcp_servers.<name>]` as a stdio server: a new table after the other servers,
    /// or the existing one changed in place (its comments kept; `url` dropped, empty `args` and
    /// `env` removed). `create` refuses a name that exists; otherwise a missing name is refused.
    pub fn set_mcp_server(
        &mut self,
        name: &str,
        server: &StdioServer,
        create: bool,
    ) -> Result<(), DocumentError> {
        let exists = self.has_mcp_server(name);
        match (create, exists) {
            (true, true) => {
                return Err(DocumentError::AlreadyExists {
                    what: "MCP server".into(),
                    name: name.to_string(),
                })
            }
            (false, false) => return Err(not_found("MCP server", name)),
            _ => {}
        }
        let servers = self.doc.entry("mcp_servers").or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        });
        let servers = servers
            .as_table_mut()
            .ok_or_else(|| DocumentError::NotATable {
                path: "mcp_servers".into(),
            })?;
        if !exists {
            servers.insert(name, Item::Table(Table::new()));
        }
        let table = servers
            .get_mut(name)
            .and_then(Item::as_table_mut)
            .ok_or_else(|| DocumentError::NotATable {
                path: mcp_server_path(name),
            })?;
        put(table, "command", Value::from(server.command.as_str()));
        if server.args.is_empty() {
            table.remove("args");
        } else {
            put(
                table,
                "args",
                ConfigDocument::string_array(server.args.iter().map(String::as_str)),
            );
        }
        if server.env.is_empty() {
            table.remove("env");
        } else {
            let mut env = InlineTable::new();
            for (k, v) in &server.env {
                env.insert(k, Value::from(v.as_str()));
            }
            put(table, "env", Value::InlineTable(env));
        }
        table.remove("url");
        Ok(())
    }

    /// Removes `[mcp_servers.<name>]` and the name from every agent's `mcp_servers` (an emptied
    /// list is removed). Returns the agents that lost it, in file order.
    pub fn remove_mcp_server(&mut self, name: &str) -> Result<Vec<String>, DocumentError> {
        if !self.has_mcp_server(name) {
            return Err(not_found("MCP server", name));
        }
        let aliases: Vec<String> = self
            .doc
            .get("agents")
            .and_then(Item::as_table_like)
            .map(|a| a.iter().map(|(k, _)| k.to_string()).collect())
            .unwrap_or_default();
        let mut lost = Vec::new();
        for alias in aliases {
            if self.set_agent_mcp_server(&alias, name, false)? {
                lost.push(alias);
            }
        }
        if let Some(servers) = self
            .doc
            .get_mut("mcp_servers")
            .and_then(Item::as_table_like_mut)
        {
            servers.remove(name);
            if servers.is_empty() {
                self.doc.remove("mcp_servers");
            }
        }
        Ok(lost)
    }

    /// Adds `server` to `alias`'s `mcp_servers` (appended) or removes it (an emptied list is
    /// removed). Returns whether the file changed. Whether the server exists is the
    /// validator's call.
    pub fn set_agent_mcp_server(
        &mut self,
        alias: &str,
        server: &str,
        enabled: bool,
    ) -> Result<bool, DocumentError> {
        let agent = self
            .doc
            .get_mut("agents")
            .and_then(Item::as_table_like_mut)
            .and_then(|a| a.get_mut(alias))
            .and_then(Item::as_table_like_mut)
            .ok_or_else(|| not_found("agent", alias))?;
        let has = agent
            .get("mcp_servers")
            .and_then(Item::as_array)
            .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(server)));
        if has == enabled {
            return Ok(false);
        }
        let item = agent
            .entry("mcp_servers")
            .or_insert_with(|| Item::Value(Value::Array(Array::new())));
        let arr = item
            .as_array_mut()
            .ok_or_else(|| DocumentError::NotATable {
                path: format!("agents.{alias}.mcp_servers"),
            })?;
        if enabled {
            let styled = !arr.is_empty();
            arr.push(server);
            if !styled {
                arr.fmt();
            }
        } else {
            // The first entry's layout goes to the entry that becomes first.
            let first = arr
                .get(0)
                .filter(|v| v.as_str() == Some(server))
                .map(|v| v.decor().clone());
            arr.retain(|v| v.as_str() != Some(server));
            if let (Some(decor), Some(v)) = (first, arr.get_mut(0)) {
                *v.decor_mut() = decor;
            }
            if arr.is_empty() {
                agent.remove("mcp_servers");
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_config;

    const TEXT: &str = r#"schema_version = 1

[risk_profiles.p]
level = "supervised"

# Alice reviews.
[agents.alice]
risk_profile = "p" # kept
mcp_servers = ["fs"]

[agents.bob]
risk_profile = "p"
mcp_servers = ["fs", "git"]

# The filesystem server.
[mcp_servers.fs]
command = "node" # the runtime
args = ["server.js"]

[mcp_servers.git]
url = "http://127.0.0.1:9/mcp"
"#;

    fn server(command: &str) -> StdioServer {
        StdioServer {
            command: command.into(),
            args: vec!["a b".into(), "--flag".into()],
            env: vec![("LOG_LEVEL".into(), "warn".into())],
        }
    }

    fn issues(text: &str) -> Vec<(String, String)> {
        match parse_config(text) {
            Ok(_) => Vec::new(),
            Err(e) => e
                .issues
                .iter()
                .map(|i| (i.path.clone(), i.message.clone()))
                .collect(),
        }
    }

    #[test]
    fn a_new_server_is_appended_after_the_others_and_validates() {
        let mut d = ConfigDocument::parse(TEXT).unwrap();
        d.set_mcp_server("search", &server("uvx"), true).unwrap();
        d.set_agent_mcp_server("alice", "search", true).unwrap();
        let s = d.to_string();
        assert!(
            s.ends_with(
                "[mcp_servers.search]\ncommand = \"uvx\"\nargs = [\"a b\", \"--flag\"]\nenv = { LOG_LEVEL = \"warn\" }\n"
            ),
            "{s}"
        );
        assert!(s.contains("mcp_servers = [\"fs\", \"search\"]"), "{s}");
        for c in [
            "# Alice reviews.",
            "# kept",
            "# The filesystem server.",
            "# the runtime",
        ] {
            assert!(s.contains(c), "{c} lost: {s}");
        }
        assert_eq!(issues(&s), Vec::<(String, String)>::new());
        let cfg = parse_config(&s).unwrap();
        assert_eq!(cfg.mcp_servers["search"].args, ["a b", "--flag"]);
        assert_eq!(cfg.agents["alice"].mcp_servers, ["fs", "search"]);
    }

    #[test]
    fn an_existing_server_is_changed_in_place_with_its_comments() {
        let mut d = ConfigDocument::parse(TEXT).unwrap();
        let s = StdioServer {
            command: "python3".into(),
            ..StdioServer::default()
        };
        d.set_mcp_server("fs", &s, false).unwrap();
        let text = d.to_string();
        assert!(
            text.contains("# The filesystem server.\n[mcp_servers.fs]\ncommand = \"python3\" # the runtime\n\n[mcp_servers.git]"),
            "{text}"
        );
        // An HTTP server rewritten as stdio loses its url.
        d.set_mcp_server("git", &server("git-mcp"), false).unwrap();
        let text = d.to_string();
        assert!(!text.contains("url ="), "{text}");
        assert_eq!(issues(&text), Vec::<(String, String)>::new());
    }

    #[test]
    fn adding_a_name_that_exists_or_changing_one_that_does_not_is_refused() {
        let mut d = ConfigDocument::parse(TEXT).unwrap();
        assert!(matches!(
            d.set_mcp_server("fs", &server("x"), true),
            Err(DocumentError::AlreadyExists { .. })
        ));
        assert!(matches!(
            d.set_mcp_server("nope", &server("x"), false),
            Err(DocumentError::NotFound { .. })
        ));
        assert_eq!(d.to_string(), TEXT);
    }

    #[test]
    fn removing_a_server_takes_it_from_every_agent_and_says_which() {
        let mut d = ConfigDocument::parse(TEXT).unwrap();
        let lost = d.remove_mcp_server("fs").unwrap();
        assert_eq!(lost, ["alice", "bob"]);
        let s = d.to_string();
        assert!(!s.contains("[mcp_servers.fs]"), "{s}");
        assert!(!s.contains("command = \"node\""), "{s}");
        assert!(s.contains("mcp_servers = [\"git\"]"), "{s}");
        // Alice's emptied list is gone, her comments stay.
        assert!(
            s.contains("# Alice reviews.\n[agents.alice]\nrisk_profile = \"p\" # kept\n\n"),
            "{s}"
        );
        assert_eq!(issues(&s), Vec::<(String, String)>::new());
        let lost = d.remove_mcp_server("git").unwrap();
        assert_eq!(lost, ["bob"]);
        let s = d.to_string();
        assert!(!s.contains("mcp_servers"), "no empty header is left: {s}");
        assert!(matches!(
            d.remove_mcp_server("git"),
            Err(DocumentError::NotFound { .. })
        ));
    }

    #[test]
    fn enabling_and_disabling_for_an_agent_edits_only_its_list() {
        let mut d = ConfigDocument::parse(TEXT).unwrap();
        assert!(!d.set_agent_mcp_server("alice", "fs", true).unwrap());
        assert!(d.set_agent_mcp_server("alice", "git", true).unwrap());
        assert!(d.to_string().contains("mcp_servers = [\"fs\", \"git\"]"));
        assert!(d.set_agent_mcp_server("alice", "fs", false).unwrap());
        assert!(d.set_agent_mcp_server("alice", "git", false).unwrap());
        let s = d.to_string();
        assert!(
            s.contains("[agents.alice]\nrisk_profile = \"p\" # kept\n\n[agents.bob]"),
            "{s}"
        );
        assert!(d.set_agent_mcp_server("alice", "fs", true).unwrap());
        assert!(
            d.to_string()
                .contains("risk_profile = \"p\" # kept\nmcp_servers = [\"fs\"]\n"),
            "{}",
            d
        );
        assert!(matches!(
            d.set_agent_mcp_server("nobody", "fs", true),
            Err(DocumentError::NotFound { .. })
        ));
    }

    #[test]
    fn the_validator_names_the_key_of_a_bad_edit() {
        let mut d = ConfigDocument::parse(TEXT).unwrap();
        let bad = StdioServer {
            command: " ".into(),
            args: Vec::new(),
            env: vec![
                ("DBUS_SESSION_BUS_ADDRESS".into(), "x".into()),
                ("A=B".into(), "x".into()),
            ],
        };
        d.set_mcp_server("Bad__Name", &bad, true).unwrap();
        d.set_agent_mcp_server("bob", "missing", true).unwrap();
        let found = issues(&d.to_string());
        let paths: Vec<&str> = found.iter().map(|(p, _)| p.as_str()).collect();
        for want in [
            "mcp_servers.Bad__Name",
            "mcp_servers.Bad__Name.command",
            "mcp_servers.Bad__Name.env.DBUS_SESSION_BUS_ADDRESS",
            "mcp_servers.Bad__Name.env.\"A=B\"",
            "agents.bob.mcp_servers[2]",
        ] {
            assert!(paths.contains(&want), "{want} not in {found:?}");
        }
        assert_eq!(mcp_server_path("Bad__Name"), "mcp_servers.Bad__Name");
    }
}
