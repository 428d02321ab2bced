//! The desktop logs view: the newest lines of the JSON logs under `<install>/logs/` (see
//! [`crate::logging`]), filtered by agent and minimum level, and the folder itself.

use crate::Warren;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use warren_types::{ApiError, ErrorCode};

/// The level of a log line, spelled as the JSON log writes it (`ERROR` … `TRACE`). Ordered
/// from the most severe to the most verbose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "UPPERCASE")]
pub enum LogLevel {
    /// `ERROR`.
    Error,
    /// `WARN`.
    Warn,
    /// `INFO`.
    Info,
    /// `DEBUG`.
    Debug,
    /// `TRACE`.
    Trace,
}

impl LogLevel {
    /// Every level, most severe first.
    pub const ALL: [LogLevel; 5] = [
        LogLevel::Error,
        LogLevel::Warn,
        LogLevel::Info,
        LogLevel::Debug,
        LogLevel::Trace,
    ];

    /// As the log writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Error => "ERROR",
            LogLevel::Warn => "WARN",
            LogLevel::Info => "INFO",
            LogLevel::Debug => "DEBUG",
            LogLevel::Trace => "TRACE",
        }
    }

    /// The level named `s`, in any case.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(s))
    }
}

impl std::fmt::Display for LogLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// The least severe level a query returns: that level and every more severe one. Spelled in
/// lower case (`error` … `trace`), as `warren logs --level` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum LogLevelFilter {
    /// `error` lines only.
    Error,
    /// `warn` and above.
    Warn,
    /// `info` and above.
    Info,
    /// `debug` and above.
    Debug,
    /// Every line.
    Trace,
}

impl LogLevelFilter {
    /// Every filter, strictest first.
    pub const ALL: [LogLevelFilter; 5] = [
        LogLevelFilter::Error,
        LogLevelFilter::Warn,
        LogLevelFilter::Info,
        LogLevelFilter::Debug,
        LogLevelFilter::Trace,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevelFilter::Error => "error",
            LogLevelFilter::Warn => "warn",
            LogLevelFilter::Info => "info",
            LogLevelFilter::Debug => "debug",
            LogLevelFilter::Trace => "trace",
        }
    }

    /// The least severe level this filter lets through.
    pub fn level(self) -> LogLevel {
        match self {
            LogLevelFilter::Error => LogLevel::Error,
            LogLevelFilter::Warn => LogLevel::Warn,
            LogLevelFilter::Info => LogLevel::Info,
            LogLevelFilter::Debug => LogLevel::Debug,
            LogLevelFilter::Trace => LogLevel::Trace,
        }
    }

    /// Whether a line at `level` passes.
    pub fn admits(self, level: LogLevel) -> bool {
        level <= self.level()
    }
}

impl std::str::FromStr for LogLevelFilter {
    type Err = ApiError;

    /// `error`, `warn`, `info`, `debug` or `trace`; anything else is an `invalid_argument`
    /// error naming it.
    fn from_str(s: &str) -> Result<Self, ApiError> {
        Self::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::InvalidArgument,
                    format!("unknown log level `{s}` (expected error, warn, info, debug or trace)"),
                )
            })
    }
}

/// Which lines to return.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LogQuery {
    /// Only lines whose `agent` field (on the event or its span) is this alias.
    pub agent: Option<String>,
    /// Only lines at this level or more severe.
    pub level: Option<LogLevelFilter>,
    /// At most this many lines (the newest), 1 to 5000.
    pub limit: u32,
}

/// One log line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LogLine {
    /// RFC 3339 time as written.
    pub time: String,
    /// Its level.
    pub level: LogLevel,
    /// The agent the line is about, if any.
    pub agent: Option<String>,
    /// The message.
    pub message: String,
    /// The other fields, as `key=value` pairs.
    pub fields: String,
    /// The file the line is in.
    pub file: String,
}

