//! The proxy with real sockets on loopback: an HTTP origin and a raw TCP server behind
//! `CONNECT`, reached through names the test resolver maps to them.
//!
//! The test servers live on 127.0.0.1, which is a private address: every positive control
//! runs with `allow_private = true`, and the private-address refusals with `allow_private =
//! false`, each stated at the call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use support::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use warren_net::{proxy_env, Proxy};

const ALLOW_PRIVATE: bool = true;
const NO_PRIVATE: bool = false;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_connect_tunnel_carries_bytes_both_ways_and_records_them() {
    let w = world().await;
    let (_guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(&["echo.test:443"], &[], ALLOW_PRIVATE),
    );

    let (mut tunnel, answer) = connect(addr, "echo.test:443").await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.reason, "Connection Established");
    assert_eq!(through_tunnel(&mut tunnel).await, tunnel_output());
    drop(tunnel);

    let records = w.records.wait(1).await;
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!(r.agent, "builder");
    assert_eq!(
        (r.host.as_str(), r.port, r.kind),
        ("echo.test", 443, "connect")
    );
    assert!(r.allowed);
    assert_eq!(r.rule, "allow \"echo.test:443\"");
    assert_eq!(r.address, Some(w.tunnel.addr));
    assert_eq!(
        (r.bytes_up, r.bytes_down),
        (TUNNEL_IN as u64, TUNNEL_OUT as u64)
    );
    assert!(r.started_unix_ms > 1_600_000_000_000);
    // Resolved once, and the connection went to that answer (no second lookup to rebind).
    assert_eq!(w.resolver.lookups(), ["echo.test"]);

    // A client that sends its first bytes right behind the CONNECT head, before the answer
    // (as some TLS clients do): those bytes are not lost and are counted.
    let mut conn = dial(addr).await;
    let mut early = b"CONNECT echo.test:443 HTTP/1.1\r\nHost: echo.test:443\r\n\r\n".to_vec();
    early.extend_from_slice(&tunnel_input());
    conn.get_mut().write_all(&early).await.unwrap();
    let answer = read_answer(&mut conn).await;
    assert_eq!(answer.status, 200);
    assert_eq!(read_all(&mut conn).await, tunnel_output());
    drop(conn);
    let records = w.records.wait(2).await;
    assert_eq!(
        (records[1].bytes_up, records[1].bytes_down),
        (TUNNEL_IN as u64, TUNNEL_OUT as u64)
    );

    // The port is part of the pattern: the same name on another port is refused.
    let (_, answer) = connect(addr, "echo.test:8443").await;
    assert_eq!(answer.status, 403);
    assert_eq!(w.tunnel.accepted(), 2);
}

