//! MCP servers as tools, against the reference servers from the npm registry (installed in
//! `tests/mcp/` by `scripts/setup.sh --test`): confined to the agent's sandbox, gated like
//! built-in tools, withdrawn when they die, never handed to a SubAgent whose parent lacks them.

use crate::turn::setup;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use warren_runtime::approval::{ApprovalAnswer, FixedApprover};
use warren_runtime::turn::TurnStatus;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::turn::drain;
use warren_types::{EventKind, NoticeCode, ProviderFamily, TurnEvent, TurnTrigger};

/// The entry script of a reference server.
fn server_script(name: &str) -> PathBuf {
    warren_testkit::mcp::reference_server(name)
}

/// (ok, output) of every tool result, in order.
fn results(events: &[TurnEvent]) -> Vec<(bool, String)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { ok, output, .. } => Some((*ok, output.clone())),
            _ => None,
        })
        .collect()
}

fn notices(events: &[TurnEvent], code: NoticeCode) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Notice { code: c, message } if *c == code => Some(message.clone()),
            _ => None,
        })
        .collect()
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

fn toml_str(p: &Path) -> String {
    format!("{:?}", p.display().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_not_the_server_keeps_a_sibling_workspace_closed() {
    let fs = server_script("filesystem");
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let setup_text = |root: &Path| {
        let (alice, bob) = (
            root.join("agents/alice/workspace"),
            root.join("agents/bob/workspace"),
        );
        // The server itself is told both workspaces are its to serve.
        format!(
            r#"
[risk_profiles.yolo]
level = "full"
allowed_commands = ["*"]

[risk_profiles.open]
level = "full"
allowed_commands = ["*"]
sandbox = "none"

[agents.alice]
risk_profile = "yolo"
model_provider = "openai.main"
mcp_servers = ["fs"]

[agents.bob]
risk_profile = "yolo"
model_provider = "openai.main"

[agents.carol]
risk_profile = "open"
model_provider = "openai.main"
mcp_servers = ["fs"]

[mcp_servers.fs]
command = "node"
args = [{}, {}, {}]

{}"#,
            toml_str(&fs),
            toml_str(&alice),
            toml_str(&bob),
            fake.config_block("main")
        )
    };
    // The install root is only known once it exists: write the config in two steps.
    let s = setup(&setup_text(Path::new("/nowhere"))).await;
    let root =
        s.ws.parent()
            .unwrap()
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf();
    std::fs::write(root.join("config.toml"), setup_text(&root)).unwrap();
    let bob_ws = root.join("agents/bob/workspace");
    std::fs::create_dir_all(&bob_ws).unwrap();
    std::fs::write(bob_ws.join("secret.txt"), "bob's secret").unwrap();
    std::fs::create_dir_all(&s.ws).unwrap();
    std::fs::write(s.ws.join("notes.txt"), "alice's notes").unwrap();
    let (alice_notes, bob_secret) = (s.ws.join("notes.txt"), bob_ws.join("secret.txt"));
    fake.script([
        Reply::tool_calls([
            ("fs__list_allowed_directories", json!({})),
            (
                "fs__list_directory",
                json!({"path": s.ws.display().to_string()}),
            ),
            (
                "fs__read_text_file",
                json!({"path": alice_notes.display().to_string()}),
            ),
            (
                "fs__read_text_file",
                json!({"path": bob_secret.display().to_string()}),
            ),
        ]),
        Reply::text("done"),
        // carol runs the same server without a sandbox: the server's own rule lets it read.
        Reply::tool_call(
            "fs__read_text_file",
            json!({"path": bob_secret.display().to_string()}),
        ),
        Reply::text("done"),
    ]);
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run("alice", None, "look", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let events = drain(&mut rx);
    assert!(
        notices(&events, NoticeCode::McpServerFailed).is_empty(),
        "{events:#?}"
    );
    let tools = offered(&fake, 0);
    assert!(
        tools.contains(&"fs__read_text_file".to_string()),
        "{tools:?}"
    );
    assert!(tools.contains(&"file_read".to_string()), "{tools:?}");
    let r = results(&events);
    assert_eq!(r.len(), 4, "{r:?}");
    // The server was told both workspaces are its own (under Landlock it believes it; under
    // bubblewrap bob's is not even in its view, so it drops it) ...
    assert!(r[0].0, "{r:?}");
    assert!(
        r[0].1.contains(&bob_ws.display().to_string())
            || r[0].1.contains(&s.ws.display().to_string()),
        "{r:?}"
    );
    // ... lists and reads alice's ...
    assert!(r[1].0 && r[1].1.contains("notes.txt"), "{r:?}");
    assert!(r[2].0 && r[2].1.contains("alice's notes"), "{r:?}");
    // ... and the sandbox refuses bob's.
    assert!(!r[3].0, "{r:?}");
    assert!(!r[3].1.contains("bob's secret"), "{r:?}");
    assert!(r[3].1.contains("mcp_call_failed"), "{r:?}");
    assert!(
        r[3].1.contains("EACCES") || r[3].1.contains("denied"),
        "{r:?}"
    );

    // The same server and arguments with no sandbox read it: the sandbox made the difference.
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run("carol", None, "look", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let r = results(&drain(&mut rx));
    assert!(r[0].0 && r[0].1.contains("bob's secret"), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_needing_approval_asks_and_a_denied_call_does_not_run() {
    let fs = server_script("filesystem");
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let config = |ws: &Path| {
        format!(
            r#"
[risk_profiles.sup]
level = "supervised"
allowed_commands = ["*"]
auto_approve = ["file_read", "fs__list_allowed_directories"]

[agents.alice]
risk_profile = "sup"
model_provider = "openai.main"
mcp_servers = ["fs"]

[mcp_servers.fs]
command = "node"
args = [{}, {}]

{}"#,
            toml_str(&fs),
            toml_str(ws),
            fake.config_block("main")
        )
    };
    let s = setup(&config(Path::new("/nowhere"))).await;
    let root =
        s.ws.parent()
            .unwrap()
            .parent()
            .unwrap()
            .parent()
            .unwrap()
            .to_path_buf();
    std::fs::write(root.join("config.toml"), config(&s.ws)).unwrap();
    let target = s.ws.join("made.txt");
    let write = || {
        Reply::tool_calls([
            ("fs__list_allowed_directories", json!({})),
            (
                "fs__write_file",
                json!({"path": target.display().to_string(), "content": "made"}),
            ),
        ])
    };
    fake.script([
        write(),
        Reply::text("denied"),
        write(),
        Reply::text("written"),
    ]);

    let deny: Arc<dyn warren_runtime::approval::AsyncApprover> =
        Arc::new(FixedApprover(ApprovalAnswer::deny(Some("no".into()))));
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run("alice", None, "write", TurnTrigger::User, Some(deny))
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let events = drain(&mut rx);
    let asked: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ApprovalRequested { tool, reason, .. } => {
                Some((tool.clone(), reason.clone()))
            }
            _ => None,
        })
        .collect();
    // The auto-approved tool ran without a question; the write was asked about by its name.
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].0, "fs__write_file");
    assert!(asked[0].1.contains("auto_approve"), "{asked:?}");
    let r = results(&events);
    assert!(r[0].0, "{r:?}");
    assert!(!r[1].0 && r[1].1.contains("denied"), "{r:?}");
    assert!(!target.exists(), "a denied call never reaches the server");

    let approve: Arc<dyn warren_runtime::approval::AsyncApprover> =
        Arc::new(FixedApprover(ApprovalAnswer::approve()));
    let out = s
        .host
        .run("alice", None, "write", TurnTrigger::User, Some(approve))
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "made");
    // The approved call left a receipt naming the server's tool; the denied one none.
    let receipts = s.host.receipts().list("alice").await.unwrap();
    let tools: Vec<&str> = receipts.iter().map(|r| r.tool.as_str()).collect();
    assert_eq!(
        tools.iter().filter(|t| **t == "fs__write_file").count(),
        1,
        "{tools:?}"
    );
}

/// The pids of the processes whose environment holds `marker`.
fn pids_with(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(env) = std::fs::read(entry.path().join("environ")) {
            if env.split(|b| *b == 0).any(|v| v == marker.as_bytes()) {
                out.push(pid);
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_call_is_reported_withdrawn_and_the_turn_completes() {
    let everything = server_script("everything");
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let mark = format!("WARREN_TEST_MARK={}", uuid_like());
    let (key, value) = mark.split_once('=').unwrap();
    fake.script([
        Reply::tool_call(
            "everything__trigger-long-running-operation",
            json!({"duration": 60, "steps": 5}),
        ),
        Reply::text("the server went away"),
    ]);
    let s = setup(&format!(
        r#"
[risk_profiles.yolo]
level = "full"
allowed_commands = ["*"]

[agents.alice]
risk_profile = "yolo"
model_provider = "openai.main"
mcp_servers = ["everything"]

[mcp_servers.everything]
command = "node"
args = [{}]
env = {{ {key} = "{value}" }}

{}"#,
        toml_str(&everything),
        fake.config_block("main")
    ))
    .await;
    let mut rx = s.host.subscribe();
    let host = Arc::new(s.host);
    let h = host.clone();
    let run =
        tokio::spawn(async move { h.run("alice", None, "go", TurnTrigger::User, None).await });
    // Once the call is announced, the server is killed.
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let e = tokio::time::timeout_at(deadline, rx.recv())
            .await
            .expect("no tool call within 60s")
            .unwrap();
        let call = matches!(e.kind, EventKind::ToolCall { .. });
        seen.push(e);
        if call {
            break;
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pids = pids_with(&mark);
    assert!(!pids.is_empty(), "the server process runs with its env");
    // Under bubblewrap killing its outer process ends the whole pid namespace, so a later
    // pid of the list may be gone already: one kill must land.
    let mut landed = 0;
    for pid in &pids {
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        landed += usize::from(killed.success());
    }
    assert!(landed > 0, "{pids:?}");
    let out = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the turn ends")
        .unwrap()
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert_eq!(out.text, "the server went away");
    seen.extend(drain(&mut rx));
    let r = results(&seen);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(!r[0].0 && r[0].1.contains("mcp_call_failed"), "{r:?}");
    let failed = notices(&seen, NoticeCode::McpServerFailed);
    assert_eq!(failed.len(), 1, "{seen:#?}");
    assert!(failed[0].contains("`everything`"), "{failed:?}");
    // Offered in the first request, withdrawn from the second.
    assert!(offered(&fake, 0)
        .iter()
        .any(|t| t.starts_with("everything__")));
    let second = offered(&fake, 1);
    assert!(
        !second.iter().any(|t| t.starts_with("everything__")),
        "{second:?}"
    );
    assert!(second.contains(&"file_read".to_string()), "{second:?}");
    assert!(pids_with(&mark).is_empty(), "nothing of the server is left");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_reported_and_the_turn_goes_on() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([Reply::text("fine without it")]);
    let s = setup(&format!(
        r#"
[risk_profiles.yolo]
level = "full"
allowed_commands = ["*"]

[agents.alice]
risk_profile = "yolo"
model_provider = "openai.main"
mcp_servers = ["broken"]

[mcp_servers.broken]
command = "no-such-mcp-server-program"

{}"#,
        fake.config_block("main")
    ))
    .await;
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run("alice", None, "go", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let failed = notices(&drain(&mut rx), NoticeCode::McpServerFailed);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(
        failed[0].contains("`broken`") && failed[0].contains("no-such-mcp-server-program"),
        "{failed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagent_never_gets_a_server_its_parent_does_not_have() {
    let everything = server_script("everything");
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        // bob on his own: his server's tools are offered.
        Reply::text("bob alone"),
        // alice delegates to bob; the child turn's request is the next one.
        Reply::tool_call(
            "delegate",
            json!({"agent": "bob", "prompt": "use your tools"}),
        ),
        Reply::text("child done"),
        Reply::text("parent done"),
    ]);
    let s = setup(&format!(
        r#"
[risk_profiles.lead]
level = "full"
allowed_commands = ["*"]
delegation = "allow"

[risk_profiles.plain]
level = "full"
allowed_commands = ["*"]

[agents.alice]
risk_profile = "lead"
model_provider = "openai.main"
delegates = ["bob"]
[agents.alice.workspace.access]
bob = "read_write"

[agents.bob]
risk_profile = "plain"
model_provider = "openai.main"
mcp_servers = ["everything"]

[mcp_servers.everything]
command = "node"
args = [{}]

{}"#,
        toml_str(&everything),
        fake.config_block("main")
    ))
    .await;
    let out = s
        .host
        .run("bob", None, "hi", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert!(offered(&fake, 0).iter().any(|t| t == "everything__echo"));
    let out = s
        .host
        .run("alice", None, "go", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert_eq!(fake.requests().len(), 4);
    let child = offered(&fake, 2);
    assert!(child.contains(&"file_read".to_string()), "{child:?}");
    assert!(
        !child.iter().any(|t| t.starts_with("everything__")),
        "{child:?}"
    );
}

fn uuid_like() -> String {
    use std::time::{SystemTime, UNIX_EPOCH};
    let n = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("{}-{n}", std::process::id())
}

/// A free local port (bound, then released for the server to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The reference server in streamable-HTTP mode on `port`, stopped when dropped.
struct HttpServer(std::process::Child);

impl HttpServer {
    fn start(port: u16) -> Self {
        let child = std::process::Command::new("node")
            .arg(server_script("everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "the HTTP server never listened"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        HttpServer(child)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_is_reached_at_its_url_and_an_unreachable_one_is_reported() {
    let port = free_port();
    let _server = HttpServer::start(port);
    let closed = free_port();
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("remote__echo", json!({"message": "hello over http"})),
        Reply::text("done"),
    ]);
    let s = setup(&format!(
        r#"
[risk_profiles.yolo]
level = "full"
allowed_commands = ["*"]

[agents.alice]
risk_profile = "yolo"
model_provider = "openai.main"
mcp_servers = ["remote", "gone"]

[mcp_servers.remote]
url = "http://127.0.0.1:{port}/mcp"

[mcp_servers.gone]
url = "http://127.0.0.1:{closed}/mcp"

{}"#,
        fake.config_block("main")
    ))
    .await;
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run("alice", None, "go", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    let events = drain(&mut rx);
    let r = results(&events);
    assert_eq!(r.len(), 1, "{r:?}");
    assert!(r[0].0 && r[0].1.contains("hello over http"), "{r:?}");
    let offered0 = offered(&fake, 0);
    assert!(
        offered0.contains(&"remote__echo".to_string()),
        "{offered0:?}"
    );
    assert!(
        !offered0.iter().any(|t| t.starts_with("gone__")),
        "{offered0:?}"
    );
    let failed = notices(&events, NoticeCode::McpServerFailed);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert!(failed[0].contains("`gone`"), "{failed:?}");
    // The call is announced under its `server__tool` name.
    let call_events: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCall { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(call_events, ["remote__echo"]);
}

/// A stdio MCP server is a confined child like a shell command, with the same system-call
/// filter: a probe started as an MCP server of a `workspace_only` agent tries a datagram out, a
/// Unix socket outside its
/// grants and a metadata change outside them, and writes what happened into the workspace
/// (then exits without speaking MCP). The same probe under `sandbox = "none"` succeeds at all
/// three: the sandbox made the difference.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_gets_the_sandbox_of_a_shell_command() {
    let outside = tempfile::tempdir().unwrap();
    let probe_dir = outside.path().join("probe");
    std::fs::create_dir_all(&probe_dir).unwrap();
    let probe = probe_dir.join("probe.py");
    std::fs::write(
        &probe,
        r#"
import os, socket, sys
port, sock, scratch = int(sys.argv[1]), sys.argv[2], sys.argv[3]
out = []
def attempt(name, f):
    try:
        f()
        out.append(name + " done")
    except OSError as e:
        out.append(name + " refused %d" % e.errno)
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"mcp", ("127.0.0.1", port)))
def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock)
    s.sendall(b"mcp")
attempt("unix", unix)
attempt("chmod", lambda: os.chmod(scratch, 0o777))
open("probe-result.txt", "w").write("\n".join(out) + "\n")
"#,
    )
    .unwrap();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let port = udp.local_addr().unwrap().port();
    let sock = outside.path().join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    listener.set_nonblocking(true).unwrap();
    let scratch = outside.path().join("scratch.txt");
    std::fs::write(&scratch, "x").unwrap();
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let args = format!(
        "[{}, \"{port}\", {}, {}]",
        toml_str(&probe),
        toml_str(&sock),
        toml_str(&scratch)
    );
    let mut text = String::new();
    for (alias, sandbox) in [("ll", "landlock"), ("bw", "bubblewrap"), ("open", "none")] {
        text.push_str(&format!(
            "[risk_profiles.{alias}]\nlevel = \"full\"\nallowed_commands = [\"*\"]\nsandbox = \"{sandbox}\"\nworkspace_only = true\n\n[agents.{alias}]\nrisk_profile = \"{alias}\"\nmodel_provider = \"openai.main\"\nmcp_servers = [\"probe\"]\n\n"
        ));
    }
    text.push_str(&format!(
        "[mcp_servers.probe]\ncommand = \"/usr/bin/python3\"\nargs = {args}\n\n{}",
        fake.config_block("main")
    ));
    let s = setup(&text).await;
    let root = s.ws.parent().unwrap().parent().unwrap().parent().unwrap();
    let mut outcome = std::collections::BTreeMap::new();
    for alias in ["ll", "bw", "open"] {
        std::fs::set_permissions(
            &scratch,
            std::os::unix::fs::PermissionsExt::from_mode(0o644),
        )
        .unwrap();
        fake.script([Reply::text("no server")]);
        let mut rx = s.host.subscribe();
        let out = s
            .host
            .run(alias, None, "go", TurnTrigger::User, None)
            .await
            .unwrap();
        assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
        let failed = notices(&drain(&mut rx), NoticeCode::McpServerFailed);
        let ws = root.join(format!("agents/{alias}/workspace"));
        let result = std::fs::read_to_string(ws.join("probe-result.txt"))
            .unwrap_or_else(|e| panic!("[{alias}] the probe did not run: {e}; {failed:?}"));
        let mut buf = [0u8; 8];
        let datagram = matches!(udp.recv(&mut buf), Ok(3));
        let connected = listener.accept().is_ok();
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&scratch).unwrap().permissions(),
        ) & 0o777;
        outcome.insert(alias, (result, datagram, connected, mode));
    }
    // Control: unconfined, every probe got through.
    let (r, d, c, m) = &outcome["open"];
    assert!(*d && *c && *m == 0o777, "{r}");
    for alias in ["ll", "bw"] {
        let (r, d, c, m) = &outcome[alias];
        assert!(r.contains("udp refused 1"), "[{alias}] {r}");
        assert!(r.contains("unix refused"), "[{alias}] {r}");
        assert!(r.contains("chmod refused"), "[{alias}] {r}");
        assert!(
            !d && !c && *m == 0o644,
            "[{alias}] {r}: datagram {d}, connected {c}, mode {m:o}"
        );
    }
}

/// A stdio MCP server whose answer is one 64 MiB line: the transport fails at the 16 MiB bound
/// (never holding the line), the call fails, the server is reported and withdrawn, and the turn
/// completes. Its first answer, an ordinary one, is the positive control.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_message_over_the_bound_fails_the_call_and_the_turn_goes_on() {
    let outside = tempfile::tempdir().unwrap();
    let script = outside.path().join("flood.py");
    std::fs::write(&script, warren_testkit::mcp::FLOOD_SERVER).unwrap();
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("flood__small", json!({})),
        Reply::tool_call("flood__flood", json!({})),
        Reply::text("the server said too much"),
    ]);
    let s = setup(&format!(
        "[risk_profiles.yolo]\nlevel = \"full\"\nallowed_commands = [\"*\"]\n\n[agents.alice]\nrisk_profile = \"yolo\"\nmodel_provider = \"openai.main\"\nmcp_servers = [\"flood\"]\n\n[mcp_servers.flood]\ncommand = \"/usr/bin/python3\"\nargs = [{}]\n\n{}",
        toml_str(&script),
        fake.config_block("main")
    ))
    .await;
    let mut rx = s.host.subscribe();
    let out = s
        .host
        .run("alice", None, "go", TurnTrigger::User, None)
        .await
        .unwrap();
    assert_eq!(out.status, TurnStatus::Completed, "{out:?}");
    assert_eq!(out.text, "the server said too much");
    let seen = drain(&mut rx);
    let r = results(&seen);
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(r[0].0 && r[0].1.contains("small answer"), "{r:?}");
    assert!(!r[1].0, "{r:?}");
    assert!(r[1].1.len() < 64 * 1024, "the flood is not in the result");
    assert!(
        r[1].1.contains("a message longer than the 16 MiB limit"),
        "{r:?}"
    );
    let failed = notices(&seen, NoticeCode::McpServerFailed);
    assert_eq!(failed.len(), 1, "{seen:#?}");
    assert!(failed[0].contains("`flood`"), "{failed:?}");
    // The model's third request holds neither the flood nor the withdrawn tools.
    let third = fake.requests()[2].body.to_string();
    assert!(third.len() < 1024 * 1024, "{} bytes", third.len());
    assert!(!offered(&fake, 2).iter().any(|t| t.starts_with("flood__")));
}
