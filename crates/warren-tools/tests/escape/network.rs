//! Network by domain (`network = { allow, deny, allow_private }`): a sandboxed `curl` reaches an
//! allowed name through Warren's proxy and nothing else. Each refusal comes after its positive
//! control, under bubblewrap and under Landlock: a denied name, a direct connection that
//! bypasses the proxy, a UDP datagram, a private IP literal and a name that resolves to loopback.
//! The test servers (plain HTTP, and TLS with a certificate made for the test name) live on the
//! host's loopback, reached through names the proxy's resolver maps to them; every connection the
//! proxy saw is checked to carry mallory's alias.

use crate::fixture::call;
use crate::support::{Lab, Sandbox};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use warren_net::{ConnectionRecord, Proxy, Resolve, ResolveFuture};
use warren_tools::{ToolContext, ToolError};

const BODY: &str = "hello from the allowed server";

/// A plain HTTP server on the host's loopback answering every request with [`BODY`].
fn http_server() -> SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => got.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = write!(
                    s,
                    "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{BODY}",
                    BODY.len()
                );
            });
        }
    });
    addr
}

/// Names the proxy resolves: every `*.test` name to the test server.
struct Names(SocketAddr);

impl Resolve for Names {
    fn resolve(&self, host: &str, port: u16) -> ResolveFuture<'_> {
        let ip = self.0.ip();
        let known = host.ends_with(".test");
        Box::pin(async move {
            if known {
                Ok(vec![SocketAddr::new(ip, port)])
            } else {
                Err(std::io::Error::other("unknown test name"))
            }
        })
    }
}

struct Net {
    lab: Lab,
    ctx: ToolContext,
    server: SocketAddr,
    records: Arc<Mutex<Vec<ConnectionRecord>>>,
    _rt: tokio::runtime::Runtime,
}

impl Net {
    /// mallory with `network` as written (TOML), the proxy resolving `*.test` to the server.
    fn new(sandbox: Sandbox, network: &str) -> Net {
        let lab = Lab::with_profile(sandbox, true, &format!("network = {network}"));
        let server = http_server();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let records = Arc::new(Mutex::new(Vec::new()));
        let sink = records.clone();
        let proxy = Proxy::new(
            rt.handle().clone(),
            Arc::new(Names(server)),
            Arc::new(move |r: ConnectionRecord| sink.lock().unwrap().push(r)),
        );
        let mut ctx = lab.ctx();
        ctx.network = Some(proxy);
        Net {
            lab,
            ctx,
            server,
            records,
            _rt: rt,
        }
    }

    fn sh(&self, command: &str) -> Result<serde_json::Value, ToolError> {
        call(&self.ctx, "shell", json!({ "command": command }))
    }

    fn port(&self) -> u16 {
        self.server.port()
    }

