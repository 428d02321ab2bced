//! The words the CLI takes from a fixed list: clap checks them, names the flag or argument and
//! the choices when one is wrong (with the close one, if any), and lists them in `--help`. Each
//! is spelled as the config, the JSON output and the service spell it; each converts into the
//! service's own type.

use warren_api::import::Collision;
use warren_api::logs_view::LogLevelFilter;
use warren_api::permission_map::PermissionAspect;
use warren_api::profiles::ProfileKind;
use warren_config::Preset;
use warren_types::{AccessMode, ApprovalDecision, MemoryBackendKind};

/// The answer to an approval request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Decision {
    /// Run this call.
    Approve,
    /// Run this call and every later call of the same tool in the session.
    Session,
    /// Do not run it.
    Deny,
}

impl From<Decision> for ApprovalDecision {
    fn from(d: Decision) -> Self {
        match d {
            Decision::Approve => ApprovalDecision::ApproveOnce,
            Decision::Session => ApprovalDecision::ApproveSession,
            Decision::Deny => ApprovalDecision::Deny,
        }
    }
}

/// A kind of profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Kind {
    /// A risk profile (`[risk_profiles.<name>]`).
    Risk,
    /// A runtime profile (`[runtime_profiles.<name>]`).
    Runtime,
}

impl From<Kind> for ProfileKind {
    fn from(k: Kind) -> Self {
        match k {
            Kind::Risk => ProfileKind::Risk,
            Kind::Runtime => ProfileKind::Runtime,
        }
    }
}

/// Access on a sibling's workspace, or none (the grant is removed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Access {
    /// Read-only.
    Read,
    /// Write-only (no read).
    Write,
    /// Read and write.
    ReadWrite,
    /// No access: remove the grant.
    None,
}

impl From<Access> for Option<AccessMode> {
    fn from(a: Access) -> Self {
        match a {
            Access::Read => Some(AccessMode::Read),
            Access::Write => Some(AccessMode::Write),
            Access::ReadWrite => Some(AccessMode::ReadWrite),
            Access::None => None,
        }
    }
}

/// A permission one agent may have on another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Aspect {
    /// Reading the peer's workspace.
    Read,
    /// Writing the peer's workspace.
    Write,
    /// Reading the peer's memory.
    Memory,
    /// Delegating to the peer.
    Delegate,
}

impl From<Aspect> for PermissionAspect {
    fn from(a: Aspect) -> Self {
        match a {
            Aspect::Read => PermissionAspect::Read,
            Aspect::Write => PermissionAspect::Write,
            Aspect::Memory => PermissionAspect::Memory,
            Aspect::Delegate => PermissionAspect::Delegate,
        }
    }
}

/// A memory backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Backend {
    /// SQLite, one file per install.
    Sqlite,
    /// PostgreSQL.
    Postgres,
    /// Lucid, through its command.
    Lucid,
    /// Markdown files.
    Markdown,
    /// Qdrant.
    Qdrant,
    /// No memory.
    None,
}

impl From<Backend> for MemoryBackendKind {
    fn from(b: Backend) -> Self {
        match b {
            Backend::Sqlite => MemoryBackendKind::Sqlite,
            Backend::Postgres => MemoryBackendKind::Postgres,
            Backend::Lucid => MemoryBackendKind::Lucid,
            Backend::Markdown => MemoryBackendKind::Markdown,
            Backend::Qdrant => MemoryBackendKind::Qdrant,
            Backend::None => MemoryBackendKind::None,
        }
    }
}

/// The least severe log level shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Level {
    /// Errors only.
    Error,
    /// Warnings and errors.
    Warn,
    /// Information and more severe.
    Info,
    /// Debugging and more severe.
    Debug,
    /// Everything.
    Trace,
}

impl From<Level> for LogLevelFilter {
    fn from(l: Level) -> Self {
        match l {
            Level::Error => LogLevelFilter::Error,
            Level::Warn => LogLevelFilter::Warn,
            Level::Info => LogLevelFilter::Info,
            Level::Debug => LogLevelFilter::Debug,
            Level::Trace => LogLevelFilter::Trace,
        }
    }
}

