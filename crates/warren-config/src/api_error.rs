//! The API error (`warren_types::ApiError`) a config error or a refused edit becomes: the code
//! the front-ends show and test for, every validation issue kept as a detail.

use crate::{ConfigError, DocumentError};
use warren_types::{ApiError, ErrorCode};

impl From<ConfigError> for ApiError {
    /// Keeps every validation issue as a detail.
    fn from(e: ConfigError) -> Self {
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
            .with_details(
                errors
                    .issues
                    .iter()
                    .map(std::string::ToString::to_string)
                    .collect(),
            ),
            ConfigError::Edit(d) => ApiError::from(d.clone()),
        }
    }
}

impl From<DocumentError> for ApiError {
    fn from(e: DocumentError) -> Self {
        let code = match &e {
            DocumentError::AlreadyExists { .. } => ErrorCode::AlreadyExists,
            DocumentError::NotFound { .. } => ErrorCode::NotFound,
            DocumentError::InvalidAlias { .. } => ErrorCode::InvalidArgument,
            DocumentError::LifecycleOnly { .. } => ErrorCode::InvalidArgument,
            DocumentError::Syntax(_) | DocumentError::NotATable { .. } => ErrorCode::InvalidConfig,
        };
        ApiError::new(code, e.to_string())
    }
}
