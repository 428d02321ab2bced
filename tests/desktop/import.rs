//! The first-start offer to import a ZeroClaw install found at ZeroClaw's default place: the
//! plan is shown before anything is written (an alias that exists already stops it until a
//! prefix is given), the import runs from the window, the agents appear, the memory rows are in
//! Warren's store and the ZeroClaw install is left byte for byte as it was.

use crate::harness::{launch_with_env, Bus};
use crate::{block_on, serial};
use fantoccini::Locator;
use std::time::{Duration, Instant};
use warren_testkit::zeroclaw::{copy_zeroclaw_fixture, tree_snapshot};

const CONFIG: &str = r#"# Import test install.
schema_version = 1

[agents.writer]
risk_profile = "sup"

[risk_profiles.sup]
level = "supervised"
"#;

#[test]
fn a_zeroclaw_install_is_planned_then_imported_from_the_window() {
    let _serial = serial();
    block_on(async {
        let scratch = tempfile::tempdir().unwrap();
        let src = copy_zeroclaw_fixture(&scratch.path().join("zeroclaw")).unwrap();
        let before = tree_snapshot(&src).unwrap();
        let src_text = src.display().to_string();
        let d = launch_with_env(Bus::None, &[("ZEROCLAW_CONFIG_DIR", &src_text)], |home| {
            std::fs::write(home.join("config.toml"), CONFIG).unwrap();
        })
        .await;

        let shown = d
            .wait_text("[data-testid=import-source]", |t| !t.is_empty())
            .await;
        assert_eq!(shown, src_text);
        d.click("[data-testid=import-review]").await;
        // `writer` exists in Warren: the plan names the clash and Import stays off.
        let problems = d
            .wait_text("[data-testid=import-problems]", |t| t.contains("writer"))
            .await;
        assert!(!problems.is_empty());
        assert!(!d
            .wait_for("[data-testid=import-run]")
            .await
            .is_enabled()
            .await
            .unwrap());
        let totals = d
            .wait_text("[data-testid=import-totals]", |t| !t.is_empty())
            .await;
        assert!(totals.contains("4 agents"), "{totals}");
        assert!(totals.contains("92 memory rows"), "{totals}");
        // Nothing was written by the plan.
        assert_eq!(
            std::fs::read_to_string(d.home.join("config.toml")).unwrap(),
            CONFIG
        );

        d.wait_for("[data-testid=import-prefix]")
            .await
            .send_keys("zc_")
            .await
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let clear = d
                .client
                .find(Locator::Css("[data-testid=import-problems]"))
                .await
                .is_err();
            let planned = d
                .client
                .find(Locator::Css(
                    "[data-testid=import-agent][data-alias=zc_writer]",
                ))
                .await
                .is_ok();
            if clear && planned {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the prefix never cleared the plan"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        d.click("[data-testid=import-run]").await;
        let done = d
            .wait_text("[data-testid=import-done]", |t| !t.is_empty())
            .await;
        assert!(done.contains("Imported 4 agents"), "{done}");
        assert!(done.contains("92 memory rows"), "{done}");

        // The agents are in the list, the config and Warren's memory store.
        for alias in ["zc_writer", "zc_researcher", "zc_reviewer", "zc_journal"] {
            d.wait_for(&format!("[data-testid=agent-row][data-alias={alias}]"))
                .await;
        }
        let config = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(config.contains("# Import test install."), "{config}");
        assert!(config.contains("[agents.zc_writer]"), "{config}");
        let warren = warren_api::Warren::open(warren_config::InstallLayout::new(&d.home));
        let page = warren.memory_page("zc_writer", 0, 100).await.unwrap();
        assert_eq!(page.total, 30, "zc_writer's memory rows");
        assert_eq!(tree_snapshot(&src).unwrap(), before, "the source changed");
        d.close().await;
    });
}

/// Into the install a first start writes: the fixture's `ollama.local` differs from Warren's,
/// the plan names it, and choosing "import it under a new name" in the window clears the plan;
/// the import then keeps `assistant` and Warren's provider entry.
#[test]
fn a_name_collision_is_settled_by_a_choice_in_the_window() {
    let _serial = serial();
    block_on(async {
        let scratch = tempfile::tempdir().unwrap();
        let src = copy_zeroclaw_fixture(&scratch.path().join("zeroclaw")).unwrap();
        let src_text = src.display().to_string();
        let default = warren_config::default_config_text(warren_config::Preset::Balanced);
        let d = launch_with_env(Bus::None, &[("ZEROCLAW_CONFIG_DIR", &src_text)], |home| {
            std::fs::write(home.join("config.toml"), &default).unwrap();
        })
        .await;
        d.click("[data-testid=import-review]").await;
        let problems = d
            .wait_text("[data-testid=import-problems]", |t| {
                t.contains("ollama.local")
            })
            .await;
        assert!(problems.contains("choose to rename it"), "{problems}");
        d.click("[data-testid=import-collisions] option[value=rename]")
            .await;
        let deadline = Instant::now() + Duration::from_secs(20);
        while d
            .client
            .find(Locator::Css("[data-testid=import-problems]"))
            .await
            .is_ok()
        {
            assert!(
                Instant::now() < deadline,
                "the choice never cleared the plan"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        d.screenshot("import-collision-choice").await;
        d.click("[data-testid=import-run]").await;
        let done = d
            .wait_text("[data-testid=import-done]", |t| !t.is_empty())
            .await;
        assert!(done.contains("Imported 4 agents"), "{done}");
        let config = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(config.contains("[agents.assistant]"), "{config}");
        assert!(
            config.contains("model = \"llama3.2\""),
            "Warren's entry kept:\n{config}"
        );
        assert!(config.contains("ollama.local_zeroclaw"), "{config}");
        d.close().await;
    });
}
