//! One agent's stream: the turns it runs, its status, and the buffer of frames a snapshot
//! is built from.

use super::{AgentStatus, FrameSink, LiveFrame, LiveSnapshot, MAX_BUFFERED_FRAMES};
use std::collections::{BTreeSet, HashMap, VecDeque};
use warren_types::{EventKind, TurnEvent};

#[derive(Default)]
pub(super) struct AgentLive {
    pub(super) next_seq: u32,
    /// The buffered frames, oldest first, each with the turn of this stream it belongs to (its
    /// own turn, or for a nested frame the outermost ancestor turn run by this stream's agent).
    pub(super) frames: VecDeque<(String, LiveFrame)>,
    /// The turns the buffer holds frames of: every one not yet ended, and those ended since a
    /// turn last started in this stream.
    pub(super) held: HashMap<String, HeldTurn>,
    /// The agent's turns running now (its own and the SubAgent turns it runs), each with the
    /// approval requests it waits on.
    pub(super) running: HashMap<String, BTreeSet<String>>,
    /// How the agent's turn that ended last ended: idle, or error when it failed.
    pub(super) ended: AgentStatus,
    pub(super) status: AgentStatus,
    pub(super) sinks: Vec<(u32, FrameSink)>,
}

/// A turn the buffer holds frames of.
#[derive(Default)]
pub(super) struct HeldTurn {
    /// It ended, or its start was not seen: it leaves the buffer when a turn starts.
    pub(super) ended: bool,
    /// Some of its earliest frames were dropped.
    pub(super) truncated: bool,
}

impl AgentLive {
    /// Working while any of the agent's turns runs, waiting for approval while any of them
    /// waits; otherwise how the last one ended.
    pub(super) fn current_status(&self) -> AgentStatus {
        if self.running.values().any(|w| !w.is_empty()) {
            AgentStatus::WaitingForApproval
        } else if !self.running.is_empty() {
            AgentStatus::Working
        } else {
            self.ended
        }
    }

    /// Follows the agent's own event (one of a turn it runs) in its running turns.
    pub(super) fn track(&mut self, event: &TurnEvent) {
        let turn = &event.turn_id;
        match &event.kind {
            EventKind::TurnStarted { .. } => {
                self.running.entry(turn.clone()).or_default();
            }
            EventKind::ApprovalRequested { id, .. } => {
                self.running
                    .entry(turn.clone())
                    .or_default()
                    .insert(id.clone());
            }
            EventKind::ApprovalResolved { id, .. } => {
                if let Some(waiting) = self.running.get_mut(turn) {
                    waiting.remove(id);
                }
            }
            k if k.is_terminal() => {
                self.running.remove(turn);
                self.ended = if matches!(k, EventKind::TurnFailed { .. }) {
                    AgentStatus::Error
                } else {
                    AgentStatus::Idle
                };
            }
            _ => {}
        }
    }

    /// Buffers `frame` as one of `turn`'s (a turn of this stream). A turn starting drops the
    /// turns that ended; past [`MAX_BUFFERED_FRAMES`] the oldest ended turn goes whole, or
    /// else the oldest frame.
    pub(super) fn buffer(&mut self, turn: String, frame: LiveFrame) {
        let own = frame.event.turn_id == turn;
        if own && matches!(frame.event.kind, EventKind::TurnStarted { .. }) {
            self.held.retain(|_, h| !h.ended);
            let held = &self.held;
            self.frames.retain(|(t, _)| held.contains_key(t));
            self.held.insert(turn.clone(), HeldTurn::default());
        }
        let held = self.held.entry(turn.clone()).or_insert(HeldTurn {
            ended: true,
            truncated: false,
        });
        if own && frame.event.kind.is_terminal() {
            held.ended = true;
        }
        self.frames.push_back((turn, frame));
        while self.frames.len() > MAX_BUFFERED_FRAMES {
            let oldest_ended = if self.held.values().any(|h| h.ended) {
                self.frames
                    .iter()
                    .find(|(t, _)| self.held.get(t).is_some_and(|h| h.ended))
                    .map(|(t, _)| t.clone())
            } else {
                None
            };
            match oldest_ended {
                Some(gone) => {
                    self.held.remove(&gone);
                    self.frames.retain(|(t, _)| *t != gone);
                }
                None => {
                    if let Some((t, _)) = self.frames.pop_front() {
                        if let Some(h) = self.held.get_mut(&t) {
                            h.truncated = true;
                        }
                    }
                }
            }
        }
    }
}

pub(super) fn snapshot_of(agent: &str, a: &AgentLive) -> LiveSnapshot {
    LiveSnapshot {
        agent: agent.to_string(),
        status: a.status,
        last_seq: a.next_seq,
        frames: a.frames.iter().map(|(_, f)| f.clone()).collect(),
        truncated: a.held.values().any(|h| h.truncated),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{child, delegated, ev, started};
    use super::super::*;
    use warren_types::EventKind;

    #[test]
    fn a_full_buffer_drops_an_ended_turn_whole_before_a_running_turns_frames() {
        let live = Live::new();
        live.fold(started("bob", "b1"));
        live.fold(started("alice", "t1"));
        let link = ("t1", "c1", "alice");
        live.fold(child("bob", "u1", 1, delegated(), link));
        live.fold(child(
            "bob",
            "u1",
            2,
            EventKind::TurnCompleted { text: "y".into() },
            link,
        ));
        // Three frames buffered: one more than the buffer holds drops u1's two.
        for _ in 0..MAX_BUFFERED_FRAMES - 2 {
            live.fold(ev(
                "bob",
                "b1",
                2,
                EventKind::TextDelta { text: "x".into() },
            ));
        }
        let snap = live.snapshot("bob");
        assert_eq!(snap.frames.len(), MAX_BUFFERED_FRAMES - 1);
        assert!(snap.frames.iter().all(|f| f.event.turn_id == "b1"));
        assert!(!snap.truncated, "only the ended turn went");
        for _ in 0..2 {
            live.fold(ev(
                "bob",
                "b1",
                2,
                EventKind::TextDelta { text: "x".into() },
            ));
        }
        let snap = live.snapshot("bob");
        assert_eq!(snap.frames.len(), MAX_BUFFERED_FRAMES);
        assert!(snap.truncated);
        assert_eq!(snap.frames[0].seq, 4, "the running turn's first frame went");
    }
}
