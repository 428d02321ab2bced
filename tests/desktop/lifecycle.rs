//! Rename, delete (plan → confirm → archive) and restore from the Agents screen, checked on
//! disk: the config file, the workspace folders and the archive with its manifest.

use crate::harness::{launch, Desktop};
use crate::{block_on, serial};
use fantoccini::Locator;

const TWO_AGENTS: &str = r#"# Lifecycle test install.
schema_version = 1

# The writer drafts text.
[agents.alice]
risk_profile = "balanced"

[agents.bob]
risk_profile = "balanced"
delegates = ["alice"]

[agents.bob.workspace.access]
alice = "read"

[risk_profiles.balanced]
level = "supervised"
delegation = "allow"
"#;

async fn listed(d: &Desktop) -> Vec<String> {
    d.wait_for("[data-testid=agents-table]").await;
    let mut out = Vec::new();
    for row in d
        .client
        .find_all(Locator::Css("[data-testid=agent-row]"))
        .await
        .unwrap()
    {
        out.push(row.attr("data-alias").await.unwrap().unwrap_or_default());
    }
    out
}

async fn wait_listed(d: &Desktop, want: &[&str]) {
    let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
    loop {
        let now = listed(d).await;
        if now == want {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "agents listed: {now:?}, want {want:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

async fn type_alias(d: &Desktop, css: &str, text: &str) {
    let input = d.wait_for(css).await;
    input.clear().await.unwrap();
    input.send_keys(text).await.unwrap();
}

#[test]
fn rename_delete_and_restore_from_the_agents_screen() {
    let _serial = serial();
    block_on(async {
        let d = launch(|home| {
            std::fs::write(home.join("config.toml"), TWO_AGENTS).unwrap();
            let ws = home.join("agents/alice/workspace");
            std::fs::create_dir_all(&ws).unwrap();
            std::fs::write(ws.join("draft.md"), "first draft").unwrap();
        })
        .await;
        let config = d.home.join("config.toml");
        wait_listed(&d, &["alice", "bob"]).await;

        // Rename: the new alias is validated inline before anything runs.
        d.click("[data-alias=alice] [data-testid=agent-rename]")
            .await;
        type_alias(&d, "[data-testid=rename-input]", "bad__x").await;
        let msg = d
            .wait_text("[data-testid=rename-error]", |t| t.contains("__"))
            .await;
        assert!(msg.contains("`__`"), "{msg}");
        type_alias(&d, "[data-testid=rename-input]", "bob").await;
        d.wait_text("[data-testid=rename-error]", |t| {
            t.contains("already exists")
        })
        .await;
        let submit = d.wait_for("[data-testid=rename-submit]").await;
        assert!(!submit.is_enabled().await.unwrap());
        d.screenshot("lifecycle-rename-invalid").await;
        type_alias(&d, "[data-testid=rename-input]", "writer").await;
        d.wait_text("[data-testid=rename-error]", str::is_empty)
            .await;
        // The plan shows before the rename is confirmed, and changes nothing.
        let refs = d
            .wait_text("[data-testid=rename-plan-references]", |t| {
                t.contains("agents.bob.delegates")
            })
            .await;
        assert!(refs.contains("agents.bob.workspace.access"), "plan: {refs}");
        let to = d
            .wait_text("[data-testid=rename-plan-workspace]", |t| !t.is_empty())
            .await;
        assert!(to.ends_with("agents/writer/workspace"), "plan: {to}");
        assert!(d.home.join("agents/alice/workspace").exists());
        assert!(std::fs::read_to_string(&config)
            .unwrap()
            .contains("[agents.alice]"));
        d.click("[data-testid=rename-submit]").await;
        let done = d
            .wait_text("[data-testid=lifecycle-result][data-what=rename]", |t| {
                t.contains("writer")
            })
            .await;
        assert!(done.contains("Renamed alice to writer"), "{done}");
        wait_listed(&d, &["bob", "writer"]).await;
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(text.contains("[agents.writer]") && !text.contains("[agents.alice]"));
        assert!(text.contains("delegates = [\"writer\"]"), "{text}");
        assert!(
            text.contains("# The writer drafts text."),
            "comment lost:\n{text}"
        );
        assert_eq!(
            std::fs::read_to_string(d.home.join("agents/writer/workspace/draft.md")).unwrap(),
            "first draft"
        );
        assert!(!d.home.join("agents/alice/workspace").exists());

        // Delete: the plan first (references to scrub, where the archive goes), then confirm.
        d.click("[data-alias=writer] [data-testid=agent-delete]")
            .await;
        let refs = d
            .wait_text("[data-testid=plan-references]", |t| !t.is_empty())
            .await;
        assert!(refs.contains("agents.bob.delegates"), "plan: {refs}");
        assert!(refs.contains("agents.bob.workspace.access"), "plan: {refs}");
        // Each entry's kind in words, not its config spelling.
        assert!(refs.contains("(delegation)"), "plan: {refs}");
        assert!(refs.contains("(workspace access)"), "plan: {refs}");
        assert!(!refs.contains("workspace_access"), "plan: {refs}");
        let planned = d
            .wait_text("[data-testid=plan-workspace-to]", |t| !t.is_empty())
            .await;
        assert!(planned.contains("_deleted"), "workspace goes to {planned}");
        assert!(
            d.home.join("agents/writer/workspace").exists(),
            "the plan alone changed something"
        );
        d.screenshot("lifecycle-delete-plan").await;
        d.narrow_screenshot("lifecycle-delete-plan-narrow").await;
        d.click("[data-testid=delete-confirm]").await;
        let archive = d
            .wait_text("[data-testid=result-archive]", |t| !t.is_empty())
            .await;
        wait_listed(&d, &["bob"]).await;
        let archive = std::path::PathBuf::from(archive);
        assert!(
            archive.starts_with(d.home.join("data/agents/_deleted")),
            "{}",
            archive.display()
        );
        let manifest: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(archive.join("manifest.json")).unwrap())
                .unwrap();
        assert_eq!(manifest["alias"], "writer");
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(!text.contains("[agents.writer]"), "{text}");
        assert!(
            !text.contains("writer"),
            "a reference was left behind:\n{text}"
        );
        let row = "[data-testid=archive-row][data-alias=writer]";
        d.wait_for(row).await;
        // The grants bob held on writer are listed with the archive (folded), to come back.
        d.click(&format!("{row} [data-testid=archive-grants] summary"))
            .await;
        let grants = d
            .wait_text(&format!("{row} [data-testid=archive-grants]"), |t| {
                t.contains("agents.bob")
            })
            .await;
        assert!(
            grants.contains("agents.bob.delegates includes `writer`"),
            "{grants}"
        );
        assert!(
            grants.contains("agents.bob.workspace.access.writer"),
            "{grants}"
        );
        d.screenshot("lifecycle-deleted").await;

        // Restore under a new alias.
        type_alias(&d, &format!("{row} [data-testid=restore-as]"), "restored").await;
        d.click(&format!("{row} [data-testid=restore]")).await;
        // The plan first: what comes back, where, and the grants put back; nothing changes yet.
        let before_restore = std::fs::read_to_string(&config).unwrap();
        let planned = d
            .wait_text("[data-testid=restore-plan-workspace]", |t| !t.is_empty())
            .await;
        assert!(planned.ends_with("agents/restored/workspace"), "{planned}");
        let refs = d
            .wait_text("[data-testid=restore-plan-references]", |t| {
                t.contains("agents.bob")
            })
            .await;
        assert!(refs.contains("agents.bob.delegates"), "{refs}");
        assert!(
            refs.contains("agents.bob.workspace.access.restored"),
            "{refs}"
        );
        let title = d
            .wait_text("[data-testid=restore-plan] h2", |t| !t.is_empty())
            .await;
        assert_eq!(title, "Restore writer as restored?");
        d.screenshot("lifecycle-restore-plan").await;
        d.narrow_screenshot("lifecycle-restore-plan-narrow").await;
        assert_eq!(std::fs::read_to_string(&config).unwrap(), before_restore);
        assert!(!d.home.join("agents/restored").exists());
        d.click("[data-testid=restore-confirm]").await;
        d.wait_text("[data-testid=lifecycle-result][data-what=restore]", |t| {
            t.contains("restored")
        })
        .await;
        wait_listed(&d, &["bob", "restored"]).await;
        let text = std::fs::read_to_string(&config).unwrap();
        assert!(text.contains("[agents.restored]"), "{text}");
        // bob's grants came back, on the agent's new name.
        assert!(text.contains("delegates = [\"restored\"]"), "{text}");
        assert!(text.contains("restored = \"read\""), "{text}");
        assert_eq!(
            std::fs::read_to_string(d.home.join("agents/restored/workspace/draft.md")).unwrap(),
            "first draft"
        );
        d.screenshot("lifecycle-restored").await;
        d.close().await;
    });
}
