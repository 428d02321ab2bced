//! The one error type of the memory layer. Every variant carries the evidence a person needs:
//! the backend, where it lives (path or redacted URL), the alias, the field.

use std::path::PathBuf;
use warren_types::ErrorCode;

/// Errors of the memory layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MemoryError {
    /// The store cannot be opened or reached (corrupted file, server down, bad credentials).
    #[error("{backend} memory store at {location} is unavailable: {reason}")]
    Unavailable {
        /// Backend name (`sqlite`, `postgres`, ...).
        backend: &'static str,
        /// File path or redacted URL.
        location: String,
        /// What went wrong.
        reason: String,
    },
    /// An operation on an open store failed.
    #[error("{backend} memory store at {location}: {operation} failed: {reason}")]
    Backend {
        /// Backend name.
        backend: &'static str,
        /// File path or redacted URL.
        location: String,
        /// The operation that failed (`store`, `recall`, ...).
        operation: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The alias is not an agent of the config.
    #[error("agent `{alias}` is not defined in the config")]
    UnknownAgent {
        /// The alias asked for.
        alias: String,
    },
    /// `read_memory_from` names an agent on another backend.
    #[error("agents.{alias}.workspace.read_memory_from: `{peer}` uses the {peer_backend} backend but `{alias}` uses {backend}: cross-backend cross-agent memory is not supported")]
    CrossBackend {
        /// The reading agent.
        alias: String,
        /// Its backend.
        backend: &'static str,
        /// The granted agent.
        peer: String,
        /// The granted agent's backend.
        peer_backend: &'static str,
    },
    /// A category-scoped grant where either side uses Markdown.
    #[error("agents.{alias}.workspace.read_memory_from: category-scoped grant on `{peer}` is not supported with the markdown backend (only whole-agent grants)")]
    MarkdownCategoryGrant {
        /// The reading agent.
        alias: String,
        /// The granted agent.
        peer: String,
    },
    /// Bad input from the caller.
    #[error("invalid memory {field}: {reason}")]
    InvalidInput {
        /// The offending field (`key`, `category`, `limit`, ...).
        field: &'static str,
        /// Why it is invalid.
        reason: String,
    },
    /// The backend's config section is incomplete or malformed.
    #[error("memory.{backend}: {reason}")]
    Config {
        /// Backend name.
        backend: &'static str,
        /// What is missing or wrong.
        reason: String,
    },
    /// An alias already owns memory under another UUID (rename target or restore).
    #[error("{backend} memory store at {location}: alias `{alias}` is already taken")]
    AliasTaken {
        /// Backend name.
        backend: &'static str,
        /// File path or redacted URL.
        location: String,
        /// The alias.
        alias: String,
    },
    /// A Markdown memory file could not be read or written.
    #[error("markdown memory file {path}: {reason}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
}

impl From<MemoryError> for warren_types::ApiError {
    /// The error's [`MemoryError::code`] and its message.
    fn from(e: MemoryError) -> Self {
        warren_types::ApiError::new(e.code(), e.to_string())
    }
}

impl MemoryError {
    /// The stable API error code for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            MemoryError::Unavailable { .. } | MemoryError::Backend { .. } => ErrorCode::Storage,
            MemoryError::UnknownAgent { .. } => ErrorCode::NotFound,
            MemoryError::CrossBackend { .. }
            | MemoryError::MarkdownCategoryGrant { .. }
            | MemoryError::Config { .. } => ErrorCode::InvalidConfig,
            MemoryError::InvalidInput { .. } => ErrorCode::InvalidArgument,
            MemoryError::AliasTaken { .. } => ErrorCode::AlreadyExists,
            MemoryError::File { .. } => ErrorCode::Io,
        }
    }

    /// True when the store itself cannot be used (the agent runs with memory unavailable).
    pub fn is_unavailable(&self) -> bool {
        matches!(self, MemoryError::Unavailable { .. })
    }
}

/// Registers the password of a connection URL as a secret of the process
/// ([`warren_types::redact`]), so that no error text, event or log line carries it.
pub fn register_url_password(url: &str) {
    let Some((_, rest)) = url.split_once("://") else {
        return;
    };
    let authority = rest.split('/').next().unwrap_or("");
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        if let Some((_, password)) = userinfo.split_once(':') {
            warren_types::redact::register(password);
            // The URL holds it percent-encoded; the decoded form is what a server may echo.
            warren_types::redact::register(&percent_decode(password));
        }
    }
}

fn percent_decode(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Hides the password of a connection URL so it can appear in error messages and logs.
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => {
            let user = userinfo.split(':').next().unwrap_or("");
            if userinfo.contains(':') {
                format!("{scheme}://{user}:***@{host}{tail}")
            } else {
                format!("{scheme}://{user}@{host}{tail}")
            }
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords_only() {
        assert_eq!(
            redact_url("postgres://u:secret@h:5432/db"),
            "postgres://u:***@h:5432/db"
        );
        assert_eq!(redact_url("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(redact_url("http://h:6334"), "http://h:6334");
        assert_eq!(redact_url("not a url"), "not a url");
    }
}
