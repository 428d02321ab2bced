//! The HTTP side: one axum server per test on 127.0.0.1:0 that records every request, replays
//! the script, and answers anything unexpected with a loud 500 and a recorded failure.

use super::script::{RenderCtx, Rendered, Reply};
use super::{anthropic, ollama, openai};
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::Response;
use bytes::Bytes;
use futures::StreamExt;
use serde_json::{json, Value};
use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use warren_types::ProviderFamily;

/// One request the fake server received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// HTTP method.
    pub method: String,
    /// Request path (`/v1/chat/completions`, ...).
    pub path: String,
    /// Headers, names lowercased (several values joined with `, `).
    pub headers: BTreeMap<String, String>,
    /// The body parsed as JSON (`Value::Null` when it was not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }
}

#[derive(Debug)]
struct Shared {
    family: ProviderFamily,
    script: VecDeque<Reply>,
    scripted: usize,
    requests: Vec<RecordedRequest>,
    /// Requests received, kept or not.
    received: usize,
    /// Whether each request is kept for [`FakeLlm::requests`] (see [`FakeLlm::keep_requests`]).
    keep_requests: bool,
    failures: Vec<String>,
    /// What the model list endpoint lists.
    models: Vec<String>,
    /// When set, the model list endpoint answers this error instead.
    models_error: Option<Reply>,
    /// The most models Anthropic's list puts on one page (the API's own cap is 1000).
    models_page: usize,
}

/// What the handler and the test share: the state, and a signal for each arriving request.
#[derive(Debug)]
struct Ctx {
    state: Mutex<Shared>,
    arrived: tokio::sync::Notify,
}

fn lock(c: &Ctx) -> MutexGuard<'_, Shared> {
    c.state
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A fake provider server speaking one vendor's wire format. Dropping it stops the server and
/// panics if it saw unexpected requests that the test did not acknowledge.
#[derive(Debug)]
pub struct FakeLlm {
    family: ProviderFamily,
    addr: SocketAddr,
    shared: Arc<Ctx>,
    task: tokio::task::JoinHandle<()>,
}

/// The path of each family's model list (`GET`).
pub fn models_path(family: ProviderFamily) -> &'static str {
    match family {
        ProviderFamily::Openai | ProviderFamily::Anthropic => "/v1/models",
        ProviderFamily::Ollama => "/api/tags",
    }
}

/// The models a fake server lists until the test sets others.
pub const FAKE_MODELS: [&str; 2] = ["fake-model", "fake-model-large"];

/// The request path each family serves.
pub fn wire_path(family: ProviderFamily) -> &'static str {
    match family {
        ProviderFamily::Openai => "/v1/chat/completions",
        ProviderFamily::Anthropic => "/v1/messages",
        ProviderFamily::Ollama => "/api/chat",
    }
}

impl FakeLlm {
    /// Starts a server for `family` on 127.0.0.1 (a free port). Call inside a tokio runtime.
    pub fn start(family: ProviderFamily) -> std::io::Result<FakeLlm> {
        let handle = tokio::runtime::Handle::try_current()
            .map_err(|e| std::io::Error::other(format!("FakeLlm needs a tokio runtime: {e}")))?;
        let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let listener = {
            let _guard = handle.enter();
            tokio::net::TcpListener::from_std(std_listener)?
        };
        let shared = Arc::new(Ctx {
            state: Mutex::new(Shared {
                family,
                script: VecDeque::new(),
                scripted: 0,
                requests: Vec::new(),
                received: 0,
                keep_requests: true,
                failures: Vec::new(),
                models: FAKE_MODELS
                    .iter()
                    .map(std::string::ToString::to_string)
                    .collect(),
                models_error: None,
                models_page: 1000,
            }),
            arrived: tokio::sync::Notify::new(),
        });
        let app = axum::Router::new()
            .fallback(handle_request)
            .with_state(shared.clone());
        let task = handle.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(FakeLlm {
            family,
            addr,
            shared,
            task,
        })
    }

    /// The family this server speaks.
    pub fn family(&self) -> ProviderFamily {
        self.family
    }

    /// The socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL to put in a provider entry's `uri` (`http://127.0.0.1:PORT/v1` for OpenAI,
    /// `http://127.0.0.1:PORT` for the others, matching each vendor's default base).
    pub fn uri(&self) -> String {
        match self.family {
            ProviderFamily::Openai => format!("http://{}/v1", self.addr),
            _ => format!("http://{}", self.addr),
        }
    }

    /// A `[providers.models.<family>.<alias>]` block pointing at this server, model
    /// `fake-model`; append more `key = value` lines to it as needed.
    pub fn config_block(&self, alias: &str) -> String {
        format!(
            "[providers.models.{}.{alias}]\nmodel = \"fake-model\"\nuri = \"{}\"\n",
            self.family.as_str(),
            self.uri()
        )
    }

