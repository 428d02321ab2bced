//! The live view of a running install (rules §9.2, the desktop's Live screen): one bridge folds
//! the host's event stream into a frame stream per agent with its own gap-free `seq`, the
//! agents' statuses, the approvals waiting and budget alerts. A front-end subscribes to an
//! agent and gets a snapshot in the same step, so no frame falls between the two; coarse
//! changes go to one callback.

mod bridge;
mod budget;
mod commands;
mod fold;
mod prune;
mod stream;
#[cfg(test)]
mod testing;
mod views;

pub use budget::{budget_level, runtime_profile_of, BudgetLevel};

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use stream::AgentLive;
use warren_types::{PendingApproval, TurnEvent};

/// Frames kept per agent for snapshots (the current turn's); older ones are dropped and the
/// snapshot says so.
pub const MAX_BUFFERED_FRAMES: usize = 20_000;

/// What an agent is doing now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// No turn runs.
    #[default]
    Idle,
    /// A turn runs.
    Working,
    /// A turn waits for someone to answer an approval request.
    WaitingForApproval,
    /// The last turn failed.
    Error,
}

/// One event of an agent's live stream: one of its own turns, or of a SubAgent turn nested in
/// it (`event.agent` is then the child and `event.parent` names the `delegate` call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LiveFrame {
    /// The agent whose stream this is.
    pub agent: String,
    /// Position in the agent's stream since the app started: from 1, without gaps, across
    /// turns (the event's own `seq` counts within its turn).
    pub seq: u32,
    /// The runtime event.
    pub event: TurnEvent,
}

/// An agent's stream as of now: what a view shows before applying newer frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LiveSnapshot {
    /// The agent.
    pub agent: String,
    /// Its status.
    pub status: AgentStatus,
    /// The `seq` of the last frame published for the agent (0: none yet). Frames at or below
    /// it are in `frames` or belong to earlier turns; a view drops them.
    pub last_seq: u32,
    /// The frames of every turn of the agent's stream not yet ended, and of those ended since a
    /// turn last started, oldest first (turns running at once interleave).
    pub frames: Vec<LiveFrame>,
    /// True when a turn's earliest frames were dropped from the buffer.
    pub truncated: bool,
}

/// One approval request waiting for an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PendingApprovalView {
    /// The request (its fields at the top level).
    #[serde(flatten)]
    pub request: PendingApproval,
    /// When it was asked (RFC 3339).
    pub requested_at: String,
}

/// An agent and its status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentStatusEntry {
    /// The agent.
    pub agent: String,
    /// Its status.
    pub status: AgentStatus,
}

/// A rename, delete or restore that finished.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentLifecycleChange {
    /// `rename`, `delete` or `restore`.
    pub kind: crate::lifecycle_view::LifecycleKind,
    /// The alias it was about: a rename's old alias, a restore's restored alias.
    pub alias: String,
    /// A rename's new alias.
    pub new_alias: Option<String>,
}

/// A coarse change front-ends show without following a stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StateChange {
    /// `config.toml` changed: the agent list (or a profile) may differ. `finished` lists the
    /// renames, deletes and restores that finished since the last change (by this process or
    /// another), so a screen showing one of those agents can follow it.
    AgentsChanged {
        /// Oldest first.
        finished: Vec<AgentLifecycleChange>,
    },
    /// An agent's status changed.
    Status(AgentStatusEntry),
    /// The approvals waiting changed; this is the whole list now.
    Approvals(Vec<PendingApprovalView>),
    /// An agent's spend today crossed a budget level.
    Budget {
        /// The agent whose budget it is.
        agent: String,
        /// The level crossed.
        level: BudgetLevel,
        /// Spent today (UTC), in US cents.
        spent_cents: f64,
        /// `max_cost_per_day_cents`.
        budget_cents: u32,
    },
}

/// Receives an agent's frames; returns false once it is gone (it is then forgotten).
pub type FrameSink = Box<dyn Fn(&LiveFrame) -> bool + Send + Sync>;

#[derive(Default)]
struct LiveState {
    agents: HashMap<String, AgentLive>,
    /// Per running SubAgent turn: its ancestors as `(turn, agent)`, nearest first.
    lineage: HashMap<String, Vec<(String, String)>>,
    /// Keyed by turn and call id: call ids are only unique within a turn.
    pending: BTreeMap<(String, String), PendingApprovalView>,
    /// Per budget agent: the UTC day and the highest level already announced that day.
    alerted: HashMap<String, (String, BudgetLevel)>,
    next_sink: u32,
}

/// The live view's shared state: fed by [`Live::run`], read by subscribers and snapshots.
#[derive(Clone, Default)]
pub struct Live {
    state: Arc<Mutex<LiveState>>,
}

impl Live {
    /// An empty live view (fed once [`Live::run`] runs).
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LiveState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
