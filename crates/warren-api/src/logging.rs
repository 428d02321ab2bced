//! Logging: human-readable lines on stderr, JSON lines under `<install>/logs/` rotated daily
//! (seven files kept). Work done for an agent runs inside [`agent_span`], so every event it emits
//! carries an `agent` field.
//!
//! The logs folder is runtime state: no agent may read or write it. Warren holds it open and
//! makes each day's file relative to it without following links ([`StateDir`]), and refuses a
//! day file that is a link, not a regular file, or has another name, so a link or hard link put
//! there never carries log lines into another file.

use std::ffi::OsString;
use std::io::Write;
use std::path::Path;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer};
use warren_policy::StateDir;

/// Keeps the file writer alive; drop it at exit to flush.
pub struct LogGuard {
    _file: Option<WorkerGuard>,
}

/// Whether stderr gets colour codes: only when it is a terminal and `NO_COLOR` is unset or
/// empty (<https://no-color.org>); a pipe or a file gets plain text.
pub fn colour_on_stderr() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Installs the global subscriber (binaries only, once). `stderr_filter` is an `EnvFilter`
/// directive such as `warn` or `warren=debug`; `logs_dir` enables the JSON file log. A logs
/// folder that cannot be created disables file logging with a warning on stderr.
pub fn init_logging(stderr_filter: &str, logs_dir: Option<&Path>) -> LogGuard {
    let stderr_layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(colour_on_stderr())
        .with_target(false)
        .with_filter(EnvFilter::new(stderr_filter));
    let mut guard = None;
    let file_layer = logs_dir.and_then(|dir| match DailyLog::open(dir) {
        Ok(log) => {
            let (writer, g) = tracing_appender::non_blocking(log);
            guard = Some(g);
            Some(
                fmt::layer()
                    .json()
                    .with_current_span(true)
                    .with_span_list(false)
                    .flatten_event(true)
                    .with_writer(writer)
                    .with_filter(EnvFilter::new("info")),
            )
        }
        Err(e) => {
            eprintln!(
                "warning: file logging disabled: cannot open {}: {e}",
                dir.display()
            );
            None
        }
    });
    let _ = tracing_subscriber::registry()
        .with(stderr_layer)
        .with(file_layer)
        .try_init();
    LogGuard { _file: guard }
}

/// The span every piece of work done for an agent runs in.
pub fn agent_span(alias: &str) -> tracing::Span {
    tracing::info_span!("agent_work", agent = %alias)
}

/// How many day files are kept.
const KEPT_DAYS: usize = 7;

/// `warren.<YYYY-MM-DD>.jsonl` in the logs folder, a new file each UTC day, the oldest beyond
/// [`KEPT_DAYS`] removed.
pub struct DailyLog {
    dir: StateDir,
    day: String,
    file: Option<std::fs::File>,
    /// The reason the current day's file is refused, said once on stderr.
    refused: Option<String>,
}

impl DailyLog {
    /// Opens (creating) the logs folder.
    pub fn open(dir: &Path) -> std::io::Result<DailyLog> {
        Ok(DailyLog {
            dir: StateDir::open(dir)?,
            day: String::new(),
            file: None,
            refused: None,
        })
    }

    /// The file name of `day` (`YYYY-MM-DD`).
    pub fn file_name(day: &str) -> String {
        format!("warren.{day}.jsonl")
    }

    fn file(&mut self) -> Option<&mut std::fs::File> {
        let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
        if today != self.day {
            self.day = today;
            self.file = None;
            self.refused = None;
            self.prune();
        }
        if self.file.is_none() && self.refused.is_none() {
            let name = OsString::from(Self::file_name(&self.day));
            match self.dir.append(&name) {
                Ok(f) => self.file = Some(f),
                Err(e) => {
                    let why = format!(
                        "{}/{}: {e} (a link, not a regular file, or a file with another name); \
                         not written",
                        self.dir.path().display(),
                        Self::file_name(&self.day)
                    );
                    eprintln!("warning: file logging: {why}");
                    self.refused = Some(why);
                }
            }
        }
        self.file.as_mut()
    }

