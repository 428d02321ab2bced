//! The agent host: builds each agent's policy, memory, route and tools from the current config,
//! runs one turn at a time per agent (others queue), several agents concurrently, and fans out
//! their events. Config changes apply to the next turn without a restart.

use crate::approval::{ApprovalBroker, AsyncApprover};
use crate::db::{open_sessions_db, DbError};
use crate::events::EventHub;
use crate::memory_tools::memory_tools;
use crate::receipts::{ReceiptError, ReceiptLog};
use crate::secrets::{FileSecretStore, SecretRef, SecretStore};
use crate::sessions::{SessionKind, SessionStore};
use crate::turn::{run_turn, TurnEnv, TurnInput, TurnOutcome};
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
use warren_config::{load_config, ConfigError, InstallLayout};
use warren_llm::{KeyResolver, KeySource, LlmError, Providers};
use warren_memory::MemoryStores;
use warren_policy::{
    ActionLedger, Clock, MemoryLedger, PolicyEnv, SandboxSupport, SecurityPolicy, SystemClock,
};
use warren_tools::{Registry, ToolContext, ToolLimits};
use warren_types::{Config, TurnEvent};

/// Facts about the host process, captured by the binary's `main`.
#[derive(Clone, Debug, Default)]
pub struct HostEnv {
    /// The user's home directory.
    pub home: Option<PathBuf>,
    /// The process environment (shell passthrough and `api_key_env` lookups read this copy).
    pub vars: BTreeMap<String, String>,
}

impl HostEnv {
    /// Captures the process environment (binaries only).
    pub fn from_process() -> Self {
        HostEnv {
            home: std::env::var_os("HOME").map(PathBuf::from),
            vars: std::env::vars().collect(),
        }
    }

    fn path_var(&self) -> Option<OsString> {
        self.vars.get("PATH").map(OsString::from)
    }
}

