//! A plain HTTP/1.1 server on 127.0.0.1 for tests that need something to reach over the
//! network (through Warren's egress proxy, say): every request is answered `200` with one
//! fixed body, then the connection is closed.

use std::io::{Read, Write};
use std::net::TcpListener;

/// Starts the server on a thread of its own, answering every request with `body`; returns its
/// port. It runs until the test process ends.
pub fn fixed_body_server(body: &'static str) -> std::io::Result<u16> {
    let l = TcpListener::bind("127.0.0.1:0")?;
    let port = l.local_addr()?.port();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { continue };
            let mut buf = [0u8; 2048];
            let _ = s.read(&mut buf);
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Ok(port)
}
