//! Live reads like chat: a Markdown answer from the fake OpenAI server is rendered (heading,
//! list, table, highlighted code with Copy) with nothing of the agent's text run as HTML; tool
//! calls are foldable cards; and the Chats list starts new sessions and continues old ones, as
//! the sessions database (read through the app's own commands) records them.

use crate::harness::Desktop;
use crate::live::{open_live, send};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use serde_json::{json, Value};
use std::time::Duration;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_types::ProviderFamily;

/// One agent with full autonomy (its file tools need no approval) on the fake server.
fn config(fake: &FakeLlm) -> String {
    format!(
        r#"# Chat test install.
schema_version = 1

[agents.writer]
risk_profile = "full"
model_provider = "openai.fake"

[risk_profiles.full]
level = "full"

{}"#,
        fake.config_block("fake")
    )
}

const CODE: &str = "fn main() {\n    println!(\"hi\");\n}";

fn answer() -> String {
    format!(
        "# Release plan\n\nSteps, in **order**:\n\n- build the bundle\n- run `cargo test`\n\n\
         | Crate | Lines |\n|-------|------:|\n| warren-api | 1200 |\n| warren-cli | 300 |\n\n\
         ```rust\n{CODE}\n```\n\n\
         <img src=x onerror=\"window.__pwned=1\">\n\n\
         [details](javascript:window.__pwned=2) and <svg onload=\"window.__pwned=3\"></svg>\n"
    )
}

/// Calls a command of the app and returns its answer (or `{error}`).
async fn call(d: &Desktop, command: &str, args: Value) -> Value {
    d.client
        .execute_async(
            &format!(
                "const done = arguments[arguments.length - 1];
                 window.__TAURI_INTERNALS__.invoke('{command}', arguments[0])
                   .then((r) => done(r), (e) => done({{ error: e }}));"
            ),
            vec![args],
        )
        .await
        .unwrap_or_else(|e| panic!("{command}: {e}"))
}

async fn count(d: &Desktop, css: &str) -> usize {
    d.client
        .find_all(Locator::Css(css))
        .await
        .map(|v| v.len())
        .unwrap_or(0)
}

