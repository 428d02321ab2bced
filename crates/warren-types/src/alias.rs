//! Agent alias rules (rules §"Words used"): lowercase ASCII letters, digits and single
//! underscores; 1–63 chars; starts and ends with a letter or digit; `default` is reserved.

use std::fmt;

/// Why an alias is not valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AliasError {
    /// The alias is empty.
    Empty,
    /// Longer than 63 characters.
    TooLong(usize),
    /// A character outside `[a-z0-9_]`.
    BadChar(char),
    /// Starts or ends with `_`.
    BadEdge,
    /// Contains `__`.
    DoubleUnderscore,
    /// `default` is reserved.
    Reserved,
}

impl fmt::Display for AliasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AliasError::Empty => write!(f, "alias is empty"),
            AliasError::TooLong(n) => write!(f, "alias is {n} characters long (at most 63)"),
            AliasError::BadChar(c) => write!(
                f,
                "alias contains {c:?}; only lowercase ASCII letters, digits and single underscores are allowed"
            ),
            AliasError::BadEdge => write!(f, "alias must start and end with a letter or digit"),
            AliasError::DoubleUnderscore => write!(f, "alias must not contain `__`"),
            AliasError::Reserved => write!(f, "alias `default` is reserved"),
        }
    }
}

impl std::error::Error for AliasError {}

/// Checks an agent alias against the alias rules.
pub fn validate_alias(alias: &str) -> Result<(), AliasError> {
    if alias.is_empty() {
        return Err(AliasError::Empty);
    }
    if let Some(c) = alias
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_'))
    {
        return Err(AliasError::BadChar(c));
    }
    if alias.len() > 63 {
        return Err(AliasError::TooLong(alias.len()));
    }
    if alias.starts_with('_') || alias.ends_with('_') {
        return Err(AliasError::BadEdge);
    }
    if alias.contains("__") {
        return Err(AliasError::DoubleUnderscore);
    }
    if alias == "default" {
        return Err(AliasError::Reserved);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alias_table() {
        let cases: &[(&str, Result<(), AliasError>)] = &[
            ("a", Ok(())),
            ("alice", Ok(())),
            ("a1_b2", Ok(())),
            ("9lives", Ok(())),
            (&"a".repeat(63), Ok(())),
            ("", Err(AliasError::Empty)),
            (&"a".repeat(64), Err(AliasError::TooLong(64))),
            ("Alice", Err(AliasError::BadChar('A'))),
            ("a-b", Err(AliasError::BadChar('-'))),
            ("a b", Err(AliasError::BadChar(' '))),
            ("é", Err(AliasError::BadChar('é'))),
            ("_a", Err(AliasError::BadEdge)),
            ("a_", Err(AliasError::BadEdge)),
            ("a__b", Err(AliasError::DoubleUnderscore)),
            ("default", Err(AliasError::Reserved)),
        ];
        for (alias, want) in cases {
            assert_eq!(&validate_alias(alias), want, "alias {alias:?}");
        }
    }
}