    /// Appends one reply to the script.
    pub fn push(&self, reply: Reply) -> &Self {
        let mut s = lock(&self.shared);
        s.script.push_back(reply);
        s.scripted += 1;
        self
    }

    /// Appends several replies to the script.
    pub fn script(&self, replies: impl IntoIterator<Item = Reply>) -> &Self {
        for r in replies {
            self.push(r);
        }
        self
    }

    /// Sets what the model list endpoint (`GET /v1/models`, Ollama's `GET /api/tags`) lists,
    /// in the vendor's shape; [`FAKE_MODELS`] until set.
    pub fn set_models<'a>(&self, ids: impl IntoIterator<Item = &'a str>) -> &Self {
        lock(&self.shared).models = ids.into_iter().map(str::to_string).collect();
        self
    }

    /// Caps the models on one page of Anthropic's list below the API's 1000, so a test sees
    /// `has_more` and `after_id` paging.
    pub fn models_page_size(&self, n: usize) -> &Self {
        lock(&self.shared).models_page = n.max(1);
        self
    }

    /// Makes the model list endpoint answer an HTTP error with the vendor's error body.
    pub fn refuse_models(&self, status: u16, message: &str) -> &Self {
        lock(&self.shared).models_error = Some(Reply::error(status, message));
        self
    }

    /// Every request received so far, in order (including unexpected ones), while
    /// [`keep_requests`](FakeLlm::keep_requests) is on (the default).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared).requests.clone()
    }

    /// Whether requests are kept for [`requests`](FakeLlm::requests) from now on (on by
    /// default). A benchmark measuring the memory of the process it shares with the server
    /// turns it off: every request of a long turn carries the whole conversation.
    pub fn keep_requests(&self, keep: bool) -> &Self {
        lock(&self.shared).keep_requests = keep;
        self
    }

    /// How many requests were received.
    pub fn request_count(&self) -> usize {
        lock(&self.shared).received
    }

    /// Waits until at least `n` requests have arrived, or `timeout` passed; returns whether
    /// they did. For tests that act while a request is in flight (cancellation, slow streams).
    pub async fn wait_for_requests(&self, n: usize, timeout: std::time::Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.shared.arrived.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.request_count() >= n {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(timeout, wait).await.is_ok()
    }

    /// Replies not yet used.
    pub fn remaining(&self) -> usize {
        lock(&self.shared).script.len()
    }

    /// The failures recorded so far (unexpected requests), without acknowledging them.
    pub fn failures(&self) -> Vec<String> {
        lock(&self.shared).failures.clone()
    }

    /// Takes the recorded failures, so that dropping the server does not panic over them.
    pub fn acknowledge_failures(&self) -> Vec<String> {
        std::mem::take(&mut lock(&self.shared).failures)
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.task.abort();
        let failures = std::mem::take(&mut lock(&self.shared).failures);
        if !failures.is_empty() && !std::thread::panicking() {
            panic!(
                "fake {} server at {} saw {} unexpected request(s):\n  {}",
                self.family.as_str(),
                self.addr,
                failures.len(),
                failures.join("\n  ")
            );
        }
    }
}

/// An address on 127.0.0.1 where nothing listens (for "connection refused").
pub fn closed_port_uri() -> std::io::Result<String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    let addr = l.local_addr()?;
    drop(l);
    Ok(format!("http://{addr}"))
}

fn loud(status: StatusCode, message: String) -> Response {
    let body = json!({"error": {"message": message, "type": "fake_llm_unexpected_request"}});
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .unwrap_or_default()
}