/// Waits until `css` matches exactly `n` elements.
async fn wait_count(d: &Desktop, css: &str, n: usize) {
    let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
    loop {
        let got = count(d, css).await;
        if got == n {
            return;
        }
        if std::time::Instant::now() > deadline {
            d.screenshot("chat-timeout").await;
            panic!("`{css}`: {got} elements, expected {n}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until the text content of `css` satisfies `ok` (WebKitWebDriver answers "" for the
/// rendered text of an element inside a `<button>`).
async fn wait_content(d: &Desktop, css: &str, ok: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
    let mut last = String::new();
    loop {
        if let Ok(e) = d.client.find(Locator::Css(css)).await {
            last = e
                .prop("textContent")
                .await
                .ok()
                .flatten()
                .unwrap_or_default();
            if ok(&last) {
                return last;
            }
        }
        if std::time::Instant::now() > deadline {
            d.screenshot("chat-timeout").await;
            panic!("`{css}` never showed the expected text; last: {last:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn a_markdown_answer_is_rendered_sanitised_and_tool_calls_are_foldable_cards() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            Reply::tool_call(
                "file_write",
                json!({"path": "plan.md", "content": "# Plan\n- one\n"}),
            ),
            Reply::tool_call("file_read", json!({"path": "missing.txt"})),
            Reply::text(&answer()),
        ]);
        let cfg = config(&fake);
        let d =
            crate::harness::launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap())
                .await;
        open_live(&d, "writer").await;
        send(&d, "plan the release").await;
        d.wait_for("[data-testid=turn][data-state=completed]").await;

        // The Markdown answer: heading, list, table, highlighted Rust with a Copy button.
        let md = "[data-testid=text-item]";
        d.wait_text(&format!("{md} h1"), |t| t == "Release plan")
            .await;
        assert_eq!(count(&d, &format!("{md} ul > li")).await, 2);
        d.wait_text(&format!("{md} ul > li code"), |t| t == "cargo test")
            .await;
        d.wait_text(&format!("{md} strong"), |t| t == "order").await;
        assert_eq!(
            count(&d, &format!("{md} .md-table > table tbody tr")).await,
            2
        );
        d.wait_text(&format!("{md} td[align=right]"), |t| t == "1200")
            .await;
        let code = format!("{md} .md-code pre code.language-rust");
        assert_eq!(d.wait_text(&code, |t| !t.is_empty()).await, CODE);
        assert!(
            count(&d, &format!("{code} span[class^=hljs-]")).await >= 2,
            "the Rust code has no highlight spans"
        );

        // Nothing of the agent's HTML runs or loads: no image, no svg, no link to follow, no
        // handler ran; the raw HTML is there as text.
        assert_eq!(
            count(&d, &format!("{md} img, {md} svg, {md} a[href]")).await,
            0
        );
        let pwned = d
            .client
            .execute("return typeof window.__pwned;", vec![])
            .await
            .unwrap();
        assert_eq!(pwned, json!("undefined"));
        let text = d.wait_text(md, |t| t.contains("onerror")).await;
        assert!(
            text.contains("<img src=x onerror=\"window.__pwned=1\">"),
            "{text}"
        );
        assert!(text.contains("details"), "{text}");

        // Copy: the button says so once the code is on the clipboard.
        d.click(&format!("{md} [data-testid=md-copy]")).await;
        d.wait_text(&format!("{md} [data-testid=md-copy]"), |t| t == "Copied")
            .await;
        let pasted = d
            .client
            .execute_async(
                "const done = arguments[0];
                 navigator.clipboard.readText().then(done, (e) => done('unreadable: ' + e));",
                vec![],
            )
            .await
            .unwrap();
        match pasted.as_str() {
            Some(t) if t.starts_with("unreadable: ") => {
                eprintln!("the clipboard cannot be read under WebDriver here ({t}); the button state was checked");
            }
            other => assert_eq!(other, Some(CODE), "the clipboard holds the code"),
        }

        // The write that succeeded is a folded card with a summary; opened, it shows the
        // arguments pretty-printed. The failed read is open with its error code apart.
        let ok = "[data-testid=tool-card][data-tool=file_write][data-state=ok]";
        wait_content(&d, &format!("{ok} [data-testid=tool-summary]"), |t| {
            t == "path: plan.md"
        })
        .await;
        wait_content(&d, &format!("{ok} [data-testid=tool-state]"), |t| t == "ok").await;
        assert_eq!(count(&d, &format!("{ok} [data-testid=tool-args]")).await, 0);
        d.click(&format!("{ok} [data-testid=tool-toggle]")).await;
        let args = d
            .wait_text(&format!("{ok} [data-testid=tool-args]"), |t| !t.is_empty())
            .await;
        assert_eq!(
            args,
            "{\n  \"content\": \"# Plan\\n- one\\n\",\n  \"path\": \"plan.md\"\n}"
        );
        assert_eq!(
            std::fs::read_to_string(d.home.join("agents/writer/workspace/plan.md")).unwrap(),
            "# Plan\n- one\n"
        );
        let failed = "[data-testid=tool-card][data-tool=file_read][data-state=failed]";
        let code = d
            .wait_text(&format!("{failed} [data-testid=tool-error] code"), |t| {
                !t.is_empty()
            })
            .await;
        let error = d
            .wait_text(&format!("{failed} [data-testid=tool-error]"), |t| {
                !t.is_empty()
            })
            .await;
        assert!(
            code.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "{code}"
        );
        assert!(
            error.len() > code.len() + 1 && !error.contains('{'),
            "the error in words: {error}"
        );
        d.wait_for(&format!("{failed} [data-testid=tool-args]"))
            .await;

        // The picture for docs/desktop.md: the cards folded as they are once done (the failed
        // one open), the answer in view.
        d.click(&format!("{ok} [data-testid=tool-toggle]")).await;
        wait_count(&d, &format!("{ok} [data-testid=tool-args]"), 0).await;
        d.client
            .execute(
                "document.querySelector('[data-testid=turn-trigger]').scrollIntoView(); return true;",
                vec![],
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let shot = d.screenshot("live-markdown").await;
        let docs =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("ui/docs/live-markdown.png");
        std::fs::copy(&shot, &docs).unwrap_or_else(|e| panic!("{}: {e}", docs.display()));
        d.close().await;
    });
}

#[test]
fn new_chat_starts_a_session_and_picking_one_shows_and_continues_it() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            Reply::text("first answer"),
            Reply::text("second answer"),
            Reply::text("third answer"),
            Reply::text("fourth answer"),
            Reply::text("fifth answer"),
        ]);
        for i in 0..20 {
            fake.push(Reply::text(&format!("more answer {i}")));
        }
        let cfg = config(&fake);
        let d =
            crate::harness::launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap())
                .await;
        open_live(&d, "writer").await;
        let done = "[data-testid=turn][data-state=completed]";
        send(&d, "first prompt").await;
        wait_count(&d, done, 1).await;
        send(&d, "second prompt").await;
        wait_count(&d, done, 2).await;
        wait_count(&d, "[data-testid=session-item]", 1).await;
        d.wait_for("[data-testid=session-item][data-turns='2'][data-current=true]")
            .await;

        // New chat: an empty conversation, and the next prompt starts a new session.
        d.click("[data-testid=session-new]").await;
        d.wait_text("[data-testid=timeline-empty]", |t| t.contains("new chat"))
            .await;
        d.wait_text("[data-testid=prompt-hint]", |t| {
            t.contains("starts a new chat")
        })
        .await;
        send(&d, "third prompt").await;
        wait_count(&d, done, 1).await;
        wait_count(&d, "[data-testid=session-item]", 2).await;
        let newest = "[data-testid=session-item]:first-child";
        wait_content(&d, &format!("{newest} [data-testid=session-title]"), |t| {
            t == "third prompt"
        })
        .await;

        // The sessions database, through the app's own commands: two sessions, the newest
        // holding only the third turn, which is the one the window shows.
        let sessions = call(&d, "agent_sessions", json!({"agent": "writer"})).await;
        let rows: Vec<(String, u64)> = sessions
            .as_array()
            .unwrap_or_else(|| panic!("{sessions}"))
            .iter()
            .map(|s| {
                (
                    s["title"].as_str().unwrap().to_string(),
                    s["turns"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("third prompt".to_string(), 1),
                ("first prompt".to_string(), 2)
            ]
        );
        let (new_id, old_id) = (
            sessions[0]["id"].as_str().unwrap().to_string(),
            sessions[1]["id"].as_str().unwrap().to_string(),
        );
        let third = call(&d, "session_turns", json!({"sessionId": new_id})).await;
        assert_eq!(third.as_array().unwrap().len(), 1, "{third}");
        let shown = d.wait_for(done).await;
        assert_eq!(
            shown.attr("data-turn-id").await.unwrap().as_deref(),
            third[0]["id"].as_str()
        );
        assert_eq!(
            shown.attr("data-session-id").await.unwrap().as_deref(),
            Some(new_id.as_str())
        );
        d.wait_for(&format!(
            "[data-testid=session-item][data-session-id='{new_id}'][data-current=true]"
        ))
        .await;

        // Picking the first session shows its two turns and the next prompt continues it.
        d.click(&format!(
            "[data-testid=session-item][data-session-id='{old_id}'] button"
        ))
        .await;
        wait_count(&d, done, 2).await;
        d.wait_text(
            "[data-testid=turn]:first-child [data-testid=turn-trigger]",
            |t| t.contains("first prompt"),
        )
        .await;
        // Enter sends (the hint says so).
        d.wait_text("[data-testid=prompt-hint]", |t| {
            t.starts_with("Enter sends")
        })
        .await;
        d.wait_for("[data-testid=live-prompt]")
            .await
            .send_keys("fourth prompt\u{E007}")
            .await
            .unwrap();
        wait_count(&d, done, 3).await;
        assert_eq!(
            d.wait_for("[data-testid=live-prompt]")
                .await
                .prop("value")
                .await
                .unwrap()
                .unwrap_or_default(),
            ""
        );
        d.wait_text(
            "[data-testid=turn]:last-child [data-testid=text-item]",
            |t| t == "fourth answer",
        )
        .await;
        let turns = call(&d, "session_turns", json!({"sessionId": old_id})).await;
        let prompts: Vec<&str> = turns
            .as_array()
            .unwrap_or_else(|| panic!("{turns}"))
            .iter()
            .map(|t| t["prompt"].as_str().unwrap())
            .collect();
        assert_eq!(prompts, ["first prompt", "second prompt", "fourth prompt"]);
        d.wait_for(&format!(
            "[data-testid=session-item][data-session-id='{old_id}'][data-turns='3']"
        ))
        .await;
        d.screenshot("live-sessions").await;

        // After a restart the window's stream is empty: picking the first session shows its
        // three turns as sessions.db stored them, and the next prompt continues it.
        let kept = tempfile::tempdir().unwrap();
        crate::live::copy_tree(&d.home, kept.path());
        d.close().await;
        let d = crate::harness::launch(|home| crate::live::copy_tree(kept.path(), home)).await;
        open_live(&d, "writer").await;
        d.wait_for("[data-testid=timeline-empty]").await;
        wait_count(&d, "[data-testid=session-item]", 2).await;
        d.click(&format!(
            "[data-testid=session-item][data-session-id='{old_id}'] button"
        ))
        .await;
        wait_count(&d, done, 3).await;
        d.wait_text(
            "[data-testid=turn]:last-child [data-testid=text-item]",
            |t| t == "fourth answer",
        )
        .await;
        send(&d, "fifth prompt").await;
        wait_count(&d, done, 4).await;
        let turns = call(&d, "session_turns", json!({"sessionId": old_id})).await;
        assert_eq!(turns.as_array().unwrap().len(), 4, "{turns}");
        d.wait_text(
            "[data-testid=turn]:last-child [data-testid=text-item]",
            |t| t == "fifth answer",
        )
        .await;
        d.screenshot("live-sessions-restarted").await;

        // Many sessions: the list shows the newest 20 and offers the rest.
        for i in 0..19 {
            let r = d.send_prompt("writer", &format!("chat number {i}")).await;
            assert_eq!(r["status"], "completed", "{r}");
        }
        send(&d, "sixth prompt").await;
        // The list settles first: the sixth turn completed and its session moved to the top
        // (a click while the list reorders can land on a moving item instead).
        wait_count(&d, done, 5).await;
        d.wait_for(&format!(
            "[data-testid=session-item]:first-child[data-session-id='{old_id}'][data-turns='5']"
        ))
        .await;
        wait_count(&d, "[data-testid=session-item]", 20).await;
        wait_content(&d, "[data-testid=session-more]", |t| t == "Show all 21").await;
        // Clicked in the page, not at screen coordinates: the button sits at the window's lower
        // edge, where the timeline's own scrolling after the answer can move it under a pointer
        // click (seen once in CI: the click missed and the list stayed at 20).
        d.client
            .execute(
                "document.querySelector('[data-testid=session-more]').click(); return true;",
                vec![],
            )
            .await
            .unwrap();
        wait_count(&d, "[data-testid=session-item]", 21).await;
        d.close().await;
    });
}

