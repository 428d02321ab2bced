//! The ZeroClaw install fixture (`fixtures/zeroclaw-v3/`, described in `fixtures/zeroclaw-v3.md`)
//! and helpers to copy it and to prove a copy was left unmodified.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The fixture folder in the repository (never written by tests: copy it first).
pub fn zeroclaw_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/zeroclaw-v3")
}

/// Copies the fixture to `dest` (created), adds the two empty folders git does not keep and
/// gives the key and config files mode 0600, as ZeroClaw leaves them. Returns `dest`.
pub fn copy_zeroclaw_fixture(dest: &Path) -> io::Result<PathBuf> {
    copy_tree(&zeroclaw_fixture(), dest)?;
    fs::create_dir_all(dest.join("shared"))?;
    fs::create_dir_all(dest.join("data/memory/archive"))?;
    for f in [".secret_key", "config.toml"] {
        fs::set_permissions(dest.join(f), fs::Permissions::from_mode(0o600))?;
    }
    Ok(dest.to_path_buf())
}

/// Recursively copies `from` to `to`, files with their bytes and their mode bits.
pub fn copy_tree(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir_all(to)?;
    for e in fs::read_dir(from)? {
        let e = e?;
        let target = to.join(e.file_name());
        let ty = e.file_type()?;
        if ty.is_dir() {
            copy_tree(&e.path(), &target)?;
        } else if ty.is_file() {
            fs::copy(e.path(), &target)?;
            let mode = e.metadata()?.permissions().mode() | 0o200;
            fs::set_permissions(&target, fs::Permissions::from_mode(mode))?;
        }
    }
    Ok(())
}

/// Every entry under `root`: relative path → (mode, bytes; empty for a folder). Two equal
/// snapshots mean nothing was added, removed or changed.
pub fn tree_snapshot(root: &Path) -> io::Result<BTreeMap<String, (u32, Vec<u8>)>> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out)?;
    Ok(out)
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (u32, Vec<u8>)>) -> io::Result<()> {
    for e in fs::read_dir(dir)? {
        let e = e?;
        let p = e.path();
        let rel = p
            .strip_prefix(root)
            .map_err(io::Error::other)?
            .to_string_lossy()
            .into_owned();
        let meta = fs::symlink_metadata(&p)?;
        let mode = meta.permissions().mode();
        if meta.is_dir() {
            out.insert(format!("{rel}/"), (mode, Vec::new()));
            walk(root, &p, out)?;
        } else {
            out.insert(rel, (mode, fs::read(&p)?));
        }
    }
    Ok(())
}
