//! The filesystem plan a sandbox enforces, derived from the policy's own decisions: every
//! uniform subtree gets exactly the rights [`SecurityPolicy::decide`] gives it. A directory
//! with a policy boundary strictly beneath it never gets a rule itself (Landlock rights are
//! inherited downwards); its entries are visited instead.

use crate::access::Access;
use crate::authorize::{under, DEVICES};
use crate::policy::SecurityPolicy;
use crate::resolve;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Directories a program needs to run: read and execute (rules §4).
pub const SYSTEM_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc"];

/// Kernel interfaces: never granted wholesale with the rest of `/`, read-only at most (the
/// policy decides them, see [`crate::authorize::is_kernel_interface`]).
pub const KERNEL_DIRS: &[&str] = &["/proc", "/sys"];

/// The only `/proc` entries a Landlock rule grants (read-only, when the policy allows reading
/// them): system-wide facts. `/proc` itself never gets a rule, because a rule on it would cover
/// every `/proc/<pid>` (Landlock cannot tell the caller's own pid from Warren's, and its ptrace
/// restriction does not cover `environ` or `maps`). Under bubblewrap the sandbox has its own
/// `/proc` for its own pid namespace.
pub const PROC_FILES: &[&str] = &[
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/uptime",
    "/proc/loadavg",
    "/proc/version",
    "/proc/filesystems",
    "/proc/sys",
];

/// The rights of one uniform subtree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FsGrant {
    /// The subtree (a resolved, existing path).
    pub path: PathBuf,
    /// Whether it is a directory (files get file rights only).
    pub is_dir: bool,
    /// Reading allowed.
    pub read: bool,
    /// Writing (create, modify, remove) allowed.
    pub write: bool,
    /// Executing allowed.
    pub exec: bool,
}

impl FsGrant {
    /// Neither read nor write: the subtree must be hidden.
    pub fn is_hidden(&self) -> bool {
        !self.read && !self.write && !self.exec
    }
}

struct Planner<'a> {
    policy: &'a SecurityPolicy,
    boundaries: Vec<PathBuf>,
    system: Vec<PathBuf>,
    /// Whether the protected-ancestor rule applies (Landlock: yes; mounts protect ancestors
    /// with mount points instead).
    ancestors: bool,
    /// Boundaries a mount of the view already enforces (Landlock inside bubblewrap): they
    /// split nothing, because the mount holds whatever they decide beneath a coarser rule.
    mounted: Vec<PathBuf>,
    out: Vec<FsGrant>,
}

/// Builds the carved plan for `policy` (Landlock): rules only on uniform subtrees. Paths that
/// do not exist (a sibling workspace not created yet) are skipped.
pub fn fs_plan(policy: &SecurityPolicy) -> Vec<FsGrant> {
    let mut planner = Planner::new(policy, true);
    planner.carve_all();
    planner.finish()
}

/// The plan of the Landlock layer inside bubblewrap (see [`super::layer`]): every mounted entry
/// of [`mount_plan`] with its own rights, and the tree carved as for [`fs_plan`] except that a
/// boundary a mount enforces splits nothing (and ancestors are pinned by mounts, not by a
/// missing write right). What bubblewrap makes itself (`/dev`, `/proc`) is carved exactly, so a
/// device node the policy does not allow gets no right even though the view shows it.
/// `mounts` is the view's [`mount_plan`] for the same policy.
pub fn layer_plan(policy: &SecurityPolicy, mounts: &[FsGrant]) -> Vec<FsGrant> {
    let mut planner = Planner::new(policy, false);
    let own = |p: &Path| under(p, Path::new("/dev")) || under(p, Path::new("/proc"));
    planner.mounted = mounts
        .iter()
        .filter(|g| !own(&g.path))
        .map(|g| g.path.clone())
        .collect();
    let dev = PathBuf::from("/dev");
    if !planner.boundaries.contains(&dev) && std::fs::symlink_metadata(&dev).is_ok() {
        planner.boundaries.push(dev);
    }
    // The mounted entries first: where the carve repeats one, the mount's rights are kept.
    planner.out.extend(
        mounts
            .iter()
            .filter(|g| !own(&g.path) && !g.is_hidden())
            .cloned(),
    );
    planner.carve_all();
    planner.finish()
}

/// The layered form of the plan, for mount-based sandboxes where a deeper mount overrides a
/// shallower one: one entry per existing policy boundary (roots, forbidden paths, runtime state,
/// devices, system directories), shallowest first, with the rights the policy gives it.
pub fn layered_plan(policy: &SecurityPolicy) -> Vec<FsGrant> {
    let planner = Planner::new(policy, false);
    let out = planner
        .boundaries
        .iter()
        .filter_map(|b| {
            let meta = std::fs::symlink_metadata(b).ok()?;
            Some(planner.rights(b, meta.is_dir()))
        })
        .collect();
    sorted(out)
}

