//! The agent side of ACP for one agent: `initialize`, `session/new`, `session/prompt` (a normal
//! turn with trigger `acp`, its events streamed as `session/update` notifications),
//! `session/cancel`, and approvals asked as `session/request_permission`.

use super::liveness::{process_alive, AcpSessions, HEARTBEAT_INTERVAL, HEARTBEAT_TIMEOUT};
use super::rpc::{codes, parse_line, Incoming, Peer};
use super::AcpError;
use crate::approval::{ApprovalAnswer, AsyncApprover, PendingApproval};
use crate::host::{Host, HostError};
use crate::turn::TurnStatus;
use async_trait::async_trait;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::task::JoinSet;
use warren_config::load_config;
use warren_types::{ApprovalDecision, EventKind, TurnEvent};

/// The ACP protocol version spoken here.
pub const PROTOCOL_VERSION: u64 = 1;

struct Conn {
    host: Arc<Host>,
    agent: String,
    pid: u32,
    peer: Peer,
    acp: AcpSessions,
    sessions: Mutex<HashSet<String>>,
}

/// Asks the client through `session/request_permission`.
struct AcpApprover {
    peer: Peer,
    session_id: String,
}

fn tool_kind(name: &str) -> &'static str {
    match name {
        "file_read" => "read",
        "file_write" | "file_edit" => "edit",
        "glob_search" | "content_search" | "memory_recall" => "search",
        "shell" | "git_operations" => "execute",
        _ => "other",
    }
}

fn raw_input(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}

#[async_trait]
impl AsyncApprover for AcpApprover {
    async fn ask(&self, p: PendingApproval) -> ApprovalAnswer {
        let params = json!({
            "sessionId": self.session_id,
            "toolCall": {
                "toolCallId": p.call_id,
                "title": format!("{} — {}", p.tool, p.reason),
                "kind": tool_kind(&p.tool),
                "status": "pending",
                "rawInput": raw_input(&p.arguments),
            },
            "options": [
                {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "allow_session", "name": "Allow for this session", "kind": "allow_always"},
                {"optionId": "reject_once", "name": "Reject", "kind": "reject_once"},
            ],
        });
        match self
            .peer
            .request("session/request_permission", params)
            .await
        {
            Ok(r) => match (
                r["outcome"]["outcome"].as_str(),
                r["outcome"]["optionId"].as_str(),
            ) {
                (Some("selected"), Some("allow_once")) => ApprovalAnswer::approve(),
                (Some("selected"), Some("allow_session")) => ApprovalAnswer {
                    decision: ApprovalDecision::ApproveSession,
                    message: None,
                    no_one_to_ask: false,
                },
                (Some("selected"), Some("reject_once")) => ApprovalAnswer::deny(None),
                (Some("cancelled"), _) => {
                    ApprovalAnswer::deny(Some("the client cancelled the permission request".into()))
                }
                _ => ApprovalAnswer::deny(Some(format!(
                    "the client's answer was not understood: {r}"
                ))),
            },
            Err(_) => ApprovalAnswer::no_one(),
        }
    }
}

/// The `session/update` of one turn event, if it has one.
fn update_of(e: &TurnEvent) -> Option<Value> {
    Some(match &e.kind {
        EventKind::TextDelta { text } => json!({
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text},
        }),
        EventKind::Notice { message, .. } => json!({
            "sessionUpdate": "agent_thought_chunk",
            "content": {"type": "text", "text": message},
        }),
        EventKind::ToolCall {
            id,
            name,
            arguments,
        } => json!({
            "sessionUpdate": "tool_call",
            "toolCallId": id,
            "title": name,
            "kind": tool_kind(name),
            "status": "pending",
            "rawInput": raw_input(arguments),
        }),
        EventKind::ApprovalResolved { id, decision, .. } if *decision != ApprovalDecision::Deny => {
            json!({"sessionUpdate": "tool_call_update", "toolCallId": id, "status": "in_progress"})
        }
        EventKind::ToolResult { id, ok, output, .. } => json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": id,
            "status": if *ok { "completed" } else { "failed" },
            "content": [{"type": "content", "content": {"type": "text", "text": output}}],
            "rawOutput": {"ok": ok, "output": output},
        }),
        _ => return None,
    })
}

