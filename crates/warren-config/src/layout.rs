//! The install root and every path Warren keeps under it (rules §1).

use std::path::{Path, PathBuf};

/// Environment values that decide the install root, captured once by a binary's `main` so that
/// nothing deeper reads the process environment.
#[derive(Debug, Clone, Default)]
pub struct HomeEnv {
    /// `$WARREN_HOME`.
    pub warren_home: Option<PathBuf>,
    /// `$XDG_DATA_HOME`.
    pub xdg_data_home: Option<PathBuf>,
    /// `$HOME`.
    pub home: Option<PathBuf>,
}

impl HomeEnv {
    /// Reads the three variables from the process environment (binaries only).
    pub fn from_process() -> Self {
        let get = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        HomeEnv {
            warren_home: get("WARREN_HOME"),
            xdg_data_home: get("XDG_DATA_HOME"),
            home: get("HOME"),
        }
    }
}

/// Why no install root could be chosen.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// Neither `--home`, `$WARREN_HOME`, `$XDG_DATA_HOME` nor `$HOME` is set.
    #[error("cannot find the install root: pass --home DIR or set WARREN_HOME")]
    NoHome,
    /// A relative `$XDG_DATA_HOME` is ignored by the XDG spec; a relative root is refused.
    #[error("install root {0} is not an absolute path")]
    Relative(PathBuf),
}

/// Chooses the install root: `--home`, else `$WARREN_HOME`, else `$XDG_DATA_HOME/warren`, else
/// `~/.local/share/warren`. A relative `--home` is made absolute against `cwd`.
pub fn resolve_install_root(
    flag: Option<&Path>,
    env: &HomeEnv,
    cwd: &Path,
) -> Result<PathBuf, LayoutError> {
    if let Some(dir) = flag.or(env.warren_home.as_deref()) {
        return Ok(if dir.is_absolute() {
            dir.to_path_buf()
        } else {
            cwd.join(dir)
        });
    }
    if let Some(xdg) = env.xdg_data_home.as_deref().filter(|p| p.is_absolute()) {
        return Ok(xdg.join("warren"));
    }
    match env.home.as_deref() {
        Some(home) if home.is_absolute() => Ok(home.join(".local/share/warren")),
        Some(home) => Err(LayoutError::Relative(home.to_path_buf())),
        None => Err(LayoutError::NoHome),
    }
}

/// Facts about the host process the runtime and the policy read: the home directory (for `~`)
/// and a copy of the process environment (shell passthrough, `api_key_env`, the `PATH` sandbox
/// programs are looked up on). Captured once by a binary's `main`; tests build their own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HostEnv {
    /// The user's home directory (`$HOME`, unless empty).
    pub home: Option<PathBuf>,
    /// The process environment.
    pub vars: std::collections::BTreeMap<String, String>,
}

impl HostEnv {
    /// Captures the process environment (binaries only).
    pub fn from_process() -> Self {
        HostEnv {
            home: std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(PathBuf::from),
            vars: std::env::vars().collect(),
        }
    }

    /// `PATH` as captured.
    pub fn path_var(&self) -> Option<&std::ffi::OsStr> {
        self.vars
            .get("PATH")
            .map(|p| std::ffi::OsStr::new(p.as_str()))
    }
}

/// Every path of an install, derived from its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstallLayout {
    root: PathBuf,
}

