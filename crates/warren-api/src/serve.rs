//! The runtime loop of `warren serve` and of the desktop app: finishes interrupted lifecycle
//! operations, runs the cron scheduler and ends the ACP sessions of crashed clients until asked
//! to stop; then cancels running turns and waits until each is recorded (turn status, events,
//! cron run history) before returning. Only the holder of the runtime lock runs it
//! (see `runtime_owner`).

use crate::runtime_owner::RuntimeOwner;
use crate::Warren;
use serde::Serialize;
use std::future::Future;
use std::time::Duration;
use warren_runtime::cron::Scheduler;
use warren_state::acp_sessions::{
    process_alive, AcpSessions, HEARTBEAT_INTERVAL, HEARTBEAT_TIMEOUT,
};
use warren_state::cron::{CronError, CronStore};
use warren_types::{ApiError, ErrorCode};

/// What a `serve` run did, reported when it stops.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ServeReport {
    /// Cron runs started.
    pub runs_started: u32,
    /// Turns that were running at shutdown and were cancelled.
    pub cancelled_at_shutdown: u32,
}

fn cron_error(e: CronError) -> ApiError {
    ApiError::new(ErrorCode::Storage, e.to_string())
}

impl Warren {
    /// Serves until `shutdown` resolves, as the runtime owner `_owner` (taken with
    /// [`Warren::acquire_runtime`]). `ready` is called once everything is open (the CLI prints
    /// a line; tests wait for it).
    pub async fn serve<F: Future<Output = ()>>(
        &self,
        _owner: &RuntimeOwner,
        shutdown: F,
        ready: impl FnOnce(usize, usize),
    ) -> Result<ServeReport, ApiError> {
        let config = self.load()?.config;
        let host = self.host().await?;
        // Finish rename/delete/restore operations a crash interrupted.
        self.resume_pending().await;
        let store = CronStore::open(&self.layout().cron_db(), host.sessions().pool().clone())
            .await
            .map_err(cron_error)?;
        let runtime_jobs = store.jobs(None).await.map_err(cron_error)?.len();
        let clock = host.kit().clock;
        let scheduler = Scheduler::new(host.clone(), store, clock.clone());
        let acp = AcpSessions::new(host.sessions().clone());
        ready(config.agents.len(), config.cron.len() + runtime_jobs);
        let mut report = ServeReport::default();
        tokio::pin!(shutdown);
        loop {
            match scheduler.tick().await {
                Ok(t) => report.runs_started += u32::try_from(t.started.len()).unwrap_or(u32::MAX),
                Err(e) => tracing::error!("cron tick failed: {e}"),
            }
            if let Err(e) = acp
                .reap(clock.now().into(), HEARTBEAT_TIMEOUT, &process_alive)
                .await
            {
                tracing::warn!("ending stale ACP sessions failed: {e}");
            }
            let sleep = scheduler.next_sleep().await.min(HEARTBEAT_INTERVAL);
            tokio::select! {
                () = tokio::time::sleep(sleep) => {}
                () = &mut shutdown => break,
            }
        }
        // Stop: cancel whatever runs (and whatever was queued behind it) until every run is
        // recorded.
        let aliases: Vec<String> = match self.load() {
            Ok(l) => l.config.agents.keys().cloned().collect(),
            Err(e) => {
                tracing::warn!("{}", e.message);
                config.agents.keys().cloned().collect()
            }
        };
        report.cancelled_at_shutdown =
            u32::try_from(scheduler.running_jobs().len()).unwrap_or(u32::MAX);
        let idle = scheduler.wait_idle();
        tokio::pin!(idle);
        loop {
            for a in &aliases {
                host.cancel(a);
            }
            tokio::select! {
                () = &mut idle => break,
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
        Ok(report)
    }
}
