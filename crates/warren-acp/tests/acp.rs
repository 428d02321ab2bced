//! ACP in process: the JSON-RPC conversation over an in-memory pipe (errors named, a denied
//! permission reaching the model), and session liveness decided by pid and heartbeat age.

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use warren_acp::serve;
use warren_runtime::host::{Host, HostEnv};
use warren_state::acp_sessions::{AcpSessions, HEARTBEAT_TIMEOUT};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

type Lines = tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>;

async fn next(lines: &mut Lines) -> Value {
    let l = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    serde_json::from_str::<Value>(&l).unwrap()
}

type Agent = tokio::task::JoinHandle<Result<(), warren_acp::AcpError>>;

/// `alice` served over an in-memory pipe: the server task, the client's reading lines and its
/// writing half.
fn connect(h: &Arc<Host>) -> (Agent, Lines, tokio::io::WriteHalf<tokio::io::DuplexStream>) {
    let (client, server) = tokio::io::duplex(1 << 16);
    let (server_r, server_w) = tokio::io::split(server);
    let agent = tokio::spawn(serve(
        h.clone(),
        "alice",
        std::process::id(),
        server_r,
        server_w,
    ));
    let (client_r, client_w) = tokio::io::split(client);
    (agent, BufReader::new(client_r).lines(), client_w)
}

