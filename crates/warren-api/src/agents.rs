//! Listing, showing and creating agents.

use crate::lifecycle_view::reference_kind;
use crate::{errors::config_error, Warren};
use warren_config::{references_to, NewAgent, RefKind, RefStrength, Reference};
use warren_types::{
    AgentDetail, AgentReference, AgentSummary, ApiError, Config, CreateAgentRequest, ErrorCode,
    GrantAccess, GrantSummary, NewAgentChoices, ProviderSummary,
};

/// The risk profile a new agent gets when the install has it.
const DEFAULT_RISK_PROFILE: &str = "balanced";

fn summary(w: &Warren, cfg: &Config, alias: &str) -> Option<AgentSummary> {
    let a = cfg.agents.get(alias)?;
    Some(AgentSummary {
        alias: alias.to_string(),
        enabled: a.enabled,
        risk_profile: a.risk_profile.clone(),
        runtime_profile: a.runtime_profile.clone(),
        model_provider: a.model_provider.clone(),
        memory_backend: cfg.effective_memory_backend(alias).unwrap_or_default(),
        workspace: w
            .layout()
            .workspace_for(alias, a.workspace.path.as_deref())
            .display()
            .to_string(),
    })
}

/// A reference to `alias` as the front-ends show it: who holds it, what it is, and for a
/// workspace grant the access the holder has.
fn agent_reference(cfg: &Config, alias: &str, r: Reference) -> AgentReference {
    let access = match r.kind {
        RefKind::WorkspaceAccess => cfg
            .agents
            .get(&r.holder)
            .and_then(|h| h.workspace.access.get(alias))
            .copied(),
        _ => None,
    };
    AgentReference {
        kind: reference_kind(r.kind),
        access,
        blocks_delete: r.strength == RefStrength::Hard,
        path: r.path,
        holder: r.holder,
    }
}

impl Warren {
    /// Every agent of the install, by alias.
    pub fn list_agents(&self) -> Result<Vec<AgentSummary>, ApiError> {
        let cfg = self.load()?.config;
        Ok(cfg
            .agents
            .keys()
            .filter_map(|a| summary(self, &cfg, a))
            .collect())
    }

    /// One agent with its grants and the references to it.
    pub fn show_agent(&self, alias: &str) -> Result<AgentDetail, ApiError> {
        let cfg = self.load()?.config;
        let s = summary(self, &cfg, alias).ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!(
                    "agent `{alias}` does not exist{}",
                    warren_types::did_you_mean_hint(alias, cfg.agents.keys())
                ),
            )
        })?;
        let a = &cfg.agents[alias];
        Ok(AgentDetail {
            summary: s,
            delegates: a.delegates.clone(),
            workspace_grants: a
                .workspace
                .access
                .iter()
                .map(|(peer, m)| GrantSummary {
                    agent: peer.clone(),
                    access: GrantAccess::from(*m),
                    categories: None,
                })
                .collect(),
            memory_grants: a
                .workspace
                .read_memory_from
                .iter()
                .map(|g| GrantSummary {
                    agent: g.agent().to_string(),
                    access: GrantAccess::Memory,
                    categories: g.categories().map(<[std::string::String]>::to_vec),
                })
                .collect(),
            unrestricted_filesystem: a.workspace.unrestricted_filesystem,
            cron_jobs: cfg
                .cron
                .iter()
                .filter(|(_, j)| j.agent == alias)
                .map(|(id, _)| id.clone())
                .chain(a.cron_jobs.iter().cloned())
                .collect(),
            referenced_by: references_to(&cfg, alias)
                .into_iter()
                .map(|r| agent_reference(&cfg, alias, r))
                .collect(),
        })
    }

    /// Adds an agent to the config (comments and unknown sections are kept) and creates its
    /// workspace. The edited config is validated in full before it is saved. An existing,
    /// non-empty workspace folder is refused (see [`Warren::create_agent_with`]).
    pub fn create_agent(&self, req: CreateAgentRequest) -> Result<AgentSummary, ApiError> {
        self.create_agent_with(req, false)
    }

    /// [`Warren::create_agent`], adopting an existing non-empty workspace folder when
    /// `adopt_workspace` (`warren agents create --adopt-workspace`). Refused with
    /// `lifecycle_pending` while an unfinished rename, delete or restore involves the alias.
    pub fn create_agent_with(
        &self,
        req: CreateAgentRequest,
        adopt_workspace: bool,
    ) -> Result<AgentSummary, ApiError> {
        warren_state::lifecycle::refuse_if_pending(self.layout(), &req.alias)
            .map_err(crate::lifecycle::lifecycle_error)?;
        let folder = self.layout().workspace_for(&req.alias, None);
        let occupied = std::fs::read_dir(&folder).is_ok_and(|mut d| d.next().is_some());
        if occupied && !adopt_workspace {
            return Err(ApiError::new(
                ErrorCode::AlreadyExists,
                format!(
                    "the workspace folder {} of `{}` exists and is not empty (left by an earlier agent?); move it away, or pass --adopt-workspace to give it to the new agent",
                    folder.display(),
                    req.alias
                ),
            ));
        }
        let defaults = self.new_agent_choices()?;
        let risk_profile = if req.risk_profile.is_empty() {
            defaults.risk_profile
        } else {
            req.risk_profile.clone()
        };
        if risk_profile.is_empty() {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "the install has no risk profile to give the new agent; create one first (warren profiles create)",
            ));
        }
        let new = NewAgent {
            alias: req.alias.clone(),
            risk_profile,
            runtime_profile: req.runtime_profile.clone(),
            model_provider: req.model_provider.clone(),
            memory_backend: req.memory_backend,
        };
        let ((), cfg) = self
            .store
            .edit(|doc, _| doc.add_agent(&new).map_err(Into::into))
            .map_err(config_error)?;
        let s = summary(self, &cfg, &req.alias).ok_or_else(|| {
            ApiError::new(ErrorCode::Internal, "agent missing after a successful save")
        })?;
        if cfg.agents[&req.alias].workspace.path.is_none() {
            std::fs::create_dir_all(&s.workspace).map_err(|e| {
                ApiError::new(
                    ErrorCode::Io,
                    format!(
                        "agent created, but creating its workspace {} failed: {e}",
                        s.workspace
                    ),
                )
            })?;
        }
        tracing::info!(agent = %req.alias, "agent created");
        Ok(s)
    }

    /// What a new agent starts with and may choose from (the create form and `warren agents
    /// create` both use these defaults): risk profile `balanced` when the install has it, else
    /// its first one; the built-in runtime defaults; no provider; the install's memory backend.
    pub fn new_agent_choices(&self) -> Result<NewAgentChoices, ApiError> {
        let cfg = self.load()?.config;
        let risk_profiles: Vec<String> = cfg.risk_profiles.keys().cloned().collect();
        let risk_profile = if cfg.risk_profiles.contains_key(DEFAULT_RISK_PROFILE) {
            DEFAULT_RISK_PROFILE.to_string()
        } else {
            risk_profiles.first().cloned().unwrap_or_default()
        };
        Ok(NewAgentChoices {
            risk_profile,
            runtime_profile: None,
            model_provider: None,
            memory_backend: None,
            risk_profiles,
            runtime_profiles: cfg.runtime_profiles.keys().cloned().collect(),
            providers: cfg
                .providers
                .models
                .iter()
                .flat_map(|(family, m)| m.keys().map(move |a| format!("{family}.{a}")))
                .collect(),
        })
    }

    /// The configured provider entries.
    pub fn providers(&self) -> Result<Vec<ProviderSummary>, ApiError> {
        let cfg = self.load()?.config;
        let mut out = Vec::new();
        for (family, models) in &cfg.providers.models {
            for alias in models.keys() {
                let reference = format!("{family}.{alias}");
                if let Some((fam, m)) = cfg.provider(&reference) {
                    out.push(ProviderSummary {
                        uri: m
                            .uri
                            .clone()
                            .unwrap_or_else(|| fam.default_uri().to_string()),
                        family: fam,
                        model: m.model.clone(),
                        has_key_source: m.api_key_env.is_some() || m.secret.is_some(),
                        reference,
                    });
                }
            }
        }
        Ok(out)
    }
}

