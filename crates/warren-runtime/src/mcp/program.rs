//! A stdio server's program and the directories of its own files that its sandbox may read.

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use warren_policy::sandbox::plan::SYSTEM_DIRS;

/// Script extensions whose file (and package folder) a server's sandbox may read.
const SCRIPT_EXTENSIONS: &[&str] = &["js", "mjs", "cjs", "ts", "py"];

/// Finds `command` the way a shell would: a path (relative to `cwd` when it has no leading
/// `/`) or a name looked up in `path_var`. Returns the absolute path of an existing file.
pub(crate) fn resolve_program(command: &str, cwd: &Path, path_var: &str) -> Option<PathBuf> {
    if command.contains('/') {
        let p = cwd.join(command);
        return p.is_file().then_some(p);
    }
    std::env::split_paths(OsStr::new(path_var))
        .filter(|d| d.is_absolute())
        .map(|d| d.join(command))
        .find(|p| p.is_file())
}

/// The directories a server's sandbox may read besides the agent's own: the installation
/// folder of `program` when it lies outside the system directories (`<prefix>` for
/// `<prefix>/bin/<name>`), and for the first argument that is a script file (`.js`, `.mjs`,
/// `.cjs`, `.ts`, `.py`), its package folder: the outermost `node_modules` folder on its path,
/// or else the script's own directory. Other arguments (directories, data files) get nothing:
/// what the server may reach there is decided by the agent's policy.
pub(crate) fn program_dirs(program: &Path, args: &[String], cwd: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let real = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    let system = SYSTEM_DIRS.iter().any(|d| {
        let d = std::fs::canonicalize(d).unwrap_or_else(|_| PathBuf::from(d));
        real.starts_with(d)
    });
    if !system {
        if let Some(parent) = real.parent() {
            let prefix = match parent.file_name() {
                Some(n) if n == "bin" => parent.parent().unwrap_or(parent),
                _ => parent,
            };
            dirs.push(prefix.to_path_buf());
        }
    }
    let script = args
        .iter()
        .filter(|a| !a.starts_with('-'))
        .map(|a| cwd.join(a))
        .find(|p| {
            p.is_file()
                && p.extension()
                    .and_then(OsStr::to_str)
                    .is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e))
        });
    if let Some(script) = script {
        let script = std::fs::canonicalize(&script).unwrap_or(script);
        dirs.push(package_folder(&script));
    }
    dirs.sort();
    dirs.dedup();
    dirs
}

/// The outermost `node_modules` folder on `script`'s path, or the script's directory.
fn package_folder(script: &Path) -> PathBuf {
    let mut acc = PathBuf::new();
    for c in script.components() {
        acc.push(c);
        if matches!(c, Component::Normal(n) if n == "node_modules") {
            return acc;
        }
    }
    script
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_get_their_package_folder_and_directories_get_nothing() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        let pkg = root.join("proj/node_modules/@scope/srv/dist");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join("index.js"), "").unwrap();
        let data = root.join("data");
        std::fs::create_dir_all(&data).unwrap();
        let node = resolve_program("sh", &root, "/usr/bin:/bin").unwrap();
        let dirs = program_dirs(
            &node,
            &[
                pkg.join("index.js").display().to_string(),
                data.display().to_string(),
            ],
            &root,
        );
        assert_eq!(dirs, vec![root.join("proj/node_modules")]);
        std::fs::write(root.join("tool.py"), "").unwrap();
        let dirs = program_dirs(&node, &["-u".into(), "tool.py".into()], &root);
        assert_eq!(dirs, vec![root.clone()]);
        assert!(program_dirs(&node, &[data.display().to_string()], &root).is_empty());
    }

    #[test]
    fn a_program_outside_the_system_gets_its_prefix() {
        let t = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(t.path()).unwrap();
        std::fs::create_dir_all(root.join("venv/bin")).unwrap();
        std::fs::write(root.join("venv/bin/python3"), "").unwrap();
        let p = resolve_program("venv/bin/python3", &root, "").unwrap();
        assert_eq!(program_dirs(&p, &[], &root), vec![root.join("venv")]);
        assert!(resolve_program("no-such-program-here", &root, "/usr/bin").is_none());
    }
}
