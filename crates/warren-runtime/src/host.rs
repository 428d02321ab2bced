//! The agent host: builds each agent's policy, memory, route and tools from the current config,
//! runs one turn at a time per agent (others queue), several agents concurrently, and fans out
//! their events. Config changes apply to the next turn without a restart.

use crate::approval::{ApprovalBroker, AsyncApprover};
use crate::error::HostError;
use crate::events::EventHub;
use crate::turn::kit::{SessionParts, TurnKit};
use crate::turn::{run_turn, TurnEnv, TurnInput, TurnOutcome};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;
use warren_state::db::open_sessions_db;
use warren_state::keyring::{open_user_secrets, UserSecrets};
use warren_state::ledger::DbLedger;
use warren_state::pause::{pause_configured_agents, paused_agents, set_paused_agents};
use warren_state::receipts::ReceiptLog;
use warren_state::secrets::{FileSecretStore, SecretError, SecretRef, SecretStore};
use warren_state::sessions::{SessionKind, SessionStore};

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'a>>;
use warren_config::{ConfigCache, InstallLayout};
use warren_llm::{KeyResolver, KeySource, Providers};
use warren_memory::MemoryStores;
use warren_policy::{ActionLedger, Clock, SandboxSupport, SystemClock};
use warren_types::{Config, TurnEvent, TurnTrigger};

pub use warren_config::HostEnv;

/// How a front-end runs one turn: its stop token and its tool calls' working directory.
#[derive(Default, Clone, Copy)]
struct Turn<'a> {
    stop: Option<&'a CancellationToken>,
    session: SessionParts<'a>,
}

/// How long a key read from the secret store is reused before it is read again (a keyring
/// read is a D-Bus round trip with its own encrypted session). Kept short: a key replaced or
/// removed by another process (`warren secrets`, a delete) takes effect within this time.
const KEY_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(5);

struct SecretKeys {
    vars: BTreeMap<String, String>,
    secrets: UserSecrets,
    cache: Mutex<HashMap<String, (std::time::Instant, String)>>,
}

impl KeyResolver for SecretKeys {
    fn resolve(&self, source: &KeySource) -> Option<String> {
        let key = self.lookup(source);
        if let Some(k) = &key {
            warren_types::redact::register(k);
        }
        key
    }
}

impl SecretKeys {
    fn lookup(&self, source: &KeySource) -> Option<String> {
        match source {
            KeySource::Env(name) => self.vars.get(name).cloned(),
            KeySource::Secret(reference) => {
                let cache = || {
                    self.cache
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                };
                if let Some((at, v)) = cache().get(reference) {
                    if at.elapsed() < KEY_CACHE_TTL {
                        return Some(v.clone());
                    }
                }
                let r = SecretRef::parse(reference).ok()?;
                // The store is read without holding the cache: other agents' lookups do not
                // wait behind this one's keyring round trip.
                match self.secrets.get(&r) {
                    Ok(Some(v)) => {
                        cache().insert(reference.clone(), (std::time::Instant::now(), v.clone()));
                        Some(v)
                    }
                    Ok(None) => None,
                    Err(e) => {
                        tracing::warn!(secret = %reference, error = %e, "secret store read failed");
                        None
                    }
                }
            }
        }
    }
}

#[derive(Default)]
struct AgentSlot {
    turn_lock: Arc<tokio::sync::Mutex<()>>,
    cancel: Mutex<Option<CancellationToken>>,
}