    fn prune(&self) {
        let Ok(names) = self.dir.names() else {
            return;
        };
        let mut days: Vec<OsString> = names
            .into_iter()
            .filter(|n| {
                n.to_str()
                    .is_some_and(|n| n.starts_with("warren.") && n.ends_with(".jsonl"))
            })
            .collect();
        days.sort();
        let extra = days.len().saturating_sub(KEPT_DAYS);
        for old in days.iter().take(extra) {
            let _ = self.dir.remove(old);
        }
    }
}

impl Write for DailyLog {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.file() {
            // No secret the process holds reaches the log (whatever logged it).
            Some(f) => match std::str::from_utf8(buf).map(warren_types::redact::redact) {
                Ok(std::borrow::Cow::Owned(clean)) => {
                    f.write_all(clean.as_bytes()).map(|()| buf.len())
                }
                _ => f.write(buf),
            },
            // A refused day file swallows the day's lines (said once on stderr).
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> String {
        DailyLog::file_name(&chrono::Utc::now().format("%Y-%m-%d").to_string())
    }

    #[test]
    fn lines_go_to_the_day_file_and_old_days_are_pruned() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        for d in 1..=9 {
            std::fs::write(logs.join(format!("warren.2020-01-0{d}.jsonl")), "old\n").unwrap();
        }
        let mut log = DailyLog::open(&logs).unwrap();
        log.write_all(b"{\"message\":\"hello\"}\n").unwrap();
        log.flush().unwrap();
        assert_eq!(
            std::fs::read_to_string(logs.join(today())).unwrap(),
            "{\"message\":\"hello\"}\n"
        );
        let mut left: Vec<String> = std::fs::read_dir(&logs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), KEPT_DAYS + 1, "{left:?}");
        assert_eq!(left[0], "warren.2020-01-03.jsonl");
    }

    #[test]
    fn no_secret_the_process_holds_reaches_a_log_line() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        std::fs::create_dir_all(&logs).unwrap();
        let mut log = DailyLog::open(&logs).unwrap();
        // Positive control: before it is known, the value is written as it came.
        log.write_all(b"{\"message\":\"before sk-log-LEAK-0123456789\"}\n")
            .unwrap();
        warren_types::redact::register("sk-log-LEAK-0123456789");
        log.write_all(b"{\"message\":\"HTTP 401: bad key sk-log-LEAK-0123456789\"}\n")
            .unwrap();
        log.flush().unwrap();
        let text = std::fs::read_to_string(logs.join(today())).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains("sk-log-LEAK-0123456789"));
        assert_eq!(lines[1], "{\"message\":\"HTTP 401: bad key [redacted]\"}");
    }

    #[test]
    fn a_link_or_a_second_name_at_the_day_file_gets_no_line() {
        use std::os::unix::fs::symlink;
        for kind in ["symlink", "hard link"] {
            let dir = tempfile::tempdir().unwrap();
            let logs = dir.path().join("logs");
            std::fs::create_dir_all(&logs).unwrap();
            let victim = dir.path().join("config.toml");
            std::fs::write(&victim, "schema_version = 1\n").unwrap();
            match kind {
                "symlink" => symlink(&victim, logs.join(today())).unwrap(),
                _ => std::fs::hard_link(&victim, logs.join(today())).unwrap(),
            }
            let mut log = DailyLog::open(&logs).unwrap();
            log.write_all(b"{\"message\":\"through the link\"}\n")
                .unwrap();
            log.flush().unwrap();
            assert_eq!(
                std::fs::read_to_string(&victim).unwrap(),
                "schema_version = 1\n",
                "{kind}: a log line reached the linked file"
            );
            assert!(log.refused.is_some(), "{kind}");
        }
        // The logs folder itself replaced by a link is refused at open.
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        symlink(&elsewhere, dir.path().join("logs")).unwrap();
        assert!(DailyLog::open(&dir.path().join("logs")).is_err());
    }
}
