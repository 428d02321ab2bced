//! Warren's transport-neutral service layer. The `warren` CLI and the desktop app both call these
//! functions and render their results; errors are [`ApiError`] with a stable code.

mod agents;
mod config_ops;
mod errors;
pub mod logging;
pub mod policy;
mod secrets;

pub use errors::config_error;
pub use secrets::SecretEntry;
pub use warren_runtime::receipts::Verification;
pub use warren_types::{ApiError, ErrorCode};

use warren_config::{ConfigStore, InstallLayout, LoadedConfig};

/// A handle on one install: the entry point of every service function.
pub struct Warren {
    store: ConfigStore,
}

impl Warren {
    /// Opens the install at `layout` (nothing is read until a function needs it).
    pub fn open(layout: InstallLayout) -> Self {
        Warren {
            store: ConfigStore::new(layout),
        }
    }

    /// The install layout.
    pub fn layout(&self) -> &InstallLayout {
        self.store.layout()
    }

    /// The config store (for edits that must be validated and saved atomically).
    pub fn config_store(&self) -> &ConfigStore {
        &self.store
    }

    /// Loads and validates the config.
    pub fn load(&self) -> Result<LoadedConfig, ApiError> {
        self.store.load().map_err(config_error)
    }
}
