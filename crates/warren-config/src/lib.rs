//! Warren's configuration layer: the install layout, loading and validating `config.toml` with
//! every error reported at once, editing it without losing comments, saving it atomically, and the
//! reference graph that the lifecycle service uses.

mod agent_edit;
mod api_error;
mod atomic;
mod authority;
mod decode;
mod document;
mod held;
mod issue;
mod layout;
mod lifecycle_edit;
mod load;
mod mcp_edit;
mod presets;
mod refs;
mod validate;

pub use atomic::{write_atomic, write_atomic_with, SaveFault, SaveStep};
pub use authority::{nested_workspace_warnings, secret_owner};
pub use decode::RISK_KEYS;
pub use document::{ConfigDocument, DocumentError, NewAgent};
pub use held::{held_references, HeldReference};
pub use issue::{ConfigErrors, Issue};
pub use layout::{resolve_install_root, HomeEnv, HostEnv, InstallLayout, LayoutError};
pub use lifecycle_edit::RemovedBlock;
pub use load::{
    load_config, parse_config, parse_for_install, ConfigCache, ConfigError, ConfigStore,
    LoadedConfig,
};
pub use mcp_edit::{mcp_server_path, StdioServer};
pub use presets::{default_config_text, Preset};
pub use refs::{references_to, RefKind, RefStrength, Reference};
pub use validate::{env_never_passed, normalize_cron, valid_mcp_server_name, NEVER_PASSED_ENV};
