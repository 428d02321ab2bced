//! Oversized input is refused with bounded memory (docs/security.md, "Limits"): a streamed
//! reply that never ends its text, and a 128 MiB ACP line. Each case runs `warren acp` as a
//! child and reads that child's own peak RSS (`VmHWM`, while it still runs), beside a floor
//! measured in the same process first: the same exchange with an ordinary input.

use crate::common::warren_cmd;
use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_testkit::TestInstall;
use warren_types::ProviderFamily;

/// `warren acp` as a child whose peak resident set (`VmHWM` of its own image, read while it
/// still runs) is read after each exchange.
struct Acp {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl Acp {
    fn spawn(home: &Path) -> Acp {
        let mut child = warren_cmd(home)
            .args(["acp", "--agent", "alice"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
        Acp {
            child,
            stdin,
            lines,
        }
    }

    fn send(&mut self, bytes: &[u8]) {
        let w = self.stdin.as_mut().unwrap();
        w.write_all(bytes).unwrap();
        w.flush().unwrap();
    }

    fn request(&mut self, id: i64, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
            .to_string()
            + "\n";
        self.send(line.as_bytes());
    }

    /// Messages up to and including the answer to `id` (a null id answers a skipped line).
    fn until(&mut self, id: Value) -> Vec<Value> {
        let mut got = Vec::new();
        for line in self.lines.by_ref() {
            let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
            let done = v["id"] == id && v.get("method").is_none();
            got.push(v);
            if done {
                return got;
            }
        }
        panic!("warren acp ended before answering {id}: {got:?}");
    }

    /// The child's peak resident set so far, in MiB.
    fn peak_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap();
        kib / 1024.0
    }

    fn handshake(&mut self, cwd: &Path) -> String {
        self.request(
            1,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        let init = self.until(json!(1));
        assert_eq!(init.last().unwrap()["result"]["protocolVersion"], 1);
        self.request(2, "session/new", json!({"cwd": cwd, "mcpServers": []}));
        let new = self.until(json!(2));
        new.last().unwrap()["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

impl Drop for Acp {
    fn drop(&mut self) {
        self.stdin.take();
        let _ = self.child.wait();
    }
}

fn install(fake: &FakeLlm) -> TestInstall {
    let t = TestInstall::with_config(&format!(
        "[risk_profiles.p]\nlevel = \"full\"\n\n[agents.alice]\nrisk_profile = \"p\"\nmodel_provider = \"openai.main\"\n\n{}",
        fake.config_block("main")
    ))
    .unwrap();
    std::fs::create_dir_all(t.root().join("agents/alice/workspace")).unwrap();
    t
}

/// An OpenAI stream of `pieces` text deltas of 1000 characters each, then the end marker.
fn stream(pieces: usize) -> String {
    let text = "w".repeat(1000);
    let mut s = String::new();
    for _ in 0..pieces {
        s.push_str(&format!(
            "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake-model\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":null}}]}}\n\n"
        ));
    }
    s.push_str("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"fake-model\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_over_the_bound_fails_its_turn_with_bounded_memory() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    // The floor: a 1 MB reply, then the attack: 48 MB of text in one streamed reply.
    fake.script([
        Reply::raw(200, "text/event-stream", &stream(1_000)),
        Reply::raw(200, "text/event-stream", &stream(48_000)),
    ]);
    let t = install(&fake);
    let home = t.root().to_path_buf();
    let (floor, ended, attack, answer) = tokio::task::spawn_blocking(move || {
        let mut acp = Acp::spawn(&home);
        let session = acp.handshake(&home.join("agents/alice/workspace"));
        let prompt =
            |text: &str| json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        acp.request(3, "session/prompt", prompt("say a lot"));
        let first = acp.until(json!(3));
        let floor = acp.peak_mib();
        acp.request(4, "session/prompt", prompt("say more"));
        let second = acp.until(json!(4));
        let attack = acp.peak_mib();
        (floor, first, attack, second)
    })
    .await
    .unwrap();
    // Positive control: the ordinary reply arrives whole through the same path.
    assert_eq!(
        ended.last().unwrap()["result"]["stopReason"],
        "end_turn",
        "{:?}",
        ended.last()
    );
    let streamed: usize = ended
        .iter()
        .filter_map(|m| m["params"]["update"]["content"]["text"].as_str())
        .map(str::len)
        .sum();
    assert_eq!(streamed, 1_000_000);
    let last = answer.last().unwrap().to_string();
    assert!(last.contains("more than 8 MiB of text"), "{last}");
    println!("peak RSS: after a 1 MB reply {floor:.1} MiB, after a 48 MB reply refused at 8 MiB {attack:.1} MiB");
    assert!(
        attack < floor + 64.0,
        "the refused reply took {attack:.1} MiB against a floor of {floor:.1} MiB"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_line_over_the_bound_is_skipped_with_bounded_memory() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    let t = install(&fake);
    let home = t.root().to_path_buf();
    let (floor, skipped, attack, after) = tokio::task::spawn_blocking(move || {
        let mut acp = Acp::spawn(&home);
        acp.request(
            1,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        acp.until(json!(1));
        let floor = acp.peak_mib();
        // One 128 MiB line (a JSON string that never ends), then a request.
        let mut line = b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"x\",\"params\":\"".to_vec();
        line.resize(128 * 1024 * 1024, b'a');
        line.push(b'\n');
        acp.send(&line);
        drop(line);
        let skipped = acp.until(Value::Null);
        acp.request(
            5,
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        let after = acp.until(json!(5));
        let attack = acp.peak_mib();
        (floor, skipped, attack, after)
    })
    .await
    .unwrap();
    let e = skipped.last().unwrap();
    assert_eq!(e["error"]["code"], -32600, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("longer than the 16 MiB limit"),
        "{e}"
    );
    // The connection goes on: the next request is answered.
    assert_eq!(after.last().unwrap()["result"]["protocolVersion"], 1);
    println!("peak RSS: ACP initialize {floor:.1} MiB, after a 128 MiB line {attack:.1} MiB");
    assert!(
        attack < floor + 32.0,
        "the skipped line took {attack:.1} MiB against a floor of {floor:.1} MiB"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_message_over_the_bound_fails_its_call_with_bounded_memory() {
    let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
    fake.script([
        Reply::tool_call("flood__small", json!({})),
        Reply::text("small done"),
        Reply::tool_call("flood__flood", json!({})),
        Reply::text("the server said too much"),
    ]);
    let scripts = tempfile::tempdir().unwrap();
    let script = scripts.path().join("flood.py");
    std::fs::write(&script, warren_testkit::mcp::FLOOD_SERVER).unwrap();
    let t = TestInstall::with_config(&format!(
        "[risk_profiles.p]\nlevel = \"full\"\n\n[agents.alice]\nrisk_profile = \"p\"\nmodel_provider = \"openai.main\"\nmcp_servers = [\"flood\"]\n\n[mcp_servers.flood]\ncommand = \"/usr/bin/python3\"\nargs = [{}]\n\n{}",
        Value::from(script.to_str().unwrap()),
        fake.config_block("main")
    ))
    .unwrap();
    std::fs::create_dir_all(t.root().join("agents/alice/workspace")).unwrap();
    let home = t.root().to_path_buf();
    let (floor, small, attack, flood) = tokio::task::spawn_blocking(move || {
        let mut acp = Acp::spawn(&home);
        let session = acp.handshake(&home.join("agents/alice/workspace"));
        let prompt =
            |text: &str| json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
        acp.request(3, "session/prompt", prompt("ask small"));
        let small = acp.until(json!(3));
        let floor = acp.peak_mib();
        acp.request(4, "session/prompt", prompt("ask flood"));
        let flood = acp.until(json!(4));
        let attack = acp.peak_mib();
        (floor, small, attack, flood)
    })
    .await
    .unwrap();
    let statuses = |msgs: &[Value]| -> Vec<String> {
        msgs.iter()
            .filter(|m| m["params"]["update"]["sessionUpdate"] == "tool_call_update")
            .filter_map(|m| m["params"]["update"]["status"].as_str().map(String::from))
            .collect()
    };
    // Positive control: the server's ordinary answer came back through the same transport.
    assert_eq!(statuses(&small), vec!["completed"], "{small:?}");
    assert_eq!(small.last().unwrap()["result"]["stopReason"], "end_turn");
    // The flood failed its call; the turn went on to its answer.
    assert_eq!(statuses(&flood), vec!["failed"]);
    let said = serde_json::to_string(&flood).unwrap();
    assert!(
        said.contains("a message longer than the 16 MiB limit"),
        "the failure names the limit: {said}"
    );
    assert_eq!(flood.last().unwrap()["result"]["stopReason"], "end_turn");
    println!("peak RSS: after an ordinary MCP answer {floor:.1} MiB, after a 64 MiB MCP line {attack:.1} MiB");
    assert!(
        attack < floor + 48.0,
        "the refused message took {attack:.1} MiB against a floor of {floor:.1} MiB"
    );
}
