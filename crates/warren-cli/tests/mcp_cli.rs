//! `warren mcp list` as a black box, against the reference filesystem server from the npm
//! registry (installed in `tests/mcp/` by `scripts/setup.sh --test`).

use crate::common::warren;
use std::path::Path;
use warren_testkit::TestInstall;

#[test]
fn mcp_list_starts_each_server_in_the_sandbox_and_reports_status_and_tools() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        script.is_file(),
        "{} is missing: run scripts/setup.sh --test",
        script.display()
    );
    let script = std::fs::canonicalize(script).unwrap();
    let t = TestInstall::with_config(&format!(
        r#"schema_version = 1

[risk_profiles.full]
level = "full"
allowed_commands = ["*"]

[agents.alice]
risk_profile = "full"
mcp_servers = ["fs", "broken"]

[agents.bob]
risk_profile = "full"

[mcp_servers.fs]
command = "node"
args = [{:?}, "."]

[mcp_servers.broken]
command = "no-such-mcp-program"
"#,
        script.display().to_string()
    ))
    .unwrap();
    let r = warren(t.root(), &["--json", "mcp", "list", "--agent", "alice"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    let servers = v.as_array().unwrap();
    assert_eq!(servers.len(), 2, "{v}");
    assert_eq!(servers[0]["name"], "fs");
    assert_eq!(servers[0]["status"], "running", "{v}");
    assert_eq!(servers[0]["transport"], "stdio");
    // `auto` picks bubblewrap (CI has it; scripts/setup.sh installs it).
    assert_eq!(servers[0]["sandbox"], "bubblewrap", "{v}");
    let tools: Vec<&str> = servers[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"fs__read_text_file"), "{tools:?}");
    assert_eq!(servers[1]["name"], "broken");
    assert_eq!(servers[1]["status"], "failed");
    assert!(
        servers[1]["error"]
            .as_str()
            .unwrap()
            .contains("no-such-mcp-program"),
        "{v}"
    );
    assert!(servers[1]["tools"].as_array().unwrap().is_empty());

    let r = warren(t.root(), &["mcp", "list", "--agent", "bob"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("no MCP servers"), "{}", r.stdout);
    let r = warren(t.root(), &["mcp", "list", "--agent", "nobody"]);
    assert_ne!(r.code, 0);
}

fn filesystem_script() -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        script.is_file(),
        "{} is missing: run scripts/setup.sh --test",
        script.display()
    );
    std::fs::canonicalize(script).unwrap().display().to_string()
}

const EDIT_CONFIG: &str = r#"schema_version = 1

[risk_profiles.p]
level = "supervised"

# Alice reviews.
[agents.alice]
risk_profile = "p" # kept

# Bob writes.
[agents.bob]
risk_profile = "p"
"#;

