//! `SecurityPolicy::for_agent` (rules §2): the effective policy of one agent, built from its risk
//! profile, runtime profile, workspace and sibling grants.

use crate::resolve::{self, ResolveError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use warren_config::{HostEnv, InstallLayout};
use warren_types::{
    AccessMode, Config, DockerConfig, MemoryGrant, RiskProfile, RuntimeKind, RuntimeProfile,
};

/// Where the desktop session keeps its sockets: always forbidden (those that exist).
pub const SESSION_SOCKETS: &[&str] = &[
    "/run/user",
    "/run/dbus",
    "/var/run/dbus",
    "/tmp/.X11-unix",
    "/tmp/.ICE-unix",
];

/// What a root lets an agent do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Read and write (the workspace, `read_write` siblings, `allowed_roots`).
    ReadWrite,
    /// Read only (`read` siblings, `shared/skills`).
    ReadOnly,
    /// Write only, never read (`write` siblings).
    WriteOnly,
}

impl Tier {
    /// Every tier.
    pub const ALL: [Tier; 3] = [Tier::ReadWrite, Tier::ReadOnly, Tier::WriteOnly];

    /// The wire spelling (`read_write`, `read_only`, `write_only`).
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::ReadWrite => "read_write",
            Tier::ReadOnly => "read_only",
            Tier::WriteOnly => "write_only",
        }
    }

    /// Whether reading is allowed under this tier.
    pub fn can_read(self) -> bool {
        matches!(self, Tier::ReadWrite | Tier::ReadOnly)
    }
    /// Whether writing is allowed under this tier.
    pub fn can_write(self) -> bool {
        matches!(self, Tier::ReadWrite | Tier::WriteOnly)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Where a root comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "snake_case")]
pub enum RootSource {
    /// The agent's own workspace.
    Workspace,
    /// A sibling's workspace, granted through `workspace.access`.
    Sibling(String),
    /// An `allowed_roots` entry, as written in the config.
    AllowedRoot(String),
    /// `<install>/shared/skills`.
    SharedSkills,
    /// The program files of an MCP server (read-only, in that server's sandbox only).
    ProgramFiles(String),
}

/// One root of the policy: a resolved directory, its tier and where it comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Root {
    /// The resolved path.
    pub path: PathBuf,
    /// What the agent may do under it.
    pub tier: Tier,
    /// Where it comes from.
    pub source: RootSource,
    /// Number of path components (for "deepest root wins").
    #[serde(skip)]
    pub(crate) depth: usize,
}

impl Root {
    pub(crate) fn new(path: PathBuf, tier: Tier, source: RootSource) -> Self {
        let depth = path.components().count();
        Root {
            path,
            tier,
            source,
            depth,
        }
    }
}

