//! Warren's egress proxy: the one way out of a sandbox whose risk profile confines `network` to
//! domains (docs/security.md "Network", docs/configuration.md "network").
//!
//! # Design
//!
//! **One listener per agent.** A [`Proxy`] lives in Warren's process on its tokio runtime. The
//! sandbox asks it to [`serve`](Proxy::serve) one listening socket per agent: under bubblewrap a
//! socket bound on the loopback of the sandbox's own network namespace, handed over a Unix
//! socket and accepted as given (never rebound); under Landlock alone a socket on the host's
//! `127.0.0.1` ([`Proxy::serve_loopback`]), the only TCP port the child may connect to. Which
//! agent a connection belongs to is therefore known from the socket it arrived on, never from
//! anything the client says. The child finds the proxy through [`proxy_env`].
//!
//! **The decision, in order**, for every `CONNECT host:port` and every plain-HTTP request in
//! absolute form (each request of a keep-alive connection on its own):
//! 1. [`DomainRules::decide`] on the host as asked and the port: a `deny` pattern refuses, then
//!    an `allow` pattern admits, else refused (`403`, header `X-Warren-Refused: <rule>`).
//! 2. The name is resolved through the proxy's [`Resolve`] (an IP literal is not resolved); a
//!    name that resolves to nothing answers `502`.
//! 3. Unless `allow_private`, every address for which
//!    [`is_private`](warren_types::network::is_private) holds is dropped; when none
//!    is left the connection is refused (`403`, `private address X (allow_private is off)`).
//! 4. The proxy connects to the first remaining address **by IP**, the one it checked: the name
//!    is never resolved again, so DNS rebinding between the check and the connect cannot send
//!    the connection elsewhere. A failed connect answers `502`.
//!
//! A `CONNECT` then answers `200 Connection Established` and copies bytes both ways, socket to
//! socket; a plain request is forwarded over a fresh TCP connection in origin form, its `Host`
//! header naming the host that was checked (RFC 9112 §3.2.2: a `Host` naming another site is
//! replaced, so a server at the allowed address is not asked for a site the rules did not
//! admit), hop-by-hop and `Proxy-*` headers removed, and its response streamed back. Requests
//! without a host (origin form, addressed to the proxy itself) and `https://` URLs outside a
//! tunnel get `400` and no record.
//!
//! **Every attempt is recorded**: one [`ConnectionRecord`] per `CONNECT` or plain request, handed
//! to the [`ConnectionSink`] when it ends (its byte counts then known), with the agent of the
//! listener. Refusals are also kept in words on the listener's [`ServeGuard`] for the tool
//! result of the call that met them.
//!
//! A slow or silent client holds only its own task: each connection is served by one task, and
//! hyper's HTTP/1 server closes a connection whose request head does not arrive within the
//! header-read timeout (30 s) or outgrows its header limits.
//!
//! **SOCKS5** is served on the same listener (a client whose first byte is version 5):
//! `CONNECT` only, without authentication, by name, IPv4 or IPv6, through the same decision,
//! connection and record as an HTTP `CONNECT` (kind `"socks5"`); a refusal replies `02`
//! (not allowed by ruleset), `BIND` and `UDP ASSOCIATE` reply `07` (not supported). The child's
//! `ALL_PROXY` still names the HTTP proxy, which every HTTP client understands; a client told
//! explicitly (`curl --socks5-hostname`, `ssh -o ProxyCommand='nc -X 5 …'`) can tunnel any TCP
//! protocol to an allowed host and port.

#![warn(missing_docs)]

mod conn;

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::net::{SocketAddr, TcpListener};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::runtime::Handle;
use tokio::sync::{oneshot, watch};
use warren_types::network::DomainRules;

/// One connection attempt as recorded (the runtime writes it to its database).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionRecord {
    /// The agent whose listener the attempt arrived on.
    pub agent: String,
    /// The host as the client asked for it, normalized (lower case, no trailing dot, no IPv6
    /// brackets).
    pub host: String,
    /// The port the client asked for (80 when a plain `http://` URL names none).
    pub port: u16,
    /// Whether the rules and the address check let the attempt through. An allowed attempt
    /// may still have failed (its `rule` then says so).
    pub allowed: bool,
    /// Why, in words: the deciding rule (`allow "crates.io"`, `deny "*.evil.com"`, `no allow
    /// pattern matches`), `private address 127.0.0.1 (allow_private is off)`, or, for an
    /// allowed attempt that failed, `could not resolve: …`, `connect failed: …`,
    /// `request failed: …`.
    pub rule: String,
    /// The address connected to, when one was.
    pub address: Option<SocketAddr>,
    /// Bytes from the client to the server: everything sent through a tunnel, the request
    /// body of a plain request.
    pub bytes_up: u64,
    /// Bytes from the server to the client: everything received through a tunnel, the
    /// response body of a plain request.
    pub bytes_down: u64,
    /// When the request arrived, in milliseconds since the Unix epoch.
    pub started_unix_ms: i64,
    /// How long from the request's arrival to the end of the tunnel or of the response.
    pub duration_ms: u64,
    /// `"connect"` (an HTTPS `CONNECT` tunnel), `"http"` (a plain HTTP request) or
    /// `"socks5"` (a SOCKS5 `CONNECT` tunnel).
    pub kind: &'static str,
}

