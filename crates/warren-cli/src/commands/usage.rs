//! `warren usage` and `warren logs`: the desktop's Usage and Logs views on the command line.
//! `usage --json` → `[{"day", "agent", "requests", "input_tokens", "output_tokens",
//! "cost_usd"}]`, newest day first; `logs --json` → `[{"time", "level", "agent", "message",
//! "fields", "file"}]`, oldest of the returned lines first.

use super::choices::Level;
use super::Ctx;
use std::process::ExitCode;
use warren_api::logs_view::{LogLevelFilter, LogQuery};

/// `warren usage` arguments.
#[derive(clap::Args)]
pub struct UsageArgs {
    /// The last N UTC days, today included.
    #[arg(long, default_value_t = 7)]
    days: u32,
}

/// `warren logs` arguments.
#[derive(clap::Args)]
pub struct LogsArgs {
    /// Only lines about this agent.
    #[arg(long)]
    agent: Option<String>,
    /// Only lines at this level or more severe.
    #[arg(long, value_enum)]
    level: Option<Level>,
    /// The newest N lines (1 to 5000).
    #[arg(long, short = 'n', default_value_t = 50)]
    lines: u32,
    /// The network log instead: every connection through Warren's proxy (profiles whose
    /// network is by domain), newest first.
    #[arg(long)]
    network: bool,
    /// With --network: only the refused connections.
    #[arg(long, requires = "network")]
    refused: bool,
}

/// Runs `warren usage`.
pub fn usage(ctx: &Ctx, a: UsageArgs) -> ExitCode {
    let r = ctx.block_on(ctx.warren.usage_by_day(a.days));
    ctx.out.result(r, |days| {
        if days.is_empty() {
            return "no usage recorded".into();
        }
        let mut s = format!(
            "{:<11} {:<24} {:>8} {:>12} {:>12} {:>10}\n",
            "DAY", "AGENT", "REQUESTS", "INPUT", "OUTPUT", "COST USD"
        );
        for d in days {
            s.push_str(&format!(
                "{:<11} {:<24} {:>8} {:>12} {:>12} {:>10.4}\n",
                d.day, d.agent, d.requests, d.input_tokens, d.output_tokens, d.cost_usd
            ));
        }
        s
    })
}

/// Runs `warren logs`.
pub fn logs(ctx: &Ctx, a: LogsArgs) -> ExitCode {
    if a.network {
        if a.level.is_some() {
            return ctx.out.fail(&warren_api::ApiError::new(
                warren_api::ErrorCode::InvalidArgument,
                "--level filters the log lines; the network log has no levels (use --refused)",
            ));
        }
        let r = ctx.block_on(
            ctx.warren
                .network_log(a.agent.as_deref(), a.refused, a.lines),
        );
        return ctx.out.result(r, |rows| {
            if rows.is_empty() {
                return "no connections recorded (only profiles whose network is by domain go through Warren's proxy)".into();
            }
            let mut s = String::new();
            for r in rows {
                let verdict = if r.allowed { "allowed" } else { "REFUSED" };
                s.push_str(&format!(
                    "{} [{}] {verdict} {}:{} ({}) {}",
                    r.time, r.agent, r.host, r.port, r.rule, r.kind
                ));
                if r.allowed {
                    s.push_str(&format!(
                        " sent {} B, received {} B in {} ms",
                        r.bytes_up, r.bytes_down, r.duration_ms
                    ));
                }
                s.push('\n');
            }
            s
        });
    }
    let level = a.level.map(LogLevelFilter::from);
    let q = LogQuery {
        agent: a.agent,
        level,
        limit: a.lines,
    };
    ctx.out.result(ctx.warren.tail_logs(&q), |lines| {
        let mut s = String::new();
        for l in lines {
            let agent = l
                .agent
                .as_deref()
                .map(|a| format!(" [{a}]"))
                .unwrap_or_default();
            s.push_str(&format!("{} {:<5}{agent} {}", l.time, l.level, l.message));
            if !l.fields.is_empty() {
                s.push(' ');
                s.push_str(&l.fields);
            }
            s.push('\n');
        }
        s
    })
}
