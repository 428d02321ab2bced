//! `file_read` benchmark: a 4 KiB file read through the whole gate (`Registry::invoke`), with
//! the race-free opener, against the same gate running a tool that opens by name the way the
//! file tools did before (authorize, `stat`, open with `O_NOFOLLOW` on the last component only).
//! Both run in the same process on the same file, interleaved, so the ratio holds on a noisy
//! machine. The race-free open may cost at most 20% more. Not run in CI.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use warren_config::InstallLayout;
use warren_policy::{Access, PolicyEnv, SandboxSupport, SecurityPolicy};
use warren_tools::{
    blocking, ApprovalAnswer, CallCheck, Registry, Tool, ToolContext, ToolError, ToolSpec,
};
use warren_types::Config;

const CALLS: usize = 20_000;
const RUNS: usize = 15;

const CONFIG: &str = r#"
[risk_profiles.full]
level = "full"
allowed_commands = ["*"]

[agents.bench]
risk_profile = "full"
"#;

/// The by-name reader the race-free opener replaced: authorize in `check` and again in
/// `execute`, `stat` the resolved path, then open it by name.
struct ByName;

#[async_trait::async_trait]
impl Tool for ByName {
    fn name(&self) -> &'static str {
        "file_read_by_name"
    }
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "file_read_by_name".into(),
            description: "reference".into(),
            parameters: json!({}),
        }
    }
    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        let p = args["path"].as_str().unwrap_or_default();
        ctx.policy.authorize(Path::new(p), Access::Read)?;
        Ok(CallCheck {
            side_effects: false,
            risk: None,
            reasons: Vec::new(),
        })
    }
    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        // On the blocking pool, as the built-in file tools run.
        blocking(args, ctx, read_by_name).await
    }
}

fn read_by_name(args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
    let p = args["path"].as_str().unwrap_or_default();
    let auth = ctx.policy.authorize(Path::new(p), Access::Read)?;
    let meta = std::fs::metadata(&auth.path).map_err(|e| ToolError::Io {
        path: auth.path.clone(),
        source: e,
    })?;
    let _ = std::fs::metadata(&auth.path).map(|m| m.is_file());
    let mut buf = Vec::with_capacity(meta.len() as usize);
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&auth.path)
        .and_then(|f| f.take(meta.len() + 1).read_to_end(&mut buf))
        .map_err(|e| ToolError::Io {
            path: auth.path.clone(),
            source: e,
        })?;
    let content = String::from_utf8_lossy(&buf).into_owned();
    Ok(
        json!({"path": auth.path.display().to_string(), "bytes": buf.len(), "content": content, "utf8": true, "truncated": false}),
    )
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn per_call_us(
    rt: &tokio::runtime::Runtime,
    registry: &Registry,
    ctx: &ToolContext,
    tool: &str,
    args: &Value,
) -> f64 {
    let start = Instant::now();
    rt.block_on(async {
        for _ in 0..CALLS {
            let v = registry
                .invoke(tool, args, ctx, &ApprovalAnswer::approve())
                .await
                .unwrap();
            assert_eq!(v["bytes"], json!(4096));
        }
    });
    start.elapsed().as_secs_f64() * 1e6 / CALLS as f64
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let config: Config = toml::from_str(CONFIG).unwrap();
    let env = PolicyEnv {
        layout: InstallLayout::new(&root),
        home: Some(root.join("home")),
    };
    let policy = SecurityPolicy::for_agent(&config, "bench", &env).unwrap();
    policy.prepare().unwrap();
    // Nested a few levels, like a file in a project.
    let file = policy.workspace.join("src/module/part/data.txt");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "x".repeat(4096)).unwrap();
    let ctx = ToolContext::new(
        Arc::new(policy),
        SandboxSupport::probe(Some("/usr/bin:/bin".as_ref())),
        BTreeMap::new(),
    );
    let mut registry = Registry::builtin();
    registry.register(Box::new(ByName));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let args = json!({"path": "src/module/part/data.txt"});
    // Warm up both.
    per_call_us(&rt, &registry, &ctx, "file_read", &args);
    per_call_us(&rt, &registry, &ctx, "file_read_by_name", &args);
    let (mut new, mut old) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        new.push(per_call_us(&rt, &registry, &ctx, "file_read", &args));
        old.push(per_call_us(
            &rt,
            &registry,
            &ctx,
            "file_read_by_name",
            &args,
        ));
    }
    let (n, o) = (median(new), median(old));
    println!("file_read 4 KiB through the gate ({RUNS} runs of {CALLS} calls, medians)");
    println!("  race-free open (file_read):        {n:8.2} us/call");
    println!("  open by name (the earlier reader): {o:8.2} us/call");
    let ratio = n / o;
    println!(
        "  ratio: {ratio:.3} ({})",
        if ratio <= 1.2 {
            "within the 20% allowed"
        } else {
            "OVER the 20% allowed"
        }
    );
}
