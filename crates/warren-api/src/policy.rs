//! Policy, tool and sandbox services: `policy show`, `policy check`, one tool call through the
//! same gates as the agent loop, and the sandbox report of `doctor`.

use crate::Warren;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use warren_policy::sandbox::{choose, SandboxSupport};
use warren_policy::{Access, PolicyEnv, PolicyError, RootSource, Rule, SecurityPolicy, Tier};
use warren_types::{ApiError, AutonomyLevel, Config, ErrorCode};

pub use warren_config::HostEnv;

/// Where a root of an effective policy comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RootKind {
    /// The agent's own workspace.
    Workspace,
    /// A sibling's workspace, granted through `workspace.access`.
    Sibling,
    /// An `allowed_roots` entry of the risk profile.
    AllowedRoot,
    /// `<install>/shared/skills`.
    SharedSkills,
    /// The program files of an MCP server.
    ProgramFiles,
}

impl RootKind {
    /// Every kind.
    pub const ALL: [RootKind; 5] = [
        RootKind::Workspace,
        RootKind::Sibling,
        RootKind::AllowedRoot,
        RootKind::SharedSkills,
        RootKind::ProgramFiles,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RootKind::Workspace => "workspace",
            RootKind::Sibling => "sibling",
            RootKind::AllowedRoot => "allowed_root",
            RootKind::SharedSkills => "shared_skills",
            RootKind::ProgramFiles => "program_files",
        }
    }

    /// The kind of `source` and the name it carries (a sibling's alias, an `allowed_roots`
    /// entry as written, an MCP server).
    pub(crate) fn of(source: &RootSource) -> (RootKind, Option<String>) {
        match source {
            RootSource::Workspace => (RootKind::Workspace, None),
            RootSource::Sibling(a) => (RootKind::Sibling, Some(a.clone())),
            RootSource::AllowedRoot(s) => (RootKind::AllowedRoot, Some(s.clone())),
            RootSource::SharedSkills => (RootKind::SharedSkills, None),
            RootSource::ProgramFiles(s) => (RootKind::ProgramFiles, Some(s.clone())),
        }
    }
}

impl std::fmt::Display for RootKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One root of an effective policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PolicyRootView {
    /// Resolved path.
    pub path: String,
    /// What the agent may do under it.
    pub tier: Tier,
    /// Where it comes from.
    pub source: RootKind,
    /// The sibling's alias or the `allowed_roots` entry as written.
    pub name: Option<String>,
    /// Whether the directory exists now (a missing sibling root is skipped by sandboxes).
    pub exists: bool,
}

/// The sandbox an agent gets on this machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SandboxView {
    /// As configured: `auto`, `landlock`, `bubblewrap` or `none`.
    pub configured: String,
    /// What it runs under: `landlock`, `bubblewrap` or `none`; `null` when unavailable.
    pub effective: Option<String>,
    /// Why that one.
    pub reason: String,
    /// Set when the configured sandbox is unavailable (tool calls that need it fail).
    pub error: Option<String>,
    /// The layers that hold a child of this agent (namespaces and the file view, Landlock and
    /// its ABI, the system-call filter), one line each; empty when nothing confines it.
    pub layers: Vec<String>,
    /// What the policy asks that this sandbox does not enforce, and how it is made up for
    /// (for example write-only roots under bubblewrap, Unix sockets under Landlock).
    pub notes: Vec<String>,
}

/// The effective policy of an agent (`warren policy show`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PolicyView {
    /// The agent.
    pub agent: String,
    /// Its risk profile.
    pub risk_profile: String,
    /// The risk profile's autonomy level.
    pub level: AutonomyLevel,
    /// The resolved workspace.
    pub workspace: String,
    /// Whether paths outside every root are denied.
    pub workspace_only: bool,
    /// Every root with its tier.
    pub roots: Vec<PolicyRootView>,
    /// Resolved forbidden paths.
    pub forbidden_paths: Vec<String>,
    /// Runtime state no agent may touch.
    pub runtime_state: Vec<String>,
    /// `allowed_commands`.
    pub allowed_commands: Vec<String>,
    /// Side-effecting actions per hour.
    pub max_actions_per_hour: u32,
    /// Shell timeout.
    pub shell_timeout_secs: u32,
    /// The sandbox chosen and why.
    pub sandbox: SandboxView,
}

/// `warren policy check` (rules §9.1): `{allowed, access, path, rule}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PolicyCheck {
    /// Whether the access is allowed.
    pub allowed: bool,
    /// The access decided.
    pub access: Access,
    /// The resolved path.
    pub path: String,
    /// The deciding rule.
    pub rule: Rule,
    /// For a denied relative path that names a sibling (`../bob/notes.md`): the path in that
    /// sibling's workspace the same access is allowed on, which is what was most likely meant
    /// (relative paths resolve against the agent's own workspace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meant: Option<String>,
}

