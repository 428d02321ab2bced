//! The desktop keyring backend of the secret store (rules §10): items in the Secret Service's
//! default collection (GNOME Keyring, KWallet, KeePassXC ...), found by attributes that name the
//! install and the secret. Values travel over D-Bus encrypted (Diffie-Hellman session).
//!
//! [`open_user_secrets`] picks the backend: the keyring when a Secret Service answers on the
//! session bus, else the encrypted file. `WARREN_SECRET_BACKEND=keyring` refuses to fall back;
//! `WARREN_SECRET_BACKEND=file` never asks the keyring.

use crate::secrets::{FileSecretStore, SecretError, SecretRef, SecretStore};
use secret_service::blocking::SecretService;
use secret_service::EncryptionType;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;
use warren_config::InstallLayout;
use warren_types::SecretBackendKind;

/// The attribute every Warren item carries.
const APP_ATTR: &str = "application";
const APP_VALUE: &str = "warren";
/// The install the item belongs to (its root folder).
const INSTALL_ATTR: &str = "warren-install";
/// The secret reference (`NAME` or `agent:<alias>/NAME`).
const NAME_ATTR: &str = "warren-secret";
/// How long one D-Bus call may take before the keyring counts as unavailable.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Which backend the user asked for (`WARREN_SECRET_BACKEND`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// The keyring when reachable, else the encrypted file (the default).
    Auto,
    /// The keyring, or an error.
    Keyring,
    /// The encrypted file only.
    File,
}

impl BackendChoice {
    /// Reads `WARREN_SECRET_BACKEND` from an environment copy.
    pub fn from_vars(vars: &BTreeMap<String, String>) -> Result<Self, SecretError> {
        match vars.get("WARREN_SECRET_BACKEND").map(|s| s.trim()) {
            None | Some("") | Some("auto") => Ok(BackendChoice::Auto),
            Some("keyring") => Ok(BackendChoice::Keyring),
            Some("file") => Ok(BackendChoice::File),
            Some(other) => Err(SecretError::Backend(format!(
                "WARREN_SECRET_BACKEND is `{other}`; expected `auto`, `keyring` or `file`"
            ))),
        }
    }
}

/// The Secret Service items of one install.
pub struct KeyringStore {
    bus: Option<String>,
    install: String,
}

impl KeyringStore {
    /// Items of the install rooted at `install`, on the bus at `bus` (the session bus when
    /// `None`). Checks that a Secret Service answers and its default collection is usable.
    pub fn connect(bus: Option<String>, install: &std::path::Path) -> Result<Self, SecretError> {
        let store = KeyringStore {
            bus,
            install: install.to_string_lossy().into_owned(),
        };
        // Never prompts: a locked keyring counts as unavailable (the user unlocks it with the
        // desktop session; a prompt here would block a headless start forever).
        let locked = store.with_service(|ss| ss.get_default_collection()?.is_locked())?;
        if locked {
            return Err(SecretError::Backend(
                "desktop keyring: the default collection is locked".into(),
            ));
        }
        Ok(store)
    }

    fn attrs<'a>(&'a self, name: &'a str) -> HashMap<&'a str, &'a str> {
        HashMap::from([
            (APP_ATTR, APP_VALUE),
            (INSTALL_ATTR, self.install.as_str()),
            (NAME_ATTR, name),
        ])
    }

    /// Runs `f` against a fresh connection, on a thread of its own: the blocking D-Bus client
    /// drives its own runtime, which must not nest inside the caller's.
    fn with_service<T: Send>(
        &self,
        f: impl FnOnce(&SecretService<'_>) -> Result<T, secret_service::Error> + Send,
    ) -> Result<T, SecretError> {
        let bus = self.bus.clone();
        let run = move || -> Result<T, SecretError> {
            let builder = match &bus {
                Some(addr) => zbus::blocking::connection::Builder::address(addr.as_str())
                    .map_err(|e| keyring_error(&format!("bus address `{addr}`"), e))?,
                None => zbus::blocking::connection::Builder::session()
                    .map_err(|e| keyring_error("session bus", e))?,
            };
            let conn = builder
                .method_timeout(CALL_TIMEOUT)
                .build()
                .map_err(|e| keyring_error("connecting to the session bus", e))?;
            let ss = SecretService::connect_with_existing(EncryptionType::Dh, conn)
                .map_err(|e| keyring_error("opening a Secret Service session", e))?;
            f(&ss).map_err(|e| keyring_error("Secret Service", e))
        };
        std::thread::scope(|s| {
            s.spawn(run)
                .join()
                .unwrap_or_else(|_| Err(SecretError::Backend("keyring client panicked".into())))
        })
    }
}

