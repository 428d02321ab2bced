//! `cargo bench -p warren-api --bench editor`: the settings screens' backend figures.
//!
//! - The permission map of a 50-agent install (every agent granted on its neighbour, delegating
//!   to it and reading its memory): the whole grid plus the policy of each agent. Target:
//!   well under the 300 ms the window may take after the command returns.
//! - The settings preview (one grant changed, validated, diffed) on a 200-agent config.
//!   Target: < 50 ms.
//!
//! The floor, measured in the same run, is loading and validating the same config (what any
//! answer about it must do at least); the ratio to it is printed beside each figure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::{Duration, Instant};
use warren_api::{AgentChange, AgentEdit, HostEnv, Warren};
use warren_config::InstallLayout;
use warren_types::AccessMode;

fn config(n: usize) -> String {
    let mut c = String::from(
        "# Bench install.\nschema_version = 1\n\n[risk_profiles.sup]\nlevel = \"supervised\"\ndelegation = \"allow\"\n",
    );
    for i in 0..n {
        let next = (i + 1) % n;
        c.push_str(&format!(
            "\n# Agent {i}.\n[agents.a{i:03}]\nrisk_profile = \"sup\"\ndelegates = [\"a{next:03}\"]\n\n\
             [agents.a{i:03}.workspace]\nread_memory_from = [\"a{next:03}\"]\n\n\
             [agents.a{i:03}.workspace.access]\na{next:03} = \"read\"\n"
        ));
    }
    c
}

fn install(dir: &Path, n: usize) -> Warren {
    std::fs::write(dir.join("config.toml"), config(n)).unwrap();
    let env = HostEnv {
        home: Some(dir.to_path_buf()),
        vars: [(
            "PATH".to_string(),
            std::env::var("PATH").unwrap_or_default(),
        )]
        .into(),
    };
    Warren::open_with_env(InstallLayout::new(dir), env)
}

/// Median and 95th percentile of `runs` timings of `f`.
fn measure(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    f();
    let mut t: Vec<Duration> = (0..runs)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    (t[runs / 2], t[(runs * 95 / 100).min(runs - 1)])
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "load: {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );

    let dir = tempfile::tempdir().unwrap();
    let w = install(dir.path(), 50);
    let (floor, _) = measure(30, || {
        w.validate_config().unwrap();
    });
    let (p50, p95) = measure(30, || {
        let m = w.permission_map().unwrap();
        assert_eq!(m.agents.len(), 50);
    });
    println!(
        "permission map, 50 agents: p50 {:.1} ms, p95 {:.1} ms (floor: load+validate {:.2} ms, {:.1}x; target < 300 ms)",
        ms(p50),
        ms(p95),
        ms(floor),
        ms(p50) / ms(floor)
    );

    let dir = tempfile::tempdir().unwrap();
    let w = install(dir.path(), 200);
    let edit = AgentEdit {
        alias: "a000".into(),
        changes: vec![AgentChange::Grant {
            peer: "a001".into(),
            access: Some(AccessMode::Write),
        }],
    };
    let (floor, _) = measure(50, || {
        w.validate_config().unwrap();
    });
    let (p50, p95) = measure(50, || {
        let p = w.preview_agent_edit(&edit).unwrap();
        assert!(p.errors.is_empty() && !p.diff.is_empty());
    });
    println!(
        "settings preview, 200 agents: p50 {:.1} ms, p95 {:.1} ms (floor: load+validate {:.2} ms, {:.1}x; target < 50 ms)",
        ms(p50),
        ms(p95),
        ms(floor),
        ms(p50) / ms(floor)
    );
}
