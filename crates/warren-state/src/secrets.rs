//! The secret store (rules §10): API keys and the receipt key, never in `config.toml`. This is the
//! encrypted-file backend: `<install>/data/secrets.enc` (XChaCha20-Poly1305) under a random key in
//! `<install>/data/secrets.key`, readable only by the user. Names are install-wide (`NAME`) or
//! namespaced per agent (`agent:<alias>/NAME`).

use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use warren_config::{write_atomic, InstallLayout};
use warren_types::validate_alias;

const MAGIC: &[u8] = b"WSEC1";

/// Why a secret operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// The reference is malformed.
    #[error("invalid secret name `{name}`: {reason}")]
    InvalidName {
        /// The name as given.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A file could not be read or written.
    #[error("secret store {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The key file is readable by others; the store refuses to use it.
    #[error("secret key file {path} has mode {mode:o}; it must be readable only by its owner (chmod 600)")]
    InsecureKey {
        /// The key file.
        path: PathBuf,
        /// Its mode.
        mode: u32,
    },
    /// The keyring backend failed or is not usable.
    #[error("{0}")]
    Backend(String),
    /// The encrypted file does not decrypt with the key (tampered, or the key changed).
    #[error("secret store {path} cannot be decrypted (corrupted, or its key file was replaced)")]
    Corrupt {
        /// The data file.
        path: PathBuf,
    },
}

/// Where a secret lives: install-wide or in one agent's namespace.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SecretScope {
    /// Shared by the install.
    Install,
    /// Only for this agent.
    Agent(String),
}

/// A parsed secret reference: `NAME` or `agent:<alias>/NAME`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SecretRef {
    /// Namespace.
    pub scope: SecretScope,
    /// Name inside the namespace.
    pub name: String,
}

impl SecretRef {
    /// An install-wide secret.
    pub fn install(name: &str) -> Result<Self, SecretError> {
        check_name(name)?;
        Ok(SecretRef {
            scope: SecretScope::Install,
            name: name.to_string(),
        })
    }

    /// An agent-scoped secret.
    pub fn agent(alias: &str, name: &str) -> Result<Self, SecretError> {
        validate_alias(alias).map_err(|e| SecretError::InvalidName {
            name: format!("agent:{alias}/{name}"),
            reason: e.to_string(),
        })?;
        check_name(name)?;
        Ok(SecretRef {
            scope: SecretScope::Agent(alias.to_string()),
            name: name.to_string(),
        })
    }

    /// Whether the name is reserved for install state (`warren.*`, such as the receipt key):
    /// hidden from `warren secrets list` and refused by `set` and `rm`.
    pub fn is_reserved(&self) -> bool {
        self.scope == SecretScope::Install && self.name.starts_with("warren.")
    }

    /// Parses `NAME` or `agent:<alias>/NAME`.
    pub fn parse(s: &str) -> Result<Self, SecretError> {
        match s.strip_prefix("agent:") {
            Some(rest) => {
                let (alias, name) =
                    rest.split_once('/')
                        .ok_or_else(|| SecretError::InvalidName {
                            name: s.to_string(),
                            reason: "expected agent:<alias>/NAME".into(),
                        })?;
                Self::agent(alias, name)
            }
            None => Self::install(s),
        }
    }
}

impl SecretRef {
    /// Whether a turn of `alias` may use this secret: its own (`agent:<alias>/NAME`) or an
    /// install-wide one, never another agent's nor a reserved install-state name.
    pub fn usable_by(&self, alias: &str) -> bool {
        match &self.scope {
            SecretScope::Install => !self.is_reserved(),
            SecretScope::Agent(owner) => owner == alias,
        }
    }
}

