//! Warren's transport-neutral service layer. The `warren` CLI and the desktop app both call these
//! functions and render their results; errors are [`ApiError`] with a stable code.

mod acp;
mod activity;
mod agent_settings;
mod agents;
pub mod approvals;
mod config_ops;
pub mod cron;
mod errors;
pub mod first_run;
pub mod import;
pub mod lifecycle;
mod lifecycle_pending;
pub mod lifecycle_view;
pub mod live;
pub mod logging;
pub mod logs_view;
pub mod mcp;
pub mod mcp_servers;
pub mod memory;
pub mod memory_settings;
pub mod memory_view;
pub mod network_view;
pub mod notify;
mod pause;
pub mod permission_map;
pub mod policy;
pub mod profiles;
pub mod provider_models;
pub mod providers;
mod run;
pub mod runtime_owner;
mod secrets;
mod serve;
pub mod sessions_view;
pub mod settings;
#[cfg(test)]
mod test_support;
pub mod tool_call;
pub mod usage;

pub use activity::{AgentMeters, RuntimeState, RuntimeStatus, TurnState, TurnSummary};
pub use agent_settings::{
    AgentChange, AgentEdit, AgentEditPreview, AgentField, AgentIssue, AgentSettingPlace,
    AgentSettingsView, DisabledSetting,
};
pub use agents::check_alias;
pub use errors::config_error;
use errors::host_error;
pub use memory::{ForgottenMemory, MemoryItem, StoredMemory};
pub use run::{RunRequest, RunResult, RunStatus};
pub use secrets::{SecretBackend, SecretEntry};
pub use serve::ServeReport;
/// Marks the process non-dumpable (no agent reads its environment or memory through `/proc`);
/// every binary that hosts agents calls it first.
pub use warren_policy::protect_process;
pub use warren_types::{ApiError, ErrorCode};

use std::sync::Arc;
pub use warren_config::HostEnv;
use warren_config::{ConfigStore, InstallLayout, LoadedConfig};
use warren_runtime::host::Host;
use warren_types::approval;

/// A handle on one install: the entry point of every service function.
pub struct Warren {
    store: ConfigStore,
    env: HostEnv,
    host: tokio::sync::OnceCell<Arc<Host>>,
    /// Why the last attempt of this process to finish an unfinished lifecycle operation failed,
    /// per journal entry id (the journal itself records only the steps completed).
    lifecycle_errors: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
}

impl Warren {
    /// Opens the install at `layout` with an empty host environment (nothing is read until a
    /// function needs it). Binaries use [`Warren::open_with_env`].
    pub fn open(layout: InstallLayout) -> Self {
        Self::open_with_env(layout, HostEnv::default())
    }

    /// Opens the install with the host facts (home, environment) captured by the binary.
    pub fn open_with_env(layout: InstallLayout, env: HostEnv) -> Self {
        Warren {
            store: ConfigStore::new(layout),
            env,
            host: tokio::sync::OnceCell::new(),
            lifecycle_errors: Default::default(),
        }
    }

    /// The agent host of this install, opened on first use.
    pub(crate) async fn host(&self) -> Result<Arc<Host>, ApiError> {
        self.host
            .get_or_try_init(|| async {
                Host::open(self.layout().clone(), self.env.clone())
                    .await
                    .map(Arc::new)
                    .map_err(host_error)
            })
            .await
            .cloned()
    }

    /// Every event of every turn this process runs from now on, in order per turn (opens the
    /// host). `warren run` streams these; the desktop goes through [`live::Live`].
    pub async fn events(
        &self,
    ) -> Result<tokio::sync::mpsc::UnboundedReceiver<warren_types::TurnEvent>, ApiError> {
        Ok(self.host().await?.subscribe())
    }

    /// The install layout.
    pub fn layout(&self) -> &InstallLayout {
        self.store.layout()
    }

    /// The config store (for edits that must be validated and saved atomically).
    pub fn config_store(&self) -> &ConfigStore {
        &self.store
    }

    /// Loads and validates the config.
    pub fn load(&self) -> Result<LoadedConfig, ApiError> {
        self.store.load().map_err(config_error)
    }
}
