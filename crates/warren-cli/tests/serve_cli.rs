//! `warren acp` driven by a real JSON-RPC client over the child's stdio, a `kill -9`d ACP
//! process leaving an ended session, and `warren serve` stopping cleanly on SIGTERM.

mod acp;

use serde_json::{json, Value};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use warren_state::acp_sessions::{process_alive, AcpSessions, HEARTBEAT_TIMEOUT};
use warren_state::db::open_sessions_db;
use warren_state::sessions::SessionStore;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

const WAIT: Duration = Duration::from_secs(60);

fn install(fake: &FakeLlm, extra: &str) -> TestInstall {
    TestInstall::with_config(&format!(
        r#"
[risk_profiles.sup]
level = "supervised"
auto_approve = ["file_read"]

[agents.alice]
risk_profile = "sup"
model_provider = "openai.main"

{extra}

{}"#,
        fake.config_block("main")
    ))
    .unwrap()
}

/// alice's workspace, created (an ACP session's `cwd` must be a directory the policy grants).
fn workspace(t: &TestInstall) -> std::path::PathBuf {
    let ws = t.root().join("agents/alice/workspace");
    std::fs::create_dir_all(&ws).unwrap();
    ws
}

fn warren(home: &std::path::Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_warren"));
    c.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.join("fake-home"))
        .arg("--home")
        .arg(home)
        .args(args)
        .kill_on_drop(true);
    c
}

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
}

impl Client {
    fn spawn(home: &std::path::Path, agent: &str) -> Client {
        let mut child = warren(home, &["acp", "--agent", agent])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Client {
            child,
            stdin,
            lines,
            next_id: 1,
        }
    }

    async fn send(&mut self, v: Value) {
        let mut line = v.to_string();
        line.push('\n');
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).await.unwrap();
        stdin.flush().await.unwrap();
    }

    async fn request(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(WAIT, self.lines.next_line())
            .await
            .expect("the agent answered in time")
            .unwrap()
            .expect("the agent's stdout is open");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Reads until the response to `id`, collecting notifications and answering permission
    /// requests with `option`.
    async fn until_response(&mut self, id: i64, option: &str) -> (Value, Vec<Value>, Vec<Value>) {
        let (mut updates, mut asked) = (Vec::new(), Vec::new());
        loop {
            let m = self.next().await;
            if m["id"] == json!(id) && m.get("method").is_none() {
                return (m, updates, asked);
            }
            match m["method"].as_str() {
                Some("session/update") => updates.push(m["params"]["update"].clone()),
                Some("session/request_permission") => {
                    asked.push(m["params"].clone());
                    let answer = json!({"jsonrpc": "2.0", "id": m["id"],
                        "result": {"outcome": {"outcome": "selected", "optionId": option}}});
                    self.send(answer).await;
                }
                _ => panic!("unexpected message {m}"),
            }
        }
    }

    async fn handshake(&mut self, cwd: &std::path::Path) -> String {
        let id = self
            .request(
                "initialize",
                json!({"protocolVersion": 1, "clientCapabilities": {}}),
            )
            .await;
        let init = self.next().await;
        assert_eq!(init["id"], json!(id));
        assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
        let id = self
            .request(
                "session/new",
                json!({"cwd": cwd.to_str().unwrap(), "mcpServers": []}),
            )
            .await;
        let new = self.next().await;
        assert_eq!(new["id"], json!(id));
        new["result"]["sessionId"].as_str().unwrap().to_string()
    }
}

