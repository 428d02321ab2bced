//! Pause and resume: a paused agent shows `paused`, its prompts fail with `agent_paused` and
//! reach no provider, the pause survives a restart of the app, and resume (one agent, or all)
//! lets turns run again.

use crate::harness::{launch, Desktop};
use crate::{block_on_mt, serial};
use std::path::Path;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_types::ProviderFamily;

fn config(fake: &FakeLlm) -> String {
    format!(
        r#"# Pause test install.
schema_version = 1

[agents.writer]
risk_profile = "ro"
model_provider = "openai.fake"

[agents.other]
risk_profile = "ro"
model_provider = "openai.fake"

[risk_profiles.ro]
level = "readonly"

{}"#,
        fake.config_block("fake")
    )
}

/// Runs the prompt `hi`: the turn's result, or the command's error as `{ error: {code, message} }`.
async fn prompt(d: &Desktop, agent: &str) -> serde_json::Value {
    d.send_prompt(agent, "hi").await
}

async fn status(d: &Desktop, agent: &str, want: &str) {
    d.wait_for(&format!(
        "[data-testid=agent-row][data-alias={agent}] [data-testid=agent-status][data-status={want}]"
    ))
    .await;
}

fn paused_file(home: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(home.join("data/paused.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_default()
}

fn copy_dir(from: &Path, to: &Path) {
    let ok = std::process::Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .unwrap()
        .success();
    assert!(ok, "copying {} failed", from.display());
}

#[test]
fn a_paused_agent_runs_no_turns_and_stays_paused_across_restarts() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.push(Reply::text("back again"));
        let cfg = config(&fake);
        let d = launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap()).await;
        status(&d, "writer", "idle").await;
        d.click("[data-testid=agent-row][data-alias=writer] [data-testid=agent-pause]")
            .await;
        status(&d, "writer", "paused").await;
        status(&d, "other", "idle").await;
        assert_eq!(paused_file(&d.home), vec!["writer".to_string()]);
        d.wait_text("[data-testid=strip-paused]", |t| t == "1 paused")
            .await;
        d.screenshot("agents-paused").await;

        let out = prompt(&d, "writer").await;
        assert_eq!(out["error"]["code"], "agent_paused", "{out}");
        assert!(
            fake.requests().is_empty(),
            "a paused agent reached the provider"
        );

        // A new app process on the same install: still paused.
        let old_home = d.home.clone();
        let saved = tempfile::tempdir().unwrap();
        copy_dir(&old_home, &saved.path().join("home"));
        d.close().await;
        let saved_home = saved.path().join("home");
        let d = launch(|home| {
            std::fs::copy(saved_home.join("config.toml"), home.join("config.toml")).unwrap();
            copy_dir(&saved_home.join("data"), home);
        })
        .await;
        status(&d, "writer", "paused").await;
        let out = prompt(&d, "writer").await;
        assert_eq!(out["error"]["code"], "agent_paused", "{out}");
        assert!(fake.requests().is_empty());

        // Resume: the next prompt runs.
        d.click("[data-testid=agent-row][data-alias=writer] [data-testid=agent-resume]")
            .await;
        status(&d, "writer", "idle").await;
        assert!(paused_file(&d.home).is_empty());
        let out = prompt(&d, "writer").await;
        assert_eq!(out["status"], "completed", "{out}");
        assert_eq!(fake.requests().len(), 1);

        // Pause all, resume all.
        d.click("[data-testid=pause-all]").await;
        status(&d, "writer", "paused").await;
        status(&d, "other", "paused").await;
        assert_eq!(
            paused_file(&d.home),
            vec!["other".to_string(), "writer".to_string()]
        );
        let out = prompt(&d, "other").await;
        assert_eq!(out["error"]["code"], "agent_paused", "{out}");
        d.click("[data-testid=resume-all]").await;
        status(&d, "writer", "idle").await;
        status(&d, "other", "idle").await;
        assert!(paused_file(&d.home).is_empty());
        assert_eq!(fake.requests().len(), 1);

        // A pause made by another process on the install (here the api in the test) reaches
        // the open window without a reload.
        let api = warren_api::Warren::open(warren_config::InstallLayout::new(d.home.clone()));
        api.set_agent_paused("other", true).await.unwrap();
        status(&d, "other", "paused").await;
        status(&d, "writer", "idle").await;
        d.close().await;
    });
}
