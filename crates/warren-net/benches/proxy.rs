//! The proxy's cost, in one run on loopback: a 10 MB download directly, through the proxy as
//! a plain HTTP request, through a CONNECT tunnel, and through a floor relay (the least any
//! relay does: blocking threads splicing, no policy), rounds alternated; the same download from
//! an origin paced at a 1 Gbit/s and at a 10 Gbit/s link's speed; then the time to the first byte of a small
//! answer on a new connection, each way (figures in docs/benchmarks.md).
//!
//! Targets (printed, not asserted): through the proxy at least 80 % of the direct throughput,
//! and at most 2 ms added per new connection. An unpaced download on loopback is bound by the
//! CPU of client, origin and relay together, so on two cores the floor relay shows what any
//! third party can reach; the paced download shows the cost at a network's speed.
//!
//! The clients are blocking threads outside the proxy's runtime (as `curl` in a sandbox is
//! another process); the origin runs on a runtime and thread of its own (it stands for a
//! server elsewhere), the proxy on a tokio runtime of two workers as in Warren.
//! `cargo bench -p warren-net --bench proxy`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use warren_net::{ConnectionRecord, Proxy, Resolve, ResolveFuture};
use warren_types::network::DomainRules;

const BIG: usize = 10 * 1024 * 1024;
const ROUNDS: usize = 30;
const CONNECTIONS: usize = 200;
/// The speeds of the paced origin, in MB/s, and the links they stand for.
const LINKS: [(u32, &str); 2] = [(125, "1 Gbit/s"), (1250, "10 Gbit/s")];
/// Rounds of each paced download (about 80 ms each at 1 Gbit/s).
const PACED_ROUNDS: usize = 10;

struct OneName(SocketAddr);

impl Resolve for OneName {
    fn resolve(&self, _host: &str, _port: u16) -> ResolveFuture<'_> {
        let addr = self.0;
        Box::pin(async move { Ok(vec![addr]) })
    }
}

/// A minimal HTTP/1.1 origin: `/big` answers [`BIG`] bytes as fast as it can, `/paced/N` the
/// same bytes at N MB/s (a network link's speed), anything else `ok`; one request per
/// connection, closed after the answer.
async fn origin(listener: tokio::net::TcpListener) {
    let big: Arc<Vec<u8>> = Arc::new((0..BIG).map(|i| (i % 251) as u8).collect());
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        let _ = stream.set_nodelay(true);
        let big = big.clone();
        tokio::spawn(async move {
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            // `GET /paced/N `: the rate in MB/s.
            let paced: Option<f64> = head
                .strip_prefix(b"GET /paced/")
                .and_then(|rest| rest.split(|b| *b == b' ').next())
                .and_then(|n| std::str::from_utf8(n).ok()?.parse().ok());
            let body: &[u8] = if paced.is_some() || head.starts_with(b"GET /big ") {
                &big
            } else {
                b"ok"
            };
            let answer = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            if stream.write_all(answer.as_bytes()).await.is_err() {
                return;
            }
            if let Some(rate) = paced {
                // Each piece leaves when the link would have carried the bytes before it.
                let start = tokio::time::Instant::now();
                let per_byte = 1.0 / (rate * 1024.0 * 1024.0);
                for (k, piece) in body.chunks(64 * 1024).enumerate() {
                    let due = start + Duration::from_secs_f64((k * 64 * 1024) as f64 * per_byte);
                    tokio::time::sleep_until(due).await;
                    if stream.write_all(piece).await.is_err() {
                        return;
                    }
                }
            } else {
                let _ = stream.write_all(body).await;
            }
            let _ = stream.shutdown().await;
        });
    }
}

