//! Coarse state changes pushed to the window as typed events, from one bridge task that follows
//! the runtime's event hub (`warren_api::live::Live::run`). Per-agent turn frames go through
//! the channel of `live_subscribe` instead.

use crate::core::Core;
use serde::Serialize;
use specta::Type;
use tauri::{AppHandle, Manager, Runtime};
use tauri_specta::Event;
use warren_api::live::{
    AgentLifecycleChange, AgentStatus, BudgetLevel, PendingApprovalView, StateChange,
};

/// `config.toml` changed (an agent or profile was added, renamed, removed or edited);
/// `finished` lists the renames, deletes and restores that finished since the last one.
#[derive(Debug, Clone, Serialize, Type, Event)]
pub struct AgentsChanged {
    /// Oldest first.
    pub finished: Vec<AgentLifecycleChange>,
}

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

/// `config.toml` changed while the runtime is stopped (a broken config stopped it): when the
/// file loads again, the runtime starts again, as the Check again button does. Not while the
/// app quits; a start refused (another process runs the runtime) is logged.
fn restart_after_a_fix<R: Runtime>(app: &AppHandle<R>) {
    let quitting = app
        .try_state::<crate::shutdown::Quitting>()
        .is_some_and(|q| q.is_quitting());
    let stopped = app
        .try_state::<crate::runtime::TrayRuntime>()
        .is_some_and(|r| !r.0.is_running());
    if quitting || !stopped {
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn_blocking(move || {
        let Some(core) = app.try_state::<Core>() else {
            return;
        };
        if core.warren.load().is_err() {
            return;
        }
        if let Some(runtime) = app.try_state::<crate::runtime::TrayRuntime>() {
            if let Err(e) = runtime.restart_if_stopped() {
                tracing::info!("the runtime did not start again after config.toml was fixed: {e}");
            }
        }
    });
}

fn emit<R: Runtime>(app: &AppHandle<R>, change: StateChange) {
    crate::notify::on_change(app, &change);
    // A config change may have pruned the statuses of agents renamed or deleted.
    if matches!(
        change,
        StateChange::Status(_) | StateChange::Approvals(_) | StateChange::AgentsChanged { .. }
    ) {
        if let Some(core) = app.try_state::<Core>() {
            reflect_tray(app, &core);
        }
    }
    if matches!(change, StateChange::AgentsChanged { .. }) {
        restart_after_a_fix(app);
    }
    let sent = match change {
        StateChange::AgentsChanged { finished } => AgentsChanged { finished }.emit(app),
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

/// Shows the runtime's state on the tray: statuses, approvals waiting, agents paused.
pub fn reflect_tray<R: Runtime>(app: &AppHandle<R>, core: &Core) {
    let paused = core.warren.paused_now().map(|p| p.len()).unwrap_or(0);
    let state = crate::tray::tray_state(
        &core.live.statuses(),
        core.live.pending_approvals().len(),
        paused,
    );
    crate::tray::reflect(app, &state);
}

/// Follows `<install>/data/paused.json` (written by the window, the tray or another process on
/// the install): on a change the window gets `PausedChanged` and the tray its new state.
pub fn spawn_pause_watch<R: Runtime>(app: &AppHandle<R>) {
    let app = app.clone();
    std::thread::spawn(move || {
        let mut last: Option<Vec<String>> = None;
        loop {
            if let Some(core) = app.try_state::<Core>() {
                if let Ok(now) = core.warren.paused_now() {
                    if last.as_ref() != Some(&now) {
                        if last.is_some() {
                            if let Err(e) = (PausedChanged {
                                paused: now.clone(),
                            })
                            .emit(&app)
                            {
                                tracing::warn!("emitting paused agents to the window failed: {e}");
                            }
                        }
                        reflect_tray(&app, &core);
                        last = Some(now);
                    }
                }
            }
            std::thread::sleep(std::time::Duration::from_millis(500));
        }
    });
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
