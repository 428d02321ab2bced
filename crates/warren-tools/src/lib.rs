//! The tools an agent acts through (rules §2.2, §9.1): `file_read`, `file_write`, `file_edit`,
//! `glob_search`, `content_search`, `shell`, `git_operations`. Every call goes through [`Registry::invoke`]: the
//! policy, autonomy and risk gates, the action budget and the approval hook, then execution.

pub mod args;
pub mod error;
pub mod files;
pub mod gate;
pub mod git;
pub mod search;
pub mod shell;
pub mod tool;

pub use args::Args;
pub use error::ToolError;
pub use gate::Registry;
pub use tool::{
    ApprovalDecision, ApprovalRequest, ApproveAll, Approver, CallCheck, CancelToken, NoApprover,
    Tool, ToolContext, ToolLimits, ToolSpec,
};