async fn handle_request(
    State(shared): State<Arc<Ctx>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path().to_string();
    let parsed: Result<Value, _> = serde_json::from_slice(&body);
    let (reply, family, serial, parsed_body) = {
        let mut s = lock(&shared);
        let mut hs: BTreeMap<String, String> = BTreeMap::new();
        for (k, v) in headers.iter() {
            let v = String::from_utf8_lossy(v.as_bytes()).into_owned();
            hs.entry(k.as_str().to_string())
                .and_modify(|e| {
                    e.push_str(", ");
                    e.push_str(&v);
                })
                .or_insert(v);
        }
        s.received += 1;
        if s.keep_requests {
            s.requests.push(RecordedRequest {
                method: method.to_string(),
                path: path.clone(),
                headers: hs,
                body: parsed.as_ref().cloned().unwrap_or(Value::Null),
            });
        }
        shared.arrived.notify_waiters();
        let n = s.received;
        let family = s.family;
        let expected = wire_path(family);
        if method == Method::GET && path == models_path(family) {
            let rendered = match &s.models_error {
                Some(refusal) => {
                    let ctx = RenderCtx {
                        model: "",
                        body: &Value::Null,
                        serial: n as u64,
                    };
                    render(family, refusal, &ctx, false)
                }
                None => {
                    let list = match family {
                        ProviderFamily::Openai => openai::models(&s.models),
                        ProviderFamily::Anthropic => {
                            anthropic::models(&s.models, uri.query(), s.models_page)
                        }
                        ProviderFamily::Ollama => ollama::models(&s.models),
                    };
                    Rendered::json(200, &list)
                }
            };
            return respond(rendered, &Reply::text(""));
        }
        if method != Method::POST || path != expected {
            let msg = format!(
                "fake {} server: unexpected request #{n}: {method} {path} (this server serves POST {expected} and GET {})",
                family.as_str(),
                models_path(family)
            );
            s.failures.push(msg.clone());
            return loud(StatusCode::NOT_FOUND, msg);
        }
        let parsed_body = match parsed {
            Ok(v) => v,
            Err(e) => {
                let msg = format!(
                    "fake {} server: request #{n} body is not JSON ({e}): {}",
                    family.as_str(),
                    String::from_utf8_lossy(&body[..body.len().min(200)])
                );
                s.failures.push(msg.clone());
                return loud(StatusCode::BAD_REQUEST, msg);
            }
        };
        if let Err(rule) = super::validate::check(family, &parsed_body) {
            let msg = format!(
                "fake {} server: request #{n} would be rejected by the real API (HTTP 400): {rule}",
                family.as_str()
            );
            s.failures.push(msg);
            let rejection = Reply::error(400, &rule);
            let ctx = RenderCtx {
                model: "",
                body: &parsed_body,
                serial: n as u64,
            };
            return respond(render(family, &rejection, &ctx, false), &rejection);
        }
        let Some(reply) = s.script.pop_front() else {
            let msg = format!(
                "fake {} server: unexpected request #{n} to {path}: the script is exhausted ({} replies were scripted)",
                family.as_str(),
                s.scripted
            );
            s.failures.push(msg.clone());
            return loud(StatusCode::INTERNAL_SERVER_ERROR, msg);
        };
        (reply, family, n as u64, parsed_body)
    };
    if !reply.delay.is_zero() {
        tokio::time::sleep(reply.delay).await;
    }
    let stream = parsed_body["stream"]
        .as_bool()
        .unwrap_or(family == ProviderFamily::Ollama);
    let model = parsed_body["model"]
        .as_str()
        .unwrap_or("fake-model")
        .to_string();
    let ctx = RenderCtx {
        model: &model,
        body: &parsed_body,
        serial,
    };
    respond(render(family, &reply, &ctx, stream), &reply)
}

fn render(family: ProviderFamily, reply: &Reply, ctx: &RenderCtx<'_>, stream: bool) -> Rendered {
    match family {
        ProviderFamily::Openai => openai::render(reply, ctx, stream),
        ProviderFamily::Anthropic => anthropic::render(reply, ctx, stream),
        ProviderFamily::Ollama => ollama::render(reply, ctx, stream),
    }
}

/// Turns the rendered frames into a response, applying frame delays and the scripted cut.
fn respond(r: Rendered, reply: &Reply) -> Response {
    let mut builder = Response::builder()
        .status(r.status)
        .header("content-type", r.content_type.as_str());
    for (name, value) in &reply.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let simple = reply.cut_after.is_none() && reply.frame_delay.is_zero();
    let body = if simple {
        Body::from(r.frames.concat())
    } else {
        let mut items: Vec<Result<Bytes, std::io::Error>> = Vec::new();
        let keep = reply
            .cut_after
            .map(|n| n.min(r.frames.len().saturating_sub(1)))
            .unwrap_or(r.frames.len());
        for f in r.frames.iter().take(keep) {
            items.push(Ok(Bytes::from(f.clone())));
        }
        if reply.cut_after.is_some() {
            if let Some(next) = r.frames.get(keep) {
                let half = super::script::halves(next).0;
                items.push(Ok(Bytes::from(half)));
            }
            items.push(Err(std::io::Error::other(
                "scripted cut: connection dropped",
            )));
        }
        let delay = reply.frame_delay;
        Body::from_stream(futures::stream::iter(items).then(move |item| async move {
            if item.is_err() {
                // let the server flush what was sent before the connection drops
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            } else if !delay.is_zero() {
                tokio::time::sleep(delay).await;
            }
            item
        }))
    };
    builder.body(body).unwrap_or_else(|e| {
        loud(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("fake server: cannot build the scripted response: {e}"),
        )
    })
}
