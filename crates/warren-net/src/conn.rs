//! One client connection: hyper's HTTP/1 server, a `CONNECT` tunnel or a forwarded plain
//! request per request, one [`Attempt`] (one record) for each.

use std::convert::Infallible;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{HeaderMap, HeaderName, HeaderValue, CONNECTION, CONTENT_TYPE, HOST};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use warren_types::network::{is_private, normalize_host};

use crate::{ConnectionRecord, Listener, UPSTREAM_TIMEOUT};

mod socks;

type ProxyBody = BoxBody<Bytes, hyper::Error>;

/// The buffer each direction of a tunnel starts with.
const TUNNEL_BUFFER_MIN: usize = 16 * 1024;
/// The most it grows to, doubling each time a read fills it: an idle or slow tunnel keeps a
/// small buffer, a bulk download gets fewer, larger reads and writes.
const TUNNEL_BUFFER_MAX: usize = 1024 * 1024;

/// Serves one accepted client connection until it closes (its tunnels run on as tasks).
pub(crate) async fn serve_connection(listener: Arc<Listener>, stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let timeout = listener.proxy.header_read_timeout;
    // SOCKS5 greets with its version (5); an HTTP request starts with a method's letter.
    let mut first = [0u8; 1];
    let peeked = tokio::select! {
        peeked = tokio::time::timeout(timeout, stream.peek(&mut first)) => peeked,
        () = listener.closing() => return,
    };
    match peeked {
        Ok(Ok(1)) if first[0] == 5 => return socks::serve(listener, stream).await,
        Ok(Ok(1)) => {}
        _ => return,
    }
    let closing = listener.clone();
    let service = hyper::service::service_fn(move |req| {
        let listener = listener.clone();
        async move { Ok::<_, Infallible>(handle(listener, req).await) }
    });
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(timeout);
    let served = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::select! {
        ended = served => if let Err(e) = ended {
            tracing::debug!(error = %e, "egress proxy: client connection ended");
        },
        () = closing.closing() => {}
    }
}

async fn handle(listener: Arc<Listener>, req: Request<Incoming>) -> Response<ProxyBody> {
    if req.method() == Method::CONNECT {
        tunnel(listener, req).await
    } else {
        forward(listener, req).await
    }
}

/// `CONNECT host:port`: decide, connect, answer 200 and copy both ways on a task of its own.
async fn tunnel(listener: Arc<Listener>, mut req: Request<Incoming>) -> Response<ProxyBody> {
    let Some((host, port)) = req
        .uri()
        .authority()
        .and_then(|a| Some((normalize_host(a.host()), a.port_u16()?)))
    else {
        return text(
            StatusCode::BAD_REQUEST,
            "Warren's egress proxy: CONNECT takes host:port\n".into(),
        );
    };
    let mut attempt = Attempt::new(listener.clone(), host, port, "connect");
    let upstream = match open(&listener, &mut attempt).await {
        Ok(stream) => stream,
        Err(refused) => return refused,
    };
    let on_upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let cut = tokio::select! {
            () = run_tunnel(on_upgrade, upstream, &mut attempt) => false,
            () = listener.closing() => true,
        };
        if cut {
            attempt
                .rule
                .push_str(" (closed: the command it served had ended)");
        }
        drop(attempt);
    });
    let mut resp = Response::new(Empty::new().map_err(|never| match never {}).boxed());
    resp.extensions_mut()
        .insert(hyper::ext::ReasonPhrase::from_static(
            b"Connection Established",
        ));
    resp
}

