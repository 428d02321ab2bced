//! `warren secrets set | list | rm` and the receipt chain check.

use crate::Warren;
use serde::Serialize;
use warren_runtime::db::open_sessions_db;
use warren_runtime::receipts::{ReceiptLog, Verification};
use warren_runtime::secrets::{FileSecretStore, SecretError, SecretRef, SecretStore};
use warren_types::{ApiError, ErrorCode};

fn secret_error(e: SecretError) -> ApiError {
    let code = match &e {
        SecretError::InvalidName { .. } => ErrorCode::InvalidArgument,
        SecretError::Io { .. } => ErrorCode::Io,
        SecretError::InsecureKey { .. } | SecretError::Corrupt { .. } => ErrorCode::Storage,
    };
    ApiError::new(code, e.to_string())
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
}

impl Warren {
    /// The install's secret store.
    pub fn secret_store(&self) -> FileSecretStore {
        FileSecretStore::for_install(self.layout())
    }

    fn secret_ref(&self, name: &str, agent: Option<&str>) -> Result<SecretRef, ApiError> {
        match agent {
            Some(a) => {
                let cfg = self.load()?.config;
                if !cfg.agents.contains_key(a) {
                    return Err(ApiError::new(
                        ErrorCode::NotFound,
                        format!("agent `{a}` does not exist"),
                    ));
                }
                SecretRef::agent(a, name)
            }
            None => SecretRef::parse(name),
        }
        .map_err(secret_error)
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
        self.secret_store().set(&r, value).map_err(secret_error)?;
        Ok(entry(&r))
    }

    /// Every secret name.
    pub fn list_secrets(&self) -> Result<Vec<SecretEntry>, ApiError> {
        Ok(self
            .secret_store()
            .list()
            .map_err(secret_error)?
            .iter()
            .map(entry)
            .collect())
    }

    /// Removes a secret; `not_found` when it was not set.
    pub fn remove_secret(&self, name: &str, agent: Option<&str>) -> Result<SecretEntry, ApiError> {
        let r = self.secret_ref(name, agent)?;
        if self.secret_store().remove(&r).map_err(secret_error)? {
            Ok(entry(&r))
        } else {
            Err(ApiError::new(
                ErrorCode::NotFound,
                format!("secret `{r}` is not set"),
            ))
        }
    }

    /// Verifies an agent's receipt chain.
    pub async fn verify_receipts(&self, agent: &str) -> Result<Verification, ApiError> {
        let pool = open_sessions_db(&self.layout().sessions_db())
            .await
            .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
        let log = ReceiptLog::new(pool, &self.secret_store())
            .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))?;
        log.verify(agent)
            .await
            .map_err(|e| ApiError::new(ErrorCode::Storage, e.to_string()))
    }
}

fn entry(r: &SecretRef) -> SecretEntry {
    SecretEntry {
        reference: r.to_string(),
        agent: match &r.scope {
            warren_runtime::secrets::SecretScope::Agent(a) => Some(a.clone()),
            warren_runtime::secrets::SecretScope::Install => None,
        },
        name: r.name.clone(),
    }
}
