//! Real servers on loopback, a resolver that maps test names to them, a sink that collects
//! records, and a raw HTTP/1.1 client (no internet anywhere).
//!
//! The "TLS server" of the issue is a raw TCP server behind `CONNECT`: rcgen is not in the
//! workspace's lock file, and the proxy never sees inside a tunnel anyway (it copies bytes), so
//! an asymmetric byte server checks what a TLS one would and also pins the byte counts.

#![allow(dead_code)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use warren_net::{ConnectionRecord, ConnectionSink, Proxy, Resolve, ResolveFuture, ServeGuard};
use warren_types::network::DomainRules;

/// What the origin answers to a GET.
pub const ORIGIN_BODY: &str = "hello from the origin\n";

/// How many bytes the tunnel server reads before it answers.
pub const TUNNEL_IN: usize = 1000;
/// How many bytes it answers with (each byte read, three times).
pub const TUNNEL_OUT: usize = 3 * TUNNEL_IN;

/// A server on 127.0.0.1 and the number of connections it accepted.
pub struct Server {
    pub addr: SocketAddr,
    pub accepted: Arc<AtomicUsize>,
}

impl Server {
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }
}

/// An HTTP/1.1 origin (hyper): GET answers [`ORIGIN_BODY`], POST `got N bytes`; every answer
/// says what the origin saw in `x-seen-target`, `x-seen-host` and `x-seen-proxy-headers`.
pub async fn origin() -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(
                        TokioIo::new(stream),
                        hyper::service::service_fn(origin_answer),
                    )
                    .await;
            });
        }
    });
    Server { addr, accepted }
}

async fn origin_answer(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let target = req.uri().to_string();
    let host = req
        .headers()
        .get("host")
        .and_then(|h| h.to_str().ok())
        .unwrap_or("(none)")
        .to_string();
    let mut proxy_headers: Vec<String> = req
        .headers()
        .keys()
        .map(|k| k.as_str().to_string())
        .filter(|k| k.starts_with("proxy-") || k == "connection" || k == "keep-alive")
        .collect();
    if proxy_headers.is_empty() {
        proxy_headers.push("none".into());
    }
    let method = req.method().clone();
    let body = req
        .into_body()
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let text = if method == Method::POST {
        format!("got {} bytes\n", body.len())
    } else {
        ORIGIN_BODY.to_string()
    };
    let resp = Response::builder()
        .header("x-seen-target", target)
        .header("x-seen-host", host)
        .header("x-seen-proxy-headers", proxy_headers.join(","))
        .body(Full::new(Bytes::from(text)));
    Ok(resp.unwrap())
}

/// A raw TCP server: reads [`TUNNEL_IN`] bytes, answers each three times ([`TUNNEL_OUT`]
/// bytes), then closes.
pub async fn tunnel_server() -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut input = vec![0u8; TUNNEL_IN];
                if stream.read_exact(&mut input).await.is_err() {
                    return;
                }
                let output: Vec<u8> = input.iter().flat_map(|b| [*b, *b, *b]).collect();
                let _ = stream.write_all(&output).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    Server { addr, accepted }
}

/// What the tunnel server answers to [`tunnel_input`].
pub fn tunnel_input() -> Vec<u8> {
    (0..TUNNEL_IN).map(|i| (i % 251) as u8).collect()
}

/// A port on 127.0.0.1 where nothing listens.
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Maps test names to addresses and counts the lookups of each name.
pub struct MapResolver {
    names: HashMap<String, Vec<SocketAddr>>,
    pub lookups: Mutex<Vec<String>>,
}

impl MapResolver {
    pub fn new(names: &[(&str, Vec<SocketAddr>)]) -> Arc<MapResolver> {
        Arc::new(MapResolver {
            names: names
                .iter()
                .map(|(n, a)| (n.to_string(), a.clone()))
                .collect(),
            lookups: Mutex::new(Vec::new()),
        })
    }

    pub fn lookups(&self) -> Vec<String> {
        self.lookups.lock().unwrap().clone()
    }
}

impl Resolve for MapResolver {
    fn resolve(&self, host: &str, _port: u16) -> ResolveFuture<'_> {
        self.lookups.lock().unwrap().push(host.to_string());
        let found = self.names.get(host).cloned();
        let host = host.to_string();
        Box::pin(async move {
            found.ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("no such name {host}"))
            })
        })
    }
}

/// Collects records.
#[derive(Default)]
pub struct Records(Mutex<Vec<ConnectionRecord>>);

impl ConnectionSink for Records {
    fn record(&self, record: ConnectionRecord) {
        self.0.lock().unwrap().push(record);
    }
}

impl Records {
    pub fn all(&self) -> Vec<ConnectionRecord> {
        self.0.lock().unwrap().clone()
    }