/// Checks that every secret on a provider route may be used by `alias` (rules §10); the error
/// names the first reference that may not.
pub fn ensure_route_secrets<'a>(
    alias: &str,
    references: impl IntoIterator<Item = &'a str>,
) -> Result<(), SecretError> {
    for reference in references {
        let usable = SecretRef::parse(reference).is_ok_and(|r| r.usable_by(alias));
        if !usable {
            return Err(SecretError::InvalidName {
                name: reference.to_string(),
                reason: format!(
                    "agent `{alias}` may use only its own secrets (agent:{alias}/NAME) and install-wide ones"
                ),
            });
        }
    }
    Ok(())
}

impl fmt::Display for SecretRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.scope {
            SecretScope::Install => write!(f, "{}", self.name),
            SecretScope::Agent(a) => write!(f, "agent:{a}/{}", self.name),
        }
    }
}

fn check_name(name: &str) -> Result<(), SecretError> {
    let bad = |reason: &str| {
        Err(SecretError::InvalidName {
            name: name.to_string(),
            reason: reason.to_string(),
        })
    };
    if name.is_empty() || name.len() > 128 {
        return bad("must be 1 to 128 characters");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return bad("only ASCII letters, digits, `_`, `-` and `.` are allowed");
    }
    Ok(())
}

/// A store of named secrets.
pub trait SecretStore: Send + Sync {
    /// The value of a secret, if set.
    fn get(&self, r: &SecretRef) -> Result<Option<String>, SecretError>;
    /// Sets (or replaces) a secret.
    fn set(&self, r: &SecretRef, value: &str) -> Result<(), SecretError>;
    /// Removes a secret; false when it was not set.
    fn remove(&self, r: &SecretRef) -> Result<bool, SecretError>;
    /// Every secret name (never the values).
    fn list(&self) -> Result<Vec<SecretRef>, SecretError>;
    /// A short description of the backend, for `warren doctor`.
    fn describe(&self) -> String;
    /// The value of a secret, set first to `make()` when it is not set. A store that can do
    /// both under one lock does (so two first uses at once agree on one value); this default
    /// reads, then sets.
    fn get_or_set(
        &self,
        r: &SecretRef,
        make: &dyn Fn() -> Result<String, SecretError>,
    ) -> Result<String, SecretError> {
        if let Some(v) = self.get(r)? {
            return Ok(v);
        }
        let v = make()?;
        self.set(r, &v)?;
        Ok(v)
    }
}

/// The encrypted-file backend.
pub struct FileSecretStore {
    key_path: PathBuf,
    data_path: PathBuf,
    lock: Mutex<()>,
}

impl FileSecretStore {
    /// The store of an install (`<install>/data/secrets.{key,enc}`).
    pub fn for_install(layout: &InstallLayout) -> Self {
        FileSecretStore {
            key_path: layout.data_dir().join("secrets.key"),
            data_path: layout.data_dir().join("secrets.enc"),
            lock: Mutex::new(()),
        }
    }

    /// The encrypted file (`<install>/data/secrets.enc`).
    pub fn data_path(&self) -> &Path {
        &self.data_path
    }

