//! Shared set-up of the adversarial suite: one install per case with an attacker (`mallory`),
//! a read-only sibling (`bob`), a write-only sibling (`carol`) and an ungranted one (`erin`),
//! each holding canary text that must never appear in anything mallory gets back.

use crate::fixture::Fixture;
use serde_json::Value;
use std::path::{Path, PathBuf};
use warren_policy::SandboxSupport;
use warren_tools::{ToolContext, ToolError};

/// Text planted in every place mallory may not read.
pub const CANARY: &str = "CANARY-do-not-leak-4711";

/// The sandboxes a case runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sandbox {
    Landlock,
    Bubblewrap,
    None,
}

impl Sandbox {
    pub const ALL: [Sandbox; 3] = [Sandbox::Landlock, Sandbox::Bubblewrap, Sandbox::None];

    pub fn name(self) -> &'static str {
        match self {
            Sandbox::Landlock => "landlock",
            Sandbox::Bubblewrap => "bubblewrap",
            Sandbox::None => "none",
        }
    }

    /// Whether this machine has the sandbox. Under CI a missing sandbox fails the test instead
    /// of skipping it: a suite that silently skips proves nothing.
    pub fn available(self) -> bool {
        let support = SandboxSupport::probe(Some("/usr/bin:/bin".as_ref()));
        let ok = match self {
            Sandbox::Landlock => support.landlock_abi > 0,
            Sandbox::Bubblewrap => support.bwrap.is_some(),
            Sandbox::None => true,
        };
        if !ok {
            assert!(
                std::env::var_os("CI").is_none(),
                "{} is not usable on this machine, and CI must run every sandbox case ({:?})",
                self.name(),
                support
            );
            println!("skipped: {} not usable here ({support:?})", self.name());
        }
        ok
    }
}

/// The install of one case: `mallory` attacks; `bob` is granted read, `carol` write, `erin`
/// nothing. `workspace_only` is mallory's profile setting.
pub struct Lab {
    pub fx: Fixture,
    pub sandbox: Sandbox,
}

impl Lab {
    pub fn new(sandbox: Sandbox, workspace_only: bool) -> Self {
        Self::with_profile(sandbox, workspace_only, "")
    }

    /// `extra` is appended to mallory's risk profile (for example `allowed_commands = [...]`).
    pub fn with_profile(sandbox: Sandbox, workspace_only: bool, extra: &str) -> Self {
        let commands = if extra.contains("allowed_commands") {
            String::new()
        } else {
            "allowed_commands = [\"*\"]\n".to_string()
        };
        let text = format!(
            r#"
[risk_profiles.attacker]
level = "full"
{commands}sandbox = "{sb}"
workspace_only = {workspace_only}
block_high_risk_commands = false
forbidden_paths = ["forbidden"]
{extra}

[risk_profiles.plain]
level = "full"
allowed_commands = ["*"]
sandbox = "{sb}"

[runtime_profiles.quick]
shell_timeout_secs = 5

[agents.mallory]
risk_profile = "attacker"
runtime_profile = "quick"
[agents.mallory.workspace.access]
bob = "read"
carol = "write"

[agents.bob]
risk_profile = "plain"
[agents.carol]
risk_profile = "plain"
[agents.erin]
risk_profile = "plain"
"#,
            sb = sandbox.name()
        );
        let fx = Fixture::new(&text);
        let lab = Lab { fx, sandbox };
        lab.plant();
        lab
    }

    fn plant(&self) {
        for (agent, file) in [
            ("bob", "notes.txt"),
            ("carol", "private.txt"),
            ("erin", "secret.txt"),
        ] {
            self.fx.write(
                &self.ws(agent).join(file),
                &format!("{CANARY} of {agent}\n"),
            );
        }
        self.fx.write(
            &self.ws("mallory").join("forbidden/key.txt"),
            &format!("{CANARY} forbidden\n"),
        );
        self.fx.write(
            &self.fx.root.join("data/state.txt"),
            &format!("{CANARY} data\n"),
        );
        self.fx.write(&self.ws("mallory").join("own.txt"), "mine\n");
    }

    pub fn ws(&self, alias: &str) -> PathBuf {
        self.fx.ws(alias)
    }

    pub fn ctx(&self) -> ToolContext {
        self.fx.ctx("mallory")
    }

    /// Every file under the install other than mallory's own workspace, with its content:
    /// compared before and after an attack to prove nothing outside the grant changed.
    pub fn snapshot(&self) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let mine = self.ws("mallory");
        let mut out = Vec::new();
        for e in walkdir_sorted(&self.fx.root) {
            if e.starts_with(&mine) {
                continue;
            }
            let meta = std::fs::symlink_metadata(&e).ok();
            let content = meta
                .filter(std::fs::Metadata::is_file)
                .and_then(|_| std::fs::read(&e).ok());
            out.push((e, content));
        }
        out
    }
}

fn walkdir_sorted(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        out.push(p.clone());
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                for e in rd.flatten() {
                    stack.push(e.path());
                }
            }
        }
    }
    out.sort();
    out
}

/// Fails when the canary appears anywhere in a call's result or error.
#[track_caller]
pub fn assert_no_canary(r: &Result<Value, ToolError>) {
    let text = match r {
        Ok(v) => v.to_string(),
        Err(e) => format!("{e} {e:?}"),
    };
    assert!(!text.contains(CANARY), "canary leaked: {text}");
}