#[test]
fn mcp_add_enable_disable_and_remove_edit_the_config_text_and_keep_its_comments() {
    let t = TestInstall::with_config(EDIT_CONFIG).unwrap();
    let r = warren(
        t.root(),
        &[
            "mcp",
            "add",
            "fs",
            "--command",
            "node",
            "--arg",
            "server.js",
            "--arg",
            "--root",
            "--arg",
            "a b",
            "--env",
            "LOG_LEVEL=warn",
            "--agent",
            "alice",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("used by alice"), "{}", r.stdout);
    let text = t.read_config().unwrap();
    assert!(
        text.ends_with(
            "[mcp_servers.fs]\ncommand = \"node\"\nargs = [\"server.js\", \"--root\", \"a b\"]\nenv = { LOG_LEVEL = \"warn\" }\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("# Alice reviews.\n[agents.alice]\nrisk_profile = \"p\" # kept\nmcp_servers = [\"fs\"]\n"),
        "{text}"
    );
    assert!(
        text.contains("# Bob writes.\n[agents.bob]\nrisk_profile = \"p\"\n"),
        "{text}"
    );

    // Adding the name again, or a bad one, is refused and leaves the file as it was.
    let r = warren(t.root(), &["--json", "mcp", "add", "fs", "--command", "x"]);
    assert_ne!(r.code, 0);
    assert_eq!(r.json()["error"]["code"], "already_exists", "{}", r.stdout);
    let r = warren(
        t.root(),
        &[
            "mcp",
            "add",
            "Bad__x",
            "--command",
            "x",
            "--env",
            "DISPLAY=:0",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("mcp_servers.Bad__x (line"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("invalid MCP server name"), "{}", r.stderr);
    assert!(
        r.stderr.contains("mcp_servers.Bad__x.env.DISPLAY"),
        "{}",
        r.stderr
    );
    let r = warren(
        t.root(),
        &["mcp", "add", "x", "--command", "x", "--env", "NOVALUE"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("NAME=VALUE"), "{}", r.stderr);
    assert_eq!(t.read_config().unwrap(), text);

    // Enable for bob, disable for alice: only their lists change.
    let r = warren(
        t.root(),
        &["--json", "mcp", "enable", "fs", "--agent", "bob"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["mcp_servers"], serde_json::json!(["fs"]));
    let r = warren(t.root(), &["mcp", "disable", "fs", "--agent", "alice"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = t.read_config().unwrap();
    assert!(
        text.contains("[agents.alice]\nrisk_profile = \"p\" # kept\n\n# Bob writes.\n[agents.bob]\nrisk_profile = \"p\"\nmcp_servers = [\"fs\"]\n"),
        "{text}"
    );
    let r = warren(
        t.root(),
        &["--json", "mcp", "enable", "nosuch", "--agent", "bob"],
    );
    assert_ne!(r.code, 0);
    assert_eq!(r.json()["error"]["code"], "not_found");
    let r = warren(
        t.root(),
        &["--json", "mcp", "enable", "fs", "--agent", "nobody"],
    );
    assert_eq!(r.json()["error"]["code"], "not_found");
    assert_eq!(t.read_config().unwrap(), text);

    // Remove says which agents lose it: first as a dry run (nothing written), then for real.
    let r = warren(t.root(), &["mcp", "remove", "fs", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("agents losing it: bob"), "{}", r.stdout);
    assert!(r.stdout.contains("- [mcp_servers.fs]"), "{}", r.stdout);
    assert_eq!(t.read_config().unwrap(), text);
    let r = warren(t.root(), &["--json", "mcp", "remove", "fs"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["agents_losing"], serde_json::json!(["bob"]));
    assert_eq!(t.read_config().unwrap(), EDIT_CONFIG);
    let r = warren(t.root(), &["--json", "mcp", "remove", "fs"]);
    assert_eq!(r.json()["error"]["code"], "not_found");
}

#[test]
fn mcp_test_starts_one_server_in_the_agents_sandbox_and_says_why_it_failed() {
    let t = TestInstall::with_config(&format!(
        "{EDIT_CONFIG}\n[mcp_servers.fs]\ncommand = \"node\"\nargs = [{:?}, \".\"]\n\n[mcp_servers.broken]\ncommand = \"no-such-mcp-program\"\n",
        filesystem_script()
    ))
    .unwrap();
    std::fs::create_dir_all(t.root().join("agents/bob/workspace")).unwrap();
    // bob does not use fs yet: Test still starts it in his sandbox.
    let r = warren(t.root(), &["--json", "mcp", "test", "fs", "--agent", "bob"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let v = r.json();
    assert_eq!(v["status"], "running", "{v}");
    assert_eq!(v["sandbox"], "bubblewrap", "{v}");
    assert!(
        v["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "fs__list_directory"),
        "{v}"
    );
    let r = warren(t.root(), &["mcp", "test", "broken", "--agent", "bob"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("failed"), "{}", r.stdout);
    assert!(r.stdout.contains("no-such-mcp-program"), "{}", r.stdout);
    let r = warren(
        t.root(),
        &["--json", "mcp", "test", "nosuch", "--agent", "bob"],
    );
    assert_eq!(r.json()["error"]["code"], "not_found");
}

#[test]
fn warren_tool_calls_an_agents_mcp_tool_through_the_loops_gates() {
    let t = TestInstall::with_config(&format!(
        r#"schema_version = 1

[risk_profiles.sup]
level = "supervised"

[risk_profiles.ro]
level = "readonly"

[agents.alice]
risk_profile = "sup"
mcp_servers = ["fs"]

[agents.reader]
risk_profile = "ro"
mcp_servers = ["fs"]

[agents.bob]
risk_profile = "sup"
mcp_servers = ["broken"]

[mcp_servers.fs]
command = "node"
args = [{:?}, "."]

[mcp_servers.broken]
command = "no-such-mcp-program"
"#,
        filesystem_script()
    ))
    .unwrap();
    for a in ["alice", "reader", "bob"] {
        let ws = t.root().join(format!("agents/{a}/workspace"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join(format!("{a}-notes.txt")), "hello").unwrap();
    }
    let call = |agent: &str, tool: &str, approve: bool| {
        let mut args = vec!["--json", "tool", "--agent", agent, tool, r#"{"path": "."}"#];
        if approve {
            args.push("--approve");
        }
        let r = warren(t.root(), &args);
        let v = r.json();
        assert_eq!(r.code == 0, v["ok"] == true, "{v}\n{}", r.stderr);
        v
    };
    // Approved, the call reaches the server (started in alice's sandbox, in her workspace).
    let v = call("alice", "fs__list_directory", true);
    assert_eq!(v["ok"], true, "{v}");
    let out = v["output"].as_str().unwrap_or_default();
    assert!(out.contains("alice-notes.txt"), "{v}");
    assert!(!out.contains("bob-notes.txt"), "{v}");
    // Supervised: an MCP call needs approval, and without --approve no one can give it.
    let v = call("alice", "fs__list_directory", false);
    assert_eq!(v["error"]["code"], "no_approver", "{v}");
    // Readonly: refused before anything runs.
    let v = call("reader", "fs__list_directory", true);
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error"]["code"], "readonly", "{v}");
    // An agent without the server has no such tool.
    let v = call("bob", "fs__list_directory", true);
    assert_eq!(v["error"]["code"], "unknown_tool", "{v}");
    // A server that cannot start says why.
    let v = call("bob", "broken__anything", true);
    assert_eq!(v["error"]["code"], "mcp_server_gone", "{v}");
    let m = v["error"]["message"].as_str().unwrap_or_default();
    assert!(m.contains("no-such-mcp-program"), "{v}");
    // Only the call that ran left a receipt, as in the loop.
    let r = warren(
        t.root(),
        &["--json", "receipts", "verify", "--agent", "alice"],
    );
    assert_eq!(r.json()["checked"], 1, "{}\n{}", r.stdout, r.stderr);
}

/// A credential handed to a server never comes back: `mcp add --json` answers it hidden, and a
/// server that fails quoting it on stderr is reported with it redacted.
#[test]
fn an_mcp_servers_credential_is_hidden_in_add_and_in_its_failure() {
    const TOKEN: &str = "sk-mcp-leak-5d8e1f0a9b";
    let t = TestInstall::with_config(EDIT_CONFIG).unwrap();
    std::fs::create_dir_all(t.root().join("agents/alice/workspace")).unwrap();
    let r = warren(
        t.root(),
        &[
            "--json",
            "mcp",
            "add",
            "leaky",
            "--command",
            "sh",
            "--arg",
            "-c",
            "--arg",
            "echo \"refused token $API_TOKEN\" >&2; exit 3",
            "--env",
            &format!("API_TOKEN={TOKEN}"),
            "--agent",
            "alice",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains(TOKEN), "{}", r.stdout);
    assert!(r.stdout.contains("[redacted]"), "{}", r.stdout);
    // The file keeps the value (the server needs it).
    assert!(t.read_config().unwrap().contains(TOKEN));

    let r = warren(
        t.root(),
        &["--json", "mcp", "test", "leaky", "--agent", "alice"],
    );
    let v = r.json();
    assert_eq!(v["status"], "failed", "{v}");
    let error = v["error"].as_str().unwrap_or_default();
    assert!(error.contains("refused token"), "the stderr is quoted: {v}");
    assert!(!r.stdout.contains(TOKEN), "{}", r.stdout);
    assert!(!r.stderr.contains(TOKEN), "{}", r.stderr);
}
