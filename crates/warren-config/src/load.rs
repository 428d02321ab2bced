//! Reading, validating and editing `config.toml`: [`parse_config`] for text, [`load_config`] for
//! an install, and [`ConfigStore`] for locked, validated, atomic edits.

use crate::atomic::{write_atomic_with, NoFault, SaveFault};
use crate::decode::{decode_config, KNOWN_TOP};
use crate::document::{ConfigDocument, DocumentError};
use crate::issue::{ConfigErrors, Issue};
use crate::layout::InstallLayout;
use crate::validate::validate;
use std::fs::{self, OpenOptions};
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use warren_types::Config;

/// A config read from an install.
#[derive(Debug, Clone)]
pub struct LoadedConfig {
    /// The typed, validated config.
    pub config: Config,
    /// Non-fatal findings (unknown top-level sections, loose file permissions).
    pub warnings: Vec<Issue>,
    /// The file's text as read.
    pub text: String,
    /// Where it was read from.
    pub path: PathBuf,
}

/// Why a config could not be loaded or saved.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// There is no config file yet.
    #[error("no config at {path}: run `warren init` first")]
    NotFound {
        /// The expected location.
        path: PathBuf,
    },
    /// The file could not be read or written.
    #[error("{action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: io::Error,
    },
    /// The text failed to parse or validate; nothing was saved.
    #[error("invalid config {path}: {errors}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Every problem found.
        errors: ConfigErrors,
    },
    /// An edit was refused.
    #[error(transparent)]
    Edit(#[from] DocumentError),
}

fn locate(text: &str, issues: &mut [Issue]) {
    let Ok(doc) = text.parse::<toml_edit::ImDocument<String>>() else {
        return;
    };
    for issue in issues.iter_mut().filter(|i| i.line.is_none()) {
        if let Some(offset) = span_of(&doc, &issue.path) {
            let (l, c) = line_col(text, offset);
            issue.line = Some(l);
            issue.column = Some(c);
        }
    }
}

