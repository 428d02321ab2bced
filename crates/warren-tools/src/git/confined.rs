//! Every libgit2 read runs on a dedicated, short-lived thread that Landlock confines to the
//! agent's read grants (rules §4: files Warren opens for an agent are opened within the grant).
//! libgit2 follows symbolic links under `refs/`, `logs/` and `objects/` and loads alternate
//! object directories recursively; on this thread, any of them that leads outside the grants
//! fails with `EACCES` inside libgit2 instead of reading a sibling's data.
//!
//! `landlock_restrict_self` and `PR_SET_NO_NEW_PRIVS` apply to the calling thread only, so the
//! Warren process and its other threads stay unrestricted; the thread runs the one read it was
//! made for and ends. The ruleset holds only read rights, taken from the policy's own sandbox
//! plan ([`fs_plan`]), plus listing (not reading) the directories of the repository that the
//! plan splits because a boundary lies beneath them. Where the kernel has no Landlock the read
//! still runs on its own thread, and the metadata walk in [`super::walk`] is the defence.

use crate::error::ToolError;
use landlock::{
    Access as _, AccessFs, BitFlags, PathBeneath, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, ABI,
};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::collections::BTreeSet;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use warren_policy::sandbox::{fs_plan, FsGrant};
use warren_policy::{under, Access, SecurityPolicy};

/// The Landlock ABI whose rights the ruleset handles: every filesystem right it knows is
/// handled, and only reading is granted, so libgit2 can neither write nor execute anything.
const HANDLED_ABI: ABI = ABI::V5;

/// One rule of the read-only ruleset.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ReadRule {
    path: PathBuf,
    /// File contents may be read beneath it (otherwise: directory listing only).
    contents: bool,
    is_dir: bool,
}

/// The read rules for `policy`: every subtree the plan lets the agent read, and listing of the
/// directories under `repo_dirs` that the plan splits (a forbidden or unreadable path lies
/// beneath them) and that the policy itself lets the agent read.
fn read_rules(plan: &[FsGrant], policy: &SecurityPolicy, repo_dirs: &[&Path]) -> Vec<ReadRule> {
    let mut rules: Vec<ReadRule> = plan
        .iter()
        .filter(|g| g.read)
        .map(|g| ReadRule {
            path: g.path.clone(),
            contents: true,
            is_dir: g.is_dir,
        })
        .collect();
    let mut split: BTreeSet<PathBuf> = BTreeSet::new();
    for g in plan {
        for dir in repo_dirs {
            if g.path.as_path() == *dir || !under(&g.path, dir) {
                continue;
            }
            // Every directory from the repository directory down to the subtree's parent.
            let mut p = g.path.parent();
            while let Some(a) = p {
                if !under(a, dir) {
                    break;
                }
                split.insert(a.to_path_buf());
                p = a.parent();
            }
        }
    }
    for dir in split {
        let covered = plan
            .iter()
            .any(|g| g.read && g.is_dir && under(&dir, &g.path));
        if !covered && policy.decide(&dir, Access::Read).0 {
            rules.push(ReadRule {
                path: dir,
                contents: false,
                is_dir: true,
            });
        }
    }
    rules
}

fn rights(rule: &ReadRule) -> BitFlags<AccessFs> {
    match (rule.is_dir, rule.contents) {
        (true, true) => AccessFs::ReadFile | AccessFs::ReadDir,
        (true, false) => AccessFs::ReadDir.into(),
        (false, _) => AccessFs::ReadFile.into(),
    }
}

fn unconfinable(reason: String) -> ToolError {
    ToolError::Git {
        repo: PathBuf::from("(read thread)"),
        message: format!("cannot confine the libgit2 read thread with Landlock: {reason}"),
    }
}

/// An `O_PATH` descriptor of `path` resolved without following any symbolic link
/// (`openat2` with `RESOLVE_NO_SYMLINKS`; where a seccomp filter refuses `openat2`, at least
/// the last component is not followed).
fn open_no_links(path: &Path) -> Option<OwnedFd> {
    let flags = OFlags::PATH | OFlags::CLOEXEC;
    match rustix::fs::openat2(
        rustix::fs::CWD,
        path,
        flags,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS,
    ) {
        Ok(fd) => Some(fd),
        Err(Errno::NOSYS | Errno::PERM) => {
            let fd = rustix::fs::open(path, flags | OFlags::NOFOLLOW, Mode::empty()).ok()?;
            let st = rustix::fs::fstat(&fd).ok()?;
            (FileType::from_raw_mode(st.st_mode) != FileType::Symlink).then_some(fd)
        }
        Err(_) => None,
    }
}

/// Restricts the calling thread to `rules` (and sets `no_new_privs` on it). Returns whether
/// Landlock is enforced; `false` only when the kernel does not support it.
fn restrict_this_thread(rules: &[ReadRule]) -> Result<bool, ToolError> {
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(HANDLED_ABI))
        .map_err(|e| unconfinable(e.to_string()))?
        .create()
        .map_err(|e| unconfinable(e.to_string()))?;
    for rule in rules {
        // Opened without following any link: a path that vanished or was swapped for a link
        // since the plan was made holds nothing to grant.
        let Some(fd) = open_no_links(&rule.path) else {
            continue;
        };
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, rights(rule)))
            .map_err(|e| unconfinable(format!("{}: {e}", rule.path.display())))?;
    }
    let status = ruleset
        .restrict_self()
        .map_err(|e| unconfinable(e.to_string()))?;
    if !status.no_new_privs {
        return Err(unconfinable("no_new_privs was not set".into()));
    }
    Ok(status.ruleset != RulesetStatus::NotEnforced)
}

/// Runs `read` on a new thread confined to what `policy` lets the agent read, and returns its
/// result. `repo_dirs` are the verified working tree and git directories the read looks at.
/// The thread ends when `read` returns; nothing else ever runs on it.
pub fn run<T, F>(policy: &SecurityPolicy, repo_dirs: &[&Path], read: F) -> Result<T, ToolError>
where
    T: Send,
    F: FnOnce() -> Result<T, ToolError> + Send,
{
    run_with_plan(&fs_plan(policy), policy, repo_dirs, read)
}

/// [`run`] with the policy's sandbox plan already built (`fs_plan(policy)`).
pub fn run_with_plan<T, F>(
    plan: &[FsGrant],
    policy: &SecurityPolicy,
    repo_dirs: &[&Path],
    read: F,
) -> Result<T, ToolError>
where
    T: Send,
    F: FnOnce() -> Result<T, ToolError> + Send,
{
    let rules = read_rules(plan, policy, repo_dirs);
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("warren-git-read".into())
            .spawn_scoped(scope, move || {
                restrict_this_thread(&rules)?;
                read()
            })
            .map_err(|e| unconfinable(format!("cannot start the read thread: {e}")))?;
        handle
            .join()
            .unwrap_or_else(|_| Err(unconfinable("the read thread panicked".into())))
    })
}

/// Whether this kernel can confine a read thread (Landlock is supported).
pub fn available() -> bool {
    warren_policy::sandbox::landlock::kernel_abi() > 0
}
