//! `warren providers list | add | test | rm` as a black box against a fake OpenAI-compatible
//! server: the key goes to the secret store (never into config.toml) and reaches the vendor;
//! a vendor error is reported in plain words; bad input changes nothing.

use crate::common::{warren, warren_cmd, Run};
use std::io::Write;
use std::process::Stdio;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

const CONFIG: &str = "# my install\n[risk_profiles.p]\n\n[agents.alice]\nrisk_profile = \"p\"\n";

fn add_with_key(t: &TestInstall, args: &[&str], key: &str) -> Run {
    let mut child = warren_cmd(t.root())
        .env("WARREN_SECRET_BACKEND", "file")
        .args(["--json", "providers", "add"])
        .args(args)
        .arg("--key-stdin")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{key}\n").as_bytes())
        .unwrap();
    child.wait_with_output().unwrap().into()
}

fn run_file(t: &TestInstall, args: &[&str]) -> Run {
    warren_cmd(t.root())
        .env("WARREN_SECRET_BACKEND", "file")
        .args(args)
        .output()
        .unwrap()
        .into()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_added_with_its_key_is_tested_listed_and_removed() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    tokio::task::spawn_blocking(move || {
        a_route_added_with_its_key_is_tested_listed_and_removed_with(fake);
    })
    .await
    .unwrap();
}

fn a_route_added_with_its_key_is_tested_listed_and_removed_with(fake: FakeLlm) {
    fake.script([
        Reply::text("ok"),
        Reply::error(401, "Incorrect API key provided"),
    ]);
    let t = TestInstall::with_config(CONFIG).unwrap();
    let key = "sk-test-0123456789-never-in-config";
    let r = add_with_key(
        &t,
        &[
            "openai.local",
            "--model",
            "tiny",
            "--uri",
            &fake.uri(),
            "--timeout-secs",
            "20",
        ],
        key,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["reference"], "openai.local");
    assert_eq!(v["key_set"], true);
    assert_eq!(v["store"], "file");
    assert_eq!(v["secret"], "OPENAI_LOCAL_API_KEY");
    let text = t.read_config().unwrap();
    assert!(
        !text.contains(key),
        "the key never goes into config.toml:\n{text}"
    );
    assert!(text.contains("secret = \"OPENAI_LOCAL_API_KEY\""), "{text}");
    assert!(text.contains("# my install"), "{text}");

    let r = run_file(&t, &["--json", "providers", "test", "openai.local"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    let v = r.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["answer"], "ok");
    assert_eq!(v["model"], "tiny");
    let req = &fake.requests()[0];
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );

    // The vendor refuses: the answer says so in plain words, with its message, exit 1.
    let r = run_file(&t, &["--json", "providers", "test", "openai.local"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    let v = r.json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error_code"], "provider_http");
    let msg = v["error"].as_str().unwrap();
    assert!(msg.contains("refused the API key"), "{msg}");
    assert!(msg.contains("Incorrect API key provided"), "{msg}");

    let list = run_file(&t, &["--json", "providers", "list"]).json();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert_eq!(list[0]["reference"], "openai.local");

    // In use by an agent: refused, naming the user; then removed once unused.
    let r = warren(
        t.root(),
        &["agents", "set", "alice", "model_provider", "openai.local"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_file(&t, &["--json", "providers", "rm", "openai.local"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "denied");
    assert!(
        r.stderr.contains("agents.alice.model_provider"),
        "{}",
        r.stderr
    );
    let r = warren(
        t.root(),
        &["agents", "set", "alice", "model_provider", "--unset"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_file(&t, &["providers", "rm", "openai.local"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!t.read_config().unwrap().contains("openai.local"));
    assert!(!t
        .read_config()
        .unwrap()
        .contains("[providers.models.openai.local]"));
}

#[test]
fn bad_routes_are_refused_and_store_nothing() {
    let t = TestInstall::with_config(CONFIG).unwrap();
    let before = std::fs::read(t.config_path()).unwrap();
    for (args, says) in [
        (
            vec!["mistral.main", "--model", "m"],
            "unknown provider family `mistral`",
        ),
        (vec!["openai", "--model", "m"], "not a `family.alias` route"),
        (vec!["openai.new"], "needs a model"),
        (
            vec!["openai.main", "--model", "m", "--fallbacks", "ollama.ghost"],
            "providers.models.openai.main.fallbacks",
        ),
    ] {
        let r = add_with_key(&t, &args, "sk-should-not-be-stored");
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(
            r.stderr.contains(says),
            "{args:?} should say {says}: {}",
            r.stderr
        );
        assert_eq!(std::fs::read(t.config_path()).unwrap(), before, "{args:?}");
    }
    let secrets = run_file(&t, &["--json", "secrets", "list"]).json();
    assert_eq!(
        secrets,
        serde_json::json!([]),
        "no key stored for a refused route"
    );
    let r = run_file(&t, &["--json", "providers", "test", "openai.nowhere"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_lists_the_vendors_own_list_with_the_stored_key() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    tokio::task::spawn_blocking(move || models_with(fake))
        .await
        .unwrap();
}

fn models_with(fake: FakeLlm) {
    fake.set_models(["tiny-b", "tiny-a"]);
    let t = TestInstall::with_config(CONFIG).unwrap();
    let key = "sk-models-0123456789-never-shown";
    let r = add_with_key(
        &t,
        &["openai.local", "--model", "tiny-a", "--uri", &fake.uri()],
        key,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);

    let r = run_file(&t, &["--json", "providers", "models", "openai.local"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.stdout);
    let v = r.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["url"], format!("{}/models", fake.uri()));
    let ids: Vec<&str> = v["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["tiny-a", "tiny-b"]);
    let req = &fake.requests()[0];
    assert_eq!(
        (req.method.as_str(), req.path.as_str()),
        ("GET", "/v1/models")
    );
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );

    // Human output: one model a line, the id first.
    let r = run_file(&t, &["providers", "models", "openai.local"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("tiny-a"), "{}", r.stdout);
    assert!(lines[1].starts_with("tiny-b"), "{}", r.stdout);

    // The vendor refuses the key (and echoes it): exit 1, in words, the key not shown.
    fake.refuse_models(401, &format!("Incorrect API key provided: {key}"));
    let r = run_file(&t, &["providers", "models", "openai.local"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("refused the API key"), "{}", r.stderr);
    assert!(r.stderr.contains("HTTP 401"), "{}", r.stderr);
    assert!(!r.stderr.contains(key), "the key leaked: {}", r.stderr);
    assert!(!r.stdout.contains(key));
    let r = run_file(&t, &["--json", "providers", "models", "openai.local"]);
    assert_eq!(r.code, 1);
    let v = r.json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error_code"], "provider_http");
    assert!(!r.stdout.contains(key), "{}", r.stdout);

    let r = run_file(&t, &["--json", "providers", "models", "openai.nowhere"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");
}
