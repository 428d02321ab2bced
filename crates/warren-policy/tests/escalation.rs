//! `ensure_no_escalation`: every axis of rules §5, each violation named.

use crate::fixture::{Fixture, FAMILY};
use warren_policy::{ensure_no_escalation, Access, SecurityPolicy};
use warren_types::{AutonomyLevel, MemoryGrant, SandboxKind};

fn child_of(parent: &SecurityPolicy) -> SecurityPolicy {
    let mut c = parent.clone();
    c.delegation_depth = parent.delegation_depth + 1;
    c
}

#[test]
fn every_axis_is_checked() {
    let fx = Fixture::new(FAMILY);
    let mut parent = fx.policy("alice");
    parent.risk.allowed_commands = vec!["ls".into(), "cat".into()];
    parent.risk.allowed_tools = vec!["file_read".into(), "shell".into()];
    parent.risk.auto_approve = vec!["file_read".into()];
    parent.risk.always_ask = vec!["shell".into()];
    parent.risk.excluded_tools = vec!["file_edit".into()];
    parent.risk.shell_env_passthrough = vec!["LANG".into()];
    parent.risk.sandbox = SandboxKind::Landlock;
    parent.risk.network = false.into();
    parent.risk.require_approval_for_medium_risk = true;
    parent.runtime.max_context_tokens = Some(8_000);
    parent.runtime.single_tool_rounds = true;
    parent.runtime.parallel_tools = false;
    parent.memory_grants = vec![MemoryGrant::Scoped {
        agent: "bob".into(),
        categories: vec!["core".into()],
    }];

    assert_eq!(ensure_no_escalation(&child_of(&parent), &parent), Ok(()));

    type Edit = Box<dyn Fn(&mut SecurityPolicy, &Fixture)>;
    let edits: Vec<(&str, Edit)> = vec![
        (
            "autonomy_level",
            Box::new(|c, _| c.risk.level = AutonomyLevel::Full),
        ),
        (
            "read_write_roots",
            Box::new(|c, fx| {
                c.roots.push(c.roots[0].clone());
                let last = c.roots.len() - 1;
                c.roots[last].path = fx.ws("erin");
            }),
        ),
        (
            "read_write_roots",
            Box::new(|c, fx| {
                // Upgrading the read-only sibling to read-write.
                for r in &mut c.roots {
                    if r.path == fx.ws("bob") {
                        r.tier = warren_policy::Tier::ReadWrite;
                    }
                }
            }),
        ),
        (
            "read_only_roots",
            Box::new(|c, fx| {
                for r in &mut c.roots {
                    if r.path == fx.ws("carol") {
                        r.tier = warren_policy::Tier::ReadOnly;
                    }
                }
            }),
        ),
        (
            "write_only_roots",
            Box::new(|c, fx| {
                for r in &mut c.roots {
                    if r.path == fx.ws("bob") {
                        r.tier = warren_policy::Tier::WriteOnly;
                    }
                }
            }),
        ),
        (
            "allowed_commands",
            Box::new(|c, _| c.risk.allowed_commands.push("rm".into())),
        ),
        (
            "allowed_commands",
            Box::new(|c, _| c.risk.allowed_commands = vec!["*".into()]),
        ),
        ("workspace_only", Box::new(|c, _| c.workspace_only = false)),
        (
            "forbidden_paths",
            Box::new(|c, _| {
                c.forbidden.pop();
            }),
        ),
        (
            "allowed_tools",
            Box::new(|c, _| c.risk.allowed_tools.push("file_write".into())),
        ),
        (
            "allowed_tools",
            Box::new(|c, _| c.risk.allowed_tools.clear()),
        ),
        (
            "excluded_tools",
            Box::new(|c, _| c.risk.excluded_tools.clear()),
        ),
        (
            "auto_approve",
            Box::new(|c, _| c.risk.auto_approve.push("shell".into())),
        ),
        ("always_ask", Box::new(|c, _| c.risk.always_ask.clear())),
        (
            "shell_env_passthrough",
            Box::new(|c, _| c.risk.shell_env_passthrough.push("AWS_SECRET".into())),
        ),
        (
            "sandbox",
            Box::new(|c, _| c.risk.sandbox = SandboxKind::None),
        ),
        (
            "sandbox",
            Box::new(|c, _| c.risk.sandbox = SandboxKind::Bubblewrap),
        ),
        (
            "block_high_risk_commands",
            Box::new(|c, _| c.risk.block_high_risk_commands = false),
        ),
        (
            "max_actions_per_hour",
            Box::new(|c, _| c.runtime.max_actions_per_hour += 1),
        ),
        (
            "max_cost_per_day_cents",
            Box::new(|c, _| c.runtime.max_cost_per_day_cents += 1),
        ),
        (
            "shell_timeout_secs",
            Box::new(|c, _| c.runtime.shell_timeout_secs += 1),
        ),
        (
            "max_tool_iterations",
            Box::new(|c, _| c.runtime.max_tool_iterations += 1),
        ),
        (
            "turn_timeout_secs",
            Box::new(|c, _| c.runtime.turn_timeout_secs += 1),
        ),
        ("delegation_depth", Box::new(|c, _| c.delegation_depth = 2)),
        // Every remaining field of both profiles is an axis too.
        ("network", Box::new(|c, _| c.risk.network = true.into())),
        (
            "delegation",
            Box::new(|c, _| c.risk.delegation = warren_types::DelegationMode::Allow),
        ),
        (
            "require_approval_for_medium_risk",
            Box::new(|c, _| c.risk.require_approval_for_medium_risk = false),
        ),
        (
            "max_delegation_depth",
            Box::new(|c, _| c.runtime.max_delegation_depth += 1),
        ),
        (
            "max_context_tokens",
            Box::new(|c, _| c.runtime.max_context_tokens = Some(8_001)),
        ),
        (
            "max_context_tokens",
            Box::new(|c, _| c.runtime.max_context_tokens = None),
        ),
        (
            "parallel_tools",
            Box::new(|c, _| c.runtime.parallel_tools = true),
        ),
        (
            "single_tool_rounds",
            Box::new(|c, _| c.runtime.single_tool_rounds = false),
        ),
        (
            "memory_grants",
            Box::new(|c, _| c.memory_grants.push(MemoryGrant::Agent("erin".into()))),
        ),
        (
            "memory_grants",
            Box::new(|c, _| c.memory_grants = vec![MemoryGrant::Agent("bob".into())]),
        ),
        (
            // Categories are exact: one more than the parent's scoped grant escalates.
            "memory_grants",
            Box::new(|c, _| {
                c.memory_grants = vec![MemoryGrant::Scoped {
                    agent: "bob".into(),
                    categories: vec!["core".into(), "daily".into()],
                }];
            }),
        ),
    ];
    for (axis, edit) in edits {
        let mut c = child_of(&parent);
        edit(&mut c, &fx);
        let err = ensure_no_escalation(&c, &parent).expect_err(axis);
        assert_eq!(err.axis, axis, "{err}");
    }
    // Narrowing is fine: fewer commands, more forbidden paths, lower budgets, the parent's memory.
    let mut c = child_of(&parent);
    c.risk.allowed_commands = vec!["ls".into()];
    c.forbidden.push(fx.ws("alice").join("private"));
    c.runtime.max_actions_per_hour = 1;
    c.risk.level = AutonomyLevel::Readonly;
    c.memory_grants = vec![MemoryGrant::Agent("alice".into())];
    c.roots.retain(|r| r.path != fx.ws("dave"));
    assert_eq!(ensure_no_escalation(&c, &parent), Ok(()));
}

