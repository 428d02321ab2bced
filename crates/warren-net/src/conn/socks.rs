//! SOCKS5 (RFC 1928) on the same listener as HTTP: `CONNECT` only, without authentication,
//! decided and recorded exactly as an HTTP `CONNECT` is (kind `"socks5"`).
//!
//! A client that greets with version 5 gets this; every other first byte goes to the HTTP
//! server. `BIND` and `UDP ASSOCIATE` are refused (reply `07`, command not supported): the
//! sandbox has no UDP, and nothing may listen for inbound connections through the proxy.
//! A refusal by the rules or the address check replies `02` (not allowed by ruleset); an
//! allowed target that cannot be resolved replies `04` (host unreachable), one that refuses
//! the connection `05`, other failures `01`.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use warren_types::network::normalize_host;

use super::{reach, splice_both, Attempt, Unreached};
use crate::Listener;

const VERSION: u8 = 5;
const NO_AUTHENTICATION: u8 = 0x00;
const NO_ACCEPTABLE_METHOD: u8 = 0xff;
const CMD_CONNECT: u8 = 1;
const ATYP_IPV4: u8 = 1;
const ATYP_DOMAIN: u8 = 3;
const ATYP_IPV6: u8 = 4;

/// The reply codes this proxy sends (RFC 1928 §6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Reply {
    Succeeded = 0x00,
    GeneralFailure = 0x01,
    NotAllowed = 0x02,
    HostUnreachable = 0x04,
    ConnectionRefused = 0x05,
    CommandNotSupported = 0x07,
    AddressTypeNotSupported = 0x08,
}

/// What the client asked to reach.
struct Target {
    host: String,
    port: u16,
}

/// Serves one SOCKS5 connection (its first byte, version 5, not yet read): the greeting and
/// the request within the header-read timeout, then the tunnel until it ends or the
/// listener closes.
pub(crate) async fn serve(listener: Arc<Listener>, mut stream: TcpStream) {
    let timeout = listener.proxy.header_read_timeout;
    let target = tokio::select! {
        asked = tokio::time::timeout(timeout, handshake(&mut stream)) => match asked {
            Ok(Ok(Some(target))) => target,
            Ok(Ok(None)) | Err(_) => return,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "egress proxy: SOCKS5 handshake failed");
                return;
            }
        },
        () = listener.closing() => return,
    };
    let mut attempt = Attempt::new(listener.clone(), target.host, target.port, "socks5");
    let cut = tokio::select! {
        () = run(&listener, stream, &mut attempt) => false,
        () = listener.closing() => true,
    };
    if cut {
        attempt
            .rule
            .push_str(" (closed: the command it served had ended)");
    }
}

/// Decides and connects, replies, then carries the tunnel until it ends.
async fn run(listener: &Listener, mut stream: TcpStream, attempt: &mut Attempt) {
    let mut upstream = match reach(listener, attempt).await {
        Ok(upstream) => upstream,
        Err(why) => {
            let code = match why {
                Unreached::Refused => Reply::NotAllowed,
                Unreached::Failed => failure_reply(&attempt.rule),
            };
            let _ = reply(&mut stream, code).await;
            return;
        }
    };
    if reply(&mut stream, Reply::Succeeded).await.is_err() {
        attempt
            .rule
            .push_str(" (the client left before the tunnel opened)");
        return;
    }
    if let Err(e) = splice_both(&stream, &mut upstream, &[], &attempt.counts).await {
        tracing::debug!(error = %e, host = %attempt.host, "egress proxy: SOCKS5 tunnel ended");
    }
}