fn text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Parses one line of the JSON log; `None` for a line that is not a log event (not a JSON
/// object, or without a known `level`).
pub fn parse_line(line: &str, file: &str) -> Option<LogLine> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let obj = v.as_object()?;
    let level = LogLevel::parse(obj.get("level")?.as_str()?)?;
    let agent = obj
        .get("agent")
        .or_else(|| obj.get("span").and_then(|s| s.get("agent")))
        .map(text);
    let mut fields = Vec::new();
    for (k, val) in obj {
        if !matches!(
            k.as_str(),
            "timestamp" | "level" | "message" | "agent" | "span" | "target"
        ) {
            fields.push(format!("{k}={}", text(val)));
        }
    }
    Some(LogLine {
        time: obj.get("timestamp").map(text).unwrap_or_default(),
        level,
        agent,
        message: obj.get("message").map(text).unwrap_or_default(),
        fields: fields.join(" "),
        file: file.to_string(),
    })
}

/// The log files of `dir`, oldest first (daily files sort by their date suffix).
fn log_files(dir: &Path) -> Result<Vec<PathBuf>, ApiError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(ApiError::new(
                ErrorCode::Io,
                format!("reading {}: {e}", dir.display()),
            ))
        }
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("warren") && n.ends_with(".jsonl"))
        })
        .collect();
    files.sort();
    Ok(files)
}

/// How much of a log file is read at a time, from its end.
const TAIL_BLOCK: usize = 64 * 1024;

/// Calls `visit` with the lines of the file at `path`, newest first (without their `\n` or
/// `\r\n`), reading it backwards `block` bytes at a time; stops when `visit` returns true.
/// Only as much of the file as the lines visited span is read.
fn lines_backwards(
    path: &Path,
    block: usize,
    mut visit: impl FnMut(&[u8]) -> bool,
) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(path)?;
    let mut pos = file.metadata()?.len();
    // The start of the file's last line is not known until a newline before it is read.
    let mut last_line = true;
    // The pieces of the line being read, its end first: a long line spans several blocks.
    let mut pending: Vec<Vec<u8>> = Vec::new();
    let mut buf = vec![0u8; block.max(1)];
    let mut emit = |head: &[u8], pending: &mut Vec<Vec<u8>>, last_line: &mut bool| {
        let mut line = head.to_vec();
        for piece in pending.drain(..).rev() {
            line.extend_from_slice(&piece);
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        // A final newline ends the last line; it does not start an empty one.
        let skip = *last_line && line.is_empty();
        *last_line = false;
        !skip && visit(&line)
    };
    while pos > 0 {
        let n = usize::try_from(pos).map_or(buf.len(), |p| p.min(buf.len()));
        pos -= n as u64;
        file.seek(SeekFrom::Start(pos))?;
        let chunk = &mut buf[..n];
        match file.read_exact(chunk) {
            Ok(()) => {}
            // The file shrank while it was read (rotated or rewritten): the lines visited stand.
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e),
        }
        let mut end = n;
        while let Some(i) = chunk[..end].iter().rposition(|&b| b == b'\n') {
            if emit(&chunk[i + 1..end], &mut pending, &mut last_line) {
                return Ok(());
            }
            end = i;
        }
        if end > 0 {
            pending.push(chunk[..end].to_vec());
        }
    }
    if !pending.is_empty() {
        emit(&[], &mut pending, &mut last_line);
    }
    Ok(())
}

impl Warren {
    /// `<install>/logs/`.
    pub fn logs_dir(&self) -> String {
        self.layout().logs_dir().display().to_string()
    }

