//! What the desktop's meters, status strip and turn history show: spend and actions against
//! each agent's budgets, the runtime's counts, and the stored turns with their events.

use crate::live::{runtime_profile_of, AgentStatus, Live};
use crate::Warren;
use serde::{Deserialize, Serialize};
use warren_state::sessions::TurnInfo;
use warren_types::{ApiError, ErrorCode, TurnEvent, TurnTrigger, UnknownCode};

/// A storage error that says what was being read.
pub(crate) fn storage<E: std::fmt::Display>(what: String) -> impl FnOnce(E) -> ApiError {
    move |e| ApiError::new(ErrorCode::Storage, format!("reading {what}: {e}"))
}

/// An agent's budgets and what it used of them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentMeters {
    /// The agent.
    pub agent: String,
    /// Tool rounds allowed per turn.
    pub max_tool_iterations: u32,
    /// Provider spend today (UTC), in US cents.
    pub cost_today_cents: f64,
    /// `max_cost_per_day_cents`.
    pub max_cost_per_day_cents: u32,
    /// Side-effecting actions in the last hour.
    pub actions_last_hour: u32,
    /// `max_actions_per_hour`.
    pub max_actions_per_hour: u32,
}

/// Whether the runtime is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum RuntimeState {
    /// The runtime is open.
    Running,
    /// The runtime could not open.
    Unavailable,
    /// The runtime is stopped: config.toml does not parse or validate, so no turn or cron job
    /// can run until it is fixed (`problem` says what is wrong).
    Stopped,
}

impl RuntimeState {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeState::Running => "running",
            RuntimeState::Unavailable => "unavailable",
            RuntimeState::Stopped => "stopped",
        }
    }
}

/// Where a stored turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum TurnState {
    /// Still running (or the process running it died).
    Running,
    /// Ended with a final answer.
    Completed,
    /// Ended with an error.
    Failed,
    /// Cancelled by the user or a shutdown.
    Cancelled,
}

impl TurnState {
    /// Every state.
    pub const ALL: [TurnState; 4] = [
        TurnState::Running,
        TurnState::Completed,
        TurnState::Failed,
        TurnState::Cancelled,
    ];

    /// The wire spelling, also the `status` column of the `turns` table.
    pub fn as_str(self) -> &'static str {
        match self {
            TurnState::Running => "running",
            TurnState::Completed => "completed",
            TurnState::Failed => "failed",
            TurnState::Cancelled => "cancelled",
        }
    }
}

impl std::str::FromStr for TurnState {
    type Err = UnknownCode;

    fn from_str(s: &str) -> Result<Self, UnknownCode> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownCode::new("turn status", s))
    }
}

/// The status strip: the runtime, agent counts, approvals waiting and today's spend.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct RuntimeStatus {
    /// Whether the runtime is up (see `problem` when it is not).
    pub state: RuntimeState,
    /// Why the runtime is unavailable.
    pub problem: Option<String>,
    /// Agents in the config.
    pub agents: u32,
    /// Agents running a turn (including those waiting for approval).
    pub working: u32,
    /// Agents whose last turn failed.
    pub error: u32,
    /// Agents neither working, in error nor paused (the paused ones are counted apart).
    pub idle: u32,
    /// Approval requests waiting.
    pub pending_approvals: u32,
    /// Spend of every agent today (UTC), in US cents.
    pub spent_today_cents: f64,
    /// The sum of the agents' `max_cost_per_day_cents`.
    pub budget_today_cents: f64,
}

/// One stored turn, for the history list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TurnSummary {
    /// Turn id.
    pub id: String,
    /// Session id.
    pub session_id: String,
    /// Who or what started it.
    pub trigger: TurnTrigger,
    /// The prompt.
    pub prompt: String,
    /// Where it stands.
    pub status: TurnState,
    /// Start time (RFC 3339).
    pub started_at: String,
}

/// A stored turn as listed; a status or trigger this version does not know is a storage error
/// naming the turn and the value.
pub(crate) fn turn_summary(t: TurnInfo) -> Result<TurnSummary, ApiError> {
    let stored =
        |e: UnknownCode| ApiError::new(ErrorCode::Storage, format!("turn `{}`: {e}", t.id));
    let status = t.status.parse().map_err(stored)?;
    let trigger = t.trigger.parse().map_err(stored)?;
    Ok(TurnSummary {
        id: t.id,
        session_id: t.session_id,
        trigger,
        prompt: t.prompt,
        status,
        started_at: t.started_at,
    })
}

/// How many stored turns the history lists.
const HISTORY_TURNS: usize = 50;

