//! `warren acp` as an editor (Zed) drives it, over a real child's stdio: a tool call is
//! announced before its permission is asked, `session/cancel` stops only the named session's
//! prompt (a queued one is answered at once), `session/new` takes `cwd` through the policy and
//! refuses MCP servers, the cwd is where that session's tool calls work (decided again by each
//! turn), and `initialize` checks its params.

use super::{acp_row, Client};
use serde_json::{json, Value};
use std::path::Path;
use warren_state::db::open_sessions_db;
use warren_state::sessions::SessionStore;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

/// alice (supervised: `file_write` asks) with an allowed root, bob granted `read`, carol
/// granted `read_write`.
fn install(fake: &FakeLlm) -> (TestInstall, tempfile::TempDir) {
    let extra = tempfile::tempdir().unwrap();
    let t = TestInstall::with_config(&format!(
        r#"
[risk_profiles.sup]
level = "supervised"
auto_approve = ["file_read"]
allowed_roots = ["{root}"]

[agents.alice]
risk_profile = "sup"
model_provider = "openai.main"

[agents.alice.workspace.access]
bob = "read"
carol = "read_write"

[agents.bob]
risk_profile = "sup"

[agents.carol]
risk_profile = "sup"

{block}"#,
        root = extra.path().display(),
        block = fake.config_block("main")
    ))
    .unwrap();
    for a in ["alice", "bob", "carol"] {
        std::fs::create_dir_all(t.root().join(format!("agents/{a}/workspace"))).unwrap();
    }
    (t, extra)
}

fn prompt(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

fn cancel(session: &str) -> Value {
    json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}})
}

async fn new_session(c: &mut Client, cwd: &Path, mcp: Value) -> Value {
    let id = c
        .request(
            "session/new",
            json!({"cwd": cwd.to_str().unwrap(), "mcpServers": mcp}),
        )
        .await;
    let answer = c.next().await;
    assert_eq!(answer["id"], json!(id), "{answer}");
    answer
}

