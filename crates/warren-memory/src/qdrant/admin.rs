//! The agents collection (`<collection>_agents`): registration at deterministic ids, lookup,
//! rename (planned from the stored state, so a rerun converges), purge and restore.

use qdrant_client::qdrant::{
    Condition, CountPointsBuilder, DeletePointsBuilder, Filter, PointStruct, ScrollPointsBuilder,
    SetPayloadPointsBuilder, UpsertPointsBuilder,
};
use serde_json::{Map, Value};
use uuid::Uuid;

use super::logic::{field, point_id};
use super::registry::{
    agent_id_candidate, pick_registration, plan_rename, registration_point, Registration,
    RenameRefusal, RenameState, RenameStep, MAX_ID_ATTEMPTS,
};
use super::{id_string, json_payload, to_qdrant, QdrantStore, BACKEND};
use crate::error::MemoryError;
use crate::traits::MemoryStore;
use crate::types::{AgentRef, ImportReport, MemoryEntry};

/// Payload field of a registration: the alias.
const ALIAS: &str = "alias";
/// Registrations read per alias (more than one only in stores written before ids were
/// deterministic).
const MAX_REGISTRATIONS: u32 = 16;

impl QdrantStore {
    fn registration_filter(alias: &str, agent_id: &Uuid) -> Filter {
        Filter::must([
            Condition::matches(ALIAS, alias.to_string()),
            Condition::matches(field::AGENT_ID, agent_id.to_string()),
        ])
    }

    /// The agent registered under `alias`, if any.
    pub(crate) async fn registered(&self, alias: &str) -> Result<Option<Uuid>, MemoryError> {
        let op = "look up agent";
        let resp = self
            .client
            .scroll(
                ScrollPointsBuilder::new(&self.agents)
                    .filter(Filter::must([Condition::matches(ALIAS, alias.to_string())]))
                    .limit(MAX_REGISTRATIONS)
                    .with_payload(true),
            )
            .await
            .map_err(|e| self.err(op)(e.to_string()))?;
        let mut found = Vec::new();
        for p in resp.result {
            let point = id_string(&p.id);
            let payload = json_payload(p.payload);
            // Registrations written before `agent_id` was in the payload used the agent's UUID
            // as the point id.
            let raw = payload
                .get(field::AGENT_ID)
                .and_then(Value::as_str)
                .map_or_else(|| point.clone(), str::to_string);
            let agent_id = Uuid::parse_str(&raw).map_err(|e| {
                self.err(op)(format!(
                    "registration {point} of {alias:?}: agent_id {raw:?}: {e}"
                ))
            })?;
            found.push(Registration { point, agent_id });
        }
        Ok(pick_registration(alias, &found).map(|r| r.agent_id))
    }

    /// Writes the registration `alias → id` at the alias's deterministic point (a retry
    /// overwrites it).
    pub(crate) async fn set_agent(&self, alias: &str, id: Uuid) -> Result<(), MemoryError> {
        let mut payload = Map::new();
        payload.insert(ALIAS.into(), Value::from(alias));
        payload.insert(field::AGENT_ID.into(), Value::from(id.to_string()));
        let point = PointStruct::new(
            registration_point(alias).to_string(),
            vec![1.0f32],
            to_qdrant(payload),
        );
        self.client
            .upsert_points(UpsertPointsBuilder::new(&self.agents, vec![point]).wait(true))
            .await
            .map_err(|e| self.err("register agent")(e.to_string()))?;
        Ok(())
    }

    /// Deletes every registration of `alias` that points at `id`.
    async fn unregister(
        &self,
        alias: &str,
        id: &Uuid,
        op: &'static str,
    ) -> Result<(), MemoryError> {
        self.client
            .delete_points(
                DeletePointsBuilder::new(&self.agents)
                    .points(Self::registration_filter(alias, id))
                    .wait(true),
            )
            .await
            .map_err(|e| self.err(op)(e.to_string()))?;
        Ok(())
    }

    /// Whether a UUID is held: by a registration of any alias, or by rows.
    async fn agent_id_in_use(&self, id: &Uuid, op: &'static str) -> Result<bool, MemoryError> {
        let by_id = Filter::must([Condition::matches(field::AGENT_ID, id.to_string())]);
        let regs = self
            .client
            .scroll(
                ScrollPointsBuilder::new(&self.agents)
                    .filter(by_id.clone())
                    .limit(1),
            )
            .await
            .map_err(|e| self.err(op)(e.to_string()))?;
        if !regs.result.is_empty() {
            return Ok(true);
        }
        let rows = self
            .client
            .count(
                CountPointsBuilder::new(&self.collection)
                    .filter(by_id)
                    .exact(true),
            )
            .await
            .map_err(|e| self.err(op)(e.to_string()))?;
        Ok(rows.result.is_some_and(|r| r.count > 0))
    }