impl Warren {
    /// The agent's budgets and what it used of them (today's spend, actions in the last hour).
    pub async fn agent_meters(&self, agent: &str) -> Result<AgentMeters, ApiError> {
        let cfg = self.load()?.config;
        if !cfg.agents.contains_key(agent) {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("agent `{agent}` does not exist"),
            ));
        }
        let rp = runtime_profile_of(&cfg, agent);
        let host = self.host().await?;
        let kit = host.kit();
        let now = kit.clock.now();
        let cost = host
            .sessions()
            .cost_today_cents(agent, now.into())
            .await
            .map_err(storage(format!("today's spend of `{agent}`")))?;
        let actions = kit
            .ledger
            .used(agent, now)
            .map_err(storage(format!("the action ledger of `{agent}`")))?;
        Ok(AgentMeters {
            agent: agent.to_string(),
            max_tool_iterations: rp.max_tool_iterations,
            cost_today_cents: cost,
            max_cost_per_day_cents: rp.max_cost_per_day_cents,
            actions_last_hour: actions,
            max_actions_per_hour: rp.max_actions_per_hour,
        })
    }

    /// The status strip's figures, with agent statuses from `live`.
    pub async fn runtime_status(&self, live: &Live) -> Result<RuntimeStatus, ApiError> {
        let cfg = match self.load() {
            Ok(l) => l.config,
            Err(e) if e.code == ErrorCode::InvalidConfig => {
                return Ok(RuntimeStatus {
                    state: RuntimeState::Stopped,
                    problem: Some(e.message),
                    agents: 0,
                    working: 0,
                    error: 0,
                    idle: 0,
                    pending_approvals: 0,
                    spent_today_cents: 0.0,
                    budget_today_cents: 0.0,
                })
            }
            Err(e) => return Err(e),
        };
        let host = match self.host().await {
            Ok(h) => h,
            Err(e) => {
                return Ok(RuntimeStatus {
                    state: RuntimeState::Unavailable,
                    problem: Some(e.message),
                    agents: u32::try_from(cfg.agents.len()).unwrap_or(u32::MAX),
                    working: 0,
                    error: 0,
                    idle: 0,
                    pending_approvals: 0,
                    spent_today_cents: 0.0,
                    budget_today_cents: 0.0,
                })
            }
        };
        let now = host.kit().clock.now().into();
        let statuses = live.statuses();
        let status_of = |a: &str| {
            statuses
                .iter()
                .find(|s| s.agent == a)
                .map_or(AgentStatus::Idle, |s| s.status)
        };
        let (mut working, mut error, mut idle) = (0, 0, 0);
        let (mut spent, mut budget) = (0.0, 0.0);
        let paused = host.paused().unwrap_or_default();
        for alias in cfg.agents.keys() {
            match status_of(alias) {
                AgentStatus::Working | AgentStatus::WaitingForApproval => working += 1,
                AgentStatus::Error => error += 1,
                AgentStatus::Idle if paused.contains(alias) => {}
                AgentStatus::Idle => idle += 1,
            }
            spent += host
                .sessions()
                .cost_today_cents(alias, now)
                .await
                .map_err(storage(format!("today's spend of `{alias}`")))?;
            budget += f64::from(runtime_profile_of(&cfg, alias).max_cost_per_day_cents);
        }
        Ok(RuntimeStatus {
            state: RuntimeState::Running,
            problem: None,
            agents: u32::try_from(cfg.agents.len()).unwrap_or(u32::MAX),
            working,
            error,
            idle,
            pending_approvals: u32::try_from(live.pending_approvals().len()).unwrap_or(u32::MAX),
            spent_today_cents: spent,
            budget_today_cents: budget,
        })
    }

    /// The agent's stored turns, newest first (at most 50); a not-found error for an agent the
    /// config does not have.
    pub async fn agent_turns(&self, agent: &str) -> Result<Vec<TurnSummary>, ApiError> {
        if !self.load()?.config.agents.contains_key(agent) {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("agent `{agent}` does not exist"),
            ));
        }
        let host = self.host().await?;
        let sessions = host
            .sessions()
            .list_sessions(Some(agent))
            .await
            .map_err(storage(format!("the sessions of `{agent}`")))?;
        let mut out = Vec::new();
        for s in sessions {
            let turns = host
                .sessions()
                .turns(&s.id)
                .await
                .map_err(storage(format!("the turns of session `{}`", s.id)))?;
            for t in turns {
                out.push(turn_summary(t)?);
            }
        }
        out.sort_by(|a, b| b.started_at.cmp(&a.started_at));
        out.truncate(HISTORY_TURNS);
        Ok(out)
    }

    /// The stored events of one turn, in order (to replay it); a not-found error for a turn
    /// that is not stored.
    pub async fn turn_events(&self, turn_id: &str) -> Result<Vec<TurnEvent>, ApiError> {
        let host = self.host().await?;
        let stored = host
            .sessions()
            .turns_session(turn_id)
            .await
            .map_err(storage(format!("turn `{turn_id}`")))?;
        if stored.is_none() {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("turn `{turn_id}` does not exist"),
            ));
        }
        host.sessions()
            .turn_events(turn_id)
            .await
            .map_err(storage(format!("the events of turn `{turn_id}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::{RuntimeState, TurnState, TurnTrigger};
    use crate::live::Live;
    use warren_state::sessions::SessionKind;
    use warren_types::ErrorCode;

    #[test]
    fn runtime_and_turn_states_are_their_documented_codes() {
        crate::test_support::assert_codes(&[
            (RuntimeState::Running, "running"),
            (RuntimeState::Unavailable, "unavailable"),
            (RuntimeState::Stopped, "stopped"),
        ]);
        let turns = [
            (TurnState::Running, "running"),
            (TurnState::Completed, "completed"),
            (TurnState::Failed, "failed"),
            (TurnState::Cancelled, "cancelled"),
        ];
        crate::test_support::assert_codes(&turns);
        assert_eq!(turns.len(), TurnState::ALL.len());
        for (t, code) in turns {
            assert_eq!(code.parse::<TurnState>().unwrap(), t);
        }
        let e = "paused".parse::<TurnState>().unwrap_err();
        assert_eq!(e.to_string(), "unknown turn status `paused`");
    }

    #[test]
    fn a_paused_agent_is_not_counted_idle() {
        let (_dir, w) = crate::test_support::install("[risk_profiles.p]\n[agents.a]\nrisk_profile = \"p\"\n[agents.b]\nrisk_profile = \"p\"\n");
        let rt = crate::test_support::runtime();
        rt.block_on(async {
            let live = Live::new();
            let before = w.runtime_status(&live).await.unwrap();
            assert_eq!((before.agents, before.idle), (2, 2));
            w.set_agent_paused("a", true).await.unwrap();
            let after = w.runtime_status(&live).await.unwrap();
            assert_eq!((after.agents, after.idle, after.working), (2, 1, 0));
        });
    }

    #[test]
    fn unknown_agents_and_turns_are_not_found() {
        let (_dir, w) =
            crate::test_support::install("[risk_profiles.p]\n[agents.a]\nrisk_profile = \"p\"\n");
        let rt = crate::test_support::runtime();
        rt.block_on(async {
            // A known agent without turns: an empty history.
            assert_eq!(w.agent_turns("a").await.unwrap(), vec![]);
            let e = w.agent_turns("ghost").await.unwrap_err();
            assert_eq!(e.code, ErrorCode::NotFound);
            assert!(e.message.contains("agent `ghost`"), "{}", e.message);

            // A stored turn without events: an empty replay; an unknown turn: not found.
            let host = w.host().await.unwrap();
            let now = chrono::Utc::now();
            let s = host
                .sessions()
                .create_session("a", SessionKind::Chat, "hi", now)
                .await
                .unwrap();
            host.sessions()
                .start_turn("t1", &s.id, "a", &TurnTrigger::User, "hi", now)
                .await
                .unwrap();
            assert_eq!(w.turn_events("t1").await.unwrap(), vec![]);
            assert_eq!(w.agent_turns("a").await.unwrap().len(), 1);
            let e = w.turn_events("no-such-turn").await.unwrap_err();
            assert_eq!(e.code, ErrorCode::NotFound);
            assert!(e.message.contains("turn `no-such-turn`"), "{}", e.message);

            // The stored turn reads as running; a status this version does not know is a
            // storage error naming the turn and the value, not a guess.
            let turns = w.agent_turns("a").await.unwrap();
            assert_eq!(turns[0].status, TurnState::Running);
            assert_eq!(turns[0].trigger, TurnTrigger::User);
            sqlx::query("UPDATE turns SET status = 'paused' WHERE id = 't1'")
                .execute(host.sessions().pool())
                .await
                .unwrap();
            let e = w.agent_turns("a").await.unwrap_err();
            assert_eq!(e.code, ErrorCode::Storage);
            assert_eq!(e.message, "turn `t1`: unknown turn status `paused`");
            sqlx::query(
                "UPDATE turns SET status = 'completed', trigger = 'webhook' WHERE id = 't1'",
            )
            .execute(host.sessions().pool())
            .await
            .unwrap();
            let e = w.agent_turns("a").await.unwrap_err();
            assert_eq!(e.message, "turn `t1`: unknown turn trigger `webhook`");
        });
    }
}
