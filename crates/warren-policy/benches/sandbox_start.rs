//! Start-up cost of one confined shell call, under each backend in the same run: `confine` +
//! spawn + wait of `/bin/sh -c true`, interleaved (none, landlock + seccomp, bubblewrap +
//! seccomp + Landlock inside, and bubblewrap + seccomp without the Landlock layer) so load
//! changes hit all alike. Target: ≤ 15 ms over `none` (median). Run:
//! `cargo bench -p warren-policy --bench sandbox_start` (`WARREN_BENCH_ROUNDS` sets the rounds).
//! Prints figures; asserts nothing about time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsString;
use std::time::{Duration, Instant};
use warren_config::InstallLayout;
use warren_policy::sandbox::{choose, confine, EffectiveSandbox, SandboxSupport, SecondLayer};
use warren_policy::{PolicyEnv, SecurityPolicy};
use warren_types::SandboxKind;

const CONFIG: &str = r#"
[risk_profiles.default]
forbidden_paths = ["~/.ssh", "/etc/shadow", "secrets"]
[agents.alice]
risk_profile = "default"
[agents.alice.workspace.access]
bob = "read"
carol = "write"
[agents.bob]
risk_profile = "default"
[agents.carol]
risk_profile = "default"
"#;

fn once(policy: &SecurityPolicy, sb: &EffectiveSandbox) -> Duration {
    let args: Vec<OsString> = vec!["-c".into(), "true".into()];
    let start = Instant::now();
    let mut cmd = confine(policy, sb, "/bin/sh".as_ref(), &args, &policy.workspace).unwrap();
    cmd.command_mut()
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let status = cmd.spawn().unwrap().wait().unwrap();
    assert!(status.success(), "{} failed", sb.name());
    start.elapsed()
}

fn median(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn p90(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() * 9 / 10]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let config = warren_config::parse_config(CONFIG).unwrap();
    let env = PolicyEnv {
        layout: InstallLayout::new(dir.path()),
        home: Some(dir.path().join("home")),
    };
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    let policy = SecurityPolicy::for_agent(&config, "alice", &env).unwrap();
    policy.prepare().unwrap();
    let support = SandboxSupport::probe(std::env::var_os("PATH").as_deref());
    let mut backends: Vec<EffectiveSandbox> = vec![EffectiveSandbox::None];
    for kind in [SandboxKind::Landlock, SandboxKind::Bubblewrap] {
        match choose(kind, true, &support) {
            Ok((sb, _)) => backends.push(sb),
            Err(e) => println!("skipped: {kind:?}: {e}"),
        }
    }
    // bubblewrap without its Landlock layer: what the helper costs.
    if let Some(EffectiveSandbox::Bubblewrap { program, landlock }) = backends.last().cloned() {
        if matches!(landlock, SecondLayer::Missing { .. }) {
            println!("note: no Landlock layer inside bubblewrap: {landlock:?}");
        }
        backends.push(EffectiveSandbox::Bubblewrap {
            program,
            landlock: SecondLayer::Missing {
                reason: "measured without it".into(),
            },
        });
    }
    let rounds: usize = std::env::var("WARREN_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    for sb in &backends {
        for _ in 0..10 {
            once(&policy, sb);
        }
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(rounds); backends.len()];
    for _ in 0..rounds {
        for (i, sb) in backends.iter().enumerate() {
            times[i].push(once(&policy, sb));
        }
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "sandbox start-up, /bin/sh -c true, {rounds} interleaved rounds, load {}",
        load.split_whitespace().next().unwrap_or("?")
    );
    let base = median(&mut times[0].clone());
    for (i, sb) in backends.iter().enumerate() {
        let m = median(&mut times[i]);
        let p = p90(&mut times[i]);
        let layers = match sb {
            EffectiveSandbox::None => "reaper only".to_string(),
            _ => sb.enforcement(&policy).layers.len().to_string() + " layers",
        };
        let name = match sb {
            EffectiveSandbox::Bubblewrap {
                landlock: SecondLayer::Missing { .. },
                ..
            } => "bwrap only",
            _ => sb.name(),
        };
        println!(
            "  {:<10} median {:>7.2} ms  p90 {:>7.2} ms  over none {:>+7.2} ms  ({layers})",
            name,
            m.as_secs_f64() * 1e3,
            p.as_secs_f64() * 1e3,
            (m.as_secs_f64() - base.as_secs_f64()) * 1e3,
        );
    }
}