/// Checks a proposed agent alias against the alias rules (for inline validation while typing):
/// `invalid_argument` naming what is wrong.
pub fn check_alias(alias: &str) -> Result<(), ApiError> {
    warren_types::validate_alias(alias)
        .map_err(|e| ApiError::new(ErrorCode::InvalidArgument, e.to_string()))
}

#[cfg(test)]
mod tests {
    use crate::test_support::install;
    use warren_types::{AccessMode, AgentReference, ReferenceKind};

    #[test]
    fn referenced_by_names_the_holder_the_kind_and_what_blocks_a_delete() {
        let (_dir, w) = install(
            r#"
schema_version = 1
[risk_profiles.p]
[agents.a]
risk_profile = "p"
delegates = ["b"]
[agents.a.workspace]
read_memory_from = [{ agent = "b", categories = ["core"] }]
[agents.a.workspace.access]
b = "read_write"
[agents.b]
risk_profile = "p"
[agents.c]
risk_profile = "p"
[agents.c.workspace.access]
b = "write"
[cron.on]
agent = "b"
schedule = "*/5 * * * *"
prompt = "x"
[cron.off]
agent = "b"
schedule = "0 0 * * *"
prompt = "y"
enabled = false
"#,
        );
        let r = |holder: &str, kind, access, blocks_delete, path: &str| AgentReference {
            holder: holder.into(),
            kind,
            access,
            blocks_delete,
            path: path.into(),
        };
        assert_eq!(
            w.show_agent("b").unwrap().referenced_by,
            [
                r(
                    "a",
                    ReferenceKind::Delegate,
                    None,
                    false,
                    "agents.a.delegates[0]"
                ),
                r(
                    "a",
                    ReferenceKind::WorkspaceAccess,
                    Some(AccessMode::ReadWrite),
                    false,
                    "agents.a.workspace.access.b"
                ),
                r(
                    "a",
                    ReferenceKind::ReadMemoryFrom,
                    None,
                    false,
                    "agents.a.workspace.read_memory_from[0]"
                ),
                r(
                    "c",
                    ReferenceKind::WorkspaceAccess,
                    Some(AccessMode::Write),
                    false,
                    "agents.c.workspace.access.b"
                ),
                r(
                    "off",
                    ReferenceKind::CronAgent,
                    None,
                    false,
                    "cron.off.agent"
                ),
                r("on", ReferenceKind::CronAgent, None, true, "cron.on.agent"),
            ]
        );
        assert!(w.show_agent("c").unwrap().referenced_by.is_empty());
    }
}
