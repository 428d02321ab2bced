//! An agent's own secrets (`agent:<alias>/NAME`, rules §10) as an owned-state participant. A
//! rename moves them to the new namespace; a delete exports them to `cascade/secrets.json`,
//! whose values are sealed with the install's secret key (never plain text on disk), then
//! removes them; a restore puts them back under the restored alias.

use super::owned::{AgentState, OwnedState, OwnedStateError};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use warren_state::secrets::{FileSecretStore, SecretRef, SecretScope, SecretStore};

const KIND: &str = "secrets";

/// The participant over the user secret store.
pub struct SecretsState {
    store: Arc<dyn SecretStore>,
    sealer: FileSecretStore,
}

impl SecretsState {
    /// `store` holds the secrets (keyring or file); `sealer` is the install's encrypted file,
    /// whose key seals the archived values.
    pub fn new(store: Arc<dyn SecretStore>, sealer: FileSecretStore) -> Self {
        SecretsState { store, sealer }
    }

    fn names(&self, alias: &str, op: &'static str) -> Result<Vec<String>, OwnedStateError> {
        let all = self
            .store
            .list()
            .map_err(|e| OwnedStateError::new(KIND, op, e))?;
        Ok(all
            .into_iter()
            .filter(|r| matches!(&r.scope, SecretScope::Agent(a) if a == alias))
            .map(|r| r.name)
            .collect())
    }

    fn agent_ref(alias: &str, name: &str, op: &'static str) -> Result<SecretRef, OwnedStateError> {
        SecretRef::agent(alias, name).map_err(|e| OwnedStateError::new(KIND, op, e))
    }

    /// Where a secret whose export failed is kept: an install-wide name that no agent resolves.
    fn parked_ref(tombstone: &str, name: &str) -> Option<SecretRef> {
        let tomb: String = tombstone
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        SecretRef::install(&format!("parked.{tomb}.{name}")).ok()
    }

    /// Moves one secret; a missing source is fine when the target holds it (a resumed step).
    fn move_secret(
        &self,
        from: &SecretRef,
        to: &SecretRef,
        op: &'static str,
    ) -> Result<bool, OwnedStateError> {
        let e = |e| OwnedStateError::new(KIND, op, e);
        match self.store.get(from).map_err(e)? {
            Some(v) => {
                self.store.set(to, &v).map_err(e)?;
                self.store.remove(from).map_err(e)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// `cascade/secrets.json`: the names, and the values sealed with the install key.
#[derive(Serialize, Deserialize)]
struct ExportDoc {
    names: Vec<String>,
    /// Hex of the sealed JSON object `{NAME: value}`.
    sealed: String,
}

#[async_trait(?Send)]
impl OwnedState for SecretsState {
    fn kind(&self) -> &'static str {
        KIND
    }

    async fn count(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        Ok(self.names(a.alias, "count")?.len() as u64)
    }

    async fn rename(&self, a: &AgentState<'_>, new: &str) -> Result<(), OwnedStateError> {
        for name in self.names(a.alias, "rename")? {
            let from = Self::agent_ref(a.alias, &name, "rename")?;
            let to = Self::agent_ref(new, &name, "rename")?;
            self.move_secret(&from, &to, "rename")?;
        }
        Ok(())
    }

    async fn export(&self, a: &AgentState<'_>) -> Result<(Vec<u8>, u64), OwnedStateError> {
        let e = |e| OwnedStateError::new(KIND, "export", e);
        let mut values = BTreeMap::new();
        for name in self.names(a.alias, "export")? {
            let r = Self::agent_ref(a.alias, &name, "export")?;
            if let Some(v) = self.store.get(&r).map_err(e)? {
                values.insert(name, v);
            }
        }
        let plain =
            serde_json::to_vec(&values).map_err(|e| OwnedStateError::new(KIND, "export", e))?;
        let sealed = self.sealer.seal(&plain).map_err(e)?;
        let doc = ExportDoc {
            names: values.keys().cloned().collect(),
            sealed: hex::encode(sealed),
        };
        let bytes =
            serde_json::to_vec_pretty(&doc).map_err(|e| OwnedStateError::new(KIND, "export", e))?;
        Ok((bytes, values.len() as u64))
    }

    async fn purge(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        let mut n = 0;
        for name in self.names(a.alias, "purge")? {
            let r = Self::agent_ref(a.alias, &name, "purge")?;
            if self
                .store
                .remove(&r)
                .map_err(|e| OwnedStateError::new(KIND, "purge", e))?
            {
                n += 1;
            }
        }
        Ok(n)
    }

    async fn restore(
        &self,
        a: &AgentState<'_>,
        export: Option<&[u8]>,
        tombstone: &str,
    ) -> Result<u64, OwnedStateError> {
        let e = |e| OwnedStateError::new(KIND, "restore", e);
        let mut n = 0;
        if let Some(bytes) = export {
            let doc: ExportDoc = serde_json::from_slice(bytes)
                .map_err(|e| OwnedStateError::new(KIND, "restore", e))?;
            let sealed = hex::decode(doc.sealed.trim())
                .map_err(|e| OwnedStateError::new(KIND, "restore", e))?;
            let plain = self.sealer.unseal(&sealed).map_err(e)?;
            let values: BTreeMap<String, String> = serde_json::from_slice(&plain)
                .map_err(|e| OwnedStateError::new(KIND, "restore", e))?;
            for (name, v) in values {
                let r = Self::agent_ref(a.alias, &name, "restore")?;
                self.store.set(&r, &v).map_err(e)?;
                n += 1;
            }
        }
        // Secrets parked by a delete whose export failed come back too.
        let parked: Vec<SecretRef> = self
            .store
            .list()
            .map_err(e)?
            .into_iter()
            .filter(|r| {
                matches!(r.scope, SecretScope::Install)
                    && Self::parked_ref(tombstone, "")
                        .is_some_and(|p| r.name.starts_with(&p.name) && r.name.len() > p.name.len())
            })
            .collect();
        for from in parked {
            let prefix = Self::parked_ref(tombstone, "")
                .map(|p| p.name)
                .unwrap_or_default();
            let name = from.name[prefix.len()..].to_string();
            let to = Self::agent_ref(a.alias, &name, "restore")?;
            if self.move_secret(&from, &to, "restore")? {
                n += 1;
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warren_config::InstallLayout;
    use warren_types::{Config, MemoryBackendKind};

    /// Archives made when a failed export parked the data (earlier versions) still restore it.
    #[tokio::test]
    async fn a_parked_secret_comes_back_with_the_restore() {
        let dir = tempfile::tempdir().unwrap();
        let layout = InstallLayout::new(dir.path());
        let store: Arc<dyn SecretStore> = Arc::new(FileSecretStore::for_install(&layout));
        let state = SecretsState::new(store.clone(), FileSecretStore::for_install(&layout));
        let tomb = "~deleted:alice-20260301T000000Z";
        let parked = SecretsState::parked_ref(tomb, "SHORT").unwrap();
        store.set(&parked, "s").unwrap();
        let config = Config::default();
        let a = AgentState {
            alias: "alice",
            config: &config,
            memory_backend: MemoryBackendKind::Sqlite,
            workspace: dir.path(),
            sessions_agent_id: None,
            cron_jobs: &[],
        };
        assert_eq!(state.restore(&a, None, tomb).await.unwrap(), 1);
        let short = SecretRef::agent("alice", "SHORT").unwrap();
        assert_eq!(store.get(&short).unwrap().as_deref(), Some("s"));
        assert_eq!(store.get(&parked).unwrap(), None);
    }
}
