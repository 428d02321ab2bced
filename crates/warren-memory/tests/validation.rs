//! The real config validator (warren-config) rejects what the memory layer cannot serve.

use warren_config::parse_config;

fn issues(text: &str) -> Vec<(String, String)> {
    match parse_config(text) {
        Ok(_) => vec![],
        Err(e) => e.issues.into_iter().map(|i| (i.path, i.message)).collect(),
    }
}

#[test]
fn cross_backend_grants_are_rejected() {
    let found = issues(
        r#"
        [risk_profiles.p]
        [agents.a]
        risk_profile = "p"
        [agents.a.workspace]
        read_memory_from = ["b"]
        [agents.b]
        risk_profile = "p"
        [agents.b.memory]
        backend = "postgres"
        "#,
    );
    assert!(
        found.iter().any(
            |(p, m)| p.starts_with("agents.a.workspace.read_memory_from")
                && m.contains("cross-backend")
        ),
        "{found:?}"
    );
}

#[test]
fn markdown_category_grants_are_rejected_on_either_side() {
    for (a_backend, b_backend) in [("markdown", "markdown"), ("sqlite", "markdown")] {
        let found = issues(&format!(
            r#"
            [risk_profiles.p]
            [agents.a]
            risk_profile = "p"
            [agents.a.memory]
            backend = "{a_backend}"
            [agents.a.workspace]
            read_memory_from = [{{ agent = "b", categories = ["core"] }}]
            [agents.b]
            risk_profile = "p"
            [agents.b.memory]
            backend = "{b_backend}"
            "#
        ));
        assert!(
            found.iter().any(
                |(p, m)| p.starts_with("agents.a.workspace.read_memory_from")
                    && m.contains("markdown")
            ),
            "{a_backend}/{b_backend}: {found:?}"
        );
    }
}

#[test]
fn whole_agent_markdown_grants_and_same_backend_grants_pass() {
    let ok = issues(
        r#"
        [memory]
        backend = "markdown"
        [risk_profiles.p]
        [agents.a]
        risk_profile = "p"
        [agents.a.workspace]
        read_memory_from = ["b"]
        [agents.b]
        risk_profile = "p"
        "#,
    );
    assert!(ok.is_empty(), "{ok:?}");
}