    /// Holds the store for a read-modify-write of the file (or the key's creation): this
    /// value's own lock, and an exclusive lock on `secrets.lock` beside the file, which every
    /// other store of the install takes too, in this process (the runtime's receipt key, the
    /// API's user secrets) or another (the CLI beside the window). Without it, two writers
    /// each read the old map and the later write drops the other's secret.
    fn write_guard(&self) -> Result<(std::sync::MutexGuard<'_, ()>, fs::File), SecretError> {
        let g = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let path = self.data_path.with_file_name("secrets.lock");
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(Self::io(dir))?;
        }
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(Self::io(&path))?;
        file.lock().map_err(Self::io(&path))?;
        Ok((g, file))
    }

    fn io(path: &Path) -> impl FnOnce(io::Error) -> SecretError + '_ {
        move |source| SecretError::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// Reads the key, creating it (mode 0600) on first use when `create` is true.
    fn key(&self, create: bool) -> Result<Option<[u8; 32]>, SecretError> {
        match fs::read(&self.key_path) {
            Ok(bytes) => {
                let mode = fs::metadata(&self.key_path)
                    .map_err(Self::io(&self.key_path))?
                    .permissions()
                    .mode()
                    & 0o777;
                if mode & 0o077 != 0 {
                    return Err(SecretError::InsecureKey {
                        path: self.key_path.clone(),
                        mode,
                    });
                }
                let key: [u8; 32] = bytes.try_into().map_err(|_| SecretError::Corrupt {
                    path: self.key_path.clone(),
                })?;
                Ok(Some(key))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound && create => {
                let mut key = [0u8; 32];
                getrandom::fill(&mut key).map_err(|e| SecretError::Io {
                    path: self.key_path.clone(),
                    source: io::Error::other(e.to_string()),
                })?;
                if let Some(dir) = self.key_path.parent() {
                    fs::create_dir_all(dir).map_err(Self::io(dir))?;
                }
                let mut f = OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o600)
                    .open(&self.key_path)
                    .map_err(Self::io(&self.key_path))?;
                f.write_all(&key)
                    .and_then(|()| f.sync_all())
                    .map_err(Self::io(&self.key_path))?;
                Ok(Some(key))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Self::io(&self.key_path)(e)),
        }
    }

    fn read_map(&self, key: &[u8; 32]) -> Result<BTreeMap<String, String>, SecretError> {
        let bytes = match fs::read(&self.data_path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(Self::io(&self.data_path)(e)),
        };
        let plain = self.open_with(key, &bytes)?;
        serde_json::from_slice(&plain).map_err(|_| SecretError::Corrupt {
            path: self.data_path.clone(),
        })
    }

    fn open_with(&self, key: &[u8; 32], bytes: &[u8]) -> Result<Vec<u8>, SecretError> {
        let corrupt = || SecretError::Corrupt {
            path: self.data_path.clone(),
        };
        let rest = bytes.strip_prefix(MAGIC).ok_or_else(corrupt)?;
        if rest.len() < 24 {
            return Err(corrupt());
        }
        let (nonce, ct) = rest.split_at(24);
        let cipher = XChaCha20Poly1305::new(key.into());
        cipher
            .decrypt(XNonce::from_slice(nonce), ct)
            .map_err(|_| corrupt())
    }

    fn seal_with(&self, key: &[u8; 32], plain: &[u8]) -> Result<Vec<u8>, SecretError> {
        let mut nonce = [0u8; 24];
        getrandom::fill(&mut nonce).map_err(|e| SecretError::Io {
            path: self.data_path.clone(),
            source: io::Error::other(e.to_string()),
        })?;
        let cipher = XChaCha20Poly1305::new(key.into());
        let ct = cipher
            .encrypt(XNonce::from_slice(&nonce), plain)
            .map_err(|_| SecretError::Corrupt {
                path: self.data_path.clone(),
            })?;
        let mut out = Vec::with_capacity(MAGIC.len() + 24 + ct.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ct);
        Ok(out)
    }

    /// Encrypts `plain` under this install's key (created on first use), for secrets that
    /// leave the store, such as a deleted agent's secrets in its archive.
    pub fn seal(&self, plain: &[u8]) -> Result<Vec<u8>, SecretError> {
        let _g = self.write_guard()?;
        let key = self.key(true)?.ok_or_else(|| SecretError::Corrupt {
            path: self.key_path.clone(),
        })?;
        self.seal_with(&key, plain)
    }

    /// Decrypts what [`FileSecretStore::seal`] produced with this install's key.
    pub fn unseal(&self, sealed: &[u8]) -> Result<Vec<u8>, SecretError> {
        let _g = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = self.key(false)?.ok_or_else(|| SecretError::Corrupt {
            path: self.key_path.clone(),
        })?;
        self.open_with(&key, sealed)
    }

    fn write_map(&self, key: &[u8; 32], map: &BTreeMap<String, String>) -> Result<(), SecretError> {
        let plain = serde_json::to_vec(map).map_err(|e| SecretError::Io {
            path: self.data_path.clone(),
            source: io::Error::other(e.to_string()),
        })?;
        let out = self.seal_with(key, &plain)?;
        write_atomic(&self.data_path, &out).map_err(Self::io(&self.data_path))
    }
}

