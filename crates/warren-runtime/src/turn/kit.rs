//! Building a [`TurnEnv`]: one implementation for top-level turns (the host) and for SubAgent
//! turns (the `delegate` tool), so a child's environment is made by the same rules as its
//! parent's, with only its lineage (policy depth, shared budgets, nested events) different.

use super::delegate::{DelegateTool, Lineage};
use super::TurnEnv;
use crate::approval::AsyncApprover;
use crate::delegate_memory::{handle_within, MemoryReach};
use crate::error::HostError;
use crate::events::EventHub;
use crate::mcp::{configured_specs, other_workspaces, McpSet, ServerSpec};
use crate::memory_tools::memory_tools;
use std::path::Path;
use std::sync::Arc;
use warren_config::{HostEnv, InstallLayout};
use warren_llm::{KeySource, Providers};
use warren_memory::MemoryStores;
use warren_policy::{Access, ActionLedger, Clock, PolicyEnv, Rule, SandboxSupport, SecurityPolicy};
use warren_state::receipts::ReceiptLog;
use warren_state::secrets::ensure_route_secrets;
use warren_state::sessions::SessionStore;
use warren_tools::{CallIdentity, Registry, ToolContext, ToolLimits};
use warren_types::{Config, DelegationMode};

/// What a front-end's session adds to a top-level turn.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionParts<'a> {
    /// The working directory of the turn's tool calls (checked against the policy).
    pub cwd: Option<&'a Path>,
    /// MCP servers the session brings, started for this turn beside the agent's own.
    pub mcp_servers: &'a [ServerSpec],
}

/// The host's shared parts a turn environment is made of. Cheap to clone.
#[derive(Clone)]
pub struct TurnKit {
    /// The install.
    pub layout: InstallLayout,
    /// Host facts (home, environment).
    pub env: HostEnv,
    /// Provider clients.
    pub providers: Providers,
    /// Memory stores.
    pub memory: Arc<MemoryStores>,
    /// Sandboxes available here.
    pub sandbox: SandboxSupport,
    /// The network proxy (profiles whose network is by domain).
    pub network: warren_net::Proxy,
    /// The action ledger.
    pub ledger: Arc<dyn ActionLedger>,
    /// The clock.
    pub clock: Arc<dyn Clock>,
    /// Sessions, events, usage.
    pub sessions: SessionStore,
    /// Receipt chains.
    pub receipts: Arc<ReceiptLog>,
    /// Event fan-out.
    pub hub: EventHub,
}

impl TurnKit {
    /// The policy environment of this host.
    pub fn policy_env(&self) -> PolicyEnv {
        PolicyEnv::for_host(&self.layout, &self.env)
    }