/// Megabytes each way at once through one tunnel, the client reading in small pieces with
/// pauses: the relay's pipe fills, its writes are refused, its reads are put off, and every
/// byte still arrives once and in order, and the record counts them all.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bulk_tunnel_to_a_slow_reader_loses_and_reorders_nothing() {
    const BULK: usize = 6 * 1024 * 1024;
    // An echo server: what it reads it writes back, until the client half-closes.
    let echo = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let echo_addr = echo.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut stream, _) = echo.accept().await.unwrap();
        let (mut r, mut w) = stream.split();
        let _ = tokio::io::copy(&mut r, &mut w).await;
        let _ = w.shutdown().await;
    });
    let records = Arc::new(Records::default());
    let proxy = Proxy::new(
        tokio::runtime::Handle::current(),
        MapResolver::new(&[("bulk.test", vec![echo_addr])]),
        records.clone(),
    );
    let (_guard, addr) = listen(&proxy, "builder", rules(&["bulk.test"], &[], ALLOW_PRIVATE));

    let (conn, answer) = connect(addr, "bulk.test:443").await;
    assert_eq!(answer.status, 200);
    assert!(conn.buffer().is_empty());
    let stream = conn.into_inner();
    stream.set_nodelay(true).unwrap();
    let (mut read, mut write) = stream.into_split();
    let sent: Vec<u8> = (0..BULK).map(|i| (i * 7 % 253) as u8).collect();
    let to_send = sent.clone();
    // Small writes without Nagle: many short segments, so that the relay's pipe can fill
    // its slots long before its bytes.
    let writer = tokio::spawn(async move {
        for piece in to_send.chunks(300) {
            write.write_all(piece).await.unwrap();
        }
        write.shutdown().await.unwrap();
    });
    let mut got = Vec::with_capacity(BULK);
    let mut piece = [0u8; 4096];
    let mut reads = 0usize;
    loop {
        let n = tokio::time::timeout(Duration::from_secs(20), read.read(&mut piece))
            .await
            .expect("the tunnel stalled")
            .unwrap();
        if n == 0 {
            break;
        }
        got.extend_from_slice(&piece[..n]);
        reads += 1;
        if reads.is_multiple_of(64) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
    writer.await.unwrap();
    assert_eq!(got.len(), BULK);
    assert!(got == sent, "the bytes came back changed or out of order");

    let records = records.wait(1).await;
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(
        (records[0].bytes_up, records[0].bytes_down),
        (BULK as u64, BULK as u64)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_plain_request_is_forwarded_in_origin_form_and_its_body_returned() {
    let w = world().await;
    let (_guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(&["allowed.test"], &[], ALLOW_PRIVATE),
    );

    let mut conn = dial(addr).await;
    let answer = ask(
        &mut conn,
        "GET http://allowed.test:8080/hello?x=1 HTTP/1.1\r\nHost: allowed.test:8080\r\n\
         Proxy-Authorization: Basic c2VjcmV0\r\nProxy-Connection: keep-alive\r\n\
         Connection: keep-alive, x-hop\r\nX-Hop: 1\r\n\r\n",
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.text());
    assert_eq!(answer.text(), ORIGIN_BODY);
    assert_eq!(answer.header("x-seen-target"), Some("/hello?x=1"));
    assert_eq!(answer.header("x-seen-host"), Some("allowed.test:8080"));
    assert_eq!(answer.header("x-seen-proxy-headers"), Some("none"));

    // The origin is asked for the host that was checked, whatever Host header came along.
    let answer = ask(
        &mut conn,
        "GET http://allowed.test/hello HTTP/1.1\r\nHost: evil.example\r\n\r\n",
    )
    .await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.header("x-seen-host"), Some("allowed.test"));

    // A request body goes up and is counted, on the same keep-alive connection.
    let answer = ask(
        &mut conn,
        "POST http://allowed.test/upload HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\n\r\nabcde",
    )
    .await;
    assert_eq!(answer.text(), "got 5 bytes\n");

    let records = w.records.wait(3).await;
    assert_eq!(records.len(), 3, "{records:?}");
    let (get, post) = (&records[0], &records[2]);
    assert_eq!(
        (get.kind, get.host.as_str(), get.port),
        ("http", "allowed.test", 8080)
    );
    assert!(get.allowed);
    assert_eq!(get.rule, "allow \"allowed.test\"");
    assert_eq!(get.address, Some(w.origin.addr));
    assert_eq!(
        (get.bytes_up, get.bytes_down),
        (0, ORIGIN_BODY.len() as u64)
    );
    assert_eq!(post.port, 80);
    assert_eq!(
        (post.bytes_up, post.bytes_down),
        (5, "got 5 bytes\n".len() as u64)
    );
    // A fresh upstream connection per request, each to the address of its one lookup.
    assert_eq!(w.origin.accepted(), 3);
    assert_eq!(w.resolver.lookups(), ["allowed.test"; 3]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_wins_over_allow() {
    let w = world().await;
    let (_guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(&["*.test"], &["denied.test"], ALLOW_PRIVATE),
    );

    // Control: another name under the same allow pattern passes.
    let mut conn = dial(addr).await;
    assert_eq!(get(&mut conn, "http://allowed.test/").await.status, 200);

    let answer = get(&mut dial(addr).await, "http://denied.test/").await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.header("x-warren-refused"),
        Some("deny \"denied.test\"")
    );
    let (_, answer) = connect(addr, "denied.test:443").await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.text(),
        "Warren refused denied.test:443: deny \"denied.test\"\n"
    );
    assert_eq!(
        w.origin.accepted(),
        1,
        "a denied request reached the origin"
    );

    let records = w.records.wait(3).await;
    assert_eq!(records.len(), 3);
    assert!(records[0].allowed);
    for r in &records[1..] {
        assert!(!r.allowed);
        assert_eq!(r.rule, "deny \"denied.test\"");
        assert_eq!(r.address, None);
        assert_eq!((r.bytes_up, r.bytes_down), (0, 0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_no_allow_pattern_matches_is_refused_with_the_rule_in_header_and_body() {
    let w = world().await;
    let (_guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(&["allowed.test"], &[], ALLOW_PRIVATE),
    );

    let (_, answer) = connect(addr, "evil.example:443").await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.header("x-warren-refused"),
        Some("no allow pattern matches")
    );
    assert_eq!(
        answer.text(),
        "Warren refused evil.example:443: no allow pattern matches\n"
    );
    let answer = get(&mut dial(addr).await, "http://Evil.Example./x").await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.text(),
        "Warren refused evil.example:80: no allow pattern matches\n"
    );
    // Decided before any lookup: the refused name was never resolved.
    assert!(
        w.resolver.lookups().is_empty(),
        "{:?}",
        w.resolver.lookups()
    );

    let records = w.records.wait(2).await;
    assert_eq!(records.len(), 2);
    assert_eq!(records[0].kind, "connect");
    assert_eq!(records[1].kind, "http");
    for r in &records {
        assert_eq!(r.host, "evil.example");
        assert!(!r.allowed);
        assert_eq!(r.rule, "no allow pattern matches");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ip_literal_of_loopback_is_refused_unless_allow_private() {
    let w = world().await;
    let echo = w.tunnel.addr;
    let allow = ["127.0.0.1", "[::1]"];

    // Control: with allow_private on, the literal is reached.
    let (on, on_addr) = std_listener();
    let _on = w
        .proxy
        .serve("builder", rules(&allow, &[], ALLOW_PRIVATE), on)
        .unwrap();
    let (mut tunnel, answer) = connect(on_addr, &echo.to_string()).await;
    assert_eq!(answer.status, 200);
    assert_eq!(through_tunnel(&mut tunnel).await, tunnel_output());

    let (off, off_addr) = std_listener();
    let _off = w
        .proxy
        .serve("builder", rules(&allow, &[], NO_PRIVATE), off)
        .unwrap();
    let (_, answer) = connect(off_addr, &echo.to_string()).await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.header("x-warren-refused"),
        Some("private address 127.0.0.1 (allow_private is off)")
    );
    let answer = get(
        &mut dial(off_addr).await,
        &format!("http://127.0.0.1:{}/hello", w.origin.addr.port()),
    )
    .await;
    assert_eq!(answer.status, 403);
    let (_, answer) = connect(off_addr, "[::1]:443").await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.text(),
        "Warren refused [::1]:443: private address ::1 (allow_private is off)\n"
    );

    assert_eq!(w.tunnel.accepted(), 1);
    assert_eq!(w.origin.accepted(), 0);
    // IP literals are not resolved.
    assert!(w.resolver.lookups().is_empty());
    drop(tunnel);
    let records = w.records.wait(4).await;
    assert_eq!(records.iter().filter(|r| r.allowed).count(), 1);
    assert!(records
        .iter()
        .any(|r| r.host == "::1" && !r.allowed && r.address.is_none()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_resolving_to_a_private_address_is_refused_unless_allow_private() {
    let w = world().await;
    let allow = ["loopback.test", "mixed.test"];

    // Control: with allow_private on, the name is reached.
    let (on, on_addr) = std_listener();
    let _on = w
        .proxy
        .serve("builder", rules(&allow, &[], ALLOW_PRIVATE), on)
        .unwrap();
    let answer = get(&mut dial(on_addr).await, "http://loopback.test/hello").await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.text(), ORIGIN_BODY);
    assert_eq!(w.origin.accepted(), 1);

    let (off, off_addr) = std_listener();
    let _off = w
        .proxy
        .serve("builder", rules(&allow, &[], NO_PRIVATE), off)
        .unwrap();
    let answer = get(&mut dial(off_addr).await, "http://loopback.test/hello").await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.header("x-warren-refused"),
        Some("private address 127.0.0.1 (allow_private is off)")
    );
    let (_, answer) = connect(off_addr, "loopback.test:443").await;
    assert_eq!(answer.status, 403);
    // Every address is checked; the refusal names the first.
    let answer = get(&mut dial(off_addr).await, "http://mixed.test/").await;
    assert_eq!(answer.status, 403);
    assert_eq!(
        answer.header("x-warren-refused"),
        Some("private address 10.0.0.1 (allow_private is off)")
    );
    assert_eq!(w.origin.accepted(), 1, "a private address was reached");

    let records = w.records.wait(4).await;
    assert_eq!(records.len(), 4);
    for r in &records[1..] {
        assert!(!r.allowed);
        assert!(r.rule.starts_with("private address "), "{}", r.rule);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_of_a_keep_alive_connection_is_decided_on_its_own() {
    let w = world().await;
    let (_guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(&["allowed.test"], &[], ALLOW_PRIVATE),
    );

    let mut conn = dial(addr).await;
    let first = get(&mut conn, "http://allowed.test/hello").await;
    assert_eq!(first.status, 200);
    assert_eq!(first.text(), ORIGIN_BODY);
    let second = get(&mut conn, "http://denied.test/hello").await;
    assert_eq!(second.status, 403);
    assert_eq!(
        second.header("x-warren-refused"),
        Some("no allow pattern matches")
    );
    let third = get(&mut conn, "http://allowed.test/hello").await;
    assert_eq!(third.status, 200);
    assert_eq!(w.origin.accepted(), 2);

    let records = w.records.wait(3).await;
    let seen: Vec<(&str, bool)> = records
        .iter()
        .map(|r| (r.host.as_str(), r.allowed))
        .collect();
    assert_eq!(
        seen,
        [
            ("allowed.test", true),
            ("denied.test", false),
            ("allowed.test", true)
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_guard_stops_accepting_and_closes_open_tunnels() {
    let w = world().await;
    let (guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(&["allowed.test", "echo.test"], &[], ALLOW_PRIVATE),
    );

    // Control: served while the guard lives.
    assert_eq!(
        get(&mut dial(addr).await, "http://allowed.test/")
            .await
            .status,
        200
    );
    let (mut tunnel, answer) = connect(addr, "echo.test:443").await;
    assert_eq!(answer.status, 200);
    let half = &tunnel_input()[..TUNNEL_IN / 2];
    tunnel.get_mut().write_all(half).await.unwrap();

    drop(guard);
    tokio::time::sleep(Duration::from_millis(100)).await;

    match tokio::net::TcpStream::connect(addr).await {
        Err(_) => {} // closed: refused
        Ok(mut stream) => {
            let _ = stream
                .write_all(b"GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
                .await;
            let mut buf = [0u8; 64];
            let read = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buf)).await;
            if let Ok(Ok(n)) = read {
                assert_eq!(n, 0, "served after the guard was dropped: {:?}", &buf[..n]);
            }
        }
    }
    assert_eq!(w.origin.accepted(), 1);

    // The tunnel opened before the drop is closed: nothing more comes through it, and its
    // record says so, with the bytes it carried.
    assert_closed(&mut tunnel).await;
    let records = w.records.wait(2).await;
    let cut = records.iter().find(|r| r.kind == "connect").unwrap();
    // (The half written may still have been on its way when the tunnel was cut.)
    assert!(
        cut.bytes_up <= TUNNEL_IN as u64 / 2 && cut.bytes_down == 0,
        "{cut:?}"
    );
    assert!(
        cut.rule
            .ends_with("(closed: the command it served had ended)"),
        "{cut:?}"
    );
}

/// A tunnel still open when the command has ended belongs to a process left behind: finish
/// waits its grace, then closes it; another listener of the same agent (a call running at the
/// same time) keeps its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finish_closes_tunnels_left_open_and_spares_another_calls_listener() {
    let w = world().await;
    let serve = |l| {
        w.proxy
            .serve("builder", rules(&["echo.test"], &[], ALLOW_PRIVATE), l)
            .unwrap()
    };
    let (first_l, first) = std_listener();
    let (second_l, second) = std_listener();
    let (first_guard, second_guard) = (serve(first_l), serve(second_l));

    // A tunnel on each, both held open halfway through their input.
    let half = &tunnel_input()[..TUNNEL_IN / 2];
    let (mut left_behind, answer) = connect(first, "echo.test:443").await;
    assert_eq!(answer.status, 200);
    left_behind.get_mut().write_all(half).await.unwrap();
    let (mut other_call, answer) = connect(second, "echo.test:443").await;
    assert_eq!(answer.status, 200);
    other_call.get_mut().write_all(half).await.unwrap();
    // Both tunnels are through to the server before the first call ends.
    for _ in 0..200 {
        if w.tunnel.accepted() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(w.tunnel.accepted(), 2);

    let ended_in_grace =
        tokio::task::spawn_blocking(move || first_guard.finish(Duration::from_millis(200)))
            .await
            .unwrap();
    assert!(
        !ended_in_grace,
        "a tunnel was left open: finish must say so"
    );
    assert_closed(&mut left_behind).await;
    let records = w.records.all();
    assert_eq!(records.len(), 1, "{records:?}");
    assert!(records[0].bytes_up <= TUNNEL_IN as u64 / 2 && records[0].bytes_down == 0);
    assert!(records[0]
        .rule
        .ends_with("(closed: the command it served had ended)"));

    // The other call's tunnel still carries its bytes to the end.
    other_call
        .get_mut()
        .write_all(&tunnel_input()[TUNNEL_IN / 2..])
        .await
        .unwrap();
    assert_eq!(read_all(&mut other_call).await, tunnel_output());
    drop(other_call);
    let ended_in_grace =
        tokio::task::spawn_blocking(move || second_guard.finish(Duration::from_secs(5)))
            .await
            .unwrap();
    assert!(ended_in_grace);
    let records = w.records.all();
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(
        (records[1].bytes_up, records[1].bytes_down),
        (TUNNEL_IN as u64, TUNNEL_OUT as u64)
    );
    assert_eq!(records[1].rule, "allow \"echo.test\"");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_carry_the_agent_of_their_listener() {
    let w = world().await;
    let (builder_l, builder_addr) = std_listener();
    let (research_l, research_addr) = std_listener();
    let builder = w
        .proxy
        .serve(
            "builder",
            rules(&["allowed.test"], &[], ALLOW_PRIVATE),
            builder_l,
        )
        .unwrap();
    let researcher = w
        .proxy
        .serve(
            "researcher",
            rules(&["echo.test"], &[], ALLOW_PRIVATE),
            research_l,
        )
        .unwrap();

    let builder_side = async {
        let mut conn = dial(builder_addr).await;
        for _ in 0..3 {
            assert_eq!(get(&mut conn, "http://allowed.test/").await.status, 200);
        }
    };
    let researcher_side = async {
        let (mut tunnel, answer) = connect(research_addr, "echo.test:443").await;
        assert_eq!(answer.status, 200);
        assert_eq!(through_tunnel(&mut tunnel).await, tunnel_output());
        // Its rules are its own: the builder's domain is refused here.
        let answer = get(&mut dial(research_addr).await, "http://allowed.test/").await;
        assert_eq!(answer.status, 403);
    };
    tokio::join!(builder_side, researcher_side);

    let records = w.records.wait(5).await;
    assert_eq!(records.len(), 5, "{records:?}");
    let mut by_agent: Vec<(&str, &str, bool)> = records
        .iter()
        .map(|r| (r.agent.as_str(), r.host.as_str(), r.allowed))
        .collect();
    by_agent.sort();
    assert_eq!(
        by_agent,
        [
            ("builder", "allowed.test", true),
            ("builder", "allowed.test", true),
            ("builder", "allowed.test", true),
            ("researcher", "allowed.test", false),
            ("researcher", "echo.test", true),
        ]
    );
    assert!(builder.refusals().is_empty());
    assert_eq!(
        researcher.refusals(),
        ["allowed.test:80 refused: no allow pattern matches"]
    );
    assert_eq!(researcher.agent(), "researcher");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_are_listed_in_words_and_failures_are_not_refusals() {
    let w = world().await;
    let (guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(
            &[
                "allowed.test",
                "loopback.test",
                "nowhere.test",
                "closed.test",
            ],
            &["denied.test"],
            NO_PRIVATE,
        ),
    );

    let (_, a) = connect(addr, "evil.example:443").await;
    assert_eq!(a.status, 403);
    assert_eq!(
        get(&mut dial(addr).await, "http://denied.test/")
            .await
            .status,
        403
    );
    assert_eq!(
        get(&mut dial(addr).await, "http://loopback.test:8080/")
            .await
            .status,
        403
    );
    // Allowed but failing: 502, recorded, not refusals.
    let answer = get(&mut dial(addr).await, "http://nowhere.test/").await;
    assert_eq!(answer.status, 502);
    assert!(
        answer.text().contains("could not resolve"),
        "{}",
        answer.text()
    );

    assert_eq!(
        guard.refusals(),
        [
            "evil.example:443 refused: no allow pattern matches",
            "denied.test:80 refused: deny \"denied.test\"",
            "loopback.test:8080 refused: private address 127.0.0.1 (allow_private is off)",
        ]
    );
    let records = w.records.wait(4).await;
    let last = &records[3];
    assert!(last.allowed);
    assert!(
        last.rule.starts_with("could not resolve: "),
        "{}",
        last.rule
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_hosts_answer_502_and_say_why() {
    let w = world().await;
    let (guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(&["nowhere.test", "closed.test"], &[], ALLOW_PRIVATE),
    );

    let (_, answer) = connect(addr, "nowhere.test:443").await;
    assert_eq!(answer.status, 502);
    assert_eq!(
        answer.text(),
        "Warren could not reach nowhere.test:443: could not resolve: no such name nowhere.test\n"
    );
    let (_, answer) = connect(addr, "closed.test:443").await;
    assert_eq!(answer.status, 502);
    assert!(
        answer
            .text()
            .contains(&format!("connect failed: {}", w.closed)),
        "{}",
        answer.text()
    );

    let records = w.records.wait(2).await;
    assert_eq!(records.len(), 2);
    assert!(records.iter().all(|r| r.allowed));
    assert_eq!(records[0].address, None);
    assert_eq!(records[1].address, Some(w.closed));
    assert!(records[1].rule.starts_with("connect failed: "));
    assert!(guard.refusals().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_to_the_proxy_itself_get_400_and_no_record() {
    let w = world().await;
    let (_guard, addr) = listen(&w.proxy, "builder", rules(&["*"], &[], ALLOW_PRIVATE));

    let mut conn = dial(addr).await;
    let answer = ask(
        &mut conn,
        "GET /hello HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
    )
    .await;
    assert_eq!(answer.status, 400);
    assert_eq!(answer.text().lines().count(), 1, "{}", answer.text());
    let answer = get(&mut conn, "https://allowed.test/").await;
    assert_eq!(answer.status, 400);
    assert!(answer.text().contains("CONNECT"));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(w.records.all().len(), 0);
    assert_eq!(w.origin.accepted(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_client_does_not_hold_the_proxy() {
    let w = world().await;
    let proxy = w
        .proxy
        .clone()
        .with_header_read_timeout(Duration::from_millis(300));
    let (_guard, addr) = listen(
        &proxy,
        "builder",
        rules(&["allowed.test"], &[], ALLOW_PRIVATE),
    );

    // One client says nothing, another stops in the middle of its request head.
    let mut silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut halting = tokio::net::TcpStream::connect(addr).await.unwrap();
    halting
        .write_all(b"GET http://allowed.test/ HTTP/1.1\r\nHost: allo")
        .await
        .unwrap();

    // Meanwhile the proxy serves others.
    let answer = get(&mut dial(addr).await, "http://allowed.test/").await;
    assert_eq!(answer.status, 200);

    // And closes the two after the header-read timeout.
    for stream in [&mut silent, &mut halting] {
        let mut rest = Vec::new();
        let read =
            tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut rest)).await;
        assert!(
            read.is_ok(),
            "a connection that sent no request head was kept open"
        );
        let text = String::from_utf8_lossy(&rest);
        assert!(
            rest.is_empty() || text.starts_with("HTTP/1.1 408"),
            "{text}"
        );
    }
}

#[test]
fn serve_works_from_a_thread_outside_the_runtime() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let w = rt.block_on(world());
    // Outside any runtime: this thread is not a worker, and no runtime is entered.
    let proxy = Proxy::new(rt.handle().clone(), w.resolver.clone(), w.records.clone());
    assert!(tokio::runtime::Handle::try_current().is_err());
    let (served, addr) = listen(
        &proxy,
        "builder",
        rules(&["allowed.test"], &[], ALLOW_PRIVATE),
    );
    let (port, on_loopback) = proxy
        .serve_loopback("landlocked", rules(&["echo.test"], &[], ALLOW_PRIVATE))
        .unwrap();

    rt.block_on(async {
        assert_eq!(
            get(&mut dial(addr).await, "http://allowed.test/")
                .await
                .status,
            200
        );
        let loopback = format!("127.0.0.1:{port}").parse().unwrap();
        let (mut tunnel, answer) = connect(loopback, "echo.test:443").await;
        assert_eq!(answer.status, 200);
        assert_eq!(through_tunnel(&mut tunnel).await, tunnel_output());
    });
    let records = rt.block_on(w.records.wait(2));
    let mut agents: Vec<&str> = records.iter().map(|r| r.agent.as_str()).collect();
    agents.sort();
    assert_eq!(agents, ["builder", "landlocked"]);
    drop((served, on_loopback));
}

#[test]
fn the_child_environment_points_every_proxy_variable_at_the_listener() {
    let env = proxy_env(3128);
    for (name, value) in &env {
        if name.eq_ignore_ascii_case("no_proxy") {
            assert_eq!(value, "");
        } else {
            assert_eq!(value, "http://127.0.0.1:3128", "{name}");
        }
    }
    assert!(env.iter().any(|(n, _)| n == "https_proxy"));
}

/// A SOCKS5 client's greeting and `CONNECT` request for `host:port` by name (address type 3);
/// answers the stream and the reply code (the greeting's method must be "no authentication").
async fn socks_connect_by_name(
    proxy: std::net::SocketAddr,
    host: &str,
    port: u16,
) -> (tokio::net::TcpStream, u8) {
    let mut request = vec![5, 1, 0, 3, u8::try_from(host.len()).unwrap()];
    request.extend_from_slice(host.as_bytes());
    request.extend_from_slice(&port.to_be_bytes());
    socks_request(proxy, &request).await
}

/// Sends the greeting, then `request` (a whole SOCKS5 request); answers the stream and the
/// reply code.
async fn socks_request(proxy: std::net::SocketAddr, request: &[u8]) -> (tokio::net::TcpStream, u8) {
    let mut s = tokio::net::TcpStream::connect(proxy).await.unwrap();
    s.write_all(&[5, 1, 0]).await.unwrap();
    let mut method = [0u8; 2];
    s.read_exact(&mut method).await.unwrap();
    assert_eq!(method, [5, 0], "no authentication accepted");
    s.write_all(request).await.unwrap();
    let mut reply = [0u8; 10];
    s.read_exact(&mut reply).await.unwrap();
    assert_eq!((reply[0], reply[2], reply[3]), (5, 0, 1), "{reply:?}");
    (s, reply[1])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socks5_connect_by_name_is_decided_carried_and_recorded_like_connect() {
    let w = world().await;
    let (_guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(&["echo.test:443"], &["denied.test"], ALLOW_PRIVATE),
    );

    // Positive control: an allowed name carries bytes both ways.
    let (mut s, code) = socks_connect_by_name(addr, "echo.test", 443).await;
    assert_eq!(code, 0, "succeeded");
    s.write_all(&tunnel_input()).await.unwrap();
    let mut got = Vec::new();
    s.read_to_end(&mut got).await.unwrap();
    assert_eq!(got, tunnel_output());
    drop(s);
    let records = w.records.wait(1).await;
    assert_eq!(records.len(), 1, "{records:?}");
    let r = &records[0];
    assert_eq!(
        (r.agent.as_str(), r.host.as_str(), r.port, r.kind, r.allowed),
        ("builder", "echo.test", 443, "socks5", true)
    );
    assert_eq!(r.rule, "allow \"echo.test:443\"");
    assert_eq!(
        (r.bytes_up, r.bytes_down),
        (TUNNEL_IN as u64, TUNNEL_OUT as u64)
    );
    assert_eq!(w.tunnel.accepted(), 1);

    // Denied by a deny pattern, and by no allow pattern: reply 02, nothing reached.
    let (_, code) = socks_connect_by_name(addr, "denied.test", 80).await;
    assert_eq!(code, 2, "not allowed by ruleset");
    let (_, code) = socks_connect_by_name(addr, "echo.test", 8443).await;
    assert_eq!(code, 2, "the port is part of the pattern");
    let records = w.records.wait(3).await;
    assert_eq!(records.len(), 3, "{records:?}");
    assert!(!records[1].allowed && records[1].rule == "deny \"denied.test\"");
    assert!(!records[2].allowed && records[2].rule == "no allow pattern matches");
    assert_eq!(w.tunnel.accepted(), 1);
    assert_eq!(w.origin.accepted(), 0);
    // Refusals are kept in words for the tool result, as for HTTP.
    assert_eq!(
        _guard.refusals(),
        [
            "denied.test:80 refused: deny \"denied.test\"",
            "echo.test:8443 refused: no allow pattern matches"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socks5_refuses_private_addresses_unknown_names_and_other_commands() {
    let w = world().await;
    let (listener, addr) = std_listener();
    let port = w.tunnel.addr.port();
    let _guard = w
        .proxy
        .serve("builder", rules(&["*"], &[], NO_PRIVATE), listener)
        .unwrap();

    // An IPv4 literal of loopback (address type 1) and a name that resolves to loopback.
    let mut by_ip = vec![5, 1, 0, 1, 127, 0, 0, 1];
    by_ip.extend_from_slice(&port.to_be_bytes());
    let (_, code) = socks_request(addr, &by_ip).await;
    assert_eq!(code, 2);
    let (_, code) = socks_connect_by_name(addr, "echo.test", port).await;
    assert_eq!(code, 2);
    // An IPv6 literal of loopback (address type 4).
    let mut by_ip6 = vec![5, 1, 0, 4];
    by_ip6.extend_from_slice(&std::net::Ipv6Addr::LOCALHOST.octets());
    by_ip6.extend_from_slice(&port.to_be_bytes());
    let (_, code) = socks_request(addr, &by_ip6).await;
    assert_eq!(code, 2);
    // A name nobody resolves: host unreachable (allowed, failed).
    let (_, code) = socks_connect_by_name(addr, "nowhere.test", 443).await;
    assert_eq!(code, 4);
    // BIND (2) and UDP ASSOCIATE (3): not supported, and nothing recorded for them.
    for command in [2u8, 3] {
        let mut req = vec![5, command, 0, 3, 9];
        req.extend_from_slice(b"echo.test");
        req.extend_from_slice(&443u16.to_be_bytes());
        let (_, code) = socks_request(addr, &req).await;
        assert_eq!(code, 7, "command {command}");
    }
    // A name that is no plain host (user information in it): general failure, unrecorded, as
    // an unparsable CONNECT target is.
    let (_, code) = socks_connect_by_name(addr, "me@echo.test", port).await;
    assert_eq!(code, 1);
    let records = w.records.wait(4).await;
    assert_eq!(records.len(), 4, "{records:?}");
    for r in &records[..3] {
        assert!(!r.allowed, "{r:?}");
        assert!(r.rule.starts_with("private address "), "{r:?}");
        assert_eq!(r.kind, "socks5");
    }
    assert!(records[3].allowed && records[3].rule.starts_with("could not resolve"));
    assert_eq!(w.tunnel.accepted(), 0, "no private address was reached");

    // A client offering only username/password authentication: no acceptable method.
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(&[5, 1, 2]).await.unwrap();
    let mut method = [0u8; 2];
    s.read_exact(&mut method).await.unwrap();
    assert_eq!(method, [5, 0xff]);
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).await.unwrap();
    assert!(rest.is_empty());

    // HTTP is still served on the same listener (the first byte decides the protocol): a
    // plain request gets its HTTP answer (a refusal here, the name being private).
    let mut conn = dial(addr).await;
    conn.get_mut()
        .write_all(b"GET http://echo.test/ HTTP/1.1\r\nHost: echo.test\r\n\r\n")
        .await
        .unwrap();
    let answer = read_answer(&mut conn).await;
    assert_eq!(answer.status, 403, "HTTP is served beside SOCKS5");
}

/// A process left behind holding a SOCKS5 tunnel, or stuck halfway through its greeting, keeps
/// nothing once the call has ended: both are closed, and the tunnel is recorded as cut.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finish_closes_socks5_tunnels_and_greetings_left_open() {
    let w = world().await;
    let (guard, addr) = listen(
        &w.proxy,
        "builder",
        rules(&["echo.test"], &[], ALLOW_PRIVATE),
    );
    let (mut tunnel, code) = socks_connect_by_name(addr, "echo.test", 443).await;
    assert_eq!(code, 0);
    tunnel
        .write_all(&tunnel_input()[..TUNNEL_IN / 2])
        .await
        .unwrap();
    // Only the first byte of a greeting.
    let mut stuck = tokio::net::TcpStream::connect(addr).await.unwrap();
    stuck.write_all(&[5]).await.unwrap();
    for _ in 0..200 {
        if w.tunnel.accepted() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(w.tunnel.accepted(), 1);

    let ended = tokio::task::spawn_blocking(move || guard.finish(Duration::from_millis(200)))
        .await
        .unwrap();
    assert!(!ended, "connections were left open: finish must say so");
    for s in [&mut tunnel, &mut stuck] {
        let mut out = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut out))
            .await
            .expect("the proxy did not close it in 5 s");
        assert!(
            read.is_ok() || read.is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset)
        );
        assert_eq!(out, b"", "bytes came after the close");
    }
    let records = w.records.all();
    assert_eq!(
        records.len(),
        1,
        "only the tunnel is an attempt: {records:?}"
    );
    assert_eq!(records[0].kind, "socks5");
    assert!(
        records[0]
            .rule
            .ends_with("(closed: the command it served had ended)"),
        "{records:?}"
    );
}