/// The sibling-workspace path a denied relative `input` most likely meant: `..` steps, then a
/// sibling's alias, then the rest, read inside that sibling's workspace; only when `policy`
/// allows `access` there.
fn sibling_meant(
    cfg: &warren_types::Config,
    layout: &warren_config::InstallLayout,
    policy: &warren_policy::SecurityPolicy,
    alias: &str,
    input: &str,
    access: Access,
) -> Option<String> {
    use std::path::Component;
    let given = Path::new(input);
    if given.is_absolute() || input.starts_with('~') {
        return None;
    }
    let mut parts = given
        .components()
        .skip_while(|c| *c == Component::ParentDir);
    if !input.starts_with("..") {
        return None;
    }
    let Some(Component::Normal(sibling)) = parts.next() else {
        return None;
    };
    let sibling = sibling.to_str()?;
    if sibling == alias {
        return None;
    }
    let agent = cfg.agents.get(sibling)?;
    let mut candidate = layout.workspace_for(sibling, agent.workspace.path.as_deref());
    for c in parts {
        candidate.push(c);
    }
    let d = policy.check(&candidate, access);
    d.allowed.then(|| d.path.display().to_string())
}

/// One agent's line of the doctor report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentSandboxReport {
    /// The agent.
    pub agent: String,
    /// Its sandbox.
    pub sandbox: SandboxView,
}

/// What this machine offers and what each agent gets (`warren doctor`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DoctorReport {
    /// The kernel's Landlock ABI (0 = none).
    pub landlock_abi: i32,
    /// The usable `bwrap`, if any.
    pub bubblewrap: Option<String>,
    /// Why bubblewrap is not usable.
    pub bubblewrap_problem: Option<String>,
    /// Per agent.
    pub agents: Vec<AgentSandboxReport>,
    /// Where user secrets (API keys) are kept, or why the store cannot be opened.
    pub secrets: String,
}

fn policy_error(e: PolicyError) -> ApiError {
    let code = match &e {
        PolicyError::UnknownAgent(_) => ErrorCode::NotFound,
        PolicyError::CreateWorkspace { .. } => ErrorCode::Io,
        _ => ErrorCode::InvalidConfig,
    };
    ApiError::new(code, e.to_string())
}

fn kind_name(k: warren_types::SandboxKind) -> &'static str {
    use warren_types::SandboxKind as K;
    match k {
        K::Auto => "auto",
        K::Landlock => "landlock",
        K::Bubblewrap => "bubblewrap",
        K::None => "none",
    }
}

pub(crate) fn sandbox_view(policy: &SecurityPolicy, support: &SandboxSupport) -> SandboxView {
    let configured = kind_name(policy.risk.sandbox).to_string();
    match choose(policy.risk.sandbox, policy.workspace_only, support) {
        Ok((sb, reason)) => {
            let enforcement = sb.enforcement(policy);
            SandboxView {
                configured,
                effective: Some(sb.name().to_string()),
                reason,
                error: None,
                layers: enforcement.layers,
                notes: enforcement.not_enforced,
            }
        }
        Err(e) => SandboxView {
            configured,
            effective: None,
            reason: "the configured sandbox is not available on this machine".into(),
            error: Some(e.to_string()),
            layers: Vec::new(),
            notes: vec!["shell and git write calls of this agent fail until it is".into()],
        },
    }
}

pub(crate) fn path_var(host: &HostEnv) -> Option<&std::ffi::OsStr> {
    host.path_var()
}

impl Warren {
    pub(crate) fn policy_for(
        &self,
        cfg: &Config,
        alias: &str,
        host: &HostEnv,
    ) -> Result<SecurityPolicy, ApiError> {
        let env = PolicyEnv::for_host(self.layout(), host);
        SecurityPolicy::for_agent(cfg, alias, &env).map_err(|e| {
            let mut err = policy_error(e);
            if err.code == ErrorCode::NotFound && !cfg.agents.contains_key(alias) {
                err.message
                    .push_str(&warren_types::did_you_mean_hint(alias, cfg.agents.keys()));
            }
            err
        })
    }

    /// The effective policy of `alias`: tiers with resolved paths, `workspace_only`, and the
    /// sandbox chosen on this machine and why.
    pub fn policy_show(&self, alias: &str) -> Result<PolicyView, ApiError> {
        let host = &self.env;
        let cfg = self.load()?.config;
        let p = self.policy_for(&cfg, alias, host)?;
        let support = SandboxSupport::probe(path_var(host));
        let roots = p
            .roots
            .iter()
            .map(|r| {
                let (source, name) = RootKind::of(&r.source);
                PolicyRootView {
                    path: r.path.display().to_string(),
                    tier: r.tier,
                    source,
                    name,
                    exists: r.path.is_dir(),
                }
            })
            .collect();
        let show = |v: &[PathBuf]| v.iter().map(|p| p.display().to_string()).collect();
        Ok(PolicyView {
            agent: p.alias.clone(),
            risk_profile: p.risk_profile_name.clone(),
            level: p.risk.level,
            workspace: p.workspace.display().to_string(),
            workspace_only: p.workspace_only,
            roots,
            forbidden_paths: show(&p.forbidden),
            runtime_state: show(&p.runtime_state),
            allowed_commands: p.risk.allowed_commands.clone(),
            max_actions_per_hour: p.runtime.max_actions_per_hour,
            shell_timeout_secs: p.runtime.shell_timeout_secs,
            sandbox: sandbox_view(&p, &support),
        })
    }