/// The prompt text of `session/prompt` content blocks.
fn prompt_text(blocks: &Value) -> Result<String, String> {
    let blocks = blocks
        .as_array()
        .ok_or("`prompt` must be an array of content blocks")?;
    let mut parts = Vec::new();
    for (i, b) in blocks.iter().enumerate() {
        match b["type"].as_str() {
            Some("text") => parts.push(b["text"].as_str().unwrap_or_default().to_string()),
            Some("resource_link") => {
                parts.push(format!("[resource: {}]", b["uri"].as_str().unwrap_or("?")))
            }
            Some("resource") => match b["resource"]["text"].as_str() {
                Some(t) => parts.push(format!(
                    "[resource {}]\n{t}",
                    b["resource"]["uri"].as_str().unwrap_or("?")
                )),
                None => return Err(format!("prompt[{i}]: only text resources are supported")),
            },
            other => {
                return Err(format!(
                    "prompt[{i}]: content type {} is not supported (text, resource_link, resource)",
                    other.unwrap_or("(missing)")
                ))
            }
        }
    }
    let text = parts.join("\n");
    if text.trim().is_empty() {
        return Err("`prompt` has no text".into());
    }
    Ok(text)
}

impl Conn {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.host.kit().clock.now().into()
    }

    fn owns(&self, session: &str) -> bool {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(session)
    }

    async fn handle(self: Arc<Self>, id: Value, method: String, params: Value) {
        let result = match method.as_str() {
            "initialize" => Ok(json!({
                "protocolVersion": PROTOCOL_VERSION,
                "agentCapabilities": {
                    "loadSession": false,
                    "promptCapabilities": {"image": false, "audio": false, "embeddedContext": true},
                },
                "authMethods": [],
                "agentInfo": {"name": "warren", "title": format!("Warren agent `{}`", self.agent),
                    "version": env!("CARGO_PKG_VERSION")},
            })),
            "authenticate" => Ok(json!({})),
            "session/new" => self.new_session(&params).await,
            "session/prompt" => self.prompt(&params).await,
            other => Err((
                codes::METHOD_NOT_FOUND,
                format!("method `{other}` is not supported"),
            )),
        };
        match result {
            Ok(v) => self.peer.respond(id, v),
            Err((code, message)) => self.peer.respond_error(id, code, &message),
        }
    }

    async fn new_session(&self, params: &Value) -> Result<Value, (i64, String)> {
        let cwd = params["cwd"].as_str().unwrap_or("");
        if !cwd.starts_with('/') {
            return Err((
                codes::INVALID_PARAMS,
                "session/new: `cwd` must be an absolute path".into(),
            ));
        }
        let title = format!("ACP session in {cwd}");
        let s = self
            .acp
            .open(&self.agent, self.pid, &title, self.now())
            .await
            .map_err(|e| (codes::INTERNAL_ERROR, e.to_string()))?;
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(s.id.clone());
        Ok(json!({"sessionId": s.id}))
    }

    async fn prompt(&self, params: &Value) -> Result<Value, (i64, String)> {
        let session = params["sessionId"].as_str().unwrap_or("").to_string();
        if !self.owns(&session) {
            return Err((
                codes::INVALID_PARAMS,
                format!("session/prompt: unknown sessionId `{session}`"),
            ));
        }
        let text = prompt_text(&params["prompt"])
            .map_err(|m| (codes::INVALID_PARAMS, format!("session/prompt: {m}")))?;
        let mut rx = self.host.subscribe();
        let approver = Arc::new(AcpApprover {
            peer: self.peer.clone(),
            session_id: session.clone(),
        });
        let run = self
            .host
            .run(&self.agent, Some(&session), &text, "acp", Some(approver));
        tokio::pin!(run);
        let mut turn: Option<String> = None;
        let mut forward = |e: TurnEvent| {
            if e.parent.is_some() {
                return;
            }
            if let EventKind::TurnStarted { session_id, .. } = &e.kind {
                if *session_id == session {
                    turn = Some(e.turn_id.clone());
                }
            }
            if turn.as_deref() == Some(e.turn_id.as_str()) {
                if let Some(update) = update_of(&e) {
                    self.peer.notify(
                        "session/update",
                        json!({"sessionId": session, "update": update}),
                    );
                }
            }
        };
        let outcome = loop {
            tokio::select! {
                r = &mut run => {
                    while let Ok(e) = rx.try_recv() {
                        forward(e);
                    }
                    break r;
                }
                Some(e) = rx.recv() => forward(e),
            }
        };
        match outcome {
            Ok(o) => match o.status {
                TurnStatus::Completed => Ok(json!({"stopReason": "end_turn"})),
                TurnStatus::Cancelled => Ok(json!({"stopReason": "cancelled"})),
                TurnStatus::Failed { code, message } => Err((
                    codes::INTERNAL_ERROR,
                    format!("the turn failed ({code}): {message}"),
                )),
            },
            Err(e @ HostError::UnknownSession(_)) => Err((codes::INVALID_PARAMS, e.to_string())),
            Err(e) => Err((codes::INTERNAL_ERROR, e.to_string())),
        }
    }

    fn cancel(&self, params: &Value) {
        if params["sessionId"].as_str().is_some_and(|s| self.owns(s)) {
            self.host.cancel(&self.agent);
        }
    }
}

