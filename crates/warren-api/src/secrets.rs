//! `warren secrets set | list | rm` and the receipt chain check.

use crate::Warren;
use serde::Serialize;
use warren_state::db::open_sessions_db;
use warren_state::keyring::{open_user_secrets, UserSecrets};
use warren_state::receipts::ReceiptLog;
use warren_state::secrets::{FileSecretStore, SecretError, SecretRef, SecretScope, SecretStore};
use warren_types::ReceiptVerification;
use warren_types::{ApiError, ErrorCode, SecretBackendKind};

pub(crate) fn secret_error(e: SecretError) -> ApiError {
    ApiError::from(e)
}

/// One stored secret's name (values are never returned).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SecretEntry {
    /// Full reference: `NAME` or `agent:<alias>/NAME`.
    pub reference: String,
    /// The agent namespace, if any.
    pub agent: Option<String>,
    /// The name inside the namespace.
    pub name: String,
    /// Where it is kept: the desktop keyring (Secret Service) or the encrypted file.
    pub store: SecretBackendKind,
}

/// The backend user secrets are kept in.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SecretBackend {
    /// The keyring or the encrypted file.
    pub backend: SecretBackendKind,
    /// Where exactly, and why the keyring is not used when it is not.
    pub description: String,
}

impl Warren {
    /// The store API keys and other user secrets go to: the desktop keyring when one answers
    /// on the session bus, else the encrypted file (`WARREN_SECRET_BACKEND` overrides).
    pub(crate) fn secret_store(&self) -> Result<UserSecrets, ApiError> {
        open_user_secrets(self.layout(), &self.env.vars).map_err(secret_error)
    }

    /// Where user secrets are kept, for `warren doctor` and the Settings screen.
    pub fn secret_backend(&self) -> Result<SecretBackend, ApiError> {
        let s = self.secret_store()?;
        Ok(SecretBackend {
            backend: s.backend(),
            description: s.describe(),
        })
    }

    fn secret_ref(&self, name: &str, agent: Option<&str>) -> Result<SecretRef, ApiError> {
        match agent {
            Some(a) => {
                self.require_agent(a)?;
                SecretRef::agent(a, name)
            }
            None => SecretRef::parse(name),
        }
        .map_err(secret_error)
        .and_then(|r| {
            if r.is_reserved() {
                Err(ApiError::new(
                    ErrorCode::InvalidArgument,
                    format!("secret name `{r}` is reserved for Warren's own state (names starting with `warren.`)"),
                ))
            } else {
                Ok(r)
            }
        })
    }

    /// Stores a secret (install-wide, or in an agent's namespace).
    pub fn set_secret(
        &self,
        name: &str,
        agent: Option<&str>,
        value: &str,
    ) -> Result<SecretEntry, ApiError> {
        if value.is_empty() {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "the secret value is empty",
            ));
        }
        let r = self.secret_ref(name, agent)?;
        // `agent:<alias>/NAME` names an agent as much as `--agent` does: a secret stored for an
        // agent that does not exist would be handed to a later agent of that alias.
        if let (None, SecretScope::Agent(a)) = (agent, &r.scope) {
            self.require_agent(a)?;
        }
        let store = self.secret_store()?;
        store.set(&r, value).map_err(secret_error)?;
        Ok(entry(&r, store.backend()))
    }

    /// `alias` is an agent of the config, or a not-found error naming it.
    fn require_agent(&self, alias: &str) -> Result<(), ApiError> {
        let config = self.load()?.config;
        if config.agents.contains_key(alias) {
            Ok(())
        } else {
            Err(crate::errors::unknown_agent(&config, alias))
        }
    }

    /// Every secret name.
    pub fn list_secrets(&self) -> Result<Vec<SecretEntry>, ApiError> {
        Ok(self
            .secret_store()?
            .list_located()
            .map_err(secret_error)?
            .iter()
            .map(|(r, store)| entry(r, *store))
            .collect())
    }

    /// Removes a secret; `not_found` when it was not set.
    pub fn remove_secret(&self, name: &str, agent: Option<&str>) -> Result<SecretEntry, ApiError> {
        let r = self.secret_ref(name, agent)?;
        let store = self.secret_store()?;
        if store.remove(&r).map_err(secret_error)? {
            Ok(entry(&r, store.backend()))
        } else {
            Err(ApiError::new(
                ErrorCode::NotFound,
                format!("secret `{r}` is not set"),
            ))
        }
    }

    /// Verifies an agent's receipt chain.
    pub async fn verify_receipts(&self, agent: &str) -> Result<ReceiptVerification, ApiError> {
        let pool = open_sessions_db(&self.layout().sessions_db())
            .await
            .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
        let log = ReceiptLog::new(pool, &FileSecretStore::for_install(self.layout()))
            .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?
            .with_anchor(warren_state::receipts::anchor_path(self.layout()));
        log.verify(agent)
            .await
            .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))
    }
}

fn entry(r: &SecretRef, store: SecretBackendKind) -> SecretEntry {
    SecretEntry {
        reference: r.to_string(),
        agent: match &r.scope {
            warren_state::secrets::SecretScope::Agent(a) => Some(a.clone()),
            warren_state::secrets::SecretScope::Install => None,
        },
        name: r.name.clone(),
        store,
    }
}