/// Splits a dotted issue path into segments (quoted segments and `[i]` indices understood).
fn segments(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' => quoted = !quoted,
            '\\' if quoted => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '.' if !quoted => out.push(std::mem::take(&mut cur)),
            '[' if !quoted => {
                out.push(std::mem::take(&mut cur));
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    cur.push(d);
                }
                out.push(format!("#{}", std::mem::take(&mut cur)));
                if chars.peek() == Some(&'.') {
                    chars.next();
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out.retain(|s| !s.is_empty());
    out
}

fn span_of(doc: &toml_edit::ImDocument<String>, path: &str) -> Option<usize> {
    let mut item: &toml_edit::Item = doc.as_item();
    let mut best = None;
    for seg in segments(path) {
        if let Some(idx) = seg.strip_prefix('#') {
            let i: usize = idx.parse().ok()?;
            let v = item.as_array()?.get(i)?;
            return v.span().map(|s| s.start).or(best);
        }
        let table = item.as_table_like()?;
        let (key, next) = table.get_key_value(&seg)?;
        best = key.span().map(|s| s.start).or(best);
        item = next;
    }
    best
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .map(|s| s.chars().count())
        .unwrap_or(0)
        + 1;
    (line, col)
}

/// Parses and validates config text, returning the typed config and non-fatal warnings.
fn parse_with_warnings(text: &str) -> Result<(Config, Vec<Issue>), ConfigErrors> {
    let table: toml::Table = match text.parse() {
        Ok(t) => t,
        Err(e) => {
            let e: toml::de::Error = e;
            let mut issue = Issue::new("", e.message().trim().to_string());
            if let Some(span) = e.span() {
                let (l, c) = line_col(text, span.start);
                issue.line = Some(l);
                issue.column = Some(c);
            }
            return Err(ConfigErrors {
                issues: vec![Issue {
                    message: format!("TOML syntax error: {}", issue.message),
                    ..issue
                }],
            });
        }
    };
    let mut issues = Vec::new();
    let cfg = decode_config(&table, &mut issues);
    validate(&cfg, &mut issues);
    crate::authority::validate_secret_refs(&cfg, &mut issues);
    if !issues.is_empty() {
        locate(text, &mut issues);
        return Err(ConfigErrors { issues });
    }
    let warnings = table
        .keys()
        .filter(|k| !KNOWN_TOP.contains(&k.as_str()))
        .map(|k| {
            Issue::new(
                k.clone(),
                "unknown top-level section; Warren ignores it and keeps it in the file",
            )
        })
        .collect();
    Ok((cfg, warnings))
}

/// Parses and fully validates config text (rules §1.2), reporting every problem at once.
/// Rules that need the install's paths are checked by [`parse_for_install`].
pub fn parse_config(text: &str) -> Result<Config, ConfigErrors> {
    parse_with_warnings(text).map(|(c, _)| c)
}

/// [`parse_config`] plus the rules that need the install's paths (the shared memory file
/// outside every workspace), with every warning (unknown sections, nested workspaces).
pub fn parse_for_install(
    text: &str,
    layout: &InstallLayout,
) -> Result<(Config, Vec<Issue>), ConfigErrors> {
    install_checks(text, parse_with_warnings(text)?, layout)
}

/// The install's checks of a parsed config (see [`parse_for_install`]). They look at the
/// filesystem (where a workspace's path leads now), so they run at every load, parsed text or
/// not.
fn install_checks(
    text: &str,
    (config, mut warnings): (Config, Vec<Issue>),
    layout: &InstallLayout,
) -> Result<(Config, Vec<Issue>), ConfigErrors> {
    let mut issues = Vec::new();
    crate::authority::validate_install_paths(&config, layout, &mut issues);
    if !issues.is_empty() {
        locate(text, &mut issues);
        return Err(ConfigErrors { issues });
    }
    warnings.extend(crate::authority::nested_workspace_warnings(&config, layout));
    Ok((config, warnings))
}

/// Loads and validates `<install>/config.toml`.
pub fn load_config(layout: &InstallLayout) -> Result<LoadedConfig, ConfigError> {
    load_parsed_with(layout, parse_with_warnings)
}

/// The last config text a [`ConfigCache`] parsed, with what parsing it gave.
type Parsed = (String, Config, Vec<Issue>);

/// [`load_config`] for a process that loads the same install's config again and again (every
/// turn does, so that it acts on the file as it is now): the file is read every time, but text
/// equal to the last text parsed is not parsed again. The install's checks, which look at the
/// filesystem, and the file's mode are checked every time, as [`load_config`] does.
#[derive(Debug, Default)]
pub struct ConfigCache {
    last: std::sync::Mutex<Option<Parsed>>,
}

impl ConfigCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// [`load_config`], parsing only text not seen last time.
    pub fn load(&self, layout: &InstallLayout) -> Result<LoadedConfig, ConfigError> {
        load_parsed_with(layout, |text| {
            let mut last = self
                .last
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some((seen, config, warnings)) = last.as_ref() {
                if seen == text {
                    return Ok((config.clone(), warnings.clone()));
                }
            }
            let parsed = parse_with_warnings(text)?;
            *last = Some((text.to_string(), parsed.0.clone(), parsed.1.clone()));
            Ok(parsed)
        })
    }
}

/// Reads the install's config file and validates it, its text parsed by `parse`.
fn load_parsed_with(
    layout: &InstallLayout,
    parse: impl FnOnce(&str) -> Result<(Config, Vec<Issue>), ConfigErrors>,
) -> Result<LoadedConfig, ConfigError> {
    let path = layout.config_path();
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(ConfigError::NotFound { path })
        }
        Err(source) => {
            return Err(ConfigError::Io {
                action: "reading",
                path,
                source,
            })
        }
    };
    let (config, mut warnings) = parse(&text)
        .and_then(|parsed| install_checks(&text, parsed, layout))
        .map_err(|errors| ConfigError::Invalid {
            path: path.clone(),
            errors,
        })?;
    if let Ok(meta) = fs::metadata(&path) {
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            warnings.push(Issue::new(
                "",
                format!(
                    "{} is readable by group or others (mode {mode:o}); run `chmod 600` on it",
                    path.display()
                ),
            ));
        }
    }
    Ok(LoadedConfig {
        config,
        warnings,
        text,
        path,
    })
}

