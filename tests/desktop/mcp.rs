//! MCP servers in the window. The agent detail view's MCP section: the agent's servers are
//! started in its sandbox and shown with their status and tools (a reference filesystem server
//! from the npm registry), a server that cannot start is shown failed with its reason, and an
//! agent without servers says how to add one; the servers are stopped again once listed.
//! Settings' MCP servers page: a server added by form (validated beside its fields, shown as a
//! diff, saved to config.toml on disk), tested in an agent's sandbox, enabled and disabled per
//! agent from its detail view, and removed saying which agents lose it.

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

async fn fill(d: &Desktop, css: &str, text: &str) {
    let e = d.wait_for(css).await;
    e.clear().await.unwrap();
    e.send_keys(text).await.unwrap();
}

async fn enabled(d: &Desktop, css: &str) -> bool {
    d.wait_for(css).await.is_enabled().await.unwrap()
}

/// Waits until `ok` holds for config.toml's text, and returns it.
async fn wait_config(path: &Path, ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(path).unwrap();
        if ok(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "config.toml never changed as expected:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn scroll_to(d: &Desktop, css: &str) {
    d.client
        .execute(
            "document.querySelector(arguments[0]).scrollIntoView({block: 'start'})",
            vec![serde_json::json!(css)],
        )
        .await
        .unwrap();
}

const FORM_CONFIG: &str = r#"# MCP form test install.
schema_version = 1

[risk_profiles.sup]
level = "supervised"

# Alice reviews.
[agents.alice]
risk_profile = "sup" # kept

[agents.bob]
risk_profile = "sup"
"#;

const TOKEN: &str = "tok-0123456789abcdef";

#[test]
fn a_server_is_added_by_form_tested_toggled_per_agent_and_removed() {
    let _serial = serial();
    block_on_mt(async {
        let d = launch(|home| {
            for a in ["alice", "bob"] {
                std::fs::create_dir_all(home.join(format!("agents/{a}/workspace"))).unwrap();
            }
            std::fs::write(home.join("config.toml"), FORM_CONFIG).unwrap();
        })
        .await;
        let config = d.home.join("config.toml");
        let script = filesystem_server().display().to_string();

        d.nav("settings").await;
        d.wait_for("[data-testid=mcp-settings-none]").await;
        d.click("[data-testid=mcp-add]").await;

        // A bad name is named beside the name field and Save stays disabled.
        fill(&d, "[data-testid=mcp-name]", "Bad__x").await;
        fill(&d, "[data-testid=mcp-command]", "node").await;
        let err = d
            .wait_text("[data-testid=mcp-field-error][data-field=name]", |t| {
                t.contains("invalid MCP server name")
            })
            .await;
        assert!(err.contains("Bad__x"), "{err}");
        assert!(!enabled(&d, "[data-testid=mcp-save]").await);

        // The real form: name, command, arguments one per line, a credential, an agent.
        fill(&d, "[data-testid=mcp-name]", "fs").await;
        // One argument per line: Enter in the text area starts the next.
        let enter = char::from(fantoccini::key::Key::Enter);
        fill(&d, "[data-testid=mcp-args]", &format!("{script}{enter}.")).await;
        d.click("[data-testid=mcp-env-add]").await;
        fill(&d, "[data-testid=mcp-env-name]", "API_TOKEN").await;
        fill(&d, "[data-testid=mcp-env-value]", TOKEN).await;
        let kind = d
            .wait_for("[data-testid=mcp-env-value]")
            .await
            .attr("type")
            .await
            .unwrap();
        assert_eq!(kind.as_deref(), Some("password"), "a credential is hidden");
        d.click("[data-testid=mcp-agent][data-agent=alice]").await;
        let diff = d
            .wait_text("[data-testid=mcp-diff]", |t| {
                t.contains("[mcp_servers.fs]") && t.contains("mcp_servers = [\"fs\"]")
            })
            .await;
        assert!(diff.contains("+ command = \"node\""), "{diff}");
        assert!(diff.contains(&script), "{diff}");
        assert!(
            !diff.contains(TOKEN),
            "the preview hides the credential: {diff}"
        );
        scroll_to(&d, "[data-testid=mcp-form]").await;
        d.screenshot("mcp-form").await;
        assert_eq!(
            d.client
                .find_all(Locator::Css("[data-testid=mcp-field-error]"))
                .await
                .unwrap()
                .len(),
            0
        );
        let deadline = Instant::now() + Duration::from_secs(10);
        while !enabled(&d, "[data-testid=mcp-save]").await {
            assert!(Instant::now() < deadline, "Save never enabled");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        d.click("[data-testid=mcp-save]").await;
        d.wait_for("[data-testid=mcp-saved]").await;
        let text = wait_config(&config, |t| t.contains("[mcp_servers.fs]")).await;
        assert!(
            text.ends_with(&format!(
                "[mcp_servers.fs]\ncommand = \"node\"\nargs = [{script:?}, \".\"]\nenv = {{ API_TOKEN = \"{TOKEN}\" }}\n"
            )),
            "{text}"
        );
        assert!(
            text.contains("# Alice reviews.\n[agents.alice]\nrisk_profile = \"sup\" # kept\nmcp_servers = [\"fs\"]\n"),
            "{text}"
        );
        d.click("[data-testid=mcp-close]").await;

        // Test starts it in alice's sandbox: its tools.
        let row = "[data-testid=mcp-settings-row][data-name=fs]";
        d.wait_text(&format!("{row} [data-testid=mcp-settings-agents]"), |t| {
            t == "alice"
        })
        .await;
        d.click(&format!("{row} [data-testid=mcp-settings-test]"))
            .await;
        let result = "[data-testid=mcp-settings-test-result][data-name=fs]";
        d.wait_for(&format!("{result}[data-status=running]")).await;
        let tools = attr(
            &d,
            &format!("{result} [data-testid=mcp-settings-tool]"),
            "data-name",
        )
        .await;
        assert!(tools.iter().any(|t| t == "fs__list_directory"), "{tools:?}");

        // Edit: the form opens with the server's values; unticking an agent says it loses
        // the server; a variable added is saved beside the first.
        d.click(&format!("{row} [data-testid=mcp-settings-edit]"))
            .await;
        let name = d.wait_for("[data-testid=mcp-name]").await;
        assert_eq!(name.prop("value").await.unwrap().as_deref(), Some("fs"));
        assert!(
            !name.is_enabled().await.unwrap(),
            "a server's name is fixed"
        );
        let value = d.wait_for("[data-testid=mcp-env-value]").await;
        assert_eq!(value.prop("value").await.unwrap().as_deref(), Some(TOKEN));
        assert_eq!(
            value.attr("type").await.unwrap().as_deref(),
            Some("password")
        );
        d.click("[data-testid=mcp-agent][data-agent=alice]").await;
        let losing = d
            .wait_text("[data-testid=mcp-agents-losing]", |t| t.contains("alice"))
            .await;
        assert!(losing.contains("takes it from alice"), "{losing}");
        d.click("[data-testid=mcp-agent][data-agent=alice]").await;
        d.click("[data-testid=mcp-env-add]").await;
        let names = d
            .client
            .find_all(Locator::Css("[data-testid=mcp-env-name]"))
            .await
            .unwrap();
        names[1].send_keys("LOG_LEVEL").await.unwrap();
        let values = d
            .client
            .find_all(Locator::Css("[data-testid=mcp-env-value]"))
            .await
            .unwrap();
        values[1].send_keys("warn").await.unwrap();
        d.wait_text("[data-testid=mcp-diff]", |t| {
            t.contains("LOG_LEVEL = \"warn\"")
        })
        .await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !enabled(&d, "[data-testid=mcp-save]").await {
            assert!(Instant::now() < deadline, "Save never enabled");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        d.click("[data-testid=mcp-save]").await;
        let text = wait_config(&config, |t| t.contains("LOG_LEVEL")).await;
        assert!(
            text.contains(&format!(
                "env = {{ API_TOKEN = \"{TOKEN}\", LOG_LEVEL = \"warn\" }}"
            )),
            "{text}"
        );
        assert!(text.contains("# kept\nmcp_servers = [\"fs\"]\n"), "{text}");
        d.click("[data-testid=mcp-close]").await;

        // A server whose program does not exist: Test says so in words.
        d.click("[data-testid=mcp-add]").await;
        fill(&d, "[data-testid=mcp-name]", "broken").await;
        fill(
            &d,
            "[data-testid=mcp-command]",
            "no-such-mcp-server-program",
        )
        .await;
        d.wait_text("[data-testid=mcp-diff]", |t| {
            t.contains("[mcp_servers.broken]")
        })
        .await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !enabled(&d, "[data-testid=mcp-save]").await {
            assert!(Instant::now() < deadline, "Save never enabled");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        d.click("[data-testid=mcp-save]").await;
        d.wait_for("[data-testid=mcp-saved]").await;
        d.click("[data-testid=mcp-close]").await;
        d.click("[data-testid=mcp-settings-row][data-name=broken] [data-testid=mcp-settings-test]")
            .await;
        let err = d
            .wait_text(
                "[data-testid=mcp-settings-test-result][data-name=broken] [data-testid=mcp-settings-test-error]",
                |t| !t.is_empty(),
            )
            .await;
        assert!(
            err.contains("no-such-mcp-server-program") && err.contains("not found"),
            "{err}"
        );
        // The edited server starts again (its earlier result was dropped on saving).
        d.click(&format!("{row} [data-testid=mcp-settings-test]"))
            .await;
        d.wait_for(&format!("{result}[data-status=running]")).await;
        scroll_to(&d, "#mcp-settings-title").await;
        d.screenshot("mcp-servers").await;

        // The agent's panel: fs runs with its tools; toggles edit alice's list on disk.
        d.nav("agents").await;
        d.click("[data-alias=alice] [data-testid=agent-open]").await;
        d.wait_for("[data-testid=mcp-server][data-name=fs][data-status=running]")
            .await;
        let tools = attr(&d, "[data-name=fs] [data-testid=mcp-tool]", "data-name").await;
        assert!(tools.iter().any(|t| t == "fs__list_directory"), "{tools:?}");
        d.wait_for("[data-testid=mcp-toggle][data-server=broken]")
            .await;
        d.click("[data-testid=mcp-toggle][data-server=fs]").await;
        let text = wait_config(&config, |t| !t.contains("mcp_servers = [\"fs\"]")).await;
        assert!(
            text.contains("[agents.alice]\nrisk_profile = \"sup\" # kept\n\n[agents.bob]"),
            "{text}"
        );
        d.wait_for("[data-testid=mcp-none]").await;
        d.click("[data-testid=mcp-toggle][data-server=broken]")
            .await;
        wait_config(&config, |t| t.contains("mcp_servers = [\"broken\"]")).await;
        let err = d
            .wait_text("[data-name=broken] [data-testid=mcp-server-error]", |t| {
                !t.is_empty()
            })
            .await;
        assert!(err.contains("no-such-mcp-server-program"), "{err}");
        d.click("[data-name=broken] [data-testid=mcp-test]").await;
        d.wait_text("[data-name=broken] [data-testid=mcp-server-error]", |t| {
            t.contains("not found")
        })
        .await;
        scroll_to(&d, "[data-testid=mcp-servers]").await;
        d.screenshot("mcp-agent-panel").await;

        // Remove from Settings: it says alice loses it, then removes it from her list too.
        d.nav("settings").await;
        d.click(
            "[data-testid=mcp-settings-row][data-name=broken] [data-testid=mcp-settings-remove]",
        )
        .await;
        let losing = d
            .wait_text("[data-testid=mcp-remove-agents]", |t| !t.is_empty())
            .await;
        assert!(losing.contains("alice"), "{losing}");
        d.click("[data-testid=mcp-remove-yes]").await;
        d.wait_text("[data-testid=mcp-removed]", |t| t.contains("alice"))
            .await;
        let text = wait_config(&config, |t| !t.contains("broken")).await;
        assert!(text.contains("[mcp_servers.fs]"), "{text}");
        assert!(!text.contains("mcp_servers = ["), "{text}");
        d.close().await;
    });
}
