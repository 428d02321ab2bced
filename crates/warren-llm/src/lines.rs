//! Incremental splitting of a byte stream into lines (`\n`, `\r\n` or `\r`), shared by the SSE
//! and NDJSON decoders. A line split across network chunks is kept until its end arrives.

/// The longest line accepted (a guard against a server that never ends its line).
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;

/// Buffers the unfinished tail of the stream.
#[derive(Debug, Default)]
pub(crate) struct LineBuffer {
    buf: Vec<u8>,
    skip_lf: bool,
}

impl LineBuffer {
    /// Feeds `chunk`, calling `on_line` with each complete line (without its terminator).
    pub(crate) fn feed<E>(
        &mut self,
        chunk: &[u8],
        mut on_line: impl FnMut(&[u8]) -> Result<(), E>,
        too_long: impl FnOnce() -> E,
    ) -> Result<(), E> {
        let mut start = 0;
        for (i, &b) in chunk.iter().enumerate() {
            if self.skip_lf {
                self.skip_lf = false;
                if b == b'\n' {
                    start = i + 1;
                    continue;
                }
            }
            if b == b'\n' || b == b'\r' {
                if self.buf.is_empty() {
                    on_line(&chunk[start..i])?;
                } else {
                    self.buf.extend_from_slice(&chunk[start..i]);
                    let line = std::mem::take(&mut self.buf);
                    on_line(&line)?;
                    self.buf = line;
                    self.buf.clear();
                }
                self.skip_lf = b == b'\r';
                start = i + 1;
            }
        }
        self.buf.extend_from_slice(&chunk[start..]);
        if self.buf.len() > MAX_LINE {
            return Err(too_long());
        }
        Ok(())
    }

    /// The unterminated rest of the stream (empty when the stream ended on a line break).
    pub(crate) fn rest(&self) -> &[u8] {
        &self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (chunks, lines, unterminated rest)
    type Case<'a> = (&'a [&'a [u8]], &'a [&'a str], &'a str);

    fn split(chunks: &[&[u8]]) -> (Vec<String>, String) {
        let mut lb = LineBuffer::default();
        let mut out = Vec::new();
        for c in chunks {
            lb.feed::<()>(
                c,
                |l| {
                    out.push(String::from_utf8(l.to_vec()).unwrap());
                    Ok(())
                },
                || (),
            )
            .unwrap();
        }
        (out, String::from_utf8(lb.rest().to_vec()).unwrap())
    }

    #[test]
    fn terminators_and_chunk_boundaries() {
        let cases: &[Case] = &[
            (&[b"a\nb\n"], &["a", "b"], ""),
            (&[b"a\r\nb\r\n"], &["a", "b"], ""),
            (&[b"a\rb\r"], &["a", "b"], ""),
            (&[b"a\r", b"\nb\n"], &["a", "b"], ""),
            (&[b"ab", b"c\nd"], &["abc"], "d"),
            (&[b"\n\n"], &["", ""], ""),
            (&[b"x\r", b"\r\n"], &["x", ""], ""),
            (&[b"", b"tail"], &[], "tail"),
        ];
        for (chunks, lines, rest) in cases {
            let (got, got_rest) = split(chunks);
            assert_eq!(got, *lines, "chunks {chunks:?}");
            assert_eq!(got_rest, *rest, "chunks {chunks:?}");
        }
    }
}
