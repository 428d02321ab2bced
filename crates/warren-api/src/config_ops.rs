//! `warren init`, `warren config validate` and the desktop app's first-start install.

use crate::{errors::config_error, Warren};
use std::fs;
use warren_config::{default_config_text, ConfigError, Issue, Preset};
use warren_types::{ApiError, ConfigIssue, ErrorCode, ValidationReport};

fn issue_dto(i: &Issue) -> ConfigIssue {
    ConfigIssue {
        path: i.path.clone(),
        message: i.message.clone(),
        line: i.line.and_then(|l| u32::try_from(l).ok()),
        column: i.column.and_then(|c| u32::try_from(c).ok()),
    }
}

impl Warren {
    /// Writes a fresh commented config whose first agent uses `preset`, and creates the install
    /// folders. Refuses when a config already exists.
    pub fn init(&self, preset: Preset) -> Result<(), ApiError> {
        self.store
            .create(&default_config_text(preset))
            .map_err(config_error)?;
        let layout = self.layout();
        for dir in [
            layout.shared_skills(),
            layout.data_dir(),
            layout.logs_dir(),
            layout.default_workspace("assistant"),
        ] {
            fs::create_dir_all(&dir).map_err(|e| {
                ApiError::new(ErrorCode::Io, format!("creating {}: {e}", dir.display()))
            })?;
        }
        tracing::info!(agent = "assistant", preset = %preset, "install initialised");
        Ok(())
    }

    /// Creates the default install (one `assistant` agent, `balanced` profile, SQLite memory,
    /// local Ollama route) when no config exists. Returns true when it created one.
    pub fn ensure_default_install(&self) -> Result<bool, ApiError> {
        if self.layout().config_path().exists() {
            return Ok(false);
        }
        match self.init(Preset::Balanced) {
            Ok(()) => Ok(true),
            Err(e) if e.code == ErrorCode::AlreadyExists => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Validates the config, reporting every error at once. A missing or unreadable file is an
    /// error; an invalid one is a report with `ok = false`.
    pub fn validate_config(&self) -> Result<ValidationReport, ApiError> {
        let path = self.layout().config_path().display().to_string();
        match self.store.load() {
            Ok(loaded) => Ok(ValidationReport {
                path,
                ok: true,
                errors: Vec::new(),
                warnings: loaded.warnings.iter().map(issue_dto).collect(),
                agents: u32::try_from(loaded.config.agents.len()).unwrap_or(u32::MAX),
            }),
            Err(ConfigError::Invalid { errors, .. }) => Ok(ValidationReport {
                path,
                ok: false,
                errors: errors.issues.iter().map(issue_dto).collect(),
                warnings: Vec::new(),
                agents: 0,
            }),
            Err(e) => Err(config_error(e)),
        }
    }
}
