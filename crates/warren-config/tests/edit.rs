//! Comment-preserving edits and interrupted saves.

use std::fs;
use warren_config::{ConfigDocument, ConfigError, ConfigStore, NewAgent, SaveStep};
use warren_testkit::TestInstall;

const HAND_WRITTEN: &str = r#"# My Warren config — hand written.
schema_version = 1   # keep this

# Profiles first
[risk_profiles.p]
level = "supervised"   # supervised is fine
allowed_commands = [
  "ls",   # listing
  "cat",
]

[agents.alice]
# Alice does research
risk_profile = "p"

[agents.alice.workspace.access]
bob = "read"   # alice may read bob

[agents.bob]
risk_profile = "p"   # bob too

# An unknown section from a newer Warren or another tool: must survive.
[x_custom_plugin]
answer = 42
nested = { a = 1, b = "two" }

# Trailing comment at the end of the file.
"#;

fn new_agent(alias: &str) -> NewAgent {
    NewAgent {
        alias: alias.into(),
        risk_profile: "p".into(),
        ..NewAgent::default()
    }
}

#[test]
fn add_agent_keeps_every_other_byte() {
    let mut doc = ConfigDocument::parse(HAND_WRITTEN).unwrap();
    doc.add_agent(&new_agent("carol")).unwrap();
    let out = doc.to_string();
    let block = "\n[agents.carol]\nrisk_profile = \"p\"\n";
    let at = out.find(block).expect("new table present");
    // Removing the inserted table gives back the original file byte for byte.
    let without = format!("{}{}", &out[..at], &out[at + block.len()..]);
    assert_eq!(without, HAND_WRITTEN);
    // And it sits after the last agent, before the unknown section.
    assert!(at > out.find("[agents.bob]").unwrap());
    assert!(at < out.find("[x_custom_plugin]").unwrap());
}