/// Waits for the client's side of the upgrade, then copies both ways until the tunnel ends.
async fn run_tunnel(
    on_upgrade: hyper::upgrade::OnUpgrade,
    upstream: TcpStream,
    attempt: &mut Attempt,
) {
    match on_upgrade.await {
        Ok(upgraded) => {
            let mut server = upstream;
            // The client's own socket when hyper hands it back (it does for TCP), so that
            // the copy runs socket to socket; bytes hyper read past the CONNECT head go
            // first.
            let copied = match upgraded.downcast::<TokioIo<TcpStream>>() {
                Ok(parts) => {
                    let client = parts.io.into_inner();
                    splice_both(&client, &mut server, &parts.read_buf, &attempt.counts).await
                }
                Err(upgraded) => {
                    let (server_read, server_write) = server.split();
                    let (client_read, client_write) = tokio::io::split(TokioIo::new(upgraded));
                    let ends = (client_read, client_write, server_read, server_write);
                    pipe(ends, &[], &attempt.counts).await
                }
            };
            if let Err(e) = copied {
                tracing::debug!(error = %e, host = %attempt.host, "egress proxy: tunnel ended");
            }
        }
        Err(e) => attempt.rule = format!("tunnel not opened: {e}"),
    }
}

/// Copies both ways until both directions are done (each end half-closes the other's write
/// side), `pending` (client bytes already read) first; an error in either direction ends both.
async fn pipe<CR, CW, SR, SW>(
    (mut client_read, mut client_write, mut server_read, mut server_write): (CR, CW, SR, SW),
    pending: &[u8],
    counts: &Counts,
) -> io::Result<()>
where
    CR: AsyncRead + Unpin,
    CW: AsyncWrite + Unpin,
    SR: AsyncRead + Unpin,
    SW: AsyncWrite + Unpin,
{
    if !pending.is_empty() {
        server_write.write_all(pending).await?;
        counts.up.fetch_add(pending.len() as u64, Ordering::Relaxed);
    }
    let up = one_way(&mut client_read, &mut server_write, &counts.up);
    let down = one_way(&mut server_read, &mut client_write, &counts.down);
    both_ways(up, down).await
}

/// Runs both directions of a tunnel until both are done; an error in either ends both.
async fn both_ways(
    up: impl std::future::Future<Output = io::Result<()>>,
    down: impl std::future::Future<Output = io::Result<()>>,
) -> io::Result<()> {
    tokio::pin!(up, down);
    let (mut up_done, mut down_done) = (false, false);
    while !(up_done && down_done) {
        tokio::select! {
            done = &mut up, if !up_done => { done?; up_done = true; }
            done = &mut down, if !down_done => { done?; down_done = true; }
        }
    }
    Ok(())
}

/// The kernel pipe each direction of a spliced tunnel moves bytes through.
const SPLICE_PIPE: usize = 1024 * 1024;

/// [`pipe`] for two TCP sockets, with splice(2): the bytes go from one socket to the other
/// through a kernel pipe without being copied into Warren's memory and back. `pending` (client
/// bytes hyper read past the CONNECT head) goes first.
async fn splice_both(
    client: &TcpStream,
    server: &mut TcpStream,
    pending: &[u8],
    counts: &Counts,
) -> io::Result<()> {
    if !pending.is_empty() {
        server.write_all(pending).await?;
        counts.up.fetch_add(pending.len() as u64, Ordering::Relaxed);
    }
    let server = &*server;
    let up = splice_one_way(client, server, &counts.up);
    let down = splice_one_way(server, client, &counts.down);
    both_ways(up, down).await
}

