//! One MCP server: started (confined child or HTTP endpoint), its tools listed, calls made,
//! its death noticed.

use super::program::{program_dirs, resolve_program};
use super::{ServerSpec, START_TIMEOUT};
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, Tool as McpToolInfo};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::ServiceExt;
use serde::Serialize;
use serde_json::Value;
use std::ffi::OsString;
use std::io::Read;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use warren_policy::sandbox::{choose, confine_with, ConfinedChild};
use warren_tools::{ToolContext, ToolError};

/// Most bytes of a server's standard error kept for error messages.
const STDERR_KEPT: usize = 4096;

/// Whether a server can be used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", content = "error", rename_all = "snake_case")]
pub enum ServerStatus {
    /// Started and answering.
    Running,
    /// Failed to start, or stopped: its tools are withdrawn.
    Failed(String),
}

/// A started (or failed) MCP server.
pub struct McpServer {
    spec: ServerSpec,
    sandbox: Option<String>,
    tools: Vec<McpToolInfo>,
    client: Option<RunningService<RoleClient, ()>>,
    child: Mutex<Option<ConfinedChild>>,
    /// The network proxy serving the server while it runs (a profile whose network is by
    /// domain); dropped with the server.
    proxy: Mutex<Option<warren_net::ServeGuard>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    failure: Mutex<Option<String>>,
    reported: AtomicBool,
    /// Set when the server sent a message longer than the bound (its transport then failed).
    overlong: Arc<AtomicBool>,
}

