//! Rendering results and errors: human text on stdout, diagnostics on stderr, and with `--json`
//! one JSON document on stdout (errors as `{"error": {"code", "message"}}`).

use serde::Serialize;
use std::process::ExitCode;
use warren_api::{ApiError, ErrorCode};

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
                Ok(s) => println!("{s}"),
                Err(e) => {
                    return self.fail(&ApiError::new(ErrorCode::Internal, e.to_string()));
                }
            }
        } else {
            let text = human();
            if !text.is_empty() {
                println!("{}", text.trim_end());
            }
        }
        ExitCode::SUCCESS
    }

    /// Prints an error (stderr, and stdout as JSON with `--json`) and returns its exit code.
    pub fn fail(&self, e: &ApiError) -> ExitCode {
        eprintln!("error: {}", e.message);
        for d in &e.details {
            eprintln!("  {d}");
        }
        if self.json {
            let v = serde_json::json!({ "error": {
                "code": e.code.as_str(),
                "message": e.message,
                "details": e.details,
            }});
            println!("{v}");
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