    /// Decides one access of `alias` on `path` exactly as the tools do.
    pub fn policy_check(
        &self,
        alias: &str,
        write: bool,
        path: &str,
    ) -> Result<PolicyCheck, ApiError> {
        let host = &self.env;
        let cfg = self.load()?.config;
        let p = self.policy_for(&cfg, alias, host)?;
        let access = if write { Access::Write } else { Access::Read };
        let d = p.check(Path::new(path), access);
        let meant = if d.allowed {
            None
        } else {
            sibling_meant(&cfg, self.layout(), &p, alias, path, access)
        };
        Ok(PolicyCheck {
            allowed: d.allowed,
            access,
            path: d.path.display().to_string(),
            rule: d.rule,
            meant,
        })
    }

    /// The sandbox support of this machine and the sandbox each agent gets, for the host facts
    /// this handle was opened with (`warren doctor`, the window's settings).
    pub fn doctor(&self) -> Result<DoctorReport, ApiError> {
        let host = &self.env;
        let cfg = self.load()?.config;
        let support = SandboxSupport::probe(path_var(host));
        let mut agents = Vec::new();
        for alias in cfg.agents.keys() {
            let sandbox = match self.policy_for(&cfg, alias, host) {
                Ok(p) => sandbox_view(&p, &support),
                Err(e) => SandboxView {
                    configured: "?".into(),
                    effective: None,
                    reason: "the policy cannot be built".into(),
                    error: Some(e.message),
                    layers: Vec::new(),
                    notes: Vec::new(),
                },
            };
            agents.push(AgentSandboxReport {
                agent: alias.clone(),
                sandbox,
            });
        }
        Ok(DoctorReport {
            landlock_abi: support.landlock_abi,
            bubblewrap: support.bwrap.as_ref().map(|p| p.display().to_string()),
            bubblewrap_problem: support.bwrap_problem,
            agents,
            secrets: match self.secret_backend() {
                Ok(b) => b.description,
                Err(e) => format!("unavailable: {}", e.message),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warren_config::InstallLayout;

    #[test]
    fn root_kinds_are_their_documented_codes() {
        let table = [
            (RootKind::Workspace, "workspace"),
            (RootKind::Sibling, "sibling"),
            (RootKind::AllowedRoot, "allowed_root"),
            (RootKind::SharedSkills, "shared_skills"),
            (RootKind::ProgramFiles, "program_files"),
        ];
        assert_eq!(table.len(), RootKind::ALL.len());
        crate::test_support::assert_codes(&table);
        for (k, code) in table {
            assert_eq!(k.as_str(), code);
        }
    }

    /// On a machine with neither landlock nor bubblewrap, `auto` is a refusal (not `none`) for
    /// an agent with `workspace_only`, and the doctor's DTO carries it.
    #[test]
    fn doctor_shows_auto_refused_for_workspace_only() {
        let dir = tempfile::tempdir().unwrap();
        let cfg: Config = warren_config::parse_config(
            "[risk_profiles.tight]\nsandbox = \"auto\"\nworkspace_only = true\n\
             [risk_profiles.open]\nsandbox = \"auto\"\nworkspace_only = false\n\
             [agents.a]\nrisk_profile = \"tight\"\n[agents.b]\nrisk_profile = \"open\"\n",
        )
        .unwrap();
        let env = PolicyEnv::for_host(&InstallLayout::new(dir.path()), &HostEnv::default());
        let nothing = SandboxSupport {
            landlock_abi: 0,
            bwrap: None,
            bwrap_problem: Some("bwrap not found on PATH".into()),
            confine_helper: None,
        };
        let a = SecurityPolicy::for_agent(&cfg, "a", &env).unwrap();
        let view = sandbox_view(&a, &nothing);
        assert_eq!(view.effective, None);
        let error = view.error.unwrap();
        assert!(error.starts_with("sandbox_unavailable: auto"), "{error}");
        assert!(error.contains("workspace_only"), "{error}");
        let b = SecurityPolicy::for_agent(&cfg, "b", &env).unwrap();
        let view = sandbox_view(&b, &nothing);
        assert_eq!(view.effective.as_deref(), Some("none"));
        assert_eq!(view.error, None);
    }
}