async fn acp_row(home: &std::path::Path, session: &str) -> (Option<i64>, Option<String>) {
    let pool = open_sessions_db(&home.join("data/sessions.db"))
        .await
        .unwrap();
    let row: (Option<i64>, Option<String>) =
        sqlx::query_as("SELECT pid, ended_at FROM sessions WHERE id = ? AND kind = 'acp'")
            .bind(session)
            .fetch_one(&pool)
            .await
            .unwrap();
    row
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_client_prompts_answers_a_permission_and_cancels_a_second_prompt() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call(
            "file_write",
            json!({"path": "acp.txt", "content": "from the editor"}),
        ),
        Reply::text("The file is written."),
        Reply::text("this answer never arrives").delay(Duration::from_secs(30)),
    ]);
    let t = install(&fake, "");
    let mut c = Client::spawn(t.root(), "alice");
    let session = c.handshake(&workspace(&t)).await;

    let id = c
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "write acp.txt"}]}),
        )
        .await;
    let (resp, updates, asked) = c.until_response(id, "allow_once").await;
    assert_eq!(resp["result"]["stopReason"], "end_turn", "{resp}");
    assert_eq!(asked.len(), 1, "one permission request");
    assert_eq!(asked[0]["sessionId"], json!(session));
    assert_eq!(asked[0]["toolCall"]["rawInput"]["path"], "acp.txt");
    let kinds: Vec<&str> = updates
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"tool_call"), "{kinds:?}");
    let call = updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap();
    assert_eq!(call["kind"], "edit");
    assert!(updates
        .iter()
        .any(|u| u["sessionUpdate"] == "tool_call_update"
            && u["toolCallId"] == call["toolCallId"]
            && u["status"] == "completed"));
    let text: String = updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "The file is written.");
    assert_eq!(
        std::fs::read_to_string(t.root().join("agents/alice/workspace/acp.txt")).unwrap(),
        "from the editor"
    );

    // A second prompt, cancelled while the model is still thinking.
    let id = c
        .request(
            "session/prompt",
            json!({"sessionId": session, "prompt": [{"type": "text", "text": "take your time"}]}),
        )
        .await;
    assert!(fake.wait_for_requests(3, WAIT).await);
    c.send(json!({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": session}}))
        .await;
    let (resp, _, _) = c.until_response(id, "reject_once").await;
    assert_eq!(resp["result"]["stopReason"], "cancelled", "{resp}");

    // Errors name what is wrong.
    let id = c
        .request("session/prompt", json!({"sessionId": "nope", "prompt": []}))
        .await;
    let err = c.next().await;
    assert_eq!(err["id"], json!(id));
    assert_eq!(err["error"]["code"], -32602);
    assert!(err["error"]["message"].as_str().unwrap().contains("`nope`"));

    // Recorded: an ACP session of alice served by this pid, two turns, live until stdin closes.
    let pid = i64::from(c.child.id().unwrap());
    assert_eq!(acp_row(t.root(), &session).await, (Some(pid), None));
    let pool = open_sessions_db(&t.root().join("data/sessions.db"))
        .await
        .unwrap();
    let turns = SessionStore::new(pool).turns(&session).await.unwrap();
    let statuses: Vec<(&str, &str)> = turns
        .iter()
        .map(|t| (t.trigger.as_str(), t.status.as_str()))
        .collect();
    assert_eq!(statuses, vec![("acp", "completed"), ("acp", "cancelled")]);
    c.stdin.take();
    let status = tokio::time::timeout(WAIT, c.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
    assert!(
        acp_row(t.root(), &session).await.1.is_some(),
        "ended on close"
    );
    fake.acknowledge_failures();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_acp_process_leaves_an_ended_session() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = install(&fake, "");
    let mut c = Client::spawn(t.root(), "alice");
    let session = c.handshake(&workspace(&t)).await;
    let pid = c.child.id().unwrap();
    assert_eq!(
        acp_row(t.root(), &session).await,
        (Some(i64::from(pid)), None)
    );

    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    c.child.wait().await.unwrap();
    assert!(!process_alive(pid));

    // Whoever looks next (`warren serve`, another ACP server, a delete) ends it.
    let pool = open_sessions_db(&t.root().join("data/sessions.db"))
        .await
        .unwrap();
    let acp = AcpSessions::new(SessionStore::new(pool));
    let live = acp
        .live_for_agent("alice", std::time::SystemTime::now().into())
        .await
        .unwrap();
    assert!(live.is_empty(), "{live:?}");
    assert!(acp_row(t.root(), &session).await.1.is_some());
    let again = acp
        .reap(
            std::time::SystemTime::now().into(),
            HEARTBEAT_TIMEOUT,
            &process_alive,
        )
        .await
        .unwrap();
    assert!(again.is_empty(), "ended once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_runs_cron_and_on_sigterm_cancels_and_records_the_running_turn() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([Reply::text("slow").delay(Duration::from_secs(60))]);
    let t = install(
        &fake,
        "[cron.every_second]\nagent = \"alice\"\nschedule = \"* * * * * *\"\nprompt = \"tick\"\n",
    );
    let mut child = warren(t.root(), &["serve"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap()).lines();
    let ready = tokio::time::timeout(WAIT, err.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(
        ready.contains("ready") && ready.contains("1 agents"),
        "{ready}"
    );
    assert!(
        fake.wait_for_requests(1, WAIT).await,
        "the cron run reached the model"
    );

    let pid = child.id().unwrap().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let out = tokio::time::timeout(WAIT, child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("1 cancelled at shutdown"), "{stdout}");

    // The run and its turn are recorded as cancelled.
    let cron = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        t.root().join("data/cron.db").display()
    ))
    .await
    .unwrap();
    let runs: Vec<(String, String, Option<String>)> = sqlx::query_as(
        "SELECT job, status, turn_id FROM runs WHERE status != 'skipped' ORDER BY id",
    )
    .fetch_all(&cron)
    .await
    .unwrap();
    assert_eq!(runs.len(), 1, "{runs:?}");
    assert_eq!(
        (runs[0].0.as_str(), runs[0].1.as_str()),
        ("every_second", "cancelled")
    );
    let pool = open_sessions_db(&t.root().join("data/sessions.db"))
        .await
        .unwrap();
    let status: String = sqlx::query_scalar("SELECT status FROM turns WHERE id = ?")
        .bind(runs[0].2.as_deref().unwrap())
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(status, "cancelled");
    fake.acknowledge_failures();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_for_an_unknown_agent_fails_with_a_clear_error() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = install(&fake, "");
    let out = warren(t.root(), &["acp", "--agent", "zed"])
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "stdout belongs to the protocol");
    assert!(String::from_utf8_lossy(&out.stderr).contains("`zed`"));
}
