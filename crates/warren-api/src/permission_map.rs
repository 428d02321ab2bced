//! The permission map (`warren policy map`, the desktop's Permissions screen): for every agent
//! and every other agent, what the first may do to the second — read or write its workspace,
//! read its memory (which categories), delegate to it — and, for any cell, why: the rule that
//! decided it, the grant in the config, and what enforces it on this machine. Workspace cells
//! are decided by the same `check` the tools and `warren policy check` use, on the peer's
//! workspace folder.

use crate::policy::{path_var, sandbox_view, HostEnv};
use crate::Warren;
use serde::{Deserialize, Serialize};
use warren_policy::sandbox::SandboxSupport;
use warren_policy::{Access, Rule, SecurityPolicy};
use warren_types::{AccessMode, ApiError, Config, DelegationMode, ErrorCode, MemoryGrant};

/// What one agent may do to another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PermissionCell {
    /// The other agent.
    pub peer: String,
    /// May read files of the peer's workspace.
    pub read: bool,
    /// May write files of the peer's workspace.
    pub write: bool,
    /// Reads the peer's memory.
    pub memory: bool,
    /// Only these categories of it (none: every category).
    pub memory_categories: Option<Vec<String>>,
    /// May delegate a task to the peer.
    pub delegate: bool,
}

/// One agent's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PermissionRow {
    /// The agent.
    pub agent: String,
    /// The sandbox its shell and git children run in here (`landlock`, `bubblewrap`,
    /// `none`), or none when the configured one is unavailable.
    pub sandbox: Option<String>,
    /// One cell per other agent, in the order of `agents`.
    pub cells: Vec<PermissionCell>,
}

/// The whole map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PermissionMap {
    /// Every agent, by alias.
    pub agents: Vec<String>,
    /// One row per agent.
    pub rows: Vec<PermissionRow>,
}

/// Which permission a cell explanation is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum PermissionAspect {
    /// Reading the peer's workspace.
    Read,
    /// Writing the peer's workspace.
    Write,
    /// Reading the peer's memory.
    Memory,
    /// Delegating to the peer.
    Delegate,
}

/// The rule that decided a memory or delegation permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum GrantRule {
    /// A `read_memory_from` entry names the peer.
    MemoryGrant,
    /// No `read_memory_from` entry names the peer.
    NoMemoryGrant,
    /// The two agents keep memory in different backends.
    OtherBackend,
    /// The risk profile allows delegation and `delegates` lists the peer.
    DelegateListed,
    /// The risk profile allows delegation but `delegates` does not list the peer.
    NotADelegate,
    /// The risk profile forbids delegation.
    DelegationForbidden,
}

impl GrantRule {
    /// Every rule.
    pub const ALL: [GrantRule; 6] = [
        GrantRule::MemoryGrant,
        GrantRule::NoMemoryGrant,
        GrantRule::OtherBackend,
        GrantRule::DelegateListed,
        GrantRule::NotADelegate,
        GrantRule::DelegationForbidden,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            GrantRule::MemoryGrant => "memory_grant",
            GrantRule::NoMemoryGrant => "no_memory_grant",
            GrantRule::OtherBackend => "other_backend",
            GrantRule::DelegateListed => "delegate_listed",
            GrantRule::NotADelegate => "not_a_delegate",
            GrantRule::DelegationForbidden => "delegation_forbidden",
        }
    }
}

/// The rule behind a permission: for the workspace, the path rule of `warren policy check`;
/// for memory and delegation, a [`GrantRule`]. Either is one snake_case string on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(untagged)]
pub enum PermissionRule {
    /// A workspace permission, decided by the path rules.
    Path(Rule),
    /// A memory or delegation permission.
    Grant(GrantRule),
}

impl PermissionRule {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionRule::Path(r) => r.code(),
            PermissionRule::Grant(g) => g.as_str(),
        }
    }
}

impl std::fmt::Display for PermissionRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// Why a cell says what it says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PermissionExplanation {
    /// The agent.
    pub agent: String,
    /// The peer.
    pub peer: String,
    /// Which permission.
    pub aspect: PermissionAspect,
    /// Allowed or not.
    pub allowed: bool,
    /// The rule that decided it.
    pub rule: PermissionRule,
    /// The path checked, for workspace permissions.
    pub path: Option<String>,
    /// The config entries behind it, as written (`agents.alice.workspace.access.bob = "read"`).
    pub grants: Vec<String>,
    /// What enforces it on this machine, in plain words.
    pub enforced_by: String,
}