    /// Builds the turn environment of `alias` from `config`. With a `lineage`, the turn is a
    /// SubAgent's: its already-checked policy, the parent's ledger and cost account, and a hub
    /// that nests its events under the parent's call.
    ///
    /// `session` gives what a front-end's session adds to a top-level turn: the working
    /// directory of its tool calls and MCP servers of its own (a SubAgent gets neither).
    pub async fn build(
        &self,
        config: &Config,
        alias: &str,
        approver: Arc<dyn AsyncApprover>,
        lineage: Option<Lineage>,
        session: SessionParts<'_>,
    ) -> Result<TurnEnv, HostError> {
        let agent = config
            .agents
            .get(alias)
            .ok_or_else(|| HostError::UnknownAgent(alias.to_string()))?;
        let reference = agent
            .model_provider
            .clone()
            .ok_or_else(|| HostError::NoProvider(alias.to_string()))?;
        let policy = match &lineage {
            Some(l) => l.policy.clone(),
            None => SecurityPolicy::for_agent(config, alias, &self.policy_env()).map_err(|e| {
                HostError::Policy {
                    alias: alias.to_string(),
                    message: e.to_string(),
                }
            })?,
        };
        // The agent is about to act: its workspace (and the shared skills folder) exist.
        policy.prepare().map_err(|e| HostError::Policy {
            alias: alias.to_string(),
            message: e.to_string(),
        })?;
        // An agent's route may carry only its own and install-wide secrets (rules §10).
        let entries = warren_llm::resolve_route(config, &reference)?;
        let secrets = entries
            .iter()
            .flat_map(|e| &e.key_sources)
            .filter_map(|k| match k {
                KeySource::Secret(r) => Some(r.as_str()),
                KeySource::Env(_) => None,
            });
        ensure_route_secrets(alias, secrets).map_err(|e| HostError::Policy {
            alias: alias.to_string(),
            message: format!("provider `{reference}`: {e}"),
        })?;
        let route = self.providers.route_of(entries);
        // A SubAgent reaches only the memory its parent could (rules §5); a top-level turn its
        // own allowlist. A reach that cannot be resolved reads and writes nothing.
        let reach = match &lineage {
            Some(l) => l.memory.clone(),
            None => MemoryReach::own(config, alias).unwrap_or(MemoryReach {
                readable: Vec::new(),
                writable: None,
            }),
        };
        let handle = handle_within(&self.memory, config, alias, &reach).await;
        // MCP servers: the agent's configured ones (for a SubAgent, only those its parent has)
        // and, for a top-level turn, the session's own.
        let (allowed, session_servers) = match &lineage {
            Some(l) => (Some(l.mcp_servers.clone()), &[][..]),
            None => (None, session.mcp_servers),
        };
        let (ledger, budget_agent, hub) = match lineage {
            Some(l) => (l.ledger, l.budget_agent, l.hub),
            None => (self.ledger.clone(), alias.to_string(), self.hub.clone()),
        };
        let policy_workspace = policy.workspace.clone();
        let mut tools = ToolContext {
            policy: Arc::new(policy),
            sandbox: self.sandbox.clone(),
            host_env: self.env.vars.clone(),
            ledger,
            clock: self.clock.clone(),
            cancel: warren_tools::CancelToken::new(),
            limits: ToolLimits::default(),
            cwd: policy_workspace,
            call: CallIdentity::default(),
            network: Some(self.network.clone()),
        };
        if let Some(dir) = session.cwd {
            enter_dir(&mut tools, dir)?;
        }
        let mut specs = configured_specs(config, alias, allowed.as_deref());
        specs.extend(session_servers.iter().cloned());
        let others = other_workspaces(&self.layout, config, alias);
        let mcp = McpSet::start(&specs, &tools, &others).await;
        let mut registry = Registry::builtin();
        let writable = reach.writable.as_deref() == Some(alias);
        for t in memory_tools(handle.memory.clone(), writable) {
            registry.register(t);
        }
        if tools.policy.risk.delegation == DelegationMode::Allow {
            let configured = mcp
                .servers
                .iter()
                .filter(|s| s.origin() == "config")
                .map(|s| s.name().to_string())
                .collect();
            registry.register(Box::new(
                DelegateTool::new(
                    self.clone(),
                    Arc::new(config.clone()),
                    approver.clone(),
                    budget_agent.clone(),
                    hub.clone(),
                    reach,
                )
                .with_mcp_servers(configured),
            ));
        }
        for t in mcp.tools() {
            registry.register(Box::new(t));
        }
        Ok(TurnEnv {
            route,
            registry: Arc::new(registry),
            tools,
            mcp,
            memory: handle.unavailable.is_none().then_some(handle.memory),
            sessions: self.sessions.clone(),
            receipts: self.receipts.clone(),
            approver,
            hub,
            system_prompt: format!(
                "You are `{alias}`, an agent hosted by Warren. Your workspace is your current directory; use the tools to act."
            ),
            budget_agent,
        })
    }
}

/// Makes `dir` the working directory of a turn's tool calls (a session's cwd), decided again by
/// the turn's policy: it must still be granted for reading and writing through the workspace,
/// an allowed root or a read-write workspace grant, and be a directory.
pub(crate) fn enter_dir(tools: &mut ToolContext, dir: &Path) -> Result<(), HostError> {
    let policy = &tools.policy;
    let granted = |access| {
        let d = policy.check(dir, access);
        let ok = d.allowed
            && matches!(
                d.rule,
                Rule::Workspace | Rule::AllowedRoot | Rule::ReadWriteGrant
            );
        ok.then_some(d.path)
    };
    let (Some(resolved), Some(_)) = (granted(Access::Read), granted(Access::Write)) else {
        return Err(HostError::Policy {
            alias: policy.alias.clone(),
            message: format!(
                "the session's working directory {} is no longer granted for reading and writing",
                dir.display()
            ),
        });
    };
    if !resolved.is_dir() {
        return Err(HostError::Policy {
            alias: policy.alias.clone(),
            message: format!(
                "the session's working directory {} is not a directory",
                resolved.display()
            ),
        });
    }
    tools.cwd = resolved;
    Ok(())
}
