//! The behavioural suite on each backend.

use crate::suite::behavioural_suite;
use crate::support::{pg_url, Env, PgSchema};
use warren_memory::{NewMemory, RecallQuery};

/// A keyword recall carries its rank as the score; a recall without terms carries none.
async fn scores_only_from_keywords(env: &Env) {
    let erin = env.h("erin").await;
    erin.store(NewMemory::new("e_okapi", "okapi seen at the zoo"))
        .await
        .unwrap();
    let ranked = erin.recall(&RecallQuery::new("okapi")).await.unwrap();
    assert_eq!(ranked.len(), 1);
    assert!(ranked[0].score.is_some_and(|s| s > 0.0), "{ranked:?}");
    let recent = erin.recall(&RecallQuery::new("")).await.unwrap();
    assert!(recent.iter().all(|r| r.score.is_none()), "{recent:?}");
}

#[tokio::test]
async fn suite_sqlite() {
    let env = Env::new("sqlite", "", true);
    behavioural_suite(&env).await;
    scores_only_from_keywords(&env).await;
    assert!(
        env.layout().memory_db().is_file(),
        "memory.db where the rules say"
    );
}

#[tokio::test]
async fn suite_postgres() {
    let Some(url) = pg_url() else { return };
    let schema = PgSchema::fresh(&url);
    let env = Env::new("postgres", &schema.memory_section(), true);
    behavioural_suite(&env).await;
    scores_only_from_keywords(&env).await;
    env.stores.close().await;
}

#[tokio::test]
async fn suite_markdown() {
    let env = Env::new("markdown", "[memory]\nbackend = \"markdown\"\n", false);
    behavioural_suite(&env).await;
}

#[tokio::test]
async fn suite_qdrant() {
    let url = match std::env::var("WARREN_TEST_QDRANT_URL") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            println!("skipped: WARREN_TEST_QDRANT_URL not set");
            return;
        }
    };
    let collection = format!(
        "wm_test_{}",
        &uuid::Uuid::new_v4().simple().to_string()[..12]
    );
    let section = format!(
        "[memory]\nbackend = \"qdrant\"\n[memory.qdrant]\nurl = \"{url}\"\ncollection = \"{collection}\"\n"
    );
    let env = Env::new("qdrant", &section, true);
    behavioural_suite(&env).await;
    if let Ok(client) = qdrant_client::Qdrant::from_url(&url).build() {
        let _ = client.delete_collection(collection.as_str()).await;
        let _ = client
            .delete_collection(format!("{collection}_agents"))
            .await;
    }
}

#[tokio::test]
async fn suite_sqlite_hybrid() {
    // With an embedder configured, recall blends keyword rank and vector similarity; the
    // scoping guarantees must hold all the same.
    let env = Env::new(
        "sqlite+hybrid",
        "[memory.embeddings]\nprovider = \"local\"\ndimensions = 128\n",
        true,
    );
    behavioural_suite(&env).await;
}

#[tokio::test]
async fn suite_postgres_hybrid() {
    let Some(url) = pg_url() else { return };
    let schema = PgSchema::fresh(&url);
    let section = format!(
        "{}[memory.embeddings]\nprovider = \"local\"\n",
        schema.memory_section()
    );
    let env = Env::new("postgres+hybrid", &section, true);
    behavioural_suite(&env).await;
    env.stores.close().await;
}