fn keyring_error(what: &str, e: impl std::fmt::Display) -> SecretError {
    SecretError::Backend(format!("desktop keyring: {what}: {e}"))
}

impl SecretStore for KeyringStore {
    fn get(&self, r: &SecretRef) -> Result<Option<String>, SecretError> {
        let name = r.to_string();
        let bytes = self.with_service(|ss| {
            let found = ss.search_items(self.attrs(&name))?;
            match (found.unlocked.first(), found.locked.is_empty()) {
                (Some(item), _) => Ok(Some(item.get_secret()?)),
                (None, true) => Ok(None),
                (None, false) => Err(secret_service::Error::Locked),
            }
        })?;
        bytes
            .map(|b| {
                String::from_utf8(b)
                    .map_err(|_| SecretError::Backend(format!("keyring item `{r}` is not UTF-8")))
            })
            .transpose()
    }

    fn set(&self, r: &SecretRef, value: &str) -> Result<(), SecretError> {
        let name = r.to_string();
        let label = format!("Warren: {name} ({})", self.install);
        self.with_service(|ss| {
            let c = ss.get_default_collection()?;
            if c.is_locked()? {
                return Err(secret_service::Error::Locked);
            }
            c.create_item(
                &label,
                self.attrs(&name),
                value.as_bytes(),
                true,
                "text/plain",
            )?;
            Ok(())
        })
    }

    fn remove(&self, r: &SecretRef) -> Result<bool, SecretError> {
        let name = r.to_string();
        self.with_service(|ss| {
            let found = ss.search_items(self.attrs(&name))?;
            let mut removed = false;
            for item in found.unlocked.iter().chain(found.locked.iter()) {
                item.delete()?;
                removed = true;
            }
            Ok(removed)
        })
    }

    fn list(&self) -> Result<Vec<SecretRef>, SecretError> {
        let names = self.with_service(|ss| {
            let attrs =
                HashMap::from([(APP_ATTR, APP_VALUE), (INSTALL_ATTR, self.install.as_str())]);
            let found = ss.search_items(attrs)?;
            let mut names = Vec::new();
            for item in found.unlocked.iter().chain(found.locked.iter()) {
                if let Some(n) = item.get_attributes()?.get(NAME_ATTR) {
                    names.push(n.clone());
                }
            }
            Ok(names)
        })?;
        let mut refs = names
            .iter()
            .filter_map(|n| SecretRef::parse(n).ok())
            .collect::<Vec<_>>();
        refs.sort();
        refs.dedup();
        Ok(refs)
    }

    fn describe(&self) -> String {
        match &self.bus {
            Some(addr) => format!("desktop keyring (Secret Service on {addr})"),
            None => "desktop keyring (Secret Service)".to_string(),
        }
    }
}

/// The store user secrets (API keys) go to: the keyring when one is in use, with the encrypted
/// file read as well so that secrets stored before the keyring was available keep working.
pub struct UserSecrets {
    keyring: Option<KeyringStore>,
    file: FileSecretStore,
    /// Why the keyring is not used, when it is not.
    fallback_reason: Option<String>,
}

impl UserSecrets {
    /// The backend in use: the keyring or the file.
    pub fn backend(&self) -> SecretBackendKind {
        if self.keyring.is_some() {
            SecretBackendKind::Keyring
        } else {
            SecretBackendKind::File
        }
    }

