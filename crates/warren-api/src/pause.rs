//! Pausing agents: a paused agent runs no new turns (prompt, cron, ACP) until resumed. The
//! state lives in `<install>/data/paused.json` and survives restarts (see `Host::set_paused`).

use crate::{errors::host_error, Warren};
use warren_types::{ApiError, ErrorCode};

impl Warren {
    /// The agents paused now, read straight from the install (no host needed): for watchers
    /// such as the desktop tray.
    pub fn paused_now(&self) -> Result<Vec<String>, ApiError> {
        Ok(warren_runtime::host::paused_agents(self.layout())
            .map_err(host_error)?
            .into_iter()
            .collect())
    }

    /// The agents paused now, sorted.
    pub async fn paused_agents(&self) -> Result<Vec<String>, ApiError> {
        let host = self.host().await?;
        Ok(host.paused().map_err(host_error)?.into_iter().collect())
    }

    /// Pauses or resumes one agent; returns the agents paused afterwards.
    pub async fn set_agent_paused(
        &self,
        alias: &str,
        paused: bool,
    ) -> Result<Vec<String>, ApiError> {
        let config = self.load()?.config;
        if paused && !config.agents.contains_key(alias) {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("agent `{alias}` does not exist"),
            ));
        }
        let host = self.host().await?;
        let set = host
            .set_paused(&[alias.to_string()], paused)
            .map_err(host_error)?;
        tracing::info!(agent = %alias, paused, "agent {}", if paused { "paused" } else { "resumed" });
        Ok(set.into_iter().collect())
    }

    /// Pauses every agent of the config, or resumes every paused agent; returns the agents
    /// paused afterwards.
    pub async fn set_all_paused(&self, paused: bool) -> Result<Vec<String>, ApiError> {
        let host = self.host().await?;
        let aliases: Vec<String> = if paused {
            self.load()?.config.agents.keys().cloned().collect()
        } else {
            host.paused().map_err(host_error)?.into_iter().collect()
        };
        let set = host.set_paused(&aliases, paused).map_err(host_error)?;
        tracing::info!(
            paused,
            agents = aliases.len(),
            "all agents {}",
            if paused { "paused" } else { "resumed" }
        );
        Ok(set.into_iter().collect())
    }
}
