//! A hermetic install and a tool context for one agent.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use warren_config::InstallLayout;
use warren_policy::{PolicyEnv, SandboxSupport, SecurityPolicy};
use warren_tools::{ApprovalAnswer, Registry, ToolContext, ToolError};
use warren_types::Config;

pub struct Fixture {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub config: Config,
}

/// alice reads bob, writes carol; erin is not granted. Profile `full` never asks.
pub const FAMILY: &str = r#"
[risk_profiles.full]
level = "full"
allowed_commands = ["*"]
forbidden_paths = ["secrets"]
sandbox = "bubblewrap"
block_high_risk_commands = true

[risk_profiles.supervised]
auto_approve = ["file_read"]

[risk_profiles.readonly]
level = "readonly"

[runtime_profiles.quick]
shell_timeout_secs = 1
max_actions_per_hour = 2

[agents.alice]
risk_profile = "full"
[agents.alice.workspace.access]
bob = "read"
carol = "write"

[agents.sam]
risk_profile = "supervised"
[agents.rita]
risk_profile = "readonly"
[agents.quinn]
risk_profile = "full"
runtime_profile = "quick"

[agents.bob]
risk_profile = "full"
[agents.carol]
risk_profile = "full"
[agents.erin]
risk_profile = "full"
"#;

impl Fixture {
    pub fn new(text: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(root.join("data")).unwrap();
        std::fs::write(root.join("config.toml"), text).unwrap();
        let config: Config = toml::from_str(text).unwrap();
        let fx = Fixture {
            _dir: dir,
            root,
            home,
            config,
        };
        for a in fx.config.agents.keys() {
            fx.policy(a);
        }
        fx
    }

    pub fn policy(&self, alias: &str) -> SecurityPolicy {
        let env = PolicyEnv {
            layout: InstallLayout::new(&self.root),
            home: Some(self.home.clone()),
        };
        {
            // As an acting caller does: the workspace exists before anything runs in it.
            let p = SecurityPolicy::for_agent(&self.config, alias, &env).unwrap();
            p.prepare().unwrap();
            p
        }
    }

    pub fn ctx(&self, alias: &str) -> ToolContext {
        let mut env = BTreeMap::new();
        env.insert("PATH".to_string(), "/usr/bin:/bin".to_string());
        env.insert("HOME".to_string(), self.home.display().to_string());
        env.insert("SECRET_TOKEN".to_string(), "s3cr3t".to_string());
        ToolContext::new(
            Arc::new(self.policy(alias)),
            SandboxSupport::probe(Some("/usr/bin:/bin".as_ref())),
            env,
        )
    }

    pub fn ws(&self, alias: &str) -> PathBuf {
        self.root.join("agents").join(alias).join("workspace")
    }

    pub fn write(&self, path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// One call through every gate, approving whatever asks.
pub fn call(ctx: &ToolContext, tool: &str, args: Value) -> Result<Value, ToolError> {
    run(Registry::builtin().invoke(tool, &args, ctx, &ApprovalAnswer::approve()))
}

/// Drives a tool call to its end on a runtime of its own.
pub fn run<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

/// The error code and rule of a failed call.
pub fn code(r: Result<Value, ToolError>) -> (String, Option<String>) {
    match r {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(e) => (e.code().to_string(), e.rule().map(str::to_string)),
    }
}
