//! The live view of a running install (rules §9.2, the desktop's Live screen): one bridge folds
//! the host's event stream into a frame stream per agent with its own gap-free `seq`, the
//! agents' statuses, the approvals waiting and budget alerts. A front-end subscribes to an
//! agent and gets a snapshot in the same step, so no frame falls between the two; coarse
//! changes go to one callback.

mod prune;

use crate::Warren;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use warren_types::{ApiError, Config, EventKind, RuntimeProfile, TurnEvent};

/// Frames kept per agent for snapshots (the current turn's); older ones are dropped and the
/// snapshot says so.
pub const MAX_BUFFERED_FRAMES: usize = 20_000;

/// How often the bridge looks at `config.toml` to notice agents added, renamed or removed by
/// anyone (this window, the CLI, an editor).
const CONFIG_POLL: Duration = Duration::from_millis(700);

/// What an agent is doing now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum AgentStatus {
    /// No turn runs.
    #[default]
    Idle,
    /// A turn runs.
    Working,
    /// A turn waits for someone to answer an approval request.
    WaitingForApproval,
    /// The last turn failed.
    Error,
}

/// One event of an agent's live stream: one of its own turns, or of a SubAgent turn nested in
/// it (`event.agent` is then the child and `event.parent` names the `delegate` call).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LiveFrame {
    /// The agent whose stream this is.
    pub agent: String,
    /// Position in the agent's stream since the app started: from 1, without gaps, across
    /// turns (the event's own `seq` counts within its turn).
    pub seq: u32,
    /// The runtime event.
    pub event: TurnEvent,
}

/// An agent's stream as of now: what a view shows before applying newer frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LiveSnapshot {
    /// The agent.
    pub agent: String,
    /// Its status.
    pub status: AgentStatus,
    /// The `seq` of the last frame published for the agent (0: none yet). Frames at or below
    /// it are in `frames` or belong to earlier turns; a view drops them.
    pub last_seq: u32,
    /// The frames of every turn of the agent's stream not yet ended, and of those ended since a
    /// turn last started, oldest first (turns running at once interleave).
    pub frames: Vec<LiveFrame>,
    /// True when a turn's earliest frames were dropped from the buffer.
    pub truncated: bool,
}

/// One approval request waiting for an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct PendingApprovalView {
    /// The agent.
    pub agent: String,
    /// The turn.
    pub turn_id: String,
    /// The tool call id (what an answer names).
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its arguments as JSON text.
    pub arguments: String,
    /// Why it needs approval.
    pub reason: String,
    /// When it was asked (RFC 3339).
    pub requested_at: String,
}

/// An agent and its status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentStatusEntry {
    /// The agent.
    pub agent: String,
    /// Its status.
    pub status: AgentStatus,
}

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

/// A coarse change front-ends show without following a stream.
#[derive(Debug, Clone, PartialEq)]
pub enum StateChange {
    /// `config.toml` changed: the agent list (or a profile) may differ.
    AgentsChanged,
    /// An agent's status changed.
    Status(AgentStatusEntry),
    /// The approvals waiting changed; this is the whole list now.
    Approvals(Vec<PendingApprovalView>),
    /// An agent's spend today crossed a budget level.
    Budget {
        /// The agent whose budget it is.
        agent: String,
        /// The level crossed.
        level: BudgetLevel,
        /// Spent today (UTC), in US cents.
        spent_cents: f64,
        /// `max_cost_per_day_cents`.
        budget_cents: u32,
    },
}

/// Receives an agent's frames; returns false once it is gone (it is then forgotten).
pub type FrameSink = Box<dyn Fn(&LiveFrame) -> bool + Send + Sync>;

