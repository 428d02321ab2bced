//! Whether a ZeroClaw install sits where ZeroClaw itself would look, for the window's
//! first-start offer to import it.

use serde::Serialize;
use std::path::Path;
use warren_types::ApiError;

use crate::{default_source, read_records, Importer};

/// A ZeroClaw install found at its default place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ZeroclawInstall {
    /// Its folder (the one holding `config.toml`).
    pub path: String,
    /// Whether this Warren install already imported it.
    pub imported: bool,
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

impl Importer<'_> {
    /// The ZeroClaw install at ZeroClaw's own default place (`$ZEROCLAW_CONFIG_DIR`, else
    /// `~/.zeroclaw`), when it has a `config.toml`; `None` otherwise. Reads nothing else of it.
    pub fn zeroclaw_install(&self) -> Result<Option<ZeroclawInstall>, ApiError> {
        let Some(path) = default_source(&self.env.vars, self.env.home.as_deref()) else {
            return Ok(None);
        };
        if !path.join("config.toml").is_file() {
            return Ok(None);
        }
        let imported = read_records(self.layout())?
            .iter()
            .any(|r| same_folder(&r.source, &path));
        Ok(Some(ZeroclawInstall {
            path: path.display().to_string(),
            imported,
        }))
    }
}
