//! `warren agents rename | delete | archives | restore` as a black box: JSON shape, dry runs,
//! confirmation, blockers, exit codes, and files on disk.

use crate::common::warren;
use std::fs;
use warren_testkit::TestInstall;

const CONFIG: &str = r#"schema_version = 1

[risk_profiles.p]
level = "supervised"

# The researcher.
[agents.alice]
risk_profile = "p"
delegates = ["bob"]

[agents.bob]
risk_profile = "p"
delegates = ["alice"]

[agents.bob.workspace]
read_memory_from = ["alice"]

[agents.bob.workspace.access]
alice = "read" # research notes

# Morning digest.
[cron.digest]
agent = "alice"
schedule = "0 7 * * *"
prompt = "digest"
"#;

fn install() -> TestInstall {
    let t = TestInstall::with_config(CONFIG).unwrap();
    for a in ["alice", "bob"] {
        let ws = t.layout().default_workspace(a);
        fs::create_dir_all(&ws).unwrap();
        fs::write(ws.join("notes.md"), format!("{a}'s notes\n")).unwrap();
    }
    t
}

#[test]
fn rename_dry_run_then_rename_with_json() {
    let t = install();
    let r = warren(
        t.root(),
        &["--json", "agents", "rename", "alice", "ann", "--dry-run"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["dry_run"], true);
    let refs: Vec<&str> = v["plan"]["references"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        refs,
        [
            "agents.bob.delegates[0]",
            "agents.bob.workspace.access.alice",
            "agents.bob.workspace.read_memory_from[0]",
            "cron.digest.agent"
        ]
    );
    assert_eq!(
        t.read_config().unwrap(),
        CONFIG,
        "a dry run changes nothing"
    );

    let r = warren(t.root(), &["--json", "agents", "rename", "alice", "ann"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["ok"], true);
    assert_eq!(v["warnings"].as_array().unwrap().len(), 0);
    let text = t.read_config().unwrap();
    assert!(!text.contains("alice"), "{text}");
    assert!(text.contains("# The researcher.\n[agents.ann]"), "{text}");
    assert!(text.contains("ann = \"read\" # research notes"), "{text}");
    assert_eq!(
        fs::read_to_string(t.layout().default_workspace("ann").join("notes.md")).unwrap(),
        "alice's notes\n"
    );
    assert!(!t.root().join("agents/alice").exists());
    let r = warren(t.root(), &["agents", "list"]);
    assert!(
        r.stdout.contains("ann") && !r.stdout.contains("alice"),
        "{}",
        r.stdout
    );
}

#[test]
fn rename_errors_have_codes() {
    let t = install();
    let r = warren(
        t.root(),
        &["--json", "agents", "rename", "alice", "Bad_Name"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.json()["error"]["code"], "invalid_argument");
    assert!(r.stderr.contains("`Bad_Name`"), "{}", r.stderr);
    let r = warren(t.root(), &["--json", "agents", "rename", "alice", "bob"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "already_exists");
    let r = warren(t.root(), &["agents", "rename", "zed", "zoe"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("agent `zed` does not exist"),
        "{}",
        r.stderr
    );
    assert_eq!(t.read_config().unwrap(), CONFIG);
}

#[test]
fn delete_needs_yes_without_a_terminal_and_lists_blockers() {
    let t = install();
    let r = warren(t.root(), &["agents", "delete", "bob"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("without --yes"), "{}", r.stderr);
    assert_eq!(t.read_config().unwrap(), CONFIG);

    let r = warren(t.root(), &["--json", "agents", "delete", "alice", "--yes"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["error"]["code"], "denied");
    assert!(
        v["error"]["details"][0]
            .as_str()
            .unwrap()
            .contains("cron.digest.agent"),
        "{v}"
    );
    let r = warren(t.root(), &["agents", "delete", "alice", "--dry-run"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("BLOCKED by cron.digest.agent"),
        "{}",
        r.stdout
    );
    assert_eq!(t.read_config().unwrap(), CONFIG);
}

#[test]
fn delete_archives_restore_round_trip() {
    let t = install();
    // The plan does not invent the archive's name: it is the time the delete runs.
    let r = warren(
        t.root(),
        &["--json", "agents", "delete", "bob", "--dry-run"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let planned = r.json()["plan"]["archive"].as_str().unwrap().to_string();
    assert!(planned.ends_with("bob-<time of the delete>"), "{planned}");
    let r = warren(t.root(), &["agents", "delete", "bob", "--dry-run"]);
    assert!(
        !r.stdout.contains(": 0\n"),
        "counts of nothing are not listed:\n{}",
        r.stdout
    );
    let r = warren(t.root(), &["--json", "agents", "delete", "bob", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["ok"], true);
    let archive = std::path::PathBuf::from(v["archive"].as_str().unwrap());
    assert!(archive.starts_with(t.layout().deleted_dir()));
    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("bob-") && name.ends_with('Z'), "{name}");
    for f in [
        "manifest.json",
        "config-entry.toml",
        "workspace/notes.md",
        "cascade/memory.json",
        "cascade/sessions.json",
        "cascade/usage.json",
        "cascade/receipts.json",
        "cascade/cron.json",
    ] {
        assert!(archive.join(f).exists(), "{f} missing");
    }
    let entry = fs::read_to_string(archive.join("config-entry.toml")).unwrap();
    assert!(
        entry.contains("alice = \"read\" # research notes"),
        "{entry}"
    );
    let text = t.read_config().unwrap();
    assert!(!text.contains("bob"), "{text}");

    let r = warren(t.root(), &["--json", "agents", "archives"]);
    assert_eq!(r.code, 0);
    let list = r.json();
    assert_eq!(list[0]["name"], name.as_str());
    assert_eq!(list[0]["alias"], "bob");
    assert!(
        list[0]["exported"]
            .as_array()
            .is_some_and(|e| !e.is_empty()),
        "{list}"
    );
    assert!(
        list[0]["grants"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == "agents.alice.delegates includes `bob`"),
        "{list}"
    );
    let r = warren(t.root(), &["agents", "archives"]);
    assert!(r.stdout.contains(&name), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("grant put back on restore: agents.alice.delegates includes `bob`"),
        "{}",
        r.stdout
    );

    let r = warren(
        t.root(),
        &["agents", "create", "bob", "--risk-profile", "p"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = warren(t.root(), &["--json", "agents", "restore", &name]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "already_exists");
    let r = warren(
        t.root(),
        &["--json", "agents", "restore", &name, "--as", "bert"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["ok"], true);
    assert_eq!(
        fs::read_to_string(t.layout().default_workspace("bert").join("notes.md")).unwrap(),
        "bob's notes\n"
    );
    let text = t.read_config().unwrap();
    assert!(text.contains("[agents.bert]"), "{text}");
    assert!(text.contains("alice = \"read\" # research notes"), "{text}");
    // alice's grant on bob came back, on bob's new name.
    assert!(text.contains("delegates = [\"bert\"]"), "{text}");
    // The delete and the restore are in the logs, under the agent.
    let r = warren(t.root(), &["--json", "logs", "--agent", "bob"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines = r.json().to_string();
    assert!(lines.contains("agent deleted"), "{lines}");
    let r = warren(t.root(), &["--json", "logs", "--agent", "bert"]);
    let lines = r.json().to_string();
    assert!(lines.contains("agent restored"), "{lines}");
    assert!(
        !archive.exists(),
        "the archive is removed after a complete restore"
    );
    let r = warren(t.root(), &["--json", "agents", "restore", &name]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");
}

#[test]
fn an_interrupted_delete_is_finished_by_running_the_command_again() {
    use std::sync::Arc;
    use warren_runtime::host::Host;
    use warren_runtime::lifecycle::{InterruptAfter, Lifecycle, LifecycleError, RunOptions};
    let t = install();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let host = Arc::new(Host::open(t.layout(), Default::default()).await.unwrap());
        let lc = Lifecycle::for_host(host).with_hook(Arc::new(InterruptAfter::new(4)));
        let opts = RunOptions {
            dry_run: false,
            force: false,
        };
        let err = lc.delete("bob", opts).await.unwrap_err();
        assert!(matches!(err, LifecycleError::Interrupted { .. }), "{err}");
    });
    let journal: Vec<_> = fs::read_dir(t.layout().journal_dir()).unwrap().collect();
    assert_eq!(journal.len(), 1, "the interrupted delete is journaled");
    assert!(!t.read_config().unwrap().contains("[agents.bob]"));
    let r = warren(t.root(), &["agents", "archives"]);
    assert!(r.stdout.contains("a delete in progress"), "{}", r.stdout);

    let r = warren(t.root(), &["--json", "agents", "delete", "bob", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["plan"]["resumed"], true, "{v}");
    let archive = std::path::PathBuf::from(v["archive"].as_str().unwrap());
    assert!(archive.join("manifest.json").exists());
    assert!(archive.join("workspace/notes.md").exists());
    assert_eq!(fs::read_dir(t.layout().journal_dir()).unwrap().count(), 0);
}

/// `agents unfinished` lists an interrupted rename with how to finish it; `--finish` finishes it
/// (the window's Resume button), after which nothing is listed and the agent answers to its new
/// alias only.
#[test]
fn an_interrupted_rename_is_listed_and_finished_by_agents_unfinished() {
    use std::sync::Arc;
    use warren_runtime::host::Host;
    use warren_runtime::lifecycle::{InterruptAfter, Lifecycle, LifecycleError, RunOptions};
    let t = install();
    let r = warren(t.root(), &["--json", "agents", "unfinished"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json(), serde_json::json!([]));
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let host = Arc::new(Host::open(t.layout(), Default::default()).await.unwrap());
        let lc = Lifecycle::for_host(host).with_hook(Arc::new(InterruptAfter::new(2)));
        let opts = RunOptions {
            dry_run: false,
            force: false,
        };
        let err = lc.rename("alice", "ann", opts).await.unwrap_err();
        assert!(matches!(err, LifecycleError::Interrupted { .. }), "{err}");
    });

    let r = warren(t.root(), &["--json", "agents", "unfinished"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let list = r.json();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["kind"], "rename", "{list}");
    assert_eq!(
        list[0]["aliases"],
        serde_json::json!(["alice", "ann"]),
        "{list}"
    );
    assert!(
        list[0]["hint"]
            .as_str()
            .unwrap()
            .contains("warren agents rename alice ann"),
        "{list}"
    );
    let text = warren(t.root(), &["agents", "unfinished"]);
    assert!(text.stdout.contains("to finish:"), "{}", text.stdout);

    let r = warren(t.root(), &["--json", "agents", "unfinished", "--finish"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let done = r.json();
    assert_eq!(done.as_array().unwrap().len(), 1, "{done}");
    assert_eq!(done[0]["ok"], true, "{done}");
    assert_eq!(fs::read_dir(t.layout().journal_dir()).unwrap().count(), 0);
    assert_eq!(
        fs::read_to_string(t.layout().default_workspace("ann").join("notes.md")).unwrap(),
        "alice's notes\n"
    );
    let config = t.read_config().unwrap();
    assert!(
        config.contains("[agents.ann]") && !config.contains("[agents.alice]"),
        "{config}"
    );
    let r = warren(t.root(), &["agents", "unfinished", "--finish"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.contains("no unfinished operations"),
        "{}",
        r.stdout
    );
}

/// An agent's own secrets follow it: a rename moves them (and the provider entry that uses one),
/// a delete archives them sealed (never in plain text) and removes them, a restore brings them
/// back under the restored alias.
#[test]
fn agent_secrets_follow_rename_delete_and_restore() {
    let without_cron = CONFIG.split("# Morning digest.").next().unwrap();
    let t = TestInstall::with_config(&format!(
        "{without_cron}
[providers.models.openai.main]
model = \"gpt-test\"
secret = \"agent:alice/OPENAI_KEY\" # alice's own key
"
    ))
    .unwrap();
    let set = |args: &[&str], value: &str| {
        let r = crate::common::set_secret(&t, args, value);
        assert_eq!(r.code, 0, "{}", r.stderr);
    };
    set(&["OPENAI_KEY", "--agent", "alice"], "sk-alice-secret-value");
    set(&["SEARCH_TOKEN", "--agent", "alice"], "tok-alice");
    set(&["OPENAI_KEY", "--agent", "bob"], "sk-bob");
    let refs = |t: &TestInstall| -> Vec<String> {
        warren(t.root(), &["--json", "secrets", "list"])
            .json()
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["reference"].as_str().unwrap().to_string())
            .collect()
    };

    let r = warren(t.root(), &["--json", "agents", "rename", "alice", "ann"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        refs(&t),
        [
            "agent:ann/OPENAI_KEY",
            "agent:ann/SEARCH_TOKEN",
            "agent:bob/OPENAI_KEY"
        ]
    );
    let text = t.read_config().unwrap();
    assert!(
        text.contains("secret = \"agent:ann/OPENAI_KEY\" # alice's own key"),
        "{text}"
    );

    let r = warren(t.root(), &["--json", "agents", "delete", "ann", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let archive = std::path::PathBuf::from(r.json()["archive"].as_str().unwrap());
    let exported = fs::read_to_string(archive.join("cascade/secrets.json")).unwrap();
    assert!(exported.contains("OPENAI_KEY") && exported.contains("SEARCH_TOKEN"));
    assert!(
        !exported.contains("sk-alice-secret-value") && !exported.contains("tok-alice"),
        "secret values in plain text: {exported}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(archive.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["exported"]["secrets"], 2);
    assert_eq!(manifest["purged"]["secrets"], 2);
    assert_eq!(refs(&t), ["agent:bob/OPENAI_KEY"]);

    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    let r = warren(
        t.root(),
        &["--json", "agents", "restore", &name, "--as", "cleo"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        refs(&t),
        [
            "agent:bob/OPENAI_KEY",
            "agent:cleo/OPENAI_KEY",
            "agent:cleo/SEARCH_TOKEN"
        ]
    );
    // The values came back intact.
    let store = warren_state::secrets::FileSecretStore::for_install(&t.layout());
    use warren_state::secrets::SecretStore;
    let key = warren_state::secrets::SecretRef::parse("agent:cleo/OPENAI_KEY").unwrap();
    assert_eq!(
        store.get(&key).unwrap().as_deref(),
        Some("sk-alice-secret-value")
    );
}

/// `warren agents pause | resume`, and the pause following the agent through rename, delete
/// and restore.
#[test]
fn pause_follows_the_agent_through_rename_delete_and_restore() {
    let t = TestInstall::with_config(CONFIG.split("# Morning digest.").next().unwrap()).unwrap();
    let paused = |t: &TestInstall| -> Vec<String> {
        match fs::read(t.layout().paused_path()) {
            Ok(b) => serde_json::from_slice(&b).unwrap(),
            Err(_) => Vec::new(),
        }
    };
    let r = warren(t.root(), &["--json", "agents", "pause", "alice"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json(), serde_json::json!(["alice"]));
    let r = warren(t.root(), &["--json", "agents", "pause", "ghost"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.json()["error"]["code"], "not_found");
    let r = warren(t.root(), &["agents", "pause"]);
    assert_eq!(r.code, 2, "an alias or --all is required");

    let r = warren(t.root(), &["--json", "agents", "rename", "alice", "ann"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(paused(&t), ["ann"]);

    let r = warren(t.root(), &["--json", "agents", "delete", "ann", "--yes"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let archive = std::path::PathBuf::from(r.json()["archive"].as_str().unwrap());
    assert!(paused(&t).is_empty(), "a new `ann` must not start paused");
    let r = warren(
        t.root(),
        &["agents", "create", "ann", "--risk-profile", "p"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(paused(&t).is_empty());

    let name = archive.file_name().unwrap().to_string_lossy().into_owned();
    let r = warren(
        t.root(),
        &["--json", "agents", "restore", &name, "--as", "alice"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(paused(&t), ["alice"]);

    let r = warren(t.root(), &["--json", "agents", "pause", "--all"]);
    assert_eq!(r.json(), serde_json::json!(["alice", "ann", "bob"]));
    let r = warren(t.root(), &["--json", "agents", "resume", "--all"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(paused(&t).is_empty());
}

#[test]
fn an_unfinished_rename_blocks_create_and_turns_until_a_start_finishes_it() {
    let t = install();
    // The memory store fails for real: its database path is a directory.
    let db = t.layout().memory_db();
    fs::create_dir_all(db.join("not-a-database")).unwrap();
    let r = warren(t.root(), &["--json", "agents", "rename", "alice", "ann"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.json()["ok"], false);
    assert!(
        r.stderr.contains("warren agents rename alice ann"),
        "{}",
        r.stderr
    );
    let create = ["--json", "agents", "create", "alice", "--risk-profile", "p"];
    let r = warren(t.root(), &create);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.json()["error"]["code"], "lifecycle_pending");
    // `run` tries to finish it first; the store still fails, so the turn is refused.
    let r = warren(t.root(), &["--json", "run", "--agent", "ann", "hi"]);
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("unfinished rename alice → ann"),
        "{}",
        r.stderr
    );
    // Repaired: the next start finishes the rename before its turn.
    fs::remove_dir_all(&db).unwrap();
    let r = warren(t.root(), &["--json", "run", "--agent", "ann", "hi"]);
    assert!(!r.stderr.contains("unfinished"), "{}", r.stderr);
    assert!(t
        .layout()
        .default_workspace("ann")
        .join("notes.md")
        .is_file());
    let r = warren(t.root(), &create);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

#[test]
fn create_refuses_a_left_over_workspace_unless_adopted() {
    let t = install();
    let folder = t.layout().default_workspace("zed");
    fs::create_dir_all(&folder).unwrap();
    fs::write(folder.join("old.txt"), "left behind").unwrap();
    let create = ["--json", "agents", "create", "zed", "--risk-profile", "p"];
    let r = warren(t.root(), &create);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.json()["error"]["code"], "already_exists");
    assert!(r.stderr.contains("--adopt-workspace"), "{}", r.stderr);
    let mut adopt = create.to_vec();
    adopt.push("--adopt-workspace");
    let r = warren(t.root(), &adopt);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        fs::read_to_string(folder.join("old.txt")).unwrap(),
        "left behind"
    );
}
