//! A small incremental parser for Server-Sent Events (the WHATWG `text/event-stream` format):
//! `event:` and `data:` fields, multi-line data, comments, any line terminator, events split
//! across network chunks.

use crate::lines::{LineBuffer, MAX_LINE};

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name; empty when the server gave none (the spec's "message").
    pub event: String,
    /// The data lines joined with `\n`.
    pub data: String,
}

/// Parses an SSE byte stream chunk by chunk.
#[derive(Debug, Default)]
pub struct SseParser {
    lines: LineBuffer,
    event: String,
    data: String,
    has_data: bool,
    pending_fields: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds one chunk and appends every event it completes to `out`. Errors name the problem
    /// (invalid UTF-8, a line over 16 MiB).
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), String> {
        let Self {
            lines,
            event,
            data,
            has_data,
            pending_fields,
        } = self;
        lines.feed(
            chunk,
            |line| {
                let line = std::str::from_utf8(line)
                    .map_err(|e| format!("event stream line is not UTF-8: {e}"))?;
                if line.is_empty() {
                    if *has_data {
                        out.push(SseEvent {
                            event: std::mem::take(event),
                            data: std::mem::take(data),
                        });
                    }
                    event.clear();
                    data.clear();
                    *has_data = false;
                    *pending_fields = false;
                    return Ok(());
                }
                if line.starts_with(':') {
                    return Ok(());
                }
                *pending_fields = true;
                let (field, value) = match line.split_once(':') {
                    Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                    None => (line, ""),
                };
                match field {
                    "event" => {
                        event.clear();
                        event.push_str(value);
                    }
                    "data" => {
                        if *has_data {
                            data.push('\n');
                        }
                        data.push_str(value);
                        *has_data = true;
                    }
                    _ => {} // id, retry and unknown fields do not matter here
                }
                Ok(())
            },
            || format!("event stream line longer than {MAX_LINE} bytes"),
        )
    }

    /// True when the stream so far ends inside an event (fields or a partial line not yet
    /// terminated by a blank line): the stream was cut if it ends here.
    pub fn in_event(&self) -> bool {
        self.pending_fields || !self.lines.rest().is_empty()
    }

    /// The unterminated tail, for error messages.
    pub fn partial(&self) -> String {
        let rest = String::from_utf8_lossy(self.lines.rest());
        if self.has_data {
            format!("{}{}", self.data, rest)
        } else {
            rest.into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (chunks, events as (name, data), stopped inside an event)
    type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], bool);

    fn parse(chunks: &[&str]) -> (Vec<(String, String)>, bool) {
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c.as_bytes(), &mut out).unwrap();
        }
        (
            out.into_iter().map(|e| (e.event, e.data)).collect(),
            p.in_event(),
        )
    }

    #[test]
    fn events_table() {
        let cases: &[Case] = &[
            (&["data: a\n\n"], &[("", "a")], false),
            (&["data:a\n\n"], &[("", "a")], false),
            (&["data:  two spaces\n\n"], &[("", " two spaces")], false),
            (&["event: ping\ndata: {}\n\n"], &[("ping", "{}")], false),
            (&["data: 1\ndata: 2\n\n"], &[("", "1\n2")], false),
            (&[": comment\n\ndata: x\n\n"], &[("", "x")], false),
            (&["da", "ta: split\n", "\n"], &[("", "split")], false),
            (&["data: crlf\r\n\r\n"], &[("", "crlf")], false),
            (&["event: only\n\n"], &[], false),
            (&["data: a\n\ndata: b"], &[("", "a")], true),
            (&["data: a\n\ndata: b\n"], &[("", "a")], true),
            (&["id: 1\nretry: 5\ndata: x\n\n"], &[("", "x")], false),
            (&["data\n\n"], &[("", "")], false),
        ];
        for (chunks, want, cut) in cases {
            let (got, in_event) = parse(chunks);
            let want: Vec<(String, String)> = want
                .iter()
                .map(|(e, d)| (e.to_string(), d.to_string()))
                .collect();
            assert_eq!(got, want, "chunks {chunks:?}");
            assert_eq!(in_event, *cut, "in_event for {chunks:?}");
        }
    }

    #[test]
    fn utf8_split_across_chunks() {
        let bytes = "data: héllo\n\n".as_bytes();
        let mut p = SseParser::new();
        let mut out = Vec::new();
        for b in bytes {
            p.feed(&[*b], &mut out).unwrap();
        }
        assert_eq!(out[0].data, "héllo");
    }

    #[test]
    fn invalid_utf8_is_an_error() {
        let mut p = SseParser::new();
        let err = p.feed(b"data: \xff\n\n", &mut Vec::new()).unwrap_err();
        assert!(err.contains("not UTF-8"), "{err}");
    }
}
