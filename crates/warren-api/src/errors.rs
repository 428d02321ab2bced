//! Mapping of library errors to [`ApiError`] codes.

use warren_config::{ConfigError, DocumentError};
use warren_types::{ApiError, ErrorCode};

/// Converts a config-layer error into an API error, keeping every validation issue as a detail
/// (the mapping is warren-config's `From<ConfigError> for ApiError`).
pub fn config_error(e: ConfigError) -> ApiError {
    ApiError::from(e)
}

/// Converts a refused edit into an API error.
pub(crate) fn document_error(e: DocumentError) -> ApiError {
    ApiError::from(e)
}

/// Converts a host error into an API error.
pub(crate) fn host_error(e: warren_runtime::error::HostError) -> ApiError {
    use warren_runtime::error::HostError as H;
    match e {
        H::Config(c) => config_error(c),
        H::UnknownAgent(_) | H::UnknownSession(_) => {
            ApiError::new(ErrorCode::NotFound, e.to_string())
        }
        H::Disabled(_) | H::NoProvider(_) => {
            ApiError::new(ErrorCode::InvalidArgument, e.to_string())
        }
        H::Policy { .. } => ApiError::new(ErrorCode::Denied, e.to_string()),
        H::Provider(_) => ApiError::new(ErrorCode::InvalidConfig, e.to_string()),
        H::Lock(_) => ApiError::new(ErrorCode::Io, e.to_string()),
        H::Paused(_) => ApiError::new(ErrorCode::AgentPaused, e.to_string()),
        H::LifecyclePending(_) => ApiError::new(ErrorCode::LifecyclePending, e.to_string()),
        H::PauseState(_) => ApiError::new(ErrorCode::Storage, e.to_string()),
        H::Db(_) | H::Receipts(_) | H::Secrets(_) => {
            ApiError::new(ErrorCode::Storage, e.to_string())
        }
    }
}

/// The `not_found` answer for an agent `config` does not have, with a "did you mean" when it
/// has one of a close name (`asistant` → `assistant`).
pub(crate) fn unknown_agent(config: &warren_types::Config, alias: &str) -> ApiError {
    ApiError::new(ErrorCode::NotFound, unknown_agent_message(config, alias))
}

/// The words of [`unknown_agent`], for a finding beside a form's field.
pub(crate) fn unknown_agent_message(config: &warren_types::Config, alias: &str) -> String {
    format!(
        "agent `{alias}` does not exist{}",
        warren_types::did_you_mean_hint(alias, config.agents.keys())
    )
}

impl crate::Warren {
    /// `e` with a "did you mean" added when it is a `not_found` for `alias`, the install has
    /// no agent of that name and has one of a close name (`asistant` → `assistant`).
    pub(crate) fn hint_unknown_agent(&self, e: ApiError, alias: &str) -> ApiError {
        if e.code != ErrorCode::NotFound {
            return e;
        }
        let Ok(loaded) = self.load() else {
            return e;
        };
        if loaded.config.agents.contains_key(alias) {
            return e;
        }
        let hint = warren_types::did_you_mean_hint(alias, loaded.config.agents.keys());
        ApiError {
            message: format!("{}{hint}", e.message),
            ..e
        }
    }
}
