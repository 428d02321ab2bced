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
