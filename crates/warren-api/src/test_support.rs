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

/// Asserts that every `(value, code)` pair serialises to exactly the JSON string `code` and
/// that the string reads back as the value: the wire spelling of a view's code enum.
pub(crate) fn assert_codes<T>(table: &[(T, &str)])
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    for (value, code) in table {
        let json = serde_json::to_string(value).unwrap();
        assert_eq!(json, format!("\"{code}\""), "{value:?}");
        let back: T = serde_json::from_str(&json).unwrap();
        assert_eq!(&back, value);
    }
}
