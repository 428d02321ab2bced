//! The Qdrant half of restore: re-creating an agent from exported rows.

use qdrant_client::qdrant::{GetPointsBuilder, PointId};
use uuid::Uuid;

use super::logic::point_id;
use super::{QdrantStore, BACKEND};
use crate::error::MemoryError;
use crate::traits::MemoryStore;
use crate::types::{AgentRef, ImportReport, MemoryEntry};

impl QdrantStore {
    /// Re-creates an agent from exported rows (see [`crate::traits::MemoryStore::import_agent`]).
    pub(crate) async fn import_rows(
        &self,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        let id = match self.lookup_agent(alias).await? {
            Some(a) if a.id == agent_id => agent_id,
            Some(a) if self.count_for_agent(&a).await? > 0 => {
                return Err(MemoryError::AliasTaken {
                    backend: BACKEND,
                    location: self.location.clone(),
                    alias: alias.to_string(),
                })
            }
            _ => {
                let held = self
                    .client
                    .get_points(GetPointsBuilder::new(
                        &self.agents,
                        vec![PointId::from(agent_id.to_string())],
                    ))
                    .await
                    .map_err(|e| self.err("import")(e.to_string()))?;
                let id = if held.result.is_empty() {
                    agent_id
                } else {
                    Uuid::new_v4()
                };
                self.set_agent(alias, id).await?;
                id
            }
        };
        let me = AgentRef {
            id,
            alias: alias.to_string(),
        };
        let mut fresh = Vec::new();
        let mut skipped = 0u64;
        for r in rows {
            if self.get_for_agent(&me, &r.key).await?.is_some() {
                skipped += 1;
                continue;
            }
            fresh.push(MemoryEntry {
                id: point_id(&id, &r.key),
                agent_id: id,
                agent: alias.to_string(),
                score: None,
                ..r.clone()
            });
        }
        self.upsert(&fresh, "import").await?;
        Ok(ImportReport {
            agent_id: id,
            kept_agent_id: id == agent_id,
            imported: fresh.len() as u64,
            skipped,
        })
    }
}