fn access_name(m: AccessMode) -> &'static str {
    match m {
        AccessMode::Read => "read",
        AccessMode::Write => "write",
        AccessMode::ReadWrite => "read_write",
    }
}

fn memory_grant<'a>(cfg: &'a Config, agent: &str, peer: &str) -> Option<&'a MemoryGrant> {
    cfg.agents
        .get(agent)?
        .workspace
        .read_memory_from
        .iter()
        .find(|g| g.agent() == peer)
}

fn can_delegate(cfg: &Config, agent: &str, peer: &str) -> bool {
    let Some(a) = cfg.agents.get(agent) else {
        return false;
    };
    let allowed = cfg
        .risk_profiles
        .get(&a.risk_profile)
        .is_some_and(|r| r.delegation == DelegationMode::Allow);
    allowed && a.delegates.iter().any(|d| d == peer)
}

impl Warren {
    fn policies(
        &self,
        cfg: &Config,
        host: &HostEnv,
    ) -> Result<Vec<(String, SecurityPolicy)>, ApiError> {
        cfg.agents
            .keys()
            .map(|a| Ok((a.clone(), self.policy_for(cfg, a, host)?)))
            .collect()
    }

    /// The permission map of every agent on every other agent.
    pub fn permission_map(&self) -> Result<PermissionMap, ApiError> {
        let host = &self.env;
        let cfg = self.load()?.config;
        let policies = self.policies(&cfg, host)?;
        let support = SandboxSupport::probe(path_var(host));
        let agents: Vec<String> = policies.iter().map(|(a, _)| a.clone()).collect();
        let rows = policies
            .iter()
            .map(|(agent, p)| PermissionRow {
                agent: agent.clone(),
                sandbox: sandbox_view(p, &support).effective,
                cells: policies
                    .iter()
                    .filter(|(peer, _)| peer != agent)
                    .map(|(peer, peer_policy)| {
                        let ws = &peer_policy.workspace;
                        let grant = memory_grant(&cfg, agent, peer);
                        PermissionCell {
                            peer: peer.clone(),
                            read: p.check(ws, Access::Read).allowed,
                            write: p.check(ws, Access::Write).allowed,
                            memory: grant.is_some(),
                            memory_categories: grant
                                .and_then(|g| g.categories().map(<[String]>::to_vec)),
                            delegate: can_delegate(&cfg, agent, peer),
                        }
                    })
                    .collect(),
            })
            .collect();
        Ok(PermissionMap { agents, rows })
    }

