//! The agent detail view's MCP section: the agent's servers are started in its sandbox and
//! shown with their status and tools (a reference filesystem server from the npm registry),
//! a server that cannot start is shown failed with its reason, and an agent without servers
//! says how to add one. The servers are stopped again once listed.

use crate::harness::{launch, Desktop};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The filesystem reference server installed in `tests/mcp/` by `scripts/setup.sh --test`.
fn filesystem_server() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    assert!(
        p.is_file(),
        "{} is missing: run scripts/setup.sh --test",
        p.display()
    );
    std::fs::canonicalize(p).unwrap()
}

fn config(home: &Path) -> String {
    let ws = home.join("agents/alice/workspace");
    format!(
        r#"# MCP view test install.
schema_version = 1

[risk_profiles.sup]
level = "supervised"

[agents.alice]
risk_profile = "sup"
mcp_servers = ["fs", "broken"]

[agents.bob]
risk_profile = "sup"

[mcp_servers.fs]
command = "node"
args = [{:?}, {:?}]

[mcp_servers.broken]
command = "no-such-mcp-server-program"
"#,
        filesystem_server().display().to_string(),
        ws.display().to_string()
    )
}

async fn attr(d: &Desktop, css: &str, name: &str) -> Vec<String> {
    let mut v = Vec::new();
    for e in d
        .client
        .find_all(Locator::Css(css))
        .await
        .unwrap_or_default()
    {
        v.push(e.attr(name).await.ok().flatten().unwrap_or_default());
    }
    v
}

/// Processes whose command line names `needle`.
fn processes_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                found.push(cmd);
            }
        }
    }
    found
}

#[test]
fn the_detail_view_shows_each_server_with_status_and_tools() {
    let _serial = serial();
    block_on_mt(async {
        let d = launch(|home| {
            std::fs::create_dir_all(home.join("agents/alice/workspace")).unwrap();
            std::fs::write(home.join("config.toml"), config(home)).unwrap();
        })
        .await;

        d.click("[data-alias=alice] [data-testid=agent-open]").await;
        d.wait_for("[data-testid=mcp-servers]").await;
        // Both servers are listed once they were started: fs running, broken failed.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let names = attr(&d, "[data-testid=mcp-server]", "data-name").await;
            if names.len() == 2 {
                break;
            }
            if Instant::now() > deadline {
                d.screenshot("mcp-timeout").await;
                panic!("servers never listed: {names:?}");
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert_eq!(
            attr(&d, "[data-testid=mcp-server]", "data-name").await,
            ["fs", "broken"]
        );
        assert_eq!(
            attr(&d, "[data-testid=mcp-server]", "data-status").await,
            ["running", "failed"]
        );
        let tools = attr(&d, "[data-name=fs] [data-testid=mcp-tool]", "data-name").await;
        for t in ["fs__read_text_file", "fs__list_directory", "fs__write_file"] {
            assert!(tools.iter().any(|x| x == t), "{t} missing from {tools:?}");
        }
        assert!(
            tools.iter().all(|t| t.starts_with("fs__")),
            "tools are named server__tool: {tools:?}"
        );
        let fs_text = d.wait_text("[data-name=fs]", |t| !t.is_empty()).await;
        assert!(
            fs_text.to_lowercase().contains("sandbox:"),
            "the sandbox is shown: {fs_text}"
        );
        let err = d
            .wait_text("[data-name=broken] [data-testid=mcp-server-error]", |t| {
                !t.is_empty()
            })
            .await;
        assert!(err.contains("no-such-mcp-server-program"), "{err}");
        assert_eq!(
            attr(&d, "[data-name=broken] [data-testid=mcp-tool]", "data-name")
                .await
                .len(),
            0
        );
        // Listing stops the servers again.
        let script = filesystem_server().display().to_string();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !processes_with(&script).is_empty() {
            assert!(
                Instant::now() < deadline,
                "the server was left running: {:?}",
                processes_with(&script)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }

        // An agent without servers says how to add one.
        d.click("[data-alias=bob] [data-testid=agent-open]").await;
        let none = d
            .wait_text("[data-testid=mcp-none]", |t| !t.is_empty())
            .await;
        assert!(none.contains("mcp_servers"), "{none}");
        assert_eq!(
            attr(&d, "[data-testid=mcp-server]", "data-name")
                .await
                .len(),
            0
        );
        d.close().await;
    });
}
