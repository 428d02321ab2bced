//! `git_operations` (rules §3): reads in-process through libgit2, writes through the `git`
//! program inside the agent's sandbox. Before either, the repository is found without leaving
//! the authorized root and its metadata verified through the policy ([`meta`]); under a docker
//! runtime every write is refused before any process starts.

pub mod carve;
pub mod config;
pub mod confined;
pub mod meta;
pub mod read;
pub mod request;
pub mod scope;
pub mod write;

use crate::error::ToolError;
use crate::tool::{blocking, CallCheck, Tool, ToolContext, ToolSpec};
use async_trait::async_trait;
use meta::Location;
use request::{Operation, Request};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use warren_policy::{Access, SecurityPolicy};

/// `git_operations {operation, path?, ...}`.
pub struct GitOperations;

/// Refuses a write operation under a container runtime: git does not enter the container.
fn refuse_in_container(policy: &SecurityPolicy, op: Operation) -> Result<(), ToolError> {
    if op.is_write() && policy.container.is_some() {
        return Err(ToolError::GitWriteInContainer {
            operation: op.name().to_string(),
        });
    }
    Ok(())
}

/// Finds and verifies the repository of a call.
/// A relative `path` starts at the working directory of the call, which is also the default.
fn locate(ctx: &ToolContext, req: &Request<'_>) -> Result<Location, ToolError> {
    let path = match req.path {
        Some(p) => ctx.path(Path::new(p)).into_owned(),
        None => ctx.cwd.clone(),
    };
    meta::locate(&ctx.policy, &path, meta::accesses(req.operation.is_write()))
}

/// Resolves `worktree_path` for `worktree_add` (a new directory the agent may read and write)
/// and `worktree_remove` (a linked worktree of this repository, verified for Read and Write).
fn worktree_target(
    ctx: &ToolContext,
    loc: &Location,
    req: &Request<'_>,
) -> Result<Option<PathBuf>, ToolError> {
    let Some(raw) = req.worktree_path else {
        return Ok(None);
    };
    let policy = &ctx.policy;
    let rw = meta::accesses(true);
    let path = meta::authorize_all(policy, &ctx.path(Path::new(raw)), rw, None)?;
    match req.operation {
        Operation::WorktreeAdd => {
            match std::fs::read_dir(&path) {
                Ok(mut entries) => {
                    if entries.next().is_some() {
                        return Err(ToolError::arg(
                            "worktree_path",
                            format!("{} exists and is not empty", path.display()),
                        ));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => {
                    return Err(ToolError::arg(
                        "worktree_path",
                        format!("{} exists and is not a directory", path.display()),
                    ));
                }
                Err(e) => return Err(ToolError::io(&path, e)),
            }
            Ok(Some(path))
        }
        Operation::WorktreeRemove => {
            let listed = read::worktree_list(policy, loc, rw);
            let found = listed
                .iter()
                .any(|w| w.loc.is_linked() && w.loc.workdir == path);
            if !found {
                return Err(ToolError::arg(
                    "worktree_path",
                    format!(
                        "{} is not a linked worktree of {} whose metadata is verifiable for read and write",
                        path.display(),
                        loc.commondir.display()
                    ),
                ));
            }
            Ok(Some(path))
        }
        _ => Ok(None),
    }
}

/// Checks everything a write touches and returns the targets of the git command.
fn write_targets(
    ctx: &ToolContext,
    loc: &Location,
    req: &Request<'_>,
) -> Result<write::Targets, ToolError> {
    let policy = &ctx.policy;
    let rw = meta::accesses(true);
    let paths = read::repo_relative(policy, loc, "paths", &req.paths, rw)?;
    let worktree = worktree_target(ctx, loc, req)?;
    let branch_exists = match (req.operation, req.branch) {
        (Operation::WorktreeAdd, Some(b)) => read::with_repo(policy, loc, |repo, _| {
            Ok(repo.find_branch(b, git2::BranchType::Local).is_ok())
        })?,
        _ => false,
    };
    scope::authorize(policy, loc, req, &paths)?;
    Ok(write::Targets {
        paths,
        worktree,
        branch_exists,
    })
}

#[async_trait]
impl Tool for GitOperations {
    fn name(&self) -> &'static str {
        "git_operations"
    }

    fn spec(&self) -> ToolSpec {
        let ops: Vec<&str> = Operation::ALL.iter().map(|o| o.name()).collect();
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Git in a repository you may access. Reads: status, diff, log, branch, stash_list, worktree_list. Writes (need read-write access; run in your sandbox): add, commit, checkout, branch_create, branch_delete, stash_push, stash_pop, stash_drop, worktree_add, worktree_remove, worktree_prune. No network operations.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "operation": {"type": "string", "enum": ops},
                    "path": {"type": "string", "description": "Repository or worktree directory (default: your workspace)"},
                    "files": {"type": "array", "items": {"type": "string"}, "description": "diff: only these files (relative to the working tree)"},
                    "cached": {"type": "boolean", "description": "diff: staged changes instead of unstaged ones"},
                    "limit": {"type": "integer", "minimum": 1, "description": "log: number of commits (default 20)"},
                    "paths": {"type": "array", "items": {"type": "string"}, "description": "add, stash_push: paths relative to the working tree"},
                    "message": {"type": "string", "description": "commit, stash_push: the message"},
                    "branch": {"type": "string", "description": "checkout, branch_create, branch_delete, worktree_add: branch name"},
                    "worktree_path": {"type": "string", "description": "worktree_add, worktree_remove: the worktree directory"},
                    "index": {"type": "integer", "minimum": 0, "description": "stash_pop, stash_drop: stash entry (default 0)"}
                },
                "required": ["operation"],
                "additionalProperties": false
            }),
        }
    }

    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        let req = Request::parse(args)?;
        refuse_in_container(&ctx.policy, req.operation)?;
        let loc = locate(ctx, &req)?;
        if req.operation.is_write() {
            write_targets(ctx, &loc, &req)?;
        } else {
            read::repo_relative(&ctx.policy, &loc, "files", &req.files, &[Access::Read])?;
        }
        Ok(CallCheck {
            side_effects: req.operation.is_write(),
            risk: None,
            reasons: Vec::new(),
        })
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        blocking(args, ctx, |args, ctx| GitOperations.run(args, ctx)).await
    }
}

