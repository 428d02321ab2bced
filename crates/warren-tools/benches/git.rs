//! `git_operations` benchmark: a repository with 10,000 files (100 directories of 100) and
//! 5,000 commits, built with `git fast-import`. Prints the medians of the tool's `status` and
//! `log --limit 100` and of `git status --porcelain` on the same repository, and the ratio
//! (the git issue requires the tool's `status` within 2× of `git status`; a run over that says
//! so). Not run in CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warren_config::InstallLayout;
use warren_policy::{PolicyEnv, SandboxSupport, SecurityPolicy};
use warren_testkit::git::{command, git, Repo};
use warren_tools::{ApprovalAnswer, Registry, ToolContext};
use warren_types::Config;

const FILES: usize = 10_000;
const COMMITS: usize = 5_000;
const RUNS: usize = 21;

const CONFIG: &str = r#"
[risk_profiles.full]
level = "full"
allowed_commands = ["*"]

[agents.bench]
risk_profile = "full"
"#;

fn run(c: &mut Command) {
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{c:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The fast-import stream: one commit adding every file, then one commit per change.
fn stream() -> Vec<u8> {
    let mut s = Vec::with_capacity(8 << 20);
    let person = |t: usize| format!("Bench <bench@example.test> {} +0000", 1_600_000_000 + t);
    let commit = |s: &mut Vec<u8>, n: usize, files: &[(String, String)]| {
        let msg = format!("commit {n}\n");
        write!(
            s,
            "commit refs/heads/main\nauthor {p}\ncommitter {p}\ndata {}\n{msg}",
            msg.len(),
            p = person(n)
        )
        .unwrap();
        for (path, body) in files {
            write!(s, "M 100644 inline {path}\ndata {}\n{body}\n", body.len()).unwrap();
        }
        s.push(b'\n');
    };
    let path = |i: usize| format!("d{:03}/f{i:05}.txt", i / 100);
    let all: Vec<(String, String)> = (0..FILES)
        .map(|i| (path(i), format!("file {i}\nline two\nline three\n")))
        .collect();
    commit(&mut s, 0, &all);
    for n in 1..COMMITS {
        let i = (n * 7919) % FILES;
        commit(
            &mut s,
            n,
            &[(path(i), format!("file {i}\nchanged in commit {n}\n"))],
        );
    }
    s
}

fn build(repo: &Path) {
    std::fs::create_dir_all(repo).unwrap();
    Repo::init(repo);
    let mut child = command(repo)
        .args(["fast-import", "--quiet"])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&stream()).unwrap();
    assert!(child.wait().unwrap().success());
    git(repo, &["reset", "-q", "--hard"]);
    // Past the racy-timestamp window, then let git refresh and write the index once.
    std::thread::sleep(Duration::from_millis(1100));
    git(repo, &["status", "--porcelain"]);
}

/// Medians of `fs`, measured interleaved (one run of each per round) so that load from other
/// processes on a shared machine falls on all of them alike. Two warm-up rounds.
fn medians<const N: usize>(fs: &mut [&mut dyn FnMut(); N]) -> [Duration; N] {
    for _ in 0..2 {
        for f in fs.iter_mut() {
            f();
        }
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::with_capacity(RUNS); N];
    for _ in 0..RUNS {
        for (f, t) in fs.iter_mut().zip(times.iter_mut()) {
            let start = Instant::now();
            f();
            t.push(start.elapsed());
        }
    }
    let mut out = [Duration::ZERO; N];
    for (o, mut t) in out.iter_mut().zip(times) {
        t.sort();
        *o = t[RUNS / 2];
    }
    out
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    std::fs::create_dir_all(root.join("data")).unwrap();
    std::fs::write(root.join("config.toml"), CONFIG).unwrap();
    let config: Config = toml::from_str(CONFIG).unwrap();
    let env = PolicyEnv {
        layout: InstallLayout::new(&root),
        home: Some(root.join("home")),
    };
    let policy = SecurityPolicy::for_agent(&config, "bench", &env).unwrap();
    policy.prepare().unwrap();
    let repo = policy.workspace.join("big");
    let t = Instant::now();
    build(&repo);
    eprintln!(
        "built {FILES} files / {COMMITS} commits in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    let mut host = BTreeMap::new();
    host.insert("PATH".to_string(), "/usr/bin:/bin".to_string());
    let ctx = ToolContext::new(
        Arc::new(policy),
        SandboxSupport::probe(Some("/usr/bin:/bin".as_ref())),
        host,
    );
    let registry = Registry::builtin();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let call = |args: serde_json::Value| {
        rt.block_on(registry.invoke("git_operations", &args, &ctx, &ApprovalAnswer::approve()))
            .unwrap()
    };
    let path = repo.display().to_string();
    let v = call(json!({"operation": "status", "path": path}));
    assert_eq!(v["entries"].as_array().unwrap().len(), 0, "{v}");
    let v = call(json!({"operation": "log", "path": path, "limit": 100}));
    assert_eq!(v["commits"].as_array().unwrap().len(), 100);

    let mut status = || {
        call(json!({"operation": "status", "path": path}));
    };
    let mut log = || {
        call(json!({"operation": "log", "path": path, "limit": 100}));
    };
    let mut git_status = || run(command(&repo).args(["status", "--porcelain"]));
    let [status, log, git_status] = medians(&mut [&mut status, &mut log, &mut git_status]);
    let ratio = status.as_secs_f64() / git_status.as_secs_f64();
    println!(
        "git_operations on {FILES} files / {COMMITS} commits (median of {RUNS} interleaved runs)"
    );
    println!("| measurement              | median ms |");
    println!("|--------------------------|-----------|");
    println!("| tool status              | {:9.1} |", ms(status));
    println!("| tool log --limit 100     | {:9.1} |", ms(log));
    println!("| git status --porcelain   | {:9.1} |", ms(git_status));
    println!("status / git status = {ratio:.2} (must be <= 2.00)");
    if ratio > 2.0 {
        println!("NOT MET: tool status is more than 2x git status in this run");
    }
}