/// Moves bytes from `from` to `to` through a kernel pipe until `from` ends, then shuts `to`
/// down for writing.
///
/// Both ends are kept moving: bytes are taken from `from` while the pipe has room and given
/// to `to` while it holds some, and the task sleeps only when neither moved. A splice
/// into a pipe that holds bytes can fail with `EAGAIN` because the pipe is full (its slots
/// hold socket fragments, not whole pages) as well as because the socket is empty; so only a
/// refusal into an empty pipe is taken as "nothing to read" and clears the socket's
/// readiness, and otherwise the bytes in the pipe are moved first.
async fn splice_one_way(from: &TcpStream, to: &TcpStream, count: &AtomicU64) -> io::Result<()> {
    use rustix::pipe::{pipe_with, splice, PipeFlags, SpliceFlags};
    use tokio::io::Interest;
    let (pipe_read, pipe_write) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
    // A larger pipe moves more per call; the default (64 KiB) still works.
    let room = rustix::pipe::fcntl_setpipe_size(&pipe_write, SPLICE_PIPE).unwrap_or(64 * 1024);
    let flags = SpliceFlags::NONBLOCK | SpliceFlags::MOVE;
    let mut held = 0usize;
    let mut ended = false;
    loop {
        let mut moved = false;
        if !ended && held < room {
            let take = || Ok(splice(from, None, &pipe_write, None, room - held, flags)?);
            let took = if held == 0 {
                from.try_io(Interest::READABLE, take)
            } else {
                take()
            };
            match took {
                Ok(0) => ended = true,
                Ok(n) => {
                    held += n;
                    moved = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        if held > 0 {
            match to.try_io(Interest::WRITABLE, || {
                Ok(splice(&pipe_read, None, to, None, held, flags)?)
            }) {
                Ok(m) => {
                    held -= m;
                    count.fetch_add(m as u64, Ordering::Relaxed);
                    moved = true;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
        }
        if ended && held == 0 {
            return match rustix::net::shutdown(to, rustix::net::Shutdown::Write) {
                Ok(()) | Err(rustix::io::Errno::NOTCONN) => Ok(()),
                Err(e) => Err(e.into()),
            };
        }
        // Nothing moved: with bytes held, `to` refused them (its readiness is cleared), and
        // reading more would not help the reader; with none, `from` had nothing.
        if !moved {
            if held == 0 {
                from.readable().await?;
            } else {
                to.writable().await?;
            }
        }
    }
}

/// Copies `from` to `to` until `from` ends, then shuts `to` down for writing.
async fn one_way<R, W>(from: &mut R, to: &mut W, count: &AtomicU64) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; TUNNEL_BUFFER_MIN];
    loop {
        let n = from.read(&mut buf).await?;
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buf[..n]).await?;
        count.fetch_add(n as u64, Ordering::Relaxed);
        if n == buf.len() && buf.len() < TUNNEL_BUFFER_MAX {
            buf.resize(buf.len() * 2, 0);
        }
    }
}

/// A plain request in absolute form: decide, forward in origin form over a fresh connection,
/// stream the response back.
async fn forward(listener: Arc<Listener>, req: Request<Incoming>) -> Response<ProxyBody> {
    let Some(authority) = req.uri().authority().cloned() else {
        return text(
            StatusCode::BAD_REQUEST,
            "This is Warren's egress proxy: send absolute-form requests (GET http://host/path) or CONNECT host:port\n".into(),
        );
    };
    if req.uri().scheme_str() != Some("http") {
        return text(
            StatusCode::BAD_REQUEST,
            "Warren's egress proxy forwards http:// URLs; reach https:// ones with CONNECT\n"
                .into(),
        );
    }
    let port = authority.port_u16().unwrap_or(80);
    let mut attempt = Attempt::new(
        listener.clone(),
        normalize_host(authority.host()),
        port,
        "http",
    );
    let upstream = match open(&listener, &mut attempt).await {
        Ok(stream) => stream,
        Err(refused) => return refused,
    };
    let (mut sender, connection) =
        match hyper::client::conn::http1::handshake::<_, ProxyBody>(TokioIo::new(upstream)).await {
            Ok(pair) => pair,
            Err(e) => return fail(&mut attempt, format!("request failed: {e}")),
        };
    let closing = listener.clone();
    tokio::spawn(async move {
        tokio::select! {
            ended = connection => if let Err(e) = ended {
                tracing::debug!(error = %e, "egress proxy: upstream connection ended");
            },
            () = closing.closing() => {}
        }
    });

    let (mut parts, body) = req.into_parts();
    parts.uri = origin_form(&parts.uri);
    strip_hop_by_hop(&mut parts.headers);
    // The Host header names the host that was checked (RFC 9112 3.2.2: a proxy replaces a
    // received Host with the request target's), so that a server behind the allowed address
    // is not asked for another site.
    parts.headers.remove(HOST);
    if let Ok(host) = HeaderValue::from_str(&host_header(&authority)) {
        parts.headers.insert(HOST, host);
    }
    let body = CountedBody {
        inner: body,
        counts: attempt.counts.clone(),
        upward: true,
        _attempt: None,
    };
    let resp = match sender
        .send_request(Request::from_parts(parts, body.boxed()))
        .await
    {
        Ok(resp) => resp,
        Err(e) => return fail(&mut attempt, format!("request failed: {e}")),
    };
    let (mut parts, body) = resp.into_parts();
    strip_hop_by_hop(&mut parts.headers);
    let counts = attempt.counts.clone();
    // The attempt rides with the response body: it is recorded when the body is done or the
    // client goes away.
    let body = CountedBody {
        inner: body,
        counts,
        upward: false,
        _attempt: Some(attempt),
    };
    Response::from_parts(parts, body.boxed())
}

/// Decides on the attempt's host and port, resolves, checks the addresses and connects to the
/// one checked; or answers the refusal (`403`) or failure (`502`), noted on the attempt.
async fn open(listener: &Listener, a: &mut Attempt) -> Result<TcpStream, Response<ProxyBody>> {
    match reach(listener, a).await {
        Ok(stream) => Ok(stream),
        Err(Unreached::Refused) => Err(refuse(a)),
        Err(Unreached::Failed) => Err(failed(a)),
    }
}

/// Why [`reach`] gave no connection; the attempt's `rule` says it in words.
pub(crate) enum Unreached {
    /// The rules or the address check refused it (noted on the listener too).
    Refused,
    /// It was allowed, but resolving or connecting failed.
    Failed,
}

/// The decision and the connection of one attempt, whatever the client spoke (HTTP or
/// SOCKS5): decides on the host and port, resolves, checks the addresses and connects to the
/// one checked. Notes the outcome on the attempt (`allowed`, `rule`, `address`) and a refusal
/// on the listener.
pub(crate) async fn reach(listener: &Listener, a: &mut Attempt) -> Result<TcpStream, Unreached> {
    let decision = listener.rules.decide(&a.host, a.port);
    a.rule = decision.rule;
    if !decision.allowed {
        return Err(refused(listener, a));
    }
    a.allowed = true;
    let addrs = match a.host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, a.port)],
        Err(_) => {
            let lookup = listener.proxy.resolver.resolve(&a.host, a.port);
            match tokio::time::timeout(UPSTREAM_TIMEOUT, lookup).await {
                Ok(Ok(addrs)) if !addrs.is_empty() => addrs,
                Ok(Ok(_)) => return Err(a.failed("could not resolve: no address".into())),
                Ok(Err(e)) => return Err(a.failed(format!("could not resolve: {e}"))),
                Err(_) => {
                    let secs = UPSTREAM_TIMEOUT.as_secs();
                    return Err(a.failed(format!("could not resolve: no answer in {secs} s")));
                }
            }
        }
    };
    let addr = match pick_address(&addrs, listener.rules.allow_private) {
        Ok(addr) => addr,
        Err(ip) => {
            a.allowed = false;
            a.rule = format!("private address {ip} (allow_private is off)");
            return Err(refused(listener, a));
        }
    };
    a.address = Some(addr);
    // By address: the name is not resolved again between the check and the connect.
    match tokio::time::timeout(UPSTREAM_TIMEOUT, TcpStream::connect(addr)).await {
        Ok(Ok(stream)) => {
            let _ = stream.set_nodelay(true);
            Ok(stream)
        }
        Ok(Err(e)) => Err(a.failed(format!("connect failed: {addr}: {e}"))),
        Err(_) => {
            let secs = UPSTREAM_TIMEOUT.as_secs();
            Err(a.failed(format!("connect failed: {addr}: no answer in {secs} s")))
        }
    }
}

