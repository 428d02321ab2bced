//! `warren cron …` as a black box (exit codes, JSON shapes, schedule errors, next run times),
//! and one runtime owner per install: a second `warren serve` is refused and runs nothing.

use crate::common::{warren, warren_cmd};
use chrono::{DateTime, Timelike, Utc};
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

const WAIT: Duration = Duration::from_secs(60);

fn install(fake: &FakeLlm, extra: &str) -> TestInstall {
    TestInstall::with_config(&format!(
        r#"
[risk_profiles.sup]
level = "supervised"

[agents.alice]
risk_profile = "sup"
model_provider = "openai.main"

[agents.bob]
risk_profile = "sup"
model_provider = "openai.main"

{extra}

{}"#,
        fake.config_block("main")
    ))
    .unwrap()
}

const NIGHTLY: &str =
    "[cron.nightly]\nagent = \"alice\"\nschedule = \"0 3 * * *\"\nprompt = \"tidy up\"\n";

fn times(v: &Value) -> Vec<DateTime<Utc>> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|t| {
            DateTime::parse_from_rfc3339(t.as_str().unwrap())
                .unwrap()
                .with_timezone(&Utc)
        })
        .collect()
}

fn ids(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|j| j["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_shows_five_times_and_a_bad_schedule_names_its_field() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = install(&fake, "");
    let r = warren(t.root(), &["--json", "cron", "next", "*/10 9-17 * * *"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let next = times(&r.json());
    assert_eq!(next.len(), 5);
    assert!(next.windows(2).all(|w| w[0] < w[1]), "{next:?}");
    assert!(
        next.iter()
            .all(|t| t.minute() % 10 == 0 && (9..=17).contains(&t.hour()) && t.second() == 0),
        "{next:?}"
    );
    let human = warren(t.root(), &["cron", "next", "0 12 * * *"]);
    assert_eq!(human.code, 0);
    assert_eq!(
        human
            .stdout
            .lines()
            .filter(|l| l.contains("T12:00:00Z"))
            .count(),
        5
    );

    for (expr, field) in [
        ("* 25 * * *", "hour field"),
        ("61 * * * *", "minute field"),
        ("* * * 13 *", "month field"),
        ("* * *", "expected 5 fields"),
    ] {
        let r = warren(t.root(), &["--json", "cron", "next", expr]);
        assert_eq!(r.code, 2, "{expr}: {}", r.stderr);
        let e = &r.json()["error"];
        assert_eq!(e["code"], "invalid_argument");
        let msg = e["message"].as_str().unwrap();
        assert!(
            msg.starts_with("schedule: invalid cron expression") && msg.contains(field),
            "{expr}: {msg}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_list_edit_and_rm_keep_config_jobs_read_only() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = install(&fake, NIGHTLY);
    let config_before = t.read_config().unwrap();

    // A dry run checks and shows the next times, and saves nothing.
    let dry = warren(
        t.root(),
        &[
            "--json",
            "cron",
            "add",
            "--agent",
            "alice",
            "--schedule",
            "*/5 * * * *",
            "--prompt",
            "check the inbox",
            "--dry-run",
        ],
    );
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    let d = dry.json();
    assert_eq!(d["dry_run"], true);
    assert_eq!(d["job"]["agent"], "alice");
    assert_eq!(times(&d["next_runs"]).len(), 5);
    let list = warren(t.root(), &["--json", "cron", "list"]);
    assert_eq!(list.code, 0, "{}", list.stderr);
    assert_eq!(ids(&list.json()), ["nightly"]);
    let nightly = &list.json()[0];
    assert_eq!(nightly["source"], "config");
    assert_eq!(nightly["read_only"], true);
    assert_eq!(nightly["agent"], "alice");
    assert!(times(&nightly["next_runs"])
        .iter()
        .all(|t| t.hour() == 3 && t.minute() == 0));

    // Bad input: each error names its field, exit 2, nothing saved.
    for (args, field) in [
        (
            ["alice", "61 * * * *", "p"],
            "schedule: invalid cron expression `61 * * * *`: minute field",
        ),
        (
            ["zed", "* * * * *", "p"],
            "agent: agent `zed` does not exist",
        ),
        (["alice", "* * * * *", " "], "prompt: "),
    ] {
        let r = warren(
            t.root(),
            &[
                "--json",
                "cron",
                "add",
                "--agent",
                args[0],
                "--schedule",
                args[1],
                "--prompt",
                args[2],
            ],
        );
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        let e = &r.json()["error"];
        assert_eq!(e["code"], "invalid_argument");
        assert!(e["message"].as_str().unwrap().starts_with(field), "{e}");
        assert!(r.stderr.contains(field), "{}", r.stderr);
    }
    assert_eq!(
        ids(&warren(t.root(), &["--json", "cron", "list"]).json()),
        ["nightly"]
    );

    // Add: the job with its next five times.
    let add = warren(
        t.root(),
        &[
            "--json",
            "cron",
            "add",
            "--agent",
            "bob",
            "--schedule",
            "*/5 * * * *",
            "--prompt",
            "check the inbox",
        ],
    );
    assert_eq!(add.code, 0, "{}", add.stderr);
    let job = add.json();
    let id = job["id"].as_str().unwrap().to_string();
    assert!(id.starts_with("rt-"), "{job}");
    assert_eq!(job["agent"], "bob");
    assert_eq!(job["source"], "runtime");
    assert_eq!(job["read_only"], false);
    assert_eq!(job["enabled"], true);
    assert_eq!(job["prompt"], "check the inbox");
    assert_eq!(job["last_run"], Value::Null);
    let next = times(&job["next_runs"]);
    assert_eq!(next.len(), 5);
    assert!(next.iter().all(|t| t.minute() % 5 == 0), "{next:?}");
    let human = warren(
        t.root(),
        &[
            "cron",
            "add",
            "--agent",
            "alice",
            "--schedule",
            "0 8 * * *",
            "--prompt",
            "morning",
        ],
    );
    assert_eq!(human.code, 0, "{}", human.stderr);
    assert!(
        human.stdout.contains("next runs (UTC):"),
        "{}",
        human.stdout
    );
    assert_eq!(
        human.stdout.matches("T08:00:00Z").count(),
        5,
        "{}",
        human.stdout
    );

    let all = warren(t.root(), &["--json", "cron", "list"]).json();
    assert_eq!(all.as_array().unwrap().len(), 3);
    let bobs = warren(t.root(), &["--json", "cron", "list", "--agent", "bob"]).json();
    assert_eq!(ids(&bobs), std::slice::from_ref(&id));
    let nobody = warren(t.root(), &["--json", "cron", "list", "--agent", "zed"]);
    assert_eq!(nobody.code, 1);
    assert_eq!(nobody.json()["error"]["code"], "not_found");

    // Edit: a new schedule shows its times; off has none; a bad edit changes nothing.
    let e = warren(
        t.root(),
        &["--json", "cron", "edit", &id, "--schedule", "30 12 * * *"],
    );
    assert_eq!(e.code, 0, "{}", e.stderr);
    let edited = e.json();
    assert_eq!(edited["schedule"], "30 12 * * *");
    assert_eq!(edited["prompt"], "check the inbox");
    assert!(times(&edited["next_runs"])
        .iter()
        .all(|t| t.hour() == 12 && t.minute() == 30));
    let bad = warren(
        t.root(),
        &["--json", "cron", "edit", &id, "--schedule", "* * 0 * *"],
    );
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.json()["error"]["message"]
        .as_str()
        .unwrap()
        .contains("day of month field"));
    let dry = warren(
        t.root(),
        &[
            "--json",
            "cron",
            "edit",
            &id,
            "--prompt",
            "new words",
            "--dry-run",
        ],
    );
    assert_eq!(dry.code, 0, "{}", dry.stderr);
    assert_eq!(dry.json()["job"]["prompt"], "new words");
    let off = warren(t.root(), &["--json", "cron", "edit", &id, "--disable"]).json();
    assert_eq!(off["enabled"], false);
    assert_eq!(off["next_runs"], serde_json::json!([]));
    assert_eq!(off["schedule"], "30 12 * * *");
    assert_eq!(
        off["prompt"], "check the inbox",
        "the dry run saved nothing"
    );
    let on = warren(t.root(), &["--json", "cron", "edit", &id, "--enable"]).json();
    assert_eq!(on["enabled"], true);

    // Config jobs are read-only; unknown ids are not found.
    for args in [
        vec!["cron", "edit", "nightly", "--disable"],
        vec!["cron", "rm", "nightly"],
    ] {
        let r = warren(t.root(), &[&["--json"][..], &args].concat());
        assert_eq!(r.code, 2, "{args:?}");
        assert!(r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("read-only"));
    }
    let r = warren(t.root(), &["--json", "cron", "rm", "rt-nope"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");

    // Remove.
    let rm = warren(t.root(), &["--json", "cron", "rm", &id]);
    assert_eq!(rm.code, 0, "{}", rm.stderr);
    assert_eq!(rm.json()["id"], id.as_str());
    let again = warren(t.root(), &["--json", "cron", "rm", &id]);
    assert_eq!(again.code, 1);
    assert_eq!(again.json()["error"]["code"], "not_found");
    assert!(!ids(&warren(t.root(), &["--json", "cron", "list"]).json()).contains(&id));
    assert_eq!(
        t.read_config().unwrap(),
        config_before,
        "config.toml untouched"
    );
    assert_eq!(fake.request_count(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_now_is_a_turn_with_trigger_cron_and_a_failure_exits_1() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::text("inbox checked"),
        Reply::error(500, "the model is down"),
    ]);
    let t = install(&fake, NIGHTLY);
    let add = warren(
        t.root(),
        &[
            "--json",
            "cron",
            "add",
            "--agent",
            "bob",
            "--schedule",
            "0 0 1 1 *",
            "--prompt",
            "check the inbox",
        ],
    );
    let id = add.json()["id"].as_str().unwrap().to_string();

    let run = warren(t.root(), &["--json", "cron", "run", &id]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = run.json();
    assert_eq!(r["job"], id.as_str());
    assert_eq!(r["status"], "completed");
    assert_eq!(r["error"], Value::Null);
    let turn = r["turn_id"].as_str().unwrap().to_string();
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].body.to_string().contains("check the inbox"));

    // The turn is bob's, with trigger `cron`; the job's last run is it.
    let sessions = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        t.root().join("data/sessions.db").display()
    ))
    .await
    .unwrap();
    let (trigger, status): (String, String) =
        sqlx::query_as("SELECT trigger, status FROM turns WHERE id = ?")
            .bind(&turn)
            .fetch_one(&sessions)
            .await
            .unwrap();
    assert_eq!((trigger.as_str(), status.as_str()), ("cron", "completed"));
    let list = warren(t.root(), &["--json", "cron", "list", "--agent", "bob"]).json();
    assert_eq!(list[0]["last_run"]["turn_id"], turn.as_str());

    // A config job runs now too; this one fails: exit 1, the run says why.
    let failed = warren(t.root(), &["--json", "cron", "run", "nightly"]);
    assert_eq!(failed.code, 1, "{}", failed.stderr);
    let f = failed.json();
    assert_eq!(f["job"], "nightly");
    assert_eq!(f["status"], "failed");
    assert!(f["error"].as_str().unwrap().contains("500"), "{f}");

    let missing = warren(t.root(), &["--json", "cron", "run", "rt-nope"]);
    assert_eq!(missing.code, 1);
    assert_eq!(missing.json()["error"]["code"], "not_found");
    fake.acknowledge_failures();
}

/// A second `warren serve` on the same install is refused, naming the first, and no slot of
/// an every-second job runs twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_serve_is_refused_and_each_slot_runs_once() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script((0..40).map(|i| Reply::text(&format!("tick {i}"))));
    let t = install(
        &fake,
        "[cron.tick]\nagent = \"alice\"\nschedule = \"* * * * * *\"\nprompt = \"tick\"\n",
    );
    let mut first = tokio::process::Command::from(warren_cmd(t.root()));
    let mut first = first
        .arg("serve")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut err = BufReader::new(first.stderr.take().unwrap()).lines();
    let ready = tokio::time::timeout(WAIT, err.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(ready.contains("ready"), "{ready}");
    let pid = first.id().unwrap();
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(t.root().join("data/runtime.lock")).unwrap())
            .unwrap();
    assert_eq!(record["pid"], pid);
    assert_eq!(record["program"], "warren serve");

    // The second one says who holds the runtime and exits 1 at once.
    let mut second = tokio::process::Command::from(warren_cmd(t.root()));
    let second = tokio::time::timeout(WAIT, second.args(["--json", "serve"]).output())
        .await
        .expect("the second serve exits instead of serving")
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(
        stderr.contains(&format!("already run by warren serve (pid {pid}")),
        "{stderr}"
    );
    let out: Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(out["error"]["code"], "runtime_owned");

    // Let the first one run a few slots, then stop it.
    assert!(fake.wait_for_requests(3, WAIT).await, "the job ran");
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap()
        .success());
    let status = tokio::time::timeout(WAIT, first.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));

    let cron = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        t.root().join("data/cron.db").display()
    ))
    .await
    .unwrap();
    let slots: Vec<String> = sqlx::query_scalar(
        "SELECT scheduled_for FROM runs WHERE job = 'tick' AND status != 'skipped' ORDER BY id",
    )
    .fetch_all(&cron)
    .await
    .unwrap();
    assert!(slots.len() >= 3, "{slots:?}");
    let mut unique = slots.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), slots.len(), "a slot ran twice: {slots:?}");
    // No model call beyond one per recorded run: nobody else ran the job.
    assert!(
        fake.request_count() <= slots.len(),
        "{} calls",
        fake.request_count()
    );
    // The lock is free again.
    let r = warren(t.root(), &["--json", "cron", "list"]);
    assert_eq!(r.code, 0);
    fake.acknowledge_failures();
}
