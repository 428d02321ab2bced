//! The Memory browser: rows stored through the api show in the window; a peer's rows show with
//! the peer's alias only in the categories the grant names; search, paging and inspect work;
//! forget (after a confirmation) removes the row from the SQLite memory store.

use crate::harness::{launch, Desktop};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use warren_api::Warren;
use warren_config::InstallLayout;

const CONFIG: &str = r#"# Memory browser test install.
schema_version = 1

[agents.alice]
risk_profile = "ro"

[agents.bob]
risk_profile = "ro"
workspace.read_memory_from = [{ agent = "alice", categories = ["project"] }]

[risk_profiles.ro]
level = "readonly"
"#;

async fn go(d: &Desktop, hash: &str) {
    d.wait_for("[data-testid=nav-memory]").await;
    d.client
        .execute(
            "location.hash = arguments[0]",
            vec![serde_json::json!(hash)],
        )
        .await
        .unwrap();
}

/// The (agent, key) of every search result, read in one script so that a re-render between
/// two WebDriver calls cannot leave a stale element behind.
async fn result_keys(d: &Desktop) -> Vec<(String, String)> {
    let v = d
        .client
        .execute(
            "return [...document.querySelectorAll('[data-testid=memory-result]')]
               .map((r) => [r.dataset.agent ?? '', r.dataset.key ?? '']);",
            vec![],
        )
        .await
        .unwrap();
    let mut out: Vec<(String, String)> = serde_json::from_value(v).unwrap();
    out.sort();
    out
}

async fn wait_results(d: &Desktop, want: &[(&str, &str)]) {
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, k)| (a.to_string(), k.to_string()))
        .collect();
    let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
    loop {
        let got = result_keys(d).await;
        if got == want {
            return;
        }
        if std::time::Instant::now() > deadline {
            d.screenshot("timeout").await;
            panic!("search results {got:?}, expected {want:?}");
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[test]
fn memory_browser_shows_grants_searches_pages_and_forgets() {
    let _serial = serial();
    block_on_mt(async {
        let d = launch(|home| std::fs::write(home.join("config.toml"), CONFIG).unwrap()).await;
        let api = Warren::open(InstallLayout::new(d.home.clone()));
        for i in 0..21 {
            api.store_memory(
                "alice",
                &format!("note-{i:02}"),
                &format!("routine note {i}"),
                Some("notes"),
                None,
            )
            .await
            .unwrap();
        }
        api.store_memory(
            "alice",
            "deploy-steps",
            "Deploy with the blue pipeline",
            Some("project"),
            None,
        )
        .await
        .unwrap();
        api.store_memory("alice", "alice-diary", "a private thought", None, None)
            .await
            .unwrap();
        api.store_memory("bob", "bob-todo", "water the plants", None, None)
            .await
            .unwrap();

        // Bob sees his own rows and alice's `project` rows, shown under alice's alias.
        go(&d, "#memory/bob").await;
        d.wait_for("[data-testid=memory-screen][data-agent=bob]")
            .await;
        let cats = d
            .wait_text(
                "[data-testid=memory-grant][data-agent=alice] [data-testid=memory-grant-categories]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(cats, "only project");
        let own = d
            .wait_text(
                "[data-testid=memory-grant][data-agent=bob] [data-testid=memory-grant-categories]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(own, "every category");
        wait_results(&d, &[("alice", "deploy-steps"), ("bob", "bob-todo")]).await;
        d.screenshot("memory").await;

        // A peer's row can be inspected but not forgotten from bob's view.
        d.click("[data-testid=memory-result][data-key=deploy-steps] [data-testid=memory-inspect]")
            .await;
        let content = d
            .wait_text(
                "[data-testid=memory-detail][data-agent=alice] [data-testid=memory-content]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(content, "Deploy with the blue pipeline");
        assert!(d
            .client
            .find(Locator::Css("[data-testid=memory-forget]"))
            .await
            .is_err());

        // Search narrows to the matching row.
        let q = d.wait_for("[data-testid=memory-query]").await;
        q.send_keys("pipeline").await.unwrap();
        d.click("[data-testid=memory-search]").await;
        wait_results(&d, &[("alice", "deploy-steps")]).await;

        // note-00 stored again: the newest change, so first in alice's list.
        api.store_memory(
            "alice",
            "note-00",
            "routine note 0, revised",
            Some("notes"),
            None,
        )
        .await
        .unwrap();

        // Alice: 23 own rows in pages of 20.
        go(&d, "#memory/alice").await;
        d.wait_for("[data-testid=memory-screen][data-agent=alice]")
            .await;
        d.wait_text("[data-testid=memory-total]", |t| {
            t == "23 rows, showing 1–20"
        })
        .await;
        let first = d
            .wait_for("[data-testid=memory-row]")
            .await
            .attr("data-key")
            .await
            .unwrap();
        assert_eq!(first.as_deref(), Some("note-00"), "newest change first");
        // The change time is shown in local time, not as the stored RFC 3339 text.
        let changed = d
            .wait_text(
                "[data-testid=memory-row][data-key=note-00] [data-testid=memory-changed]",
                |t| !t.is_empty(),
            )
            .await;
        assert!(
            !changed.contains('-') && !changed.contains('Z'),
            "{changed}"
        );
        d.click("[data-testid=memory-row][data-key=note-00] [data-testid=memory-inspect]")
            .await;
        d.wait_for(
            "[data-testid=memory-detail][data-key=note-00] [data-testid=memory-detail-changed]",
        )
        .await;
        d.screenshot("memory-own-rows").await;
        d.narrow_screenshot("memory-own-rows-narrow").await;
        d.click("[data-testid=memory-next]").await;
        d.wait_text("[data-testid=memory-total]", |t| {
            t == "23 rows, showing 21–23"
        })
        .await;
        d.click("[data-testid=memory-prev]").await;
        d.wait_text("[data-testid=memory-total]", |t| {
            t == "23 rows, showing 1–20"
        })
        .await;

        // Forget asks first; confirming removes the row from the store.
        d.click("[data-testid=memory-row][data-key=alice-diary] [data-testid=memory-inspect]")
            .await;
        d.click("[data-testid=memory-forget]").await;
        d.click("[data-testid=memory-forget-cancel]").await;
        assert_eq!(
            api.list_memory("alice", 0, None).await.unwrap().len(),
            23,
            "cancel forgot the row"
        );
        d.click("[data-testid=memory-forget]").await;
        d.click("[data-testid=memory-forget-confirm]").await;
        d.wait_text("[data-testid=memory-forgotten]", |t| {
            t.contains("alice-diary")
        })
        .await;
        d.wait_text("[data-testid=memory-total]", |t| t.starts_with("22 rows"))
            .await;
        let fresh = Warren::open(InstallLayout::new(d.home.clone()));
        let left = fresh.list_memory("alice", 0, None).await.unwrap();
        assert_eq!(left.len(), 22);
        assert!(left.iter().all(|m| m.key != "alice-diary"));
        assert_eq!(
            fresh.list_memory("bob", 0, None).await.unwrap().len(),
            1,
            "bob's rows changed"
        );
        d.close().await;
    });
}