/// A fixture where bob's workspace lies inside dave's; alice reads bob and read-writes dave.
/// (Absolute forbidden paths only, so that every agent's list is the same.)
fn nested() -> Fixture {
    let family = FAMILY.replace(r#"["~/secret", "secrets"]"#, r#"["~/secret"]"#);
    assert_ne!(family, FAMILY);
    let mut fx = Fixture::new(&family);
    let inner = fx.ws("dave").join("bob");
    fx.config.agents.get_mut("bob").unwrap().workspace.path = Some(inner.display().to_string());
    fx
}

#[test]
fn a_read_only_sibling_nested_in_a_read_write_root_stays_read_only_for_the_child() {
    let fx = nested();
    let parent = fx.policy("alice");
    let inner = fx.ws("dave").join("bob");
    // The parent: dave's workspace writable, bob's nested one only readable.
    assert!(parent.decide(&fx.ws("dave").join("x"), Access::Write).0);
    assert!(!parent.decide(&inner.join("x"), Access::Write).0);
    assert!(parent.decide(&inner.join("x"), Access::Read).0);
    // dave's own policy: his root contains bob's workspace, so a SubAgent for dave started by
    // alice would write where alice may only read. The prefix test saw dave's root inside
    // alice's read-write grant; the decision test sees bob's workspace.
    let mut child = fx.policy("dave");
    child.delegation_depth = 1;
    assert!(child.decide(&inner.join("x"), Access::Write).0);
    let err = ensure_no_escalation(&child, &parent).unwrap_err();
    assert_eq!(err.axis, "read_write_roots", "{err}");
}

#[test]
fn a_child_inside_the_parent_workspace_is_bounded_by_the_parent_decisions() {
    let fx = nested();
    // With a read grant on bob, dave's deepest root at bob's (nested) workspace is read-only:
    // a child for bob, whose root there is read-write, would write where dave may only read.
    let mut config = fx.config.clone();
    config
        .agents
        .get_mut("dave")
        .unwrap()
        .workspace
        .access
        .insert("bob".into(), warren_types::AccessMode::Read);
    let env = fx.env();
    let parent = SecurityPolicy::for_agent(&config, "dave", &env).unwrap();
    let mut child = SecurityPolicy::for_agent(&config, "bob", &env).unwrap();
    child.delegation_depth = 1;
    let err = ensure_no_escalation(&child, &parent).unwrap_err();
    assert_eq!(err.axis, "read_write_roots", "{err}");
    // Without the grant, dave's own root covers bob's workspace: no escalation.
    let parent = fx.policy("dave");
    let mut child = fx.policy("bob");
    child.delegation_depth = 1;
    assert_eq!(ensure_no_escalation(&child, &parent), Ok(()));
}
