//! Which agents are paused (`<install>/data/paused.json`): read and changed under
//! `data/paused.lock` by every process of the install (the window, the tray, the CLI), so a
//! paused agent runs no new turn wherever its turn would start.

use warren_config::{load_config, ConfigError, InstallLayout};

/// Why the paused agents could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum PauseError {
    /// The config is missing or invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// An alias to pause is not an agent of the config.
    #[error("agent `{0}` does not exist")]
    UnknownAgent(String),
    /// The paused-agents file (`<install>/data/paused.json`) could not be read or written.
    #[error("paused agents: {0}")]
    State(String),
}

/// Takes `data/paused.lock` exclusively to change `paused.json` ([`paused_agents`] takes it
/// shared to read). Every change and every read is ordered by it across processes. The lock
/// belongs to the open file: do not read through [`paused_agents`] while holding it.
fn lock_paused(layout: &InstallLayout) -> Result<std::fs::File, PauseError> {
    let lock_path = layout.paused_lock_path();
    // The open error names the file already; the lock error is given its name here.
    crate::agent_lock::open_lock_file(&lock_path)
        .and_then(|f| {
            f.lock()
                .map(|()| f)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", lock_path.display())))
        })
        .map_err(|e| PauseError::State(format!("locking {e}")))
}

/// Pauses (or resumes) `aliases` in the install's `data/paused.json` (written atomically);
/// returns the agents paused afterwards. The aliases are not checked against the config (the
/// lifecycle uses this to carry a pause through rename, delete and restore).
pub fn set_paused_agents(
    layout: &InstallLayout,
    aliases: &[String],
    paused: bool,
) -> Result<std::collections::BTreeSet<String>, PauseError> {
    // One writer at a time across processes (the window, the tray, the CLI): the read-modify-
    // write below happens under an exclusive lock on `data/paused.lock`.
    let lock = lock_paused(layout)?;
    let set = write_paused(layout, aliases, paused)?;
    drop(lock);
    Ok(set)
}

/// Pauses `aliases` (every agent of the config when `None`), each checked against
/// config.toml read while `data/paused.lock` is held. A rename or delete changes config.toml
/// before its pause participant reads `paused.json` under the same lock, so a pause either
/// lands before that read (and the participant carries or clears it) or sees the config
/// without the old alias and is refused: an old alias is never left paused.
pub fn pause_configured_agents(
    layout: &InstallLayout,
    aliases: Option<&[String]>,
) -> Result<std::collections::BTreeSet<String>, PauseError> {
    let lock = lock_paused(layout)?;
    let config = load_config(layout)?.config;
    let targets: Vec<String> = match aliases {
        Some(aliases) => {
            if let Some(unknown) = aliases.iter().find(|a| !config.agents.contains_key(*a)) {
                return Err(PauseError::UnknownAgent(unknown.clone()));
            }
            aliases.to_vec()
        }
        None => config.agents.keys().cloned().collect(),
    };
    let set = write_paused(layout, &targets, true)?;
    drop(lock);
    Ok(set)
}

/// The read-modify-write of `paused.json`; the caller holds the exclusive lock.
fn write_paused(
    layout: &InstallLayout,
    aliases: &[String],
    paused: bool,
) -> Result<std::collections::BTreeSet<String>, PauseError> {
    let mut set = read_paused(layout)?;
    for a in aliases {
        if paused {
            set.insert(a.clone());
        } else {
            set.remove(a);
        }
    }
    let path = layout.paused_path();
    let text = serde_json::to_vec_pretty(&set).map_err(|e| PauseError::State(e.to_string()))?;
    warren_config::write_atomic(&path, &text)
        .map_err(|e| PauseError::State(format!("writing {}: {e}", path.display())))?;
    Ok(set)
}

/// The paused agents of an install; none when the file does not exist. A file that cannot be
/// read or parsed is an error (fail closed: no turn runs on an unknown pause state). Read under
/// a shared lock on `data/paused.lock`, so a change being made is read whole, before or after.
pub fn paused_agents(
    layout: &InstallLayout,
) -> Result<std::collections::BTreeSet<String>, PauseError> {
    // No data folder: nothing was ever paused (and a read creates no folder).
    if !layout.data_dir().is_dir() {
        return Ok(Default::default());
    }
    // Readers open the lock file read-only (a shared lock needs no write access): a reader that
    // cannot write `data/`, or an install where nothing was ever paused (no lock file yet),
    // reads without waiting.
    let lock_path = layout.paused_lock_path();
    let lock = match std::fs::File::open(&lock_path) {
        Ok(file) => {
            file.lock_shared()
                .map_err(|e| PauseError::State(format!("locking {}: {e}", lock_path.display())))?;
            Some(file)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(PauseError::State(format!(
                "opening {}: {e}",
                lock_path.display()
            )))
        }
    };
    let set = read_paused(layout);
    drop(lock);
    set
}

/// `paused.json` as it is now, without taking the lock.
fn read_paused(layout: &InstallLayout) -> Result<std::collections::BTreeSet<String>, PauseError> {
    let path = layout.paused_path();
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map_err(|e| PauseError::State(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Default::default()),
        Err(e) => Err(PauseError::State(format!(
            "reading {}: {e}",
            path.display()
        ))),
    }
}
