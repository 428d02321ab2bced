//! Autonomy levels and approvals.

use crate::fixture::Fixture;
use warren_policy::{Gate, RefusalRule, Risk};

fn policy(profile: &str) -> (Fixture, warren_policy::SecurityPolicy) {
    let text = format!("[risk_profiles.p]\n{profile}\n[agents.a]\nrisk_profile = \"p\"\n");
    let fx = Fixture::new(&text);
    let p = fx.policy("a");
    (fx, p)
}

#[test]
fn readonly_refuses_side_effects() {
    let (_fx, p) = policy("level = \"readonly\"\nauto_approve = [\"file_read\", \"shell\"]");
    assert_eq!(p.gate("file_read", false, None), Gate::Run);
    for tool in ["file_write", "file_edit", "shell"] {
        assert!(
            matches!(
                p.gate(tool, true, Some(Risk::Low)),
                Gate::Refuse {
                    rule: RefusalRule::ReadonlyAutonomy,
                    ..
                }
            ),
            "{tool}"
        );
    }
}

#[test]
fn supervised_asks_as_configured() {
    let (_fx, p) = policy(
        "auto_approve = [\"file_read\", \"shell\", \"file_write\"]\nalways_ask = [\"file_write\"]",
    );
    assert_eq!(p.gate("file_read", false, None), Gate::Run);
    assert!(
        matches!(p.gate("file_write", true, None), Gate::Ask { .. }),
        "always_ask wins"
    );
    assert!(
        matches!(p.gate("file_edit", true, None), Gate::Ask { .. }),
        "not in auto_approve"
    );
    assert_eq!(p.gate("shell", true, Some(Risk::Low)), Gate::Run);
    assert!(matches!(
        p.gate("shell", true, Some(Risk::Medium)),
        Gate::Ask { .. }
    ));
    assert!(matches!(
        p.gate("shell", true, Some(Risk::High)),
        Gate::Refuse {
            rule: RefusalRule::HighRiskBlocked,
            ..
        }
    ));
    let (_fx, p) = policy("auto_approve = [\"shell\"]\nrequire_approval_for_medium_risk = false\nblock_high_risk_commands = false");
    assert_eq!(p.gate("shell", true, Some(Risk::Medium)), Gate::Run);
    assert!(matches!(
        p.gate("shell", true, Some(Risk::High)),
        Gate::Ask { .. }
    ));
}

#[test]
fn full_never_asks_but_blocks_and_filters_tools() {
    let (_fx, p) =
        policy("level = \"full\"\nexcluded_tools = [\"shell\"]\nalways_ask = [\"file_write\"]");
    assert_eq!(p.gate("file_write", true, None), Gate::Run);
    assert!(matches!(
        p.gate("shell", true, Some(Risk::Low)),
        Gate::Refuse {
            rule: RefusalRule::ToolNotAllowed,
            ..
        }
    ));
    let (_fx, p) = policy("level = \"full\"\nallowed_tools = [\"file_read\"]");
    assert!(p.tool_offered("file_read"));
    assert!(!p.tool_offered("file_write"));
    let (_fx, p) = policy("level = \"full\"");
    assert!(matches!(
        p.gate("shell", true, Some(Risk::High)),
        Gate::Refuse {
            rule: RefusalRule::HighRiskBlocked,
            ..
        }
    ));
}