/// The floor for a relay: the least a third party can do to carry a tunnel on this machine.
/// Blocking threads, no policy, no record, no async runtime: read the `CONNECT` head, connect
/// to the origin, answer 200, then one thread per direction moving bytes with splice(2)
/// through a kernel pipe, as Warren's tunnels do.
fn floor_relay(listener: std::net::TcpListener, origin: SocketAddr) {
    for client in listener.incoming() {
        let Ok(mut client) = client else { return };
        std::thread::spawn(move || {
            let _ = client.set_nodelay(true);
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                if client.read(&mut byte).unwrap_or(0) == 0 {
                    return;
                }
                head.push(byte[0]);
            }
            let Ok(server) = TcpStream::connect(origin) else {
                return;
            };
            let _ = server.set_nodelay(true);
            if client
                .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                .is_err()
            {
                return;
            }
            let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
            let up = std::thread::spawn(move || splice_blocking(&c2, &s2));
            splice_blocking(&server, &client);
            let _ = up.join();
        });
    }
}

/// Moves bytes from `from` to `to` through a 1 MiB kernel pipe until `from` ends.
fn splice_blocking(from: &TcpStream, to: &TcpStream) {
    use rustix::pipe::{pipe, splice, SpliceFlags};
    let (r, w) = pipe().unwrap();
    let _ = rustix::pipe::fcntl_setpipe_size(&w, 1024 * 1024);
    loop {
        let n = match splice(from, None, &w, None, 1024 * 1024, SpliceFlags::MOVE) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut left = n;
        while left > 0 {
            match splice(&r, None, to, None, left, SpliceFlags::MOVE) {
                Ok(m) if m > 0 => left -= m,
                _ => return,
            }
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

#[derive(Clone, Copy, PartialEq)]
enum Way {
    Direct,
    Http,
    Connect,
    /// A `CONNECT` tunnel through [`floor_relay`] (the proxy address given is the floor's).
    Floor,
}

impl Way {
    fn key(self) -> &'static str {
        match self {
            Way::Direct => "direct",
            Way::Http => "http",
            Way::Connect => "connect",
            Way::Floor => "floor",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Way::Direct => "direct",
            Way::Http => "proxy, plain HTTP",
            Way::Connect => "proxy, CONNECT tunnel",
            Way::Floor => "minimal relay, CONNECT",
        }
    }
}

/// Opens a connection the given way and sends `GET path`; answers the stream, ready to read
/// the origin's answer.
/// Where each way connects.
#[derive(Clone, Copy)]
struct Addrs {
    origin: SocketAddr,
    proxy: SocketAddr,
    floor: SocketAddr,
}

fn open(way: Way, addrs: Addrs, path: &str) -> TcpStream {
    let Addrs { origin, .. } = addrs;
    let proxy = if way == Way::Floor {
        addrs.floor
    } else {
        addrs.proxy
    };
    let get = |target: &str| {
        format!("GET {target} HTTP/1.1\r\nHost: bench.test\r\nConnection: close\r\n\r\n")
    };
    match way {
        Way::Direct => {
            let mut s = TcpStream::connect(origin).unwrap();
            s.set_nodelay(true).unwrap();
            s.write_all(get(path).as_bytes()).unwrap();
            s
        }
        Way::Http => {
            let mut s = TcpStream::connect(proxy).unwrap();
            s.set_nodelay(true).unwrap();
            s.write_all(get(&format!("http://bench.test{path}")).as_bytes())
                .unwrap();
            s
        }
        Way::Connect | Way::Floor => {
            let mut s = TcpStream::connect(proxy).unwrap();
            s.set_nodelay(true).unwrap();
            s.write_all(b"CONNECT bench.test:443 HTTP/1.1\r\nHost: bench.test:443\r\n\r\n")
                .unwrap();
            // The answer head, byte by byte (nothing follows it until the tunnel is used).
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") {
                assert_eq!(s.read(&mut byte).unwrap(), 1, "proxy closed");
                head.push(byte[0]);
            }
            assert!(
                head.starts_with(b"HTTP/1.1 200"),
                "{:?}",
                String::from_utf8_lossy(&head)
            );
            s.write_all(get(path).as_bytes()).unwrap();
            s
        }
    }
}

/// Downloads `path` (`/big` or `/paced/N`) and answers the seconds it took (from connect to the
/// last byte).
fn download(way: Way, addrs: Addrs, path: &str) -> f64 {
    let start = Instant::now();
    let mut s = open(way, addrs, path);
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0usize;
    loop {
        match s.read(&mut buf).unwrap() {
            0 => break,
            n => total += n,
        }
    }
    let secs = start.elapsed().as_secs_f64();
    assert!(total > BIG, "{} read {total} bytes", way.name());
    secs
}

/// The time from connect to the first byte of the answer to `GET /small`.
fn first_byte(way: Way, addrs: Addrs) -> Duration {
    let start = Instant::now();
    let mut s = open(way, addrs, "/small");
    let mut byte = [0u8; 1];
    assert_eq!(s.read(&mut byte).unwrap(), 1);
    let took = start.elapsed();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    took
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// CPU time of this whole process so far (every thread: clients, origin and proxy), in
/// nanoseconds, from the scheduler's own accounting (`/proc/self/task/*/schedstat`).
fn cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return 0;
    };
    tasks
        .filter_map(std::result::Result::ok)
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "(unknown)".into())
}

