//! The bridge from the runtime to the live view: the host's events folded in, `config.toml`
//! watched for agents added, renamed or removed, and the lifecycle history for the renames,
//! deletes and restores that finished.

use super::{AgentLifecycleChange, Live, StateChange};
use crate::Warren;
use std::time::{Duration, SystemTime};
use warren_types::EventKind;

/// How often the bridge looks at `config.toml` to notice agents added, renamed or removed by
/// anyone (this window, the CLI, an editor).
const CONFIG_POLL: Duration = Duration::from_millis(700);

fn config_stamp(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

impl Live {
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
        let journal = warren_state::lifecycle::journal::Journal::new(warren.layout().journal_dir());
        let history = journal.history_path();
        let mut stamp = (config_stamp(&config), config_stamp(&history));
        // Operations finished before the window opened are not news.
        let mut seen: std::collections::HashSet<String> =
            journal.finished().into_iter().map(|f| f.id).collect();
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
                    let now = (config_stamp(&config), config_stamp(&history));
                    if now != stamp {
                        stamp = now;
                        // Agents renamed or deleted leave no status behind.
                        if let Ok(loaded) = warren.load() {
                            self.prune(|a| loaded.config.agents.contains_key(a));
                        }
                        let finished = journal
                            .finished()
                            .into_iter()
                            .filter(|f| seen.insert(f.id.clone()))
                            .map(|f| AgentLifecycleChange {
                                kind: f.kind.into(),
                                alias: f.alias,
                                new_alias: f.new_alias,
                            })
                            .collect();
                        on_change(StateChange::AgentsChanged { finished });
                    }
                }
            }
        }
    }
}
