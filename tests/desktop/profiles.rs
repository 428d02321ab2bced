//! The Profiles screen: a runtime profile edited in the window is written to config.toml with
//! its comments intact; an invalid value shows the validator's message and saves nothing; a
//! profile still in use cannot be deleted, an unused one can; a risk profile's network goes by
//! domain and back, a bad pattern's message beside its list.

use crate::harness::{launch, Desktop};
use crate::{block_on, serial};
use fantoccini::Locator;
use std::path::Path;
use std::time::Duration;

const CONFIG: &str = r#"# Profiles test install.
schema_version = 1

[agents.alice]
risk_profile = "balanced"
runtime_profile = "standard"

[agents.bob]
risk_profile = "balanced"

# Asks before anything with side effects.
[risk_profiles.balanced]
level = "supervised"

# Nothing but reading.
[risk_profiles.spare]
level = "readonly"

# Ten rounds is plenty for chat.
[runtime_profiles.standard]
max_tool_iterations = 10 # keep in sync with the docs
"#;

#[test]
fn editing_a_runtime_profile_keeps_comments_and_invalid_values_save_nothing() {
    let _serial = serial();
    block_on(async {
        let d = launch(|home| std::fs::write(home.join("config.toml"), CONFIG).unwrap()).await;
        let config = d.home.join("config.toml");
        d.nav("profiles").await;
        let used = d
            .wait_text(
                "[data-testid=profile-item][data-kind=risk][data-name=balanced] [data-testid=profile-used-by]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(used, "used by 2 agents");
        let used = d
            .wait_text(
                "[data-testid=profile-item][data-kind=runtime][data-name=standard] [data-testid=profile-used-by]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(used, "used by 1 agent");

        // Turn on single-tool rounds: the diff shows the one added line, saving writes it.
        d.click("[data-testid=profile-item][data-kind=runtime][data-name=standard] [data-testid=profile-open]")
            .await;
        d.click("[data-testid=field-single_tool_rounds]").await;
        let diff = d
            .wait_text("[data-testid=profile-diff]", |t| {
                t.contains("+ single_tool_rounds = true")
            })
            .await;
        assert!(!diff.contains("- "), "nothing is removed: {diff}");
        d.screenshot("profiles-diff").await;
        assert_eq!(
            std::fs::read_to_string(&config).unwrap(),
            CONFIG,
            "the preview wrote the file"
        );
        d.click("[data-testid=profile-save]").await;
        d.wait_text("[data-testid=profile-saved]", |t| t.contains("standard"))
            .await;
        let saved = std::fs::read_to_string(&config).unwrap();
        assert!(saved.contains("single_tool_rounds = true"), "{saved}");
        for comment in [
            "# Profiles test install.",
            "# Ten rounds is plenty for chat.",
            "max_tool_iterations = 10 # keep in sync with the docs",
            "# Asks before anything with side effects.",
        ] {
            assert!(saved.contains(comment), "lost `{comment}`:\n{saved}");
        }

        // Zero rounds: the validator's message shows beside the field, Save is disabled
        // while it stands, and the form does not move under the pointer when it appears.
        let field = d.wait_for("[data-testid=field-max_tool_iterations]").await;
        assert_eq!(
            field.attr("type").await.unwrap().as_deref(),
            Some("number"),
            "a number is typed into a number input"
        );
        let save_top = || async {
            d.client
                .execute(
                    "return document.querySelector('[data-testid=profile-save]').getBoundingClientRect().top;",
                    vec![],
                )
                .await
                .unwrap()
                .as_f64()
                .unwrap()
        };
        let top_before = save_top().await;
        field.clear().await.unwrap();
        field.send_keys("0").await.unwrap();
        let msg = d
            .wait_text(
                "[data-field=max_tool_iterations] [data-testid=field-error]",
                |t| t.contains("must be at least 1"),
            )
            .await;
        assert!(msg.contains("max_tool_iterations"), "{msg}");
        let save = d.wait_for("[data-testid=profile-save]").await;
        assert!(
            !save.is_enabled().await.unwrap(),
            "Save is offered for an invalid edit"
        );
        d.wait_text("[data-testid=profile-blocked]", |t| t.contains("Fix"))
            .await;
        assert!(
            d.client
                .find(Locator::Css("[data-testid=profile-issues]"))
                .await
                .is_err(),
            "the finding is listed away from its field"
        );
        assert_eq!(
            save_top().await,
            top_before,
            "the Save button moved when the message appeared"
        );
        d.screenshot("profiles-invalid").await;
        // Enter in the field submits the form: still nothing is saved.
        field.send_keys("\u{E007}").await.unwrap();
        // Not a whole number: the form says so itself, before asking the validator.
        field.clear().await.unwrap();
        field.send_keys("1.5").await.unwrap();
        d.wait_text(
            "[data-field=max_tool_iterations] [data-testid=field-error]",
            |t| t.contains("Enter a whole number (0 or more)"),
        )
        .await;
        assert!(!save.is_enabled().await.unwrap());
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        assert_eq!(
            std::fs::read_to_string(&config).unwrap(),
            saved,
            "an invalid edit changed the file"
        );

        // A new runtime profile: written with one explicit key; a taken name is refused.
        d.wait_for("[data-testid=profile-new-name]")
            .await
            .send_keys("fast")
            .await
            .unwrap();
        d.click("[data-testid=profile-new-submit]").await;
        let used = d
            .wait_text(
                "[data-testid=profile-item][data-kind=runtime][data-name=fast] [data-testid=profile-used-by]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(used, "used by 0 agents");
        // The invalid edit of `standard` is still unsaved: opening the new profile asks first.
        d.click("[data-testid=profile-discard]").await;
        d.wait_for("[data-testid=profile-form][data-name=fast]")
            .await;
        let with_fast = std::fs::read_to_string(&config).unwrap();
        assert!(
            with_fast.contains("[runtime_profiles.fast]\nmax_tool_iterations = 10"),
            "{with_fast}"
        );
        assert!(with_fast.contains("# Ten rounds is plenty for chat."));
        d.wait_for("[data-testid=profile-new-name]")
            .await
            .send_keys("standard")
            .await
            .unwrap();
        d.click("[data-testid=profile-new-submit]").await;
        d.wait_text("[data-testid=profile-error]", |t| {
            t.contains("already_exists")
        })
        .await;
        assert_eq!(std::fs::read_to_string(&config).unwrap(), with_fast);

        // A profile in use cannot be deleted: the refusal shows beside it, not in the editor
        // of the profile that is open.
        let balanced = "[data-testid=profile-item][data-kind=risk][data-name=balanced]";
        d.click(&format!("{balanced} [data-testid=profile-delete]"))
            .await;
        d.click(&format!("{balanced} [data-testid=profile-confirm-delete]"))
            .await;
        let err = d
            .wait_text(
                &format!("{balanced} [data-testid=profile-delete-error]"),
                |t| t.contains("used by"),
            )
            .await;
        assert!(err.contains("alice, bob"), "{err}");
        assert!(d
            .client
            .find(Locator::Css("[data-testid=profile-error]"))
            .await
            .is_err());
        assert!(std::fs::read_to_string(&config)
            .unwrap()
            .contains("[risk_profiles.balanced]"));

        // An unused one asks first; Cancel keeps it, Delete removes it (comments and all),
        // and Undo puts it back as it was.
        let spare = "[data-testid=profile-item][data-kind=risk][data-name=spare]";
        d.click(&format!("{spare} [data-testid=profile-delete]"))
            .await;
        let ask = d
            .wait_text(&format!("{spare} [data-testid=profile-confirm]"), |t| {
                !t.is_empty()
            })
            .await;
        assert!(ask.contains("Delete the risk profile spare?"), "{ask}");
        d.click(&format!("{spare} [data-testid=profile-confirm-cancel]"))
            .await;
        assert_eq!(std::fs::read_to_string(&config).unwrap(), with_fast);
        d.click(&format!("{spare} [data-testid=profile-delete]"))
            .await;
        d.screenshot("profiles-delete-confirm").await;
        d.click(&format!("{spare} [data-testid=profile-confirm-delete]"))
            .await;
        let notice = d
            .wait_text("[data-testid=profile-removed]", |t| t.contains("spare"))
            .await;
        assert!(
            notice.contains("Deleted the risk profile spare"),
            "{notice}"
        );
        let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
        while d.client.find(Locator::Css(spare)).await.is_ok() {
            assert!(
                std::time::Instant::now() < deadline,
                "spare is still listed"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let after = std::fs::read_to_string(&config).unwrap();
        assert!(!after.contains("[risk_profiles.spare]"), "{after}");
        assert!(!after.contains("# Nothing but reading."), "{after}");
        assert!(
            after.contains("# Ten rounds is plenty for chat."),
            "{after}"
        );
        d.screenshot("profiles-deleted-undo").await;
        d.click("[data-testid=profile-undo]").await;
        d.wait_for("[data-testid=profile-form][data-name=spare]")
            .await;
        let back = std::fs::read_to_string(&config).unwrap();
        assert!(
            back.contains("# Nothing but reading.\n[risk_profiles.spare]\nlevel = \"readonly\""),
            "{back}"
        );
        assert!(d
            .client
            .find(Locator::Css("[data-testid=profile-removed]"))
            .await
            .is_err());
        d.close().await;
    });
}

/// Every key a risk profile has is in its form (`network` too), and opening another profile
/// with unsaved edits asks first: Keep editing keeps them, Discard opens the other one.
#[test]
fn the_risk_form_sets_network_and_switching_profiles_asks_before_dropping_edits() {
    let _serial = serial();
    block_on(async {
        let d = launch(|home| std::fs::write(home.join("config.toml"), CONFIG).unwrap()).await;
        let config = d.home.join("config.toml");
        d.nav("profiles").await;
        d.click("[data-testid=profile-item][data-kind=risk][data-name=spare] [data-testid=profile-open]")
            .await;
        d.click("[data-testid=network-on]").await;
        d.wait_text("[data-testid=profile-diff]", |t| {
            t.contains("+ network = true")
        })
        .await;
        // Another profile while the edit is unsaved: asked, and the edit is still there.
        d.click("[data-testid=profile-item][data-kind=risk][data-name=balanced] [data-testid=profile-open]")
            .await;
        let ask = d
            .wait_text("[data-testid=profile-unsaved]", |t| !t.is_empty())
            .await;
        assert!(ask.contains("spare has 1 unsaved change"), "{ask}");
        d.screenshot("profiles-unsaved").await;
        d.click("[data-testid=profile-keep]").await;
        d.wait_for("[data-testid=profile-form][data-name=spare]")
            .await;
        let checked = d
            .wait_for("[data-testid=network-on]")
            .await
            .prop("checked")
            .await
            .unwrap();
        assert_eq!(checked.as_deref(), Some("true"));
        d.click("[data-testid=profile-save]").await;
        d.wait_text("[data-testid=profile-saved]", |t| t.contains("spare"))
            .await;
        let saved = std::fs::read_to_string(&config).unwrap();
        assert!(
            saved.contains("[risk_profiles.spare]\nlevel = \"readonly\"\nnetwork = true"),
            "{saved}"
        );
        // Saved: switching no longer asks. An unsaved edit dropped on purpose is not written.
        d.click("[data-testid=network-off]").await;
        d.click("[data-testid=profile-item][data-kind=risk][data-name=balanced] [data-testid=profile-open]")
            .await;
        d.click("[data-testid=profile-discard]").await;
        d.wait_for("[data-testid=profile-form][data-name=balanced]")
            .await;
        assert_eq!(std::fs::read_to_string(&config).unwrap(), saved);
        d.click("[data-testid=profile-item][data-kind=risk][data-name=spare] [data-testid=profile-open]")
            .await;
        d.wait_for("[data-testid=profile-form][data-name=spare]")
            .await;
        assert!(d
            .client
            .find(Locator::Css("[data-testid=profile-unsaved]"))
            .await
            .is_err());
        d.close().await;
    });
}

/// Types `text` into the textarea `css` as the user would (one line at a time), replacing what
/// it held.
async fn type_lines(d: &Desktop, css: &str, lines: &[&str]) {
    let field = d.wait_for(css).await;
    field.clear().await.unwrap();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            field.send_keys("\u{E007}").await.unwrap();
        }
        field.send_keys(line).await.unwrap();
    }
}

/// The network of a risk profile goes by domain in the window: a bad pattern's message shows
/// beside "Allowed domains" with Save disabled; a good list is written as a table (comments
/// kept), and Off replaces the table with `network = false`.
#[test]
fn a_risk_profile_s_network_goes_by_domain_and_back() {
    let _serial = serial();
    block_on(async {
        let d = launch(|home| std::fs::write(home.join("config.toml"), CONFIG).unwrap()).await;
        let config = d.home.join("config.toml");
        d.nav("profiles").await;
        d.click("[data-testid=profile-item][data-kind=risk][data-name=balanced] [data-testid=profile-open]")
            .await;
        let off = d.wait_for("[data-testid=network-off]").await;
        assert_eq!(off.prop("checked").await.unwrap().as_deref(), Some("true"));
        assert!(
            d.client
                .find(Locator::Css("[data-testid=field-network-allow]"))
                .await
                .is_err(),
            "the lists show only for By domain"
        );
        d.click("[data-testid=network-domains]").await;
        // An empty list: the validator says so beside it.
        let msg = d
            .wait_text(
                "[data-field='network.allow'] [data-testid=field-error]",
                |t| t.contains("lists no domain"),
            )
            .await;
        assert!(msg.contains("network = false"), "{msg}");

        // A URL is no pattern: its message beside the list, Save disabled, nothing written.
        type_lines(
            &d,
            "[data-testid=field-network-allow]",
            &["crates.io", "https://pypi.org/simple"],
        )
        .await;
        let msg = d
            .wait_text(
                "[data-field='network.allow'] [data-testid=field-error]",
                |t| t.contains("is a URL"),
            )
            .await;
        assert!(
            msg.contains("\"https://pypi.org/simple\" is a URL; write the host alone (`pypi.org`)"),
            "{msg}"
        );
        let save = d.wait_for("[data-testid=profile-save]").await;
        assert!(
            !save.is_enabled().await.unwrap(),
            "Save is offered for a bad pattern"
        );
        assert!(
            d.client
                .find(Locator::Css(
                    "[data-field=network] > .field-msg [data-testid=field-error]"
                ))
                .await
                .is_err(),
            "the finding is shown beside the choice too"
        );
        d.client
            .execute(
                "document.querySelector('[data-testid=field-network]').scrollIntoView(); return true;",
                vec![],
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        d.screenshot("profiles-network-invalid").await;
        assert_eq!(std::fs::read_to_string(&config).unwrap(), CONFIG);

        // Fixed, with private addresses allowed: the diff shows the table.
        type_lines(
            &d,
            "[data-testid=field-network-allow]",
            &["crates.io", "pypi.org"],
        )
        .await;
        type_lines(&d, "[data-testid=field-network-deny]", &["*.evil.example"]).await;
        d.click("[data-testid=field-network-allow_private]").await;
        let line = r#"+ network = { allow = ["crates.io", "pypi.org"], deny = ["*.evil.example"], allow_private = true }"#;
        d.wait_text("[data-testid=profile-diff]", |t| t.contains(line))
            .await;
        d.wait_for("[data-testid=profile-save]:not([disabled])")
            .await;
        // The picture for docs/desktop.md: the choice, its lists and the diff.
        d.client
            .execute(
                "document.querySelector('[data-testid=field-network]').scrollIntoView(); return true;",
                vec![],
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(800)).await;
        let shot = d.screenshot("profiles-network").await;
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/docs/profiles-network.png");
        std::fs::copy(&shot, &docs).unwrap_or_else(|e| panic!("{}: {e}", docs.display()));
        d.click("[data-testid=profile-save]").await;
        d.wait_text("[data-testid=profile-saved]", |t| t.contains("balanced"))
            .await;
        let saved = std::fs::read_to_string(&config).unwrap();
        assert_eq!(
            saved,
            CONFIG.replace(
                "[risk_profiles.balanced]\nlevel = \"supervised\"\n",
                "[risk_profiles.balanced]\nlevel = \"supervised\"\nnetwork = { allow = [\"crates.io\", \"pypi.org\"], deny = [\"*.evil.example\"], allow_private = true }\n"
            )
        );
        // Opened again, the form reads the table back.
        let domains = d.wait_for("[data-testid=network-domains]").await;
        assert_eq!(
            domains.prop("checked").await.unwrap().as_deref(),
            Some("true")
        );
        let allow = d
            .wait_for("[data-testid=field-network-allow]")
            .await
            .prop("value")
            .await
            .unwrap();
        assert_eq!(allow.as_deref(), Some("crates.io\npypi.org"));

        // Off: the table is replaced by the switch, cleanly.
        d.click("[data-testid=network-off]").await;
        d.wait_text("[data-testid=profile-diff]", |t| {
            t.contains("+ network = false")
        })
        .await;
        d.click("[data-testid=profile-save]").await;
        d.wait_for("[data-testid=network-off]:checked").await;
        let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
        let back = loop {
            let text = std::fs::read_to_string(&config).unwrap();
            if text.contains("network = false") || std::time::Instant::now() > deadline {
                break text;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert_eq!(
            back,
            CONFIG.replace(
                "[risk_profiles.balanced]\nlevel = \"supervised\"\n",
                "[risk_profiles.balanced]\nlevel = \"supervised\"\nnetwork = false\n"
            )
        );
        d.close().await;
    });
}
