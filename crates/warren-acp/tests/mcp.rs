//! An ACP session's MCP servers, against the reference filesystem server from the npm registry
//! (installed in `tests/mcp/` by `scripts/setup.sh --test`): started for the session, offered to
//! the model, called through the session's permission request.

use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::turn::TurnHarness;
use warren_types::ProviderFamily;

/// A hermetic install with `alice`'s host and workspace.
struct Setup {
    _install: warren_testkit::TestInstall,
    host: warren_runtime::host::Host,
    ws: PathBuf,
}

async fn setup(config_text: &str) -> Setup {
    let (t, host) = TurnHarness::open(config_text).await.into_parts();
    let ws = t.root().join("agents/alice/workspace");
    Setup {
        _install: t,
        host,
        ws,
    }
}

/// The entry script of a reference server.
fn server_script(name: &str) -> PathBuf {
    warren_testkit::mcp::reference_server(name)
}

/// The tool names offered in the `n`th model request.
fn offered(fake: &FakeLlm, n: usize) -> Vec<String> {
    fake.requests()[n].body["tools"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_session_starts_the_stdio_servers_it_was_given() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let fs = server_script("filesystem");
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("my-files__list_allowed_directories", json!({})),
        Reply::text("listed"),
    ]);
    let s = setup(&format!(
        "[risk_profiles.sup]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"sup\"\nmodel_provider = \"openai.main\"\n\n{}",
        fake.config_block("main")
    ))
    .await;
    let host = Arc::new(s.host);
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_r, server_w) = tokio::io::split(server);
    let agent = tokio::spawn(warren_acp::serve(
        host.clone(),
        "alice",
        std::process::id(),
        server_r,
        server_w,
    ));
    let (client_r, mut client_w) = tokio::io::split(client);
    let mut lines = BufReader::new(client_r).lines();
    let ws = s.ws.display().to_string();
    let open = json!({"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": ws,
        "mcpServers": [{"name": "My Files", "command": "node",
            "args": [fs.display().to_string(), ws], "env": []}]}});
    client_w
        .write_all(format!("{open}\n").as_bytes())
        .await
        .unwrap();
    let next = |l: Option<String>| serde_json::from_str::<serde_json::Value>(&l.unwrap()).unwrap();
    let opened = next(lines.next_line().await.unwrap());
    let session = opened["result"]["sessionId"].as_str().unwrap().to_string();
    let prompt = json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "list"}]}});
    client_w
        .write_all(format!("{prompt}\n").as_bytes())
        .await
        .unwrap();
    let mut statuses = Vec::new();
    let done = loop {
        let m = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .unwrap()
            .unwrap();
        let m = next(m);
        if m["id"] == json!(2) && m.get("method").is_none() {
            break m;
        }
        if m["method"] == "session/request_permission" {
            let answer = json!({"jsonrpc": "2.0", "id": m["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}});
            client_w
                .write_all(format!("{answer}\n").as_bytes())
                .await
                .unwrap();
        } else if m["params"]["update"]["sessionUpdate"] == "tool_call_update" {
            statuses.push(
                m["params"]["update"]["status"]
                    .as_str()
                    .unwrap_or("")
                    .to_string(),
            );
        }
    };
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("completed"),
        "{statuses:?}"
    );
    assert!(!statuses.iter().any(|s| s == "failed"), "{statuses:?}");
    assert!(offered(&fake, 0).contains(&"my-files__list_allowed_directories".to_string()));
    let second = fake.requests()[1].body.to_string();
    assert!(second.contains(&s.ws.display().to_string()), "{second}");
    client_w.shutdown().await.unwrap();
    let _ = tokio::time::timeout(Duration::from_secs(10), agent).await;
}
