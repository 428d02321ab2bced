//! The Qdrant backend (official `qdrant-client`): one shared collection of points whose payload
//! carries the owner; recall sends the whole scope (agents and their granted categories) as the
//! server filter, and post-filters by payload. Agents' alias → UUID map lives in
//! `<collection>_agents`, one point per alias at a deterministic id.

mod admin;
#[cfg(test)]
mod filter_tests;
pub mod logic;
pub mod registry;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use qdrant_client::qdrant::{
    point_id::PointIdOptions, Condition, CountPointsBuilder, CreateCollectionBuilder,
    CreateFieldIndexCollectionBuilder, DeletePointsBuilder, Direction, Distance, FieldType, Filter,
    GetPointsBuilder, OrderByBuilder, PointId, PointStruct, Query, QueryPointsBuilder,
    ScrollPointsBuilder, UpsertPointsBuilder, Value as QValue, VectorParamsBuilder,
};
use qdrant_client::Qdrant;
use serde_json::{Map, Value};
use uuid::Uuid;
use warren_types::MemoryBackendKind;

use crate::embed::Embedder;
use crate::error::{redact_url, MemoryError};
use crate::grants::RecallScope;
use crate::traits::MemoryStore;
use crate::types::{
    AgentRef, ExportCursor, ImportReport, ListQuery, MemoryEntry, NewMemory, Page, RecallQuery,
    StoreReceipt,
};
use logic::{entry_from_payload, field, payload_for, point_id, post_filter, server_filter};

const BACKEND: &str = "qdrant";
const SCROLL_PAGE: u32 = 256;

/// The Qdrant memory store.
pub struct QdrantStore {
    client: Qdrant,
    collection: String,
    agents: String,
    location: String,
    embedder: Arc<dyn Embedder>,
}

fn id_string(id: &Option<PointId>) -> String {
    match id.as_ref().and_then(|p| p.point_id_options.as_ref()) {
        Some(PointIdOptions::Uuid(u)) => u.clone(),
        Some(PointIdOptions::Num(n)) => n.to_string(),
        None => String::new(),
    }
}

fn json_payload(p: HashMap<String, QValue>) -> Map<String, Value> {
    p.into_iter().map(|(k, v)| (k, v.into_json())).collect()
}

fn to_qdrant(p: Map<String, Value>) -> HashMap<String, QValue> {
    p.into_iter().map(|(k, v)| (k, QValue::from(v))).collect()
}

impl QdrantStore {
    /// Connects, creates the collections and payload indexes if missing. An unreachable server
    /// is reported as `Unavailable`, naming the redacted URL and collection.
    pub async fn open(
        url: &str,
        collection: &str,
        api_key: Option<String>,
        embedder: Arc<dyn Embedder>,
    ) -> Result<Self, MemoryError> {
        if let Some(k) = &api_key {
            warren_types::redact::register(k);
        }
        crate::error::register_url_password(url);
        let location = format!("{} (collection {collection})", redact_url(url));
        let unavailable = |reason: String| MemoryError::Unavailable {
            backend: BACKEND,
            location: location.clone(),
            reason,
        };
        let client = Qdrant::from_url(url)
            .api_key(api_key)
            .timeout(Duration::from_secs(10))
            .connect_timeout(Duration::from_secs(5))
            .skip_compatibility_check()
            .build()
            .map_err(|e| unavailable(e.to_string()))?;
        let store = QdrantStore {
            client,
            collection: collection.to_string(),
            agents: format!("{collection}_agents"),
            location: location.clone(),
            embedder,
        };
        store.setup().await.map_err(unavailable)?;
        Ok(store)
    }