/// What an import does with an entry whose name Warren already uses for other settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Collisions {
    /// Import it as `<name>_zeroclaw`; the imported agents use that one.
    Rename,
    /// Keep Warren's entry; the imported agents use it.
    Skip,
    /// Overwrite Warren's entry with the imported one.
    Replace,
}

impl From<Collisions> for Collision {
    fn from(c: Collisions) -> Self {
        match c {
            Collisions::Rename => Collision::Rename,
            Collisions::Skip => Collision::Skip,
            Collisions::Replace => Collision::Replace,
        }
    }
}

/// The risk profile of a fresh install's first agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum PresetName {
    /// Read-only autonomy, no shell beyond reading, landlock required.
    LockedDown,
    /// Supervised autonomy: asks before risky actions.
    Balanced,
    /// Full autonomy inside the workspace; forbidden paths and the sandbox still apply.
    Yolo,
}

impl From<PresetName> for Preset {
    fn from(p: PresetName) -> Self {
        match p {
            PresetName::LockedDown => Preset::LockedDown,
            PresetName::Balanced => Preset::Balanced,
            PresetName::Yolo => Preset::Yolo,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;
    use serde::de::DeserializeOwned;

    /// Each choice's name, in declaration order.
    fn names<T: ValueEnum>() -> Vec<String> {
        T::value_variants()
            .iter()
            .filter_map(ValueEnum::to_possible_value)
            .map(|p| p.get_name().to_string())
            .collect()
    }

    /// Every choice converts into the service value its own name spells (as the config and
    /// the JSON output spell it), and no two choices into the same one.
    fn spelled_as_serde<T, U>(all: usize)
    where
        T: ValueEnum + Copy + Into<U>,
        U: DeserializeOwned + PartialEq + std::fmt::Debug,
    {
        let names = names::<T>();
        assert_eq!(names.len(), all, "{names:?}");
        for (v, name) in T::value_variants().iter().zip(&names) {
            let by_name: U = serde_json::from_value(serde_json::json!(name))
                .unwrap_or_else(|e| panic!("`{name}` does not name a service value: {e}"));
            assert_eq!((*v).into(), by_name, "`{name}`");
        }
    }

    #[test]
    fn the_choices_are_the_words_the_service_spells() {
        spelled_as_serde::<Kind, ProfileKind>(2);
        spelled_as_serde::<Aspect, PermissionAspect>(4);
        spelled_as_serde::<Backend, MemoryBackendKind>(6);
        spelled_as_serde::<Level, LogLevelFilter>(LogLevelFilter::ALL.len());
        spelled_as_serde::<Collisions, Collision>(3);
        for (v, name) in Backend::value_variants().iter().zip(names::<Backend>()) {
            assert_eq!(
                MemoryBackendKind::from_name(&name),
                Some((*v).into()),
                "{name}"
            );
        }
        for (v, name) in PresetName::value_variants()
            .iter()
            .zip(names::<PresetName>())
        {
            assert_eq!(name.parse::<Preset>(), Ok((*v).into()), "{name}");
            assert_eq!(Preset::from(*v).as_str(), name);
        }
        assert_eq!(names::<PresetName>().len(), 3);
        assert_eq!(
            names::<Access>(),
            ["read", "write", "read_write", "none"].map(String::from)
        );
        for (v, name) in Access::value_variants().iter().zip(names::<Access>()) {
            let expected: Option<AccessMode> =
                (name != "none").then(|| serde_json::from_value(serde_json::json!(name)).unwrap());
            assert_eq!(Option::<AccessMode>::from(*v), expected, "{name}");
        }
        assert_eq!(
            names::<Decision>(),
            ["approve", "session", "deny"].map(String::from)
        );
        assert_eq!(
            Decision::value_variants()
                .iter()
                .map(|d| ApprovalDecision::from(*d))
                .collect::<Vec<_>>(),
            [
                ApprovalDecision::ApproveOnce,
                ApprovalDecision::ApproveSession,
                ApprovalDecision::Deny
            ]
        );
    }
}