    /// The newest log lines matching `q`, oldest of them first.
    pub fn tail_logs(&self, q: &LogQuery) -> Result<Vec<LogLine>, ApiError> {
        if q.limit == 0 || q.limit > 5000 {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "the line limit must be between 1 and 5000",
            ));
        }
        let agent = q.agent.as_deref().filter(|a| !a.is_empty());
        let limit = q.limit as usize;
        let mut out: Vec<LogLine> = Vec::new();
        for path in log_files(&self.layout().logs_dir())?.iter().rev() {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            // Only the end of the file is read, block by block, until enough lines matched.
            // A line torn by a crash may end inside a character: it is skipped like any other
            // line that is not a log event, and the rest of the file still shows.
            let mut full = false;
            lines_backwards(path, TAIL_BLOCK, |bytes| {
                let line = String::from_utf8_lossy(bytes);
                let Some(l) = parse_line(&line, &name) else {
                    return false;
                };
                if q.level.is_some_and(|min| !min.admits(l.level)) {
                    return false;
                }
                if agent.is_some_and(|a| l.agent.as_deref() != Some(a)) {
                    return false;
                }
                out.push(l);
                full = out.len() == limit;
                full
            })
            .map_err(|e| {
                ApiError::new(ErrorCode::Io, format!("reading {}: {e}", path.display()))
            })?;
            if full {
                break;
            }
        }
        out.reverse();
        Ok(out)
    }

    /// Opens `<install>/logs/` in the desktop's file manager (`xdg-open`), creating it first.
    pub fn open_logs_folder(&self) -> Result<String, ApiError> {
        let dir = self.layout().logs_dir();
        std::fs::create_dir_all(&dir).map_err(|e| {
            ApiError::new(ErrorCode::Io, format!("creating {}: {e}", dir.display()))
        })?;
        open_with_system(&dir)?;
        Ok(dir.display().to_string())
    }

    /// Opens `config.toml` with the program the desktop opens such files with (`xdg-open`);
    /// returns its path. `not_found` with the path when this machine has no such opener.
    pub fn open_config_file(&self) -> Result<String, ApiError> {
        let path = self.layout().config_path();
        open_with_system(&path)?;
        Ok(path.display().to_string())
    }
}

