//! Edits keep the file tidy: comments stay with the table they describe, no bare header is
//! left behind, and a block put back goes among its own kind. Each test states the exact text
//! before and after.

use warren_config::{ConfigDocument, NewAgent};

const BEFORE: &str = r#"schema_version = 1

# The careful profile.
[risk_profiles.p]
level = "supervised"

# Alice does research.
[agents.alice]
risk_profile = "p"

# Who alice may read.
[agents.alice.workspace.access]
bob = "read" # read only

# Bob writes.
[agents.bob]
risk_profile = "p"

# Routes to models.
[providers.models.ollama.local]
model = "llama3.2"

# nightly digest
[cron.digest]
agent = "alice"
schedule = "0 3 * * *"
prompt = "digest"
"#;

#[test]
fn removing_the_last_grant_removes_its_header_and_comment() {
    let mut d = ConfigDocument::parse(BEFORE).unwrap();
    assert!(d
        .remove(&["agents", "alice", "workspace", "access", "bob"])
        .unwrap());
    let after = BEFORE.replace(
        "# Who alice may read.\n[agents.alice.workspace.access]\nbob = \"read\" # read only\n\n",
        "",
    );
    assert_eq!(d.to_string(), after);
}

#[test]
fn removing_one_of_two_grants_keeps_the_header() {
    let text = BEFORE.replace(
        "bob = \"read\" # read only\n",
        "bob = \"read\" # read only\ncarol = \"read\"\n",
    );
    let mut d = ConfigDocument::parse(&text).unwrap();
    d.remove(&["agents", "alice", "workspace", "access", "carol"])
        .unwrap();
    assert_eq!(d.to_string(), BEFORE);
}

#[test]
fn an_emptied_explicit_parent_goes_too_but_never_the_agent() {
    let text = "[agents.a]\nrisk_profile = \"p\"\n\n[agents.a.workspace]\n\n[agents.a.workspace.access]\nb = \"read\"\n\n[agents.b]\nrisk_profile = \"p\"\n";
    let mut d = ConfigDocument::parse(text).unwrap();
    d.remove(&["agents", "a", "workspace", "access", "b"])
        .unwrap();
    assert_eq!(
        d.to_string(),
        "[agents.a]\nrisk_profile = \"p\"\n\n[agents.b]\nrisk_profile = \"p\"\n"
    );
    // A profile emptied of its keys stays (it is a named entry, not a bare header).
    let mut d = ConfigDocument::parse("[risk_profiles.q]\nlevel = \"full\"\n").unwrap();
    d.remove(&["risk_profiles", "q", "level"]).unwrap();
    assert_eq!(d.to_string(), "[risk_profiles.q]\n");
}

#[test]
fn deleting_an_agent_drops_the_grant_tables_it_emptied() {
    let mut d = ConfigDocument::parse(BEFORE).unwrap();
    d.remove_agent_table("bob").unwrap();
    d.scrub_agent_references("bob");
    let after = BEFORE
        .replace(
            "# Who alice may read.\n[agents.alice.workspace.access]\nbob = \"read\" # read only\n\n",
            "",
        )
        .replace("# Bob writes.\n[agents.bob]\nrisk_profile = \"p\"\n\n", "");
    assert_eq!(d.to_string(), after);
}

#[test]
fn a_removed_memory_grant_leaves_no_empty_workspace_table() {
    let text = "[agents.a]\nrisk_profile = \"p\"\n\n[agents.a.workspace]\nread_memory_from = [\"b\"]\n\n[agents.b]\nrisk_profile = \"p\"\n";
    let mut d = ConfigDocument::parse(text).unwrap();
    assert!(d.set_memory_grant("a", "b", None, true).unwrap());
    assert_eq!(
        d.to_string(),
        "[agents.a]\nrisk_profile = \"p\"\n\n[agents.b]\nrisk_profile = \"p\"\n"
    );
}

#[test]
fn a_restored_agent_goes_back_among_the_agents_with_its_comments() {
    let mut d = ConfigDocument::parse(BEFORE).unwrap();
    let block = d.remove_agent_table("alice").unwrap();
    assert!(
        block.starts_with("# Alice does research.\n[agents.alice]\n"),
        "{block}"
    );
    d.insert_agent_block("alice", &block).unwrap();
    // After bob's table, before the providers' comment and header.
    let after = r#"schema_version = 1

# The careful profile.
[risk_profiles.p]
level = "supervised"

# Bob writes.
[agents.bob]
risk_profile = "p"

# Alice does research.
[agents.alice]
risk_profile = "p"

# Who alice may read.
[agents.alice.workspace.access]
bob = "read" # read only

# Routes to models.
[providers.models.ollama.local]
model = "llama3.2"

# nightly digest
[cron.digest]
agent = "alice"
schedule = "0 3 * * *"
prompt = "digest"
"#;
    assert_eq!(d.to_string(), after);
}

#[test]
fn a_restored_profile_goes_back_among_the_profiles() {
    let text = "[risk_profiles.a]\nlevel = \"full\"\n\n# B is careful.\n[risk_profiles.b]\nlevel = \"readonly\"\n\n# Agents.\n[agents.x]\nrisk_profile = \"a\"\n";
    let mut d = ConfigDocument::parse(text).unwrap();
    let removed = d.remove_named_block("risk_profiles", "b").unwrap().unwrap();
    assert_eq!(
        d.to_string(),
        "[risk_profiles.a]\nlevel = \"full\"\n\n# Agents.\n[agents.x]\nrisk_profile = \"a\"\n"
    );
    d.insert_named_block("risk_profiles", "b", &removed.text)
        .unwrap();
    assert_eq!(d.to_string(), text);
}

#[test]
fn a_restored_block_is_appended_when_its_section_has_no_table() {
    let mut d = ConfigDocument::parse("schema_version = 1\n").unwrap();
    d.insert_agent_block("z", "[agents.z]\nrisk_profile = \"p\"\n")
        .unwrap();
    assert_eq!(
        d.to_string(),
        "schema_version = 1\n\n[agents.z]\nrisk_profile = \"p\"\n"
    );
}

#[test]
fn a_header_lookalike_inside_a_multiline_string_is_not_a_table() {
    let text = "[agents.a]\nrisk_profile = \"p\"\n\n[cron.j]\nagent = \"a\"\nschedule = \"0 3 * * *\"\nprompt = \"\"\"\n[agents.fake]\n\"\"\"\n\n[mcp_servers.m]\ncommand = \"x\"\n";
    let mut d = ConfigDocument::parse(text).unwrap();
    d.insert_agent_block("b", "[agents.b]\nrisk_profile = \"p\"\n")
        .unwrap();
    assert_eq!(
        d.to_string(),
        text.replace(
            "risk_profile = \"p\"\n\n[cron.j]",
            "risk_profile = \"p\"\n\n[agents.b]\nrisk_profile = \"p\"\n\n[cron.j]"
        )
    );
}

#[test]
fn a_new_agent_is_added_after_the_agents_not_after_the_cron_jobs() {
    let mut d = ConfigDocument::parse(BEFORE).unwrap();
    d.add_agent(&NewAgent {
        alias: "carol".into(),
        risk_profile: "p".into(),
        ..NewAgent::default()
    })
    .unwrap();
    let text = d.to_string();
    let carol = text.find("[agents.carol]").unwrap();
    assert!(carol > text.find("[agents.bob]").unwrap(), "{text}");
    assert!(carol < text.find("# Routes to models.").unwrap(), "{text}");
}
