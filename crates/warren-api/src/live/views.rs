//! Reading the live view: subscriptions to an agent's frames, snapshots, statuses and the
//! approvals waiting.

use super::stream::{snapshot_of, AgentLive};
use super::{AgentStatus, AgentStatusEntry, FrameSink, Live, LiveSnapshot, PendingApprovalView};

impl Live {
    /// Subscribes `sink` to `agent`'s frames and returns the snapshot taken in the same step:
    /// every frame with a `seq` above the snapshot's `last_seq` goes to the sink, every other
    /// one is in the snapshot or older. Returns the subscription id.
    pub fn subscribe(&self, agent: &str, sink: FrameSink) -> (u32, LiveSnapshot) {
        let mut st = self.lock();
        st.next_sink = st.next_sink.wrapping_add(1);
        let id = st.next_sink;
        let a = st.agents.entry(agent.to_string()).or_default();
        a.sinks.push((id, sink));
        (id, snapshot_of(agent, a))
    }

    /// Ends a subscription.
    pub fn unsubscribe(&self, id: u32) {
        for a in self.lock().agents.values_mut() {
            a.sinks.retain(|(i, _)| *i != id);
        }
    }

    /// Ends every subscription (the window reloaded: its channels are gone).
    pub fn unsubscribe_all(&self) {
        for a in self.lock().agents.values_mut() {
            a.sinks.clear();
        }
    }

    /// The agent's stream as of now.
    pub fn snapshot(&self, agent: &str) -> LiveSnapshot {
        let st = self.lock();
        match st.agents.get(agent) {
            Some(a) => snapshot_of(agent, a),
            None => snapshot_of(agent, &AgentLive::default()),
        }
    }

    /// The status of every agent seen by the runtime since the app started (others are idle).
    pub fn statuses(&self) -> Vec<AgentStatusEntry> {
        let st = self.lock();
        let mut v: Vec<_> = st
            .agents
            .iter()
            .map(|(agent, a)| AgentStatusEntry {
                agent: agent.clone(),
                status: a.status,
            })
            .collect();
        v.sort_by(|a, b| a.agent.cmp(&b.agent));
        v
    }

    /// The agents running a turn now (working or waiting for an approval), sorted.
    pub fn running_agents(&self) -> Vec<String> {
        self.statuses()
            .into_iter()
            .filter(|s| {
                matches!(
                    s.status,
                    AgentStatus::Working | AgentStatus::WaitingForApproval
                )
            })
            .map(|s| s.agent)
            .collect()
    }

    /// The approval requests waiting now, oldest first.
    pub fn pending_approvals(&self) -> Vec<PendingApprovalView> {
        let mut v: Vec<_> = self.lock().pending.values().cloned().collect();
        v.sort_by(|a, b| a.requested_at.cmp(&b.requested_at));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ev, started};
    use super::super::*;
    use std::sync::{Arc, Mutex};
    use warren_types::EventKind;

    #[test]
    fn a_subscriber_gets_exactly_the_frames_after_its_snapshot() {
        let live = Live::new();
        live.fold(started("a", "t1"));
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink_got = got.clone();
        let (_, snap) = live.subscribe(
            "a",
            Box::new(move |f| {
                sink_got.lock().unwrap().push(f.seq);
                true
            }),
        );
        live.fold(ev("a", "t1", 2, EventKind::TextDelta { text: "hi".into() }));
        assert_eq!(snap.last_seq, 1);
        assert_eq!(*got.lock().unwrap(), vec![2]);
        live.unsubscribe_all();
        live.fold(ev("a", "t1", 3, EventKind::TextDelta { text: "!".into() }));
        assert_eq!(
            *got.lock().unwrap(),
            vec![2],
            "a reloaded page's sink still got frames"
        );
    }
}