/// Notes a refusal on the listener, in words for the tool result.
fn refused(listener: &Listener, a: &Attempt) -> Unreached {
    listener.refused(format!(
        "{} refused: {}",
        host_port(&a.host, a.port),
        a.rule
    ));
    Unreached::Refused
}

/// The first address the rules let the connection reach, or the first private address found
/// when every address is private and `allow_private` is off.
fn pick_address(addrs: &[SocketAddr], allow_private: bool) -> Result<SocketAddr, IpAddr> {
    match addrs.iter().find(|a| allow_private || !is_private(a.ip())) {
        Some(a) => Ok(*a),
        None => Err(addrs
            .first()
            .map(std::net::SocketAddr::ip)
            .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED))),
    }
}

/// The `Host` header of a request target: its host and, when it names one, its port (no user
/// information).
fn host_header(authority: &hyper::http::uri::Authority) -> String {
    match authority.port() {
        Some(port) => format!("{}:{}", authority.host(), port.as_str()),
        None => authority.host().to_string(),
    }
}

/// `host:port`, an IPv6 address in brackets.
fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// 403 with the rule in a header and in words.
fn refuse(a: &Attempt) -> Response<ProxyBody> {
    let target = host_port(&a.host, a.port);
    let mut resp = text(
        StatusCode::FORBIDDEN,
        format!("Warren refused {target}: {}\n", a.rule),
    );
    let value = HeaderValue::from_str(&a.rule).unwrap_or_else(|_| {
        let printable: String = a
            .rule
            .chars()
            .map(|c| {
                if c.is_ascii_graphic() || c == ' ' {
                    c
                } else {
                    '?'
                }
            })
            .collect();
        HeaderValue::from_str(&printable).unwrap_or(HeaderValue::from_static("refused"))
    });
    resp.headers_mut().insert("x-warren-refused", value);
    resp
}

