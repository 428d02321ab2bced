//! Event fan-out: every event of a turn gets the next `seq` and a timestamp, goes to every live
//! subscriber without loss (unbounded channels), and is stored with the session by a background
//! writer that commits in batches.

use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::sync::oneshot;
use warren_state::db::DbError;
use warren_state::sessions::{rfc3339, SessionStore, TurnEnd};
use warren_types::{EventKind, EventParent, TurnEvent};

/// How long the event writer gathers events before a write (they reach subscribers at once).
const STORE_WINDOW: std::time::Duration = std::time::Duration::from_millis(20);
/// The most events written in one go.
const STORE_BATCH: usize = 1024;

/// The most events kept for another try after failed writes: beyond it the oldest are dropped
/// (and counted), so a database that stays unwritable cannot grow the writer's memory.
pub const STORE_PENDING: usize = 8 * STORE_BATCH;

/// The events the writer has yet to store, with what it could not.
#[derive(Default)]
struct Pending {
    /// Not stored yet, oldest first: a failed write's events stay here and are written with
    /// the next batch (or on flush).
    events: Vec<TurnEvent>,
    /// Events given up on: dropped beyond [`STORE_PENDING`] or refused for good.
    lost: usize,
    /// The first write error.
    first_error: Option<String>,
    /// Whether `events` holds events of a failed write.
    retrying: bool,
}

impl Pending {
    /// Writes every pending event in one go. On a failure that may pass (a lock held by another
    /// process, a full disk, an I/O error) the events stay for the next write; on one that
    /// cannot (a constraint, an unencodable event) they are given up on.
    async fn write(&mut self, store: &SessionStore) {
        if self.events.is_empty() {
            return;
        }
        let Err(e) = store.append_events(&self.events).await else {
            if self.retrying {
                tracing::info!("stored {} turn events on a retry", self.events.len());
            }
            self.events.clear();
            self.retrying = false;
            return;
        };
        self.first_error.get_or_insert_with(|| e.to_string());
        if !e.may_clear() && self.events.len() > 1 {
            // One event refused for good must not take the others with it: store them one at
            // a time, giving up only on those refused for good.
            let events = std::mem::take(&mut self.events);
            for event in events {
                match store.append_events(std::slice::from_ref(&event)).await {
                    Ok(()) => {}
                    Err(e) if e.may_clear() => self.events.push(event),
                    Err(e) => {
                        tracing::error!(seq = event.seq, "storing a turn event failed: {e}");
                        self.lost += 1;
                    }
                }
            }
            self.retrying = !self.events.is_empty();
            return;
        }
        if !e.may_clear() {
            tracing::error!("storing {} turn events failed: {e}", self.events.len());
            self.lost += self.events.len();
            self.events.clear();
            self.retrying = false;
            return;
        }
        let over = self.events.len().saturating_sub(STORE_PENDING);
        if over > 0 {
            self.events.drain(..over);
            self.lost += over;
        }
        self.retrying = true;
        tracing::warn!(
            dropped = over,
            "storing turn events failed, {} kept for the next write: {e}",
            self.events.len()
        );
    }

    /// After the last write: Ok when every event was stored, else how many were not and why.
    fn outcome(self) -> Result<(), String> {
        let lost = self.lost + self.events.len();
        match self.first_error {
            Some(e) if lost > 0 => {
                tracing::error!("{lost} turn events were not stored: {e}");
                Err(format!("{lost} events not stored: {e}"))
            }
            _ => Ok(()),
        }
    }
}

/// Subscribers to the events of every turn run by a host.
#[derive(Clone, Default)]
pub struct EventHub {
    subscribers: Arc<Mutex<Vec<UnboundedSender<TurnEvent>>>>,
    parent: Option<EventParent>,
}

impl EventHub {
    /// A hub with no subscribers.
    pub fn new() -> Self {
        Self::default()
    }

    /// A new subscriber: receives every event published from now on, in order.
    pub fn subscribe(&self) -> UnboundedReceiver<TurnEvent> {
        let (tx, rx) = unbounded_channel();
        self.subscribers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(tx);
        rx
    }

    /// The same subscribers, for a SubAgent's turn: every event emitted through the returned
    /// hub carries `parent`, so it shows nested under the parent's `delegate` call.
    pub fn nested(&self, parent: EventParent) -> EventHub {
        EventHub {
            subscribers: self.subscribers.clone(),
            parent: Some(parent),
        }
    }

    /// The parent stamped on this hub's events (None for top-level turns).
    pub fn parent(&self) -> Option<&EventParent> {
        self.parent.as_ref()
    }

    /// Sends an event to every live subscriber, forgetting closed ones.
    pub fn publish(&self, event: &TurnEvent) {
        let mut subs = self
            .subscribers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        subs.retain(|s| s.send(event.clone()).is_ok());
    }
}

