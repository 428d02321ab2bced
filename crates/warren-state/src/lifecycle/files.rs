//! Durable file operations of the lifecycle: fsynced JSON writes (temp file, fsync, rename,
//! directory fsync), directory moves that survive a crash half-way, and archive names.

use super::error::LifecycleError;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};

/// Writes `value` as pretty JSON to `path` atomically and durably.
pub fn write_json<T: Serialize + ?Sized>(path: &Path, value: &T) -> Result<(), LifecycleError> {
    let bytes = serde_json::to_vec_pretty(value).map_err(|e| LifecycleError::BadFile {
        path: path.to_path_buf(),
        reason: format!("cannot encode: {e}"),
    })?;
    write_bytes(path, &bytes)
}

/// Writes bytes to `path` atomically and durably (creating the parent directory).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), LifecycleError> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| LifecycleError::io("creating", dir, e))?;
    }
    warren_config::write_atomic(path, bytes).map_err(|e| LifecycleError::io("writing", path, e))
}

/// Reads and decodes a JSON file.
pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, LifecycleError> {
    let bytes = fs::read(path).map_err(|e| LifecycleError::io("reading", path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| LifecycleError::BadFile {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

/// fsyncs a directory so that entries created or renamed in it survive a crash.
pub fn sync_dir(dir: &Path) -> Result<(), LifecycleError> {
    fs::File::open(dir)
        .and_then(|f| f.sync_all())
        .map_err(|e| LifecycleError::io("syncing", dir, e))
}

/// Whether a directory is missing or empty.
pub fn is_empty_dir(dir: &Path) -> bool {
    match fs::read_dir(dir) {
        Ok(mut it) => it.next().is_none(),
        Err(_) => true,
    }
}

/// What [`move_dir`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moved {
    /// The directory was moved.
    Moved,
    /// Nothing at the source and something at the target: an earlier run moved it.
    AlreadyThere,
    /// Nothing at either place.
    Nothing,
}

/// Moves a directory, idempotently: an empty target is replaced; a copy interrupted half-way
/// (cross-device moves copy then remove) is redone from the untouched source.
pub fn move_dir(from: &Path, to: &Path) -> Result<Moved, LifecycleError> {
    if !from.exists() {
        return Ok(if to.exists() {
            Moved::AlreadyThere
        } else {
            Moved::Nothing
        });
    }
    if to.exists() {
        if is_empty_dir(to) {
            fs::remove_dir(to).map_err(|e| LifecycleError::io("removing the empty", to, e))?;
        } else {
            return Err(LifecycleError::Taken(format!(
                "cannot move {} to {}: the target exists and is not empty",
                from.display(),
                to.display()
            )));
        }
    }
    let parent = to.parent().unwrap_or(Path::new("/"));
    fs::create_dir_all(parent).map_err(|e| LifecycleError::io("creating", parent, e))?;
    match fs::rename(from, to) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(18) => {
            // EXDEV: copy into a temp name beside the target, then swap it in.
            let tmp = parent.join(format!(
                ".{}.moving",
                to.file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default()
            ));
            if tmp.exists() {
                fs::remove_dir_all(&tmp).map_err(|e| LifecycleError::io("removing", &tmp, e))?;
            }
            copy_tree(from, &tmp)?;
            fs::rename(&tmp, to).map_err(|e| LifecycleError::io("renaming", &tmp, e))?;
            sync_dir(parent)?;
            fs::remove_dir_all(from).map_err(|e| LifecycleError::io("removing", from, e))?;
        }
        Err(e) => return Err(LifecycleError::io("moving", from, e)),
    }
    sync_dir(parent)?;
    if let Some(p) = from.parent() {
        let _ = sync_dir(p);
    }
    Ok(Moved::Moved)
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), LifecycleError> {
    fs::create_dir_all(to).map_err(|e| LifecycleError::io("creating", to, e))?;
    for entry in fs::read_dir(from).map_err(|e| LifecycleError::io("reading", from, e))? {
        let entry = entry.map_err(|e| LifecycleError::io("reading", from, e))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let ty = entry
            .file_type()
            .map_err(|e| LifecycleError::io("inspecting", &src, e))?;
        if ty.is_symlink() {
            let target = fs::read_link(&src).map_err(|e| LifecycleError::io("reading", &src, e))?;
            std::os::unix::fs::symlink(target, &dst)
                .map_err(|e| LifecycleError::io("linking", &dst, e))?;
        } else if ty.is_dir() {
            copy_tree(&src, &dst)?;
        } else {
            fs::copy(&src, &dst).map_err(|e| LifecycleError::io("copying", &src, e))?;
            fs::File::open(&dst)
                .and_then(|f| f.sync_all())
                .map_err(|e| LifecycleError::io("syncing", &dst, e))?;
        }
    }
    Ok(())
}

/// Removes `dir` when it exists and is empty (the `agents/<alias>/` left after a move).
pub fn remove_if_empty(dir: &Path) {
    if dir.is_dir() && is_empty_dir(dir) {
        let _ = fs::remove_dir(dir);
    }
}

/// `<alias>-<UTC YYYYmmddTHHMMSSZ>`, with `-2`, `-3`, ... when that archive exists.
pub fn archive_dir(deleted: &Path, alias: &str, now: DateTime<Utc>) -> PathBuf {
    let base = format!("{alias}-{}", now.format("%Y%m%dT%H%M%SZ"));
    let mut candidate = deleted.join(&base);
    let mut n = 2;
    while candidate.exists() {
        candidate = deleted.join(format!("{base}-{n}"));
        n += 1;
    }
    candidate
}

/// Writes a text file durably.
pub fn write_text(path: &Path, text: &str) -> Result<(), LifecycleError> {
    write_bytes(path, text.as_bytes())
}

/// Checks on disk that a move of `from` to `to` took effect: nothing is left at `from`.
/// A step is journaled done only after this check.
pub fn verify_moved(from: &Path, to: &Path) -> Result<(), LifecycleError> {
    if fs::symlink_metadata(from).is_ok() {
        return Err(LifecycleError::BadFile {
            path: from.to_path_buf(),
            reason: format!("still exists after the move to {}", to.display()),
        });
    }
    Ok(())
}