    /// The first free deterministic UUID for a new agent under `alias`.
    async fn free_agent_id(&self, alias: &str, op: &'static str) -> Result<Uuid, MemoryError> {
        for attempt in 0..MAX_ID_ATTEMPTS {
            let id = agent_id_candidate(alias, attempt);
            if !self.agent_id_in_use(&id, op).await? {
                return Ok(id);
            }
        }
        Err(self.err(op)(format!(
            "no free agent id for {alias:?} after {MAX_ID_ATTEMPTS} candidates"
        )))
    }

    /// Registers `alias` unless it is; idempotent, and two racing calls pick the same UUID.
    pub(crate) async fn register(&self, alias: &str) -> Result<AgentRef, MemoryError> {
        if let Some(id) = self.registered(alias).await? {
            return Ok(AgentRef {
                id,
                alias: alias.to_string(),
            });
        }
        let id = self.free_agent_id(alias, "register agent").await?;
        self.set_agent(alias, id).await?;
        // Read back: whatever registration stands now is the one every caller uses.
        let id = self.registered(alias).await?.unwrap_or(id);
        Ok(AgentRef {
            id,
            alias: alias.to_string(),
        })
    }

    /// Renames by planning from the stored state (see [`plan_rename`]) and running each write.
    pub(crate) async fn rename(&self, old: &str, new: &str) -> Result<bool, MemoryError> {
        let (a, b) = (self.registered(old).await?, self.registered(new).await?);
        let new_rows = match (a, b) {
            (Some(a), Some(b)) if a != b => {
                self.count_for_agent(&AgentRef {
                    id: b,
                    alias: new.to_string(),
                })
                .await?
            }
            _ => 0,
        };
        let state = RenameState {
            old: a,
            new: b,
            new_rows,
        };
        let plan = plan_rename(old, new, &state).map_err(|RenameRefusal::AliasTaken| {
            MemoryError::AliasTaken {
                backend: BACKEND,
                location: self.location.clone(),
                alias: new.to_string(),
            }
        })?;
        for step in &plan.steps {
            match step {
                RenameStep::Unregister { alias, agent_id } => {
                    self.unregister(alias, agent_id, "rename").await?;
                }
                RenameStep::Register { alias, agent_id } => {
                    self.set_agent(alias, *agent_id).await?;
                }
                RenameStep::Relabel { agent_id, alias } => {
                    let mut payload = Map::new();
                    payload.insert(field::AGENT.into(), Value::from(alias.as_str()));
                    self.client
                        .set_payload(
                            SetPayloadPointsBuilder::new(&self.collection, to_qdrant(payload))
                                .points_selector(Self::agent_filter(agent_id))
                                .wait(true),
                        )
                        .await
                        .map_err(|e| self.err("rename")(e.to_string()))?;
                }
            }
        }
        Ok(plan.renamed)
    }

    /// Deletes the agent's rows, then its registration (so a UUID with rows stays reserved).
    pub(crate) async fn purge(&self, alias: &str) -> Result<u64, MemoryError> {
        let Some(id) = self.registered(alias).await? else {
            return Ok(0);
        };
        let agent = AgentRef {
            id,
            alias: alias.to_string(),
        };
        let n = self.count_for_agent(&agent).await?;
        self.client
            .delete_points(
                DeletePointsBuilder::new(&self.collection)
                    .points(Self::agent_filter(&id))
                    .wait(true),
            )
            .await
            .map_err(|e| self.err("purge")(e.to_string()))?;
        self.unregister(alias, &id, "purge").await?;
        Ok(n)
    }

    /// Re-creates an agent from exported rows (see [`crate::traits::MemoryStore::import_agent`]).
    pub(crate) async fn import_rows(
        &self,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        let current = self.registered(alias).await?;
        let id = match current {
            Some(a) if a == agent_id => agent_id,
            Some(a) => {
                let holder = AgentRef {
                    id: a,
                    alias: alias.to_string(),
                };
                if self.count_for_agent(&holder).await? > 0 {
                    return Err(MemoryError::AliasTaken {
                        backend: BACKEND,
                        location: self.location.clone(),
                        alias: alias.to_string(),
                    });
                }
                // An empty registration gives way.
                self.unregister(alias, &a, "import").await?;
                self.claim(alias, agent_id).await?
            }
            None => self.claim(alias, agent_id).await?,
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

    /// Registers `alias` under `wanted` when that UUID is free, else under a fresh one.
    async fn claim(&self, alias: &str, wanted: Uuid) -> Result<Uuid, MemoryError> {
        let id = if self.agent_id_in_use(&wanted, "import").await? {
            self.free_agent_id(alias, "import").await?
        } else {
            wanted
        };
        self.set_agent(alias, id).await?;
        Ok(id)
    }
}
