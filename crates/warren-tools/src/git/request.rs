//! The arguments of `git_operations` (rules §3), parsed and validated before anything runs:
//! which arguments an operation takes, which it requires, and that branch names are ref names
//! that can never be read as an option.

use crate::args::Args;
use crate::error::ToolError;
use serde_json::Value;

/// Default number of commits `log` lists.
pub const DEFAULT_LOG_LIMIT: usize = 20;

/// Most commits `log` lists in one call.
pub const MAX_LOG_LIMIT: usize = 10_000;

/// Longest accepted commit or stash message.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// One `git_operations` operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Working tree and index status (read).
    Status,
    /// Unstaged or staged changes as hunks (read).
    Diff,
    /// Commits reachable from HEAD (read).
    Log,
    /// Local branches (read).
    Branch,
    /// Stash entries (read).
    StashList,
    /// Worktrees the policy lets the agent read (read).
    WorktreeList,
    /// `git add` (write).
    Add,
    /// `git commit` (write).
    Commit,
    /// `git checkout <branch>` (write).
    Checkout,
    /// `git branch <name>` (write).
    BranchCreate,
    /// `git branch --delete <name>` (write).
    BranchDelete,
    /// `git stash push` (write).
    StashPush,
    /// `git stash pop` (write).
    StashPop,
    /// `git stash drop` (write).
    StashDrop,
    /// `git worktree add` (write).
    WorktreeAdd,
    /// `git worktree remove` (write).
    WorktreeRemove,
    /// `git worktree prune` (write).
    WorktreePrune,
}

impl Operation {
    /// Every operation, reads first.
    pub const ALL: [Operation; 17] = [
        Operation::Status,
        Operation::Diff,
        Operation::Log,
        Operation::Branch,
        Operation::StashList,
        Operation::WorktreeList,
        Operation::Add,
        Operation::Commit,
        Operation::Checkout,
        Operation::BranchCreate,
        Operation::BranchDelete,
        Operation::StashPush,
        Operation::StashPop,
        Operation::StashDrop,
        Operation::WorktreeAdd,
        Operation::WorktreeRemove,
        Operation::WorktreePrune,
    ];

    /// The wire name (`status`, `branch_create`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Operation::Status => "status",
            Operation::Diff => "diff",
            Operation::Log => "log",
            Operation::Branch => "branch",
            Operation::StashList => "stash_list",
            Operation::WorktreeList => "worktree_list",
            Operation::Add => "add",
            Operation::Commit => "commit",
            Operation::Checkout => "checkout",
            Operation::BranchCreate => "branch_create",
            Operation::BranchDelete => "branch_delete",
            Operation::StashPush => "stash_push",
            Operation::StashPop => "stash_pop",
            Operation::StashDrop => "stash_drop",
            Operation::WorktreeAdd => "worktree_add",
            Operation::WorktreeRemove => "worktree_remove",
            Operation::WorktreePrune => "worktree_prune",
        }
    }

    /// Parses a wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Write-class operations run the `git` program in the sandbox and need Read and Write.
    pub fn is_write(self) -> bool {
        !matches!(
            self,
            Operation::Status
                | Operation::Diff
                | Operation::Log
                | Operation::Branch
                | Operation::StashList
                | Operation::WorktreeList
        )
    }

    /// The arguments this operation takes besides `operation` and `path`.
    fn takes(self) -> &'static [&'static str] {
        match self {
            Operation::Diff => &["files", "cached"],
            Operation::Log => &["limit"],
            Operation::Add => &["paths"],
            Operation::Commit => &["message"],
            Operation::Checkout | Operation::BranchCreate | Operation::BranchDelete => &["branch"],
            Operation::StashPush => &["paths", "message"],
            Operation::StashPop | Operation::StashDrop => &["index"],
            Operation::WorktreeAdd => &["worktree_path", "branch"],
            Operation::WorktreeRemove => &["worktree_path"],
            Operation::Status
            | Operation::Branch
            | Operation::StashList
            | Operation::WorktreeList
            | Operation::WorktreePrune => &[],
        }
    }
}

/// Every argument name the tool knows.
pub const ARGS: &[&str] = &[
    "operation",
    "path",
    "files",
    "cached",
    "limit",
    "paths",
    "message",
    "branch",
    "worktree_path",
    "index",
];