    /// Waits (up to 5 s) until `n` records are in, then a little more, and answers them all
    /// (so that a test sees it when more than `n` arrive).
    pub async fn wait(&self, n: usize) -> Vec<ConnectionRecord> {
        for _ in 0..500 {
            if self.0.lock().unwrap().len() >= n {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        self.all()
    }
}

/// The names the tests use: `allowed.test`, `denied.test` and `loopback.test` are the origin
/// on 127.0.0.1; `echo.test` the tunnel server; `mixed.test` a private 10.0.0.1 first, then
/// the origin; `closed.test` a loopback port where nothing listens; any other name does not
/// resolve.
pub struct World {
    pub origin: Server,
    pub tunnel: Server,
    pub closed: SocketAddr,
    pub resolver: Arc<MapResolver>,
    pub records: Arc<Records>,
    pub proxy: Proxy,
}

pub async fn world() -> World {
    let origin = origin().await;
    let tunnel = tunnel_server().await;
    let closed: SocketAddr = format!("127.0.0.1:{}", closed_port()).parse().unwrap();
    let ten: SocketAddr = format!("10.0.0.1:{}", origin.addr.port()).parse().unwrap();
    let resolver = MapResolver::new(&[
        ("allowed.test", vec![origin.addr]),
        ("denied.test", vec![origin.addr]),
        ("loopback.test", vec![origin.addr]),
        ("echo.test", vec![tunnel.addr]),
        ("mixed.test", vec![ten, origin.addr]),
        ("closed.test", vec![closed]),
    ]);
    let records = Arc::new(Records::default());
    let proxy = Proxy::new(
        tokio::runtime::Handle::current(),
        resolver.clone(),
        records.clone(),
    );
    World {
        origin,
        tunnel,
        closed,
        resolver,
        records,
        proxy,
    }
}

/// Rules from lists; `allow_private` explicit at every call.
pub fn rules(allow: &[&str], deny: &[&str], allow_private: bool) -> Arc<DomainRules> {
    Arc::new(DomainRules {
        allow: allow.iter().map(std::string::ToString::to_string).collect(),
        deny: deny.iter().map(std::string::ToString::to_string).collect(),
        allow_private,
    })
}

/// A std listener on 127.0.0.1:0, as the sandbox hands one over.
/// Serves a fresh loopback listener for `agent` under `rules`: the guard and the address.
pub fn listen(proxy: &Proxy, agent: &str, rules: Arc<DomainRules>) -> (ServeGuard, SocketAddr) {
    let (listener, addr) = std_listener();
    (proxy.serve(agent, rules, listener).unwrap(), addr)
}

pub fn std_listener() -> (std::net::TcpListener, SocketAddr) {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    (l, addr)
}

/// A response as read off the wire.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub reason: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub type Conn = BufReader<TcpStream>;

pub async fn dial(addr: SocketAddr) -> Conn {
    BufReader::new(TcpStream::connect(addr).await.unwrap())
}

/// Reads one response head and its body (by Content-Length; none when absent).
pub async fn read_answer(conn: &mut Conn) -> Answer {
    let mut line = String::new();
    conn.read_line(&mut line).await.unwrap();
    let mut parts = line.trim_end().splitn(3, ' ');
    let _version = parts.next();
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not a status line: {line:?}"));
    let reason = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        conn.read_line(&mut h).await.unwrap();
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (n, v) = h.split_once(':').unwrap();
        headers.push((n.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map(|(_, v)| v.parse().unwrap())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    conn.read_exact(&mut body).await.unwrap();
    Answer {
        status,
        reason,
        headers,
        body,
    }
}

/// Sends `request` (raw) and reads the answer.
pub async fn ask(conn: &mut Conn, request: &str) -> Answer {
    conn.get_mut().write_all(request.as_bytes()).await.unwrap();
    read_answer(conn).await
}

/// `GET <url>` in absolute form on a connection to the proxy.
pub async fn get(conn: &mut Conn, url: &str) -> Answer {
    let host = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or("");
    ask(
        conn,
        &format!("GET {url} HTTP/1.1\r\nHost: {host}\r\nProxy-Connection: keep-alive\r\n\r\n"),
    )
    .await
}

/// `CONNECT <target>` on a new connection to the proxy; the connection is the tunnel when
/// the answer is 200.
pub async fn connect(proxy: SocketAddr, target: &str) -> (Conn, Answer) {
    let mut conn = dial(proxy).await;
    let answer = ask(
        &mut conn,
        &format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n"),
    )
    .await;
    (conn, answer)
}

/// Sends the tunnel server its input through `conn` and reads its whole answer.
pub async fn through_tunnel(conn: &mut Conn) -> Vec<u8> {
    conn.get_mut().write_all(&tunnel_input()).await.unwrap();
    read_all(conn).await
}

/// Everything until the other side closes (at most 5 s).
pub async fn read_all(conn: &mut Conn) -> Vec<u8> {
    let mut out = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), conn.read_to_end(&mut out))
        .await
        .expect("the other side did not close in 5 s")
        .unwrap();
    out
}

/// Asserts the other side closed `conn` (an end of stream or a reset, within 5 s) with nothing
/// more sent.
pub async fn assert_closed(conn: &mut Conn) {
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), conn.read_to_end(&mut out))
        .await
        .expect("the other side did not close in 5 s");
    match read {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("reading a closed connection: {e}"),
    }
    assert_eq!(out, b"", "bytes came after the close");
}

/// What the tunnel server answers to [`tunnel_input`].
pub fn tunnel_output() -> Vec<u8> {
    tunnel_input().iter().flat_map(|b| [*b, *b, *b]).collect()
}
