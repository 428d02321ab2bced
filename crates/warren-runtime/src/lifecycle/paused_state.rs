//! Whether an agent is paused (`data/paused.json`) as an owned-state participant: a rename
//! carries the pause to the new alias, a delete records it in `cascade/paused.json` and clears
//! it (so a new agent under the old alias does not start paused), a restore pauses the restored
//! agent again.

use super::owned::{AgentState, OwnedState, OwnedStateError};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use warren_config::InstallLayout;
use warren_state::pause::{paused_agents, set_paused_agents};

const KIND: &str = "paused";

/// The participant over an install's pause state.
pub struct PausedState {
    layout: InstallLayout,
}

impl PausedState {
    /// The participant of the install at `layout`.
    pub fn new(layout: InstallLayout) -> Self {
        PausedState { layout }
    }

    fn is_paused(&self, alias: &str, op: &'static str) -> Result<bool, OwnedStateError> {
        Ok(paused_agents(&self.layout)
            .map_err(|e| OwnedStateError::new(KIND, op, e))?
            .contains(alias))
    }

    fn set(&self, alias: &str, paused: bool, op: &'static str) -> Result<(), OwnedStateError> {
        set_paused_agents(&self.layout, &[alias.to_string()], paused)
            .map(|_| ())
            .map_err(|e| OwnedStateError::new(KIND, op, e))
    }
}

#[derive(Serialize, Deserialize)]
struct ExportDoc {
    paused: bool,
}

#[async_trait(?Send)]
impl OwnedState for PausedState {
    fn kind(&self) -> &'static str {
        KIND
    }

    async fn count(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        Ok(u64::from(self.is_paused(a.alias, "count")?))
    }

    async fn rename(&self, a: &AgentState<'_>, new: &str) -> Result<(), OwnedStateError> {
        if self.is_paused(a.alias, "rename")? {
            self.set(new, true, "rename")?;
            self.set(a.alias, false, "rename")?;
        }
        Ok(())
    }

    async fn export(&self, a: &AgentState<'_>) -> Result<(Vec<u8>, u64), OwnedStateError> {
        let paused = self.is_paused(a.alias, "export")?;
        let bytes = serde_json::to_vec_pretty(&ExportDoc { paused })
            .map_err(|e| OwnedStateError::new(KIND, "export", e))?;
        Ok((bytes, u64::from(paused)))
    }

    async fn purge(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        let was = self.is_paused(a.alias, "purge")?;
        if was {
            self.set(a.alias, false, "purge")?;
        }
        Ok(u64::from(was))
    }

    async fn restore(
        &self,
        a: &AgentState<'_>,
        export: Option<&[u8]>,
        _tombstone: &str,
    ) -> Result<u64, OwnedStateError> {
        let Some(bytes) = export else {
            return Ok(0);
        };
        let doc: ExportDoc =
            serde_json::from_slice(bytes).map_err(|e| OwnedStateError::new(KIND, "restore", e))?;
        if doc.paused {
            self.set(a.alias, true, "restore")?;
        }
        Ok(u64::from(doc.paused))
    }
}