/// Serialises edits of one install's config between threads and processes, validates every
/// result before saving, and saves atomically.
pub struct ConfigStore {
    layout: InstallLayout,
    fault: Box<dyn SaveFault + Send + Sync>,
}

impl ConfigStore {
    /// A store for the install.
    pub fn new(layout: InstallLayout) -> Self {
        ConfigStore {
            layout,
            fault: Box::new(NoFault),
        }
    }

    /// A store whose saves consult a fault hook (tests of interrupted saves).
    pub fn with_fault(layout: InstallLayout, fault: Box<dyn SaveFault + Send + Sync>) -> Self {
        ConfigStore { layout, fault }
    }

    /// The install this store edits.
    pub fn layout(&self) -> &InstallLayout {
        &self.layout
    }

    /// Loads the current config.
    pub fn load(&self) -> Result<LoadedConfig, ConfigError> {
        load_config(&self.layout)
    }

    fn lock(&self) -> Result<fs::File, ConfigError> {
        let path = self.layout.config_lock_path();
        let io_err = |action, source| ConfigError::Io {
            action,
            path: path.clone(),
            source,
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|e| io_err("creating the directory of", e))?;
        }
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| io_err("opening", e))?;
        f.lock().map_err(|e| io_err("locking", e))?;
        Ok(f)
    }

    /// Applies `edit` to the current document under the install's config lock. The result is
    /// validated in full; when valid it is saved atomically and returned, otherwise nothing is
    /// written and every problem is returned.
    pub fn edit<T>(
        &self,
        edit: impl FnOnce(&mut ConfigDocument, &Config) -> Result<T, ConfigError>,
    ) -> Result<(T, Config), ConfigError> {
        let _lock = self.lock()?;
        let current = self.load()?;
        let mut doc = ConfigDocument::parse(&current.text)?;
        let out = edit(&mut doc, &current.config)?;
        let text = doc.to_string();
        let config = self.save_text(&text)?;
        Ok((out, config))
    }

    /// Validates `text` and, when valid, atomically replaces the config file with it.
    pub fn save_text(&self, text: &str) -> Result<Config, ConfigError> {
        let path = self.layout.config_path();
        let (config, _) =
            parse_for_install(text, &self.layout).map_err(|errors| ConfigError::Invalid {
                path: path.clone(),
                errors,
            })?;
        write_file(&path, text, self.fault.as_ref())?;
        Ok(config)
    }

    /// Writes a new config (for `warren init`); refuses to overwrite an existing one.
    pub fn create(&self, text: &str) -> Result<Config, ConfigError> {
        let _lock = self.lock()?;
        let path = self.layout.config_path();
        if path.exists() {
            return Err(DocumentError::AlreadyExists {
                what: "config".into(),
                name: path.display().to_string(),
            }
            .into());
        }
        self.save_text(text)
    }
}

