//! The agent side of ACP for one agent: `initialize`, `session/new`, `session/prompt` (a normal
//! turn with trigger `acp`, its events streamed as `session/update` notifications),
//! `session/cancel`, and approvals asked as `session/request_permission`.

use crate::forward::{AcpApprover, Ask, Forwarder};
use crate::params::{check_initialize, session_cwd, session_mcp_servers, Refusal};
use crate::rpc::{codes, parse_line, Incoming, Peer};
use crate::AcpError;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use warren_config::load_config;
use warren_policy::SecurityPolicy;
use warren_runtime::bounded::{Line, MAX_MESSAGE_BYTES};
use warren_runtime::error::HostError;
use warren_runtime::host::Host;
use warren_runtime::mcp::ServerSpec;
use warren_runtime::turn::kit::SessionParts;
use warren_runtime::turn::TurnStatus;
use warren_state::acp_sessions::{
    process_alive, AcpSessions, HEARTBEAT_INTERVAL, HEARTBEAT_RETRY, HEARTBEAT_TIMEOUT,
};

/// The ACP protocol version spoken here.
pub const PROTOCOL_VERSION: u64 = 1;

/// One session opened on this connection (its cwd, resolved and granted by the policy, is the
/// working directory of its tool calls and is recorded in its title in `sessions.db`).
struct Session {
    /// Stops the prompts sent so far (running or queued); replaced by a fresh token on each
    /// `session/cancel`, so later prompts are not affected.
    stop: CancellationToken,
    /// The working directory of the session's tool calls.
    cwd: PathBuf,
    /// The MCP servers the editor gave, started for each turn of the session.
    mcp: Vec<ServerSpec>,
}

struct Conn {
    host: Arc<Host>,
    agent: String,
    pid: u32,
    peer: Peer,
    acp: AcpSessions,
    sessions: Mutex<HashMap<String, Session>>,
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
                parts.push(format!("[resource: {}]", b["uri"].as_str().unwrap_or("?")));
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

    fn lock_sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The stop token of the session a `session/prompt` names, taken when the request is read
    /// (so a `session/cancel` read after it applies to it); None for an unknown session.
    fn stop_of(&self, params: &Value) -> Option<CancellationToken> {
        let session = params["sessionId"].as_str()?;
        self.lock_sessions().get(session).map(|s| s.stop.clone())
    }

    async fn handle(
        self: Arc<Self>,
        id: Value,
        method: String,
        params: Value,
        stop: Option<CancellationToken>,
    ) {
        let result = match method.as_str() {
            "initialize" => check_initialize(&params).map(|()| {
                json!({
                    "protocolVersion": PROTOCOL_VERSION,
                    "agentCapabilities": {
                        "loadSession": false,
                        "promptCapabilities": {"image": false, "audio": false, "embeddedContext": true},
                        "mcpCapabilities": {"http": false, "sse": false},
                    },
                    "authMethods": [],
                    "agentInfo": {"name": "warren", "title": format!("Warren agent `{}`", self.agent),
                        "version": env!("CARGO_PKG_VERSION")},
                })
            }),
            "authenticate" => Ok(json!({})),
            "session/new" => self.new_session(&params).await,
            "session/prompt" => self.prompt(&params, stop).await,
            other => Err((
                codes::METHOD_NOT_FOUND,
                format!("method `{other}` is not supported"),
                None,
            )),
        };
        match result {
            Ok(v) => self.peer.respond(id, v),
            Err((code, message, None)) => self.peer.respond_error(id, code, &message),
            Err((code, message, Some(data))) => {
                self.peer.respond_error_data(id, code, &message, data);
            }
        }
    }

    async fn new_session(&self, params: &Value) -> Result<Value, Refusal> {
        // The cwd is decided by the agent's policy as it is now (the config is read afresh).
        let config = load_config(self.host.layout())
            .map_err(|e| (codes::INTERNAL_ERROR, e.to_string(), None))?
            .config;
        let configured = config
            .agents
            .get(&self.agent)
            .map(|a| a.mcp_servers.clone())
            .unwrap_or_default();
        let mcp = session_mcp_servers(params, &configured)?;
        let policy = SecurityPolicy::for_agent(&config, &self.agent, &self.host.kit().policy_env())
            .map_err(|e| {
                (
                    codes::INTERNAL_ERROR,
                    format!("policy of `{}`: {e}", self.agent),
                    None,
                )
            })?;
        policy.prepare().map_err(|e| {
            (
                codes::INTERNAL_ERROR,
                format!("workspace of `{}`: {e}", self.agent),
                None,
            )
        })?;
        let cwd = session_cwd(&policy, params)?;
        let title = format!("ACP session in {}", cwd.display());
        let s = self
            .acp
            .open(&self.agent, self.pid, &title, self.now())
            .await
            .map_err(|e| (codes::INTERNAL_ERROR, e.to_string(), None))?;
        self.lock_sessions().insert(
            s.id.clone(),
            Session {
                stop: CancellationToken::new(),
                cwd,
                mcp,
            },
        );
        Ok(json!({"sessionId": s.id}))
    }

