//! Plain shared types for Warren: the config schema, stable error codes and the DTOs that cross
//! the `warren-api` boundary. No I/O lives here.

pub mod alias;
pub mod approval;
pub mod codes;
pub mod config;
pub mod dto;
pub mod error;
pub mod events;
pub mod network;
pub mod redact;
pub mod suggest;

pub use alias::{validate_alias, AliasError};
pub use approval::{ApprovalAnswer, ApprovalWait, AsyncApprover, FixedApprover, PendingApproval};
pub use codes::{LlmErrorCode, NoticeCode, ToolErrorCode, TurnFailure};
pub use config::*;
pub use dto::*;
pub use error::{ApiError, ErrorCode, UnknownCode};
pub use events::{ApprovalDecision, EventKind, EventParent, TurnEvent, TurnTrigger};
pub use network::{
    is_private, DomainDecision, DomainPattern, DomainRules, HostPattern, NetworkAccess,
};
pub use suggest::{did_you_mean, did_you_mean_hint, edit_distance};