/// A validated call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    /// The operation.
    pub operation: Operation,
    /// The repository or worktree directory (default: the workspace).
    pub path: Option<&'a str>,
    /// `diff`: limit to these files.
    pub files: Vec<&'a str>,
    /// `diff`: staged changes (HEAD against the index) instead of unstaged ones.
    pub cached: bool,
    /// `log`: how many commits.
    pub limit: usize,
    /// `add`, `stash_push`: the paths.
    pub paths: Vec<&'a str>,
    /// `commit`, `stash_push`: the message.
    pub message: Option<&'a str>,
    /// `checkout`, `branch_create`, `branch_delete`, `worktree_add`: a branch name.
    pub branch: Option<&'a str>,
    /// `worktree_add`, `worktree_remove`: the worktree directory.
    pub worktree_path: Option<&'a str>,
    /// `stash_pop`, `stash_drop`: which stash entry (default 0).
    pub index: usize,
}

impl<'a> Request<'a> {
    /// Parses and validates the arguments of one call.
    pub fn parse(value: &'a Value) -> Result<Self, ToolError> {
        let a = Args::new(value, ARGS)?;
        let name = a.string("operation")?;
        let operation = Operation::parse(name).ok_or_else(|| {
            let names: Vec<&str> = Operation::ALL.iter().map(|o| o.name()).collect();
            ToolError::arg(
                "operation",
                format!(
                    "unknown operation `{name}` (expected one of: {})",
                    names.join(", ")
                ),
            )
        })?;
        let takes = operation.takes();
        if let Some(obj) = value.as_object() {
            if let Some((k, _)) = obj.iter().find(|(k, v)| {
                !v.is_null() && k.as_str() != "operation" && k.as_str() != "path" && {
                    !takes.contains(&k.as_str())
                }
            }) {
                return Err(ToolError::arg(
                    k,
                    format!("is not an argument of operation `{}`", operation.name()),
                ));
            }
        }
        let limit = match a.opt_u64("limit")? {
            None => DEFAULT_LOG_LIMIT,
            Some(0) => return Err(ToolError::arg("limit", "must be at least 1")),
            Some(n) => usize::try_from(n)
                .ok()
                .filter(|n| *n <= MAX_LOG_LIMIT)
                .ok_or_else(|| {
                    ToolError::arg("limit", format!("must be at most {MAX_LOG_LIMIT}"))
                })?,
        };
        let index = match a.opt_u64("index")? {
            None => 0,
            Some(n) => usize::try_from(n).map_err(|_| ToolError::arg("index", "is too large"))?,
        };
        let message = a.opt_string("message")?;
        if let Some(m) = message {
            check_message(m)?;
        }
        let branch = a.opt_string("branch")?;
        if let Some(b) = branch {
            validate_branch(b)?;
        }
        let req = Request {
            operation,
            path: a.opt_path("path")?,
            files: a.opt_paths("files")?.unwrap_or_default(),
            cached: a.opt_bool("cached")?.unwrap_or(false),
            limit,
            paths: a.opt_paths("paths")?.unwrap_or_default(),
            message,
            branch,
            worktree_path: a.opt_path("worktree_path")?,
            index,
        };
        req.require()?;
        Ok(req)
    }

    fn require(&self) -> Result<(), ToolError> {
        let op = self.operation.name();
        match self.operation {
            Operation::Add if self.paths.is_empty() => Err(ToolError::arg(
                "paths",
                format!("is required by `{op}` (a non-empty list of paths)"),
            )),
            Operation::Commit if self.message.is_none() => {
                Err(ToolError::arg("message", format!("is required by `{op}`")))
            }
            Operation::Checkout | Operation::BranchCreate | Operation::BranchDelete
                if self.branch.is_none() =>
            {
                Err(ToolError::arg("branch", format!("is required by `{op}`")))
            }
            Operation::WorktreeAdd | Operation::WorktreeRemove if self.worktree_path.is_none() => {
                Err(ToolError::arg(
                    "worktree_path",
                    format!("is required by `{op}`"),
                ))
            }
            _ => Ok(()),
        }
    }
}

/// A branch name must be a valid ref name under `refs/heads/` and never look like an option.
pub fn validate_branch(name: &str) -> Result<(), ToolError> {
    if name.is_empty() {
        return Err(ToolError::arg("branch", "must not be empty"));
    }
    if name.starts_with('-') {
        return Err(ToolError::arg(
            "branch",
            format!("`{name}` starts with `-`; a branch name is never taken as an option"),
        ));
    }
    if name == "HEAD" || !git2::Reference::is_valid_name(&format!("refs/heads/{name}")) {
        return Err(ToolError::arg(
            "branch",
            format!("`{name}` is not a valid branch name"),
        ));
    }
    Ok(())
}