async fn turns(home: &Path, session: &str) -> Vec<String> {
    let pool = open_sessions_db(&home.join("data/sessions.db"))
        .await
        .unwrap();
    let turns = SessionStore::new(pool).turns(session).await.unwrap();
    turns.into_iter().map(|t| t.status).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_announces_a_tool_call_before_asking_permission_for_it() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("file_write", json!({"path": "order.txt", "content": "ok"})),
        Reply::text("Written."),
    ]);
    let (t, _extra) = install(&fake);
    let mut c = Client::spawn(t.root(), "alice");
    let session = c.handshake(&t.root().join("agents/alice/workspace")).await;
    let id = c.request("session/prompt", prompt(&session, "write")).await;

    // Every message in the order the agent wrote it, answering the permission request.
    let mut seen: Vec<Value> = Vec::new();
    let resp = loop {
        let m = c.next().await;
        if m["id"] == json!(id) && m.get("method").is_none() {
            break m;
        }
        if m["method"] == "session/request_permission" {
            let call = m["params"]["toolCall"]["toolCallId"].clone();
            let announced = seen.iter().any(|s| {
                s["method"] == "session/update"
                    && s["params"]["update"]["sessionUpdate"] == "tool_call"
                    && s["params"]["update"]["toolCallId"] == call
            });
            assert!(
                announced,
                "permission asked for {call} before its tool_call update: {seen:?}"
            );
            c.send(json!({"jsonrpc": "2.0", "id": m["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}))
                .await;
        }
        seen.push(m);
    };
    assert_eq!(resp["result"]["stopReason"], "end_turn", "{resp}");
    assert_eq!(
        seen.iter()
            .filter(|m| m["method"] == "session/request_permission")
            .count(),
        1
    );
    // The approval was not dropped: the call ran.
    assert_eq!(
        std::fs::read_to_string(t.root().join("agents/alice/workspace/order.txt")).unwrap(),
        "ok"
    );
    fake.acknowledge_failures();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_cancel_stops_only_the_named_sessions_prompt_even_when_queued() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("file_write", json!({"path": "a.txt", "content": "A"})),
        Reply::text("A is done."),
        Reply::text("B ran later."),
    ]);
    let (t, _extra) = install(&fake);
    let ws = t.root().join("agents/alice/workspace");
    let mut c = Client::spawn(t.root(), "alice");
    let a = c.handshake(&ws).await;
    let b = new_session(&mut c, &ws, json!([])).await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let idle = new_session(&mut c, &ws, json!([])).await["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    // A's turn runs and waits on its permission request, which is held unanswered.
    let pa = c.request("session/prompt", prompt(&a, "write a.txt")).await;
    let asked = loop {
        let m = c.next().await;
        assert!(m.get("result").is_none() && m.get("error").is_none(), "{m}");
        if m["method"] == "session/request_permission" {
            break m;
        }
    };
    // Cancelling an idle session, then a prompt queued behind A's turn.
    c.send(cancel(&idle)).await;
    let pb = c.request("session/prompt", prompt(&b, "queued")).await;
    c.send(cancel(&b)).await;
    let b_answer = loop {
        let m = c.next().await;
        assert_ne!(
            m["id"],
            json!(pa),
            "A's prompt ended while its permission was still pending: {m}"
        );
        if m["id"] == json!(pb) && m.get("method").is_none() {
            break m;
        }
    };
    assert_eq!(b_answer["result"]["stopReason"], "cancelled", "{b_answer}");

    // A goes on once its permission is answered.
    c.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}))
        .await;
    let (resp, _, _) = c.until_response(pa, "reject_once").await;
    assert_eq!(resp["result"]["stopReason"], "end_turn", "{resp}");
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "A");
    assert_eq!(fake.request_count(), 2, "the cancelled prompt never ran");
    assert_eq!(turns(t.root(), &a).await, vec!["completed"]);
    assert!(
        turns(t.root(), &b).await.is_empty(),
        "nothing recorded for B"
    );

    // The cancel applied to that prompt only: B's next prompt runs.
    let pb = c.request("session/prompt", prompt(&b, "now")).await;
    let (resp, _, _) = c.until_response(pb, "reject_once").await;
    assert_eq!(resp["result"]["stopReason"], "end_turn", "{resp}");
    assert_eq!(turns(t.root(), &b).await, vec!["completed"]);
    fake.acknowledge_failures();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_session_new_takes_cwd_through_the_policy_and_refuses_unsupported_mcp_transports() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let (t, extra) = install(&fake);
    let outside = tempfile::tempdir().unwrap();
    let mut c = Client::spawn(t.root(), "alice");
    let id = c.request("initialize", json!({"protocolVersion": 1})).await;
    assert_eq!(c.next().await["id"], json!(id));

    // Granted read+write: the workspace (and below), an allowed root, a read_write grant.
    let sub = t.root().join("agents/alice/workspace/src");
    std::fs::create_dir_all(&sub).unwrap();
    for cwd in [
        t.root().join("agents/alice/workspace"),
        sub.clone(),
        extra.path().to_path_buf(),
        t.root().join("agents/carol/workspace"),
    ] {
        let answer = new_session(&mut c, &cwd, json!([])).await;
        let session = answer["result"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("{} refused: {answer}", cwd.display()));
        assert_eq!(acp_row(t.root(), session).await.1, None);
        let pool = open_sessions_db(&t.root().join("data/sessions.db"))
            .await
            .unwrap();
        let title: String = sqlx::query_scalar("SELECT title FROM sessions WHERE id = ?")
            .bind(session)
            .fetch_one(&pool)
            .await
            .unwrap();
        let real = std::fs::canonicalize(&cwd).unwrap();
        assert_eq!(title, format!("ACP session in {}", real.display()));
    }

    // Not granted: refused with the field, the path and the rule that decided.
    for (cwd, rule) in [
        (outside.path().to_path_buf(), "outside_workspace"),
        (t.root().join("agents/bob/workspace"), "read_only_grant"),
        (t.root().join("data"), "runtime_state"),
    ] {
        let answer = new_session(&mut c, &cwd, json!([])).await;
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains("`cwd`"), "{message}");
        assert!(message.contains(rule), "{message}");
        assert!(
            message.contains(&std::fs::canonicalize(&cwd).unwrap().display().to_string()),
            "{message}"
        );
        assert_eq!(answer["error"]["data"]["code"], "cwd_not_granted");
    }

    // MCP servers of a transport this agent does not start are refused, never dropped; a
    // stdio one is taken; a relative cwd is invalid.
    let ws = t.root().join("agents/alice/workspace");
    let mcp =
        json!([{"type": "http", "name": "fs", "url": "http://127.0.0.1:9/mcp", "headers": []}]);
    let answer = new_session(&mut c, &ws, mcp).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("mcpServers") && message.contains("`fs`") && message.contains("stdio"),
        "{message}"
    );
    assert_eq!(answer["error"]["data"]["code"], "mcp_transport_unsupported");
    let mcp = json!([{"name": "fs", "command": "/bin/true", "args": [], "env": []}]);
    let answer = new_session(&mut c, &ws, mcp).await;
    assert!(answer["result"]["sessionId"].is_string(), "{answer}");
    let answer = new_session(&mut c, Path::new("relative/dir"), json!([])).await;
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    fake.acknowledge_failures();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_initialize_refuses_malformed_params() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let (t, _extra) = install(&fake);
    let mut c = Client::spawn(t.root(), "alice");
    for params in [
        json!({"protocolVersion": "one"}),
        json!({"protocolVersion": -1}),
        json!({"clientCapabilities": {}}),
        json!({"protocolVersion": 1, "clientCapabilities": "all"}),
        json!("initialize"),
    ] {
        let id = c.request("initialize", params.clone()).await;
        let answer = c.next().await;
        assert_eq!(answer["id"], json!(id));
        assert_eq!(answer["error"]["code"], -32602, "{params}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        let field = if params["protocolVersion"] == 1 {
            "clientCapabilities"
        } else {
            "protocolVersion"
        };
        assert!(message.contains(field), "{params}: {message}");
    }
    // A well-formed one still works afterwards.
    let id = c
        .request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {"fs": {}}}),
        )
        .await;
    let answer = c.next().await;
    assert_eq!(answer["id"], json!(id));
    assert_eq!(answer["result"]["protocolVersion"], 1, "{answer}");
    fake.acknowledge_failures();
}

