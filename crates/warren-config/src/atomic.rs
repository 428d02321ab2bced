//! Atomic file replacement: write a temp file beside the target, fsync it, rename it over the
//! target, fsync the directory. A failure at any step leaves the old file untouched.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// The steps of an atomic save, in order; a [`SaveFault`] can fail any of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaveStep {
    /// Creating the temp file.
    CreateTemp,
    /// Writing the bytes.
    Write,
    /// fsync of the temp file.
    Sync,
    /// Renaming the temp file over the target.
    Rename,
    /// fsync of the parent directory.
    SyncDir,
}

/// Test hook: decides whether a step fails. Production code passes [`NoFault`].
pub trait SaveFault {
    /// Returns an error to make `step` fail.
    fn check(&self, step: SaveStep) -> io::Result<()>;
}

/// The hook that never fails.
pub struct NoFault;

impl SaveFault for NoFault {
    fn check(&self, _step: SaveStep) -> io::Result<()> {
        Ok(())
    }
}

impl SaveFault for SaveStep {
    /// A step value used as a hook fails exactly that step.
    fn check(&self, step: SaveStep) -> io::Result<()> {
        if *self == step {
            Err(io::Error::other(format!("injected failure at {step:?}")))
        } else {
            Ok(())
        }
    }
}

/// Replaces `path` with `bytes` atomically, mode 0600.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, &NoFault)
}

/// [`write_atomic`] with a fault hook consulted before each step.
pub fn write_atomic_with(path: &Path, bytes: &[u8], fault: &dyn SaveFault) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let tmp: PathBuf = dir.join(format!(
        ".{}.tmp-{}-{nanos}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        fault.check(SaveStep::CreateTemp)?;
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)?;
        f.set_permissions(fs::Permissions::from_mode(0o600))?;
        fault.check(SaveStep::Write)?;
        f.write_all(bytes)?;
        fault.check(SaveStep::Sync)?;
        f.sync_all()?;
        drop(f);
        fault.check(SaveStep::Rename)?;
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fault.check(SaveStep::SyncDir)?;
    File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_failing_step_before_rename_keeps_old_file() {
        for step in [
            SaveStep::CreateTemp,
            SaveStep::Write,
            SaveStep::Sync,
            SaveStep::Rename,
        ] {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("config.toml");
            fs::write(&p, "old = 1\n").unwrap();
            let err = write_atomic_with(&p, b"new = 2\n", &step).unwrap_err();
            assert!(err.to_string().contains("injected"), "{step:?}: {err}");
            assert_eq!(fs::read_to_string(&p).unwrap(), "old = 1\n", "{step:?}");
            let leftovers: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
            assert_eq!(leftovers.len(), 1, "{step:?}: temp file left behind");
        }
    }

    #[test]
    fn success_replaces_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        fs::write(&p, "old = 1\n").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&p, b"new = 2\n").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "new = 2\n");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }

    #[test]
    fn failing_dir_sync_after_rename_has_new_content() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("config.toml");
        fs::write(&p, "old = 1\n").unwrap();
        assert!(write_atomic_with(&p, b"new = 2\n", &SaveStep::SyncDir).is_err());
        assert_eq!(fs::read_to_string(&p).unwrap(), "new = 2\n");
    }
}