fn check_message(m: &str) -> Result<(), ToolError> {
    if m.trim().is_empty() {
        return Err(ToolError::arg("message", "must not be empty"));
    }
    if m.contains('\0') {
        return Err(ToolError::arg("message", "contains a NUL byte"));
    }
    if m.len() > MAX_MESSAGE_BYTES {
        return Err(ToolError::TooLarge {
            what: "argument `message`".into(),
            size: m.len() as u64,
            limit: MAX_MESSAGE_BYTES as u64,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> (String, String) {
        match Request::parse(&v) {
            Ok(r) => panic!("expected an error for {v}, got {r:?}"),
            Err(ToolError::InvalidArgument { field, message }) => (field, message),
            Err(e) => panic!("expected invalid_argument for {v}, got {e}"),
        }
    }

    #[test]
    fn branch_names_are_ref_names_and_never_options() {
        for ok in ["main", "feature/x", "fix-1", "v1.2", "a-"] {
            assert!(validate_branch(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "-D",
            "--force",
            "-",
            "HEAD",
            "a..b",
            "a b",
            "x~1",
            "x^",
            "x:y",
            "x?",
            "x*",
            "x[",
            "x\\y",
            "ends.lock",
            "/lead",
            "trail/",
            "a//b",
            "@{u}",
            ".hidden",
            "x.",
        ] {
            assert!(validate_branch(bad).is_err(), "`{bad}` accepted");
        }
        let (field, message) = err(json!({"operation": "branch_create", "branch": "--orphan"}));
        assert_eq!(field, "branch");
        assert!(message.contains("starts with `-`"), "{message}");
        let (field, _) =
            err(json!({"operation": "worktree_add", "worktree_path": "w", "branch": "a..b"}));
        assert_eq!(field, "branch");
    }

    #[test]
    fn every_operation_parses_with_its_own_arguments_only() {
        for op in Operation::ALL {
            assert_eq!(Operation::parse(op.name()), Some(op));
        }
        let v = json!({"operation": "log"});
        let r = Request::parse(&v).unwrap();
        assert_eq!(r.limit, DEFAULT_LOG_LIMIT);
        assert!(!r.operation.is_write());
        let v = json!({"operation": "commit", "message": "-m oops"});
        let r = Request::parse(&v).unwrap();
        assert!(r.operation.is_write());
        assert_eq!(r.message, Some("-m oops"));
        let v = json!({"operation": "diff", "files": ["-p", "a"], "cached": true});
        let r = Request::parse(&v).unwrap();
        assert_eq!(r.files, vec!["-p", "a"]);
        assert!(r.cached);
        // An argument of another operation is named.
        let (field, message) = err(json!({"operation": "status", "message": "x"}));
        assert_eq!(field, "message");
        assert!(message.contains("`status`"), "{message}");
        // Unknown names and operations.
        assert_eq!(err(json!({"operation": "push"})).0, "operation");
        assert_eq!(
            err(json!({"operation": "status", "remote": "x"})).0,
            "remote"
        );
        assert_eq!(err(json!({})).0, "operation");
    }

    #[test]
    fn required_and_malformed_arguments_are_named() {
        assert_eq!(err(json!({"operation": "commit"})).0, "message");
        assert_eq!(
            err(json!({"operation": "commit", "message": "  "})).0,
            "message"
        );
        assert_eq!(err(json!({"operation": "add"})).0, "paths");
        assert_eq!(err(json!({"operation": "add", "paths": []})).0, "paths");
        assert_eq!(
            err(json!({"operation": "add", "paths": [""]})).0,
            "paths[0]"
        );
        assert_eq!(
            err(json!({"operation": "add", "paths": ["a", 3]})).0,
            "paths[1]"
        );
        assert_eq!(err(json!({"operation": "add", "paths": "a"})).0, "paths");
        assert_eq!(err(json!({"operation": "checkout"})).0, "branch");
        assert_eq!(err(json!({"operation": "worktree_add"})).0, "worktree_path");
        assert_eq!(
            err(json!({"operation": "worktree_remove"})).0,
            "worktree_path"
        );
        assert_eq!(err(json!({"operation": "log", "limit": 0})).0, "limit");
        assert_eq!(err(json!({"operation": "log", "limit": -1})).0, "limit");
        assert_eq!(err(json!({"operation": "log", "limit": 10_001})).0, "limit");
        assert_eq!(
            err(json!({"operation": "diff", "cached": "yes"})).0,
            "cached"
        );
        assert_eq!(
            err(json!({"operation": "stash_pop", "index": "1"})).0,
            "index"
        );
        assert_eq!(
            err(json!({"operation": "status", "path": "a\u{0}b"})).0,
            "path"
        );
    }
}
