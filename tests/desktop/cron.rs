//! The desktop app as the install's runtime: a cron job created in the agent's detail view
//! (a bad schedule refused at its field, the next five run times shown before saving) runs on
//! its own, with no `warren serve`, and its run shows in the Live timeline with trigger `cron`.
//! Meanwhile the app holds the runtime lock, so a `warren serve` is refused, naming the app.

use crate::harness::{launch, Desktop};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use std::time::{Duration, Instant};
use warren_api::cron::CronRunStatus;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_types::{ErrorCode, ProviderFamily};

fn config(fake: &FakeLlm) -> String {
    format!(
        r#"# Cron test install.
schema_version = 1

[agents.writer]
risk_profile = "sup"
model_provider = "openai.fake"

[risk_profiles.sup]
level = "supervised"

{}"#,
        fake.config_block("fake")
    )
}

async fn count(d: &Desktop, css: &str) -> usize {
    d.client
        .find_all(Locator::Css(css))
        .await
        .map(|v| v.len())
        .unwrap_or(0)
}

/// Waits up to `wait` until some element matching `css` has text satisfying `ok`.
async fn wait_any_text(d: &Desktop, css: &str, wait: Duration, ok: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + wait;
    loop {
        if let Ok(all) = d.client.find_all(Locator::Css(css)).await {
            for e in all {
                if ok(&e.text().await.unwrap_or_default()) {
                    return;
                }
            }
        }
        if Instant::now() > deadline {
            d.screenshot("cron-timeout").await;
            panic!("no `{css}` with the expected text within {wait:?}");
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

#[test]
fn a_job_created_in_the_window_runs_without_serve_and_shows_in_the_timeline() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script((0..4).map(|_| Reply::text("the cron run says hello")));
        let cfg = config(&fake);
        let d = launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap()).await;

        // The app owns the runtime: the lock names it, and a `warren serve` is refused.
        let backend = d.backend_pid().expect("the app's backend runs");
        let deadline = Instant::now() + Duration::from_secs(20);
        let record = loop {
            let text =
                std::fs::read_to_string(d.home.join("data/runtime.lock")).unwrap_or_default();
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
                break v;
            }
            assert!(Instant::now() < deadline, "no holder record: {text:?}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(record["pid"], backend);
        assert_eq!(record["program"], "warren-desktop");
        let serve = warren_api::Warren::open(warren_config::InstallLayout::new(&d.home));
        let refused = serve.acquire_runtime("warren serve").unwrap_err();
        assert_eq!(refused.code, ErrorCode::RuntimeOwned);
        assert!(
            refused
                .message
                .contains(&format!("already run by warren-desktop (pid {backend}")),
            "{}",
            refused.message
        );

        // A second app on the same install is refused too: it names the first and exits 1.
        let second = tokio::process::Command::new(env!("CARGO_BIN_EXE_warren-desktop"))
            .env("DISPLAY", &d.display)
            .env("WARREN_HOME", &d.home)
            .env("WARREN_LOG", "warn")
            .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
            .env("NO_AT_BRIDGE", "1")
            .env("DBUS_SESSION_BUS_ADDRESS", "disabled:")
            .env_remove("WAYLAND_DISPLAY")
            .kill_on_drop(true)
            .output();
        let second = tokio::time::timeout(Duration::from_secs(60), second)
            .await
            .expect("the second app exits instead of running")
            .unwrap();
        let stderr = String::from_utf8_lossy(&second.stderr);
        assert_eq!(second.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains(&format!("already run by warren-desktop (pid {backend}")),
            "{stderr}"
        );

        // Open writer's details: no jobs yet.
        d.click("[data-alias=writer] [data-testid=agent-open]")
            .await;
        d.wait_for("[data-testid=cron-jobs]").await;
        assert_eq!(count(&d, "[data-testid=cron-job]").await, 0);
        d.click("[data-testid=cron-new]").await;

        // A bad schedule: the error sits at the schedule field and Save stays off.
        let schedule = d.wait_for("[data-testid=cron-schedule]").await;
        schedule.send_keys("* 25 * * *").await.unwrap();
        d.wait_for("[data-testid=cron-prompt]")
            .await
            .send_keys("say hello")
            .await
            .unwrap();
        let err = d
            .wait_text("[data-testid=cron-schedule-error]", |t| {
                t.contains("hour field")
            })
            .await;
        assert!(err.contains("`* 25 * * *`"), "{err}");
        assert!(!d
            .wait_for("[data-testid=cron-save]")
            .await
            .is_enabled()
            .await
            .unwrap());
        assert_eq!(count(&d, "[data-testid=cron-next-run]").await, 0);
        d.screenshot("cron-invalid").await;

        // Every minute: the next five run times show before saving, a minute apart.
        schedule.clear().await.unwrap();
        schedule.send_keys("* * * * *").await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while count(&d, "[data-testid=cron-next-run]").await != 5 {
            assert!(Instant::now() < deadline, "no five next run times");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert_eq!(count(&d, "[data-testid=cron-schedule-error]").await, 0);
        let mut times = Vec::new();
        for e in d
            .client
            .find_all(Locator::Css("[data-testid=cron-next-run]"))
            .await
            .unwrap()
        {
            let t = e.text().await.unwrap();
            times.push(chrono::DateTime::parse_from_rfc3339(&t).unwrap());
        }
        for w in times.windows(2) {
            assert_eq!((w[1] - w[0]).num_seconds(), 60, "{times:?}");
        }
        d.screenshot("cron-preview").await;
        d.click("[data-testid=cron-save]").await;
        d.wait_for("[data-testid=cron-job][data-source=runtime]")
            .await;
        assert_eq!(count(&d, "[data-testid=cron-form]").await, 0);

        // Nothing but the app runs the job: its run reaches the model within two minutes…
        assert!(
            fake.wait_for_requests(1, Duration::from_secs(150)).await,
            "the job never ran"
        );
        // …and streams into writer's Live timeline, tagged `cron`.
        d.click("[data-alias=writer] [data-testid=agent-live]")
            .await;
        wait_any_text(
            &d,
            "[data-testid=turn-trigger]",
            Duration::from_secs(30),
            // The trigger tag is shown in capitals (CSS), and WebDriver reads rendered text.
            |t| t.to_ascii_lowercase().contains("cron"),
        )
        .await;
        wait_any_text(
            &d,
            "[data-testid=text-item]",
            Duration::from_secs(30),
            |t| t.contains("the cron run says hello"),
        )
        .await;
        d.screenshot("cron-timeline").await;

        // The run is recorded against the job, as a turn with trigger `cron`.
        let w = warren_api::Warren::open(warren_config::InstallLayout::new(&d.home));
        let jobs = w.cron_jobs(Some("writer")).await.unwrap();
        assert_eq!(jobs.len(), 1);
        let run = jobs[0].last_run.clone().expect("a recorded run");
        assert_eq!(run.job, jobs[0].id);
        let turn = run.turn_id.expect("the run's turn");
        // One connection, not a pool: nothing keeps running in this process after the read.
        use sqlx::Connection;
        let mut sessions = sqlx::SqliteConnection::connect(&format!(
            "sqlite://{}",
            d.home.join("data/sessions.db").display()
        ))
        .await
        .unwrap();
        let trigger: String = sqlx::query_scalar("SELECT trigger FROM turns WHERE id = ?")
            .bind(&turn)
            .fetch_one(&mut sessions)
            .await
            .unwrap();
        sessions.close().await.unwrap();
        assert_eq!(trigger, "cron");
        d.close().await;
        fake.acknowledge_failures();
    });
}

/// A cron run that fails raises a desktop notification while the window is in the tray, and the
/// run is recorded as failed.
#[test]
fn a_failed_cron_run_is_notified() {
    use crate::harness::{launch_with, Bus};
    use crate::live::{invoke, notified};
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            Reply::error(400, "bad request"),
            Reply::error(400, "bad request"),
        ]);
        let cfg = format!(
            "{}\n[cron.nightly]\nagent = \"writer\"\nschedule = \"0 3 * * *\"\nprompt = \"digest\"\n",
            config(&fake)
        );
        let d = launch_with(Bus::PrivateWithNotifications, |home| {
            std::fs::write(home.join("config.toml"), &cfg).unwrap();
        })
        .await;
        d.wait_for("[data-alias=writer]").await;
        invoke(
            &d,
            "plugin:window|close",
            serde_json::json!({"label": "main"}),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(d.notifications.lock().unwrap().is_empty());

        invoke(&d, "run_cron_job", serde_json::json!({"id": "nightly"})).await;
        let got = notified(&d, 1, "the failed cron run").await;
        assert_eq!(got[0].0, "writer's turn failed", "{got:?}");
        let api = warren_api::Warren::open(warren_config::InstallLayout::new(&d.home));
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let jobs = api.cron_jobs(Some("writer")).await.unwrap();
            let last = jobs
                .iter()
                .find(|j| j.id == "nightly")
                .and_then(|j| j.last_run.clone());
            if let Some(run) = last.filter(|r| r.status != CronRunStatus::Running) {
                assert_eq!(run.status, CronRunStatus::Failed, "{run:?}");
                break;
            }
            assert!(Instant::now() < deadline, "the run was not recorded");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        d.close().await;
    });
}
