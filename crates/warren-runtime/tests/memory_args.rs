//! The memory tools called with generated arguments from their own schemas, against a real
//! SQLite store shared by two agents: no call panics, a refused argument is named, and
//! nothing reaches the other agent's rows.

use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use std::collections::BTreeMap;
use std::sync::Arc;
use warren_config::{parse_config, InstallLayout};
use warren_memory::MemoryStores;
use warren_policy::{PolicyEnv, SandboxSupport, SecurityPolicy};
use warren_runtime::memory_tools::memory_tools;
use warren_testkit::props::{args_for, config, schema_keys};
use warren_tools::{ApprovalAnswer, Registry, ToolContext};
use warren_types::ToolErrorCode;

const CONFIG: &str = r#"
[risk_profiles.yolo]
level = "full"
allowed_commands = ["*"]
[agents.alice]
risk_profile = "yolo"
[agents.bob]
risk_profile = "yolo"
"#;

#[test]
fn no_arguments_make_a_memory_tool_panic_or_reach_another_agent() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let layout = InstallLayout::new(&root);
    let cfg = parse_config(CONFIG).unwrap();
    let factory = MemoryStores::new(layout.clone());
    let (alice, bob) = rt.block_on(async {
        (
            factory.handle_for(&cfg, "alice").await.unwrap(),
            factory.handle_for(&cfg, "bob").await.unwrap(),
        )
    });
    rt.block_on(bob.store(warren_memory::NewMemory::new("bobs", "bob's private row")))
        .unwrap();
    let mut registry = Registry::builtin();
    for t in memory_tools(alice.clone(), true) {
        registry.register(t);
    }
    let env = PolicyEnv { layout, home: None };
    let policy = SecurityPolicy::for_agent(&cfg, "alice", &env).unwrap();
    policy.prepare().unwrap();
    let ctx = ToolContext::new(
        Arc::new(policy),
        SandboxSupport::probe(Some("/usr/bin:/bin".as_ref())),
        BTreeMap::new(),
    );
    let tools: Vec<(String, Vec<(String, String)>)> = registry
        .specs_for(&ctx)
        .into_iter()
        .filter(|s| s.name.starts_with("memory_"))
        .map(|s| (s.name.to_string(), schema_keys(&s.parameters)))
        .collect();
    assert_eq!(tools.len(), 3, "{tools:?}");
    let strategy =
        proptest::sample::select(tools).prop_flat_map(|(name, keys)| (Just(name), args_for(keys)));
    let mut runner = TestRunner::new(config(400));
    let tally = std::cell::Cell::new((0u32, 0u32));
    let result = runner.run(&strategy, |(name, args)| {
        let (mut ok, mut refused) = tally.get();
        let out = rt.block_on(registry.invoke(&name, &args, &ctx, &ApprovalAnswer::approve()));
        match out {
            Ok(v) => {
                ok += 1;
                prop_assert!(
                    !v.to_string().contains("bob's private row"),
                    "{name} {args} returned bob's row: {v}"
                );
            }
            Err(e) => {
                refused += 1;
                if e.code() == ToolErrorCode::InvalidArgument {
                    prop_assert!(
                        e.to_string().starts_with("argument `"),
                        "{name} {args}: the refusal names no argument: {e}"
                    );
                }
            }
        }
        tally.set((ok, refused));
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (ok, refused) = tally.get();
    eprintln!("generated memory calls: {ok} ran, {refused} refused");
    assert!(ok > 40, "only {ok} generated calls ran");
    // bob's row is still there, unchanged, and bob's handle sees it.
    let rows = rt
        .block_on(bob.recall(&warren_memory::RecallQuery::new("private")))
        .unwrap();
    assert!(
        rows.iter().any(|r| r.content == "bob's private row"),
        "{rows:?}"
    );
}