/// Where [`ConnectionRecord`]s go. `record` is called on the proxy's runtime threads as each
/// attempt ends, so it should be quick (hand the record to a channel, not to a database).
pub trait ConnectionSink: Send + Sync + 'static {
    /// Takes one finished attempt.
    fn record(&self, record: ConnectionRecord);
}

impl<F> ConnectionSink for F
where
    F: Fn(ConnectionRecord) + Send + Sync + 'static,
{
    fn record(&self, record: ConnectionRecord) {
        self(record);
    }
}

/// The future a [`Resolve`] answers with.
pub type ResolveFuture<'a> = Pin<Box<dyn Future<Output = io::Result<Vec<SocketAddr>>> + Send + 'a>>;

/// Name resolution for the proxy; tests map names to loopback servers.
pub trait Resolve: Send + Sync + 'static {
    /// The addresses of `host` (a name, never an IP literal) for `port`, in preference order.
    fn resolve(&self, host: &str, port: u16) -> ResolveFuture<'_>;
}

/// The system's resolver ([`tokio::net::lookup_host`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemResolver;

impl Resolve for SystemResolver {
    fn resolve(&self, host: &str, port: u16) -> ResolveFuture<'_> {
        let host = host.to_string();
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host.as_str(), port))
                .await?
                .collect())
        })
    }
}

/// How long a client may take to send a request head before its connection is closed.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How long resolving a name, and then connecting to its address, may each take.
pub const UPSTREAM_TIMEOUT: Duration = Duration::from_secs(30);

/// How many refusals a [`ServeGuard`] keeps (the most recent ones).
pub const MAX_REFUSALS_KEPT: usize = 1000;

/// The egress proxy: serves per-agent listeners on a tokio runtime. Cloning shares it.
#[derive(Clone)]
pub struct Proxy {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    handle: Handle,
    resolver: Arc<dyn Resolve>,
    sink: Arc<dyn ConnectionSink>,
    header_read_timeout: Duration,
}

/// What the connections of one listener share.
pub(crate) struct Listener {
    proxy: Arc<Inner>,
    agent: String,
    rules: Arc<DomainRules>,
    refusals: Mutex<VecDeque<String>>,
    /// Set when the command the listener served has ended: every connection still open
    /// (a process left behind holding a tunnel) is closed.
    closed: watch::Sender<bool>,
}

impl Listener {
    /// Resolves once the listener's connections are to close.
    pub(crate) async fn closing(&self) {
        let mut rx = self.closed.subscribe();
        let _ = rx.wait_for(|closed| *closed).await;
    }

    fn refused(&self, words: String) {
        let mut r = self
            .refusals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if r.len() >= MAX_REFUSALS_KEPT {
            r.pop_front();
        }
        r.push_back(words);
    }
}

impl Proxy {
    /// A proxy whose tasks run on `handle`, resolving names with `resolver` and recording
    /// every attempt into `sink`.
    pub fn new(handle: Handle, resolver: Arc<dyn Resolve>, sink: Arc<dyn ConnectionSink>) -> Proxy {
        Proxy {
            inner: Arc::new(Inner {
                handle,
                resolver,
                sink,
                header_read_timeout: HEADER_READ_TIMEOUT,
            }),
        }
    }

    /// The same proxy with another header-read timeout (default [`HEADER_READ_TIMEOUT`]) for
    /// the listeners served from now on.
    pub fn with_header_read_timeout(self, timeout: Duration) -> Proxy {
        Proxy {
            inner: Arc::new(Inner {
                handle: self.inner.handle.clone(),
                resolver: self.inner.resolver.clone(),
                sink: self.inner.sink.clone(),
                header_read_timeout: timeout,
            }),
        }
    }

    /// Serves every connection accepted on `listener` for `agent` under `rules`, until the
    /// guard is finished or dropped (then it stops accepting, closes the listener and every
    /// connection still open). `listener` may belong to another network namespace (a sandbox's loopback,
    /// handed over a Unix socket): it is accepted as given, never rebound. Callable from a
    /// non-async thread.
    pub fn serve(
        &self,
        agent: &str,
        rules: Arc<DomainRules>,
        listener: TcpListener,
    ) -> io::Result<ServeGuard> {
        listener.set_nonblocking(true)?;
        let listener = {
            let _entered = self.inner.handle.enter();
            tokio::net::TcpListener::from_std(listener)?
        };
        let shared = Arc::new(Listener {
            proxy: self.inner.clone(),
            agent: agent.to_string(),
            rules,
            refusals: Mutex::new(VecDeque::new()),
            closed: watch::Sender::new(false),
        });
        let stopped = Arc::new(AtomicBool::new(false));
        let (stop, stop_rx) = oneshot::channel();
        self.inner.handle.spawn(accept_loop(
            listener,
            shared.clone(),
            stopped.clone(),
            stop_rx,
        ));
        Ok(ServeGuard {
            shared,
            stopped,
            stop: Some(stop),
        })
    }