/// The layered plan for bubblewrap: [`layered_plan`] plus every existing strict ancestor of a
/// protected target (install root, runtime state, forbidden paths, roots the agent may not
/// write or read) and the install root itself that lies in the child's view (anywhere when
/// `workspace_only` is off and the host tree is bound whole; inside a mounted root otherwise),
/// each with the rights of its region. Each becomes a mount point, which cannot be renamed or
/// removed (`EBUSY`), so nothing protected can be moved to a path where it would be readable.
pub fn mount_plan(policy: &SecurityPolicy) -> Vec<FsGrant> {
    let planner = Planner::new(policy, false);
    let mut out = layered_plan(policy);
    let mut anchors: Vec<PathBuf> = vec![policy.install_root.clone()];
    for t in policy.protected_targets() {
        anchors.extend(t.ancestors().skip(1).map(Path::to_path_buf));
    }
    for a in anchors {
        if a.as_os_str() == "/" || out.iter().any(|g| g.path == a) {
            continue;
        }
        if !planner.inside_plan_area(&a) {
            continue;
        }
        if std::fs::symlink_metadata(&a).is_ok_and(|m| m.is_dir()) {
            out.push(planner.rights(&a, true));
        }
    }
    // Nothing new is made directly in the install root (Warren's own temporary files live
    // there a moment) nor in a folder that would hold a protected path not made yet (a
    // database's `-wal` or `-journal` file): those folders are mounted without writing. Their
    // existing entries keep their own mounts or the rights beneath.
    let missing_parents: Vec<PathBuf> = policy
        .protected_targets()
        .filter(|t| std::fs::symlink_metadata(t).is_err())
        .filter_map(|t| t.parent().map(Path::to_path_buf))
        .collect();
    for g in &mut out {
        if g.is_dir && (g.path == policy.install_root || missing_parents.contains(&g.path)) {
            g.write = false;
        }
    }
    sorted(out)
}

fn sorted(mut out: Vec<FsGrant>) -> Vec<FsGrant> {
    out.sort_by(|a, b| {
        (a.path.components().count(), &a.path).cmp(&(b.path.components().count(), &b.path))
    });
    out.dedup_by(|a, b| a.path == b.path);
    out
}

impl<'a> Planner<'a> {
    fn new(policy: &'a SecurityPolicy, ancestors: bool) -> Self {
        let canon = |p: &Path| resolve::resolve_symlinks(p).unwrap_or_else(|_| p.to_path_buf());
        let system: Vec<PathBuf> = SYSTEM_DIRS.iter().map(|d| canon(Path::new(d))).collect();
        let mut boundaries: Vec<PathBuf> = Vec::new();
        boundaries.extend(policy.roots.iter().map(|r| r.path.clone()));
        boundaries.extend(policy.forbidden.iter().cloned());
        boundaries.extend(policy.runtime_state.iter().cloned());
        boundaries.extend(DEVICES.iter().map(PathBuf::from));
        boundaries.extend(system.iter().cloned());
        boundaries.extend(KERNEL_DIRS.iter().map(PathBuf::from));
        boundaries.push(policy.install_root.clone());
        // A boundary that does not exist holds nothing yet and splits nothing.
        boundaries.retain(|b| std::fs::symlink_metadata(b).is_ok());
        boundaries.sort();
        boundaries.dedup();
        Planner {
            policy,
            boundaries,
            system,
            ancestors,
            mounted: Vec::new(),
            out: Vec::new(),
        }
    }
}

impl Planner<'_> {
    /// Carves from every boundary (`workspace_only`) or from `/`.
    fn carve_all(&mut self) {
        let starts: Vec<PathBuf> = if self.policy.workspace_only {
            self.boundaries.clone()
        } else {
            vec![PathBuf::from("/")]
        };
        for s in starts {
            self.carve(&s);
        }
    }

    /// The carved rules without `/proc` (never granted wholesale), plus the system-wide
    /// `/proc` files the policy lets the agent read.
    fn finish(mut self) -> Vec<FsGrant> {
        let proc = Path::new("/proc");
        self.out.retain(|g| !under(&g.path, proc));
        for f in PROC_FILES {
            let path = Path::new(f);
            if let Ok(meta) = std::fs::symlink_metadata(path) {
                let g = self.rights(path, meta.is_dir());
                if g.read {
                    self.out.push(g);
                }
            }
        }
        sorted(self.out)
    }

    fn carve(&mut self, path: &Path) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        if meta.file_type().is_symlink() {
            return;
        }
        let is_dir = meta.is_dir();
        let grant = self.rights(path, is_dir);
        // Split only where a boundary beneath decides differently: rights are inherited.
        let split = is_dir
            && self.boundaries.iter().any(|b| {
                b.as_path() != path && under(b, path) && !self.mounted.contains(b) && {
                    let inner = self.rights(b, true);
                    (inner.read, inner.write, inner.exec) != (grant.read, grant.write, grant.exec)
                }
            });
        if !split {
            // Outside every root with workspace_only on, nothing is granted: no rule at all.
            if !grant.is_hidden() || self.inside_plan_area(path) {
                self.out.push(grant);
            }
            return;
        }
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        for child in children {
            self.carve(&child);
        }
    }

    /// Whether a path lies in a part of the tree where something is granted around it, so that
    /// a rights-less subtree must be hidden explicitly (bubblewrap binds whole roots).
    fn inside_plan_area(&self, path: &Path) -> bool {
        !self.policy.workspace_only || self.policy.roots.iter().any(|r| under(path, &r.path))
    }

    fn rights(&self, path: &Path, is_dir: bool) -> FsGrant {
        let read = self
            .policy
            .decide_with(path, Access::Read, self.ancestors)
            .0;
        let write = self
            .policy
            .decide_with(path, Access::Write, self.ancestors)
            .0;
        let system = self.system.iter().any(|s| under(path, s));
        let device = DEVICES.iter().any(|d| path == Path::new(d));
        let kernel = KERNEL_DIRS.iter().any(|k| under(path, Path::new(k)));
        FsGrant {
            path: path.to_path_buf(),
            is_dir,
            read: read || system,
            write,
            exec: (read && !device && !kernel) || system,
        }
    }
}
