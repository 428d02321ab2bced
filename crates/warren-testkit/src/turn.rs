//! A turn harness for runtime-level tests (cargo feature `runtime`): a [`Host`] opened over a
//! [`TestInstall`], usually with a [`FakeLlm`] scripted with replies, that runs one turn for an
//! agent and collects the [`TurnEvent`]s it emitted.
//!
//! The host's environment is `HOME` = `<root>/home` and the test process's `PATH`, nothing else.
//! Only integration tests (`tests/`) may use this module from `warren-runtime` itself: its unit
//! tests would see a second copy of the runtime's types.

use crate::fake_llm::{FakeLlm, Reply};
use crate::TestInstall;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedReceiver;
use warren_runtime::approval::AsyncApprover;
use warren_runtime::error::HostError;
use warren_runtime::host::{Host, HostEnv};
use warren_runtime::turn::TurnOutcome;
use warren_types::{ProviderFamily, TurnEvent, TurnTrigger};

/// A host over a throw-away install; both removed when dropped.
pub struct TurnHarness {
    // Declared first so the host (and its database pools) closes before the folder goes.
    host: Host,
    install: TestInstall,
}

/// One turn run by a [`TurnHarness`]: its outcome and the events it emitted, in order.
#[derive(Debug, Clone)]
pub struct TurnRun {
    /// What [`Host::run`] returned.
    pub outcome: TurnOutcome,
    /// Every event the host published while the turn ran (its nested delegations included).
    pub events: Vec<TurnEvent>,
}

/// The environment the harness opens its host with: `HOME` = `<root>/home`, and only the
/// process's `PATH` among the variables.
pub fn host_env(install: &TestInstall) -> HostEnv {
    let mut vars = BTreeMap::new();
    vars.insert(
        "PATH".to_string(),
        std::env::var("PATH").unwrap_or_default(),
    );
    HostEnv {
        home: Some(install.root().join("home")),
        vars,
    }
}

/// Every event already waiting in `rx`, in order (for tests that subscribe themselves).
pub fn drain(rx: &mut UnboundedReceiver<TurnEvent>) -> Vec<TurnEvent> {
    let mut v = Vec::new();
    while let Ok(e) = rx.try_recv() {
        v.push(e);
    }
    v
}

impl TurnHarness {
    /// A new install whose config is `config_text`, and a host opened over it. Panics when the
    /// install cannot be made or the host does not open.
    pub async fn open(config_text: &str) -> Self {
        match TestInstall::with_config(config_text) {
            Ok(t) => Self::over(t).await,
            Err(e) => panic!("writing the test install: {e}"),
        }
    }

    /// A host opened over `install` (its config already written). Panics when it does not open.
    pub async fn over(install: TestInstall) -> Self {
        match Host::open(install.layout(), host_env(&install)).await {
            Ok(host) => TurnHarness { host, install },
            Err(e) => panic!("opening the host: {e}"),
        }
    }

    /// A host opened over `install` with `extra` variables added to [`host_env`] (provider
    /// keys named by `api_key_env`). Panics when it does not open.
    pub async fn over_with_vars(install: TestInstall, extra: &[(&str, &str)]) -> Self {
        let mut env = host_env(&install);
        for (k, v) in extra {
            env.vars.insert((*k).to_string(), (*v).to_string());
        }
        match Host::open(install.layout(), env).await {
            Ok(host) => TurnHarness { host, install },
            Err(e) => panic!("opening the host: {e}"),
        }
    }

    /// A [`FakeLlm`] of `family` scripted with `replies`, and a harness over the config text
    /// `config` makes from the fake's provider block (the entry is named `main`, so agents use
    /// `model_provider = "<family>.main"`). Keep the fake: dropping it stops the server.
    pub async fn scripted(
        family: ProviderFamily,
        replies: impl IntoIterator<Item = Reply>,
        config: impl FnOnce(&str) -> String,
    ) -> (FakeLlm, Self) {
        let fake = match FakeLlm::start(family) {
            Ok(f) => f,
            Err(e) => panic!("starting the fake provider: {e}"),
        };
        fake.script(replies);
        let harness = Self::open(&config(&fake.config_block("main"))).await;
        (fake, harness)
    }

    /// The host.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The install under the host.
    pub fn install(&self) -> &TestInstall {
        &self.install
    }

    /// The install and the host, for tests that share the host (`Arc<Host>`) or keep the
    /// install apart. Keep the install as long as the host: dropping it removes the folder.
    pub fn into_parts(self) -> (TestInstall, Host) {
        (self.install, self.host)
    }

    /// `<root>/agents/<alias>/workspace` (an agent's default workspace; not created here).
    pub fn workspace(&self, alias: &str) -> PathBuf {
        self.install.layout().default_workspace(alias)
    }

    /// Runs one user turn for `alias` in a new session without an approver, and collects its
    /// events. Panics when the host refuses to run it.
    pub async fn turn(&self, alias: &str, prompt: &str) -> TurnRun {
        match self
            .turn_with(alias, None, prompt, TurnTrigger::User, None)
            .await
        {
            Ok(run) => run,
            Err(e) => panic!("running a turn for {alias}: {e}"),
        }
    }

    /// Runs one turn with every argument of [`Host::run`], and collects its events.
    pub async fn turn_with(
        &self,
        alias: &str,
        session: Option<&str>,
        prompt: &str,
        trigger: TurnTrigger,
        approver: Option<Arc<dyn AsyncApprover>>,
    ) -> Result<TurnRun, HostError> {
        let mut rx = self.host.subscribe();
        let outcome = self
            .host
            .run(alias, session, prompt, trigger, approver)
            .await?;
        Ok(TurnRun {
            outcome,
            events: drain(&mut rx),
        })
    }
}
