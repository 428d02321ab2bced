//! `warren secrets` and `warren receipts verify` as a black box.

use crate::common::{set_secret, warren, warren_cmd};
use std::io::Write;
use std::process::Stdio;
use warren_testkit::{config_with_agents, TestInstall};

#[test]
fn secrets_set_list_rm_never_print_values() {
    let t = TestInstall::with_config(&config_with_agents(&["bob"])).unwrap();
    let r = set_secret(&t, &["OPENAI_API_KEY"], "sk-very-secret\n");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stdout.contains("sk-very-secret") && !r.stderr.contains("sk-very-secret"));
    let r = set_secret(&t, &["OPENAI_API_KEY", "--agent", "bob"], "sk-bob");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = set_secret(&t, &["X", "--agent", "ghost"], "v");
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("agent `ghost` does not exist"));
    // The `agent:<alias>/NAME` spelling names an agent too.
    let r = set_secret(&t, &["agent:ghost/X"], "v");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("agent `ghost` does not exist"));
    let r = set_secret(&t, &["bad name"], "v");
    assert_eq!(r.code, 2);

    let list = warren(t.root(), &["--json", "secrets", "list"]).json();
    let refs: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["reference"].as_str().unwrap())
        .collect();
    assert_eq!(refs, ["OPENAI_API_KEY", "agent:bob/OPENAI_API_KEY"]);
    let text = warren(t.root(), &["secrets", "list"]).stdout;
    assert!(!text.contains("sk-"));
    let enc = std::fs::read(t.root().join("data/secrets.enc")).unwrap();
    assert!(!String::from_utf8_lossy(&enc).contains("sk-very-secret"));

    assert_eq!(
        warren(t.root(), &["secrets", "rm", "OPENAI_API_KEY"]).code,
        0
    );
    let r = warren(t.root(), &["--json", "secrets", "rm", "OPENAI_API_KEY"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");
}

#[test]
fn receipts_verify_detects_an_edited_record() {
    let t = TestInstall::with_config(&config_with_agents(&["alice"])).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pool = rt.block_on(async {
        let pool = warren_state::db::open_sessions_db(&t.layout().sessions_db())
            .await
            .unwrap();
        let store = warren_state::secrets::FileSecretStore::for_install(&t.layout());
        let log = warren_state::receipts::ReceiptLog::new(pool.clone(), &store).unwrap();
        for i in 0..3 {
            log.append("alice", "file_read", &serde_json::json!({"path": i}), "x")
                .await
                .unwrap();
        }
        pool
    });
    let r = warren(t.root(), &["receipts", "verify", "--agent", "alice"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("3 checked, chain intact"));
    rt.block_on(async {
        sqlx::query("UPDATE receipts SET tool = 'shell' WHERE seq = 2")
            .execute(&pool)
            .await
            .unwrap();
    });
    let r = warren(t.root(), &["receipts", "verify", "--agent", "alice"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("receipt #2"), "{}", r.stderr);
    let v = warren(
        t.root(),
        &["--json", "receipts", "verify", "--agent", "alice"],
    )
    .json();
    assert_eq!(v["ok"], false);
}

#[test]
fn secrets_go_to_the_desktop_keyring_when_one_answers() {
    let kr = warren_testkit::keyring::TestKeyring::start().unwrap();
    let t = TestInstall::with_config(&config_with_agents(&["bob"])).unwrap();
    let with_bus = |args: &[&str], stdin: Option<&str>| -> crate::common::Run {
        let mut c = warren_cmd(t.root());
        c.env("DBUS_SESSION_BUS_ADDRESS", kr.address())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let mut input = child.stdin.take().unwrap();
        if let Some(v) = stdin {
            input.write_all(v.as_bytes()).unwrap();
        }
        drop(input);
        child.wait_with_output().unwrap().into()
    };
    let r = with_bus(
        &["secrets", "set", "OPENAI_API_KEY", "--agent", "bob"],
        Some("sk-kr"),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("desktop keyring"), "{}", r.stdout);
    assert!(!t.root().join("data/secrets.enc").exists());

    let list = with_bus(&["--json", "secrets", "list"], None).json();
    assert_eq!(list[0]["reference"], "agent:bob/OPENAI_API_KEY");
    assert_eq!(list[0]["store"], "keyring");
    let doctor = with_bus(&["--json", "doctor"], None).json();
    assert!(
        doctor["secrets"]
            .as_str()
            .unwrap()
            .contains("desktop keyring"),
        "{doctor}"
    );

    // Without the session bus the keyring's secrets are not visible, and forcing it is an error
    // naming the cause.
    let r = warren(t.root(), &["--json", "secrets", "list"]);
    assert_eq!(r.json().as_array().unwrap().len(), 0);
    let r = warren_cmd(t.root())
        .env("WARREN_SECRET_BACKEND", "keyring")
        .args(["secrets", "list"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("WARREN_SECRET_BACKEND=keyring"), "{err}");

    let r = with_bus(&["secrets", "rm", "OPENAI_API_KEY", "--agent", "bob"], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let list = with_bus(&["--json", "secrets", "list"], None).json();
    assert!(list.as_array().unwrap().is_empty());
}