#[test]
fn highlighted_code_follows_the_dark_theme() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.push(Reply::text(&answer()));
        let cfg = config(&fake);
        let d = crate::harness::launch_with_env(
            crate::harness::Bus::None,
            &[("GTK_THEME", "Adwaita:dark")],
            |home| std::fs::write(home.join("config.toml"), &cfg).unwrap(),
        )
        .await;
        open_live(&d, "writer").await;
        send(&d, "plan the release").await;
        d.wait_for("[data-testid=turn][data-state=completed]").await;
        d.wait_for("[data-testid=text-item] .hljs-keyword").await;
        let colours = d
            .client
            .execute(
                "const k = document.querySelector('[data-testid=text-item] .hljs-keyword');
                 const code = k.closest('.md-code');
                 return [matchMedia('(prefers-color-scheme: dark)').matches,
                         getComputedStyle(k).color, getComputedStyle(code).backgroundColor];",
                vec![],
            )
            .await
            .unwrap();
        d.client
            .execute(
                "document.querySelector('[data-testid=text-item] .md-code').scrollIntoView(); return true;",
                vec![],
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        d.screenshot("live-markdown-dark").await;
        d.close().await;
        assert_eq!(colours[0], true, "{colours}");
        // The dark theme's keyword colour on the dark background (not the light theme's).
        assert_eq!(colours[1], "rgb(215, 164, 232)", "{colours}");
        assert_eq!(colours[2], "rgb(27, 28, 26)", "{colours}");
    });
}
