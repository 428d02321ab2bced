//! `warren sessions list` against turns run by `warren run` on a fake OpenAI server.

use crate::common::warren;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_list_shows_each_session_with_its_turns_newest_first() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([Reply::text("one"), Reply::text("two"), Reply::text("three")]);
    let t = TestInstall::with_config(&format!(
        "[risk_profiles.sup]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"sup\"\nmodel_provider = \"openai.main\"\n\n[agents.bob]\nrisk_profile = \"sup\"\nmodel_provider = \"openai.main\"\n\n{}",
        fake.config_block("main")
    ))
    .unwrap();
    let root = t.root().to_path_buf();
    tokio::task::spawn_blocking(move || {
        let run = |args: &[&str]| {
            let r = warren(&root, args);
            assert_eq!(r.code, 0, "{args:?}: {}", r.stderr);
            r
        };
        let empty = run(&["sessions", "list", "--agent", "alice"]);
        assert_eq!(empty.stdout.trim(), "no sessions stored");

        let first = run(&["--json", "run", "--agent", "alice", "first\nquestion"]);
        let session = first
            .stdout
            .lines()
            .find_map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).ok()?;
                (v["type"] == "turn_started").then(|| v["session_id"].as_str().unwrap().to_string())
            })
            .expect("a turn_started event");
        run(&["run", "--agent", "alice", "--session", &session, "second"]);
        run(&["run", "--agent", "alice", "a new chat"]);

        let listed = run(&["--json", "sessions", "list", "--agent", "alice"]).json();
        let rows: Vec<(String, String, u64, String)> = listed
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["title"].as_str().unwrap().to_string(),
                    s["kind"].as_str().unwrap().to_string(),
                    s["turns"].as_u64().unwrap(),
                    s["agent"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("a new chat".into(), "chat".into(), 1, "alice".into()),
                ("first question".into(), "chat".into(), 2, "alice".into()),
            ]
        );
        assert_eq!(listed[1]["id"], session.as_str());
        assert!(
            listed[0]["last_activity"].as_str().unwrap()
                >= listed[1]["last_activity"].as_str().unwrap()
        );

        // The human table names the same sessions; another agent has none; an unknown agent is
        // not found (exit 1, its name in the message).
        let human = run(&["sessions", "list", "--agent", "alice"]).stdout;
        assert!(human.starts_with("ID "), "{human}");
        assert!(
            human.contains(&session) && human.contains("first question"),
            "{human}"
        );
        assert_eq!(
            run(&["--json", "sessions", "list", "--agent", "bob"]).json(),
            serde_json::json!([])
        );
        assert_eq!(
            run(&["--json", "sessions", "list"])
                .json()
                .as_array()
                .unwrap()
                .len(),
            2
        );
        let ghost = warren(&root, &["--json", "sessions", "list", "--agent", "ghost"]);
        assert_eq!(ghost.code, 1, "{}", ghost.stdout);
        assert_eq!(ghost.json()["error"]["code"], "not_found");
        assert!(ghost.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`ghost`"));
    })
    .await
    .unwrap();
}