#[derive(Default)]
struct AgentLive {
    next_seq: u32,
    /// The buffered frames, oldest first, each with the turn of this stream it belongs to (its
    /// own turn, or for a nested frame the outermost ancestor turn run by this stream's agent).
    frames: VecDeque<(String, LiveFrame)>,
    /// The turns the buffer holds frames of: every one not yet ended, and those ended since a
    /// turn last started in this stream.
    held: HashMap<String, HeldTurn>,
    /// The agent's turns running now (its own and the SubAgent turns it runs), each with the
    /// approval requests it waits on.
    running: HashMap<String, BTreeSet<String>>,
    /// How the agent's turn that ended last ended: idle, or error when it failed.
    ended: AgentStatus,
    status: AgentStatus,
    sinks: Vec<(u32, FrameSink)>,
}

/// A turn the buffer holds frames of.
#[derive(Default)]
struct HeldTurn {
    /// It ended, or its start was not seen: it leaves the buffer when a turn starts.
    ended: bool,
    /// Some of its earliest frames were dropped.
    truncated: bool,
}

impl AgentLive {
    /// Working while any of the agent's turns runs, waiting for approval while any of them
    /// waits; otherwise how the last one ended.
    fn current_status(&self) -> AgentStatus {
        if self.running.values().any(|w| !w.is_empty()) {
            AgentStatus::WaitingForApproval
        } else if !self.running.is_empty() {
            AgentStatus::Working
        } else {
            self.ended
        }
    }