fn main() {
    println!("load average at start: {}", loadavg());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    // The origin is another server: its own runtime and thread, not the proxy's workers.
    let origin_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let listener = origin_rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let origin_addr = listener.local_addr().unwrap();
    origin_rt.spawn(origin(listener));

    let recorded = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = recorded.clone();
    let sink = move |_: ConnectionRecord| {
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let proxy = Proxy::new(
        rt.handle().clone(),
        Arc::new(OneName(origin_addr)),
        Arc::new(sink),
    );
    // The origin is on loopback: allow_private lets the proxy reach it.
    let rules = Arc::new(DomainRules {
        allow: vec!["bench.test".into()],
        deny: vec![],
        allow_private: true,
    });
    let (port, _guard) = proxy.serve_loopback("bench", rules).unwrap();
    let proxy_addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let floor = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let floor_addr = floor.local_addr().unwrap();
    std::thread::spawn(move || floor_relay(floor, origin_addr));
    let addrs = Addrs {
        origin: origin_addr,
        proxy: proxy_addr,
        floor: floor_addr,
    };

    // Direct first: the ratios are against it. `PROXY_BENCH_WAYS=connect,floor` (names: direct,
    // http, connect, floor) runs only those, for a profile of one way.
    let chosen = std::env::var("PROXY_BENCH_WAYS").unwrap_or_default();
    let ways: Vec<Way> = [Way::Direct, Way::Http, Way::Connect, Way::Floor]
        .into_iter()
        .filter(|w| chosen.is_empty() || chosen.split(',').any(|c| c == w.key()))
        .collect();
    // Warm-up: one of each.
    for &way in &ways {
        download(way, addrs, "/big");
    }

    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); ways.len()];
    let mut cpu = vec![0u64; ways.len()];
    for round in 0..ROUNDS {
        // Rotate the order so that no way always runs first.
        for k in 0..ways.len() {
            let i = (round + k) % ways.len();
            let before = cpu_ns();
            let secs = download(ways[i], addrs, "/big");
            cpu[i] += cpu_ns().saturating_sub(before);
            rates[i].push(BIG as f64 / (1024.0 * 1024.0) / secs);
        }
    }
    println!("\n10 MB download over loopback, {ROUNDS} rounds alternated (median MB/s, min..max):");
    let direct_rate = median(rates[0].clone());
    for (i, way) in ways.iter().enumerate() {
        let m = median(rates[i].clone());
        let lo = rates[i].iter().cloned().fold(f64::INFINITY, f64::min);
        let hi = rates[i].iter().cloned().fold(0.0, f64::max);
        let ratio = if *way == Way::Direct {
            String::new()
        } else {
            format!(
                "  = {:.0} % of direct (target >= 80 %)",
                100.0 * m / direct_rate
            )
        };
        println!(
            "  {:<22} {m:>8.0} MB/s  ({lo:.0}..{hi:.0}){ratio}",
            way.name()
        );
    }
    // The floor relay is the most any relay reaches here: Warren's tunnel against it.
    let of = |way: Way| ways.iter().position(|w| *w == way);
    if let (Some(c), Some(f)) = (of(Way::Connect), of(Way::Floor)) {
        println!(
            "  CONNECT tunnel = {:.0} % of the minimal relay's throughput",
            100.0 * median(rates[c].clone()) / median(rates[f].clone())
        );
    }
    println!("CPU time per 10 MB download (client, origin and relay together):");
    for (i, way) in ways.iter().enumerate() {
        let ms = cpu[i] as f64 / 1e6 / ROUNDS as f64;
        let extra = match of(Way::Direct) {
            Some(d) if *way != Way::Direct => {
                format!(
                    "  (+{:.2} ms over direct)",
                    (cpu[i] as f64 - cpu[d] as f64) / 1e6 / ROUNDS as f64
                )
            }
            _ => String::new(),
        };
        println!("  {:<22} {ms:>8.2} ms{extra}", way.name());
    }

    // At a network link's speed: the origin paced, as a registry across the internet is.
    for (rate, link) in LINKS {
        let path = format!("/paced/{rate}");
        let mut paced: Vec<Vec<f64>> = vec![Vec::new(); ways.len()];
        for round in 0..PACED_ROUNDS {
            for k in 0..ways.len() {
                let i = (round + k) % ways.len();
                let secs = download(ways[i], addrs, &path);
                paced[i].push(BIG as f64 / (1024.0 * 1024.0) / secs);
            }
        }
        println!(
            "\n10 MB download from an origin paced at {rate} MB/s ({link}), {PACED_ROUNDS} rounds (median MB/s):"
        );
        let paced_direct = median(paced[0].clone());
        for (i, way) in ways.iter().enumerate() {
            let m = median(paced[i].clone());
            let ratio = if *way == Way::Direct {
                String::new()
            } else {
                format!(
                    "  = {:.0} % of direct (target >= 80 %)",
                    100.0 * m / paced_direct
                )
            };
            println!("  {:<22} {m:>8.1} MB/s{ratio}", way.name());
        }
    }

    let mut firsts: Vec<Vec<f64>> = vec![Vec::new(); ways.len()];
    for c in 0..CONNECTIONS {
        for k in 0..ways.len() {
            let i = (c + k) % ways.len();
            let took = first_byte(ways[i], addrs);
            firsts[i].push(took.as_secs_f64() * 1000.0);
        }
    }
    println!("\ntime to first byte on a new connection, median of {CONNECTIONS} (ms):");
    let direct_first = median(firsts[0].clone());
    for (i, way) in ways.iter().enumerate() {
        let m = median(firsts[i].clone());
        let added = if *way == Way::Direct {
            String::new()
        } else {
            format!("  added {:.3} ms (target <= 2 ms)", m - direct_first)
        };
        println!("  {:<22} {m:>8.3} ms{added}", way.name());
    }
    // Every download and connection through the proxy was recorded (warm-up included).
    std::thread::sleep(Duration::from_millis(200));
    let proxied = ways
        .iter()
        .filter(|w| matches!(w, Way::Http | Way::Connect))
        .count();
    let through = proxied * (1 + ROUNDS + LINKS.len() * PACED_ROUNDS + CONNECTIONS);
    println!(
        "\nrecords: {} of {through} attempts through the proxy",
        recorded.load(std::sync::atomic::Ordering::Relaxed)
    );
    println!("load average at end: {}", loadavg());
}
