//! Real faults for convergence tests: a folder tree made immutable (`chattr +i`, so every
//! write, create, rename and removal under it fails with `EPERM`, as on a read-only or failing
//! disk) and lifted again; a PostgreSQL memory schema whose server refuses every write
//! ([`refuse_pg_writes`]). Immutable trees need the `CAP_LINUX_IMMUTABLE` capability (root) and
//! a file system with inode flags (ext4, xfs, btrfs, tmpfs).

use std::path::{Path, PathBuf};
use std::process::Command;

fn chattr(flag: &str, root: &Path) -> Result<(), String> {
    // `-R` does not follow symbolic links; `-f` keeps going past entries without flags
    // (sockets, fifos).
    let out = Command::new("chattr")
        .args(["-R", "-f", flag])
        .arg(root)
        .output()
        .map_err(|e| format!("running chattr: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "chattr {flag} {}: {}",
            root.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Whether immutable trees can be made here. `false` outside CI skips the fault tests with a
/// note; under CI (`CI` set) a machine that cannot is a failure, never a silent skip.
pub fn available() -> bool {
    let probe = tempfile::tempdir().ok().and_then(|d| {
        let f = d.path().join("probe");
        std::fs::write(&f, b"x").ok()?;
        let frozen = chattr("+i", d.path()).is_ok() && std::fs::write(&f, b"y").is_err();
        let _ = chattr("-i", d.path());
        Some((frozen, d))
    });
    let ok = probe.is_some_and(|(frozen, _)| frozen);
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI: immutable files (chattr +i) are not available; the real-fault tests need root on ext4/xfs/btrfs/tmpfs"
        );
        eprintln!("skipped: chattr +i is not available here (needs root)");
    }
    ok
}

/// A tree made immutable; lifted by [`Frozen::thaw`] or when dropped (so a failing test never
/// leaves an undeletable temp folder behind).
pub struct Frozen {
    roots: Vec<PathBuf>,
}

impl Frozen {
    /// Makes every file and folder under each of `roots` immutable.
    pub fn freeze(roots: &[&Path]) -> Frozen {
        let f = Frozen {
            roots: roots.iter().map(|r| r.to_path_buf()).collect(),
        };
        for r in &f.roots {
            if let Err(e) = chattr("+i", r) {
                panic!("{e}");
            }
            // SQLite's `-shm` files are its shared memory, mapped into every connection, not
            // data: frozen, a mapped page past their end faults the process (SIGBUS) where a
            // broken disk fails the write. They stay writable.
            for shm in shm_files(r) {
                if let Err(e) = chattr("-i", &shm) {
                    panic!("{e}");
                }
            }
        }
        f
    }

    /// Lifts the fault.
    pub fn thaw(mut self) {
        self.lift();
    }

    fn lift(&mut self) {
        for r in std::mem::take(&mut self.roots) {
            if let Err(e) = chattr("-i", &r) {
                eprintln!("{e}");
            }
        }
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        self.lift();
    }
}

fn shm_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() => out.extend(shm_files(&p)),
            Ok(t) if t.is_file() && p.to_string_lossy().ends_with("-shm") => out.push(p),
            _ => {}
        }
    }
    out
}

/// Makes the PostgreSQL server at `url` refuse every write to the memory tables of `schema`
/// (a statement trigger that raises; tables not created yet are left alone), or with `on`
/// false lifts that fault. Uses `psql`.
pub fn refuse_pg_writes(url: &str, schema: &str, on: bool) {
    let s = format!("\"{schema}\"");
    let sql = if on {
        format!(
            "DO $do$ BEGIN \
             IF to_regclass('{s}.memories') IS NULL THEN RETURN; END IF; \
             CREATE FUNCTION {s}.injected_fault() RETURNS trigger LANGUAGE plpgsql AS \
             $f$BEGIN RAISE EXCEPTION 'injected fault: the memory server refuses writes'; END$f$; \
             CREATE TRIGGER injected_fault BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {s}.memories \
             FOR EACH STATEMENT EXECUTE FUNCTION {s}.injected_fault(); \
             CREATE TRIGGER injected_fault BEFORE INSERT OR UPDATE OR DELETE OR TRUNCATE ON {s}.agents \
             FOR EACH STATEMENT EXECUTE FUNCTION {s}.injected_fault(); \
             END $do$;"
        )
    } else {
        format!("DROP FUNCTION IF EXISTS {s}.injected_fault() CASCADE;")
    };
    let out = Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", url, "-c", &sql])
        .output()
        .unwrap_or_else(|e| panic!("running psql: {e}"));
    assert!(
        out.status.success(),
        "psql: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