    /// The records the proxy made so far (they are reported as each connection ends).
    fn records(&self) -> Vec<ConnectionRecord> {
        for _ in 0..100 {
            let r = self.records.lock().unwrap().clone();
            if !r.is_empty() {
                return r;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Vec::new()
    }
}

fn stdout(r: &Result<serde_json::Value, ToolError>) -> String {
    match r {
        Ok(v) => v["stdout"].as_str().unwrap_or_default().to_string(),
        Err(ToolError::CommandFailed { stdout, .. }) => stdout.clone(),
        Err(_) => String::new(),
    }
}

fn failure_text(r: &Result<serde_json::Value, ToolError>) -> String {
    match r {
        Err(ToolError::CommandFailed { stdout, stderr, .. }) => format!("{stdout}\n{stderr}"),
        Err(e) => e.to_string(),
        Ok(v) => panic!("expected a failure, got {v}"),
    }
}

const SANDBOXES: [Sandbox; 2] = [Sandbox::Landlock, Sandbox::Bubblewrap];

#[test]
fn an_allowed_name_is_reached_and_a_denied_one_is_refused_in_words() {
    for sb in SANDBOXES {
        if !sb.available() {
            continue;
        }
        let net = Net::new(
            sb,
            r#"{ allow = ["*.test"], deny = ["denied.test"], allow_private = true }"#,
        );
        let port = net.port();
        // Positive control: plain HTTP and a CONNECT tunnel through the proxy.
        let r = net.sh(&format!("curl -sS -f http://allowed.test:{port}/x"));
        assert_eq!(stdout(&r), BODY, "{sb:?}: {r:?}");
        let r = net.sh(&format!("curl -sS -f -p http://tunnel.test:{port}/x"));
        assert_eq!(stdout(&r), BODY, "{sb:?} tunnel: {r:?}");
        // SOCKS5 on the same port, the name resolved by the proxy: carried; a denied name is
        // refused, and the tool result says why.
        // (A script: the shell tool takes no parameter expansion on its own command line.)
        net.lab.fx.write(
            &net.lab.ws("mallory").join("socks.sh"),
            r#"exec curl -sS -f --proxy "socks5h://${HTTP_PROXY#http://}" "$1""#,
        );
        let r = net.sh(&format!("sh socks.sh http://socks.test:{port}/x"));
        assert_eq!(stdout(&r), BODY, "{sb:?} socks5: {r:?}");
        let r = net.sh(&format!("sh socks.sh http://denied.test:{port}/y"));
        let text = failure_text(&r);
        assert!(!text.contains(BODY), "{sb:?}: {text}");
        assert!(
            text.contains(&format!(
                "warren: network: denied.test:{port} refused: deny \"denied.test\""
            )),
            "{sb:?} socks5: {text}"
        );
        // Denied by name: the proxy answers 403 and the tool result says why.
        let r = net.sh(&format!("curl -sS -f http://denied.test:{port}/x"));
        let text = failure_text(&r);
        assert!(!text.contains(BODY), "{sb:?}: {text}");
        assert!(
            text.contains(&format!(
                "warren: network: denied.test:{port} refused: deny \"denied.test\""
            )),
            "{sb:?}: {text}"
        );
        let records = net.records();
        assert!(records.iter().all(|r| r.agent == "mallory"), "{records:?}");
        for (host, allowed) in [
            ("allowed.test", true),
            ("tunnel.test", true),
            ("denied.test", false),
        ] {
            let r = records
                .iter()
                .find(|r| r.host == host)
                .unwrap_or_else(|| panic!("{sb:?}: no record of {host}: {records:?}"));
            assert_eq!(r.allowed, allowed, "{sb:?}: {r:?}");
            assert_eq!(r.port, port);
            if allowed {
                assert!(r.bytes_down >= BODY.len() as u64, "{r:?}");
            }
        }
        assert_eq!(
            records
                .iter()
                .find(|r| r.host == "tunnel.test")
                .unwrap()
                .kind,
            "connect"
        );
        let socks = records
            .iter()
            .find(|r| r.host == "socks.test")
            .unwrap_or_else(|| panic!("{sb:?}: no record of socks.test: {records:?}"));
        assert_eq!((socks.kind, socks.allowed), ("socks5", true), "{socks:?}");
        assert!(socks.bytes_down >= BODY.len() as u64, "{socks:?}");
        assert_eq!(
            records
                .iter()
                .filter(|r| r.host == "denied.test" && !r.allowed)
                .count(),
            2,
            "{sb:?}: {records:?}"
        );
    }
}

#[test]
fn a_direct_connection_around_the_proxy_is_refused() {
    for sb in SANDBOXES {
        if !sb.available() {
            continue;
        }
        let net = Net::new(sb, r#"{ allow = ["*.test"], allow_private = true }"#);
        let port = net.port();
        // Control: the same server through the proxy.
        let r = net.sh(&format!("curl -sS -f http://allowed.test:{port}/"));
        assert_eq!(stdout(&r), BODY, "{sb:?}: {r:?}");
        // Around it: straight to the server's address, the proxy variables ignored.
        let r = net.sh(&format!(
            "curl -sS -f --max-time 5 --noproxy '*' http://127.0.0.1:{port}/"
        ));
        assert!(r.is_err(), "{sb:?}: {r:?}");
        assert!(!stdout(&r).contains(BODY), "{sb:?}: {r:?}");
        // And with the variables removed.
        let r = net.sh(&format!(
            "env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS -f --max-time 5 http://127.0.0.1:{port}/"
        ));
        assert!(!stdout(&r).contains(BODY), "{sb:?}: {r:?}");
    }
}

#[test]
fn a_udp_datagram_is_refused() {
    let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
    receiver
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let port = receiver.local_addr().unwrap().port();
    let send = format!("python3 -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'leak', ('127.0.0.1', {port}))\"");
    // Control: the same program unconfined reaches the receiver.
    let out = std::process::Command::new("sh")
        .args(["-c", &send])
        .status()
        .unwrap();
    assert!(out.success());
    let mut buf = [0u8; 16];
    assert_eq!(receiver.recv(&mut buf).unwrap(), 4, "the control datagram");
    for sb in SANDBOXES {
        if !sb.available() {
            continue;
        }
        let net = Net::new(sb, r#"{ allow = ["*"], allow_private = true }"#);
        let r = net.sh(&send);
        let text = failure_text(&r);
        assert!(text.contains("Operation not permitted"), "{sb:?}: {text}");
        assert!(
            receiver.recv(&mut buf).is_err(),
            "{sb:?}: a datagram arrived"
        );
    }
}

#[test]
fn private_addresses_are_refused_unless_allowed() {
    for sb in SANDBOXES {
        if !sb.available() {
            continue;
        }
        // Control: allowed when allow_private is on.
        let net = Net::new(
            sb,
            r#"{ allow = ["127.0.0.1", "loopback.test"], allow_private = true }"#,
        );
        let port = net.port();
        let r = net.sh(&format!("curl -sS -f http://127.0.0.1:{port}/"));
        assert_eq!(stdout(&r), BODY, "{sb:?}: {r:?}");
        let r = net.sh(&format!("curl -sS -f http://loopback.test:{port}/"));
        assert_eq!(stdout(&r), BODY, "{sb:?}: {r:?}");
        // Off (the default): an IP literal and a name resolving to loopback are refused.
        let net = Net::new(sb, r#"{ allow = ["127.0.0.1", "loopback.test"] }"#);
        let port = net.port();
        for url in [
            format!("http://127.0.0.1:{port}/"),
            format!("http://loopback.test:{port}/"),
        ] {
            let r = net.sh(&format!("curl -sS -f {url}"));
            let text = failure_text(&r);
            assert!(!text.contains(BODY), "{sb:?} {url}: {text}");
            assert!(
                text.contains("private address 127.0.0.1 (allow_private is off)"),
                "{sb:?} {url}: {text}"
            );
        }
        let records = net.records();
        assert!(
            records.iter().all(|r| !r.allowed && r.agent == "mallory"),
            "{records:?}"
        );
    }
}

#[test]
fn without_a_proxy_a_profile_with_domains_gets_no_network() {
    for sb in SANDBOXES {
        if !sb.available() {
            continue;
        }
        let net = Net::new(sb, r#"{ allow = ["*"] }"#);
        let mut ctx = net.lab.ctx();
        ctx.network = None;
        let r = call(&ctx, "shell", json!({ "command": "true" }));
        let e = r.unwrap_err().to_string();
        assert!(e.contains("runs no network proxy"), "{sb:?}: {e}");
    }
}

#[test]
fn doctor_says_how_network_by_domain_is_held_and_what_landlock_cannot_hold() {
    for sb in SANDBOXES {
        if !sb.available() {
            continue;
        }
        let net = Net::new(sb, r#"{ allow = ["*"] }"#);
        let policy = &net.ctx.policy;
        let (eff, _) = warren_policy::sandbox::choose(
            policy.risk.sandbox,
            policy.workspace_only,
            &net.ctx.sandbox,
        )
        .unwrap();
        let e = eff.enforcement(policy);
        let all = format!("{e:?}");
        assert!(all.contains("network by domain"), "{sb:?}: {all}");
        assert!(all.contains("TCP sockets"), "{sb:?}: {all}");
        let gap = e
            .not_enforced
            .iter()
            .any(|l| l.contains("Landlock limits TCP by port, not by address"));
        assert_eq!(gap, sb == Sandbox::Landlock, "{sb:?}: {all}");
    }
}

/// A TLS server on the host's loopback (Python's standard library) with a certificate made for
/// `tls.test`; returns its port and the certificate's text.
fn tls_server(dir: &std::path::Path) -> (u16, String, std::process::Child) {
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args([
            "-subj",
            "/CN=tls.test",
            "-addext",
            "subjectAltName=DNS:tls.test",
        ])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(made.success(), "openssl could not make a certificate");
    let script = r#"
import http.server, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = b"hello over tls"
        self.send_response(200)
        self.send_header("Content-Length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
c.load_cert_chain(sys.argv[1], sys.argv[2])
s.socket = c.wrap_socket(s.socket, server_side=True)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;
    let mut child = std::process::Command::new("/usr/bin/python3")
        .args(["-c", script])
        .arg(&cert)
        .arg(&key)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let port = line.trim().parse().unwrap();
    (port, std::fs::read_to_string(&cert).unwrap(), child)
}

#[test]
fn a_tls_server_of_an_allowed_name_is_reached_through_a_tunnel_and_another_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (port, cert, mut server) = tls_server(dir.path());
    for sb in SANDBOXES {
        if !sb.available() {
            continue;
        }
        let net = Net::new(sb, r#"{ allow = ["tls.test"], allow_private = true }"#);
        net.lab
            .fx
            .write(&net.lab.ws("mallory").join("ca.pem"), &cert);
        // Positive control: HTTPS through the proxy's CONNECT tunnel, the certificate checked
        // end to end (the proxy never sees inside).
        let r = net.sh(&format!(
            "curl -sS -f --cacert ca.pem https://tls.test:{port}/"
        ));
        assert_eq!(stdout(&r), "hello over tls", "{sb:?}: {r:?}");
        // Another name to the same server: refused before any byte reaches it.
        let r = net.sh(&format!(
            "curl -sS -f --cacert ca.pem https://other.test:{port}/"
        ));
        let text = failure_text(&r);
        assert!(!text.contains("hello over tls"), "{sb:?}: {text}");
        assert!(
            text.contains(&format!(
                "warren: network: other.test:{port} refused: no allow pattern matches"
            )),
            "{sb:?}: {text}"
        );
        let records = net.records();
        let tunnel = records
            .iter()
            .find(|r| r.host == "tls.test")
            .unwrap_or_else(|| panic!("{sb:?}: {records:?}"));
        assert_eq!(tunnel.kind, "connect");
        assert!(
            tunnel.allowed && tunnel.bytes_up > 0 && tunnel.bytes_down > 0,
            "{tunnel:?}"
        );
        assert_eq!(tunnel.agent, "mallory");
    }
    let _ = server.kill();
    let _ = server.wait();
}