    async fn prompt(
        &self,
        params: &Value,
        stop: Option<CancellationToken>,
    ) -> Result<Value, Refusal> {
        let session = params["sessionId"].as_str().unwrap_or("").to_string();
        let Some(stop) = stop else {
            return Err((
                codes::INVALID_PARAMS,
                format!("session/prompt: unknown sessionId `{session}`"),
                None,
            ));
        };
        let text = prompt_text(&params["prompt"])
            .map_err(|m| (codes::INVALID_PARAMS, format!("session/prompt: {m}"), None))?;
        let (cwd, mcp) = self
            .lock_sessions()
            .get(&session)
            .map(|s| (Some(s.cwd.clone()), s.mcp.clone()))
            .unwrap_or_default();
        let mut events = self.host.subscribe();
        let (asks, mut asked) = mpsc::unbounded_channel::<Ask>();
        let approver = Arc::new(AcpApprover { asks });
        let run = self.host.run_stoppable(
            &self.agent,
            Some(&session),
            &text,
            warren_types::TurnTrigger::Acp,
            Some(approver),
            stop,
            SessionParts {
                cwd: cwd.as_deref(),
                mcp_servers: &mcp,
            },
        );
        tokio::pin!(run);
        let mut out = Forwarder::new(self.peer.clone(), session.clone());
        let outcome = loop {
            tokio::select! {
                r = &mut run => {
                    while let Ok(e) = events.try_recv() {
                        out.event(e);
                    }
                    break r;
                }
                Some(e) = events.recv() => out.event(e),
                Some(ask) = asked.recv() => {
                    // Events are published before the approval is asked: the call's
                    // announcement is written first.
                    while let Ok(e) = events.try_recv() {
                        out.event(e);
                    }
                    out.ask(ask);
                }
            }
        };
        match outcome {
            Ok(None) => Ok(json!({"stopReason": "cancelled"})),
            Ok(Some(o)) => match o.status {
                TurnStatus::Completed => Ok(json!({"stopReason": "end_turn"})),
                TurnStatus::Cancelled => Ok(json!({"stopReason": "cancelled"})),
                TurnStatus::Failed { code, message } => Err((
                    codes::INTERNAL_ERROR,
                    format!("the turn failed ({code}): {message}"),
                    Some(json!({"code": code})),
                )),
            },
            Err(e @ HostError::UnknownSession(_)) => {
                Err((codes::INVALID_PARAMS, e.to_string(), None))
            }
            Err(e) => Err((codes::INTERNAL_ERROR, e.to_string(), None)),
        }
    }

    /// `session/cancel`: stops that session's prompts (running or queued), nothing else.
    fn cancel(&self, params: &Value) {
        let Some(session) = params["sessionId"].as_str() else {
            return;
        };
        if let Some(s) = self.lock_sessions().get_mut(session) {
            std::mem::replace(&mut s.stop, CancellationToken::new()).cancel();
        }
    }

    /// Stops every prompt of this connection (the client is gone).
    fn cancel_all(&self) {
        for s in self.lock_sessions().values() {
            s.stop.cancel();
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
        sessions: Mutex::new(HashMap::new()),
    });
    let beat = {
        let (acp, clock) = (acp.clone(), host.kit().clock);
        tokio::spawn(async move {
            loop {
                let now = clock.now().into();
                match acp.heartbeat(pid, now).await {
                    // Every live server also ends the sessions of crashed ones, but only
                    // after its own beat landed with the same `now`: its own sessions are
                    // then fresh, so it never ends them.
                    Ok(_) => {
                        if let Err(e) = acp.reap(now, HEARTBEAT_TIMEOUT, &process_alive).await {
                            tracing::warn!("acp session reaping failed: {e}");
                        }
                        tokio::time::sleep(HEARTBEAT_INTERVAL).await;
                    }
                    // A missed beat (the database busy past its timeout) is tried again
                    // soon, well before the sessions would look stale to another reaper.
                    Err(e) => {
                        tracing::warn!("acp heartbeat failed, trying again in 1 s: {e}");
                        tokio::time::sleep(HEARTBEAT_RETRY).await;
                    }
                }
            }
        })
    };
    let mut handlers = JoinSet::new();
    let mut lines = BufReader::new(reader);
    let read_error = loop {
        let line = match warren_runtime::bounded::next_line(&mut lines, MAX_MESSAGE_BYTES).await {
            Ok(Some(Line::Text(l))) => l,
            Ok(Some(Line::TooLong(n))) => {
                // Never held whole; the client hears why and the connection goes on.
                peer.respond_error(
                    Value::Null,
                    codes::INVALID_REQUEST,
                    &format!(
                        "a message of {n} bytes is longer than the {} MiB limit; it was not read",
                        MAX_MESSAGE_BYTES / (1024 * 1024)
                    ),
                );
                continue;
            }
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
                let stop = (method == "session/prompt")
                    .then(|| conn.stop_of(&params))
                    .flatten();
                handlers.spawn(conn.clone().handle(id, method, params, stop));
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
    // The client is gone: stop its prompts, let handlers record them, end the sessions.
    conn.cancel_all();
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