/// Runs one prompt, allowing every permission asked; the answer and each tool call's output.
async fn allowed_prompt(c: &mut Client, session: &str) -> (Value, Vec<String>) {
    let id = c.request("session/prompt", prompt(session, "work")).await;
    let mut outputs = Vec::new();
    loop {
        let m = c.next().await;
        if m["id"] == json!(id) && m.get("method").is_none() {
            return (m, outputs);
        }
        if m["method"] == "session/request_permission" {
            c.send(json!({"jsonrpc": "2.0", "id": m["id"],
                "result": {"outcome": {"outcome": "selected", "optionId": "allow_once"}}}))
                .await;
        }
        if let Some(out) = m["params"]["update"]["rawOutput"]["output"].as_str() {
            outputs.push(out.to_string());
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_session_cwd_is_the_working_directory_of_its_tool_calls() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let (t, extra) = install(&fake);
    let own = t.root().join("agents/alice/workspace");
    let carol = t.root().join("agents/carol/workspace");
    let mut c = Client::spawn(t.root(), "alice");
    let id = c.request("initialize", json!({"protocolVersion": 1})).await;
    assert_eq!(c.next().await["id"], json!(id));

    // A read_write sibling, an allowed root, then the agent's own workspace.
    for (n, cwd) in [carol.clone(), extra.path().to_path_buf(), own.clone()]
        .iter()
        .enumerate()
    {
        let content = format!("session {n}");
        fake.script([
            Reply::tool_calls([
                (
                    "file_write",
                    json!({"path": "made.txt", "content": content}),
                ),
                ("shell", json!({"command": "pwd"})),
            ]),
            Reply::text("Done."),
        ]);
        let answer = new_session(&mut c, cwd, json!([])).await;
        let session = answer["result"]["sessionId"].as_str().unwrap().to_string();
        let (resp, outputs) = allowed_prompt(&mut c, &session).await;
        assert_eq!(resp["result"]["stopReason"], "end_turn", "{resp}");

        // The file landed in the cwd, and only there.
        assert_eq!(
            std::fs::read_to_string(cwd.join("made.txt")).unwrap(),
            content,
            "{}: {outputs:?}",
            cwd.display()
        );
        for other in [&carol, &extra.path().to_path_buf(), &own] {
            if other != cwd {
                let there = std::fs::read_to_string(other.join("made.txt")).unwrap_or_default();
                assert_ne!(there, content, "{} written", other.display());
            }
        }
        // The shell started in the cwd.
        let real = std::fs::canonicalize(cwd).unwrap().display().to_string();
        let pwd = outputs
            .iter()
            .find(|o| !o.contains("made.txt"))
            .unwrap_or_else(|| panic!("no shell output: {outputs:?}"));
        assert!(pwd.contains(&format!("{real}\\n")), "{pwd}");
    }
    fake.acknowledge_failures();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_session_cwd_is_decided_again_by_each_turn() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([Reply::tool_call(
        "file_write",
        json!({"path": "made.txt", "content": "late"}),
    )]);
    let (t, _extra) = install(&fake);
    let carol = t.root().join("agents/carol/workspace");
    let mut c = Client::spawn(t.root(), "alice");
    let id = c.request("initialize", json!({"protocolVersion": 1})).await;
    assert_eq!(c.next().await["id"], json!(id));
    let answer = new_session(&mut c, &carol, json!([])).await;
    let session = answer["result"]["sessionId"].as_str().unwrap().to_string();

    // The grant goes away after session/new: the next turn refuses to run there.
    let text = t.read_config().unwrap();
    let text = text.replace("carol = \"read_write\"", "");
    assert!(!text.contains("read_write"));
    t.write_config(&text).unwrap();
    let (resp, outputs) = allowed_prompt(&mut c, &session).await;
    let message = resp["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&std::fs::canonicalize(&carol).unwrap().display().to_string()),
        "{resp}"
    );
    assert!(outputs.is_empty(), "{outputs:?}");
    assert!(!carol.join("made.txt").exists());
    assert_eq!(fake.request_count(), 0);
    fake.acknowledge_failures();
}