/// 502: the attempt was allowed but could not be carried out; its `rule` says why.
fn failed(a: &Attempt) -> Response<ProxyBody> {
    let target = host_port(&a.host, a.port);
    text(
        StatusCode::BAD_GATEWAY,
        format!("Warren could not reach {target}: {}\n", a.rule),
    )
}

/// 502 for a failure after the connection was made, `rule` noted on the attempt.
fn fail(a: &mut Attempt, rule: String) -> Response<ProxyBody> {
    a.failed(rule);
    failed(a)
}

fn text(status: StatusCode, body: String) -> Response<ProxyBody> {
    let mut resp = Response::new(
        Full::new(Bytes::from(body))
            .map_err(|never| match never {})
            .boxed(),
    );
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

/// The request target as the origin server expects it: path and query only.
fn origin_form(uri: &Uri) -> Uri {
    let pq = uri
        .path_and_query()
        .map(hyper::http::uri::PathAndQuery::as_str)
        .unwrap_or("/");
    let pq = if pq.starts_with('/') {
        pq.to_string()
    } else {
        format!("/{pq}")
    };
    pq.parse().unwrap_or_else(|_| Uri::from_static("/"))
}

/// Removes the headers that concern one hop only: those `Connection` names, the standard
/// hop-by-hop ones and every `Proxy-*` header.
fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in [
        "connection",
        "keep-alive",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    ] {
        headers.remove(name);
    }
    let proxy: Vec<HeaderName> = headers
        .keys()
        .filter(|k| k.as_str().starts_with("proxy-"))
        .cloned()
        .collect();
    for name in proxy {
        headers.remove(name);
    }
}

#[derive(Default)]
pub(crate) struct Counts {
    up: AtomicU64,
    down: AtomicU64,
}

/// One attempt; dropping it hands its record to the sink (exactly once).
pub(crate) struct Attempt {
    listener: Arc<Listener>,
    host: String,
    port: u16,
    kind: &'static str,
    allowed: bool,
    rule: String,
    address: Option<SocketAddr>,
    counts: Arc<Counts>,
    started: Instant,
    started_unix_ms: i64,
}

impl Attempt {
    /// Notes that the allowed attempt failed, and why.
    fn failed(&mut self, rule: String) -> Unreached {
        self.rule = rule;
        Unreached::Failed
    }

