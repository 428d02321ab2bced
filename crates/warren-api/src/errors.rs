//! Mapping of library errors to [`ApiError`] codes.

use warren_config::{ConfigError, DocumentError};
use warren_types::{ApiError, ErrorCode};

/// Converts a config-layer error into an API error, keeping every validation issue as a detail.
pub fn config_error(e: ConfigError) -> ApiError {
    match &e {
        ConfigError::NotFound { .. } => ApiError::new(ErrorCode::NotFound, e.to_string()),
        ConfigError::Io { .. } => ApiError::new(ErrorCode::Io, e.to_string()),
        ConfigError::Invalid { path, errors } => ApiError::new(
            ErrorCode::InvalidConfig,
            format!(
                "{} has {} error{}",
                path.display(),
                errors.issues.len(),
                if errors.issues.len() == 1 { "" } else { "s" }
            ),
        )
        .with_details(errors.issues.iter().map(|i| i.to_string()).collect()),
        ConfigError::Edit(d) => document_error(d.clone()),
    }
}

/// Converts a refused edit into an API error.
pub(crate) fn document_error(e: DocumentError) -> ApiError {
    let code = match &e {
        DocumentError::AlreadyExists { .. } => ErrorCode::AlreadyExists,
        DocumentError::NotFound { .. } => ErrorCode::NotFound,
        DocumentError::InvalidAlias { .. } => ErrorCode::InvalidArgument,
        DocumentError::LifecycleOnly { .. } => ErrorCode::InvalidArgument,
        DocumentError::Syntax(_) | DocumentError::NotATable { .. } => ErrorCode::InvalidConfig,
    };
    ApiError::new(code, e.to_string())
}

/// Converts a host error into an API error.
pub(crate) fn host_error(e: warren_runtime::host::HostError) -> ApiError {
    use warren_runtime::host::HostError as H;
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
