//! Rendering results and errors: human text on stdout, diagnostics on stderr, and with `--json`
//! one JSON document on stdout (errors as `{"error": {"code", "message"}}`).

use serde::Serialize;
use std::borrow::Cow;
use std::process::ExitCode;
use warren_api::{ApiError, ErrorCode};

/// Text Warren did not write (a model's reply, an agent's arguments and reasons, a tool's
/// output, an MCP server's descriptions) made safe for a terminal: C0 and C1 controls, DEL and
/// the bidirectional controls are shown as escapes (`\x1b`, `\u{202e}`), so no such text can
/// move the cursor, recolour, retitle or reorder what the terminal shows. Line breaks and tabs
/// stay (the text of a reply); see [`shown_line`] for one-line fields.
pub fn shown(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// [`shown`] for a field that must stay on its line (an id, a tool's arguments, a reason): line
/// breaks and tabs are escaped too.
pub fn shown_line(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn escape(text: &str, one_line: bool) -> Cow<'_, str> {
    let unsafe_char = |c: char| {
        let kept = !one_line && (c == '\n' || c == '\t');
        !kept
            && (c.is_control()
                || matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
    };
    if !text.chars().any(unsafe_char) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !unsafe_char(c) {
            out.push(c);
        } else if (c as u32) < 0x100 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// How results are printed.
pub struct Output {
    json: bool,
}

/// Exit code for an error: 2 for usage and invalid config, 1 for everything else.
pub fn exit_code(e: &ApiError) -> u8 {
    match e.code {
        ErrorCode::InvalidConfig | ErrorCode::InvalidArgument => 2,
        _ => 1,
    }
}

/// Writes `line` and a newline to stdout. A reader that went away (`warren … | head`) ends
/// the process quietly with success: what it wanted it has, and there is no one left to tell.
pub fn out_line(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let written = out
        .write_all(line.as_bytes())
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush());
    if let Err(e) = written {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
    }
}

impl Output {
    /// A renderer; `json` selects machine output.
    pub fn new(json: bool) -> Self {
        Output { json }
    }

    /// Whether `--json` was given.
    pub fn json(&self) -> bool {
        self.json
    }

    /// Prints `value` as JSON (with `--json`) or `human()` as text, and returns success.
    pub fn ok<T: Serialize>(&self, value: &T, human: impl FnOnce() -> String) -> ExitCode {
        if self.json {
            match serde_json::to_string_pretty(value) {
                Ok(s) => out_line(&s),
                Err(e) => {
                    return self.fail(&ApiError::new(ErrorCode::Internal, e.to_string()));
                }
            }
        } else {
            let text = human();
            if !text.is_empty() {
                out_line(&shown(text.trim_end()));
            }
        }
        ExitCode::SUCCESS
    }

    /// Prints an error (stderr, and stdout as JSON with `--json`) and returns its exit code.
    pub fn fail(&self, e: &ApiError) -> ExitCode {
        eprintln!("error: {}", shown(&e.message));
        for d in &e.details {
            eprintln!("  {}", shown(d));
        }
        if self.json {
            let v = serde_json::json!({ "error": {
                "code": e.code.as_str(),
                "message": e.message,
                "details": e.details,
            }});
            out_line(&v.to_string());
        }
        ExitCode::from(exit_code(e))
    }

    /// Renders a `Result`.
    pub fn result<T: Serialize>(
        &self,
        r: Result<T, ApiError>,
        human: impl FnOnce(&T) -> String,
    ) -> ExitCode {
        match r {
            Ok(v) => self.ok(&v, || human(&v)),
            Err(e) => self.fail(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_are_shown_not_obeyed() {
        assert!(matches!(shown("plain\ttext\nnext"), Cow::Borrowed(_)));
        assert_eq!(shown("\x1b]0;pwned\x07x"), "\\x1b]0;pwned\\x07x");
        assert_eq!(shown("a\rb\u{9b}c\x7f"), "a\\x0db\\x9bc\\x7f");
        assert_eq!(shown("abc\u{202e}fed"), "abc\\u{202e}fed");
        assert_eq!(shown_line("one\ntwo\tthree"), "one\\x0atwo\\x09three");
        assert_eq!(shown("日本語 é"), "日本語 é");
    }
}
