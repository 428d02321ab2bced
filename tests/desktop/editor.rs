//! The agent settings editor and the Permissions screen: a workspace grant changed in the
//! window is written to config.toml (comments kept) and `policy check` follows it; an invalid
//! edit shows the validator's finding at the field and leaves the file byte for byte; the
//! permission map shows the install's grants and explains a denial.

use crate::harness::{launch, Desktop};
use crate::{block_on, serial};
use std::path::{Path, PathBuf};
use warren_api::Warren;
use warren_config::InstallLayout;

const CONFIG: &str = r#"# Editor test install.
schema_version = 1

# Everyone may act and delegate.
[risk_profiles.full]
level = "full"
allowed_commands = ["*"]
delegation = "allow"

[agents.alice]
risk_profile = "full" # alice keeps this comment
delegates = ["carol"]

[agents.alice.workspace.access]
bob = "read"

[agents.bob]
risk_profile = "full"

[agents.bob.workspace]
read_memory_from = [{ agent = "alice", categories = ["core"] }]

[agents.carol]
risk_profile = "full"

[agents.carol.workspace]
read_memory_from = ["alice"]

[agents.mark]
risk_profile = "full"

[agents.mark.memory]
backend = "markdown"
"#;

fn prepare(home: &Path) {
    std::fs::write(home.join("config.toml"), CONFIG).unwrap();
    for a in ["alice", "bob", "carol", "mark"] {
        std::fs::create_dir_all(home.join("agents").join(a).join("workspace")).unwrap();
    }
}

fn bob_file(home: &Path) -> PathBuf {
    std::fs::canonicalize(home)
        .unwrap()
        .join("agents/bob/workspace/notes.md")
}

/// `warren policy check --agent alice --read|--write <path>` through the same service function
/// the CLI calls: (allowed, rule).
fn check(home: &Path, write: bool, path: &Path) -> (bool, String) {
    let w = Warren::open(InstallLayout::new(home));
    let c = w
        .policy_check("alice", write, path.to_str().unwrap())
        .unwrap();
    (c.allowed, c.rule.code().to_string())
}

/// Chooses `value` in the `<select>` at `css` as a person would (the change event included).
async fn choose(d: &Desktop, css: &str, value: &str) {
    d.wait_for(css).await;
    d.client
        .execute(
            "const [css, v] = arguments; const el = document.querySelector(css);
             el.value = v; el.dispatchEvent(new Event('change', { bubbles: true }));",
            vec![serde_json::json!(css), serde_json::json!(value)],
        )
        .await
        .unwrap_or_else(|e| panic!("choosing {value} in {css}: {e}"));
}

