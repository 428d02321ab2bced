//! The one authorization function (rules §2.1). Every tool and the sandbox rule construction ask
//! [`SecurityPolicy::check`] / [`SecurityPolicy::authorize`]; nothing else decides on a path.

use crate::access::{Access, Authorized, Decision, Denial, Rule};
use crate::policy::{RootSource, SecurityPolicy, Tier};
use crate::resolve::{self, ResolveError};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The POSIX device files every agent may read and write through every tool and sandbox. Writing
/// them changes nothing outside the device (`/dev/random` mixes the bytes into the pool without
/// crediting entropy), and no sandbox can offer them read-only: a read-only mount does not stop
/// writing a device node.
pub const DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

impl SecurityPolicy {
    /// Resolves `path` (relative paths join the workspace) and decides `access` on it. Never
    /// fails: a malformed path is a denied decision with rule `invalid_path` or `symlink_loop`.
    pub fn check(&self, path: &Path, access: Access) -> Decision {
        self.check_from(&self.workspace, path, access)
    }

    /// [`check`](Self::check) with relative paths joining `base` instead of the workspace (a
    /// session's working directory). The base only anchors the path: the decision is the same.
    pub fn check_from(&self, base: &Path, path: &Path, access: Access) -> Decision {
        match resolve::resolve(path, base, self.home.as_deref()) {
            Ok(r) => {
                // `/proc/self` resolves to Warren's own pid here; the child asking means its own.
                let own = own_proc_entry(&r.lexical);
                let (allowed, rule) = match own {
                    Some(p) => self.decide(p, access),
                    None => self.decide(&r.resolved, access),
                };
                Decision {
                    allowed,
                    access,
                    path: r.resolved,
                    lexical: r.lexical,
                    rule,
                    detail: None,
                }
            }
            Err(e) => {
                let rule = match e {
                    ResolveError::TooManySymlinks(_) => Rule::SymlinkLoop,
                    _ => Rule::InvalidPath,
                };
                Decision {
                    allowed: false,
                    access,
                    path: path.to_path_buf(),
                    lexical: path.to_path_buf(),
                    rule,
                    detail: Some(e.to_string()),
                }
            }
        }
    }

    /// [`check`](Self::check) as a `Result`: the authorized (resolved) path, or the denial.
    pub fn authorize(&self, path: &Path, access: Access) -> Result<Authorized, Denial> {
        self.check(path, access).into_result()
    }

    /// [`check_from`](Self::check_from) as a `Result`.
    pub fn authorize_from(
        &self,
        base: &Path,
        path: &Path,
        access: Access,
    ) -> Result<Authorized, Denial> {
        self.check_from(base, path, access).into_result()
    }

    /// `path` made absolute the way [`check_from`](Self::check_from) does before resolving
    /// links (`~` expanded, joined to `base`, `.`/`..` folded); `None` when it is malformed.
    pub fn absolute_from(&self, base: &Path, path: &Path) -> Option<std::path::PathBuf> {
        resolve::lexical_absolute(path, base, self.home.as_deref()).ok()
    }

    /// The decision table of rules §2.1 on an already resolved, absolute path. Pure: no I/O.
    ///
    /// Order: devices; runtime state; kernel interfaces (another process's `/proc/<pid>`,
    /// writes under `/proc` and `/sys`); forbidden paths; protected ancestors (writing the
    /// install root or a strict ancestor of it, of runtime state or of a root the agent may not
    /// write: moving a directory moves everything in it); the deepest root containing the path
    /// (ties: the most restrictive); outside every root, `workspace_only` decides.
    pub fn decide(&self, resolved: &Path, access: Access) -> (bool, Rule) {
        self.decide_with(resolved, access, true)
    }