    pub(crate) fn new(
        listener: Arc<Listener>,
        host: String,
        port: u16,
        kind: &'static str,
    ) -> Attempt {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Attempt {
            listener,
            host,
            port,
            kind,
            allowed: false,
            rule: String::new(),
            address: None,
            counts: Arc::new(Counts::default()),
            started: Instant::now(),
            started_unix_ms: i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX),
        }
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        let record = ConnectionRecord {
            agent: self.listener.agent.clone(),
            host: std::mem::take(&mut self.host),
            port: self.port,
            allowed: self.allowed,
            rule: std::mem::take(&mut self.rule),
            address: self.address,
            bytes_up: self.counts.up.load(Ordering::Relaxed),
            bytes_down: self.counts.down.load(Ordering::Relaxed),
            started_unix_ms: self.started_unix_ms,
            duration_ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            kind: self.kind,
        };
        self.listener.proxy.sink.record(record);
    }
}

/// A body whose data bytes are counted (up for a request, down for a response); it may carry
/// the attempt, recorded when the body is dropped.
struct CountedBody {
    inner: Incoming,
    counts: Arc<Counts>,
    upward: bool,
    _attempt: Option<Attempt>,
}

impl Body for CountedBody {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled {
            if let Some(data) = frame.data_ref() {
                let counter = if this.upward {
                    &this.counts.up
                } else {
                    &this.counts.down
                };
                counter.fetch_add(data.len() as u64, Ordering::Relaxed);
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn the_first_public_address_is_picked_and_private_ones_dropped() {
        let mixed = addrs(&["127.0.0.1:80", "[::ffff:10.0.0.1]:80", "93.184.216.34:80"]);
        assert_eq!(
            pick_address(&mixed, false),
            Ok("93.184.216.34:80".parse().unwrap())
        );
        assert_eq!(
            pick_address(&mixed, true),
            Ok("127.0.0.1:80".parse().unwrap())
        );
        let private = addrs(&["[fd00::1]:443", "192.168.1.1:443"]);
        assert_eq!(
            pick_address(&private, false),
            Err("fd00::1".parse().unwrap())
        );
    }

    #[test]
    fn hop_by_hop_and_proxy_headers_are_removed() {
        let mut h = HeaderMap::new();
        for (k, v) in [
            ("host", "example.com"),
            ("connection", "keep-alive, x-secret"),
            ("x-secret", "1"),
            ("keep-alive", "timeout=5"),
            ("proxy-authorization", "Basic abc"),
            ("proxy-connection", "keep-alive"),
            ("transfer-encoding", "chunked"),
            ("upgrade", "websocket"),
            ("te", "trailers"),
            ("accept", "*/*"),
            ("content-length", "3"),
        ] {
            h.append(k, HeaderValue::from_static(v));
        }
        strip_hop_by_hop(&mut h);
        let mut left: Vec<&str> = h.keys().map(hyper::http::HeaderName::as_str).collect();
        left.sort();
        assert_eq!(left, ["accept", "content-length", "host"]);
    }

    #[test]
    fn absolute_targets_become_origin_form() {
        for (abs, origin) in [
            ("http://example.com/a/b?c=d", "/a/b?c=d"),
            ("http://example.com", "/"),
            ("http://example.com:8080/", "/"),
        ] {
            let uri: Uri = abs.parse().unwrap();
            assert_eq!(origin_form(&uri).to_string(), origin, "{abs}");
        }
        assert_eq!(host_port("::1", 443), "[::1]:443");
        for (abs, host) in [
            ("http://user:pw@Example.com:8080/x", "Example.com:8080"),
            ("http://[::1]/", "[::1]"),
            ("http://example.com/", "example.com"),
        ] {
            let uri: Uri = abs.parse().unwrap();
            assert_eq!(host_header(uri.authority().unwrap()), host, "{abs}");
        }
        assert_eq!(host_port("crates.io", 443), "crates.io:443");
    }
}