#[test]
fn store_edit_saves_valid_result_atomically() {
    let t = TestInstall::with_config(HAND_WRITTEN).unwrap();
    let store = ConfigStore::new(t.layout());
    let ((), cfg) = store
        .edit(|doc, _| doc.add_agent(&new_agent("carol")).map_err(Into::into))
        .unwrap();
    assert!(cfg.agents.contains_key("carol"));
    let text = t.read_config().unwrap();
    assert!(text.contains("# Trailing comment at the end of the file."));
    assert!(text.contains("bob = \"read\"   # alice may read bob"));
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(t.config_path()).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn invalid_result_is_never_saved() {
    let t = TestInstall::with_config(HAND_WRITTEN).unwrap();
    let store = ConfigStore::new(t.layout());
    let bad = NewAgent {
        alias: "carol".into(),
        risk_profile: "no_such_profile".into(),
        ..NewAgent::default()
    };
    let err = store
        .edit(|doc, _| doc.add_agent(&bad).map_err(Into::into))
        .unwrap_err();
    match err {
        ConfigError::Invalid { errors, .. } => {
            assert_eq!(errors.issues.len(), 1);
            assert_eq!(errors.issues[0].path, "agents.carol.risk_profile");
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(t.read_config().unwrap(), HAND_WRITTEN);
}

#[test]
fn interrupted_save_keeps_old_file() {
    for step in [
        SaveStep::CreateTemp,
        SaveStep::Write,
        SaveStep::Sync,
        SaveStep::Rename,
    ] {
        let t = TestInstall::with_config(HAND_WRITTEN).unwrap();
        let store = ConfigStore::with_fault(t.layout(), Box::new(step));
        let err = store
            .edit(|doc, _| doc.add_agent(&new_agent("carol")).map_err(Into::into))
            .unwrap_err();
        assert!(matches!(err, ConfigError::Io { .. }), "{step:?}: {err:?}");
        assert_eq!(t.read_config().unwrap(), HAND_WRITTEN, "{step:?}");
        // No temp file left next to the config.
        let names: Vec<String> = fs::read_dir(t.root())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("tmp"))
            .collect();
        assert!(names.is_empty(), "{step:?}: {names:?}");
        // The store still works after the failure.
        let ok = ConfigStore::new(t.layout());
        ok.edit(|doc, _| doc.add_agent(&new_agent("carol")).map_err(Into::into))
            .unwrap();
    }
}

#[test]
fn duplicate_and_invalid_alias_refused() {
    let mut doc = ConfigDocument::parse(HAND_WRITTEN).unwrap();
    assert!(doc.add_agent(&new_agent("bob")).is_err());
    assert!(doc.add_agent(&new_agent("Bob")).is_err());
    assert_eq!(doc.to_string(), HAND_WRITTEN);
}

#[test]
fn generic_edits_cannot_rekey_or_remove_agents() {
    let mut doc = ConfigDocument::parse(HAND_WRITTEN).unwrap();
    let e = doc.remove(&["agents", "bob"]).unwrap_err();
    assert!(e.to_string().contains("warren agents delete"));
    assert!(doc
        .set_value(&["agents", "zed"], toml_edit::Value::from("x"))
        .is_err());
    assert!(doc
        .set_value(
            &["agents", "zed", "risk_profile"],
            toml_edit::Value::from("p")
        )
        .is_err());
    // Editing a field of an existing agent or profile is fine and keeps the comment.
    doc.set_value(
        &["risk_profiles", "p", "level"],
        toml_edit::Value::from("full"),
    )
    .unwrap();
    assert!(doc
        .to_string()
        .contains("level = \"full\"   # supervised is fine"));
    assert_eq!(
        doc.to_string().replace("\"full\"", "\"supervised\""),
        HAND_WRITTEN
    );
}

#[test]
fn deleting_or_renaming_a_referenced_mcp_server_is_refused() {
    let text = format!(
        "{HAND_WRITTEN}\n[mcp_servers.fs]\ncommand = \"node\"\n\n[agents.carol]\nrisk_profile = \"p\"\nmcp_servers = [\"fs\"]\n"
    );
    let t = TestInstall::with_config(&text).unwrap();
    let store = ConfigStore::new(t.layout());
    let err = store
        .edit(|doc, _| {
            doc.remove(&["mcp_servers", "fs"])
                .map(|_| ())
                .map_err(Into::into)
        })
        .unwrap_err();
    match err {
        ConfigError::Invalid { errors, .. } => {
            assert_eq!(errors.issues.len(), 1, "{errors:?}");
            assert_eq!(errors.issues[0].path, "agents.carol.mcp_servers[0]");
        }
        other => panic!("unexpected {other:?}"),
    }
    // A rename is a new entry plus the removal: refused the same way until the agent's list
    // names the new entry in the same edit.
    store
        .edit(|doc, _| {
            doc.set_value(
                &["mcp_servers", "files", "command"],
                toml_edit::Value::from("node"),
            )?;
            doc.remove(&["mcp_servers", "fs"])?;
            doc.set_value(
                &["agents", "carol", "mcp_servers"],
                ConfigDocument::string_array(["files"]),
            )?;
            Ok(())
        })
        .unwrap();
    let after = t.read_config().unwrap();
    assert!(after.contains("mcp_servers = [\"files\"]"), "{after}");
    assert!(!after.contains("[mcp_servers.fs]"), "{after}");
}

fn rules(allow: &[&str], deny: &[&str], allow_private: bool) -> warren_types::DomainRules {
    warren_types::DomainRules {
        allow: allow.iter().map(std::string::ToString::to_string).collect(),
        deny: deny.iter().map(std::string::ToString::to_string).collect(),
        allow_private,
    }
}

const NET: [&str; 3] = ["risk_profiles", "p", "network"];

#[test]
fn network_by_domain_replaces_a_switch_with_an_inline_table_and_back() {
    let text =
        "[risk_profiles.p]\nlevel = \"full\"\nnetwork = false # none yet\nsandbox = \"auto\"\n";
    let mut doc = ConfigDocument::parse(text).unwrap();
    doc.set_network_domains(&NET, &rules(&["crates.io", "*.npmjs.org"], &[], true))
        .unwrap();
    assert_eq!(
        doc.to_string(),
        "[risk_profiles.p]\nlevel = \"full\"\nnetwork = { allow = [\"crates.io\", \"*.npmjs.org\"], allow_private = true } # none yet\nsandbox = \"auto\"\n"
    );
    // Back to a switch: the table goes, the comment stays.
    doc.set_value(&NET, true.into()).unwrap();
    assert_eq!(
        doc.to_string(),
        "[risk_profiles.p]\nlevel = \"full\"\nnetwork = true # none yet\nsandbox = \"auto\"\n"
    );
    // No key at all: one is added.
    let mut doc = ConfigDocument::parse("[risk_profiles.p]\nlevel = \"full\"\n").unwrap();
    doc.set_network_domains(&NET, &rules(&["a.example"], &["b.example"], false))
        .unwrap();
    assert_eq!(
        doc.to_string(),
        "[risk_profiles.p]\nlevel = \"full\"\nnetwork = { allow = [\"a.example\"], deny = [\"b.example\"] }\n"
    );
}

#[test]
fn a_network_table_is_edited_key_by_key_keeping_its_layout_and_comments() {
    // An inline table: only the list that changes is rewritten, one item added at its end.
    let text = "[risk_profiles.p]\nnetwork = { allow = [\"crates.io\"], deny = [], allow_private = false } # builders\n";
    let mut doc = ConfigDocument::parse(text).unwrap();
    doc.set_network_domains(&NET, &rules(&["crates.io", "localhost"], &[], false))
        .unwrap();
    assert_eq!(
        doc.to_string(),
        "[risk_profiles.p]\nnetwork = { allow = [\"crates.io\", \"localhost\"], deny = [], allow_private = false } # builders\n"
    );

    // A sub-table written one item a line with comments: a new item gets a line of its own,
    // every comment stays; a removed `deny` and a false `allow_private` leave (their defaults).
    let text = r#"[risk_profiles.p]
level = "full"

# Only what the build needs.
[risk_profiles.p.network]
allow = [
  "crates.io",   # the index
  # the downloads
  "static.crates.io",
]
deny = ["evil.example"] # never
allow_private = true # for the local mirror
"#;
    let mut doc = ConfigDocument::parse(text).unwrap();
    doc.set_network_domains(
        &NET,
        &rules(&["crates.io", "static.crates.io", "localhost"], &[], false),
    )
    .unwrap();
    assert_eq!(
        doc.to_string(),
        r#"[risk_profiles.p]
level = "full"

# Only what the build needs.
[risk_profiles.p.network]
allow = [
  "crates.io",   # the index
  # the downloads
  "static.crates.io",
  "localhost",
]
"#
    );
    // Removing an item keeps the others as written.
    let mut doc = ConfigDocument::parse(text).unwrap();
    doc.set_network_domains(&NET, &rules(&["static.crates.io"], &["evil.example"], true))
        .unwrap();
    let out = doc.to_string();
    assert!(
        out.contains("allow = [\n  # the downloads\n  \"static.crates.io\",\n]\ndeny = [\"evil.example\"] # never\nallow_private = true # for the local mirror\n"),
        "{out}"
    );

    // Back to off: the sub-table (and its header's comment) goes, `network = false` stands in
    // the profile's own table, everything else as it was.
    let mut doc = ConfigDocument::parse(text).unwrap();
    doc.set_value(&NET, false.into()).unwrap();
    let out = doc.to_string();
    assert_eq!(
        out, "[risk_profiles.p]\nlevel = \"full\"\nnetwork = false\n",
        "{out}"
    );
    let parsed: toml::Value = toml::from_str(&out).unwrap();
    assert_eq!(
        parsed["risk_profiles"]["p"]["network"],
        toml::Value::Boolean(false)
    );
}
