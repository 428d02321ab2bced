//! Runtime cron jobs (`data/cron.db`) as an owned-state participant. Jobs and runs are keyed by
//! the agent's `sessions.db` id, so a rename needs nothing here; a delete exports them to
//! `cascade/cron_runtime.json` (the config's `[cron.<id>]` blocks go to `cascade/cron.json`)
//! and purges them; a restore re-creates the jobs (run history stays in the archive).
//!
//! The scheduler's cursors (`cursors` table, keyed by job id) are owned state too, for the
//! runtime jobs and for the agent's `[cron.<id>]` jobs alike: a delete archives and removes
//! them, and a restore starts each job from a fresh cursor (armed on the next tick). A cursor
//! left behind would make a restored job, or a new job reusing the id, fire a catch-up run at
//! once for time the job did not exist.

use super::owned::{AgentState, OwnedState, OwnedStateError};
use async_trait::async_trait;
use serde::Deserialize;
use warren_state::cron::{CronJob, CronStore};

const KIND: &str = "cron_runtime";

/// The participant over an install's `cron.db`.
pub struct CronJobsState {
    store: CronStore,
}

impl CronJobsState {
    /// The participant over `store`.
    pub fn new(store: CronStore) -> Self {
        CronJobsState { store }
    }
}

#[derive(Deserialize)]
struct JobRecord {
    id: String,
    schedule: String,
    prompt: String,
    enabled: bool,
    created_at: String,
}

#[derive(Deserialize)]
struct ExportDoc {
    jobs: Vec<JobRecord>,
}

fn err(op: &'static str) -> impl Fn(warren_state::cron::CronError) -> OwnedStateError {
    move |e| OwnedStateError::new(KIND, op, e)
}

#[async_trait(?Send)]
impl OwnedState for CronJobsState {
    fn kind(&self) -> &'static str {
        KIND
    }
    async fn count(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        let Some(id) = a.sessions_agent_id else {
            return Ok(0);
        };
        Ok(self.store.count_agent(id).await.map_err(err("count"))?.jobs)
    }
    async fn rename(&self, _a: &AgentState<'_>, _new: &str) -> Result<(), OwnedStateError> {
        Ok(())
    }
    async fn export(&self, a: &AgentState<'_>) -> Result<(Vec<u8>, u64), OwnedStateError> {
        let id = a.sessions_agent_id.unwrap_or("");
        let doc = self.store.export_agent(id).await.map_err(err("export"))?;
        let mut jobs: Vec<String> = doc.jobs.iter().map(|j| j.id.clone()).collect();
        jobs.extend(a.cron_jobs.iter().cloned());
        let cursors: serde_json::Map<String, serde_json::Value> = self
            .store
            .cursors_of(&jobs)
            .await
            .map_err(err("export"))?
            .into_iter()
            .map(|(job, t)| (job, serde_json::Value::String(t)))
            .collect();
        let mut value =
            serde_json::to_value(&doc).map_err(|e| OwnedStateError::new(KIND, "export", e))?;
        if let Some(obj) = value.as_object_mut() {
            obj.insert("cursors".into(), serde_json::Value::Object(cursors));
        }
        let bytes = serde_json::to_vec_pretty(&value)
            .map_err(|e| OwnedStateError::new(KIND, "export", e))?;
        Ok((bytes, doc.jobs.len() as u64))
    }
    async fn purge(&self, a: &AgentState<'_>) -> Result<u64, OwnedStateError> {
        // The `[cron.<id>]` jobs left the config with the agent: their cursors go too.
        self.store
            .remove_cursors(a.cron_jobs)
            .await
            .map_err(err("purge"))?;
        let Some(id) = a.sessions_agent_id else {
            return Ok(0);
        };
        Ok(self.store.purge_agent(id).await.map_err(err("purge"))?.jobs)
    }
    async fn restore(
        &self,
        a: &AgentState<'_>,
        export: Option<&[u8]>,
        _tombstone: &str,
    ) -> Result<u64, OwnedStateError> {
        // Restored jobs start from a fresh cursor: no catch-up for the time they were deleted.
        self.store
            .remove_cursors(a.cron_jobs)
            .await
            .map_err(err("restore"))?;
        let (Some(id), Some(bytes)) = (a.sessions_agent_id, export) else {
            return Ok(0);
        };
        let doc: ExportDoc =
            serde_json::from_slice(bytes).map_err(|e| OwnedStateError::new(KIND, "restore", e))?;
        let jobs: Vec<CronJob> = doc
            .jobs
            .into_iter()
            .map(|j| CronJob {
                id: j.id,
                agent_id: id.to_string(),
                agent: Some(a.alias.to_string()),
                schedule: j.schedule,
                prompt: j.prompt,
                enabled: j.enabled,
                created_at: j.created_at,
            })
            .collect();
        self.store
            .import_jobs(id, &jobs)
            .await
            .map_err(err("restore"))?;
        let ids: Vec<String> = jobs.iter().map(|j| j.id.clone()).collect();
        self.store
            .remove_cursors(&ids)
            .await
            .map_err(err("restore"))?;
        Ok(jobs.len() as u64)
    }
}