/// Emits the events of one turn.
pub struct Emitter {
    turn_id: String,
    agent: String,
    seq: u32,
    hub: EventHub,
    store: SessionStore,
    store_tx: Option<UnboundedSender<TurnEvent>>,
    /// What the writer has not stored when the channel closes (the last batch, and any a
    /// failed write left), handed back to a finishing emitter (`hand_back` set). The writer
    /// stores it itself when the emitter was dropped unfinished, or went away while waiting
    /// for it.
    back: Option<oneshot::Receiver<Pending>>,
    hand_back: Arc<std::sync::atomic::AtomicBool>,
    clock: Arc<dyn warren_policy::Clock>,
}

impl Emitter {
    /// An emitter for `turn_id` that stores events through `store` and publishes on `hub`.
    pub fn new(
        turn_id: &str,
        agent: &str,
        hub: EventHub,
        store: SessionStore,
        clock: Arc<dyn warren_policy::Clock>,
    ) -> Self {
        let (tx, mut rx) = unbounded_channel::<TurnEvent>();
        let hand_back = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (back_tx, back) = oneshot::channel::<Pending>();
        {
            let store = store.clone();
            let hand_back = hand_back.clone();
            let handing_back = move || hand_back.load(std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let mut pending = Pending::default();
                while let Some(ev) = rx.recv().await {
                    // Gather what arrives within a short window (subscribers already have it):
                    // fewer, larger writes leave the database to the turn's own statements.
                    let mut batch = vec![ev];
                    let deadline = tokio::time::Instant::now() + STORE_WINDOW;
                    let mut closed = false;
                    loop {
                        while let Ok(more) = rx.try_recv() {
                            batch.push(more);
                        }
                        if batch.len() >= STORE_BATCH {
                            break;
                        }
                        match tokio::time::timeout_at(deadline, rx.recv()).await {
                            Ok(Some(more)) => batch.push(more),
                            Ok(None) => {
                                closed = true;
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    pending.events.append(&mut batch);
                    if closed {
                        break;
                    }
                    pending.write(&store).await;
                }
                // The channel is closed. A finishing emitter stores what is left with the turn's
                // end; otherwise (dropped unfinished, or gone while waiting) it is stored here,
                // with one more try for what a failed write left.
                if handing_back() {
                    match back_tx.send(pending) {
                        Ok(()) => return,
                        Err(p) => pending = p,
                    }
                }
                pending.write(&store).await;
                pending.write(&store).await;
                let _ = pending.outcome();
            });
        }
        Emitter {
            turn_id: turn_id.to_string(),
            agent: agent.to_string(),
            seq: 0,
            hub,
            store,
            store_tx: Some(tx),
            hand_back,
            back: Some(back),
            clock,
        }
    }

    /// The turn id.
    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    /// Emits one event.
    pub fn emit(&mut self, mut kind: EventKind) {
        // No secret Warren holds leaves in an event (shown, stored, sent over ACP).
        kind.redact_secrets();
        self.seq += 1;
        let now: chrono::DateTime<chrono::Utc> = self.clock.now().into();
        let ev = TurnEvent {
            turn_id: self.turn_id.clone(),
            agent: self.agent.clone(),
            seq: self.seq,
            time: rfc3339(now),
            kind,
            parent: self.hub.parent.clone(),
        };
        self.hub.publish(&ev);
        if let Some(tx) = &self.store_tx {
            let _ = tx.send(ev);
        }
    }

    /// Closes the channel and takes back from the writer what it has not stored.
    async fn drain(&mut self) -> Result<Pending, String> {
        self.hand_back
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.store_tx.take();
        match self.back.take() {
            Some(back) => back
                .await
                .map_err(|_| "the event writer stopped before handing back".to_string()),
            None => Ok(Pending::default()),
        }
    }

    /// Waits until every emitted event is stored, trying once more what a failed write left;
    /// an error says how many events were not stored and the first storage error.
    pub async fn flush(mut self) -> Result<(), String> {
        let mut pending = self.drain().await?;
        pending.write(&self.store).await;
        pending.outcome()
    }

    /// Records how the turn ended and stores its last events, in one transaction when it can
    /// (a reader then sees the turn ended with every event, or neither). When that write
    /// fails, the turn's row is written alone and the events as [`Emitter::flush`] stores
    /// them. Returns the turn row's outcome and the events'.
    pub async fn finish(mut self, end: &TurnEnd) -> (Result<(), DbError>, Result<(), String>) {
        let mut pending = match self.drain().await {
            Ok(p) => p,
            Err(e) => {
                let row = self.finish_row(end).await;
                return (row, Err(e));
            }
        };
        match self
            .store
            .finish_turn_with_events(&pending.events, end)
            .await
        {
            Ok(()) => {
                pending.events.clear();
                return (Ok(()), pending.outcome());
            }
            Err(e) => {
                tracing::warn!(
                    "storing the turn's end with its last events failed, each alone now: {e}"
                );
            }
        }
        let row = self.finish_row(end).await;
        pending.write(&self.store).await;
        (row, pending.outcome())
    }

    async fn finish_row(&self, end: &TurnEnd) -> Result<(), DbError> {
        self.store.finish_turn_with_events(&[], end).await
    }
}
