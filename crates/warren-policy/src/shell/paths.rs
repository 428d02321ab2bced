//! Path words of a shell line: the static check against the policy (workspace or read-write
//! roots; the four devices as devices) and what makes a path's meaning unknowable before the
//! line runs (`..` after a symbolic link, globs that may match links).

use super::{add_opaque, ShellError, ShellPlan, Word, MAX_GLOB_SCAN, SYSTEM_BIN_DIRS};
use crate::access::{Access, Denial};
use crate::authorize::is_device;
use crate::policy::SecurityPolicy;
use std::path::{Path, PathBuf};

impl SecurityPolicy {
    /// Paths whose meaning the lexical check cannot fix: `..` after a symbolic link (the
    /// kernel resolves `..` physically), globs that may match symbolic links.
    pub(super) fn note_path_opacity(&self, w: &Word, plan: &mut ShellPlan) {
        if w.dynamic || w.text.is_empty() {
            return;
        }
        let text = w.text.as_str();
        let (base, rel) = if let Some(rest) = text.strip_prefix("~/") {
            match &self.home {
                Some(h) => (h.clone(), rest),
                None => return,
            }
        } else if text.starts_with('~') {
            return;
        } else if let Some(rest) = text.strip_prefix('/') {
            (PathBuf::from("/"), rest)
        } else {
            (self.workspace.clone(), text)
        };
        let parts: Vec<&str> = rel.split('/').collect();
        // `mv dir new && cat new/link/x`: a link already in the workspace can be moved under a
        // name that does not exist yet, which the lexical check then takes for a plain path.
        if plan.links_may_change
            && !w.glob
            && std::fs::symlink_metadata(base.join(rel)).is_err()
            && *plan
                .links_in_workspace
                .get_or_insert_with(|| has_symlink(&self.workspace))
        {
            add_opaque(
                plan,
                format!(
                    "`{text}` does not exist yet, another command of the line moves or copies files, and the workspace holds symbolic links"
                ),
            );
            return;
        }
        if parts.contains(&"..") {
            let mut p = base.clone();
            let mut crossed = false;
            for c in &parts {
                if c.is_empty() || *c == "." {
                    continue;
                }
                if *c == ".." && crossed {
                    add_opaque(
                        plan,
                        format!(
                            "`{text}` has `..` after a symbolic link (the kernel resolves it physically)"
                        ),
                    );
                    return;
                }
                p.push(c);
                crossed |= std::fs::symlink_metadata(&p)
                    .map(|m| m.file_type().is_symlink())
                    .unwrap_or(false);
            }
        }
        if w.glob {
            let first = parts.iter().position(|p| p.contains(['*', '?', '[']));
            if let Some(k) = first {
                let why = format!("`{text}` is a glob that may match symbolic links");
                if k + 1 < parts.len() {
                    add_opaque(plan, why);
                    return;
                }
                let dir = base.join(parts[..k].join("/"));
                let links = std::fs::read_dir(&dir).map(|rd| {
                    let mut n = 0usize;
                    rd.flatten().any(|e| {
                        n += 1;
                        n > MAX_GLOB_SCAN || e.file_type().map(|t| t.is_symlink()).unwrap_or(true)
                    })
                });
                if links.unwrap_or(false) {
                    add_opaque(plan, why);
                }
            }
        }
    }

    /// Checks one path word. `access`: `None` for an argument (must be readable and writable),
    /// `Some((a, both))` for a redirection. Devices pass as devices.
    pub(super) fn check_shell_path(
        &self,
        w: &Word,
        access: Option<(Access, bool)>,
    ) -> Result<Option<PathBuf>, ShellError> {
        let looks_like_path = w.text.contains('/') || w.text.starts_with('~');
        if w.dynamic {
            if looks_like_path || access.is_some() {
                return Err(ShellError::DynamicPath {
                    word: w.text.clone(),
                });
            }
            return Ok(None);
        }
        if w.text.is_empty() {
            return Ok(None);
        }
        let literal = if w.glob {
            glob_prefix(&w.text)
        } else {
            w.text.clone()
        };
        let path = Path::new(&literal);
        let read = self.check(path, Access::Read);
        let device_access = match access {
            Some((a, false)) => a,
            _ => Access::Read,
        };
        if read.allowed
            && read.rule == crate::access::Rule::Device
            && is_device(&read.path, device_access)
        {
            return Ok(Some(read.path));
        }
        let need_read = !matches!(access, Some((Access::Write, false)));
        if need_read && !read.allowed {
            return Err(ShellError::Path {
                word: w.text.clone(),
                denial: deny(read),
            });
        }
        let write = self.check(path, Access::Write);
        if !write.allowed {
            return Err(ShellError::Path {
                word: w.text.clone(),
                denial: deny(write),
            });
        }
        // Arguments and redirections must be in the workspace or a read-write root, even
        // when `workspace_only` is off: the shell may read or write anything it names.
        if !(read.allowed && is_rw_rule(read.rule) && is_rw_rule(write.rule)) {
            let rule = if !read.allowed {
                read.rule
            } else {
                crate::access::Rule::OutsideWorkspace
            };
            return Err(ShellError::Path {
                word: w.text.clone(),
                denial: Denial {
                    path: write.path,
                    access: if read.allowed {
                        Access::Write
                    } else {
                        Access::Read
                    },
                    rule,
                    detail: Some(
                        "shell arguments must be inside the workspace or a read-write root".into(),
                    ),
                },
            });
        }
        Ok(Some(write.path))
    }

    pub(super) fn check_program_path(&self, cmd: &Word) -> Result<PathBuf, ShellError> {
        let d = self.check(Path::new(&cmd.text), Access::Read);
        if SYSTEM_BIN_DIRS.iter().any(|s| d.path.starts_with(s))
            && d.rule != crate::access::Rule::InvalidPath
        {
            return Ok(d.path);
        }
        match self.check_shell_path(cmd, None)? {
            Some(p) => Ok(p),
            None => Err(ShellError::DynamicPath {
                word: cmd.text.clone(),
            }),
        }
    }
}

fn is_rw_rule(rule: crate::access::Rule) -> bool {
    use crate::access::Rule;
    matches!(
        rule,
        Rule::Workspace | Rule::ReadWriteGrant | Rule::AllowedRoot
    )
}

fn deny(d: crate::access::Decision) -> Denial {
    Denial {
        path: d.path,
        access: d.access,
        rule: d.rule,
        detail: d.detail,
    }
}

/// The literal directory part of a glob: components before the first one with a glob char.
fn glob_prefix(text: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in text.split('/') {
        if part.contains(['*', '?', '[']) {
            break;
        }
        out.push(part);
    }
    let joined = out.join("/");
    if joined.is_empty() {
        if text.starts_with('/') {
            "/".into()
        } else {
            ".".into()
        }
    } else {
        joined
    }
}

/// Most directory entries looked at when searching the workspace for a symbolic link.
const MAX_LINK_SCAN: usize = 20_000;

/// Whether `root` holds a symbolic link (not following any); `true` when the search is cut
/// short, so an unfinished search never passes for "no links".
fn has_symlink(root: &Path) -> bool {
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            seen += 1;
            if seen > MAX_LINK_SCAN {
                return true;
            }
            match e.file_type() {
                Ok(t) if t.is_symlink() => return true,
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(_) => {}
                Err(_) => return true,
            }
        }
    }
    false
}