/// Held while an agent is quiesced (see [`Host::quiesce`]).
pub struct TurnGate {
    _guard: tokio::sync::OwnedMutexGuard<()>,
    _file: warren_state::agent_lock::AgentLock,
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
    network: warren_net::Proxy,
    ledger: Arc<dyn ActionLedger>,
    clock: Arc<dyn Clock>,
    agents: Mutex<HashMap<String, Arc<AgentSlot>>>,
    /// The config as last parsed: every turn reads the file, and parses it only when it changed.
    config: ConfigCache,
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
        // The receipt key is install state, kept in the encrypted file so that every process
        // (desktop, `warren serve` without a desktop session) verifies the same chain.
        let receipts = Arc::new(
            ReceiptLog::new(pool.clone(), &FileSecretStore::for_install(&layout))?
                .with_anchor(warren_state::receipts::anchor_path(&layout)),
        );
        let user_secrets = {
            let (layout, vars) = (layout.clone(), env.vars.clone());
            tokio::task::spawn_blocking(move || open_user_secrets(&layout, &vars))
                .await
                .map_err(|e| SecretError::Backend(format!("secret store: {e}")))??
        };
        let providers = Providers::new(Arc::new(SecretKeys {
            vars: env.vars.clone(),
            secrets: user_secrets,
            cache: Mutex::new(HashMap::new()),
        }))?;
        let sandbox = SandboxSupport::probe(env.path_var());
        // Actions are counted in sessions.db: every process of the install shares them.
        let ledger = Arc::new(DbLedger::open(&layout.sessions_db())?);
        // Requests are also published to the install's inbox, so `warren approvals` in another
        // process can answer them.
        let broker =
            ApprovalBroker::with_inbox(warren_state::approval_inbox::Inbox::for_install(&layout));
        // The network proxy of profiles whose network is by domain; it records to sessions.db.
        let network = warren_state::network_log::proxy_recording_to(
            warren_state::network_log::NetworkLog::start(pool.clone()),
        );
        Ok(Host {
            network,
            memory: Arc::new(MemoryStores::new(layout.clone())),
            layout,
            env,
            sessions: SessionStore::new(pool),
            receipts,
            providers,
            hub: EventHub::new(),
            broker,
            sandbox,
            ledger,
            clock,
            agents: Mutex::new(HashMap::new()),
            config: ConfigCache::new(),
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
    /// The memory stores of the install.
    pub fn memory(&self) -> &Arc<MemoryStores> {
        &self.memory
    }
    /// A subscription to the events of every turn from now on.
    pub fn subscribe(&self) -> tokio::sync::mpsc::UnboundedReceiver<TurnEvent> {
        self.hub.subscribe()
    }

    fn slot(&self, alias: &str) -> Arc<AgentSlot> {
        self.agents
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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
        self.kit()
            .build(config, alias, approver, None, SessionParts::default())
            .await
    }

    /// The shared parts turn environments are built from (also used by `delegate`).
    pub fn kit(&self) -> TurnKit {
        TurnKit {
            layout: self.layout.clone(),
            env: self.env.clone(),
            providers: self.providers.clone(),
            memory: self.memory.clone(),
            sandbox: self.sandbox.clone(),
            network: self.network.clone(),
            ledger: self.ledger.clone(),
            clock: self.clock.clone(),
            sessions: self.sessions.clone(),
            receipts: self.receipts.clone(),
            hub: self.hub.clone(),
        }
    }

    /// Runs one prompt for `alias`, in `session` (a new chat session when None). Waits while
    /// the agent is busy with another turn; reads the config afresh so edits apply.
    pub fn run<'a>(
        &'a self,
        alias: &'a str,
        session: Option<&'a str>,
        prompt: &'a str,
        trigger: TurnTrigger,
        approver: Option<Arc<dyn AsyncApprover>>,
    ) -> BoxFuture<'a, Result<TurnOutcome, HostError>> {
        Box::pin(async move {
            // Without a stop token nothing ends the wait early, so there is always an outcome.
            self.run_inner(alias, session, prompt, trigger, approver, Turn::default())
                .await?
                .ok_or_else(|| {
                    HostError::Lock(std::io::Error::new(
                        std::io::ErrorKind::Interrupted,
                        "the turn was stopped before it started",
                    ))
                })
        })
    }

