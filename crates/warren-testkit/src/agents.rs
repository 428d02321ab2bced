//! One multi-agent install: N agents on one shared risk profile, each with its workspace folder
//! created, and workspace grants between them.
//!
//! ```no_run
//! use warren_testkit::agents::{Access, Agents};
//! let team = Agents::new(&["mallory", "bob", "erin"])
//!     .profile("attacker", "level = \"full\"\nallowed_commands = [\"*\"]")
//!     .grant("mallory", "bob", Access::Read)
//!     .install()
//!     .unwrap();
//! std::fs::write(team.workspace("erin").join("secret.txt"), "canary").unwrap();
//! ```

use crate::TestInstall;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use warren_config::InstallLayout;

/// A workspace grant from one agent on another's workspace, as written in
/// `[agents.<from>.workspace.access]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// `"read"`.
    Read,
    /// `"write"`.
    Write,
    /// `"read_write"`.
    ReadWrite,
}

impl Access {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
            Access::ReadWrite => "read_write",
        }
    }
}

/// The shape of a multi-agent install, written as config text: `schema_version = 1`, the one
/// risk profile every agent uses, the agents in the order given with their grants, then any
/// extra text. The default profile is `full` (`level = "full"`, `allowed_commands = ["*"]`).
#[derive(Debug, Clone)]
pub struct Agents {
    aliases: Vec<String>,
    profile: String,
    profile_body: String,
    grants: Vec<(String, String, Access)>,
    before: String,
    extra: String,
}

impl Agents {
    /// `aliases`, all on the default `full` profile, without grants.
    pub fn new(aliases: &[&str]) -> Self {
        Agents {
            aliases: aliases
                .iter()
                .map(std::string::ToString::to_string)
                .collect(),
            profile: "full".into(),
            profile_body: "level = \"full\"\nallowed_commands = [\"*\"]".into(),
            grants: Vec::new(),
            before: String::new(),
            extra: String::new(),
        }
    }

    /// The risk profile every agent uses: `[risk_profiles.<name>]` with `body` (TOML lines).
    pub fn profile(mut self, name: &str, body: &str) -> Self {
        self.profile = name.into();
        self.profile_body = body.trim().into();
        self
    }

    /// Grants `from` `access` on `to`'s workspace.
    pub fn grant(mut self, from: &str, to: &str, access: Access) -> Self {
        self.grants.push((from.into(), to.into(), access));
        self
    }

    /// TOML tables written before the profile (for example `[memory]`).
    pub fn before(mut self, text: &str) -> Self {
        self.before.push_str(text.trim());
        self.before.push('\n');
        self
    }

    /// TOML tables written after the agents (providers, runtime profiles).
    pub fn extra(mut self, text: &str) -> Self {
        self.extra.push_str(text.trim());
        self.extra.push('\n');
        self
    }

    /// The config text.
    pub fn config_text(&self) -> String {
        let mut s = String::from("schema_version = 1\n\n");
        if !self.before.is_empty() {
            s.push_str(&self.before);
            s.push('\n');
        }
        s.push_str(&format!(
            "[risk_profiles.{}]\n{}\n\n",
            self.profile, self.profile_body
        ));
        for a in &self.aliases {
            s.push_str(&format!(
                "[agents.{a}]\nrisk_profile = \"{}\"\n",
                self.profile
            ));
            let grants: Vec<_> = self.grants.iter().filter(|(f, _, _)| f == a).collect();
            if !grants.is_empty() {
                s.push_str(&format!("[agents.{a}.workspace.access]\n"));
                for (_, to, access) in grants {
                    s.push_str(&format!("{to} = \"{}\"\n", access.as_str()));
                }
            }
            s.push('\n');
        }
        s.push_str(&self.extra);
        s
    }

    /// A new install with this config, every agent's default workspace folder created.
    pub fn install(&self) -> std::io::Result<AgentsInstall> {
        let install = TestInstall::with_config(&self.config_text())?;
        let root = std::fs::canonicalize(install.root())?;
        let mut workspaces = BTreeMap::new();
        for a in &self.aliases {
            let ws = root.join("agents").join(a).join("workspace");
            std::fs::create_dir_all(&ws)?;
            workspaces.insert(a.clone(), ws);
        }
        Ok(AgentsInstall {
            install,
            root,
            workspaces,
        })
    }
}

/// An install made by [`Agents::install`]; removed when dropped.
pub struct AgentsInstall {
    install: TestInstall,
    root: PathBuf,
    workspaces: BTreeMap<String, PathBuf>,
}

impl AgentsInstall {
    /// The install (config text, layout).
    pub fn install(&self) -> &TestInstall {
        &self.install
    }

    /// The install root, canonical (symlinks in the temp folder's path resolved).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The layout of this install, over the canonical root.
    pub fn layout(&self) -> InstallLayout {
        InstallLayout::new(&self.root)
    }

    /// `alias`'s workspace folder (canonical, created). Panics for an alias not in the install.
    pub fn workspace(&self, alias: &str) -> &Path {
        match self.workspaces.get(alias) {
            Some(p) => p,
            None => panic!("no agent {alias} in this install"),
        }
    }

    /// Every agent's workspace, by alias.
    pub fn workspaces(&self) -> &BTreeMap<String, PathBuf> {
        &self.workspaces
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_parses_with_the_grants_and_every_workspace_exists() {
        let agents = Agents::new(&["alice", "bob", "carol", "erin"])
            .profile("p", "level = \"supervised\"")
            .grant("alice", "bob", Access::Read)
            .grant("alice", "carol", Access::Write)
            .grant("bob", "carol", Access::ReadWrite)
            .before("[memory]\nbackend = \"markdown\"")
            .extra("[runtime_profiles.quick]\nshell_timeout_secs = 5");
        let text = agents.config_text();
        let config = match warren_config::parse_config(&text) {
            Ok(c) => c,
            Err(e) => panic!("{e:?}\n{text}"),
        };
        assert_eq!(config.agents.len(), 4, "{text}");
        assert!(
            text.contains("[agents.alice.workspace.access]\nbob = \"read\"\ncarol = \"write\"\n")
        );
        assert!(text.contains("[agents.bob.workspace.access]\ncarol = \"read_write\"\n"));
        assert!(!text.contains("[agents.erin.workspace"), "{text}");
        let team = agents.install().unwrap();
        assert_eq!(team.install().read_config().unwrap(), text);
        for a in ["alice", "bob", "carol", "erin"] {
            let ws = team.workspace(a);
            assert!(ws.is_dir(), "{}", ws.display());
            assert_eq!(ws, team.layout().default_workspace(a));
        }
    }
}