    /// Why `agent` may (or may not) do `aspect` to `peer`.
    pub fn explain_permission(
        &self,
        agent: &str,
        peer: &str,
        aspect: PermissionAspect,
    ) -> Result<PermissionExplanation, ApiError> {
        let host = &self.env;
        let cfg = self.load()?.config;
        if !cfg.agents.contains_key(peer) {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("agent `{peer}` does not exist"),
            ));
        }
        let p = self.policy_for(&cfg, agent, host)?;
        let a = &cfg.agents[agent];
        let mut grants = Vec::new();
        let out = |allowed: bool,
                   rule: PermissionRule,
                   path: Option<String>,
                   grants: Vec<String>,
                   by: String| {
            PermissionExplanation {
                agent: agent.to_string(),
                peer: peer.to_string(),
                aspect,
                allowed,
                rule,
                path,
                grants,
                enforced_by: by,
            }
        };
        match aspect {
            PermissionAspect::Read | PermissionAspect::Write => {
                let peer_ws = self.policy_for(&cfg, peer, host)?.workspace;
                let access = if aspect == PermissionAspect::Write {
                    Access::Write
                } else {
                    Access::Read
                };
                let d = p.check(&peer_ws, access);
                if let Some(m) = a.workspace.access.get(peer) {
                    grants.push(format!(
                        "agents.{agent}.workspace.access.{peer} = \"{}\"",
                        access_name(*m)
                    ));
                }
                if a.workspace.unrestricted_filesystem {
                    grants.push(format!(
                        "agents.{agent}.workspace.unrestricted_filesystem = true"
                    ));
                }
                if !p.risk.forbidden_paths.is_empty() {
                    grants.push(format!(
                        "risk_profiles.{}.forbidden_paths ({} entries)",
                        a.risk_profile,
                        p.risk.forbidden_paths.len()
                    ));
                }
                let support = SandboxSupport::probe(path_var(host));
                let sb = sandbox_view(&p, &support);
                let children = match (&sb.effective, &sb.error) {
                    (Some(s), _) if s == "none" => {
                        "shell and git children: no OS sandbox (the tools' own checks only)"
                            .to_string()
                    }
                    (Some(s), _) => format!("shell and git children: {s}"),
                    (None, Some(e)) => format!("shell and git children: refused ({e})"),
                    (None, None) => "shell and git children: refused".to_string(),
                };
                let mut by = format!(
                    "file and search tools: Warren's race-free opener beneath the grant root; {children}"
                );
                for n in &sb.notes {
                    by.push_str("; ");
                    by.push_str(n);
                }
                Ok(out(
                    d.allowed,
                    PermissionRule::Path(d.rule),
                    Some(d.path.display().to_string()),
                    grants,
                    by,
                ))
            }
            PermissionAspect::Memory => {
                let own = cfg.effective_memory_backend(agent).unwrap_or_default();
                let theirs = cfg.effective_memory_backend(peer).unwrap_or_default();
                let by = format!(
                    "{} memory: every recall is filtered to the agent and its grants inside the query, before ranking and the limit",
                    own.as_str()
                );
                match memory_grant(&cfg, agent, peer) {
                    Some(g) => {
                        let i = a
                            .workspace
                            .read_memory_from
                            .iter()
                            .position(|x| x.agent() == peer)
                            .unwrap_or(0);
                        let what = match g.categories() {
                            Some(c) => format!("{peer} (categories: {})", c.join(", ")),
                            None => format!("{peer} (every category)"),
                        };
                        grants.push(format!(
                            "agents.{agent}.workspace.read_memory_from[{i}] = {what}"
                        ));
                        Ok(out(
                            true,
                            PermissionRule::Grant(GrantRule::MemoryGrant),
                            None,
                            grants,
                            by,
                        ))
                    }
                    None if own != theirs => Ok(out(
                        false,
                        PermissionRule::Grant(GrantRule::OtherBackend),
                        None,
                        grants,
                        format!(
                            "{agent} keeps memory in {}, {peer} in {}: memory is shared only within one backend",
                            own.as_str(),
                            theirs.as_str()
                        ),
                    )),
                    None => Ok(out(
                        false,
                        PermissionRule::Grant(GrantRule::NoMemoryGrant),
                        None,
                        grants,
                        by,
                    )),
                }
            }
            PermissionAspect::Delegate => {
                let profile_allows = cfg
                    .risk_profiles
                    .get(&a.risk_profile)
                    .is_some_and(|r| r.delegation == DelegationMode::Allow);
                grants.push(format!(
                    "risk_profiles.{}.delegation = \"{}\"",
                    a.risk_profile,
                    if profile_allows { "allow" } else { "forbidden" }
                ));
                let listed = a.delegates.iter().position(|d| d == peer);
                if let Some(i) = listed {
                    grants.push(format!("agents.{agent}.delegates[{i}] = \"{peer}\""));
                }
                let by = "the delegate tool: the SubAgent's policy is derived from both and may never exceed the parent's on any axis".to_string();
                let rule = match (profile_allows, listed.is_some()) {
                    (false, _) => GrantRule::DelegationForbidden,
                    (true, false) => GrantRule::NotADelegate,
                    (true, true) => GrantRule::DelegateListed,
                };
                Ok(out(
                    profile_allows && listed.is_some(),
                    PermissionRule::Grant(rule),
                    None,
                    grants,
                    by,
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A permission's rule is one plain string: a path rule's code or a grant rule's.
    #[test]
    fn permission_rules_are_their_documented_codes() {
        let grants = [
            (GrantRule::MemoryGrant, "memory_grant"),
            (GrantRule::NoMemoryGrant, "no_memory_grant"),
            (GrantRule::OtherBackend, "other_backend"),
            (GrantRule::DelegateListed, "delegate_listed"),
            (GrantRule::NotADelegate, "not_a_delegate"),
            (GrantRule::DelegationForbidden, "delegation_forbidden"),
        ];
        assert_eq!(grants.len(), GrantRule::ALL.len());
        crate::test_support::assert_codes(&grants);
        let mut rules: Vec<(PermissionRule, &str)> = grants
            .iter()
            .map(|(g, c)| (PermissionRule::Grant(*g), *c))
            .collect();
        rules.extend(Rule::ALL.map(|r| (PermissionRule::Path(r), r.code())));
        rules.push((PermissionRule::Path(Rule::ReadOnlyGrant), "read_only_grant"));
        crate::test_support::assert_codes(&rules);
        for (r, code) in rules {
            assert_eq!(r.as_str(), code);
        }
    }
}