    async fn setup(&self) -> Result<(), String> {
        let c = &self.client;
        let dims = self.embedder.dimensions() as u64;
        if !c
            .collection_exists(&self.collection)
            .await
            .map_err(|e| e.to_string())?
        {
            c.create_collection(
                CreateCollectionBuilder::new(&self.collection)
                    .vectors_config(VectorParamsBuilder::new(dims, Distance::Cosine)),
            )
            .await
            .map_err(|e| e.to_string())?;
            for (f, t) in [
                (field::AGENT_ID, FieldType::Keyword),
                (field::KEY, FieldType::Keyword),
                (field::CATEGORY, FieldType::Keyword),
                (field::SESSION_ID, FieldType::Keyword),
                (field::CREATED_AT, FieldType::Datetime),
                (field::UPDATED_AT, FieldType::Datetime),
            ] {
                c.create_field_index(
                    CreateFieldIndexCollectionBuilder::new(&self.collection, f, t).wait(true),
                )
                .await
                .map_err(|e| e.to_string())?;
            }
        }
        if !c
            .collection_exists(&self.agents)
            .await
            .map_err(|e| e.to_string())?
        {
            c.create_collection(
                CreateCollectionBuilder::new(&self.agents)
                    .vectors_config(VectorParamsBuilder::new(1, Distance::Dot)),
            )
            .await
            .map_err(|e| e.to_string())?;
            for f in ["alias", field::AGENT_ID] {
                c.create_field_index(
                    CreateFieldIndexCollectionBuilder::new(&self.agents, f, FieldType::Keyword)
                        .wait(true),
                )
                .await
                .map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }

    pub(crate) fn err(&self, operation: &'static str) -> impl Fn(String) -> MemoryError + '_ {
        move |reason| MemoryError::Backend {
            backend: BACKEND,
            location: self.location.clone(),
            operation,
            reason,
        }
    }

    fn agent_filter(id: &Uuid) -> Filter {
        Filter::must([Condition::matches(field::AGENT_ID, id.to_string())])
    }

    /// Every point matching `filter`, as rows (paged scroll).
    async fn scroll_all(
        &self,
        filter: Filter,
        op: &'static str,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        let mut out = Vec::new();
        let mut offset: Option<PointId> = None;
        loop {
            let mut req = ScrollPointsBuilder::new(&self.collection)
                .filter(filter.clone())
                .limit(SCROLL_PAGE)
                .with_payload(true);
            if let Some(o) = offset.take() {
                req = req.offset(o);
            }
            let resp = self
                .client
                .scroll(req)
                .await
                .map_err(|e| self.err(op)(e.to_string()))?;
            for p in resp.result {
                let id = id_string(&p.id);
                out.push(
                    entry_from_payload(&id, &json_payload(p.payload), None)
                        .map_err(self.err(op))?,
                );
            }
            match resp.next_page_offset {
                Some(o) => offset = Some(o),
                None => return Ok(out),
            }
        }
    }

    pub(crate) async fn upsert(
        &self,
        rows: &[MemoryEntry],
        op: &'static str,
    ) -> Result<(), MemoryError> {
        if rows.is_empty() {
            return Ok(());
        }
        let texts: Vec<String> = rows
            .iter()
            .map(|r| format!("{} {}", r.key, r.content))
            .collect();
        let vectors = self.embedder.embed(&texts).await?;
        let points: Vec<PointStruct> = rows
            .iter()
            .zip(vectors)
            .map(|(r, v)| PointStruct::new(r.id.to_string(), v, to_qdrant(payload_for(r))))
            .collect();
        self.client
            .upsert_points(UpsertPointsBuilder::new(&self.collection, points).wait(true))
            .await
            .map_err(|e| self.err(op)(e.to_string()))?;
        Ok(())
    }
}

#[async_trait]
impl MemoryStore for QdrantStore {
    fn kind(&self) -> MemoryBackendKind {
        MemoryBackendKind::Qdrant
    }

    fn location(&self) -> String {
        self.location.clone()
    }

    async fn ensure_agent(&self, alias: &str) -> Result<AgentRef, MemoryError> {
        self.register(alias).await
    }

    async fn agent_id(&self, alias: &str) -> Result<Option<Uuid>, MemoryError> {
        self.registered(alias).await
    }

    async fn write_rows(
        &self,
        agent: &AgentRef,
        rows: &[NewMemory],
        now: DateTime<Utc>,
    ) -> Result<Vec<StoreReceipt>, MemoryError> {
        let ids: Vec<PointId> = rows
            .iter()
            .map(|r| PointId::from(point_id(&agent.id, &r.key).to_string()))
            .collect();
        let existing = self
            .client
            .get_points(GetPointsBuilder::new(&self.collection, ids).with_payload(true))
            .await
            .map_err(|e| self.err("store")(e.to_string()))?;
        let mut created: HashMap<String, DateTime<Utc>> = HashMap::new();
        for p in existing.result {
            let id = id_string(&p.id);
            if let Ok(e) = entry_from_payload(&id, &json_payload(p.payload), None) {
                created.insert(id, e.created_at);
            }
        }
        let entries: Vec<MemoryEntry> = rows
            .iter()
            .map(|r| {
                let id = point_id(&agent.id, &r.key);
                let created_at = created.get(&id.to_string()).copied().unwrap_or(now);
                r.stored_as(agent, id, created_at, now)
            })
            .collect();
        self.upsert(&entries, "store").await?;
        Ok(entries
            .into_iter()
            .map(|entry| StoreReceipt {
                entry,
                warnings: Vec::new(),
            })
            .collect())
    }

    async fn get_for_agent(
        &self,
        agent: &AgentRef,
        key: &str,
    ) -> Result<Option<MemoryEntry>, MemoryError> {
        let id = point_id(&agent.id, key).to_string();
        let resp = self
            .client
            .get_points(
                GetPointsBuilder::new(&self.collection, vec![PointId::from(id.clone())])
                    .with_payload(true),
            )
            .await
            .map_err(|e| self.err("get")(e.to_string()))?;
        for p in resp.result {
            let e = entry_from_payload(&id_string(&p.id), &json_payload(p.payload), None)
                .map_err(self.err("get"))?;
            if e.agent_id == agent.id && e.key == key {
                return Ok(Some(e));
            }
        }
        Ok(None)
    }

    async fn recall_for_agents(
        &self,
        scope: &RecallScope,
        q: &RecallQuery,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        let Some(sf) = server_filter(scope, q) else {
            return Ok(Vec::new());
        };
        if q.limit == 0 {
            return Ok(Vec::new());
        }
        // The whole scope is in the server filter, so the limit is spent on visible rows only;
        // the post-filter below stays as a second line of defence.
        let filter = sf.to_qdrant();
        let size = q.limit as u64;
        let mut rows = Vec::new();
        if crate::text::query_terms(&q.query).is_empty() {
            let resp = self
                .client
                .scroll(
                    ScrollPointsBuilder::new(&self.collection)
                        .filter(filter)
                        .limit(u32::try_from(size).unwrap_or(u32::MAX))
                        .with_payload(true)
                        .order_by(
                            OrderByBuilder::new(field::UPDATED_AT)
                                .direction(Direction::Desc as i32),
                        ),
                )
                .await
                .map_err(|e| self.err("recall")(e.to_string()))?;
            for p in resp.result {
                rows.push(
                    entry_from_payload(&id_string(&p.id), &json_payload(p.payload), None)
                        .map_err(self.err("recall"))?,
                );
            }
        } else {
            let vector = self
                .embedder
                .embed(std::slice::from_ref(&q.query))
                .await?
                .pop()
                .unwrap_or_default();
            let resp = self
                .client
                .query(
                    QueryPointsBuilder::new(&self.collection)
                        .query(Query::new_nearest(vector))
                        .filter(filter)
                        .limit(size)
                        .with_payload(true),
                )
                .await
                .map_err(|e| self.err("recall")(e.to_string()))?;
            for p in resp.result {
                rows.push(
                    entry_from_payload(
                        &id_string(&p.id),
                        &json_payload(p.payload),
                        Some(f64::from(p.score)),
                    )
                    .map_err(self.err("recall"))?,
                );
            }
        }
        Ok(post_filter(scope, rows, q))
    }

    async fn list_for_agent(&self, agent: &AgentRef, q: &ListQuery) -> Result<Page, MemoryError> {
        let mut rows = self
            .scroll_all(Self::agent_filter(&agent.id), "list")
            .await?;
        rows.retain(|r| {
            r.agent_id == agent.id
                && q.category.as_ref().is_none_or(|c| &r.category == c)
                && (q.session.is_none() || r.session_id == q.session)
        });
        rows.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.key.cmp(&b.key)));
        let total = rows.len() as u64;
        let start = usize::try_from(q.offset)
            .unwrap_or(usize::MAX)
            .min(rows.len());
        let mut page: Vec<MemoryEntry> = rows.drain(start..).collect();
        if let Some(l) = q.limit {
            page.truncate(usize::try_from(l).unwrap_or(usize::MAX));
        }
        Ok(Page::new(page, total, q))
    }

    async fn forget_for_agent(&self, agent: &AgentRef, key: &str) -> Result<bool, MemoryError> {
        if self.get_for_agent(agent, key).await?.is_none() {
            return Ok(false);
        }
        let id = point_id(&agent.id, key).to_string();
        self.client
            .delete_points(
                DeletePointsBuilder::new(&self.collection)
                    .points(vec![PointId::from(id)])
                    .wait(true),
            )
            .await
            .map_err(|e| self.err("forget")(e.to_string()))?;
        Ok(true)
    }

    async fn count_for_agent(&self, agent: &AgentRef) -> Result<u64, MemoryError> {
        let resp = self
            .client
            .count(
                CountPointsBuilder::new(&self.collection)
                    .filter(Self::agent_filter(&agent.id))
                    .exact(true),
            )
            .await
            .map_err(|e| self.err("count")(e.to_string()))?;
        Ok(resp.result.map_or(0, |r| r.count))
    }

    async fn categories_for_agent(&self, agent: &AgentRef) -> Result<Vec<String>, MemoryError> {
        // Qdrant has no DISTINCT over a payload field without a keyword index on it: the
        // agent's points are scrolled (every row, payload included, a page at a time) and their
        // categories collected. Cost grows with the agent's rows, unlike the SQL backends.
        let rows = self
            .scroll_all(Self::agent_filter(&agent.id), "categories")
            .await?;
        let set: std::collections::BTreeSet<String> = rows
            .into_iter()
            .filter(|r| r.agent_id == agent.id)
            .map(|r| r.category)
            .collect();
        Ok(set.into_iter().collect())
    }

    async fn rename_agent(&self, old: &str, new: &str) -> Result<bool, MemoryError> {
        self.rename(old, new).await
    }

    async fn export_page(
        &self,
        agent_id: Uuid,
        after: Option<&ExportCursor>,
        limit: usize,
    ) -> Result<Vec<MemoryEntry>, MemoryError> {
        let mut rows = self
            .scroll_all(Self::agent_filter(&agent_id), "export")
            .await?;
        rows.retain(|r| r.agent_id == agent_id);
        rows.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        if let Some(c) = after {
            rows.retain(|r| (r.created_at, r.id) > (c.created_at, c.id));
        }
        rows.truncate(limit);
        Ok(rows)
    }

    async fn purge_agent(&self, alias: &str) -> Result<u64, MemoryError> {
        self.purge(alias).await
    }

    async fn import_agent(
        &self,
        alias: &str,
        agent_id: Uuid,
        rows: &[MemoryEntry],
    ) -> Result<ImportReport, MemoryError> {
        self.import_rows(alias, agent_id, rows).await
    }
}
