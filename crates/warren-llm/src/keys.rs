//! API keys come from an injected resolver, so the library never reads the environment itself
//! and the secret store can plug in without touching the clients.

use std::collections::HashMap;

/// Where a provider entry says its key lives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeySource {
    /// `api_key_env = "NAME"`: an environment variable.
    Env(String),
    /// `secret = "NAME"` or `"agent:<alias>/NAME"`: a secret store reference.
    Secret(String),
}

impl std::fmt::Display for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeySource::Env(n) => write!(f, "environment variable {n}"),
            KeySource::Secret(n) => write!(f, "secret {n}"),
        }
    }
}

/// Turns a key source into the key. `None` means "not available"; the client then reports
/// `no_api_key` naming the entry and the source.
pub trait KeyResolver: Send + Sync {
    /// The key for `source`, if there is one.
    fn resolve(&self, source: &KeySource) -> Option<String>;
}

impl<F> KeyResolver for F
where
    F: Fn(&KeySource) -> Option<String> + Send + Sync,
{
    fn resolve(&self, source: &KeySource) -> Option<String> {
        self(source)
    }
}

/// Resolves nothing: for entries without keys (local servers) and for tests.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoKeys;

impl KeyResolver for NoKeys {
    fn resolve(&self, _source: &KeySource) -> Option<String> {
        None
    }
}

/// A fixed table of keys, by environment variable name or secret reference.
#[derive(Debug, Clone, Default)]
pub struct StaticKeys {
    keys: HashMap<KeySource, String>,
}

impl StaticKeys {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the value of environment variable `name`.
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.keys
            .insert(KeySource::Env(name.to_string()), value.to_string());
        self
    }

    /// Adds the value of secret `reference`.
    pub fn secret(mut self, reference: &str, value: &str) -> Self {
        self.keys
            .insert(KeySource::Secret(reference.to_string()), value.to_string());
        self
    }
}

impl KeyResolver for StaticKeys {
    fn resolve(&self, source: &KeySource) -> Option<String> {
        self.keys.get(source).cloned()
    }
}

/// Reads `api_key_env` variables from the process environment; secrets resolve to nothing.
/// Meant for front-ends (CLI, desktop) to inject at the top; libraries never use it implicitly.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnvKeys;

impl KeyResolver for ProcessEnvKeys {
    fn resolve(&self, source: &KeySource) -> Option<String> {
        match source {
            KeySource::Env(name) => std::env::var(name).ok(),
            KeySource::Secret(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolvers() {
        let env = KeySource::Env("OPENAI_API_KEY".into());
        let secret = KeySource::Secret("agent:bob/OPENAI_API_KEY".into());
        let table = StaticKeys::new()
            .env("OPENAI_API_KEY", "e")
            .secret("agent:bob/OPENAI_API_KEY", "s");
        assert_eq!(table.resolve(&env).as_deref(), Some("e"));
        assert_eq!(table.resolve(&secret).as_deref(), Some("s"));
        assert_eq!(table.resolve(&KeySource::Env("OTHER".into())), None);
        assert_eq!(NoKeys.resolve(&env), None);
        // the process environment is read, never written
        assert!(ProcessEnvKeys
            .resolve(&KeySource::Env("PATH".into()))
            .is_some());
        assert_eq!(ProcessEnvKeys.resolve(&secret), None);
        let closure = |s: &KeySource| matches!(s, KeySource::Secret(_)).then(|| "c".to_string());
        assert_eq!(closure.resolve(&secret).as_deref(), Some("c"));
        assert_eq!(
            secret.to_string(),
            "secret agent:bob/OPENAI_API_KEY",
            "sources name themselves in errors"
        );
    }
}
