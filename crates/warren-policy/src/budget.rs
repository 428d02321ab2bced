//! The action budget (rules §2.3): `max_actions_per_hour` successful side-effecting actions per
//! agent in a sliding one-hour window. Storage sits behind [`ActionLedger`] so the runtime can
//! persist it; [`MemoryLedger`] keeps it in process.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

/// The sliding window of `max_actions_per_hour`.
pub const BUDGET_WINDOW: Duration = Duration::from_secs(3600);

/// A source of the current time, passed in so tests control it.
pub trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> SystemTime;
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock set by hand (tests, replays).
#[derive(Debug)]
pub struct ManualClock(Mutex<SystemTime>);

impl ManualClock {
    /// A clock showing `t`.
    pub fn new(t: SystemTime) -> Self {
        ManualClock(Mutex::new(t))
    }
    /// Moves the clock forward.
    pub fn advance(&self, d: Duration) {
        if let Ok(mut g) = self.0.lock() {
            *g += d;
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        self.0.lock().map(|g| *g).unwrap_or(SystemTime::UNIX_EPOCH)
    }
}

/// Why an action could not be admitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// The window is full.
    #[error("agent `{agent}` used its {limit} actions of the last hour (max_actions_per_hour); next slot in {retry_after_secs}s")]
    Exhausted {
        /// The agent.
        agent: String,
        /// `max_actions_per_hour`.
        limit: u32,
        /// Seconds until the oldest action leaves the window (0 when the limit is 0).
        retry_after_secs: u64,
    },
    /// The ledger's storage failed.
    #[error("action ledger: {0}")]
    Store(String),
}

/// A reserved action; give it back with [`ActionLedger::refund`] if the action failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActionTicket {
    /// The agent whose budget was charged.
    pub agent: String,
    /// When.
    pub at: SystemTime,
    /// Ledger-specific id.
    pub id: u64,
}

/// Where actions are counted.
pub trait ActionLedger: Send + Sync {
    /// Charges one action to `agent` at `at` if fewer than `limit` are in the window ending at
    /// `at`; atomic, so concurrent calls cannot overspend.
    fn try_charge(
        &self,
        agent: &str,
        limit: u32,
        at: SystemTime,
    ) -> Result<ActionTicket, BudgetError>;
    /// Gives back a charged action (the action did not succeed).
    fn refund(&self, ticket: &ActionTicket) -> Result<(), BudgetError>;
    /// Actions of `agent` in the window ending at `at`.
    fn used(&self, agent: &str, at: SystemTime) -> Result<u32, BudgetError>;
}

/// An in-process ledger.
#[derive(Debug, Default)]
pub struct MemoryLedger {
    entries: Mutex<HashMap<String, VecDeque<(u64, SystemTime)>>>,
    next_id: AtomicU64,
}

impl MemoryLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }
}

fn prune(q: &mut VecDeque<(u64, SystemTime)>, at: SystemTime) {
    while let Some((_, t)) = q.front() {
        let expired = at
            .duration_since(*t)
            .map(|d| d >= BUDGET_WINDOW)
            .unwrap_or(false);
        if expired {
            q.pop_front();
        } else {
            break;
        }
    }
}

impl ActionLedger for MemoryLedger {
    fn try_charge(
        &self,
        agent: &str,
        limit: u32,
        at: SystemTime,
    ) -> Result<ActionTicket, BudgetError> {
        let mut map = self
            .entries
            .lock()
            .map_err(|_| BudgetError::Store("ledger lock poisoned".into()))?;
        let q = map.entry(agent.to_string()).or_default();
        prune(q, at);
        if q.len() >= limit as usize {
            let retry_after_secs = q
                .front()
                .and_then(|(_, t)| (*t + BUDGET_WINDOW).duration_since(at).ok())
                .map(|d| d.as_secs())
                .unwrap_or(0);
            return Err(BudgetError::Exhausted {
                agent: agent.to_string(),
                limit,
                retry_after_secs,
            });
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        q.push_back((id, at));
        Ok(ActionTicket {
            agent: agent.to_string(),
            at,
            id,
        })
    }

    fn refund(&self, ticket: &ActionTicket) -> Result<(), BudgetError> {
        let mut map = self
            .entries
            .lock()
            .map_err(|_| BudgetError::Store("ledger lock poisoned".into()))?;
        if let Some(q) = map.get_mut(&ticket.agent) {
            q.retain(|(id, _)| *id != ticket.id);
        }
        Ok(())
    }

    fn used(&self, agent: &str, at: SystemTime) -> Result<u32, BudgetError> {
        let mut map = self
            .entries
            .lock()
            .map_err(|_| BudgetError::Store("ledger lock poisoned".into()))?;
        Ok(map
            .get_mut(agent)
            .map(|q| {
                prune(q, at);
                u32::try_from(q.len()).unwrap_or(u32::MAX)
            })
            .unwrap_or(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_window_per_agent() {
        let clock = ManualClock::new(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000));
        let ledger = MemoryLedger::new();
        for _ in 0..3 {
            ledger.try_charge("a", 3, clock.now()).unwrap();
            clock.advance(Duration::from_secs(600));
        }
        // Fourth within the hour is refused; another agent is unaffected.
        let err = ledger.try_charge("a", 3, clock.now()).unwrap_err();
        assert!(
            matches!(
                err,
                BudgetError::Exhausted {
                    limit: 3,
                    retry_after_secs: 1800,
                    ..
                }
            ),
            "{err:?}"
        );
        ledger.try_charge("b", 3, clock.now()).unwrap();
        // After the first action leaves the window, one slot frees up.
        clock.advance(Duration::from_secs(1800));
        assert_eq!(ledger.used("a", clock.now()).unwrap(), 2);
        let t = ledger.try_charge("a", 3, clock.now()).unwrap();
        assert!(ledger.try_charge("a", 3, clock.now()).is_err());
        // A refund gives the slot back.
        ledger.refund(&t).unwrap();
        ledger.try_charge("a", 3, clock.now()).unwrap();
    }

    #[test]
    fn zero_means_nothing() {
        let ledger = MemoryLedger::new();
        let err = ledger.try_charge("a", 0, SystemTime::now()).unwrap_err();
        assert!(matches!(err, BudgetError::Exhausted { limit: 0, .. }));
    }
}