fn write_file(path: &Path, text: &str, fault: &dyn SaveFault) -> Result<(), ConfigError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|source| ConfigError::Io {
            action: "creating",
            path: dir.to_path_buf(),
            source,
        })?;
    }
    write_atomic_with(path, text.as_bytes(), fault).map_err(|source| ConfigError::Io {
        action: "saving",
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_parse() {
        assert_eq!(
            segments("agents.bob.workspace.read_memory_from[1]"),
            vec!["agents", "bob", "workspace", "read_memory_from", "#1"]
        );
        assert_eq!(
            segments("agents.\"Bad Alias\".x"),
            vec!["agents", "Bad Alias", "x"]
        );
    }

    /// A cached load sees every change of the file (its text is read every time), and runs
    /// the install's checks every time: the same text is refused once a workspace has come to
    /// lead to the memory file (a link made after the text was first parsed).
    #[test]
    fn a_cached_load_sees_each_edit_and_checks_the_install_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let layout = InstallLayout::new(&root);
        let store = ConfigStore::new(layout.clone());
        let cache = ConfigCache::new();
        let shared = root.join("shared");
        std::fs::create_dir_all(&shared).unwrap();
        let text = format!(
            "[risk_profiles.p]\n[agents.alice]\nrisk_profile = \"p\"\n\
             [agents.alice.workspace]\npath = \"{}\"\n\
             [memory.sqlite]\npath = \"{}\"\n",
            root.join("ws").display(),
            shared.join("m.db").display()
        );
        store.save_text(&text).unwrap();
        let first = cache.load(&layout).unwrap();
        assert_eq!(first.config, load_config(&layout).unwrap().config);
        // An edit right after the first load: seen.
        let edited = text.replace(
            "risk_profile = \"p\"\n[agents",
            "risk_profile = \"p\"\nenabled = false\n[agents",
        );
        store.save_text(&edited).unwrap();
        let second = cache.load(&layout).unwrap();
        assert!(!second.config.agents["alice"].enabled);
        assert_eq!(second.config, load_config(&layout).unwrap().config);
        // The same text, but the workspace now leads to the memory file's directory.
        std::os::unix::fs::symlink(&shared, root.join("ws")).unwrap();
        let err = cache.load(&layout).unwrap_err();
        assert!(err.to_string().contains("memory.sqlite.path"), "{err}");
        assert!(load_config(&layout).is_err());
    }

    /// The shared memory file inside an agent's workspace (relative to the install, absolute,
    /// or reached through a linked directory) is refused at `memory.sqlite.path`, on load and
    /// on save, and a refused save writes nothing.
    #[test]
    fn the_memory_file_inside_a_workspace_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let layout = InstallLayout::new(&root);
        let outside = root.join("elsewhere");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir_all(root.join("agents/bob/workspace")).unwrap();
        std::os::unix::fs::symlink(root.join("agents/bob/workspace"), root.join("bob-link"))
            .unwrap();
        let base = "[risk_profiles.p]\n[agents.alice]\nrisk_profile = \"p\"\n\
                    [agents.bob]\nrisk_profile = \"p\"\n";
        let with = |path: &str| format!("{base}[memory.sqlite]\npath = \"{path}\"\n");
        let fine = with(&outside.join("m.db").display().to_string());
        let store = ConfigStore::new(layout.clone());
        store.save_text(&fine).unwrap();
        for (path, agent) in [
            ("agents/alice/workspace/m.db".to_string(), "alice"),
            (
                root.join("agents/bob/workspace/deep/m.db")
                    .display()
                    .to_string(),
                "bob",
            ),
            (root.join("bob-link/m.db").display().to_string(), "bob"),
        ] {
            let text = with(&path);
            assert!(parse_config(&text).is_ok(), "alone, the text is valid");
            let errs = parse_for_install(&text, &layout).unwrap_err();
            assert_eq!(errs.issues.len(), 1, "{errs}");
            assert_eq!(errs.issues[0].path, "memory.sqlite.path");
            assert_eq!(errs.issues[0].line, Some(7), "{errs}");
            assert!(
                errs.issues[0]
                    .message
                    .contains(&format!("workspace of `{agent}`")),
                "{errs}"
            );
            let err = store.save_text(&text).unwrap_err();
            assert!(err.to_string().contains("memory.sqlite.path"), "{err}");
            assert_eq!(std::fs::read_to_string(layout.config_path()).unwrap(), fine);
            std::fs::write(layout.config_path(), &text).unwrap();
            assert!(load_config(&layout).is_err(), "{path}");
            std::fs::write(layout.config_path(), &fine).unwrap();
        }
        assert!(load_config(&layout).is_ok());
    }

    #[test]
    fn line_col_counts_from_one() {
        assert_eq!(line_col("a\nbc\n", 3), (2, 2));
        assert_eq!(line_col("abc", 0), (1, 1));
    }
}
