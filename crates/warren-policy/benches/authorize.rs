//! Decisions per second of `authorize` on an existing file inside the workspace (target:
//! ≥ 200,000/s single-threaded). Run: `cargo bench -p warren-policy --bench authorize`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::path::Path;
use std::time::Instant;
use warren_config::InstallLayout;
use warren_policy::{Access, PolicyEnv, SecurityPolicy};

const CONFIG: &str = r#"
[risk_profiles.default]
forbidden_paths = ["~/.ssh", "/etc/shadow"]
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

fn setup() -> (tempfile::TempDir, SecurityPolicy) {
    let dir = tempfile::tempdir().unwrap();
    let config = warren_config::parse_config(CONFIG).unwrap();
    let env = PolicyEnv {
        layout: InstallLayout::new(dir.path()),
        home: Some(dir.path().join("home")),
    };
    let policy = SecurityPolicy::for_agent(&config, "alice", &env).unwrap();
    policy.prepare().unwrap();
    std::fs::create_dir_all(policy.workspace.join("src/module")).unwrap();
    std::fs::write(policy.workspace.join("src/module/lib.rs"), "fn main() {}").unwrap();
    (dir, policy)
}

fn bench(c: &mut Criterion) {
    let (_dir, policy) = setup();
    let rel = Path::new("src/module/lib.rs");
    let abs = policy.workspace.join(rel);
    assert!(policy.authorize(rel, Access::Read).is_ok());

    // A plain figure first, printed as decisions per second.
    let n = 200_000u32;
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(policy.authorize(std::hint::black_box(&abs), Access::Write)).ok();
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "authorize (existing file in workspace, absolute, {} components): {:.0} decisions/s",
        abs.components().count(),
        f64::from(n) / secs
    );

    // What `warren policy check` does in process: load and validate the config, build the
    // policy (workspace created if missing), decide one path.
    let dir = tempfile::tempdir().unwrap();
    let layout = InstallLayout::new(dir.path());
    std::fs::write(layout.config_path(), CONFIG).unwrap();
    let env = PolicyEnv {
        layout: layout.clone(),
        home: Some(dir.path().join("home")),
    };
    let policy_check = || {
        let cfg = warren_config::load_config(&layout).unwrap().config;
        let p = SecurityPolicy::for_agent(&cfg, "alice", &env).unwrap();
        p.check(Path::new("notes.txt"), Access::Write)
    };
    let n = 2_000u32;
    let start = Instant::now();
    for _ in 0..n {
        std::hint::black_box(policy_check());
    }
    println!(
        "policy check in process (load + validate config, build policy, decide): {:.1} µs/call",
        start.elapsed().as_secs_f64() * 1e6 / f64::from(n)
    );

    let mut g = c.benchmark_group("authorize");
    g.throughput(Throughput::Elements(1));
    g.bench_function("existing_relative_read", |b| {
        b.iter(|| policy.authorize(std::hint::black_box(rel), Access::Read));
    });
    g.bench_function("existing_absolute_write", |b| {
        b.iter(|| policy.authorize(std::hint::black_box(&abs), Access::Write));
    });
    g.bench_function("policy_check_in_process", |b| b.iter(policy_check));
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
