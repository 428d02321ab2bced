//! Coarse state changes pushed to the window as typed events, from one bridge task that follows
//! the runtime's event hub (`warren_api::live::Live::run`). Per-agent turn frames go through
//! the channel of `live_subscribe` instead.

use crate::commands::Core;
use serde::Serialize;
use specta::Type;
use tauri::{AppHandle, Manager, Runtime};
use tauri_specta::Event;
use warren_api::live::{AgentStatus, BudgetLevel, PendingApprovalView, StateChange};

/// `config.toml` changed (an agent or profile was added, renamed, removed or edited).
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct AgentsChanged {}

/// An agent's status changed.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct AgentStatusChanged {
    /// The agent.
    pub agent: String,
    /// Its new status.
    pub status: AgentStatus,
}

/// The approvals waiting changed; `pending` is the whole list now.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct ApprovalsChanged {
    /// Every request waiting, oldest first.
    pub pending: Vec<PendingApprovalView>,
}

/// An agent's spend today crossed 80% of its daily budget, or all of it.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct BudgetAlert {
    /// The agent whose budget it is.
    pub agent: String,
    /// The level crossed.
    pub level: BudgetLevel,
    /// Spent today (UTC), in US cents.
    pub spent_cents: f64,
    /// `max_cost_per_day_cents`.
    pub budget_cents: u32,
}

/// Agents were paused or resumed outside the window (the tray's pause all / resume all).
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct PausedChanged {
    /// The agents paused now.
    pub paused: Vec<String>,
}

fn emit<R: Runtime>(app: &AppHandle<R>, change: StateChange) {
    if matches!(change, StateChange::Status(_) | StateChange::Approvals(_)) {
        if let Some(core) = app.try_state::<Core>() {
            let state =
                crate::tray::tray_state(&core.live.statuses(), core.live.pending_approvals().len());
            crate::tray::reflect(app, &state);
        }
    }
    let sent = match change {
        StateChange::AgentsChanged => AgentsChanged {}.emit(app),
        StateChange::Status(s) => AgentStatusChanged {
            agent: s.agent,
            status: s.status,
        }
        .emit(app),
        StateChange::Approvals(pending) => ApprovalsChanged { pending }.emit(app),
        StateChange::Budget {
            agent,
            level,
            spent_cents,
            budget_cents,
        } => BudgetAlert {
            agent,
            level,
            spent_cents,
            budget_cents,
        }
        .emit(app),
    };
    if let Err(e) = sent {
        tracing::warn!("emitting a state change to the window failed: {e}");
    }
}

/// Starts the one bridge task: it follows the runtime's events for as long as the app runs.
pub fn spawn_bridge<R: Runtime>(app: &AppHandle<R>) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let core = app.state::<Core>();
        core.live
            .run(&core.warren, |change| emit(&app, change))
            .await;
    });
}
