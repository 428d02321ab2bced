//! The desktop logs view: the newest lines of the JSON logs under `<install>/logs/` (see
//! [`crate::logging`]), filtered by agent and minimum level, and the folder itself.

use crate::Warren;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use warren_types::{ApiError, ErrorCode};

/// Which lines to return.
#[derive(Debug, Clone, Default, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LogQuery {
    /// Only lines whose `agent` field (on the event or its span) is this alias.
    pub agent: Option<String>,
    /// Only lines at this level or more severe: `error`, `warn`, `info`, `debug`, `trace`.
    pub level: Option<String>,
    /// At most this many lines (the newest), 1 to 5000.
    pub limit: u32,
}

/// One log line.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct LogLine {
    /// RFC 3339 time as written.
    pub time: String,
    /// `ERROR`, `WARN`, `INFO`, `DEBUG` or `TRACE`.
    pub level: String,
    /// The agent the line is about, if any.
    pub agent: Option<String>,
    /// The message.
    pub message: String,
    /// The other fields, as `key=value` pairs.
    pub fields: String,
    /// The file the line is in.
    pub file: String,
}

fn severity(level: &str) -> Option<u8> {
    match level.to_ascii_lowercase().as_str() {
        "error" => Some(0),
        "warn" => Some(1),
        "info" => Some(2),
        "debug" => Some(3),
        "trace" => Some(4),
        _ => None,
    }
}

fn text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Parses one line of the JSON log; `None` for a line that is not a log event.
pub fn parse_line(line: &str, file: &str) -> Option<LogLine> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let obj = v.as_object()?;
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
        level: obj.get("level").map(text).unwrap_or_default(),
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
        let min = match q.level.as_deref().filter(|l| !l.is_empty()) {
            Some(l) => Some(severity(l).ok_or_else(|| {
                ApiError::new(
                    ErrorCode::InvalidArgument,
                    format!("unknown log level `{l}`"),
                )
            })?),
            None => None,
        };
        let agent = q.agent.as_deref().filter(|a| !a.is_empty());
        let limit = q.limit as usize;
        let mut out: Vec<LogLine> = Vec::new();
        for path in log_files(&self.layout().logs_dir())?.iter().rev() {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            let bytes = std::fs::read(path).map_err(|e| {
                ApiError::new(ErrorCode::Io, format!("reading {}: {e}", path.display()))
            })?;
            // A line torn by a crash may end inside a character: it is skipped like any other
            // line that is not a log event, and the rest of the file still shows.
            let content = String::from_utf8_lossy(&bytes);
            for line in content.lines().rev() {
                let Some(l) = parse_line(line, &name) else {
                    continue;
                };
                if min.is_some_and(|m| severity(&l.level).is_none_or(|s| s > m)) {
                    continue;
                }
                if agent.is_some_and(|a| l.agent.as_deref() != Some(a)) {
                    continue;
                }
                out.push(l);
                if out.len() == limit {
                    out.reverse();
                    return Ok(out);
                }
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
        let mut child = std::process::Command::new("xdg-open")
            .arg(&dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .map_err(|e| {
                ApiError::new(
                    ErrorCode::Io,
                    format!("opening {} with xdg-open: {e}", dir.display()),
                )
            })?;
        // Reap it when it exits, so no zombie is left.
        std::thread::spawn(move || child.wait());
        Ok(dir.display().to_string())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
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
        assert_eq!(severity("WARN"), Some(1));
    }
}