/// Hands `path` to `xdg-open` (not waited for; reaped when it exits).
fn open_with_system(path: &std::path::Path) -> Result<(), ApiError> {
    let mut child = std::process::Command::new("xdg-open")
        .arg(path)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                ErrorCode::NotFound
            } else {
                ErrorCode::Io
            };
            ApiError::new(
                code,
                format!(
                    "no program to open {} was found (xdg-open: {e}); open it yourself",
                    path.display()
                ),
            )
        })?;
    // Reap it when it exits, so no zombie is left.
    std::thread::spawn(move || child.wait());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_the_agent_of_the_event_or_its_span() {
        let event = r#"{"timestamp":"2026-01-01T00:00:00Z","level":"INFO","message":"turn ended","agent":"alice","turn":"t1","target":"warren_api::run"}"#;
        let l = parse_line(event, "f").unwrap();
        assert_eq!(l.agent.as_deref(), Some("alice"));
        assert_eq!(l.fields, "turn=t1");
        let span = r#"{"timestamp":"t","level":"WARN","message":"m","span":{"agent":"bob","name":"turn"}}"#;
        assert_eq!(parse_line(span, "f").unwrap().agent.as_deref(), Some("bob"));
        assert!(parse_line("not json", "f").is_none());
        assert!(parse_line(r#"{"timestamp":"t","level":"LOUD","message":"m"}"#, "f").is_none());
        assert!(parse_line(r#"{"timestamp":"t","message":"m"}"#, "f").is_none());
    }

    #[test]
    fn levels_and_filters_are_their_documented_codes() {
        let levels = [
            (LogLevel::Error, "ERROR"),
            (LogLevel::Warn, "WARN"),
            (LogLevel::Info, "INFO"),
            (LogLevel::Debug, "DEBUG"),
            (LogLevel::Trace, "TRACE"),
        ];
        crate::test_support::assert_codes(&levels);
        let filters = [
            (LogLevelFilter::Error, "error"),
            (LogLevelFilter::Warn, "warn"),
            (LogLevelFilter::Info, "info"),
            (LogLevelFilter::Debug, "debug"),
            (LogLevelFilter::Trace, "trace"),
        ];
        crate::test_support::assert_codes(&filters);
        for ((l, upper), (f, lower)) in levels.into_iter().zip(filters) {
            assert_eq!((l.as_str(), f.as_str()), (upper, lower));
            assert_eq!(LogLevel::parse(lower), Some(l));
            assert_eq!(lower.parse::<LogLevelFilter>().unwrap(), f);
            assert_eq!(f.level(), l);
        }
        assert_eq!(LogLevel::ALL.len(), levels.len());
        assert_eq!(LogLevelFilter::ALL.len(), filters.len());
        // `warn` lets ERROR and WARN through, not INFO.
        let warn = LogLevelFilter::Warn;
        assert!(warn.admits(LogLevel::Error) && warn.admits(LogLevel::Warn));
        assert!(!warn.admits(LogLevel::Info));
        let e = "loud".parse::<LogLevelFilter>().unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
        assert!(
            e.message.contains("unknown log level `loud`"),
            "{}",
            e.message
        );
    }

    #[test]
    fn a_log_truncated_while_it_is_read_keeps_the_lines_already_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("warren.log");
        std::fs::write(&path, "one\ntwo\nthree\n").unwrap();
        let mut seen = Vec::new();
        lines_backwards(&path, 4, |l| {
            seen.push(String::from_utf8_lossy(l).into_owned());
            // Rotated away under the reader after its first line.
            std::fs::write(&path, "").unwrap();
            false
        })
        .unwrap();
        assert_eq!(seen, ["three"]);
    }

    #[test]
    fn lines_read_backwards_are_the_file_s_lines_at_any_block_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let texts: [&[u8]; 7] = [
            b"",
            b"\n",
            b"one",
            b"one\ntwo\n",
            b"one\r\n\n\nthree\r\nfour",
            b"\nlong line of many blocks\nx\n\n",
            b"kept\n{\"message\":\"torn \xe2\x82",
        ];
        for text in texts {
            std::fs::write(&path, text).unwrap();
            let want: Vec<String> = String::from_utf8_lossy(text)
                .lines()
                .rev()
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            for block in 1..=12 {
                let mut got = Vec::new();
                lines_backwards(&path, block, |l| {
                    got.push(String::from_utf8_lossy(l).into_owned());
                    false
                })
                .unwrap();
                got.retain(|l| !l.is_empty());
                assert_eq!(got, want, "block {block}, text {text:?}");
            }
        }
    }

    /// Bytes this thread has read through system calls so far (`rchar`).
    fn bytes_read_by_this_thread() -> u64 {
        let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
        io.lines()
            .find_map(|l| l.strip_prefix("rchar: "))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn the_tail_of_a_large_log_is_read_without_reading_the_whole_file() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        // An older file that must not be needed, and a 50 MB current one whose newest lines
        // alternate between agents and levels.
        std::fs::write(
            logs.join("warren.2026-01-01.jsonl"),
            r#"{"timestamp":"t","level":"ERROR","message":"old","agent":"alice"}"#,
        )
        .unwrap();
        let path = logs.join("warren.2026-01-02.jsonl");
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let mut i = 0u64;
        let pad = "x".repeat(200);
        while f.get_ref().metadata().unwrap().len() < 50 * 1024 * 1024 {
            for _ in 0..1000 {
                let (agent, level) = if i.is_multiple_of(2) {
                    ("alice", "INFO")
                } else {
                    ("bob", "DEBUG")
                };
                writeln!(
                    f,
                    r#"{{"timestamp":"{i}","level":"{level}","message":"line {i}","agent":"{agent}","pad":"{pad}"}}"#
                )
                .unwrap();
                i += 1;
            }
            f.flush().unwrap();
        }
        drop(f);
        let size = std::fs::metadata(&path).unwrap().len();
        let w = Warren::open(warren_config::InstallLayout::new(dir.path()));
        let q = LogQuery {
            agent: Some("alice".into()),
            level: Some(LogLevelFilter::Info),
            limit: 100,
        };
        let before = bytes_read_by_this_thread();
        let got = w.tail_logs(&q).unwrap();
        let read = bytes_read_by_this_thread() - before;
        // The newest 100 lines of alice at INFO, oldest first.
        let last_alice = if (i - 1).is_multiple_of(2) {
            i - 1
        } else {
            i - 2
        };
        let want: Vec<String> = (0..100)
            .rev()
            .map(|k| format!("line {}", last_alice - 2 * k))
            .collect();
        let messages: Vec<String> = got.iter().map(|l| l.message.clone()).collect();
        assert_eq!(messages, want);
        assert!(got.iter().all(|l| l.file == "warren.2026-01-02.jsonl"));
        assert!(
            read < 1024 * 1024,
            "read {read} bytes of a {size}-byte log for 100 lines"
        );

        // More lines than the newest file holds: the older file is read too, and the whole of
        // both is what comes back.
        let q = LogQuery {
            agent: None,
            level: Some(LogLevelFilter::Error),
            limit: 5,
        };
        let got = w.tail_logs(&q).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].message, "old");
    }
}
