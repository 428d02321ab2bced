//! Set-up shared by this crate's unit tests.

use crate::Warren;
use warren_config::InstallLayout;

/// A scratch install with `config` as its config.toml, opened.
pub(crate) fn install(config: &str) -> (tempfile::TempDir, Warren) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), config).unwrap();
    let warren = Warren::open(InstallLayout::new(dir.path()));
    (dir, warren)
}

/// A multi-threaded runtime for a test body.
pub(crate) fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
}
