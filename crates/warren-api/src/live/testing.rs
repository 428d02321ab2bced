//! Events for the live view's tests.

use super::LiveSnapshot;
use warren_types::{EventKind, TurnEvent};

pub(super) fn ev(agent: &str, turn: &str, seq: u32, kind: EventKind) -> TurnEvent {
    TurnEvent {
        turn_id: turn.into(),
        agent: agent.into(),
        seq,
        time: format!("2026-01-01T00:00:{seq:02}Z"),
        kind,
        parent: None,
    }
}

pub(super) fn started(agent: &str, turn: &str) -> TurnEvent {
    ev(
        agent,
        turn,
        1,
        EventKind::TurnStarted {
            session_id: "s".into(),
            trigger: warren_types::TurnTrigger::User,
            prompt: "hi".into(),
        },
    )
}

pub(super) fn child(
    agent: &str,
    turn: &str,
    seq: u32,
    kind: EventKind,
    parent: (&str, &str, &str),
) -> TurnEvent {
    TurnEvent {
        parent: Some(warren_types::EventParent {
            turn_id: parent.0.into(),
            call_id: parent.1.into(),
            agent: parent.2.into(),
        }),
        ..ev(agent, turn, seq, kind)
    }
}

pub(super) fn delegated() -> EventKind {
    EventKind::TurnStarted {
        session_id: "s2".into(),
        trigger: warren_types::TurnTrigger::Delegate,
        prompt: "sub task".into(),
    }
}

pub(super) fn kinds(snap: &LiveSnapshot) -> Vec<(u32, String, &'static str)> {
    snap.frames
        .iter()
        .map(|f| (f.seq, f.event.turn_id.clone(), f.event.kind.type_name()))
        .collect()
}