impl GitOperations {
    /// The call itself, run on a blocking thread.
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let req = Request::parse(args)?;
        let policy = &ctx.policy;
        refuse_in_container(policy, req.operation)?;
        let loc = locate(ctx, &req)?;
        if !req.operation.is_write() {
            let mut v = read::run(policy, &loc, &req, ctx.limits.max_output_bytes)?;
            v["operation"] = json!(req.operation.name());
            v["repository"] = json!(loc.workdir.display().to_string());
            return Ok(v);
        }
        let targets = write_targets(ctx, &loc, &req)?;
        let argv = write::git_args(&loc, &req, &targets)?;
        let identity = if req.operation == Operation::Commit {
            // The repository's own identity, read on the confined read thread.
            let sets = read::with_repo(policy, &loc, |repo, _| {
                let cfg = repo.config().ok();
                let has = |k: &str| {
                    cfg.as_ref()
                        .and_then(|c| c.get_string(k).ok())
                        .is_some_and(|v| !v.is_empty())
                };
                // The repository's own identity, in any of the keys git reads for it.
                Ok((
                    has("user.name") || has("author.name") || has("committer.name"),
                    has("user.email") || has("author.email") || has("committer.email"),
                ))
            })?;
            write::identity_env(&ctx.host_env, sets)
        } else {
            Vec::new()
        };
        let out = write::run_git(ctx, &loc, &argv, identity)?;
        let mut v = json!({
            "operation": req.operation.name(),
            "repository": loc.workdir.display().to_string(),
            "stdout": out.stdout,
            "stderr": out.stderr,
            "sandbox": out.sandbox,
        });
        if matches!(req.operation, Operation::Commit | Operation::Checkout) {
            let head = read::with_repo(policy, &loc, |repo, _| {
                Ok(repo.head().ok().map(|h| {
                    (
                        h.shorthand().map(str::to_string),
                        h.target().map(|o| o.to_string()),
                    )
                }))
            });
            if let Ok(Some((branch, id))) = head {
                v["branch"] = json!(branch);
                v["head"] = json!(id);
            }
        }
        Ok(v)
    }
}