fn map_key(r: &SecretRef) -> String {
    r.to_string()
}

impl SecretStore for FileSecretStore {
    fn get(&self, r: &SecretRef) -> Result<Option<String>, SecretError> {
        let _g = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(key) = self.key(false)? else {
            return Ok(None);
        };
        Ok(self.read_map(&key)?.get(&map_key(r)).cloned())
    }

    fn set(&self, r: &SecretRef, value: &str) -> Result<(), SecretError> {
        let _g = self.write_guard()?;
        let key = self.key(true)?.ok_or_else(|| SecretError::Corrupt {
            path: self.key_path.clone(),
        })?;
        let mut map = self.read_map(&key)?;
        map.insert(map_key(r), value.to_string());
        self.write_map(&key, &map)
    }

    fn remove(&self, r: &SecretRef) -> Result<bool, SecretError> {
        // Nothing to remove from a store never written (and no lock file made for it).
        if !self.key_path.exists() {
            return Ok(false);
        }
        let _g = self.write_guard()?;
        let Some(key) = self.key(false)? else {
            return Ok(false);
        };
        let mut map = self.read_map(&key)?;
        let existed = map.remove(&map_key(r)).is_some();
        if existed {
            self.write_map(&key, &map)?;
        }
        Ok(existed)
    }

    fn list(&self) -> Result<Vec<SecretRef>, SecretError> {
        let _g = self
            .lock
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(key) = self.key(false)? else {
            return Ok(Vec::new());
        };
        let mut refs = self
            .read_map(&key)?
            .keys()
            .map(|k| SecretRef::parse(k))
            .collect::<Result<Vec<_>, _>>()?;
        refs.sort();
        Ok(refs)
    }

    fn describe(&self) -> String {
        format!("encrypted file {}", self.data_path.display())
    }

    fn get_or_set(
        &self,
        r: &SecretRef,
        make: &dyn Fn() -> Result<String, SecretError>,
    ) -> Result<String, SecretError> {
        let _g = self.write_guard()?;
        let key = self.key(true)?.ok_or_else(|| SecretError::Corrupt {
            path: self.key_path.clone(),
        })?;
        let mut map = self.read_map(&key)?;
        if let Some(v) = map.get(&map_key(r)) {
            return Ok(v.clone());
        }
        let v = make()?;
        map.insert(map_key(r), v.clone());
        self.write_map(&key, &map)?;
        Ok(v)
    }
}

impl From<SecretError> for warren_types::ApiError {
    fn from(e: SecretError) -> Self {
        use warren_types::ErrorCode;
        let code = match &e {
            SecretError::InvalidName { .. } => ErrorCode::InvalidArgument,
            SecretError::Io { .. } => ErrorCode::Io,
            SecretError::InsecureKey { .. }
            | SecretError::Corrupt { .. }
            | SecretError::Backend(_) => ErrorCode::Storage,
        };
        warren_types::ApiError::new(code, e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert_eq!(
            SecretRef::parse("OPENAI_API_KEY").unwrap().scope,
            SecretScope::Install
        );
        let r = SecretRef::parse("agent:bob/KEY").unwrap();
        assert_eq!(r.scope, SecretScope::Agent("bob".into()));
        assert_eq!(r.to_string(), "agent:bob/KEY");
        for bad in [
            "",
            "a b",
            "agent:Bob/KEY",
            "agent:bob",
            "x/y",
            &"k".repeat(129),
        ] {
            assert!(SecretRef::parse(bad).is_err(), "{bad:?}");
        }
    }
}
