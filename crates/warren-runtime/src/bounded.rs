//! Line-delimited messages read with a bound, counted as they arrive (docs/security.md,
//! "Limits"): an ACP client's or an MCP server's line longer than [`MAX_MESSAGE_BYTES`] is
//! never held whole. The ACP reader skips such a line and says so (the connection goes on);
//! [`LineBound`] fails the MCP transport reading it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, ReadBuf};

/// The longest ACP or MCP message (one JSON-RPC line) accepted.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// One line read by [`next_line`].
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A whole line (without its `\n`; invalid UTF-8 replaced).
    Text(String),
    /// A line longer than the bound, skipped; its length in bytes.
    TooLong(usize),
}

/// Reads the next line of at most `max` bytes; a longer one is consumed without being kept.
/// `None` at the end of the stream.
pub async fn next_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
) -> io::Result<Option<Line>> {
    let mut buf: Vec<u8> = Vec::new();
    let mut skipped: Option<usize> = None;
    loop {
        let avail = reader.fill_buf().await?;
        if avail.is_empty() {
            return Ok(match skipped {
                Some(n) => Some(Line::TooLong(n)),
                None if buf.is_empty() => None,
                None => Some(Line::Text(String::from_utf8_lossy(&buf).into_owned())),
            });
        }
        let (piece, used, ended) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (&avail[..i], i + 1, true),
            None => (avail, avail.len(), false),
        };
        match &mut skipped {
            Some(n) => *n += piece.len(),
            None if buf.len() + piece.len() > max => {
                skipped = Some(buf.len() + piece.len());
                buf = Vec::new();
            }
            None => buf.extend_from_slice(piece),
        }
        reader.consume(used);
        if ended {
            return Ok(Some(match skipped {
                Some(n) => Line::TooLong(n),
                None => {
                    if buf.last() == Some(&b'\r') {
                        buf.pop();
                    }
                    Line::Text(String::from_utf8_lossy(&buf).into_owned())
                }
            }));
        }
    }
}

/// A reader that fails (`InvalidData`) as soon as a line runs past `max` bytes, for a
/// transport that buffers whole lines itself.
#[derive(Debug)]
pub struct LineBound<R> {
    inner: R,
    max: usize,
    run: usize,
    tripped: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl<R> LineBound<R> {
    /// Wraps `inner`.
    pub fn new(inner: R, max: usize) -> Self {
        LineBound {
            inner,
            max,
            run: 0,
            tripped: None,
        }
    }

    /// Sets `flag` when the bound is reached (the transport reading this may not say why it
    /// failed).
    pub fn on_trip(mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
        self.tripped = Some(flag);
        self
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineBound<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                for &b in &buf.filled()[before..] {
                    if b == b'\n' {
                        this.run = 0;
                    } else {
                        this.run += 1;
                    }
                }
                if this.run > this.max {
                    // A read that fails hands back nothing (the contract of `poll_read`).
                    buf.set_filled(before);
                    if let Some(flag) = &this.tripped {
                        flag.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "a message longer than {} MiB (the limit); the connection was closed",
                            this.max / (1024 * 1024)
                        ),
                    )));
                }
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, BufReader};

    #[tokio::test]
    async fn long_lines_are_skipped_and_counted_and_the_next_line_reads() {
        let mut data = b"short\r\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 100));
        data.extend(b"\nafter\nlast");
        let mut r = BufReader::with_capacity(8, &data[..]);
        assert_eq!(
            next_line(&mut r, 10).await.unwrap(),
            Some(Line::Text("short".into()))
        );
        assert_eq!(
            next_line(&mut r, 10).await.unwrap(),
            Some(Line::TooLong(100))
        );
        assert_eq!(
            next_line(&mut r, 10).await.unwrap(),
            Some(Line::Text("after".into()))
        );
        assert_eq!(
            next_line(&mut r, 10).await.unwrap(),
            Some(Line::Text("last".into()))
        );
        assert_eq!(next_line(&mut r, 10).await.unwrap(), None);
        // Exactly the bound is accepted.
        let mut r = BufReader::with_capacity(4, &b"0123456789\n"[..]);
        assert_eq!(
            next_line(&mut r, 10).await.unwrap(),
            Some(Line::Text("0123456789".into()))
        );
    }

    #[tokio::test]
    async fn a_bounded_transport_fails_on_the_first_overlong_line() {
        let mut ok = LineBound::new(&b"abc\ndef\n"[..], 3);
        let mut s = String::new();
        ok.read_to_string(&mut s).await.unwrap();
        assert_eq!(s, "abc\ndef\n");
        let mut data = b"abc\n".to_vec();
        data.extend(std::iter::repeat_n(b'y', 50));
        let mut bad = LineBound::new(BufReader::with_capacity(8, &data[..]), 10);
        let mut out = Vec::new();
        let e = bad.read_to_end(&mut out).await.unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert!(out.len() <= 4 + 16, "stopped early: {}", out.len());
    }
}