/// Why a policy could not be built.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The agent is not in the config.
    #[error("agent `{0}` is not defined in the config")]
    UnknownAgent(String),
    /// The agent's risk profile does not exist.
    #[error("agents.{alias}.risk_profile: risk profile `{profile}` is not defined")]
    UnknownRiskProfile {
        /// The agent.
        alias: String,
        /// The missing profile.
        profile: String,
    },
    /// The agent's runtime profile does not exist.
    #[error("agents.{alias}.runtime_profile: runtime profile `{profile}` is not defined")]
    UnknownRuntimeProfile {
        /// The agent.
        alias: String,
        /// The missing profile.
        profile: String,
    },
    /// A `workspace.access` key names no agent.
    #[error("agents.{alias}.workspace.access.{sibling}: agent `{sibling}` is not defined")]
    UnknownSibling {
        /// The agent.
        alias: String,
        /// The missing sibling.
        sibling: String,
    },
    /// A path in the config is malformed.
    #[error("{field}: invalid path `{value}`: {reason}")]
    InvalidPath {
        /// Dotted config path of the field.
        field: String,
        /// The value as written.
        value: String,
        /// What is wrong.
        reason: ResolveError,
    },
    /// A workspace path is not absolute.
    #[error("{field}: workspace path `{value}` must be absolute")]
    RelativeWorkspace {
        /// Dotted config path of the field.
        field: String,
        /// The value as written.
        value: String,
    },
    /// The workspace directory could not be created.
    #[error("cannot create workspace {path}: {source}")]
    CreateWorkspace {
        /// The workspace path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Host facts the policy needs and may not look up itself: the install layout and the user's
/// home directory (for `~`).
#[derive(Debug, Clone)]
pub struct PolicyEnv {
    /// The install layout (for the default workspaces, shared skills and runtime state).
    pub layout: InstallLayout,
    /// The user's home directory, used to expand `~`.
    pub home: Option<PathBuf>,
}

impl PolicyEnv {
    /// The policy environment of an install opened on a host: the install's layout and the
    /// host's home directory. Every caller that decides for a real host builds it here.
    pub fn for_host(layout: &InstallLayout, host: &HostEnv) -> Self {
        PolicyEnv {
            layout: layout.clone(),
            home: host.home.clone(),
        }
    }
}

/// The effective security policy of one agent (rules §2).
#[derive(Debug, Clone)]
pub struct SecurityPolicy {
    /// The agent's alias.
    pub alias: String,
    /// Name of the risk profile it was built from.
    pub risk_profile_name: String,
    /// The risk profile (autonomy, commands, approvals, sandbox).
    pub risk: RiskProfile,
    /// The runtime profile (budgets and timeouts).
    pub runtime: RuntimeProfile,
    /// Whether paths outside every root are denied.
    pub workspace_only: bool,
    /// The resolved workspace (created if missing).
    pub workspace: PathBuf,
    /// Every root, the workspace first.
    pub roots: Vec<Root>,
    /// Resolved `forbidden_paths`.
    pub forbidden: Vec<PathBuf>,
    /// Resolved runtime state that no agent may touch: config file, `data/`, archives, `logs/`.
    pub runtime_state: Vec<PathBuf>,
    /// The resolved install root: no agent may rename, remove or replace it or an ancestor.
    pub install_root: PathBuf,
    /// The agent's memory grants (`read_memory_from`).
    pub memory_grants: Vec<MemoryGrant>,
    /// How many delegations deep this policy is (0 for a top-level agent).
    pub delegation_depth: u32,
    /// The user's home directory.
    pub home: Option<PathBuf>,
    /// `[runtime.docker]` when `[runtime] kind = "docker"`: shell commands run in a container
    /// and git write operations are refused.
    pub container: Option<DockerConfig>,
}

impl SecurityPolicy {
    /// Makes what an agent acts in before it acts: its workspace when missing (an error names
    /// the folder when it cannot be made), and the shared skills folder, so that every sandbox
    /// sees (and protects) it even before the first skill (a folder made later would be
    /// unknown to the plan; the policy denies writing it either way, so failing to make it only
    /// leaves the sandbox without the mount).
    pub fn prepare(&self) -> Result<(), PolicyError> {
        std::fs::create_dir_all(&self.workspace).map_err(|source| {
            PolicyError::CreateWorkspace {
                path: self.workspace.clone(),
                source,
            }
        })?;
        for r in &self.roots {
            if r.source == RootSource::SharedSkills {
                let _ = std::fs::create_dir_all(&r.path);
            }
        }
        Ok(())
    }

    /// Builds the effective policy of `alias` from `config` (rules §2 steps 1–4). Reads only:
    /// nothing is created on disk (`warren policy show` and the permission map call it); a caller
    /// about to act for the agent calls [`SecurityPolicy::prepare`] first.
    pub fn for_agent(config: &Config, alias: &str, env: &PolicyEnv) -> Result<Self, PolicyError> {
        let agent = config
            .agents
            .get(alias)
            .ok_or_else(|| PolicyError::UnknownAgent(alias.to_string()))?;
        let risk = config
            .risk_profiles
            .get(&agent.risk_profile)
            .cloned()
            .ok_or_else(|| PolicyError::UnknownRiskProfile {
                alias: alias.to_string(),
                profile: agent.risk_profile.clone(),
            })?;
        let runtime = match &agent.runtime_profile {
            None => RuntimeProfile::default(),
            Some(p) => config.runtime_profiles.get(p).cloned().ok_or_else(|| {
                PolicyError::UnknownRuntimeProfile {
                    alias: alias.to_string(),
                    profile: p.clone(),
                }
            })?,
        };
        let home = env.home.as_deref();

        // 2. The workspace boundary (made by `prepare` when missing).
        let ws_lexical = workspace_path(env, alias, agent.workspace.path.as_deref())?;
        let workspace = resolve_config_path(
            &ws_lexical,
            Path::new("/"),
            home,
            &format!("agents.{alias}.workspace.path"),
        )?;

        let mut roots = vec![Root::new(
            workspace.clone(),
            Tier::ReadWrite,
            RootSource::Workspace,
        )];
        for raw in &risk.allowed_roots {
            let field = format!("risk_profiles.{}.allowed_roots", agent.risk_profile);
            let path = resolve_config_path(Path::new(raw), &workspace, home, &field)?;
            roots.push(Root::new(
                path,
                Tier::ReadWrite,
                RootSource::AllowedRoot(raw.clone()),
            ));
        }
        // 3. Sibling grants, one tier each.
        for (sibling, mode) in &agent.workspace.access {
            let sib = config
                .agents
                .get(sibling)
                .ok_or_else(|| PolicyError::UnknownSibling {
                    alias: alias.to_string(),
                    sibling: sibling.clone(),
                })?;
            let lexical = workspace_path(env, sibling, sib.workspace.path.as_deref())?;
            let field = format!("agents.{sibling}.workspace.path");
            let path = resolve_config_path(&lexical, Path::new("/"), home, &field)?;
            let tier = match mode {
                AccessMode::Read => Tier::ReadOnly,
                AccessMode::Write => Tier::WriteOnly,
                AccessMode::ReadWrite => Tier::ReadWrite,
            };
            roots.push(Root::new(path, tier, RootSource::Sibling(sibling.clone())));
        }
        let skills = resolve_config_path(
            &env.layout.shared_skills(),
            Path::new("/"),
            home,
            "shared/skills",
        )?;
        roots.push(Root::new(skills, Tier::ReadOnly, RootSource::SharedSkills));

        // The desktop session's sockets come first: the session bus (and the keyring behind
        // it), X11 and the users' runtime folders (Wayland, the bus, agents' sockets) are never
        // an agent's to reach, whatever its grants.
        let mut forbidden: Vec<PathBuf> = SESSION_SOCKETS
            .iter()
            .filter_map(|p| resolve::resolve_symlinks(Path::new(p)).ok())
            .filter(|p| std::fs::symlink_metadata(p).is_ok())
            .collect();
        forbidden.dedup();
        for raw in &risk.forbidden_paths {
            let field = format!("risk_profiles.{}.forbidden_paths", agent.risk_profile);
            forbidden.push(resolve_config_path(
                Path::new(raw),
                &workspace,
                home,
                &field,
            )?);
        }
        let mut runtime_state = Vec::new();
        let state = [
            env.layout.config_path(),
            env.layout.data_dir(),
            env.layout.deleted_dir(),
            env.layout.logs_dir(),
        ];
        for p in &state {
            runtime_state.push(resolve_config_path(p, Path::new("/"), home, "install")?);
        }
        // A memory file kept outside `data/` (`[memory.sqlite] path`) is runtime state too.
        for p in env
            .layout
            .memory_sqlite_files(config.memory.sqlite.path.as_deref())
        {
            let p = resolve_config_path(&p, Path::new("/"), home, "memory.sqlite.path")?;
            if !runtime_state.iter().any(|s| crate::resolve::under(&p, s)) {
                runtime_state.push(p);
            }
        }
        let install_root = resolve_config_path(env.layout.root(), Path::new("/"), home, "install")?;

        // 4. unrestricted_filesystem turns workspace_only off.
        let workspace_only = risk.workspace_only && !agent.workspace.unrestricted_filesystem;

        Ok(SecurityPolicy {
            alias: alias.to_string(),
            risk_profile_name: agent.risk_profile.clone(),
            risk,
            runtime,
            workspace_only,
            workspace,
            roots,
            forbidden,
            runtime_state,
            install_root,
            memory_grants: agent.workspace.read_memory_from.clone(),
            delegation_depth: 0,
            home: env.home.clone(),
            container: (config.runtime.kind == RuntimeKind::Docker)
                .then(|| config.runtime.docker.clone()),
        })
    }

    /// This policy with `dirs` added as read-only roots, labelled `label`: the sandbox of a
    /// program (an MCP server) that must read its own files. Each directory must exist, must
    /// not hold one of the policy's roots, its install root or home directory, and must not lie
    /// in the runtime state, a forbidden path or `other_workspaces` (other agents'
    /// workspaces); otherwise the reason is returned and nothing is granted.
    pub fn with_program_files(
        &self,
        label: &str,
        dirs: &[PathBuf],
        other_workspaces: &[PathBuf],
    ) -> Result<SecurityPolicy, String> {
        let mut out = self.clone();
        for dir in dirs {
            let resolved =
                resolve::resolve_symlinks(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            if !resolved.is_dir() {
                return Err(format!("{} is not a directory", resolved.display()));
            }
            let holds = |p: &Path| crate::resolve::under(p, &resolved);
            let inside = |p: &Path| crate::resolve::under(&resolved, p);
            let mut wide = self
                .roots
                .iter()
                .map(|r| r.path.as_path())
                .chain([self.install_root.as_path()])
                .chain(self.home.as_deref());
            if let Some(p) = wide.find(|p| holds(p)) {
                return Err(format!(
                    "{} holds {}, which its sandbox must not open wholesale",
                    resolved.display(),
                    p.display()
                ));
            }
            let closed = self
                .runtime_state
                .iter()
                .chain(&self.forbidden)
                .chain(other_workspaces)
                .find(|p| inside(p) || holds(p));
            if let Some(p) = closed {
                return Err(format!(
                    "{} overlaps {}, which the agent may not read",
                    resolved.display(),
                    p.display()
                ));
            }
            out.roots.push(Root::new(
                resolved,
                Tier::ReadOnly,
                RootSource::ProgramFiles(label.to_string()),
            ));
        }
        Ok(out)
    }

    /// Roots of one tier.
    pub fn roots_of(&self, tier: Tier) -> impl Iterator<Item = &Root> {
        self.roots.iter().filter(move |r| r.tier == tier)
    }
}

/// The lexical workspace path of `alias`: its custom `workspace.path` or the default one.
fn workspace_path(
    env: &PolicyEnv,
    alias: &str,
    custom: Option<&str>,
) -> Result<PathBuf, PolicyError> {
    if let Some(p) = custom {
        let expanded = resolve::lexical_absolute(Path::new(p), Path::new("/"), env.home.as_deref())
            .map_err(|reason| PolicyError::InvalidPath {
                field: format!("agents.{alias}.workspace.path"),
                value: p.to_string(),
                reason,
            })?;
        if !p.starts_with('/') && !p.starts_with('~') {
            return Err(PolicyError::RelativeWorkspace {
                field: format!("agents.{alias}.workspace.path"),
                value: p.to_string(),
            });
        }
        return Ok(expanded);
    }
    Ok(env.layout.workspace_for(alias, None))
}

fn resolve_config_path(
    raw: &Path,
    base: &Path,
    home: Option<&Path>,
    field: &str,
) -> Result<PathBuf, PolicyError> {
    resolve::resolve(raw, base, home)
        .map(|r| r.resolved)
        .map_err(|reason| PolicyError::InvalidPath {
            field: field.to_string(),
            value: raw.display().to_string(),
            reason,
        })
}

#[cfg(test)]
mod tests {
    use super::PolicyEnv;
    use std::path::PathBuf;
    use warren_config::{HostEnv, InstallLayout};

    /// The policy's environment takes the install's layout and the host's home, nothing else
    /// of the host (its variables stay with the tools).
    #[test]
    fn a_host_policy_env_is_the_install_layout_and_the_host_home() {
        let layout = InstallLayout::new("/srv/warren");
        let host = HostEnv {
            home: Some(PathBuf::from("/home/ada")),
            vars: [("HOME".to_string(), "/elsewhere".to_string())].into(),
        };
        let env = PolicyEnv::for_host(&layout, &host);
        assert_eq!(env.layout, layout);
        assert_eq!(env.home, Some(PathBuf::from("/home/ada")));
        let homeless = PolicyEnv::for_host(&layout, &HostEnv::default());
        assert_eq!(homeless.home, None);
    }
}