    /// [`decide`](Self::decide), optionally without the protected-ancestor rule: mount-based
    /// sandboxes give a directory the rights of its contents and protect ancestors with mount
    /// points instead.
    pub(crate) fn decide_with(
        &self,
        resolved: &Path,
        access: Access,
        ancestors: bool,
    ) -> (bool, Rule) {
        if is_device(resolved, access) {
            return (true, Rule::Device);
        }
        if self.runtime_state.iter().any(|p| under(resolved, p)) {
            return (false, Rule::RuntimeState);
        }
        if is_kernel_interface(resolved, access) {
            return (false, Rule::KernelInterface);
        }
        if self.forbidden.iter().any(|p| under(resolved, p)) {
            return (false, Rule::ForbiddenPath);
        }
        if ancestors && access == Access::Write && self.is_protected_ancestor(resolved) {
            return (false, Rule::ProtectedAncestor);
        }
        let mut best: Option<(usize, bool, Rule)> = None;
        for root in &self.roots {
            if !under(resolved, &root.path) {
                continue;
            }
            let (ok, rule) = root_decision(root.tier, &root.source, access);
            best = match best {
                Some((d, _, _)) if d > root.depth => best,
                // A tie keeps the most restrictive answer.
                Some((d, false, r)) if d == root.depth => Some((d, false, r)),
                _ => Some((root.depth, ok, rule)),
            };
        }
        if let Some((_, ok, rule)) = best {
            return (ok, rule);
        }
        if self.workspace_only {
            (false, Rule::OutsideWorkspace)
        } else {
            (true, Rule::Unrestricted)
        }
    }
}

impl SecurityPolicy {
    /// The paths whose strict ancestors no agent may write: the install root (itself included,
    /// see [`is_protected_ancestor`](Self::is_protected_ancestor)), runtime state, forbidden
    /// paths and every root whose tier forbids writing or reading. Renaming an ancestor moves
    /// what is beneath it: a write to what may not be written, or a way to read what may not be
    /// read at a path where reading is allowed.
    pub fn protected_targets(&self) -> impl Iterator<Item = &Path> {
        std::iter::once(self.install_root.as_path())
            .chain(self.runtime_state.iter().map(std::path::PathBuf::as_path))
            .chain(self.forbidden.iter().map(std::path::PathBuf::as_path))
            .chain(
                self.roots
                    .iter()
                    .filter(|r| !r.tier.can_write() || !r.tier.can_read())
                    .map(|r| r.path.as_path()),
            )
    }

    /// Whether `resolved` is the install root or a strict ancestor of a protected target. The
    /// agent's own workspace is never one: writing "in `.`" is what an agent does, and the
    /// workspace itself cannot be moved from inside a sandbox (a mount point under bubblewrap;
    /// under Landlock its parent, an ancestor of the same target, has no rule).
    pub fn is_protected_ancestor(&self, resolved: &Path) -> bool {
        resolved == self.install_root
            || (resolved != self.workspace
                && self
                    .protected_targets()
                    .any(|t| t != resolved && under(t, resolved)))
    }
}

/// The lexical `/proc/self/...` or `/proc/thread-self/...` path: the asking process's own
/// entries, decided as they are written rather than through Warren's own pid.
fn own_proc_entry(lexical: &Path) -> Option<&Path> {
    (under(lexical, Path::new("/proc/self")) || under(lexical, Path::new("/proc/thread-self")))
        .then_some(lexical)
}

/// Another process's `/proc/<pid>` entries (which pid is the caller's is unknowable here), or
/// any write under `/proc` or `/sys`.
pub fn is_kernel_interface(resolved: &Path, access: Access) -> bool {
    let proc = Path::new("/proc");
    if access == Access::Write && (under(resolved, proc) || under(resolved, Path::new("/sys"))) {
        return true;
    }
    match resolved.strip_prefix(proc) {
        Ok(rest) => rest.components().next().is_some_and(|c| {
            let b = c.as_os_str().as_bytes();
            !b.is_empty() && b.iter().all(u8::is_ascii_digit)
        }),
        Err(_) => false,
    }
}

pub use crate::resolve::under;

/// Whether `resolved` is one of the always-allowed [`DEVICES`] (for reading and writing alike).
pub fn is_device(resolved: &Path, _access: Access) -> bool {
    DEVICES.iter().any(|d| resolved == Path::new(d))
}

fn root_decision(tier: Tier, source: &RootSource, access: Access) -> (bool, Rule) {
    let allow_rule = match (tier, source) {
        (_, RootSource::Workspace) => Rule::Workspace,
        (_, RootSource::AllowedRoot(_)) => Rule::AllowedRoot,
        (Tier::ReadWrite, _) => Rule::ReadWriteGrant,
        (Tier::ReadOnly, _) => Rule::ReadOnlyGrant,
        (Tier::WriteOnly, _) => Rule::WriteOnlyGrant,
    };
    match (tier, access) {
        (Tier::ReadOnly, Access::Write) => (false, Rule::ReadOnlyGrant),
        (Tier::WriteOnly, Access::Read) => (false, Rule::WriteOnlyGrant),
        _ => (true, allow_rule),
    }
}
