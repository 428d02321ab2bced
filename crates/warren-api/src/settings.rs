//! The Settings screen's services: provider API keys (kept in the user secret store, never
//! returned), and the desktop app's own settings — start hidden (`<install>/data/desktop.json`)
//! and start on login (an XDG autostart entry).

use crate::Warren;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use warren_state::secrets::SecretRef;
use warren_types::{ApiError, ErrorCode, ProviderFamily, SecretBackendKind};

/// Where a provider's API key is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum KeyLocation {
    /// In the desktop keyring.
    Keyring,
    /// In the encrypted secrets file.
    File,
    /// In the environment variable named by `api_key_env`.
    Env,
}

impl KeyLocation {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyLocation::Keyring => "keyring",
            KeyLocation::File => "file",
            KeyLocation::Env => "env",
        }
    }
}

impl From<SecretBackendKind> for KeyLocation {
    fn from(b: SecretBackendKind) -> Self {
        match b {
            SecretBackendKind::Keyring => KeyLocation::Keyring,
            SecretBackendKind::File => KeyLocation::File,
        }
    }
}

impl std::fmt::Display for KeyLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// One provider route and the state of its API key (the value itself is never returned).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProviderKeyView {
    /// `"family.alias"`.
    pub reference: String,
    /// Wire protocol family.
    pub family: ProviderFamily,
    /// Vendor model name.
    pub model: String,
    /// Effective base URL.
    pub uri: String,
    /// The secret reference the route reads its key from, when one is configured.
    pub secret: Option<String>,
    /// The environment variable the route reads its key from, when one is configured.
    pub api_key_env: Option<String>,
    /// Whether a key is there now (the secret is stored, or the variable is set).
    pub key_set: bool,
    /// Where the key is kept; `null` when not set.
    pub store: Option<KeyLocation>,
}

/// The desktop app's own settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DesktopSettings {
    /// Start with the window hidden (tray only).
    #[serde(default)]
    pub start_hidden: bool,
    /// Desktop notifications when an approval waits or a turn fails while the window is not
    /// in front (on unless turned off).
    #[serde(default = "notifications_default")]
    pub notifications: bool,
}

fn notifications_default() -> bool {
    true
}

impl Default for DesktopSettings {
    fn default() -> Self {
        DesktopSettings {
            start_hidden: false,
            notifications: true,
        }
    }
}

/// The desktop settings as the Settings screen shows them.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DesktopSettingsView {
    /// Start with the window hidden (tray only).
    pub start_hidden: bool,
    /// Desktop notifications are on.
    pub notifications: bool,
    /// Whether the autostart entry exists.
    pub start_on_login: bool,
    /// `$XDG_CONFIG_HOME/autostart/warren.desktop`; `null` when neither `XDG_CONFIG_HOME` nor
    /// `HOME` is known (start on login is then unavailable).
    pub autostart_path: Option<String>,
    /// `<install>/data/desktop.json`.
    pub settings_path: String,
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> ApiError {
    ApiError::new(ErrorCode::Io, format!("{what} {}: {e}", path.display()))
}

