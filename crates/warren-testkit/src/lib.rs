//! Test support: hermetic installs in temp folders, with a config written from text; a
//! multi-agent install ([`agents`]), real git repositories ([`git`]), a plain HTTP server
//! ([`http`]), fake provider servers
//! ([`fake_llm`]), real file-system faults ([`faults`]), processes found by command line
//! ([`procs`]) and, with the `runtime` feature, a
//! turn harness ([`turn`]) and many agents at once ([`crowd`]).

pub mod agents;
#[cfg(feature = "runtime")]
pub mod crowd;
pub mod fake_llm;
pub mod faults;
pub mod git;
pub mod http;
pub mod keyring;
pub mod mcp;
pub mod procs;
pub mod props;
#[cfg(feature = "runtime")]
pub mod turn;
pub mod zeroclaw;

use std::fs;
use std::path::{Path, PathBuf};
use tempfile::TempDir;
use warren_config::InstallLayout;

/// A throw-away install root; removed when dropped.
pub struct TestInstall {
    dir: TempDir,
}

impl TestInstall {
    /// An empty install root (no config yet).
    pub fn empty() -> std::io::Result<Self> {
        Ok(TestInstall {
            dir: tempfile::Builder::new().prefix("warren-test-").tempdir()?,
        })
    }

    /// An install whose `config.toml` is `text` (mode 0600).
    pub fn with_config(text: &str) -> std::io::Result<Self> {
        let t = Self::empty()?;
        t.write_config(text)?;
        Ok(t)
    }

    /// Replaces `config.toml` with `text`.
    pub fn write_config(&self, text: &str) -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let p = self.config_path();
        fs::write(&p, text)?;
        fs::set_permissions(&p, fs::Permissions::from_mode(0o600))
    }

    /// The current text of `config.toml`.
    pub fn read_config(&self) -> std::io::Result<String> {
        fs::read_to_string(self.config_path())
    }

    /// The install root.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `<root>/config.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.root().join("config.toml")
    }

    /// The layout of this install.
    pub fn layout(&self) -> InstallLayout {
        InstallLayout::new(self.root())
    }
}

/// A minimal valid config with the given agents, all on one `p` risk profile.
pub fn config_with_agents(aliases: &[&str]) -> String {
    let mut s = String::from("schema_version = 1\n\n[risk_profiles.p]\nlevel = \"supervised\"\n\n");
    for a in aliases {
        s.push_str(&format!("[agents.{a}]\nrisk_profile = \"p\"\n\n"));
    }
    s
}
