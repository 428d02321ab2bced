//! Cron against a real host, real SQLite files and a fake provider, with the clock driven by
//! the test: one run per tick, history recorded, one catch-up run after a long sleep.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};
use warren_policy::ManualClock;
use warren_runtime::cron::Scheduler;
use warren_runtime::host::{Host, HostEnv};
use warren_state::cron::{CronError, CronStore};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::{EventKind, ProviderFamily};

fn at(rfc: &str) -> SystemTime {
    SystemTime::from(chrono::DateTime::parse_from_rfc3339(rfc).unwrap())
}

fn config(fake: &FakeLlm, cron: &str) -> String {
    format!(
        r#"
[risk_profiles.p]
level = "full"

[agents.alice]
risk_profile = "p"
model_provider = "openai.main"

[agents.bob]
risk_profile = "p"
model_provider = "openai.main"

{cron}

{}
"#,
        fake.config_block("main")
    )
}

struct Setup {
    install: TestInstall,
    host: Arc<Host>,
    clock: Arc<ManualClock>,
    scheduler: Scheduler,
}

async fn setup(text: &str) -> Setup {
    let install = TestInstall::with_config(text).unwrap();
    let clock = Arc::new(ManualClock::new(at("2026-03-01T12:00:30Z")));
    let mut vars = BTreeMap::new();
    vars.insert("PATH".into(), std::env::var("PATH").unwrap_or_default());
    let env = HostEnv {
        home: Some(install.root().join("home")),
        vars,
    };
    let host = Arc::new(
        Host::open_with_clock(install.layout(), env, clock.clone())
            .await
            .unwrap(),
    );
    let store = CronStore::open(&install.layout().cron_db(), host.sessions().pool().clone())
        .await
        .unwrap();
    let scheduler = Scheduler::new(host.clone(), store, clock.clone());
    Setup {
        install,
        host,
        clock,
        scheduler,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_minute_runs_once_per_tick_and_once_after_an_hour_asleep() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script((0..4).map(|i| Reply::text(&format!("check {i} done"))));
    let s = setup(&config(
        &fake,
        "[cron.heartbeat]\nagent = \"alice\"\nschedule = \"* * * * *\"\nprompt = \"check in\"\n",
    ))
    .await;

    // First sight arms the job: nothing due yet.
    let r = s.scheduler.tick().await.unwrap();
    assert_eq!(r.armed, vec!["heartbeat".to_string()]);
    assert!(r.started.is_empty());

    for _ in 0..2 {
        s.clock.advance(Duration::from_secs(60));
        let r = s.scheduler.tick().await.unwrap();
        assert_eq!(r.started.len(), 1, "{r:?}");
        s.scheduler.wait_idle().await;
        // A second tick at the same time runs nothing.
        let again = s.scheduler.tick().await.unwrap();
        assert!(again.started.is_empty(), "{again:?}");
    }

    // The machine sleeps for an hour: 60 due times, one run.
    s.clock.advance(Duration::from_secs(3600));
    let r = s.scheduler.tick().await.unwrap();
    assert_eq!(r.started.len(), 1, "one catch-up run, not a storm: {r:?}");
    s.scheduler.wait_idle().await;
    s.clock.advance(Duration::from_secs(60));
    let r = s.scheduler.tick().await.unwrap();
    assert_eq!(r.started.len(), 1);
    s.scheduler.wait_idle().await;

    let runs = s.scheduler.store().runs(Some("heartbeat")).await.unwrap();
    assert_eq!(runs.len(), 4, "{runs:#?}");
    assert_eq!(
        runs.iter().map(|r| r.missed).collect::<Vec<_>>(),
        vec![0, 0, 59, 0]
    );
    assert_eq!(
        runs.iter()
            .map(|r| r.scheduled_for.as_str())
            .collect::<Vec<_>>(),
        vec![
            "2026-03-01T12:01:00.000000Z",
            "2026-03-01T12:02:00.000000Z",
            "2026-03-01T13:02:00.000000Z",
            "2026-03-01T13:03:00.000000Z",
        ]
    );
    assert_eq!(fake.request_count(), 4);
    for run in &runs {
        assert_eq!(run.status, "completed", "{run:?}");
        assert_eq!(run.source, "config");
        let turn = run.turn_id.clone().expect("a turn ran");
        // Each run is a normal turn with trigger `cron`, in a cron session, events stored.
        let session = s
            .host
            .sessions()
            .turns_session(&turn)
            .await
            .unwrap()
            .unwrap();
        let info = s.host.sessions().session(&session).await.unwrap().unwrap();
        assert_eq!(info.kind, "cron");
        assert_eq!(info.agent.as_deref(), Some("alice"));
        let turns = s.host.sessions().turns(&session).await.unwrap();
        assert_eq!(turns[0].trigger, "cron");
        let events = s.host.sessions().turn_events(&turn).await.unwrap();
        assert!(matches!(
            events.last().map(|e| &e.kind),
            Some(EventKind::TurnCompleted { .. })
        ));
    }
    drop(s.install);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_jobs_run_are_listed_exported_and_purged_per_agent() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([Reply::text("bob's report")]);
    let s = setup(&config(&fake, "")).await;
    let now = chrono::DateTime::parse_from_rfc3339("2026-03-01T12:00:30Z")
        .unwrap()
        .into();
    let store = s.scheduler.store();

    let bad = store
        .add_job("bob", "every tuesday", "report", now)
        .await
        .unwrap_err();
    assert!(matches!(bad, CronError::Schedule { .. }), "{bad:?}");
    assert!(bad.to_string().contains("`every tuesday`"), "{bad}");

    let job = store
        .add_job("bob", "*/5 * * * *", "write the report", now)
        .await
        .unwrap();
    assert_eq!(job.agent.as_deref(), Some("bob"));
    s.scheduler.tick().await.unwrap();
    // 12:00:30 → 12:04:30: not due yet; → 12:05:30: due once.
    s.clock.advance(Duration::from_secs(240));
    assert!(s.scheduler.tick().await.unwrap().started.is_empty());
    s.clock.advance(Duration::from_secs(60));
    assert_eq!(s.scheduler.tick().await.unwrap().started.len(), 1);
    s.scheduler.wait_idle().await;
    let runs = store.runs(Some(&job.id)).await.unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].status, "completed");
    assert_eq!(runs[0].source, "runtime");

    let bob = store.agent_id("bob").await.unwrap();
    let alice = store.agent_id("alice").await.unwrap();
    let export = store.export_agent(&bob).await.unwrap();
    assert_eq!((export.jobs.len(), export.runs.len()), (1, 1));
    assert_eq!(store.export_agent(&alice).await.unwrap().jobs.len(), 0);
    let purged = store.purge_agent(&bob).await.unwrap();
    assert_eq!((purged.jobs, purged.runs), (1, 1));
    assert!(store.jobs(None).await.unwrap().is_empty());
    assert!(store.runs(None).await.unwrap().is_empty());
    // Restoring re-creates the exported jobs.
    assert_eq!(store.import_jobs(&bob, &export.jobs).await.unwrap(), 1);
    assert_eq!(store.jobs(Some(&bob)).await.unwrap()[0].id, job.id);
}