    /// Why the keyring is not in use (when it is not).
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback_reason.as_deref()
    }

    /// Every secret name with the backend holding it (the keyring wins over the file).
    pub fn list_located(&self) -> Result<Vec<(SecretRef, SecretBackendKind)>, SecretError> {
        let mut all = BTreeMap::new();
        // `warren.*` names (the receipt key) are install state, not user secrets.
        for r in self.file.list()? {
            if !r.is_reserved() {
                all.insert(r, SecretBackendKind::File);
            }
        }
        if let Some(k) = &self.keyring {
            for r in k.list()? {
                all.insert(r, SecretBackendKind::Keyring);
            }
        }
        Ok(all.into_iter().collect())
    }
}

impl SecretStore for UserSecrets {
    fn get(&self, r: &SecretRef) -> Result<Option<String>, SecretError> {
        if let Some(k) = &self.keyring {
            if let Some(v) = k.get(r)? {
                return Ok(Some(v));
            }
        }
        self.file.get(r)
    }

    fn set(&self, r: &SecretRef, value: &str) -> Result<(), SecretError> {
        match &self.keyring {
            Some(k) => {
                k.set(r, value)?;
                // An older copy in the file would shadow nothing (the keyring is read first) but
                // would outlive `rm`; it goes now that the keyring holds the value. The value is
                // stored either way, so failing to remove that copy is only worth a warning.
                if let Err(e) = self.file.remove(r) {
                    tracing::warn!(
                        file = %self.file.data_path().display(),
                        secret = %r,
                        "{r} is stored in the keyring, but an older copy in {} could not be \
                         removed (the keyring value is the one used): {e}",
                        self.file.data_path().display()
                    );
                }
                Ok(())
            }
            None => self.file.set(r, value),
        }
    }

    fn remove(&self, r: &SecretRef) -> Result<bool, SecretError> {
        let in_keyring = match &self.keyring {
            Some(k) => k.remove(r)?,
            None => false,
        };
        let in_file = self.file.remove(r)?;
        Ok(in_keyring || in_file)
    }

    fn list(&self) -> Result<Vec<SecretRef>, SecretError> {
        Ok(self.list_located()?.into_iter().map(|(r, _)| r).collect())
    }

    fn describe(&self) -> String {
        match (&self.keyring, &self.fallback_reason) {
            (Some(k), _) => format!(
                "{} (older entries also read from the encrypted file)",
                k.describe()
            ),
            (None, Some(why)) => format!("{} ({why})", self.file.describe()),
            (None, None) => self.file.describe(),
        }
    }
}

/// Opens the user secret store of an install for a process whose environment is `vars`.
pub fn open_user_secrets(
    layout: &InstallLayout,
    vars: &BTreeMap<String, String>,
) -> Result<UserSecrets, SecretError> {
    let file = FileSecretStore::for_install(layout);
    let choice = BackendChoice::from_vars(vars)?;
    if choice == BackendChoice::File {
        return Ok(UserSecrets {
            keyring: None,
            file,
            fallback_reason: Some("WARREN_SECRET_BACKEND=file".into()),
        });
    }
    let root: PathBuf = layout.root().to_path_buf();
    let bus = vars.get("DBUS_SESSION_BUS_ADDRESS").cloned();
    let attempt = match &bus {
        Some(addr) if !addr.is_empty() => KeyringStore::connect(Some(addr.clone()), &root),
        _ => Err(SecretError::Backend(
            "no desktop session bus (DBUS_SESSION_BUS_ADDRESS is not set)".into(),
        )),
    };
    match (attempt, choice) {
        (Ok(k), _) => Ok(UserSecrets {
            keyring: Some(k),
            file,
            fallback_reason: None,
        }),
        (Err(e), BackendChoice::Keyring) => Err(SecretError::Backend(format!(
            "WARREN_SECRET_BACKEND=keyring but the keyring is not usable: {e}"
        ))),
        (Err(e), _) => {
            tracing::debug!(error = %e, "secret store: using the encrypted file");
            Ok(UserSecrets {
                keyring: None,
                file,
                fallback_reason: Some(e.to_string()),
            })
        }
    }
}
