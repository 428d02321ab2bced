//! The categories an agent's own rows use, listed by each backend without reading the rows.

use crate::support::{pg_url, Env, PgSchema};
use warren_memory::NewMemory;

async fn categories_are_distinct_sorted_and_own(env: &Env) {
    let alice = env.h("alice").await;
    let bob = env.h("bob").await;
    let erin = env.h("erin").await;
    for (key, category) in [
        ("a1", "daily"),
        ("a2", "core"),
        ("a3", "daily"),
        ("a4", "conversation"),
        ("moved", "project_x"),
    ] {
        alice
            .store(NewMemory::new(key, format!("alice {key}")).category(category))
            .await
            .unwrap_or_else(|e| panic!("[{}] store {key}: {e}", env.name));
    }
    bob.store(NewMemory::new("b1", "bob's own").category("bob_only"))
        .await
        .unwrap_or_else(|e| panic!("[{}] store b1: {e}", env.name));
    // Replacing a row by key moves it out of its old category.
    alice
        .store(NewMemory::new("moved", "now core").category("core"))
        .await
        .unwrap_or_else(|e| panic!("[{}] replace: {e}", env.name));

    let got = alice
        .categories()
        .await
        .unwrap_or_else(|e| panic!("[{}] categories: {e}", env.name));
    assert_eq!(got, ["conversation", "core", "daily"], "[{}]", env.name);
    // alice may read bob's rows, but her own categories are hers only.
    assert_eq!(
        bob.categories().await.unwrap_or_else(|e| panic!("{e}")),
        ["bob_only"],
        "[{}]",
        env.name
    );
    assert!(
        erin.categories()
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .is_empty(),
        "[{}]",
        env.name
    );
    // A forgotten row's category goes when it was the last one of it.
    assert!(alice.forget("a4").await.unwrap_or_else(|e| panic!("{e}")));
    assert_eq!(
        alice.categories().await.unwrap_or_else(|e| panic!("{e}")),
        ["core", "daily"],
        "[{}]",
        env.name
    );
}

#[tokio::test]
async fn categories_sqlite() {
    let env = Env::new("sqlite", "", true);
    categories_are_distinct_sorted_and_own(&env).await;
}

#[tokio::test]
async fn categories_postgres() {
    let Some(url) = pg_url() else { return };
    let schema = PgSchema::fresh(&url);
    let env = Env::new("postgres", &schema.memory_section(), true);
    categories_are_distinct_sorted_and_own(&env).await;
    env.stores.close().await;
}

#[tokio::test]
async fn categories_markdown() {
    let env = Env::new("markdown", "[memory]\nbackend = \"markdown\"\n", false);
    categories_are_distinct_sorted_and_own(&env).await;
}
