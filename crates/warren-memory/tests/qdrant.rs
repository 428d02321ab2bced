//! Qdrant-specific behaviour against a real server (`WARREN_TEST_QDRANT_URL`): registration
//! is idempotent, and a rename interrupted after either of its writes converges when run again.
//! The same logic is unit-tested without a server in `src/qdrant/`.

use std::collections::HashMap;

use futures::TryStreamExt;
use qdrant_client::qdrant::{
    Condition, Filter, PointStruct, ScrollPointsBuilder, SetPayloadPointsBuilder,
    UpsertPointsBuilder, Value as QValue,
};
use qdrant_client::Qdrant;
use warren_memory::qdrant::registry::registration_point;
use warren_memory::{AgentMemoryAdmin, MemoryEntry, NewMemory};

use crate::support::Env;

/// A fresh pair of collections on the test server, deleted when the guard goes away.
pub struct QdrantScratch {
    pub url: String,
    pub collection: String,
}

impl QdrantScratch {
    /// `None` (after printing the skip line) when no server is given.
    pub fn fresh() -> Option<QdrantScratch> {
        match std::env::var("WARREN_TEST_QDRANT_URL") {
            Ok(url) if !url.is_empty() => Some(QdrantScratch {
                url,
                collection: format!(
                    "wm_test_{}",
                    &uuid::Uuid::new_v4().simple().to_string()[..12]
                ),
            }),
            _ => {
                println!("skipped: WARREN_TEST_QDRANT_URL not set");
                None
            }
        }
    }

    pub fn memory_section(&self) -> String {
        format!(
            "[memory]\nbackend = \"qdrant\"\n[memory.qdrant]\nurl = \"{}\"\ncollection = \"{}\"\n",
            self.url, self.collection
        )
    }

    pub fn client(&self) -> Qdrant {
        Qdrant::from_url(&self.url)
            .skip_compatibility_check()
            .build()
            .unwrap()
    }

    pub fn agents(&self) -> String {
        format!("{}_agents", self.collection)
    }
}

impl Drop for QdrantScratch {
    fn drop(&mut self) {
        let (url, names) = (self.url.clone(), [self.collection.clone(), self.agents()]);
        let _ = std::thread::spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            rt.block_on(async move {
                if let Ok(c) = Qdrant::from_url(&url).skip_compatibility_check().build() {
                    for n in names {
                        let _ = c.delete_collection(n).await;
                    }
                }
            });
        })
        .join();
    }
}

async fn admin(env: &Env, alias: &str) -> AgentMemoryAdmin {
    env.stores
        .admin_for_backend(&env.config, env.config.memory.backend, alias)
        .await
        .unwrap()
}

async fn export(a: &AgentMemoryAdmin) -> Vec<MemoryEntry> {
    a.export().await.unwrap().try_collect().await.unwrap()
}

/// Registration points carrying `alias`.
async fn registrations(q: &QdrantScratch, alias: &str) -> usize {
    q.client()
        .scroll(
            ScrollPointsBuilder::new(q.agents())
                .filter(Filter::must([Condition::matches(
                    "alias",
                    alias.to_string(),
                )]))
                .limit(100),
        )
        .await
        .unwrap()
        .result
        .len()
}

#[tokio::test]
async fn qdrant_registration_is_idempotent() {
    let Some(q) = QdrantScratch::fresh() else {
        return;
    };
    let env = Env::new("qdrant", &q.memory_section(), true);
    // Two handles registering one alias at the same time, then again.
    let (a, b) = tokio::join!(env.h("alice"), env.h("alice"));
    a.store(NewMemory::new("k1", "one")).await.unwrap();
    b.store(NewMemory::new("k2", "two")).await.unwrap();
    let again = env.h("alice").await;
    assert_eq!(again.count().await.unwrap(), 2, "one agent, both rows");
    assert_eq!(
        registrations(&q, "alice").await,
        1,
        "one registration point"
    );
}

/// The rename's registration write landed (the new alias points at the agent), the rows still
/// carry the old alias: running the rename again finishes it.
#[tokio::test]
async fn qdrant_rename_resumes_after_the_registration_write() {
    let Some(q) = QdrantScratch::fresh() else {
        return;
    };
    let env = Env::new("qdrant", &q.memory_section(), true);
    let alice = env.h("alice").await;
    alice.store(NewMemory::new("k1", "one")).await.unwrap();
    alice.store(NewMemory::new("k2", "two")).await.unwrap();
    let id = admin(&env, "alice")
        .await
        .agent_id()
        .await
        .unwrap()
        .unwrap();
    let payload: HashMap<String, QValue> = [
        ("alias".to_string(), QValue::from("alicia")),
        ("agent_id".to_string(), QValue::from(id.to_string())),
    ]
    .into_iter()
    .collect();
    q.client()
        .upsert_points(
            UpsertPointsBuilder::new(
                q.agents(),
                vec![PointStruct::new(
                    registration_point("alicia").to_string(),
                    vec![1.0f32],
                    payload,
                )],
            )
            .wait(true),
        )
        .await
        .unwrap();
    assert!(admin(&env, "alice")
        .await
        .rename_to("alicia")
        .await
        .unwrap());
    assert_renamed(&env, &q, id).await;
}

/// The rows were relabelled first, the registration not yet moved: the rerun finishes it.
#[tokio::test]
async fn qdrant_rename_resumes_after_the_rows_write() {
    let Some(q) = QdrantScratch::fresh() else {
        return;
    };
    let env = Env::new("qdrant", &q.memory_section(), true);
    let alice = env.h("alice").await;
    alice.store(NewMemory::new("k1", "one")).await.unwrap();
    let id = admin(&env, "alice")
        .await
        .agent_id()
        .await
        .unwrap()
        .unwrap();
    let payload: HashMap<String, QValue> = [("agent".to_string(), QValue::from("alicia"))]
        .into_iter()
        .collect();
    q.client()
        .set_payload(
            SetPayloadPointsBuilder::new(&q.collection, payload)
                .points_selector(Filter::must([Condition::matches(
                    "agent_id",
                    id.to_string(),
                )]))
                .wait(true),
        )
        .await
        .unwrap();
    assert!(admin(&env, "alice")
        .await
        .rename_to("alicia")
        .await
        .unwrap());
    assert_renamed(&env, &q, id).await;
}

async fn assert_renamed(env: &Env, q: &QdrantScratch, id: uuid::Uuid) {
    let renamed = admin(env, "alicia").await;
    assert_eq!(renamed.agent_id().await.unwrap(), Some(id));
    assert_eq!(admin(env, "alice").await.agent_id().await.unwrap(), None);
    assert_eq!(registrations(q, "alice").await, 0);
    assert_eq!(registrations(q, "alicia").await, 1);
    let rows = export(&renamed).await;
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r.agent == "alicia"), "{rows:?}");
    // A finished rename run again changes nothing.
    assert!(!admin(env, "alice").await.rename_to("alicia").await.unwrap());
    assert_eq!(renamed.agent_id().await.unwrap(), Some(id));
}
