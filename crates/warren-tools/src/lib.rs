//! The tools an agent acts through (rules §2.2, §9.1): `file_read`, `file_write`, `file_edit`,
//! `glob_search`, `content_search`, `shell`, `git_operations`. Every call goes through
//! [`Registry::prepare`] (the policy, autonomy and risk gates and the action budget: allowed,
//! ask or denied), the caller's approval when asked, then [`Permit::execute`].

pub mod args;
pub mod error;
pub mod files;
pub mod gate;
pub mod git;
pub mod process;
pub mod search;
pub mod shell;
pub mod tool;

pub use args::Args;
pub use error::ToolError;
pub use gate::{Permit, Prepared, Registry};
pub use tool::{
    blocking, ApprovalAnswer, CallCheck, CallIdentity, CancelToken, Tool, ToolContext, ToolLimits,
    ToolSpec,
};
pub use warren_types::ApprovalDecision;