/// What a successful start yields.
struct Started {
    sandbox: Option<String>,
    client: RunningService<RoleClient, ()>,
    tools: Vec<McpToolInfo>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpServer {
    /// Starts the server of `spec` for the agent of `ctx`; on failure the server is returned
    /// failed, with the reason.
    pub(crate) async fn start(
        spec: ServerSpec,
        ctx: &ToolContext,
        other_workspaces: &[PathBuf],
    ) -> McpServer {
        let mut server = McpServer {
            spec,
            sandbox: None,
            tools: Vec::new(),
            client: None,
            child: Mutex::new(None),
            proxy: Mutex::new(None),
            stderr: Arc::new(Mutex::new(Vec::new())),
            failure: Mutex::new(None),
            reported: AtomicBool::new(false),
            overlong: Arc::new(AtomicBool::new(false)),
        };
        let (command, url) = (
            server.spec.config.command.clone(),
            server.spec.config.url.clone(),
        );
        let started = match (command, url) {
            (Some(command), _) => server.start_stdio(&command, ctx, other_workspaces).await,
            (None, Some(url)) => start_http(&url).await,
            (None, None) => Err("it has neither `command` nor `url`".to_string()),
        };
        match started {
            Ok(s) => {
                server.sandbox = s.sandbox;
                server.client = Some(s.client);
                server.tools = s.tools;
            }
            Err(e) => {
                // A child that failed gets a moment to exit and write its last words.
                for _ in 0..50 {
                    let exited = lock(&server.child)
                        .as_mut()
                        .is_none_or(|c| c.try_wait().ok().flatten().is_some());
                    if exited {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                let tail = server.stderr_tail();
                let msg = if tail.is_empty() {
                    format!("failed to start: {e}")
                } else {
                    format!("failed to start: {e}; its standard error ends with: {tail}")
                };
                *lock(&server.failure) = Some(msg);
                if let Some(mut child) = lock(&server.child).take() {
                    let _ = child.terminate();
                }
            }
        }
        server
    }

    async fn start_stdio(
        &mut self,
        command: &str,
        ctx: &ToolContext,
        other_workspaces: &[PathBuf],
    ) -> Result<Started, String> {
        let policy = &ctx.policy;
        if policy.container.is_some() {
            return Err(
                "stdio MCP servers do not run under [runtime] kind = \"docker\" (no container sandbox for them)"
                    .into(),
            );
        }
        let confined = choose(policy.risk.sandbox, policy.workspace_only, &ctx.sandbox)
            .is_ok_and(|(s, _)| !matches!(s, warren_policy::sandbox::EffectiveSandbox::None));
        let mut env = warren_tools::shell::base_env(ctx, confined);
        let path_var = env
            .iter()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        let args = &self.spec.config.args;
        let program = resolve_program(command, &ctx.cwd, &path_var).ok_or_else(|| {
            let folders = path_var.split(':').filter(|d| !d.is_empty()).count();
            format!(
                "program `{command}` was not found in the {folders} folders of the server's PATH; \
                     give its full path as the command"
            )
        })?;
        let dirs = program_dirs(&program, args, &ctx.cwd);
        let confined_policy = policy
            .with_program_files(&self.spec.name, &dirs, other_workspaces)
            .map_err(|e| format!("its program files cannot be granted: {e}"))?;
        let (sandbox, _why) = choose(policy.risk.sandbox, policy.workspace_only, &ctx.sandbox)
            .map_err(|e| e.to_string())?;
        let argv: Vec<OsString> = args.iter().map(OsString::from).collect();
        // A server of a profile whose network is by domain goes through the same proxy as
        // the agent's shell commands.
        let way =
            warren_tools::shell::NetworkWay::open(ctx, &sandbox).map_err(|e| e.to_string())?;
        if let Some(port) = way.port() {
            env.extend(warren_net::proxy_env(port));
        }
        let mut confined = confine_with(
            &confined_policy,
            &sandbox,
            program.as_os_str(),
            &argv,
            &ctx.cwd,
            way.route,
        )
        .map_err(|e| e.to_string())?;
        for (k, v) in &self.spec.config.env {
            // A credential handed to the server is a secret of the process: the server's
            // errors and results that echo it reach no model, event or log.
            if warren_types::redact::names_credential(k) {
                warren_types::redact::register(v);
            }
        }
        env.extend(
            self.spec
                .config
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone())),
        );
        confined
            .command_mut()
            .env_clear()
            .envs(env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = confined
            .spawn()
            .map_err(|e| format!("{}: {e}", program.display()))?;
        *lock(&self.proxy) = way.serve(ctx, &mut child).map_err(|e| e.to_string())?;
        let (stdin, stdout, stderr) =
            (child.take_stdin(), child.take_stdout(), child.take_stderr());
        *lock(&self.child) = Some(child);
        if let Some(mut err) = stderr {
            let kept = self.stderr.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut k = lock(&kept);
                    k.extend_from_slice(&buf[..n]);
                    let over = k.len().saturating_sub(STDERR_KEPT);
                    k.drain(..over);
                }
            });
        }
        let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
            return Err("its standard input and output could not be connected".into());
        };
        let r = tokio::process::ChildStdout::from_std(stdout).map_err(|e| e.to_string())?;
        // A server's message is never held past the bound (the transport buffers whole lines).
        let r = crate::bounded::LineBound::new(r, crate::bounded::MAX_MESSAGE_BYTES)
            .on_trip(self.overlong.clone());
        let w = tokio::process::ChildStdin::from_std(stdin).map_err(|e| e.to_string())?;
        let (client, tools) = handshake(().serve((r, w))).await?;
        Ok(Started {
            sandbox: Some(sandbox.name().to_string()),
            client,
            tools,
        })
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// `config` or `session`.
    pub fn origin(&self) -> &'static str {
        self.spec.origin
    }

    /// `stdio` or `http`.
    pub fn transport(&self) -> &'static str {
        if self.spec.config.command.is_some() {
            "stdio"
        } else {
            "http"
        }
    }

    /// The sandbox a stdio server runs under (`landlock`, `bubblewrap`, `none`).
    pub fn sandbox(&self) -> Option<&str> {
        self.sandbox.as_deref()
    }

    /// The tools it listed when it started.
    pub fn tools(&self) -> &[McpToolInfo] {
        &self.tools
    }

    /// Running, or failed with the reason (noticing a server that stopped since).
    pub fn status(&self) -> ServerStatus {
        self.refresh();
        match lock(&self.failure).clone() {
            None => ServerStatus::Running,
            Some(m) => ServerStatus::Failed(m),
        }
    }

    /// Whether it can take calls.
    pub fn is_running(&self) -> bool {
        self.status() == ServerStatus::Running
    }

    /// The failure message, once (for the error event).
    pub(crate) fn take_failure(&self) -> Option<String> {
        match self.status() {
            ServerStatus::Failed(m) if !self.reported.swap(true, Ordering::SeqCst) => Some(m),
            _ => None,
        }
    }

    /// Records that the server stopped when it did: its child exited or its connection closed.
    fn refresh(&self) {
        if lock(&self.failure).is_some() {
            return;
        }
        let exited = lock(&self.child)
            .as_mut()
            .and_then(|c| c.try_wait().ok().flatten());
        let closed = self
            .client
            .as_ref()
            .is_some_and(|c| c.is_closed() || c.peer().is_transport_closed());
        let why = match (exited, closed) {
            _ if self.overlong.load(Ordering::SeqCst) => format!(
                "it sent a message longer than the {} MiB limit; the connection was closed without reading the rest",
                crate::bounded::MAX_MESSAGE_BYTES / (1024 * 1024)
            ),
            (Some(status), _) => format!("it stopped ({status})"),
            (None, true) => "its connection closed".to_string(),
            (None, false) => return,
        };
        self.fail(why);
    }

    fn fail(&self, why: String) {
        let mut failure = lock(&self.failure);
        if failure.is_some() {
            return;
        }
        let tail = self.stderr_tail();
        *failure = Some(if tail.is_empty() {
            why
        } else {
            format!("{why}; its standard error ends with: {tail}")
        });
        drop(failure);
        if let Some(mut child) = lock(&self.child).take() {
            let _ = child.terminate();
        }
    }

    fn stderr_tail(&self) -> String {
        let k = lock(&self.stderr);
        let text = String::from_utf8_lossy(&k);
        let t = text.trim();
        let start = t.len().saturating_sub(400);
        let start = (start..=t.len())
            .find(|i| t.is_char_boundary(*i))
            .unwrap_or(t.len());
        t[start..].replace('\n', " | ")
    }

    /// Calls `tool` with `args` within `shell_timeout_secs`, abandoned when the call's cancel
    /// token fires.
    pub(crate) async fn call(
        &self,
        tool: &str,
        args: &Value,
        ctx: &ToolContext,
    ) -> Result<Value, ToolError> {
        let gone = |message: String| ToolError::McpServerGone {
            server: self.spec.name.clone(),
            message,
        };
        if let ServerStatus::Failed(m) = self.status() {
            return Err(gone(m));
        }
        let Some(client) = &self.client else {
            return Err(gone("it was not started".into()));
        };
        let peer = client.peer().clone();
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = args.as_object().cloned();
        let secs = ctx.policy.runtime.shell_timeout_secs.max(1);
        let answer = tokio::select! {
            r = peer.call_tool(params) => r,
            () = tokio::time::sleep(Duration::from_secs(u64::from(secs))) => return Err(ToolError::Timeout(secs)),
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        match answer {
            Ok(result) => self.result(result, ctx.limits.max_output_bytes),
            Err(ServiceError::McpError(e)) => Err(ToolError::McpCall {
                server: self.spec.name.clone(),
                message: format!("`{tool}` refused the call: {}", e.message),
            }),
            Err(e) => {
                // Give an exiting child a moment to be seen as exited.
                for _ in 0..50 {
                    self.refresh();
                    if lock(&self.failure).is_some() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                self.fail(format!("the call failed: {e}"));
                let why = lock(&self.failure).clone().unwrap_or_else(|| e.to_string());
                Err(ToolError::McpCall {
                    server: self.spec.name.clone(),
                    message: format!("the server stopped during the call to `{tool}`: {why}"),
                })
            }
        }
    }

    fn result(&self, result: CallToolResult, cap: usize) -> Result<Value, ToolError> {
        let mut parts: Vec<String> = result.content.iter().map(describe).collect();
        if parts.is_empty() {
            if let Some(s) = &result.structured_content {
                parts.push(s.to_string());
            }
        }
        let mut text = parts.join("\n");
        if text.len() > cap {
            let mut end = cap;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text.truncate(end);
            text.push_str("\n[output truncated]");
        }
        if result.is_error == Some(true) {
            return Err(ToolError::McpCall {
                server: self.spec.name.clone(),
                message: text,
            });
        }
        Ok(Value::String(text))
    }
}

/// One content block as text: text as is, anything else named by its type.
fn describe(block: &ContentBlock) -> String {
    if let Some(t) = block.as_text() {
        return t.text.clone();
    }
    let kind = serde_json::to_value(block)
        .ok()
        .and_then(|v| v.get("type").and_then(Value::as_str).map(String::from))
        .unwrap_or_else(|| "unknown".into());
    format!("[{kind} content omitted]")
}

async fn handshake<F, E>(
    serve: F,
) -> Result<(RunningService<RoleClient, ()>, Vec<McpToolInfo>), String>
where
    F: std::future::Future<Output = Result<RunningService<RoleClient, ()>, E>>,
    E: std::fmt::Display,
{
    let client = tokio::time::timeout(START_TIMEOUT, serve)
        .await
        .map_err(|_| {
            format!(
                "no answer to `initialize` within {}s",
                START_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| format!("the MCP handshake failed: {e}"))?;
    let tools = tokio::time::timeout(START_TIMEOUT, client.peer().list_all_tools())
        .await
        .map_err(|_| {
            format!(
                "no answer to `tools/list` within {}s",
                START_TIMEOUT.as_secs()
            )
        })?
        .map_err(|e| format!("listing its tools failed: {e}"))?;
    Ok((client, tools))
}

async fn start_http(url: &str) -> Result<Started, String> {
    let http =
        warren_llm::service_client(warren_llm::ProxyMode::System).map_err(|e| e.to_string())?;
    let transport = StreamableHttpClientTransport::with_client(
        http,
        StreamableHttpClientTransportConfig::with_uri(url.to_string()),
    );
    let (client, tools) = handshake(().serve(transport)).await?;
    Ok(Started {
        sandbox: None,
        client,
        tools,
    })
}

impl Drop for McpServer {
    fn drop(&mut self) {
        // The connection goes first (the server sees its input close), then the child and
        // everything it started.
        self.client.take();
        if let Some(mut child) = lock(&self.child).take() {
            let _ = child.terminate();
        }
    }
}