/// Serves ACP for `agent` on `reader`/`writer` until the client closes its end. `pid` is the
/// serving process, recorded with each session for liveness.
pub async fn serve<R, W>(
    host: Arc<Host>,
    agent: &str,
    pid: u32,
    reader: R,
    writer: W,
) -> Result<(), AcpError>
where
    R: AsyncRead + Unpin + Send,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let config = load_config(host.layout())
        .map_err(|e| AcpError::Host(HostError::Config(e)))?
        .config;
    match config.agents.get(agent) {
        None => return Err(AcpError::Host(HostError::UnknownAgent(agent.to_string()))),
        Some(a) if !a.enabled => {
            return Err(AcpError::Host(HostError::Disabled(agent.to_string())))
        }
        Some(_) => {}
    }
    let acp = AcpSessions::new(host.sessions().clone());
    let (peer, writer_task) = Peer::spawn(writer);
    let conn = Arc::new(Conn {
        host: host.clone(),
        agent: agent.to_string(),
        pid,
        peer: peer.clone(),
        acp: acp.clone(),
        sessions: Mutex::new(HashSet::new()),
    });
    let beat = {
        let (acp, clock) = (acp.clone(), host.kit().clock);
        tokio::spawn(async move {
            loop {
                let now = clock.now().into();
                if let Err(e) = acp.heartbeat(pid, now).await {
                    tracing::warn!("acp heartbeat failed: {e}");
                }
                // Every live server also ends the sessions of crashed ones.
                if let Err(e) = acp.reap(now, HEARTBEAT_TIMEOUT, &process_alive).await {
                    tracing::warn!("acp session reaping failed: {e}");
                }
                tokio::time::sleep(HEARTBEAT_INTERVAL).await;
            }
        })
    };
    let mut handlers = JoinSet::new();
    let mut lines = BufReader::new(reader).lines();
    let read_error = loop {
        let line = match lines.next_line().await {
            Ok(Some(l)) => l,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(&line) {
            Incoming::Call {
                id: Some(id),
                method,
                params,
            } => {
                handlers.spawn(conn.clone().handle(id, method, params));
            }
            Incoming::Call {
                id: None,
                method,
                params,
            } => match method.as_str() {
                "session/cancel" => conn.cancel(&params),
                other => tracing::debug!("acp: ignoring notification `{other}`"),
            },
            Incoming::Response { id, result } => {
                if !peer.deliver(id, result) {
                    tracing::warn!("acp: a response to unknown request {id}");
                }
            }
            Incoming::Invalid { id, code, message } => peer.respond_error(id, code, &message),
        }
    };
    // The client is gone: stop the running turn, let handlers record it, end the sessions.
    host.cancel(agent);
    peer.close_pending();
    while handlers.join_next().await.is_some() {}
    beat.abort();
    let now = conn.now();
    acp.end_all(pid, now).await.map_err(AcpError::Db)?;
    drop(conn);
    drop(peer);
    let _ = writer_task.await;
    match read_error {
        Some(e) => Err(AcpError::Io(e)),
        None => Ok(()),
    }
}
