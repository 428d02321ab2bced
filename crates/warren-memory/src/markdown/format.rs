//! The Markdown memory line format, one entry per list item:
//!
//! ```text
//! - [key:user_name] [category:core] [session:s1] [at:2026-01-02T03:04:05.000000Z] [updated:...] Alice
//! ```
//!
//! `session` is optional. Inside `[...]` fields `\`, `]` and line breaks are escaped (`\\`,
//! `\]`, `\n`, `\r`); in the content `\` and line breaks are. Any other line of the file is
//! kept as it is and ignored, so hand-written notes survive every rewrite.

use chrono::{DateTime, Utc};

use crate::types::{format_ts, parse_ts};

/// One entry as written in a Markdown memory file.
#[derive(Debug, Clone, PartialEq)]
pub struct MdEntry {
    /// Key, unique per agent.
    pub key: String,
    /// Category.
    pub category: String,
    /// Session, if any.
    pub session_id: Option<String>,
    /// First stored.
    pub created_at: DateTime<Utc>,
    /// Last changed.
    pub updated_at: DateTime<Utc>,
    /// The text.
    pub content: String,
}

fn escape(s: &str, in_field: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            ']' if in_field => out.push_str("\\]"),
            c => out.push(c),
        }
    }
    out
}

fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// Renders one entry as a line (without the trailing newline).
pub fn render(e: &MdEntry) -> String {
    let mut line = format!(
        "- [key:{}] [category:{}]",
        escape(&e.key, true),
        escape(&e.category, true)
    );
    if let Some(s) = &e.session_id {
        line.push_str(&format!(" [session:{}]", escape(s, true)));
    }
    line.push_str(&format!(
        " [at:{}] [updated:{}] {}",
        format_ts(e.created_at),
        format_ts(e.updated_at),
        escape(&e.content, false)
    ));
    line
}

/// Reads `[name:value]` at the start of `s`; returns the raw value and the rest after `] `.
fn field<'a>(s: &'a str, name: &str) -> Option<(String, &'a str)> {
    let rest = s.strip_prefix('[')?.strip_prefix(name)?.strip_prefix(':')?;
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ']' {
            let value = &rest[..i];
            let after = &rest[i + 1..];
            let after = after.strip_prefix(' ').unwrap_or(after);
            return Some((value.to_string(), after));
        }
    }
    None
}

/// Parses a line written by [`render`]; `None` for any other line.
pub fn parse(line: &str) -> Option<MdEntry> {
    let s = line.strip_prefix("- ")?;
    let (key, s) = field(s, "key")?;
    let (category, s) = field(s, "category")?;
    let (session, s) = match field(s, "session") {
        Some((v, rest)) => (Some(unescape(&v)), rest),
        None => (None, s),
    };
    let (at, s) = field(s, "at")?;
    let (updated, content) = field(s, "updated")?;
    Some(MdEntry {
        key: unescape(&key),
        category: unescape(&category),
        session_id: session,
        created_at: parse_ts(&at)?,
        updated_at: parse_ts(&updated)?,
        content: unescape(content),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str, category: &str, session: Option<&str>, content: &str) -> MdEntry {
        let t = parse_ts("2026-03-04T05:06:07.123456Z").unwrap();
        MdEntry {
            key: key.into(),
            category: category.into(),
            session_id: session.map(String::from),
            created_at: t,
            updated_at: t + chrono::Duration::seconds(5),
            content: content.into(),
        }
    }

    #[test]
    fn round_trips_awkward_text() {
        let cases = [
            entry("user_name", "core", None, "Alice"),
            entry(
                "a]b\\c",
                "Daily Notes",
                Some("s]1"),
                "line one\nline two\r\n\\n literal",
            ),
            entry(
                "k",
                "c",
                None,
                "[key:fake] [category:x] starts like a field",
            ),
            entry("ключ", "日記", None, ""),
            entry("k", "c", None, "ends with backslash \\"),
        ];
        for e in cases {
            let line = render(&e);
            assert!(!line.contains('\n'), "{line}");
            assert_eq!(parse(&line).as_ref(), Some(&e), "{line}");
        }
    }

    #[test]
    fn stable_format() {
        let e = entry("user_name", "core", Some("s1"), "Alice");
        assert_eq!(
            render(&e),
            "- [key:user_name] [category:core] [session:s1] [at:2026-03-04T05:06:07.123456Z] \
             [updated:2026-03-04T05:06:12.123456Z] Alice"
        );
    }

    #[test]
    fn other_lines_are_not_entries() {
        for line in [
            "# Memory",
            "",
            "- a plain bullet",
            "- [key:x] missing category",
            "- [key:x] [category:c] [at:not-a-time] [updated:2026-01-01T00:00:00Z] x",
        ] {
            assert_eq!(parse(line), None, "{line}");
        }
    }
}
