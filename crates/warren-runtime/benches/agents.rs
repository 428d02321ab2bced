//! Many agents at once: 1, 5, 20 and 50 agents (`WARREN_BENCH_AGENTS=1,5` for others), each
//! running a turn of 50 `file_read` rounds at the same time against a fake provider of its own
//! that answers after a fixed 50 ms, so that the runtime, not the provider, is what varies.
//!
//! Prints, per size: rounds per second (and against the size times one agent's), p50 and p99
//! round latency, peak RSS and RSS per active agent, turns that failed (a database lock would
//! fail one), and the rows checked afterwards (no lost or doubled events, receipts, messages).
//! Targets: at 20 agents at least 80 % of 20 × one agent's rate; p99 ≤ 3 × p50; RSS per active
//! agent ≤ 2 MB; no failed turn and no lost row.
//! `cargo bench -p warren-runtime --bench agents`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;
use warren_testkit::crowd::Crowd;

const ROUNDS: usize = 50;
const LATENCY: Duration = Duration::from_millis(50);

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// A field of /proc/self/status in KiB (`VmRSS`, `VmHWM`).
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix(field)?
                .trim_start_matches(':')
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// Resets the peak RSS (`VmHWM`) to the current RSS.
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn percentile(v: &[Duration], p: f64) -> f64 {
    let mut ms: Vec<f64> = v.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
    ms.sort_by(f64::total_cmp);
    if ms.is_empty() {
        return f64::NAN;
    }
    let i = ((ms.len() - 1) as f64 * p).round() as usize;
    ms[i]
}

fn main() {
    let sizes: Vec<usize> = std::env::var("WARREN_BENCH_AGENTS")
        .ok()
        .map(|s| s.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![1, 5, 20, 50]);
    println!("load average at start: {}", loadavg());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "\n{ROUNDS} file_read rounds per agent, provider latency {} ms, all agents at once:",
        LATENCY.as_millis()
    );
    println!(
        "  agents  rounds/s  vs n x one   p50 ms   p99 ms  p99/p50  peak RSS MiB  RSS/agent MiB  failed  rows"
    );
    let mut one_rate = None;
    for n in sizes {
        rt.block_on(async {
            let crowd = Crowd::open(n).await.unwrap();
            // The fake providers share this process: they keep no request, so the RSS is the
            // runtime's.
            crowd.keep_requests(false);
            // Every agent warmed up once (its memory handle, its provider's connection) so the
            // RSS measured is that of running, not of first use... at a small size.
            let _ = crowd.run(1, Duration::ZERO).await;
            let before = status_kib("VmRSS");
            reset_peak();
            let run = crowd.run(ROUNDS, LATENCY).await;
            let peak = status_kib("VmHWM");
            let failed = run.outcomes.iter().filter(|o| o.is_err()).count();
            let rate = (n * ROUNDS) as f64 / run.wall.as_secs_f64();
            let one = *one_rate.get_or_insert(rate);
            let (p50, p99) = (percentile(&run.rounds, 0.5), percentile(&run.rounds, 0.99));
            let rows = match crowd.check_rows() {
                Ok(counts) => {
                    let wrong = counts
                        .values()
                        .filter(|c| {
                            c.completed_turns != 2
                                || c.tool_calls != ROUNDS + 1
                                || c.receipts != ROUNDS + 1
                                || c.usage != ROUNDS + 3
                        })
                        .count();
                    if wrong == 0 {
                        "ok".to_string()
                    } else {
                        format!("{wrong} agents with wrong counts: {counts:?}")
                    }
                }
                Err(e) => e,
            };
            println!(
                "  {n:>6}  {rate:>8.1}  {:>9.0} %  {p50:>7.1}  {p99:>7.1}  {:>7.2}  {:>12.1}  {:>13.2}  {failed:>6}  {rows}",
                100.0 * rate / (one * n as f64),
                p99 / p50,
                peak as f64 / 1024.0,
                peak.saturating_sub(before) as f64 / 1024.0 / n as f64,
            );
            if let Some(Err(e)) = run.outcomes.iter().find(|o| o.is_err()) {
                println!("    first failure: {e}");
            }
        });
    }
    println!("load average at end: {}", loadavg());
}
