//! `warren config validate`.

use super::Ctx;
use std::process::ExitCode;

/// `warren config ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Validate the config, printing every error with its dotted path. Exit 2 when invalid.
    Validate,
}

/// Runs a `warren config` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::Validate => match ctx.warren.validate_config() {
            Err(e) => ctx.out.fail(&e),
            Ok(report) => {
                if ctx.out.json() {
                    ctx.out.ok(&report, String::new);
                } else if report.ok {
                    for w in &report.warnings {
                        eprintln!("warning: {}: {}", w.path, w.message);
                    }
                    crate::output::out_line(&format!(
                        "{}: ok ({} agents)",
                        report.path, report.agents
                    ));
                } else {
                    eprintln!(
                        "{}: {} error{}",
                        report.path,
                        report.errors.len(),
                        if report.errors.len() == 1 { "" } else { "s" }
                    );
                    for e in &report.errors {
                        let loc = match (e.line, e.column) {
                            (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
                            _ => String::new(),
                        };
                        let path = if e.path.is_empty() { "<file>" } else { &e.path };
                        eprintln!("{path}{loc}: {}", e.message);
                    }
                }
                if report.ok {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::from(2)
                }
            }
        },
    }
}