    /// [`Host::run`] for a front-end that cancels per prompt (ACP): `stop` cancels this turn
    /// only. Stopped while still queued behind another turn, it returns `Ok(None)` at once,
    /// having run and recorded nothing. `cwd`, when given, is the working directory of this
    /// turn's tool calls (checked again against the policy the turn runs under), and its MCP
    /// servers are started for the turn beside the agent's own.
    #[allow(clippy::too_many_arguments)]
    pub fn run_stoppable<'a>(
        &'a self,
        alias: &'a str,
        session: Option<&'a str>,
        prompt: &'a str,
        trigger: TurnTrigger,
        approver: Option<Arc<dyn AsyncApprover>>,
        stop: CancellationToken,
        parts: SessionParts<'a>,
    ) -> BoxFuture<'a, Result<Option<TurnOutcome>, HostError>> {
        Box::pin(async move {
            let at = Turn {
                stop: Some(&stop),
                session: parts,
            };
            self.run_inner(alias, session, prompt, trigger, approver, at)
                .await
        })
    }

    async fn run_inner(
        &self,
        alias: &str,
        session: Option<&str>,
        prompt: &str,
        trigger: TurnTrigger,
        approver: Option<Arc<dyn AsyncApprover>>,
        at: Turn<'_>,
    ) -> Result<Option<TurnOutcome>, HostError> {
        let stop = at.stop;
        let slot = self.slot(alias);
        let Some(_turn) = until_stopped(stop, slot.turn_lock.lock()).await else {
            return Ok(None);
        };
        // Turns of this agent in other processes, and their lifecycle operations, go first.
        let Some(cross_process) = until_stopped(
            stop,
            warren_state::agent_lock::acquire(&self.layout, alias, None),
        )
        .await
        else {
            return Ok(None);
        };
        let _cross_process = cross_process.map_err(HostError::Lock)?;
        warren_state::lifecycle::refuse_if_pending(&self.layout, alias)
            .map_err(|e| HostError::LifecyclePending(e.to_string()))?;
        let config = self.config.load(&self.layout)?.config;
        let agent = config
            .agents
            .get(alias)
            .ok_or_else(|| HostError::UnknownAgent(alias.to_string()))?;
        if !agent.enabled {
            return Err(HostError::Disabled(alias.to_string()));
        }
        if paused_agents(&self.layout)?.contains(alias) {
            return Err(HostError::Paused(alias.to_string()));
        }
        let approver = approver.unwrap_or_else(|| Arc::new(self.broker.clone()));
        let env = self
            .kit()
            .build(&config, alias, approver, None, at.session)
            .await?;
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
                let kind = if trigger == TurnTrigger::Cron {
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
        if stop.is_some_and(CancellationToken::is_cancelled) {
            return Ok(None);
        }
        let cancel = stop.map_or_else(CancellationToken::new, CancellationToken::child_token);
        *slot
            .cancel
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(cancel.clone());
        let outcome = run_turn(
            &env,
            TurnInput {
                session_id,
                prompt: prompt.to_string(),
                trigger,
            },
            cancel,
        )
        .await;
        slot.cancel
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        Ok(Some(outcome))
    }

    /// Quiesces `alias` for the lifecycle service: while the returned gate lives no turn of the
    /// agent starts. A running turn is awaited up to `wait` (cancelled first with `force`);
    /// `None` when it is still running then.
    pub async fn quiesce(
        &self,
        alias: &str,
        wait: std::time::Duration,
        force: bool,
    ) -> Option<TurnGate> {
        let lock = self.slot(alias).turn_lock.clone();
        if force {
            self.cancel(alias);
        }
        let start = tokio::time::Instant::now();
        let guard = tokio::time::timeout(wait, lock.lock_owned()).await.ok()?;
        // A turn in another process is awaited for the rest of the wait (it cannot be
        // cancelled from here).
        let left = wait.saturating_sub(start.elapsed());
        match warren_state::agent_lock::acquire(&self.layout, alias, Some(left)).await {
            Ok(Some(file)) => Some(TurnGate {
                _guard: guard,
                _file: file,
            }),
            Ok(None) => None,
            Err(e) => {
                tracing::error!(agent = %alias, "agent lock file: {e}");
                None
            }
        }
    }

    /// The agents paused now (read from `<install>/data/paused.json`, so a pause made by
    /// another process counts too).
    pub fn paused(&self) -> Result<std::collections::BTreeSet<String>, HostError> {
        Ok(paused_agents(&self.layout)?)
    }

    /// Pauses (or resumes) `aliases`: a paused agent's next turn (prompt, cron, ACP) fails with
    /// [`HostError::Paused`]; a turn already running is not stopped. Persisted atomically;
    /// returns the agents paused afterwards. A pause is refused with
    /// [`HostError::UnknownAgent`] for an alias config.toml does not have, checked under the
    /// pause lock (see [`pause_configured_agents`]).
    pub fn set_paused(
        &self,
        aliases: &[String],
        paused: bool,
    ) -> Result<std::collections::BTreeSet<String>, HostError> {
        if paused {
            Ok(pause_configured_agents(&self.layout, Some(aliases))?)
        } else {
            Ok(set_paused_agents(&self.layout, aliases, false)?)
        }
    }

    /// Pauses every agent config.toml has when the pause lock is taken; returns the agents
    /// paused afterwards.
    pub fn pause_all(&self) -> Result<std::collections::BTreeSet<String>, HostError> {
        Ok(pause_configured_agents(&self.layout, None)?)
    }

    /// Cancels the running turn of `alias`; false when none runs.
    pub fn cancel(&self, alias: &str) -> bool {
        let slot = self.slot(alias);
        let token = slot
            .cancel
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
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

/// Awaits `f` unless `stop` fires first (None: stopped).
async fn until_stopped<F: std::future::Future>(
    stop: Option<&CancellationToken>,
    f: F,
) -> Option<F::Output> {
    match stop {
        None => Some(f.await),
        Some(t) => tokio::select! {
            r = f => Some(r),
            () = t.cancelled() => None,
        },
    }
}