    /// Binds `127.0.0.1:0` on the host, serves it as [`serve`](Proxy::serve) does, and returns
    /// the port (for Landlock-only sandboxes, whose TCP connect rule allows only that port).
    pub fn serve_loopback(
        &self,
        agent: &str,
        rules: Arc<DomainRules>,
    ) -> io::Result<(u16, ServeGuard)> {
        let listener = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))?;
        let port = listener.local_addr()?.port();
        Ok((port, self.serve(agent, rules, listener)?))
    }
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    shared: Arc<Listener>,
    stopped: Arc<AtomicBool>,
    mut stop: oneshot::Receiver<()>,
) {
    loop {
        let accepted = tokio::select! {
            biased;
            _ = &mut stop => break,
            accepted = listener.accept() => accepted,
        };
        // The guard may have been dropped while this accept was completing: such a
        // connection is closed unserved.
        if stopped.load(Ordering::SeqCst) {
            break;
        }
        match accepted {
            Ok((stream, _)) => {
                tokio::spawn(conn::serve_connection(shared.clone(), stream));
            }
            Err(e) => {
                // Out of file descriptors and the like: wait instead of spinning.
                tracing::warn!(agent = %shared.agent, error = %e, "egress proxy: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    tracing::debug!(agent = %shared.agent, "egress proxy: listener closed");
}

/// Keeps one listener served; dropping it stops accepting, closes the listener and closes
/// every connection still open (each is recorded as it closes).
pub struct ServeGuard {
    shared: Arc<Listener>,
    stopped: Arc<AtomicBool>,
    // Dropping the sender wakes the accept loop, which then drops the listener.
    stop: Option<oneshot::Sender<()>>,
}

impl ServeGuard {
    /// The refusals seen so far on this listener (the most recent [`MAX_REFUSALS_KEPT`]), in
    /// words for a tool result: `evil.example:443 refused: no allow pattern matches`.
    pub fn refusals(&self) -> Vec<String> {
        let r = self
            .shared
            .refusals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        r.iter().cloned().collect()
    }

    /// The agent this listener serves.
    pub fn agent(&self) -> &str {
        &self.shared.agent
    }

    /// Called when the command the listener served has ended: stops accepting, waits (up to
    /// `grace`, blocking this thread) for its connections to end by themselves, then closes
    /// those still open (a process left behind keeps no tunnel) and waits for their records.
    /// Returns whether every connection ended within `grace` (false: some were closed here).
    pub fn finish(mut self, grace: Duration) -> bool {
        self.stopped.store(true, Ordering::SeqCst);
        self.stop.take();
        let ended = self.wait_for_connections(grace);
        if !ended {
            self.shared.closed.send_replace(true);
            self.wait_for_connections(CLOSE_WAIT);
        }
        ended
    }

    /// Waits until only this guard holds the listener's shared part (the accept loop and every
    /// connection task hold it, and each connection's record is handed over before its task
    /// lets it go).
    fn wait_for_connections(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        while Arc::strong_count(&self.shared) > 1 {
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        true
    }
}

/// How long [`ServeGuard::finish`] waits for connections it closed to be recorded.
const CLOSE_WAIT: Duration = Duration::from_secs(2);

impl Drop for ServeGuard {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.shared.closed.send_replace(true);
    }
}

impl std::fmt::Debug for ServeGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServeGuard")
            .field("agent", &self.shared.agent)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("header_read_timeout", &self.inner.header_read_timeout)
            .finish_non_exhaustive()
    }
}

/// The environment a child gets to use the proxy at `127.0.0.1:port`: `HTTP_PROXY`,
/// `HTTPS_PROXY`, `ALL_PROXY` and their lower-case forms (`http://127.0.0.1:port`), `NO_PROXY`
/// and `no_proxy` empty (nothing bypasses the proxy).
pub fn proxy_env(port: u16) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut env = Vec::with_capacity(8);
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        env.push((name.to_string(), url.clone()));
        env.push((name.to_ascii_lowercase(), url.clone()));
    }
    env.push(("NO_PROXY".to_string(), String::new()));
    env.push(("no_proxy".to_string(), String::new()));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_env_names_every_form() {
        let env = proxy_env(4321);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        for k in [
            "HTTP_PROXY",
            "http_proxy",
            "HTTPS_PROXY",
            "https_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            assert_eq!(get(k), Some("http://127.0.0.1:4321"), "{k}");
        }
        assert_eq!(get("NO_PROXY"), Some(""));
        assert_eq!(get("no_proxy"), Some(""));
        assert_eq!(env.len(), 8);
    }
}
