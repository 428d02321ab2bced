//! Folding the runtime's events into the agents' streams, statuses and the approvals waiting.

use super::{AgentStatusEntry, Live, LiveFrame, PendingApprovalView, StateChange};
use warren_types::{EventKind, PendingApproval, TurnEvent};

/// Whether an event changes the approvals waiting.
fn touches_approvals(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::ApprovalRequested { .. } | EventKind::ApprovalResolved { .. }
    ) || kind.is_terminal()
}

impl Live {
    /// Folds one runtime event in: the agent's next frame goes to its buffer and subscribers,
    /// and the coarse changes it causes are returned.
    ///
    /// A SubAgent's event (one with a `parent`) also goes, as a frame of their own streams, to
    /// the parent's stream and every further ancestor's, so a view of the delegating agent sees
    /// the child turn nested under its `delegate` call with no second subscription. There it
    /// belongs to the ancestor's turn it nests in (also when an agent delegates to itself,
    /// where the streams are one) and moves no status but its own agent's.
    ///
    /// An agent may run several turns at once (a SubAgent turn does not wait for the agent's
    /// own turn): its buffer holds every turn not yet ended, and the ended ones until a turn
    /// starts, and its status counts every turn it runs.
    pub fn fold(&self, event: TurnEvent) -> Vec<StateChange> {
        let mut changes = Vec::new();
        let mut st = self.lock();
        let agent = event.agent.clone();
        let approvals = touches_approvals(&event.kind);
        match &event.kind {
            EventKind::ApprovalRequested {
                id,
                tool,
                arguments,
                reason,
            } => {
                st.pending.insert(
                    (event.turn_id.clone(), id.clone()),
                    PendingApprovalView {
                        request: PendingApproval {
                            agent: agent.clone(),
                            turn_id: event.turn_id.clone(),
                            call_id: id.clone(),
                            tool: tool.clone(),
                            arguments: arguments.clone(),
                            reason: reason.clone(),
                        },
                        requested_at: event.time.clone(),
                    },
                );
            }
            EventKind::ApprovalResolved { id, .. } => {
                st.pending.remove(&(event.turn_id.clone(), id.clone()));
            }
            k if k.is_terminal() => st.pending.retain(|_, p| p.request.turn_id != event.turn_id),
            _ => {}
        }
        let ancestors = match &event.parent {
            Some(p) => {
                let mut v = vec![(p.turn_id.clone(), p.agent.clone())];
                v.extend(st.lineage.get(&p.turn_id).cloned().unwrap_or_default());
                v
            }
            None => Vec::new(),
        };
        if !ancestors.is_empty() {
            if matches!(event.kind, EventKind::TurnStarted { .. }) {
                st.lineage.insert(event.turn_id.clone(), ancestors.clone());
            } else if event.kind.is_terminal() {
                st.lineage.remove(&event.turn_id);
            }
        }
        let mut streams = vec![agent.clone()];
        for (_, a) in &ancestors {
            if !streams.contains(a) {
                streams.push(a.clone());
            }
        }
        for stream in streams {
            let a = st.agents.entry(stream.clone()).or_default();
            if stream == agent {
                a.track(&event);
                let s = a.current_status();
                if s != a.status {
                    a.status = s;
                    changes.push(StateChange::Status(AgentStatusEntry {
                        agent: agent.clone(),
                        status: s,
                    }));
                }
            }
            // The outermost ancestor turn run by this stream's agent holds the frame (the card
            // it nests under is there); without one, the event's own turn.
            let turn = ancestors
                .iter()
                .rev()
                .find(|(_, who)| *who == stream)
                .map_or_else(|| event.turn_id.clone(), |(t, _)| t.clone());
            a.next_seq += 1;
            let frame = LiveFrame {
                agent: stream,
                seq: a.next_seq,
                event: event.clone(),
            };
            a.sinks.retain(|(_, sink)| sink(&frame));
            a.buffer(turn, frame);
        }
        if approvals {
            let mut v: Vec<_> = st.pending.values().cloned().collect();
            v.sort_by(|a, b| a.requested_at.cmp(&b.requested_at));
            changes.push(StateChange::Approvals(v));
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{child, delegated, ev, kinds, started};
    use super::super::*;
    use std::sync::{Arc, Mutex};
    use warren_types::EventKind;

    #[test]
    fn frames_get_a_gap_free_seq_per_agent_across_turns() {
        let live = Live::new();
        live.fold(started("a", "t1"));
        live.fold(ev("b", "u1", 1, EventKind::TurnCancelled {}));
        live.fold(ev(
            "a",
            "t1",
            2,
            EventKind::TurnCompleted { text: "x".into() },
        ));
        live.fold(started("a", "t2"));
        let snap = live.snapshot("a");
        assert_eq!(snap.last_seq, 3);
        assert_eq!(snap.frames.len(), 1, "a new turn starts a new buffer");
        assert_eq!(snap.frames[0].seq, 3);
        assert_eq!(live.snapshot("b").last_seq, 1);
    }

    #[test]
    fn statuses_and_pending_approvals_follow_the_events() {
        let live = Live::new();
        let c = live.fold(started("a", "t1"));
        assert!(c.contains(&StateChange::Status(AgentStatusEntry {
            agent: "a".into(),
            status: AgentStatus::Working
        })));
        let c = live.fold(ev(
            "a",
            "t1",
            2,
            EventKind::ApprovalRequested {
                id: "c1".into(),
                tool: "file_write".into(),
                arguments: "{}".into(),
                reason: "asks".into(),
            },
        ));
        assert!(
            matches!(&c[1], StateChange::Approvals(v) if v.len() == 1 && v[0].request.call_id == "c1")
        );
        assert_eq!(live.statuses()[0].status, AgentStatus::WaitingForApproval);
        live.fold(started("b", "t2"));
        assert_eq!(live.running_agents(), ["a", "b"]);
        live.fold(ev(
            "a",
            "t1",
            3,
            EventKind::TurnFailed {
                code: warren_types::TurnFailure::Internal,
                message: "y".into(),
            },
        ));
        assert!(
            live.pending_approvals().is_empty(),
            "a finished turn waits for nothing"
        );
        assert_eq!(live.statuses()[0].status, AgentStatus::Error);
        assert_eq!(live.running_agents(), ["b"], "a failed turn runs no more");
    }

    #[test]
    fn pending_approvals_of_two_turns_with_one_call_id_stay_apart() {
        let live = Live::new();
        let asked = |agent: &str, turn: &str| {
            ev(
                agent,
                turn,
                2,
                EventKind::ApprovalRequested {
                    id: "text-1-1".into(),
                    tool: "file_write".into(),
                    arguments: "{}".into(),
                    reason: "asks".into(),
                },
            )
        };
        live.fold(started("a", "t1"));
        live.fold(started("b", "t2"));
        live.fold(asked("a", "t1"));
        live.fold(asked("b", "t2"));
        assert_eq!(live.pending_approvals().len(), 2);
        live.fold(ev(
            "a",
            "t1",
            3,
            EventKind::ApprovalResolved {
                id: "text-1-1".into(),
                decision: warren_types::ApprovalDecision::ApproveOnce,
                message: None,
            },
        ));
        let left = live.pending_approvals();
        assert_eq!(left.len(), 1);
        assert_eq!(
            (
                left[0].request.agent.as_str(),
                left[0].request.turn_id.as_str()
            ),
            ("b", "t2")
        );
    }

    #[test]
    fn a_child_turn_streams_nested_in_its_parents_stream_and_in_its_own() {
        let live = Live::new();
        live.fold(started("alice", "t1"));
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink_got = got.clone();
        let (_, _) = live.subscribe(
            "alice",
            Box::new(move |f| {
                sink_got
                    .lock()
                    .unwrap()
                    .push((f.seq, f.event.agent.clone()));
                true
            }),
        );
        let call = EventKind::ToolCall {
            id: "c1".into(),
            name: "delegate".into(),
            arguments: "{}".into(),
        };
        live.fold(ev("alice", "t1", 2, call));
        let link = ("t1", "c1", "alice");
        live.fold(child("bob", "u1", 1, delegated(), link));
        assert_eq!(live.statuses()[1].status, AgentStatus::Working);
        live.fold(child(
            "bob",
            "u1",
            2,
            EventKind::TextDelta { text: "hi".into() },
            link,
        ));
        let c = live.fold(child(
            "bob",
            "u1",
            3,
            EventKind::TurnCompleted { text: "hi".into() },
            link,
        ));
        assert!(
            c.contains(&StateChange::Status(AgentStatusEntry {
                agent: "bob".into(),
                status: AgentStatus::Idle
            })),
            "the child's own status follows its turn: {c:?}"
        );
        assert!(
            !c.iter()
                .any(|c| matches!(c, StateChange::Status(s) if s.agent == "alice")),
            "the parent still runs: {c:?}"
        );
        let parent = live.snapshot("alice");
        assert_eq!(
            kinds(&parent),
            vec![
                (1, "t1".into(), "turn_started"),
                (2, "t1".into(), "tool_call"),
                (3, "u1".into(), "turn_started"),
                (4, "u1".into(), "text_delta"),
                (5, "u1".into(), "turn_completed"),
            ],
            "the child's frames are in the parent's buffer, in order, with the parent's seq"
        );
        assert_eq!(parent.status, AgentStatus::Working);
        assert_eq!(
            *got.lock().unwrap(),
            vec![
                (2, "alice".to_string()),
                (3, "bob".into()),
                (4, "bob".into()),
                (5, "bob".into())
            ]
        );
        let own = live.snapshot("bob");
        assert_eq!(
            own.last_seq, 3,
            "the child's own stream counts its own frames"
        );
        assert_eq!(own.frames.len(), 3);
        assert!(own.frames.iter().all(|f| f.agent == "bob"));
    }

    #[test]
    fn a_self_delegation_keeps_the_parent_turn_and_a_grandchild_reaches_every_ancestor() {
        let live = Live::new();
        live.fold(started("alice", "t1"));
        live.fold(child("alice", "t2", 1, delegated(), ("t1", "c1", "alice")));
        // The child (alice again) delegates to bob.
        live.fold(child("bob", "u1", 1, delegated(), ("t2", "c2", "alice")));
        live.fold(child(
            "bob",
            "u1",
            2,
            EventKind::TurnCompleted { text: "x".into() },
            ("t2", "c2", "alice"),
        ));
        let c = live.fold(child(
            "alice",
            "t2",
            2,
            EventKind::TurnCompleted { text: "y".into() },
            ("t1", "c1", "alice"),
        ));
        assert!(
            !c.iter().any(|c| matches!(c, StateChange::Status(_))),
            "the nested turn moves no status of alice: {c:?}"
        );
        let snap = live.snapshot("alice");
        assert_eq!(snap.status, AgentStatus::Working);
        assert_eq!(
            kinds(&snap),
            vec![
                (1, "t1".into(), "turn_started"),
                (2, "t2".into(), "turn_started"),
                (3, "u1".into(), "turn_started"),
                (4, "u1".into(), "turn_completed"),
                (5, "t2".into(), "turn_completed"),
            ],
            "one frame per event, the parent turn kept"
        );
        assert_eq!(live.snapshot("bob").last_seq, 2);
        live.fold(ev(
            "alice",
            "t1",
            2,
            EventKind::TurnCompleted { text: "z".into() },
        ));
        assert_eq!(live.snapshot("alice").status, AgentStatus::Idle);
        assert!(live.lock().lineage.is_empty(), "ended turns are forgotten");
    }

    fn status_of(live: &Live, agent: &str) -> AgentStatus {
        live.snapshot(agent).status
    }

    fn moved(changes: &[StateChange], agent: &str) -> Vec<AgentStatus> {
        changes
            .iter()
            .filter_map(|c| match c {
                StateChange::Status(s) if s.agent == agent => Some(s.status),
                _ => None,
            })
            .collect()
    }

    fn approval(id: &str) -> EventKind {
        EventKind::ApprovalRequested {
            id: id.into(),
            tool: "file_write".into(),
            arguments: "{}".into(),
            reason: "asks".into(),
        }
    }

    fn resolved(id: &str) -> EventKind {
        EventKind::ApprovalResolved {
            id: id.into(),
            decision: warren_types::ApprovalDecision::ApproveOnce,
            message: None,
        }
    }

    #[test]
    fn a_subagent_turn_of_a_busy_agent_leaves_its_own_turn_in_the_buffer_and_status() {
        let live = Live::new();
        live.fold(started("bob", "b1"));
        live.fold(ev(
            "bob",
            "b1",
            2,
            EventKind::TextDelta { text: "own".into() },
        ));
        live.fold(started("alice", "t1"));
        let link = ("t1", "c1", "alice");
        let c = live.fold(child("bob", "u1", 1, delegated(), link));
        assert!(moved(&c, "bob").is_empty(), "bob already works: {c:?}");
        live.fold(ev(
            "bob",
            "b1",
            3,
            EventKind::TextDelta {
                text: "more".into(),
            },
        ));
        live.fold(child(
            "bob",
            "u1",
            2,
            EventKind::TextDelta { text: "sub".into() },
            link,
        ));
        let c = live.fold(child(
            "bob",
            "u1",
            3,
            EventKind::TurnFailed {
                code: warren_types::TurnFailure::Internal,
                message: "y".into(),
            },
            link,
        ));
        assert!(
            moved(&c, "bob").is_empty(),
            "bob's own turn still runs: {c:?}"
        );
        assert_eq!(status_of(&live, "bob"), AgentStatus::Working);
        assert_eq!(live.running_agents(), ["alice", "bob"]);
        let snap = live.snapshot("bob");
        assert_eq!(
            kinds(&snap),
            vec![
                (1, "b1".into(), "turn_started"),
                (2, "b1".into(), "text_delta"),
                (3, "u1".into(), "turn_started"),
                (4, "b1".into(), "text_delta"),
                (5, "u1".into(), "text_delta"),
                (6, "u1".into(), "turn_failed"),
            ],
            "both turns, interleaved in seq order"
        );
        assert!(!snap.truncated);
        let c = live.fold(ev(
            "bob",
            "b1",
            4,
            EventKind::TurnCompleted { text: "x".into() },
        ));
        assert_eq!(
            moved(&c, "bob"),
            [AgentStatus::Idle],
            "the last turn to end completed"
        );
        assert_eq!(
            live.snapshot("bob").frames.len(),
            7,
            "ended turns stay until a turn starts"
        );
        live.fold(started("bob", "b2"));
        assert_eq!(
            kinds(&live.snapshot("bob")),
            vec![(8, "b2".into(), "turn_started")],
            "a new turn drops the ended ones"
        );
        // alice's stream has its own turn and bob's SubAgent turn, not bob's own.
        let alice = live.snapshot("alice");
        assert!(alice.frames.iter().all(|f| f.event.turn_id != "b1"));
        assert_eq!(alice.frames.len(), 4);
    }

    #[test]
    fn a_subagent_turn_starting_later_does_not_drop_a_running_turn_it_outlives() {
        let live = Live::new();
        live.fold(started("alice", "t1"));
        let link = ("t1", "c1", "alice");
        live.fold(child("bob", "u1", 1, delegated(), link));
        // bob's own turn starts while the SubAgent turn runs, and ends first.
        live.fold(started("bob", "b1"));
        live.fold(ev(
            "bob",
            "b1",
            2,
            EventKind::TurnCompleted { text: "x".into() },
        ));
        assert_eq!(status_of(&live, "bob"), AgentStatus::Working);
        live.fold(child(
            "bob",
            "u1",
            2,
            EventKind::TextDelta { text: "sub".into() },
            link,
        ));
        let snap = live.snapshot("bob");
        assert_eq!(
            kinds(&snap),
            vec![
                (1, "u1".into(), "turn_started"),
                (2, "b1".into(), "turn_started"),
                (3, "b1".into(), "turn_completed"),
                (4, "u1".into(), "text_delta"),
            ]
        );
        live.fold(child(
            "bob",
            "u1",
            3,
            EventKind::TurnCompleted { text: "y".into() },
            link,
        ));
        assert_eq!(status_of(&live, "bob"), AgentStatus::Idle);
    }

    #[test]
    fn an_agent_waits_for_approval_while_any_of_its_turns_waits() {
        let live = Live::new();
        live.fold(started("bob", "b1"));
        live.fold(ev("bob", "b1", 2, approval("a1")));
        assert_eq!(status_of(&live, "bob"), AgentStatus::WaitingForApproval);
        live.fold(started("alice", "t1"));
        let link = ("t1", "c1", "alice");
        let c = live.fold(child("bob", "u1", 1, delegated(), link));
        assert!(moved(&c, "bob").is_empty(), "b1 still waits: {c:?}");
        live.fold(child("bob", "u1", 2, approval("a2"), link));
        live.fold(ev("bob", "b1", 3, resolved("a1")));
        assert_eq!(
            status_of(&live, "bob"),
            AgentStatus::WaitingForApproval,
            "u1 still waits"
        );
        assert_eq!(live.pending_approvals().len(), 1);
        let c = live.fold(child("bob", "u1", 3, resolved("a2"), link));
        assert_eq!(moved(&c, "bob"), [AgentStatus::Working]);
        live.fold(child(
            "bob",
            "u1",
            4,
            EventKind::TurnCompleted { text: "y".into() },
            link,
        ));
        assert_eq!(status_of(&live, "bob"), AgentStatus::Working);
        live.fold(ev(
            "bob",
            "b1",
            4,
            EventKind::TurnFailed {
                code: warren_types::TurnFailure::Internal,
                message: "y".into(),
            },
        ));
        assert_eq!(status_of(&live, "bob"), AgentStatus::Error);
        assert!(live.running_agents().contains(&"alice".to_string()));
        assert!(!live.running_agents().contains(&"bob".to_string()));
    }
}