/// The greeting (only "no authentication" is accepted) and the request. `None` when the
/// client was answered with a refusal and the connection is done.
async fn handshake(stream: &mut TcpStream) -> io::Result<Option<Target>> {
    let mut head = [0u8; 2];
    stream.read_exact(&mut head).await?;
    let mut methods = vec![0u8; usize::from(head[1])];
    stream.read_exact(&mut methods).await?;
    if head[0] != VERSION || !methods.contains(&NO_AUTHENTICATION) {
        stream.write_all(&[VERSION, NO_ACCEPTABLE_METHOD]).await?;
        return Ok(None);
    }
    stream.write_all(&[VERSION, NO_AUTHENTICATION]).await?;

    let mut request = [0u8; 4];
    stream.read_exact(&mut request).await?;
    let [version, command, _reserved, address_type] = request;
    if version != VERSION {
        return Ok(None);
    }
    let host = match address_type {
        ATYP_IPV4 => {
            let mut ip = [0u8; 4];
            stream.read_exact(&mut ip).await?;
            Ipv4Addr::from(ip).to_string()
        }
        ATYP_IPV6 => {
            let mut ip = [0u8; 16];
            stream.read_exact(&mut ip).await?;
            Ipv6Addr::from(ip).to_string()
        }
        ATYP_DOMAIN => {
            let mut len = [0u8; 1];
            stream.read_exact(&mut len).await?;
            let mut name = vec![0u8; usize::from(len[0])];
            stream.read_exact(&mut name).await?;
            match String::from_utf8(name) {
                Ok(name) if is_plain_host(&name) => name,
                _ => {
                    reply(stream, Reply::GeneralFailure).await?;
                    return Ok(None);
                }
            }
        }
        _ => {
            reply(stream, Reply::AddressTypeNotSupported).await?;
            return Ok(None);
        }
    };
    let mut port = [0u8; 2];
    stream.read_exact(&mut port).await?;
    if command != CMD_CONNECT {
        reply(stream, Reply::CommandNotSupported).await?;
        return Ok(None);
    }
    Ok(Some(Target {
        host: normalize_host(&host),
        port: u16::from_be_bytes(port),
    }))
}

/// Whether a name sent by a SOCKS client is a host as an HTTP `CONNECT` target may name one:
/// it parses as a URI authority on its own (the characters hyper accepts in a request
/// target), with no user information or port inside it. What the HTTP side would refuse
/// before any decision is refused here too, unrecorded.
fn is_plain_host(name: &str) -> bool {
    !name.is_empty()
        && name
            .parse::<hyper::http::uri::Authority>()
            .is_ok_and(|a| a.as_str() == name && a.host() == name && a.port().is_none())
}

/// The reply code for an allowed attempt that failed, from the words [`reach`] noted.
fn failure_reply(rule: &str) -> Reply {
    if rule.starts_with("could not resolve") {
        Reply::HostUnreachable
    } else if rule.contains("refused") {
        Reply::ConnectionRefused
    } else {
        Reply::GeneralFailure
    }
}

/// A reply with an unspecified bound address (`0.0.0.0:0`): the client has no use for the
/// proxy's own address.
async fn reply(stream: &mut TcpStream, code: Reply) -> io::Result<()> {
    stream
        .write_all(&[VERSION, code as u8, 0, ATYP_IPV4, 0, 0, 0, 0, 0, 0])
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_host_names_are_taken() {
        for good in [
            "crates.io",
            "a-b.example.org",
            "localhost",
            "xn--nxasmq6b.test",
        ] {
            assert!(is_plain_host(good), "{good}");
        }
        for bad in [
            "",
            "user@crates.io",
            "crates.io:443",
            "crates.io/path",
            "crates io",
            "crates.io\u{0}",
            "a\\b",
        ] {
            assert!(!is_plain_host(bad), "{bad:?}");
        }
    }

    #[test]
    fn failures_map_to_their_reply_codes() {
        assert_eq!(
            failure_reply("could not resolve: no address"),
            Reply::HostUnreachable
        );
        assert_eq!(
            failure_reply("connect failed: 127.0.0.1:9: Connection refused (os error 111)"),
            Reply::ConnectionRefused
        );
        assert_eq!(
            failure_reply("connect failed: 10.0.0.1:443: no answer in 30 s"),
            Reply::GeneralFailure
        );
    }
}
