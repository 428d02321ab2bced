//! Daily cost budgets: the level an agent's spend reaches, announced once a day per level.

use super::{Live, StateChange};
use crate::Warren;
use serde::{Deserialize, Serialize};
use warren_types::{Config, RuntimeProfile};

/// How close an agent is to its daily cost budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum BudgetLevel {
    /// At least 80% of `max_cost_per_day_cents` is spent.
    Warning,
    /// The budget is spent: further provider calls fail until tomorrow (UTC).
    Exceeded,
}

/// The runtime profile an agent runs under (the defaults when it names none).
pub fn runtime_profile_of(config: &Config, agent: &str) -> RuntimeProfile {
    config
        .agents
        .get(agent)
        .and_then(|a| a.runtime_profile.as_ref())
        .and_then(|p| config.runtime_profiles.get(p))
        .cloned()
        .unwrap_or_default()
}

/// The level `spent` reaches against `budget`, if any.
pub fn budget_level(spent_cents: f64, budget_cents: u32) -> Option<BudgetLevel> {
    let budget = f64::from(budget_cents);
    if spent_cents >= budget {
        Some(BudgetLevel::Exceeded)
    } else if spent_cents >= budget * 0.8 {
        Some(BudgetLevel::Warning)
    } else {
        None
    }
}

impl Live {
    /// Records the spend of `agent` after a usage event and returns a budget alert when it
    /// crossed a level not yet announced today.
    pub(super) fn budget_check(
        &self,
        agent: &str,
        day: &str,
        spent_cents: f64,
        budget_cents: u32,
    ) -> Option<StateChange> {
        let level = budget_level(spent_cents, budget_cents)?;
        let mut st = self.lock();
        let seen = st.alerted.get(agent);
        if seen.is_some_and(|(d, l)| d == day && *l >= level) {
            return None;
        }
        st.alerted
            .insert(agent.to_string(), (day.to_string(), level));
        Some(StateChange::Budget {
            agent: agent.to_string(),
            level,
            spent_cents,
            budget_cents,
        })
    }

    pub(super) async fn usage_alert(&self, warren: &Warren, agent: &str) -> Option<StateChange> {
        let cfg = warren.load().ok()?.config;
        let budget = runtime_profile_of(&cfg, agent).max_cost_per_day_cents;
        let host = warren.host().await.ok()?;
        let now: chrono::DateTime<chrono::Utc> = host.kit().clock.now().into();
        let spent = host.sessions().cost_today_cents(agent, now).await.ok()?;
        self.budget_check(agent, &now.format("%Y-%m-%d").to_string(), spent, budget)
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    #[test]
    fn a_budget_level_is_announced_once_a_day() {
        let live = Live::new();
        assert_eq!(live.budget_check("a", "d1", 10.0, 100), None);
        assert!(live.budget_check("a", "d1", 85.0, 100).is_some());
        assert_eq!(live.budget_check("a", "d1", 90.0, 100), None);
        assert!(matches!(
            live.budget_check("a", "d1", 100.0, 100),
            Some(StateChange::Budget {
                level: BudgetLevel::Exceeded,
                ..
            })
        ));
        assert!(live.budget_check("a", "d2", 85.0, 100).is_some());
    }
}
