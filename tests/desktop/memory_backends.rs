//! The Settings screen's memory backends: a PostgreSQL URL that does not answer is checked and
//! shown failed, and Save stays off with the config unchanged; a new SQLite file is checked,
//! previewed as a diff and saved into config.toml with its comments.

use crate::harness::launch;
use crate::{block_on, serial};
use std::time::{Duration, Instant};

const CONFIG: &str = r#"# Memory backends test install.
schema_version = 1

[agents.alice]
risk_profile = "sup"

[risk_profiles.sup]
level = "supervised"
"#;

#[test]
fn a_backend_that_does_not_open_is_shown_and_a_working_one_is_saved() {
    let _serial = serial();
    block_on(async {
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let d = launch(|home| std::fs::write(home.join("config.toml"), CONFIG).unwrap()).await;
        d.nav("settings").await;
        let form = "[data-testid=memory-backends]";
        d.wait_for(&format!("{form} [data-testid=memory-postgres-url]"))
            .await
            .send_keys(&format!("postgres://nobody@127.0.0.1:{closed}/none"))
            .await
            .unwrap();
        d.wait_for("[data-testid=memory-default-backend] option[value=postgres]")
            .await
            .click()
            .await
            .unwrap();
        d.wait_text("[data-testid=memory-diff]", |t| t.contains("postgres"))
            .await;
        d.click("[data-testid=memory-check-run]").await;
        let failed = d
            .wait_text(
                "[data-testid=memory-check][data-backend=postgres][data-ok=false]",
                |t| !t.is_empty(),
            )
            .await;
        assert!(failed.contains("postgres"), "{failed}");
        assert!(!d
            .wait_for("[data-testid=memory-save]")
            .await
            .is_enabled()
            .await
            .unwrap());
        assert_eq!(
            std::fs::read_to_string(d.home.join("config.toml")).unwrap(),
            CONFIG
        );

        // Back to SQLite, in a file of its own: checked, saved.
        d.wait_for("[data-testid=memory-default-backend] option[value=sqlite]")
            .await
            .click()
            .await
            .unwrap();
        // Emptied as a person would (WebDriver's clear sends no input event).
        let url = d.wait_for("[data-testid=memory-postgres-url]").await;
        url.clear().await.unwrap();
        url.send_keys(" ").await.unwrap();
        url.send_keys("\u{E003}").await.unwrap();
        d.wait_for("[data-testid=memory-sqlite-path]")
            .await
            .send_keys("data/memory/team.db")
            .await
            .unwrap();
        d.wait_text("[data-testid=memory-diff]", |t| t.contains("team.db"))
            .await;
        d.click("[data-testid=memory-check-run]").await;
        d.wait_for("[data-testid=memory-check][data-backend=sqlite][data-ok=true]")
            .await;
        d.click("[data-testid=memory-save]").await;
        d.wait_for("[data-testid=memory-saved]").await;
        let deadline = Instant::now() + Duration::from_secs(10);
        let text = loop {
            let t = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
            if t.contains("team.db") || Instant::now() > deadline {
                break t;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(text.contains("path = \"data/memory/team.db\""), "{text}");
        assert!(text.contains("# Memory backends test install."), "{text}");
        assert!(!text.contains("postgres"), "{text}");
        assert!(d.home.join("data/memory/team.db").exists());
        d.close().await;
    });
}
