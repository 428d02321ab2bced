//! A hermetic install in a temp dir with a config, for the policy tests.

use std::path::{Path, PathBuf};
use warren_config::InstallLayout;
use warren_policy::{PolicyEnv, SecurityPolicy};
use warren_types::Config;

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub config: Config,
}

/// The standard family: alice reads bob, writes carol, read-writes dave; erin is not granted.
/// frank has the same grants with `unrestricted_filesystem`.
pub const FAMILY: &str = r#"
[risk_profiles.default]
forbidden_paths = ["~/secret", "secrets"]
allowed_commands = ["*"]

[agents.alice]
risk_profile = "default"
[agents.alice.workspace.access]
bob = "read"
carol = "write"
dave = "read_write"

[agents.frank]
risk_profile = "default"
[agents.frank.workspace]
unrestricted_filesystem = true
[agents.frank.workspace.access]
bob = "read"
carol = "write"

[agents.bob]
risk_profile = "default"
[agents.carol]
risk_profile = "default"
[agents.dave]
risk_profile = "default"
[agents.erin]
risk_profile = "default"
"#;

impl Fixture {
    pub fn new(config_text: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(root.join("shared/skills")).unwrap();
        std::fs::create_dir_all(root.join("data/agents/_deleted")).unwrap();
        std::fs::write(root.join("config.toml"), config_text).unwrap();
        let config: Config = toml::from_str(config_text).unwrap();
        let fx = Fixture {
            _dir: dir,
            root,
            home,
            config,
        };
        let aliases: Vec<String> = fx.config.agents.keys().cloned().collect();
        for a in aliases {
            fx.policy(&a);
        }
        fx
    }

    pub fn env(&self) -> PolicyEnv {
        PolicyEnv {
            layout: InstallLayout::new(&self.root),
            home: Some(self.home.clone()),
        }
    }

    pub fn policy(&self, alias: &str) -> SecurityPolicy {
        {
            // As an acting caller does: the workspace exists before anything runs in it.
            let p = SecurityPolicy::for_agent(&self.config, alias, &self.env()).unwrap();
            p.prepare().unwrap();
            p
        }
    }

    pub fn ws(&self, alias: &str) -> PathBuf {
        self.root.join("agents").join(alias).join("workspace")
    }

    pub fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}
