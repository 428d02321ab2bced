//! Forgetting agents that no longer exist: after a rename or delete (by this window, the CLI or
//! an editor) the old alias's status, frames and budget alerts leave the live view, so the tray
//! and the status strip count no ghost, and an agent created later under that alias starts
//! idle instead of inheriting the old one's error.

use super::{AgentStatus, Live};

impl Live {
    /// Drops the live state of every agent `exists` rejects, except one still running a turn
    /// (it goes once that turn has ended and the config changes again, or at the next prune).
    /// Returns the agents dropped, sorted.
    ///
    /// A rename never leaves a running turn behind (the lifecycle service quiesces the agent
    /// first), so the old alias's entry is simply dropped and the new alias starts idle.
    pub fn prune(&self, exists: impl Fn(&str) -> bool) -> Vec<String> {
        let mut st = self.lock();
        let gone: Vec<String> = st
            .agents
            .iter()
            .filter(|(agent, a)| {
                !exists(agent)
                    && a.running.is_empty()
                    && !matches!(
                        a.status,
                        AgentStatus::Working | AgentStatus::WaitingForApproval
                    )
            })
            .map(|(agent, _)| agent.clone())
            .collect();
        for agent in &gone {
            st.agents.remove(agent);
            st.alerted.remove(agent);
        }
        st.alerted.retain(|agent, _| exists(agent));
        let mut gone = gone;
        gone.sort();
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ev, started};
    use super::super::*;
    use warren_types::{EventKind, TurnEvent};

    fn failed(agent: &str, turn: &str) -> TurnEvent {
        ev(
            agent,
            turn,
            2,
            EventKind::TurnFailed {
                code: warren_types::TurnFailure::ProviderError,
                message: "boom".into(),
            },
        )
    }

    #[test]
    fn statuses_of_agents_that_no_longer_exist_are_pruned_but_not_a_running_one() {
        let live = Live::new();
        for agent in ["alice", "bob", "carol"] {
            live.fold(started(agent, &format!("{agent}-1")));
        }
        live.fold(failed("alice", "alice-1"));
        live.fold(failed("bob", "bob-1"));
        live.budget_check("alice", "2026-01-01", 100.0, 100);
        // alice was renamed to ann, bob was deleted; carol is gone too but still runs a turn.
        let exists = |a: &str| a == "ann" || a == "dave";
        assert_eq!(
            live.prune(exists),
            vec!["alice".to_string(), "bob".to_string()]
        );
        let statuses = live.statuses();
        assert_eq!(
            statuses,
            vec![AgentStatusEntry {
                agent: "carol".into(),
                status: AgentStatus::Working,
            }]
        );
        assert_eq!(live.snapshot("alice").last_seq, 0, "alice's frames stayed");
        // An agent created later under an old alias starts afresh: idle, and its budget
        // alerts are announced again.
        assert!(live
            .budget_check("alice", "2026-01-01", 100.0, 100)
            .is_some());
        // Once carol's turn has ended, the next prune drops her too.
        live.fold(failed("carol", "carol-1"));
        assert_eq!(live.prune(exists), vec!["carol".to_string()]);
        assert!(live.statuses().is_empty());
        assert!(live.running_agents().is_empty());
    }
}