/// A job or run column whose stored value no longer has the type Warren wrote (edited by
/// another tool) is an error naming the table and column when listing or exporting, not a panic.
#[tokio::test]
async fn an_undecodable_cron_column_is_an_error_naming_it() {
    use sqlx::Connection;
    let install = TestInstall::empty().unwrap();
    let now = chrono::DateTime::parse_from_rfc3339("2026-03-01T12:00:00Z")
        .unwrap()
        .into();
    let sessions = warren_state::db::open_sessions_db(&install.layout().sessions_db())
        .await
        .unwrap();
    let path = install.layout().cron_db();
    let store = CronStore::open(&path, sessions).await.unwrap();
    let job = store
        .add_job("bob", "*/5 * * * *", "write the report", now)
        .await
        .unwrap();
    let bob = store.agent_id("bob").await.unwrap();
    store
        .start_run(&job.id, "runtime", Some(&bob), now, 0, "running", now)
        .await
        .unwrap();
    assert_eq!(store.export_agent(&bob).await.unwrap().runs.len(), 1);

    // A raw connection of its own writes blobs where text belongs.
    let mut raw = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    sqlx::query("UPDATE runs SET status = X'00FF'")
        .execute(&mut raw)
        .await
        .unwrap();
    let e = store.runs(None).await.unwrap_err();
    assert!(matches!(e, CronError::Query(_)), "{e:?}");
    assert!(e.to_string().contains("`status` of table `runs`"), "{e}");
    let e = store.export_agent(&bob).await.unwrap_err();
    assert!(e.to_string().contains("`status` of table `runs`"), "{e}");

    sqlx::query("UPDATE jobs SET prompt = X'00FF'")
        .execute(&mut raw)
        .await
        .unwrap();
    raw.close().await.unwrap();
    let e = store.jobs(None).await.unwrap_err();
    assert!(e.to_string().contains("`prompt` of table `jobs`"), "{e}");
    let e = store.job(&job.id).await.unwrap_err();
    assert!(e.to_string().contains("`prompt` of table `jobs`"), "{e}");
}
