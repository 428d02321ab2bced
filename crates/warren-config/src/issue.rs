//! One validation problem, located by dotted path (and line/column when known).

use std::fmt;

/// A single problem found in a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    /// Dotted path to the offending key, for example `agents.bob.workspace.access.alice`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// 1-based line in the file, when known.
    pub line: Option<usize>,
    /// 1-based column in the file, when known.
    pub column: Option<usize>,
}

impl Issue {
    /// An issue at a dotted path.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Issue {
            path: path.into(),
            message: message.into(),
            line: None,
            column: None,
        }
    }
}

impl fmt::Display for Issue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "<root>"
        } else {
            &self.path
        };
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{path} (line {l}, column {c}): {}", self.message),
            (Some(l), None) => write!(f, "{path} (line {l}): {}", self.message),
            _ => write!(f, "{path}: {}", self.message),
        }
    }
}

/// Every problem found in one config text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ConfigErrors {
    /// The problems, in file order where known.
    pub issues: Vec<Issue>,
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.issues.len();
        write!(f, "{n} error{} in config", if n == 1 { "" } else { "s" })?;
        for i in &self.issues {
            write!(f, "\n  {i}")?;
        }
        Ok(())
    }
}

/// Joins a dotted path, quoting segments that are not bare TOML keys.
pub(crate) fn join(base: &str, key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let seg = if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    };
    if base.is_empty() {
        seg
    } else {
        format!("{base}.{seg}")
    }
}