#[test]
fn editor_a_grant_changed_in_the_window_is_saved_and_invalid_edits_save_nothing() {
    let _serial = serial();
    block_on(async {
        let d = launch(prepare).await;
        let config = d.home.join("config.toml");
        let target = bob_file(&d.home);
        assert!(check(&d.home, false, &target).0, "fixture: read");
        assert!(!check(&d.home, true, &target).0, "fixture: no write");

        d.click("[data-testid=agent-row][data-alias=alice] [data-testid=agent-open]")
            .await;
        d.click("[data-testid=agent-settings-toggle]").await;
        let grant =
            "[data-testid=agent-settings-peers] tr[data-peer=bob] [data-testid=setting-grant]";
        choose(&d, grant, "write").await;
        let diff = d
            .wait_text("[data-testid=agent-settings-diff]", |t| {
                t.contains("+ bob = \"write\"")
            })
            .await;
        assert!(diff.contains("- bob = \"read\""), "{diff}");
        assert_eq!(
            std::fs::read_to_string(&config).unwrap(),
            CONFIG,
            "the preview wrote the file"
        );
        d.screenshot("agent-settings-diff").await;
        d.click("[data-testid=agent-settings-save]").await;
        d.wait_for("[data-testid=agent-settings-saved]").await;
        let saved = std::fs::read_to_string(&config).unwrap();
        assert!(saved.contains("bob = \"write\""), "{saved}");
        assert!(!saved.contains("bob = \"read\""), "{saved}");
        for kept in [
            "# Editor test install.",
            "risk_profile = \"full\" # alice keeps this comment",
            "# Everyone may act and delegate.",
        ] {
            assert!(saved.contains(kept), "lost `{kept}`:\n{saved}");
        }
        let (write_ok, _) = check(&d.home, true, &target);
        assert!(
            write_ok,
            "writing bob's workspace is allowed after the save"
        );
        let (read_ok, rule) = check(&d.home, false, &target);
        assert!(!read_ok, "reading bob's workspace is denied after the save");
        assert_eq!(rule, "write_only_grant");
        // The detail panel reloads and shows the new grant.
        let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
        loop {
            let text = d
                .client
                .execute(
                    "return document.querySelector('[data-testid=agent-detail]')?.textContent ?? '';",
                    vec![],
                )
                .await
                .unwrap();
            if text.as_str().is_some_and(|t| t.contains("bob: write")) {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the detail never showed bob: write: {text}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }

        // Profiles and providers are chosen from those that exist (no free text to misspell).
        let options = d
            .client
            .execute(
                "return [...document.querySelectorAll('[data-testid=setting-risk_profile] option')].map(o => o.value);",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(options, serde_json::json!(["full"]));
        // An edit the validator refuses (postgres memory without its URL): the finding is
        // shown, Save is disabled while it stands, and the file stays byte for byte.
        let before = std::fs::read(&config).unwrap();
        choose(&d, "[data-testid=setting-memory_backend]", "postgres").await;
        // What the install lacks for that backend is said beside the backend's field.
        let msg = d
            .wait_text(
                "[data-field=memory_backend] [data-testid=field-error]",
                |t| t.contains("[memory.postgres] url"),
            )
            .await;
        assert!(msg.contains("postgres"), "{msg}");
        let save = d.wait_for("[data-testid=agent-settings-save]").await;
        assert!(
            !save.is_enabled().await.unwrap(),
            "Save offered for an invalid edit"
        );
        d.wait_text("[data-testid=agent-settings-blocked]", |t| {
            t.contains("Fix")
        })
        .await;
        d.screenshot("agent-settings-invalid").await;
        // In a narrow window the form and its finding still fit: nothing runs off the side.
        d.narrow_screenshot("agent-settings-invalid-narrow").await;
        assert_eq!(
            std::fs::read(&config).unwrap(),
            before,
            "a refused edit changed the file"
        );
        choose(&d, "[data-testid=setting-memory_backend]", "sqlite").await;
        let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
        while d
            .client
            .find(fantoccini::Locator::Css(
                "[data-testid=agent-settings-issues]",
            ))
            .await
            .is_ok()
        {
            assert!(std::time::Instant::now() < deadline, "the finding stayed");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }

        // mark keeps Markdown memory: a memory grant on it is disabled, with the reason.
        let mark = "[data-testid=agent-settings-peers] tr[data-peer=mark]";
        let boxed = d
            .wait_for(&format!("{mark} [data-testid=setting-memory]"))
            .await;
        assert!(!boxed.is_enabled().await.unwrap(), "memory grant on mark");
        let reason = d
            .wait_text(
                &format!("{mark} [data-testid=setting-disabled-reason]"),
                |t| !t.is_empty(),
            )
            .await;
        assert!(reason.contains("markdown"), "{reason}");
        // Quoted names are shown as code, not with their backticks.
        assert!(!reason.contains('`'), "{reason}");
        d.close().await;
    });
}

#[test]
fn editor_the_permission_map_shows_the_grants_and_explains_a_denial() {
    let _serial = serial();
    block_on(async {
        let d = launch(prepare).await;
        d.nav("permissions").await;
        let cell = |agent: &str, peer: &str| {
            format!("[data-testid=perm-cell][data-agent={agent}][data-peer={peer}]")
        };
        for (agent, peer, want) in [
            ("alice", "bob", "R"),
            ("alice", "carol", "D"),
            ("bob", "alice", "M[core]"),
            ("carol", "alice", "M"),
            ("bob", "carol", "·"),
            ("alice", "mark", "·"),
        ] {
            let got = d.wait_text(&cell(agent, peer), |t| !t.is_empty()).await;
            assert_eq!(got, want, "{agent} on {peer}");
        }
        // Aliases read as they were written in both headers (the rendered text, after CSS).
        // (`innerText` is the text as shown, after `text-transform`.)
        for css in ["[data-testid=perm-peer]", "[data-testid=perm-agent]"] {
            let shown = d
                .client
                .execute(
                    "return [...document.querySelectorAll(arguments[0])].map(e => e.innerText.trim());",
                    vec![serde_json::json!(css)],
                )
                .await
                .unwrap();
            assert_eq!(
                shown,
                serde_json::json!(["alice", "bob", "carol", "mark"]),
                "{css}"
            );
        }
        d.screenshot("permission-map").await;

        // Why alice may not write bob's workspace.
        d.click(&cell("alice", "bob")).await;
        let write = "[data-testid=perm-aspect][data-aspect=write]";
        let rule = d
            .wait_text(&format!("{write} [data-testid=perm-rule]"), |t| {
                !t.is_empty()
            })
            .await;
        assert_eq!(rule, "read_only_grant");
        let decision = d
            .wait_text(&format!("{write} [data-testid=perm-decision]"), |t| {
                !t.is_empty()
            })
            .await;
        assert_eq!(decision, "denied");
        let grants = d
            .wait_text(&format!("{write} [data-testid=perm-grants]"), |t| {
                !t.is_empty()
            })
            .await;
        assert!(
            grants.contains("agents.alice.workspace.access.bob = \"read\""),
            "{grants}"
        );
        let enforced = d
            .wait_text(&format!("{write} [data-testid=perm-enforced]"), |t| {
                !t.is_empty()
            })
            .await;
        assert!(enforced.contains("race-free opener"), "{enforced}");
        let read = d
            .wait_text(
                "[data-testid=perm-aspect][data-aspect=read] [data-testid=perm-decision]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(read, "allowed");
        d.screenshot("permission-explain").await;

        // The path tester: alice writing into bob's workspace is denied by the same rule.
        choose(&d, "[data-testid=path-test-agent]", "alice").await;
        d.wait_for("[data-testid=path-test-path]")
            .await
            .send_keys(bob_file(&d.home).to_str().unwrap())
            .await
            .unwrap();
        choose(&d, "[data-testid=path-test-access]", "true").await;
        d.click("[data-testid=path-test-submit]").await;
        let result = d
            .wait_text("[data-testid=path-test-result]", |t| !t.is_empty())
            .await;
        assert!(result.starts_with("denied"), "{result}");
        let rule = d
            .wait_text("[data-testid=path-test-rule]", |t| !t.is_empty())
            .await;
        assert_eq!(rule, "read_only_grant");
        // A relative `../bob/…` is not bob's workspace: denied, and the answer names the file
        // in bob's workspace alice may read.
        let name = bob_file(&d.home)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let input = d.wait_for("[data-testid=path-test-path]").await;
        input.clear().await.unwrap();
        input.send_keys(&format!("../bob/{name}")).await.unwrap();
        choose(&d, "[data-testid=path-test-access]", "false").await;
        d.click("[data-testid=path-test-submit]").await;
        let meant = d
            .wait_text("[data-testid=path-test-meant]", |t| !t.is_empty())
            .await;
        assert!(
            meant.contains(bob_file(&d.home).to_str().unwrap()),
            "{meant}"
        );
        d.screenshot("permission-path-meant").await;
        d.close().await;
    });
}

/// The filesystem reach of alice's risk profile, edited from her settings: an allowed root
/// outside every workspace is previewed (the profile is shared, and says so), saved into the
/// profile, and `policy check` then allows alice to read there.
#[test]
fn editor_an_allowed_root_added_from_the_agent_settings_reaches_the_policy() {
    let _serial = serial();
    block_on(async {
        let d = launch(prepare).await;
        let shared = std::fs::canonicalize(&d.home).unwrap().join("shared-docs");
        std::fs::create_dir_all(&shared).unwrap();
        std::fs::write(shared.join("guide.md"), "guide").unwrap();
        let target = shared.join("guide.md");
        assert!(
            !check(&d.home, false, &target).0,
            "fixture: outside the workspace"
        );

        d.click("[data-testid=agent-row][data-alias=alice] [data-testid=agent-open]")
            .await;
        d.click("[data-testid=agent-settings-toggle]").await;
        let shared_with = d
            .wait_text("[data-testid=reach-shared]", |t| t.contains("Shared"))
            .await;
        assert!(shared_with.contains("bob"), "{shared_with}");
        d.wait_for("[data-testid=reach-roots]")
            .await
            .send_keys(shared.to_str().unwrap())
            .await
            .unwrap();
        d.wait_text("[data-testid=reach-diff]", |t| t.contains("allowed_roots"))
            .await;
        assert!(
            !check(&d.home, false, &target).0,
            "the preview changed the policy"
        );
        d.click("[data-testid=reach-save]").await;
        d.wait_for("[data-testid=reach-saved]").await;
        let text = std::fs::read_to_string(d.home.join("config.toml")).unwrap();
        assert!(text.contains("allowed_roots"), "{text}");
        assert!(text.contains("# Everyone may act and delegate."), "{text}");
        let (allowed, rule) = check(&d.home, false, &target);
        assert!(allowed, "rule {rule}");
        d.close().await;
    });
}

/// Figures, printed (no timing is asserted): the permission map of a 50-agent install, the
/// command's round trip from the page and the time from opening the screen to the whole grid.
#[test]
fn figures_the_permission_map_of_fifty_agents() {
    let _serial = serial();
    block_on(async {
        let mut config = String::from(
            "schema_version = 1\n[risk_profiles.full]\nlevel = \"full\"\ndelegation = \"allow\"\n",
        );
        for i in 0..50 {
            let next = (i + 1) % 50;
            config.push_str(&format!(
                "[agents.a{i:02}]\nrisk_profile = \"full\"\ndelegates = [\"a{next:02}\"]\n\
                 [agents.a{i:02}.workspace]\nread_memory_from = [\"a{next:02}\"]\n\
                 [agents.a{i:02}.workspace.access]\na{next:02} = \"read\"\n"
            ));
        }
        let d = launch(|home| {
            std::fs::write(home.join("config.toml"), &config).unwrap();
            for i in 0..50 {
                std::fs::create_dir_all(home.join(format!("agents/a{i:02}/workspace"))).unwrap();
            }
        })
        .await;
        d.wait_for("[data-testid=agents-table]").await;
        let command_ms = d
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 const t0 = performance.now();
                 window.__TAURI_INTERNALS__.invoke('permission_map')
                   .then(() => done(performance.now() - t0), (e) => done(String(e)));",
                vec![],
            )
            .await
            .unwrap();
        let screen_ms = d
            .client
            .execute_async(
                "const done = arguments[arguments.length - 1];
                 // Commands travel as fetches of the IPC protocol: note when the map's answer is in.
                 const inner = window.fetch;
                 let answered = -1;
                 window.fetch = (input, ...rest) => {
                   const p = inner(input, ...rest);
                   if (String(input.url ?? input).includes('permission_map')) {
                     p.then((r) => r.clone().arrayBuffer()).then(() => { answered = performance.now(); });
                   }
                   return p;
                 };
                 const t0 = performance.now();
                 document.querySelector('[data-testid=nav-permissions]').click();
                 const tick = () => {
                   const n = document.querySelectorAll('[data-testid=perm-cell]').length;
                   if (n >= 2450) {
                     // The frame after the cells exist is the one that shows them.
                     requestAnimationFrame(() => {
                       const end = performance.now();
                       window.fetch = inner;
                       done([end - t0, n, answered < 0 ? -1 : end - answered]);
                     });
                   } else if (performance.now() - t0 > 20000) done([-1, n, -1]);
                   else requestAnimationFrame(tick);
                 };
                 tick();",
                vec![],
            )
            .await
            .unwrap();
        let cells = screen_ms[1].as_u64().unwrap_or(0);
        assert!(cells >= 2450, "the grid has {cells} cells");
        eprintln!(
            "figure: permission map, 50 agents: command round trip {:.1} ms; screen opened to {cells} cells shown {:.1} ms, of which after the command answered {:.1} ms",
            command_ms.as_f64().unwrap_or(-1.0),
            screen_ms[0].as_f64().unwrap_or(-1.0),
            screen_ms[2].as_f64().unwrap_or(-1.0)
        );
        d.close().await;
    });
}
