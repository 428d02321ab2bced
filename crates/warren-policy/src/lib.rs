//! Warren's permission model (rules §2, §4, §5): the effective [`SecurityPolicy`] of an agent,
//! the one [`SecurityPolicy::authorize`] every tool asks, shell command analysis, OS sandboxes
//! for child processes, the action budget, autonomy gates and the delegation escalation check.

pub mod access;
pub mod authorize;
pub mod budget;
pub mod escalation;
pub mod gate;
pub mod open;
pub mod policy;
pub mod resolve;
pub mod sandbox;
pub mod shell;

pub use access::{Access, Authorized, Decision, Denial, Rule};
pub use authorize::{is_device, under, DEVICES};
pub use budget::{
    ActionLedger, ActionTicket, BudgetError, Clock, ManualClock, MemoryLedger, SystemClock,
};
pub use escalation::{ensure_no_escalation, Escalation};
pub use gate::{Gate, RefusalRule};
pub use open::{Entry, FileAccess, OpenError, OpenedDir, OpenedFile, StateDir};
pub use policy::{PolicyEnv, PolicyError, Root, RootSource, SecurityPolicy, Tier};
pub use resolve::{ResolveError, ResolvedPath, MAX_SYMLINK_HOPS};
/// The syscall layer the race-free opener is built on (its `FileType` is part of [`OpenedFile`]).
pub use rustix;
pub use sandbox::{
    choose as choose_sandbox, confine, protect_process, ConfinedChild, ConfinedCommand,
    EffectiveSandbox, FsGrant, SandboxError, SandboxSupport,
};
pub use shell::{Risk, ShellError, ShellPlan};