async fn host(fake: &FakeLlm) -> (TestInstall, Arc<Host>) {
    let t = TestInstall::with_config(&format!(
        "[risk_profiles.sup]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"sup\"\nmodel_provider = \"openai.main\"\n\n{}",
        fake.config_block("main")
    ))
    .unwrap();
    let env = HostEnv {
        home: Some(t.root().join("home")),
        vars: BTreeMap::new(),
    };
    let h = Arc::new(Host::open(t.layout(), env).await.unwrap());
    (t, h)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_errors_are_named_and_a_rejected_permission_reaches_the_model() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("file_write", json!({"path": "x.txt", "content": "x"})),
        Reply::text("Understood, I will not write it."),
    ]);
    let (t, h) = host(&fake).await;
    let ws = t.root().join("agents/alice/workspace");
    std::fs::create_dir_all(&ws).unwrap();
    let (agent, mut lines, mut client_w) = connect(&h);

    for line in [
        "this is not json".to_string(),
        json!({"jsonrpc": "2.0", "id": 1, "method": "session/load", "params": {}}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": "relative"}})
            .to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "session/new",
            "params": {"cwd": ws.to_str().unwrap(), "mcpServers": []}})
        .to_string(),
    ] {
        client_w
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }
    let mut answers = Vec::new();
    for _ in 0..4 {
        answers.push(next(&mut lines).await);
    }
    let by_id = |id: Value| answers.iter().find(|a| a["id"] == id).unwrap().clone();
    assert_eq!(by_id(Value::Null)["error"]["code"], -32700);
    assert_eq!(by_id(json!(1))["error"]["code"], -32601);
    assert!(by_id(json!(1))["error"]["message"]
        .as_str()
        .unwrap()
        .contains("session/load"));
    assert_eq!(by_id(json!(2))["error"]["code"], -32602);
    assert!(by_id(json!(2))["error"]["message"]
        .as_str()
        .unwrap()
        .contains("`cwd`"));
    let session = by_id(json!(3))["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    let prompt = json!({"jsonrpc": "2.0", "id": 4, "method": "session/prompt",
        "params": {"sessionId": session, "prompt": [{"type": "text", "text": "write x.txt"}]}});
    client_w
        .write_all(format!("{prompt}\n").as_bytes())
        .await
        .unwrap();
    let mut statuses = Vec::new();
    let done = loop {
        let m = next(&mut lines).await;
        if m["id"] == json!(4) && m.get("method").is_none() {
            break m;
        }
        if m["method"] == "session/request_permission" {
            let answer = json!({"jsonrpc": "2.0", "id": m["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "reject_once"}}});
            client_w
                .write_all(format!("{answer}\n").as_bytes())
                .await
                .unwrap();
        } else if m["params"]["update"]["sessionUpdate"] == "tool_call_update" {
            statuses.push(
                m["params"]["update"]["status"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
    };
    assert_eq!(done["result"]["stopReason"], "end_turn");
    assert_eq!(
        statuses,
        vec!["failed"],
        "the denied call is reported failed"
    );
    assert!(!t.root().join("agents/alice/workspace/x.txt").exists());
    // The model was told the user denied it.
    let second = &fake.requests()[1].body;
    assert!(
        second.to_string().contains("the user denied this call"),
        "{second}"
    );

    // Closing the client's write side is the end of the conversation.
    client_w.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), agent)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let s = h.sessions().session(&session).await.unwrap().unwrap();
    assert_eq!(s.kind, "acp");
    assert!(s.ended_at.is_some(), "closing the stream ends the session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_ends_when_its_process_is_gone_or_its_heartbeat_is_stale() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let (_t, h) = host(&fake).await;
    let acp = AcpSessions::new(h.sessions().clone());
    let t0: chrono::DateTime<chrono::Utc> =
        chrono::DateTime::parse_from_rfc3339("2026-03-01T12:00:00Z")
            .unwrap()
            .into();
    let live = acp.open("alice", 4242, "editor", t0).await.unwrap();
    let gone = acp.open("alice", 4343, "crashed editor", t0).await.unwrap();
    let alive = |pid: u32| pid == 4242;
    let secs = |n: i64| t0 + chrono::Duration::seconds(n);

    // Within the timeout: only the session whose process is gone ends.
    let ended = acp.reap(secs(5), HEARTBEAT_TIMEOUT, &alive).await.unwrap();
    assert_eq!(ended, vec![gone.id.clone()]);
    // Heartbeats keep the live one open past the timeout.
    acp.heartbeat(4242, secs(10)).await.unwrap();
    assert!(acp
        .reap(secs(20), HEARTBEAT_TIMEOUT, &alive)
        .await
        .unwrap()
        .is_empty());
    // A hung process (alive, silent) ends once its heartbeat is older than the timeout,
    // recorded at its last sign of life.
    let ended = acp.reap(secs(26), HEARTBEAT_TIMEOUT, &alive).await.unwrap();
    assert_eq!(ended, vec![live.id.clone()]);
    let s = h.sessions().session(&live.id).await.unwrap().unwrap();
    assert_eq!(s.ended_at.as_deref(), Some("2026-03-01T12:00:10.000000Z"));
}

/// A reaper running while sessions open never sees one without its process and heartbeat:
/// each is created with both at once, so none of them is ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_opened_while_a_reaper_runs_is_never_ended() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let (_t, h) = host(&fake).await;
    let acp = AcpSessions::new(h.sessions().clone());
    let now = || chrono::Utc::now();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reaper = {
        let (acp, stop) = (acp.clone(), stop.clone());
        tokio::spawn(async move {
            let mut ended = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                ended.extend(
                    acp.reap(now(), HEARTBEAT_TIMEOUT, &|pid| pid == 4242)
                        .await
                        .unwrap(),
                );
            }
            ended
        })
    };
    let mut opened = Vec::new();
    for i in 0..200 {
        opened.push(
            acp.open("alice", 4242, &format!("editor {i}"), now())
                .await
                .unwrap()
                .id,
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let ended = reaper.await.unwrap();
    assert!(
        ended.is_empty(),
        "{} of 200 ended while opening, the first {:?}",
        ended.len(),
        ended.first()
    );
    for id in &opened {
        let s = h.sessions().session(id).await.unwrap().unwrap();
        assert!(s.ended_at.is_none(), "{id} ended");
    }
}

/// The model repeats a call id in one round: the editor is shown each call under its own id,
/// asked about each one with its own arguments, and told how each one ended; both ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_model_call_id_is_two_calls_for_the_editor() {
    use warren_testkit::fake_llm::ScriptedCall;
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let call = |path: &str| ScriptedCall {
        id: Some("dup".into()),
        name: "file_write".into(),
        arguments: json!({"path": path, "content": path}),
    };
    fake.script([
        Reply::scripted_calls("", vec![call("one.txt"), call("two.txt")]),
        Reply::text("both written"),
    ]);
    let (t, h) = host(&fake).await;
    let ws = t.root().join("agents/alice/workspace");
    std::fs::create_dir_all(&ws).unwrap();
    let (agent, mut lines, mut client_w) = connect(&h);
    let send = |v: Value| format!("{v}\n");
    client_w
        .write_all(
            send(json!({"jsonrpc": "2.0", "id": 1, "method": "session/new",
                "params": {"cwd": ws.to_str().unwrap(), "mcpServers": []}}))
            .as_bytes(),
        )
        .await
        .unwrap();
    let session = next(&mut lines).await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    client_w
        .write_all(
            send(
                json!({"jsonrpc": "2.0", "id": 2, "method": "session/prompt",
                "params": {"sessionId": session, "prompt": [{"type": "text", "text": "write"}]}}),
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let (mut announced, mut asked, mut ended) = (Vec::new(), Vec::new(), Vec::new());
    let done = loop {
        let m = next(&mut lines).await;
        if m["id"] == json!(2) && m.get("method").is_none() {
            break m;
        }
        let update = &m["params"]["update"];
        if m["method"] == "session/request_permission" {
            let c = &m["params"]["toolCall"];
            asked.push((c["toolCallId"].clone(), c["rawInput"]["path"].clone()));
            let answer = json!({"jsonrpc": "2.0", "id": m["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}});
            client_w.write_all(send(answer).as_bytes()).await.unwrap();
        } else if update["sessionUpdate"] == "tool_call" {
            announced.push((
                update["toolCallId"].clone(),
                update["rawInput"]["path"].clone(),
            ));
        } else if update["sessionUpdate"] == "tool_call_update" && update["status"] == "completed" {
            ended.push(update["toolCallId"].clone());
        }
    };
    assert_eq!(done["result"]["stopReason"], "end_turn", "{done}");
    assert_eq!(announced.len(), 2, "{announced:?}");
    assert_ne!(announced[0].0, announced[1].0, "two ids: {announced:?}");
    assert_eq!(announced[0].1, "one.txt");
    assert_eq!(announced[1].1, "two.txt");
    // Each permission request names its own call and its own arguments.
    assert_eq!(asked, announced, "asked about exactly the announced calls");
    ended.sort_by_key(std::string::ToString::to_string);
    let mut ids: Vec<Value> = announced.iter().map(|a| a.0.clone()).collect();
    ids.sort_by_key(std::string::ToString::to_string);
    assert_eq!(ended, ids, "each call's end is reported under its own id");
    assert_eq!(
        std::fs::read_to_string(ws.join("one.txt")).unwrap(),
        "one.txt"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("two.txt")).unwrap(),
        "two.txt"
    );
    client_w.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), agent)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