/// Quotes an `Exec` argument as the Desktop Entry specification asks.
fn exec_arg(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c));
    if plain {
        return arg.to_string();
    }
    let mut out = String::from("\"");
    for c in arg.chars() {
        if matches!(c, '"' | '`' | '$' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    // `%` is a field code in Exec lines: escape it as `%%`.
    out.replace('%', "%%")
}

/// The autostart entry for `exec`, opening the install at `install_root` when it is not the
/// default one.
pub fn autostart_entry(exec: &Path, install_root: Option<&Path>) -> String {
    let mut line = String::new();
    if let Some(root) = install_root {
        line.push_str("env ");
        line.push_str(&exec_arg(&format!("WARREN_HOME={}", root.display())));
        line.push(' ');
    }
    line.push_str(&exec_arg(&exec.display().to_string()));
    format!(
        "[Desktop Entry]\nType=Application\nName=Warren\nComment=Multi-agent AI runtime\n\
         Exec={line}\nIcon=warren-desktop\nTerminal=false\nX-GNOME-Autostart-enabled=true\n"
    )
}

impl Warren {
    /// Every provider route with the state of its API key.
    pub fn provider_keys(&self) -> Result<Vec<ProviderKeyView>, ApiError> {
        let stored = self.list_secrets()?;
        let cfg = self.load()?.config;
        Ok(self
            .providers()?
            .into_iter()
            .map(|p| {
                let cfg_model = cfg.provider(&p.reference).map(|(_, m)| m.clone());
                let secret = cfg_model.as_ref().and_then(|m| m.secret.clone());
                let api_key_env = cfg_model.and_then(|m| m.api_key_env);
                let in_store = secret.as_ref().and_then(|s| {
                    let r = SecretRef::parse(s).ok()?.to_string();
                    stored
                        .iter()
                        .find(|e| e.reference == r)
                        .map(|e| KeyLocation::from(e.store))
                });
                let in_env = api_key_env
                    .as_ref()
                    .is_some_and(|v| self.env.vars.get(v).is_some_and(|x| !x.is_empty()));
                let store = in_store.or_else(|| in_env.then_some(KeyLocation::Env));
                ProviderKeyView {
                    family: p.family,
                    reference: p.reference,
                    model: p.model,
                    uri: p.uri,
                    secret,
                    api_key_env,
                    key_set: store.is_some(),
                    store,
                }
            })
            .collect())
    }

    /// Stores `value` as the API key of the route `reference` in the user secret store. A route
    /// without a `secret` entry gets one (`<FAMILY>_<ALIAS>_API_KEY`) written into config.toml
    /// (comments kept); the key itself never goes into the config.
    pub fn set_provider_key(
        &self,
        reference: &str,
        value: &str,
    ) -> Result<ProviderKeyView, ApiError> {
        let value = value.trim();
        if value.is_empty() {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "the API key is empty",
            ));
        }
        let cfg = self.load()?.config;
        let (_, model) = cfg.provider(reference).ok_or_else(|| {
            ApiError::new(
                ErrorCode::NotFound,
                format!("provider route `{reference}` does not exist"),
            )
        })?;
        // The key is stored first and the config reference written after: a store that fails
        // leaves config.toml as it was instead of naming a key that is not there.
        let (secret, config_entry) = match model.secret.clone() {
            Some(s) => (s, None),
            None => {
                let (family, alias) = reference.split_once('.').ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::InvalidArgument,
                        format!("`{reference}` is not a `family.alias` route"),
                    )
                })?;
                let name = format!("{family}_{alias}_API_KEY").to_ascii_uppercase();
                (name, Some((family, alias)))
            }
        };
        let stored = self.set_secret(&secret, None, value)?;
        if let Some((family, alias)) = config_entry {
            self.store
                .edit(|doc, _| {
                    doc.set_value(
                        &["providers", "models", family, alias, "secret"],
                        secret.as_str().into(),
                    )
                    .map_err(Into::into)
                })
                .map_err(|e| {
                    let e = crate::config_error(e);
                    ApiError {
                        message: format!(
                            "the key was stored as `{}` ({}), but config.toml could not be \
                             changed to use it: {}; add `secret = \"{secret}\"` under \
                             [providers.models.{family}.{alias}] to use it",
                            stored.reference, stored.store, e.message
                        ),
                        ..e
                    }
                })?;
        }
        tracing::info!(provider = %reference, secret = %secret, "provider key stored");
        self.provider_keys()?
            .into_iter()
            .find(|p| p.reference == reference)
            .ok_or_else(|| ApiError::new(ErrorCode::Internal, "provider missing after saving"))
    }

    fn desktop_settings_path(&self) -> PathBuf {
        self.layout().desktop_settings_path()
    }

    fn autostart_path(&self) -> Result<PathBuf, ApiError> {
        let vars = &self.env.vars;
        let config = match vars.get("XDG_CONFIG_HOME").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir),
            None => self
                .env
                .home
                .clone()
                .or_else(|| vars.get("HOME").map(PathBuf::from))
                .map(|h| h.join(".config"))
                .ok_or_else(|| {
                    ApiError::new(
                        ErrorCode::InvalidArgument,
                        "neither XDG_CONFIG_HOME nor HOME is set: no autostart folder",
                    )
                })?,
        };
        Ok(config.join("autostart").join("warren.desktop"))
    }

    /// The desktop app's settings; defaults when `desktop.json` does not exist yet.
    pub fn desktop_settings(&self) -> Result<DesktopSettings, ApiError> {
        let path = self.desktop_settings_path();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| ApiError::new(ErrorCode::Storage, format!("{}: {e}", path.display()))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(DesktopSettings::default()),
            Err(e) => Err(io_error("reading", &path, e)),
        }
    }

    /// The desktop settings and the autostart state, for the Settings screen.
    pub fn desktop_settings_view(&self) -> Result<DesktopSettingsView, ApiError> {
        let s = self.desktop_settings()?;
        let autostart = self.autostart_path().ok();
        Ok(DesktopSettingsView {
            start_hidden: s.start_hidden,
            notifications: s.notifications,
            start_on_login: autostart.as_ref().is_some_and(|p| p.exists()),
            autostart_path: autostart.map(|p| p.display().to_string()),
            settings_path: self.desktop_settings_path().display().to_string(),
        })
    }

    /// Turns start-hidden on or off (written atomically to `desktop.json`).
    pub fn set_start_hidden(&self, on: bool) -> Result<DesktopSettingsView, ApiError> {
        self.update_desktop_settings(|s| s.start_hidden = on)
    }

    /// Turns desktop notifications on or off (written atomically to `desktop.json`).
    pub fn set_notifications(&self, on: bool) -> Result<DesktopSettingsView, ApiError> {
        self.update_desktop_settings(|s| s.notifications = on)
    }

    /// Reads `desktop.json`, applies `change` and writes it back, one update at a time (two
    /// settings changed at once both stay changed).
    fn update_desktop_settings(
        &self,
        change: impl FnOnce(&mut DesktopSettings),
    ) -> Result<DesktopSettingsView, ApiError> {
        static UPDATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one_at_a_time = UPDATING
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut s = self.desktop_settings()?;
        change(&mut s);
        let path = self.desktop_settings_path();
        let text = serde_json::to_vec_pretty(&s)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        std::fs::create_dir_all(self.layout().data_dir())
            .map_err(|e| io_error("creating", &self.layout().data_dir(), e))?;
        warren_config::write_atomic(&path, &text).map_err(|e| io_error("writing", &path, e))?;
        self.desktop_settings_view()
    }

    /// Writes (or removes) the XDG autostart entry that starts `exec` on login. The entry opens
    /// this install: when it was chosen through `WARREN_HOME`, the entry sets it too.
    pub fn set_start_on_login(
        &self,
        on: bool,
        exec: &Path,
    ) -> Result<DesktopSettingsView, ApiError> {
        let path = self.autostart_path()?;
        if on {
            let root = self
                .env
                .vars
                .contains_key("WARREN_HOME")
                .then(|| self.layout().root());
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| io_error("creating", dir, e))?;
            }
            warren_config::write_atomic(&path, autostart_entry(exec, root).as_bytes())
                .map_err(|e| io_error("writing", &path, e))?;
        } else {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_error("removing", &path, e)),
            }
        }
        self.desktop_settings_view()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_locations_and_secret_backends_are_their_documented_codes() {
        let locations = [
            (KeyLocation::Keyring, "keyring"),
            (KeyLocation::File, "file"),
            (KeyLocation::Env, "env"),
        ];
        crate::test_support::assert_codes(&locations);
        let backends = [
            (SecretBackendKind::Keyring, "keyring"),
            (SecretBackendKind::File, "file"),
        ];
        crate::test_support::assert_codes(&backends);
        for (b, code) in backends {
            assert_eq!((b.as_str(), KeyLocation::from(b).as_str()), (code, code));
        }
    }

    #[test]
    fn two_settings_changed_at_once_both_stay_changed() {
        for _ in 0..40 {
            let dir = tempfile::tempdir().unwrap();
            let w =
                std::sync::Arc::new(Warren::open(warren_config::InstallLayout::new(dir.path())));
            let (a, b) = (w.clone(), w.clone());
            let hide = std::thread::spawn(move || a.set_start_hidden(true).map(|_| ()));
            let quiet = std::thread::spawn(move || b.set_notifications(false).map(|_| ()));
            hide.join().unwrap().unwrap();
            quiet.join().unwrap().unwrap();
            let s = w.desktop_settings().unwrap();
            assert!(s.start_hidden && !s.notifications, "{s:?}");
        }
    }

    /// An install with one provider route that has no `secret` entry yet, opened with
    /// `WARREN_SECRET_BACKEND` set to `backend` and no session bus.
    fn install_with_backend(backend: &str) -> (tempfile::TempDir, Warren) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config.toml"),
            "[providers.models.ollama.local]\nmodel = \"llama3.2\"\n",
        )
        .unwrap();
        let env = crate::HostEnv {
            home: Some(dir.path().to_path_buf()),
            vars: [("WARREN_SECRET_BACKEND".to_string(), backend.to_string())].into(),
        };
        let w = Warren::open_with_env(warren_config::InstallLayout::new(dir.path()), env);
        (dir, w)
    }

    #[test]
    fn a_provider_key_the_store_refuses_leaves_the_config_unchanged() {
        let (dir, w) = install_with_backend("keyring");
        let before = std::fs::read(dir.path().join("config.toml")).unwrap();
        let e = w.set_provider_key("ollama.local", "sk-value").unwrap_err();
        assert!(e.message.contains("WARREN_SECRET_BACKEND=keyring"), "{e:?}");
        let after = std::fs::read(dir.path().join("config.toml")).unwrap();
        assert_eq!(
            String::from_utf8(after).unwrap(),
            String::from_utf8(before).unwrap()
        );
    }

    #[test]
    fn a_stored_provider_key_is_referenced_from_the_config() {
        let (dir, w) = install_with_backend("file");
        let view = w.set_provider_key("ollama.local", "sk-value").unwrap();
        assert_eq!(view.secret.as_deref(), Some("OLLAMA_LOCAL_API_KEY"));
        assert!(view.key_set);
        let config = std::fs::read_to_string(dir.path().join("config.toml")).unwrap();
        assert!(
            config.contains("secret = \"OLLAMA_LOCAL_API_KEY\""),
            "{config}"
        );
        assert!(!config.contains("sk-value"), "{config}");
    }

    #[test]
    fn exec_lines_quote_what_needs_quoting() {
        let e = autostart_entry(Path::new("/usr/bin/warren-desktop"), None);
        assert!(e.contains("\nExec=/usr/bin/warren-desktop\n"), "{e}");
        let e = autostart_entry(
            Path::new("/opt/my apps/warren-desktop"),
            Some(Path::new("/home/u/100% warren")),
        );
        assert!(
            e.contains(
                "\nExec=env \"WARREN_HOME=/home/u/100%% warren\" \"/opt/my apps/warren-desktop\"\n"
            ),
            "{e}"
        );
    }
}
