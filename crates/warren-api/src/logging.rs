//! Logging: human-readable lines on stderr, JSON lines under `<install>/logs/` rotated daily
//! (seven files kept). Work done for an agent runs inside [`agent_span`], so every event it emits
//! carries an `agent` field.

use std::path::Path;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{Builder, Rotation};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter, Layer};

/// Keeps the file writer alive; drop it at exit to flush.
pub struct LogGuard {
    _file: Option<WorkerGuard>,
}

/// Installs the global subscriber (binaries only, once). `stderr_filter` is an `EnvFilter`
/// directive such as `warn` or `warren=debug`; `logs_dir` enables the JSON file log. A logs
/// folder that cannot be created disables file logging with a warning on stderr.
pub fn init_logging(stderr_filter: &str, logs_dir: Option<&Path>) -> LogGuard {
    let stderr_layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_filter(EnvFilter::new(stderr_filter));
    let mut guard = None;
    let file_layer = logs_dir.and_then(|dir| {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!(
                "warning: file logging disabled: cannot create {}: {e}",
                dir.display()
            );
            return None;
        }
        let appender = Builder::new()
            .rotation(Rotation::DAILY)
            .filename_prefix("warren")
            .filename_suffix("jsonl")
            .max_log_files(7)
            .build(dir);
        match appender {
            Ok(a) => {
                let (writer, g) = tracing_appender::non_blocking(a);
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
                eprintln!("warning: file logging disabled: {e}");
                None
            }
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
