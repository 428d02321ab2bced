//! The reference graph.

use warren_config::{parse_config, references_to, RefKind, RefStrength};

#[test]
fn finds_hard_and_soft_references() {
    let cfg = parse_config(
        r#"
[risk_profiles.p]
[agents.a]
risk_profile = "p"
delegates = ["b"]
[agents.a.workspace]
read_memory_from = ["b"]
[agents.a.workspace.access]
b = "read_write"
[agents.b]
risk_profile = "p"
delegates = ["b"]
[agents.c]
risk_profile = "p"
[cron.on]
agent = "b"
schedule = "*/5 * * * *"
prompt = "x"
[cron.off]
agent = "b"
schedule = "0 0 * * *"
prompt = "y"
enabled = false
"#,
    )
    .unwrap();
    let refs = references_to(&cfg, "b");
    let got: Vec<(&str, RefKind, RefStrength)> = refs
        .iter()
        .map(|r| (r.path.as_str(), r.kind, r.strength))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "agents.a.delegates[0]",
                RefKind::Delegate,
                RefStrength::Soft
            ),
            (
                "agents.a.workspace.access.b",
                RefKind::WorkspaceAccess,
                RefStrength::Soft
            ),
            (
                "agents.a.workspace.read_memory_from[0]",
                RefKind::ReadMemoryFrom,
                RefStrength::Soft
            ),
            ("cron.off.agent", RefKind::CronAgent, RefStrength::Soft),
            ("cron.on.agent", RefKind::CronAgent, RefStrength::Hard),
        ]
    );
    assert!(references_to(&cfg, "c").is_empty());
}