impl InstallLayout {
    /// A layout rooted at `root` (which need not exist yet).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        InstallLayout { root: root.into() }
    }

    /// The install root.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `<install>/config.toml`.
    pub fn config_path(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    /// `<install>/agents/`.
    pub fn agents_dir(&self) -> PathBuf {
        self.root.join("agents")
    }
    /// `<install>/agents/<alias>/workspace/`: the default workspace of an agent.
    pub fn default_workspace(&self, alias: &str) -> PathBuf {
        self.agents_dir().join(alias).join("workspace")
    }
    /// `<install>/shared/skills/`: readable by every agent.
    pub fn shared_skills(&self) -> PathBuf {
        self.root.join("shared").join("skills")
    }
    /// `<install>/data/`: runtime state, never writable by agents.
    pub fn data_dir(&self) -> PathBuf {
        self.root.join("data")
    }
    /// `<install>/data/memory/memory.db`.
    pub fn memory_db(&self) -> PathBuf {
        self.data_dir().join("memory").join("memory.db")
    }
    /// The SQLite file of the `sqlite` and `lucid` memory backends: `[memory.sqlite] path`
    /// (`configured`, relative to the install root unless absolute) or [`memory_db`](Self::memory_db).
    pub fn memory_sqlite(&self, configured: Option<&str>) -> PathBuf {
        match configured {
            Some(p) if Path::new(p).is_absolute() => PathBuf::from(p),
            Some(p) => self.root.join(p),
            None => self.memory_db(),
        }
    }
    /// The memory file [`memory_sqlite`](Self::memory_sqlite) with the files SQLite keeps
    /// beside it (`-wal`, `-shm`, `-journal`): all of them hold every agent's memories.
    pub fn memory_sqlite_files(&self, configured: Option<&str>) -> Vec<PathBuf> {
        let db = self.memory_sqlite(configured);
        let mut out = vec![db.clone()];
        for suffix in ["-wal", "-shm", "-journal"] {
            let mut name = db.clone().into_os_string();
            name.push(suffix);
            out.push(PathBuf::from(name));
        }
        out
    }
    /// `<install>/data/sessions.db`.
    pub fn sessions_db(&self) -> PathBuf {
        self.data_dir().join("sessions.db")
    }
    /// `<install>/data/cron.db`.
    pub fn cron_db(&self) -> PathBuf {
        self.data_dir().join("cron.db")
    }
    /// `<install>/data/lifecycle/journal/`.
    pub fn journal_dir(&self) -> PathBuf {
        self.data_dir().join("lifecycle").join("journal")
    }
    /// `<install>/data/import/journal/`: unfinished imports. Each entry is a JSON object whose
    /// `aliases` lists the agents the import writes; until it is finished those aliases refuse
    /// turns, `agents create` and lifecycle commands, as an unfinished rename's do.
    pub fn import_journal_dir(&self) -> PathBuf {
        self.data_dir().join("import").join("journal")
    }
    /// `<install>/data/agents/_deleted/`: deletion archives.
    pub fn deleted_dir(&self) -> PathBuf {
        self.data_dir().join("agents").join("_deleted")
    }
    /// `<install>/logs/`.
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }
    /// Lock file serialising config edits between processes.
    pub fn config_lock_path(&self) -> PathBuf {
        self.data_dir().join("config.lock")
    }
    /// `<install>/data/desktop.json`: the desktop app's own settings.
    pub fn desktop_settings_path(&self) -> PathBuf {
        self.data_dir().join("desktop.json")
    }
    /// `<install>/data/paused.json`: the agents paused now.
    pub fn paused_path(&self) -> PathBuf {
        self.data_dir().join("paused.json")
    }
    /// Lock file serialising changes of `paused.json` between processes.
    pub fn paused_lock_path(&self) -> PathBuf {
        self.data_dir().join("paused.lock")
    }

    /// The workspace an agent uses: `workspace.path` when set, else the default.
    pub fn workspace_for(&self, alias: &str, custom: Option<&str>) -> PathBuf {
        match custom {
            Some(p) => PathBuf::from(p),
            None => self.default_workspace(alias),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(w: Option<&str>, x: Option<&str>, h: Option<&str>) -> HomeEnv {
        HomeEnv {
            warren_home: w.map(PathBuf::from),
            xdg_data_home: x.map(PathBuf::from),
            home: h.map(PathBuf::from),
        }
    }

    #[test]
    fn root_resolution_order() {
        let cwd = Path::new("/cwd");
        let all = env(Some("/w"), Some("/x"), Some("/h"));
        assert_eq!(
            resolve_install_root(Some(Path::new("/flag")), &all, cwd).ok(),
            Some(PathBuf::from("/flag"))
        );
        assert_eq!(
            resolve_install_root(Some(Path::new("rel")), &all, cwd).ok(),
            Some(PathBuf::from("/cwd/rel"))
        );
        assert_eq!(
            resolve_install_root(None, &all, cwd).ok(),
            Some(PathBuf::from("/w"))
        );
        assert_eq!(
            resolve_install_root(None, &env(None, Some("/x"), Some("/h")), cwd).ok(),
            Some(PathBuf::from("/x/warren"))
        );
        assert_eq!(
            resolve_install_root(None, &env(None, Some("relx"), Some("/h")), cwd).ok(),
            Some(PathBuf::from("/h/.local/share/warren"))
        );
        assert!(matches!(
            resolve_install_root(None, &env(None, None, None), cwd),
            Err(LayoutError::NoHome)
        ));
    }

    #[test]
    fn paths() {
        let l = InstallLayout::new("/i");
        assert_eq!(l.config_path(), PathBuf::from("/i/config.toml"));
        assert_eq!(
            l.default_workspace("bob"),
            PathBuf::from("/i/agents/bob/workspace")
        );
        assert_eq!(l.memory_db(), PathBuf::from("/i/data/memory/memory.db"));
        assert_eq!(l.deleted_dir(), PathBuf::from("/i/data/agents/_deleted"));
        assert_eq!(l.journal_dir(), PathBuf::from("/i/data/lifecycle/journal"));
        assert_eq!(
            l.desktop_settings_path(),
            PathBuf::from("/i/data/desktop.json")
        );
        assert_eq!(l.paused_path(), PathBuf::from("/i/data/paused.json"));
        assert_eq!(l.paused_lock_path(), PathBuf::from("/i/data/paused.lock"));
    }
}