/// Why the host could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The config is missing or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No such agent.
    #[error("agent `{0}` does not exist")]
    UnknownAgent(String),
    /// The agent is disabled in the config.
    #[error("agent `{0}` is disabled")]
    Disabled(String),
    /// The agent has no `model_provider`.
    #[error("agent `{0}` has no model_provider; add one to its [agents.{0}] table")]
    NoProvider(String),
    /// The policy could not be built.
    #[error("policy of `{alias}`: {message}")]
    Policy {
        /// The agent.
        alias: String,
        /// What failed.
        message: String,
    },
    /// The provider route could not be built.
    #[error(transparent)]
    Provider(#[from] LlmError),
    /// The sessions database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// The receipt log failed.
    #[error(transparent)]
    Receipts(#[from] ReceiptError),
    /// No such session, or it belongs to another agent.
    #[error("session `{0}` does not exist for this agent")]
    UnknownSession(String),
}

struct SecretKeys {
    vars: BTreeMap<String, String>,
    secrets: Arc<FileSecretStore>,
}

impl KeyResolver for SecretKeys {
    fn resolve(&self, source: &KeySource) -> Option<String> {
        match source {
            KeySource::Env(name) => self.vars.get(name).cloned(),
            KeySource::Secret(reference) => {
                let r = SecretRef::parse(reference).ok()?;
                self.secrets.get(&r).ok().flatten()
            }
        }
    }
}

#[derive(Default)]
struct AgentSlot {
    turn_lock: tokio::sync::Mutex<()>,
    cancel: Mutex<Option<CancellationToken>>,
}

/// One host per process (desktop app, `warren serve`, or a one-shot `warren run`).
pub struct Host {
    layout: InstallLayout,
    env: HostEnv,
    sessions: SessionStore,
    receipts: Arc<ReceiptLog>,
    memory: Arc<MemoryStores>,
    providers: Providers,
    hub: EventHub,
    broker: ApprovalBroker,
    sandbox: SandboxSupport,
    ledger: Arc<dyn ActionLedger>,
    clock: Arc<dyn Clock>,
    agents: Mutex<HashMap<String, Arc<AgentSlot>>>,
}

impl Host {
    /// Opens the runtime state of an install.
    pub async fn open(layout: InstallLayout, env: HostEnv) -> Result<Self, HostError> {
        Self::open_with_clock(layout, env, Arc::new(SystemClock)).await
    }

    /// [`Host::open`] with a controlled clock (tests).
    pub async fn open_with_clock(
        layout: InstallLayout,
        env: HostEnv,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, HostError> {
        let pool = open_sessions_db(&layout.sessions_db()).await?;
        let secrets = Arc::new(FileSecretStore::for_install(&layout));
        let receipts = Arc::new(ReceiptLog::new(pool.clone(), secrets.as_ref())?);
        let providers = Providers::new(Arc::new(SecretKeys {
            vars: env.vars.clone(),
            secrets,
        }))?;
        let sandbox = SandboxSupport::probe(env.path_var().as_deref());
        Ok(Host {
            memory: Arc::new(MemoryStores::new(layout.clone())),
            layout,
            env,
            sessions: SessionStore::new(pool),
            receipts,
            providers,
            hub: EventHub::new(),
            broker: ApprovalBroker::new(),
            sandbox,
            ledger: Arc::new(MemoryLedger::new()),
            clock,
            agents: Mutex::new(HashMap::new()),
        })
    }

    /// The install.
    pub fn layout(&self) -> &InstallLayout {
        &self.layout
    }
    /// The session store.
    pub fn sessions(&self) -> &SessionStore {
        &self.sessions
    }
    /// The approval broker front-ends answer through.
    pub fn approvals(&self) -> &ApprovalBroker {
        &self.broker
    }
    /// The receipt log.
    pub fn receipts(&self) -> &ReceiptLog {
        &self.receipts
    }
    /// A subscription to the events of every turn from now on.
    pub fn subscribe(&self) -> tokio::sync::mpsc::UnboundedReceiver<TurnEvent> {
        self.hub.subscribe()
    }

    fn slot(&self, alias: &str) -> Arc<AgentSlot> {
        self.agents
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(alias.to_string())
            .or_default()
            .clone()
    }

    /// Builds the turn environment of `alias` from `config`.
    pub fn turn_env<'a>(
        &'a self,
        config: &'a Config,
        alias: &'a str,
        approver: Arc<dyn AsyncApprover>,
    ) -> BoxFuture<'a, Result<TurnEnv, HostError>> {
        Box::pin(self.turn_env_inner(config, alias, approver))
    }

    async fn turn_env_inner(
        &self,
        config: &Config,
        alias: &str,
        approver: Arc<dyn AsyncApprover>,
    ) -> Result<TurnEnv, HostError> {
        let agent = config
            .agents
            .get(alias)
            .ok_or_else(|| HostError::UnknownAgent(alias.to_string()))?;
        let reference = agent
            .model_provider
            .clone()
            .ok_or_else(|| HostError::NoProvider(alias.to_string()))?;
        let policy = SecurityPolicy::for_agent(
            config,
            alias,
            &PolicyEnv {
                layout: self.layout.clone(),
                home: self.env.home.clone(),
            },
        )
        .map_err(|e| HostError::Policy {
            alias: alias.to_string(),
            message: e.to_string(),
        })?;
        let route = self.providers.route(config, &reference)?;
        // The memory factory's futures are not provably `Send` (sqlx executors), so they are
        // driven on a blocking thread.
        let (stores, cfg, who, rt) = (
            self.memory.clone(),
            config.clone(),
            alias.to_string(),
            tokio::runtime::Handle::current(),
        );
        let handle = tokio::task::spawn_blocking(move || {
            rt.block_on(stores.handle_or_unavailable(&cfg, &who))
        })
        .await
        .map_err(|e| HostError::Policy {
            alias: alias.to_string(),
            message: format!("memory setup failed: {e}"),
        })?;
        let mut registry = Registry::builtin();
        for t in memory_tools(handle.memory.clone(), tokio::runtime::Handle::current()) {
            registry.register(t);
        }
        Ok(TurnEnv {
            route,
            registry: Arc::new(registry),
            tools: ToolContext {
                policy: Arc::new(policy),
                sandbox: self.sandbox.clone(),
                host_env: self.env.vars.clone(),
                ledger: self.ledger.clone(),
                clock: self.clock.clone(),
                cancel: warren_tools::CancelToken::new(),
                limits: ToolLimits::default(),
            },
            memory: handle.unavailable.is_none().then_some(handle.memory),
            sessions: self.sessions.clone(),
            receipts: self.receipts.clone(),
            approver,
            hub: self.hub.clone(),
            system_prompt: format!(
                "You are `{alias}`, an agent hosted by Warren. Your workspace is your current directory; use the tools to act."
            ),
        })
    }

    /// Runs one prompt for `alias`, in `session` (a new chat session when None). Waits while
    /// the agent is busy with another turn; reads the config afresh so edits apply.
    pub fn run<'a>(
        &'a self,
        alias: &'a str,
        session: Option<&'a str>,
        prompt: &'a str,
        trigger: &'a str,
        approver: Option<Arc<dyn AsyncApprover>>,
    ) -> BoxFuture<'a, Result<TurnOutcome, HostError>> {
        Box::pin(self.run_inner(alias, session, prompt, trigger, approver))
    }

    async fn run_inner(
        &self,
        alias: &str,
        session: Option<&str>,
        prompt: &str,
        trigger: &str,
        approver: Option<Arc<dyn AsyncApprover>>,
    ) -> Result<TurnOutcome, HostError> {
        let slot = self.slot(alias);
        let _turn = slot.turn_lock.lock().await;
        let config = load_config(&self.layout)?.config;
        let agent = config
            .agents
            .get(alias)
            .ok_or_else(|| HostError::UnknownAgent(alias.to_string()))?;
        if !agent.enabled {
            return Err(HostError::Disabled(alias.to_string()));
        }
        let approver = approver.unwrap_or_else(|| Arc::new(self.broker.clone()));
        let env = self.turn_env(&config, alias, approver).await?;
        let now = self.clock.now().into();
        let session_id = match session {
            Some(id) => {
                let s = self
                    .sessions
                    .session(id)
                    .await?
                    .filter(|s| s.agent.as_deref() == Some(alias));
                s.ok_or_else(|| HostError::UnknownSession(id.to_string()))?
                    .id
            }
            None => {
                let kind = if trigger == "cron" {
                    SessionKind::Cron
                } else {
                    SessionKind::Chat
                };
                self.sessions
                    .create_session(alias, kind, prompt, now)
                    .await?
                    .id
            }
        };
        let cancel = CancellationToken::new();
        *slot.cancel.lock().unwrap_or_else(|p| p.into_inner()) = Some(cancel.clone());
        let outcome = run_turn(
            &env,
            TurnInput {
                session_id,
                prompt: prompt.to_string(),
                trigger: trigger.to_string(),
            },
            cancel,
        )
        .await;
        slot.cancel.lock().unwrap_or_else(|p| p.into_inner()).take();
        Ok(outcome)
    }

    /// Cancels the running turn of `alias`; false when none runs.
    pub fn cancel(&self, alias: &str) -> bool {
        let slot = self.slot(alias);
        let token = slot
            .cancel
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match token {
            Some(t) => {
                t.cancel();
                true
            }
            None => false,
        }
    }
}