    /// Follows the agent's own event (one of a turn it runs) in its running turns.
    fn track(&mut self, event: &TurnEvent) {
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
    fn buffer(&mut self, turn: String, frame: LiveFrame) {
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

#[derive(Default)]
struct LiveState {
    agents: HashMap<String, AgentLive>,
    /// Per running SubAgent turn: its ancestors as `(turn, agent)`, nearest first.
    lineage: HashMap<String, Vec<(String, String)>>,
    /// Keyed by turn and call id: call ids are only unique within a turn.
    pending: BTreeMap<(String, String), PendingApprovalView>,
    /// Per budget agent: the UTC day and the highest level already announced that day.
    alerted: HashMap<String, (String, BudgetLevel)>,
    next_sink: u32,
}

/// The live view's shared state: fed by [`Live::run`], read by subscribers and snapshots.
#[derive(Clone, Default)]
pub struct Live {
    state: Arc<Mutex<LiveState>>,
}

/// Whether an event changes the approvals waiting.
fn touches_approvals(kind: &EventKind) -> bool {
    matches!(
        kind,
        EventKind::ApprovalRequested { .. } | EventKind::ApprovalResolved { .. }
    ) || kind.is_terminal()
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

fn config_stamp(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

impl Live {
    /// An empty live view (fed once [`Live::run`] runs).
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LiveState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

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
                        agent: agent.clone(),
                        turn_id: event.turn_id.clone(),
                        call_id: id.clone(),
                        tool: tool.clone(),
                        arguments: arguments.clone(),
                        reason: reason.clone(),
                        requested_at: event.time.clone(),
                    },
                );
            }
            EventKind::ApprovalResolved { id, .. } => {
                st.pending.remove(&(event.turn_id.clone(), id.clone()));
            }
            k if k.is_terminal() => st.pending.retain(|_, p| p.turn_id != event.turn_id),
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

    /// Records the spend of `agent` after a usage event and returns a budget alert when it
    /// crossed a level not yet announced today.
    fn budget_check(
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

    /// The one bridge: subscribes to the runtime's event hub and folds every event in, and
    /// watches `config.toml`; every coarse change goes to `on_change`. Runs until the host's
    /// hub closes.
    pub async fn run(&self, warren: &Warren, on_change: impl Fn(StateChange)) {
        let host = match warren.host().await {
            Ok(h) => h,
            Err(e) => {
                tracing::error!("the live view cannot follow the runtime: {e}");
                return;
            }
        };
        let mut events = host.subscribe();
        let config = warren.layout().config_path();
        let mut stamp = config_stamp(&config);
        let mut tick = tokio::time::interval(CONFIG_POLL);
        loop {
            tokio::select! {
                ev = events.recv() => {
                    let Some(ev) = ev else { break };
                    let usage_of = match (&ev.kind, &ev.parent) {
                        (EventKind::Usage { .. }, Some(p)) => Some(p.agent.clone()),
                        (EventKind::Usage { .. }, None) => Some(ev.agent.clone()),
                        _ => None,
                    };
                    for c in self.fold(ev) {
                        on_change(c);
                    }
                    if let Some(agent) = usage_of {
                        if let Some(c) = self.usage_alert(warren, &agent).await {
                            on_change(c);
                        }
                    }
                }
                _ = tick.tick() => {
                    let now = config_stamp(&config);
                    if now != stamp {
                        stamp = now;
                        // Agents renamed or deleted leave no status behind.
                        if let Ok(loaded) = warren.load() {
                            self.prune(|a| loaded.config.agents.contains_key(a));
                        }
                        on_change(StateChange::AgentsChanged);
                    }
                }
            }
        }
    }

    async fn usage_alert(&self, warren: &Warren, agent: &str) -> Option<StateChange> {
        let cfg = warren.load().ok()?.config;
        let budget = runtime_profile_of(&cfg, agent).max_cost_per_day_cents;
        let host = warren.host().await.ok()?;
        let now: chrono::DateTime<chrono::Utc> = host.kit().clock.now().into();
        let spent = host.sessions().cost_today_cents(agent, now).await.ok()?;
        self.budget_check(agent, &now.format("%Y-%m-%d").to_string(), spent, budget)
    }
}

fn snapshot_of(agent: &str, a: &AgentLive) -> LiveSnapshot {
    LiveSnapshot {
        agent: agent.to_string(),
        status: a.status,
        last_seq: a.next_seq,
        frames: a.frames.iter().map(|(_, f)| f.clone()).collect(),
        truncated: a.held.values().any(|h| h.truncated),
    }
}

impl Warren {
    /// Answers the waiting approval request of call `call_id` in turn `turn_id` (a turn run
    /// with the host's broker). A request is parked before it is announced, so one seen in an
    /// event or a snapshot is answerable at once. False when nothing waits under that pair.
    pub async fn answer_approval(
        &self,
        turn_id: &str,
        call_id: &str,
        decision: warren_types::ApprovalDecision,
        message: Option<String>,
    ) -> Result<bool, ApiError> {
        let host = self.host().await?;
        let answer = crate::approval::ApprovalAnswer {
            decision,
            message: message.filter(|m| !m.trim().is_empty()),
            no_one_to_ask: false,
        };
        Ok(host.approvals().answer(turn_id, call_id, answer))
    }
}

impl Warren {
    /// Cancels every turn `live` sees running (the app is quitting) and waits, up to `wait`,
    /// until each has ended and been recorded. Returns the agents whose turns were cancelled.
    pub async fn cancel_running_turns(&self, live: &Live, wait: Duration) -> Vec<String> {
        let running = live.running_agents();
        if running.is_empty() {
            return running;
        }
        let Ok(host) = self.host().await else {
            return Vec::new();
        };
        for agent in &running {
            host.cancel(agent);
        }
        let deadline = tokio::time::Instant::now() + wait;
        for agent in &running {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            // The turn lock is released once the turn's end is stored.
            if host.quiesce(agent, left, false).await.is_none() {
                tracing::warn!(agent = %agent, "a cancelled turn did not end before quitting");
            }
        }
        running
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(matches!(&c[1], StateChange::Approvals(v) if v.len() == 1 && v[0].call_id == "c1"));
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
            (left[0].agent.as_str(), left[0].turn_id.as_str()),
            ("b", "t2")
        );
    }

    fn child(
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

    fn delegated() -> EventKind {
        EventKind::TurnStarted {
            session_id: "s2".into(),
            trigger: warren_types::TurnTrigger::Delegate,
            prompt: "sub task".into(),
        }
    }

    fn kinds(snap: &LiveSnapshot) -> Vec<(u32, String, &'static str)> {
        snap.frames
            .iter()
            .map(|f| (f.seq, f.event.turn_id.clone(), f.event.kind.type_name()))
            .collect()
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
