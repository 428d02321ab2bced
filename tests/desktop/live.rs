//! The Live and Approvals screens against a fake OpenAI server: a prompt streams a turn into
//! the timeline, a pending `file_write` waits on its card, and the answer given in the window
//! decides what lands on disk. Meters, the status strip, budget alerts, replay and abort are
//! read from the same window.

use crate::harness::{launch, Desktop};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use serde_json::json;
use std::time::{Duration, Instant};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_types::ProviderFamily;

/// One supervised agent on the fake server; 1,000 USD per million tokens in and 2,000 out, so
/// each default reply (10 in, 5 out) costs 2 cents; the daily budget is `budget_cents`.
fn config(fake: &FakeLlm, budget_cents: u32) -> String {
    format!(
        r#"# Live view test install.
schema_version = 1

[agents.writer]
risk_profile = "sup"
runtime_profile = "tight"
model_provider = "openai.fake"

[risk_profiles.sup]
level = "supervised"

[runtime_profiles.tight]
max_tool_iterations = 4
max_cost_per_day_cents = {budget_cents}

{}input_cost_per_mtok = 1000.0
output_cost_per_mtok = 2000.0
"#,
        fake.config_block("fake")
    )
}

pub(crate) async fn open_live(d: &Desktop, agent: &str) {
    let screen = format!("[data-testid=live-screen][data-agent={agent}]");
    // A click that lands while the list is re-rendered after its first load may be lost:
    // click again until the Live screen shows.
    for _ in 0..5 {
        d.click(&format!("[data-alias={agent}] [data-testid=agent-live]"))
            .await;
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while std::time::Instant::now() < deadline {
            if d.client.find(Locator::Css(&screen)).await.is_ok() {
                d.wait_for("[data-testid=meters]").await;
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    d.wait_for(&screen).await;
}

pub(crate) async fn send(d: &Desktop, prompt: &str) {
    let input = d.wait_for("[data-testid=live-prompt]").await;
    input.send_keys(prompt).await.unwrap();
    // The view clears the prompt once it sent it. A click that lands while the view is still
    // opening the agent's stream (Send not enabled yet) is lost: click again until it is sent.
    let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
    loop {
        let button = d.wait_for("[data-testid=live-send]").await;
        if button.is_enabled().await.unwrap_or(false) {
            let _ = button.click().await;
        }
        for _ in 0..20 {
            let value = d
                .wait_for("[data-testid=live-prompt]")
                .await
                .prop("value")
                .await
                .ok()
                .flatten()
                .unwrap_or_default();
            if value.is_empty() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the prompt `{prompt}` was never sent"
        );
    }
}

/// The text of the last element matching `css`.
async fn last_text(d: &Desktop, css: &str) -> String {
    let all = d.client.find_all(Locator::Css(css)).await.unwrap();
    match all.last() {
        Some(e) => e.text().await.unwrap_or_default(),
        None => String::new(),
    }
}

#[test]
fn approving_a_pending_file_write_in_the_timeline_writes_the_file() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            Reply::text_and_calls(
                "I will write it.",
                [(
                    "file_write",
                    json!({"path": "notes.txt", "content": "hello from the window"}),
                )],
            ),
            Reply::text("I wrote notes.txt for you."),
        ]);
        // Two replies spend 4 cents of a 3-cent budget: the second one crosses it.
        let cfg = config(&fake, 3);
        let d = launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap()).await;
        open_live(&d, "writer").await;
        d.wait_text("[data-testid=meter-iterations]", |t| t == "0 / 4")
            .await;
        send(&d, "write notes.txt").await;

        // The call waits on its card; the agent, the nav badge and the strip say so.
        let card = "[data-testid=tool-card][data-tool=file_write][data-state=waiting]";
        d.wait_for(card).await;
        let args = d
            .wait_text(&format!("{card} [data-testid=tool-args]"), |t| {
                t.contains("notes.txt")
            })
            .await;
        assert!(args.contains("hello from the window"), "arguments: {args}");
        d.wait_text("[data-testid=live-status]", |t| t == "waiting for approval")
            .await;
        d.wait_text("[data-testid=nav-approvals-count]", |t| t == "1")
            .await;
        d.wait_text("[data-testid=strip-pending]", |t| {
            t.contains("1 approval waiting")
        })
        .await;
        let text = d
            .wait_text("[data-testid=text-item]", |t| {
                t.contains("I will write it.")
            })
            .await;
        assert_eq!(text, "I will write it.");
        assert!(
            !d.home.join("agents/writer/workspace/notes.txt").exists(),
            "the file exists before the call was approved"
        );
        d.screenshot("live-approval-pending").await;

        d.click(&format!("{card} [data-testid=approve-once]")).await;
        d.wait_for("[data-testid=turn][data-state=completed]").await;
        let written =
            std::fs::read_to_string(d.home.join("agents/writer/workspace/notes.txt")).unwrap();
        assert_eq!(written, "hello from the window");

        // The card shows the result; the timeline the streamed answer and each request's usage.
        let done = "[data-testid=tool-card][data-tool=file_write][data-state=ok]";
        let decision = d
            .wait_text(&format!("{done} [data-testid=tool-decision]"), |t| {
                !t.is_empty()
            })
            .await;
        assert_eq!(decision, "approved once");
        // A finished card is folded: opened, it shows the result.
        assert!(d
            .client
            .find(Locator::Css(&format!("{done} [data-testid=tool-output]")))
            .await
            .is_err());
        d.click(&format!("{done} [data-testid=tool-toggle]")).await;
        let output = d
            .wait_text(&format!("{done} [data-testid=tool-output]"), |t| {
                !t.is_empty()
            })
            .await;
        assert!(output.contains("notes.txt"), "tool output: {output}");
        assert_eq!(
            last_text(&d, "[data-testid=text-item]").await,
            "I wrote notes.txt for you."
        );
        let usage = d
            .wait_text("[data-testid=turn-usage]", |t| t.contains("20 in"))
            .await;
        assert!(
            usage.contains("2 rounds") && usage.contains("10 out"),
            "{usage}"
        );
        assert!(usage.contains("$0.0400"), "turn cost: {usage}");
        let per_request = last_text(&d, "[data-testid=model-usage]").await;
        assert!(per_request.contains("10 in / 5 out"), "{per_request}");
        d.wait_text("[data-testid=meter-iterations]", |t| t == "2 / 4")
            .await;
        d.wait_text("[data-testid=meter-cost]", |t| t == "$0.04 / $0.03")
            .await;
        d.wait_text("[data-testid=meter-actions]", |t| t.starts_with("1 /"))
            .await;
        d.wait_text("[data-testid=live-status]", |t| t == "idle")
            .await;
        // The budget crossing arrived as a typed event; the strip totals today's spend.
        let alert = d
            .wait_text("[data-testid=budget-alert]", |t| t.contains("writer"))
            .await;
        assert!(alert.contains("daily budget spent"), "alert: {alert}");
        d.wait_text("[data-testid=strip-spend]", |t| {
            t.starts_with("$0.04 of $0.03")
        })
        .await;
        d.wait_text("[data-testid=strip-pending]", |t| {
            t.contains("0 approvals waiting")
        })
        .await;

        // The provider got the tool result in its second request.
        let requests = fake.requests();
        assert_eq!(requests.len(), 2);
        assert!(
            requests[1].body.to_string().contains("notes.txt"),
            "second request: {}",
            requests[1].body
        );

        // The stored turn is listed and replays from sessions.db.
        d.wait_for("[data-testid=history-turn][data-state=completed]")
            .await;
        d.screenshot("live-completed").await;
        d.click("[data-testid=history-turn] [data-testid=replay]")
            .await;
        d.wait_for("[data-testid=replay-banner]").await;
        d.wait_for("[data-testid=tool-card][data-tool=file_write][data-state=ok]")
            .await;
        let replayed = last_text(&d, "[data-testid=text-item]").await;
        assert_eq!(replayed, "I wrote notes.txt for you.");
        d.screenshot("live-replay").await;
        d.close().await;
    });
}

#[test]
fn deny_with_a_reason_writes_nothing_and_the_inbox_and_abort_work() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            Reply::tool_call("file_write", json!({"path": "denied.txt", "content": "no"})),
            Reply::text("Understood, I did not write it."),
            Reply::tool_call("file_write", json!({"path": "inbox.txt", "content": "yes"})),
            Reply::text("Wrote inbox.txt."),
            // A slow answer, aborted from the window.
            Reply::text("one two three four five six seven eight nine ten eleven twelve")
                .frame_delay(Duration::from_millis(400)),
        ]);
        let cfg = config(&fake, 500);
        let d = launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap()).await;
        let workspace = d.home.join("agents/writer/workspace");
        open_live(&d, "writer").await;

        // Deny with a reason: nothing is written and the model is told why.
        send(&d, "write denied.txt").await;
        let card = "[data-testid=tool-card][data-tool=file_write][data-state=waiting]";
        d.wait_for(card).await;
        d.wait_for(&format!("{card} [data-testid=deny-reason]"))
            .await
            .send_keys("not today")
            .await
            .unwrap();
        d.click(&format!("{card} [data-testid=deny]")).await;
        d.wait_for("[data-testid=turn][data-state=completed]").await;
        let decision = d
            .wait_text(
                "[data-testid=tool-card][data-state=denied] [data-testid=tool-decision]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(decision, "denied: not today");
        assert!(!workspace.join("denied.txt").exists());
        let second = fake.requests()[1].body.to_string();
        assert!(
            second.contains("the user denied this call: not today"),
            "second request: {second}"
        );
        d.screenshot("live-denied").await;

        // The next call is answered from the Approvals inbox, for the session.
        send(&d, "write inbox.txt").await;
        d.wait_text("[data-testid=nav-approvals-count]", |t| t == "1")
            .await;
        d.nav("approvals").await;
        let row = "[data-testid=approval-row][data-agent=writer]";
        let text = d.wait_text(row, |t| t.contains("inbox.txt")).await;
        assert!(text.contains("file_write"), "inbox row: {text}");
        // What it does, why it asks (the tool's name as code), how long it has waited, and
        // its arguments indented.
        let card = d
            .client
            .execute(
                "const r = document.querySelector(arguments[0]);
                 return [r.querySelector('[data-testid=approval-summary]')?.textContent,
                         r.querySelector('[data-testid=approval-reason] code')?.textContent,
                         r.querySelector('[data-testid=approval-reason]')?.textContent,
                         r.querySelector('time')?.textContent,
                         r.querySelector('[data-testid=approval-arguments]')?.textContent];",
                vec![serde_json::json!(row)],
            )
            .await
            .unwrap();
        assert_eq!(card[0], "path: inbox.txt", "{card}");
        assert_eq!(card[1], "file_write", "{card}");
        assert_eq!(
            card[2], "Needs approval: file_write is not in auto_approve",
            "{card}"
        );
        assert!(
            card[3].as_str().is_some_and(|t| t.starts_with("waiting")),
            "{card}"
        );
        assert!(
            card[4]
                .as_str()
                .is_some_and(|t| t.contains("\n  \"path\": \"inbox.txt\"")),
            "{card}"
        );
        d.screenshot("approvals-inbox").await;
        d.narrow_screenshot("approvals-inbox-narrow").await;
        d.click(&format!("{row} [data-testid=approve-session]"))
            .await;
        d.wait_for("[data-testid=approvals-empty]").await;
        let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
        while !workspace.join("inbox.txt").exists() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(
            std::fs::read_to_string(workspace.join("inbox.txt")).unwrap(),
            "yes"
        );

        // Back on the agent's live view: the second turn finished; a third is aborted.
        d.nav("live").await;
        d.wait_for("[data-testid=tool-card][data-tool=file_write][data-state=ok]")
            .await;
        send(&d, "count slowly").await;
        d.wait_text("[data-testid=live-status]", |t| t == "working")
            .await;
        d.wait_for("[data-testid=text-item]").await;
        d.click("[data-testid=live-abort]").await;
        d.wait_for("[data-testid=turn][data-state=cancelled]").await;
        d.wait_text("[data-testid=live-status]", |t| t == "idle")
            .await;
        let partial = last_text(&d, "[data-testid=text-item]").await;
        assert!(
            !partial.contains("twelve"),
            "the turn streamed to its end although it was aborted: {partial}"
        );
        d.wait_for("[data-testid=history-turn][data-state=cancelled]")
            .await;
        d.screenshot("live-aborted").await;
        d.close().await;
    });
}

/// The issue's figure: the timeline keeps up with a fast provider (3,000 words streamed
/// unpaced, one frame each) without losing a frame; frames are counted in the DOM.
#[test]
fn figures_the_timeline_keeps_up_with_a_fast_stream() {
    let _serial = serial();
    block_on_mt(async {
        const WORDS: usize = 3000;
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        let text: Vec<String> = (0..WORDS).map(|i| format!("w{i}")).collect();
        fake.push(Reply::text(&text.join(" ")));
        let cfg = config(&fake, 500);
        let d = launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap()).await;
        open_live(&d, "writer").await;
        let started = std::time::Instant::now();
        send(&d, "stream fast").await;
        d.wait_for("[data-testid=turn][data-state=completed]").await;
        let elapsed = started.elapsed();
        let screen = d.wait_for("[data-testid=live-screen]").await;
        let last: usize = screen
            .attr("data-last-seq")
            .await
            .unwrap()
            .unwrap_or_default()
            .parse()
            .unwrap();
        let lost = screen.attr("data-lost").await.unwrap().unwrap_or_default();
        // turn_started, model_request, one text_delta per word, usage, turn_completed.
        assert_eq!(last, WORDS + 4, "frames applied");
        assert_eq!(lost, "0", "frames lost");
        let shown = last_text(&d, "[data-testid=text-item]").await;
        assert_eq!(shown.split_whitespace().count(), WORDS);
        assert!(
            shown.ends_with(&format!("w{}", WORDS - 1)),
            "{}",
            &shown[shown.len() - 40..]
        );
        eprintln!(
            "figure: timeline: {} frames from prompt to completed turn in {} ms ({:.0} frames/s), 0 lost, {} words in the DOM",
            last,
            elapsed.as_millis(),
            last as f64 / elapsed.as_secs_f64(),
            WORDS
        );
        d.close().await;
    });
}

/// Copies a directory tree (an install, to start a second app on what the first one left).
pub(crate) fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn quitting_during_a_turn_records_it_as_cancelled() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        let words: Vec<String> = (0..200).map(|i| format!("w{i}")).collect();
        fake.push(Reply::text(&words.join(" ")).frame_delay(Duration::from_millis(100)));
        let cfg = config(&fake, 500);
        // No tray host: closing the window quits the app.
        let d = crate::harness::launch_with(crate::harness::Bus::Private, |home| {
            std::fs::write(home.join("config.toml"), &cfg).unwrap();
        })
        .await;
        open_live(&d, "writer").await;
        send(&d, "a long answer").await;
        d.wait_text("[data-testid=live-status]", |t| t == "working")
            .await;
        d.wait_for("[data-testid=text-item]").await;
        let pid = d.backend_pid().expect("backend process not found");
        let _ = d
            .client
            .execute(
                "window.__TAURI_INTERNALS__.invoke('plugin:window|close', { label: 'main' }); return true;",
                vec![],
            )
            .await;
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while crate::harness::rss_kib(pid).is_some() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            crate::harness::rss_kib(pid).is_none(),
            "the app kept running after its window was closed"
        );
        let kept = tempfile::tempdir().unwrap();
        copy_tree(&d.home, kept.path());
        d.close().await;

        // A second start on the same install lists the turn as cancelled, not running.
        let d = launch(|home| copy_tree(kept.path(), home)).await;
        open_live(&d, "writer").await;
        let row = d
            .wait_text("[data-testid=history-turn]", |t| !t.is_empty())
            .await;
        assert!(row.contains("cancelled"), "stored turn: {row}");
        d.close().await;
    });
}

/// Calls a command of the app from its (possibly hidden) window, without waiting for it.
pub(crate) async fn invoke(d: &Desktop, command: &str, args: serde_json::Value) {
    d.client
        .execute(
            &format!(
                "window.__TAURI_INTERNALS__.invoke('{command}', arguments[0]).catch(() => {{}}); return true;"
            ),
            vec![args],
        )
        .await
        .unwrap();
}

/// Waits until `n` notifications arrived.
pub(crate) async fn notified(d: &Desktop, n: usize, what: &str) -> Vec<(String, String)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let got = d.notifications.lock().unwrap().clone();
        if got.len() >= n {
            return got;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no notification for {what}; got {got:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// With the window closed to the tray, an approval waiting and a failed turn are notified
/// through the desktop's notification server (once each); with notifications turned off in
/// Settings nothing more is sent.
#[test]
fn approvals_and_failures_are_notified_while_the_window_is_hidden() {
    use crate::harness::{launch_with, Bus};
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            Reply::tool_call("file_write", json!({"path": "n.txt", "content": "x"})),
            Reply::error(400, "bad request"),
            Reply::error(400, "bad request"),
        ]);
        let cfg = config(&fake, 1000);
        let d = launch_with(Bus::PrivateWithNotifications, |home| {
            std::fs::write(home.join("config.toml"), &cfg).unwrap();
        })
        .await;
        d.wait_for("[data-alias=writer]").await;
        // Close to the tray (a tray host is on the bus): the window is hidden, the app runs.
        invoke(&d, "plugin:window|close", json!({"label": "main"})).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(d.notifications.lock().unwrap().is_empty());

        invoke(
            &d,
            "send_prompt",
            json!({"req": {"agent": "writer", "session": null, "prompt": "write n.txt"}}),
        )
        .await;
        let got = notified(&d, 1, "the waiting approval").await;
        assert_eq!(got[0].0, "writer is waiting for approval", "{got:?}");
        assert!(got[0].1.starts_with("file_write: "), "{got:?}");
        assert!(!d.home.join("agents/writer/workspace/n.txt").exists());

        // Deny it; the next request fails: one notification for the failure.
        let pending = fake.request_count();
        assert_eq!(pending, 1);
        let (turn_id, call_id) = {
            let r = d
                .client
                .execute_async(
                    "const done = arguments[arguments.length - 1]; window.__TAURI_INTERNALS__.invoke('pending_approvals').then((p) => done([p[0].turn_id, p[0].call_id]), (e) => done(String(e)));",
                    vec![],
                )
                .await
                .unwrap();
            (
                r[0].as_str().unwrap().to_string(),
                r[1].as_str().unwrap().to_string(),
            )
        };
        invoke(
            &d,
            "answer_approval",
            json!({"turnId": turn_id, "callId": call_id, "decision": "deny", "message": "no"}),
        )
        .await;
        let got = notified(&d, 2, "the failed turn").await;
        assert_eq!(got[1].0, "writer's turn failed", "{got:?}");

        // Notifications off: the next failure is not notified.
        invoke(&d, "set_notifications", json!({"on": false})).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let settings: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.home.join("data/desktop.json")).unwrap())
                .unwrap();
        assert_eq!(settings["notifications"], false);
        invoke(
            &d,
            "send_prompt",
            json!({"req": {"agent": "writer", "session": null, "prompt": "again"}}),
        )
        .await;
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while fake.request_count() < 3 {
            assert!(
                std::time::Instant::now() < deadline,
                "the third turn never ran"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(d.notifications.lock().unwrap().len(), 2);
        d.close().await;
    });
}

/// `lead` may delegate to `helper` (same full-autonomy profile; helper's workspace is inside
/// lead's grants), both on the fake server.
fn delegation_config(fake: &FakeLlm) -> String {
    format!(
        r#"# Delegation test install.
schema_version = 1

[agents.lead]
risk_profile = "lead"
model_provider = "openai.fake"
delegates = ["helper"]
[agents.lead.workspace.access]
helper = "read_write"

[agents.helper]
risk_profile = "lead"
model_provider = "openai.fake"

[risk_profiles.lead]
level = "full"
allowed_commands = ["*"]
delegation = "allow"

{}"#,
        fake.config_block("fake")
    )
}

#[test]
fn a_delegated_child_turn_shows_nested_under_the_delegate_card_live_and_in_replay() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            Reply::tool_call(
                "delegate",
                json!({"agent": "helper", "prompt": "find the answer"}),
            ),
            // The helper calls a tool, then streams its answer slowly enough to be seen running.
            Reply::tool_call("file_read", json!({"path": "answer.txt"}))
                .delay(Duration::from_millis(1500)),
            Reply::text("helper found 42").delay(Duration::from_millis(1500)),
            Reply::text("lead reports 42"),
        ]);
        let cfg = delegation_config(&fake);
        let d = launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap()).await;
        open_live(&d, "lead").await;
        send(&d, "ask helper").await;

        // Live: the child turn runs under lead's delegate card, then ends with its text.
        let card = "[data-testid=tool-card][data-tool=delegate]";
        let child = format!("{card} [data-testid=sub-turn][data-agent=helper]");
        d.wait_for(&format!("{child}[data-state=running]")).await;
        let state = d
            .wait_text(&format!("{child} [data-testid=sub-turn-state]"), |t| {
                !t.is_empty()
            })
            .await;
        assert_eq!(state.to_lowercase(), "running");
        d.wait_for(&format!(
            "{child} [data-testid=sub-tool][data-tool=file_read]"
        ))
        .await;
        let text = d
            .wait_text(&format!("{child} [data-testid=sub-turn-text]"), |t| {
                t.contains("42")
            })
            .await;
        assert_eq!(text, "helper found 42");
        d.wait_for(&format!("{child}[data-state=completed]")).await;
        // The child's tool call is a card like the parent's (its read fails here: the card is
        // open on its arguments and error in words, and a click folds it).
        let sub = format!("{child} [data-testid=sub-tool][data-tool=file_read]");
        d.wait_for(&format!("{sub}[data-state=failed]")).await;
        let args = d
            .wait_text(&format!("{sub} [data-testid=tool-args]"), |t| {
                t.contains("\"path\"")
            })
            .await;
        assert!(args.starts_with('{'), "{args}");
        d.wait_for(&format!("{sub} [data-testid=tool-error]")).await;
        d.click(&format!("{sub} [data-testid=tool-toggle]")).await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while d
            .client
            .find(Locator::Css(&format!("{sub} [data-testid=tool-args]")))
            .await
            .is_ok()
        {
            assert!(
                Instant::now() < deadline,
                "the sub-agent's card did not fold"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        d.wait_for("[data-testid=turn][data-state=completed]").await;
        d.wait_for(&format!("{card}[data-state=ok]")).await;
        assert_eq!(
            d.client
                .find_all(Locator::Css("[data-testid=turn]"))
                .await
                .unwrap()
                .len(),
            1,
            "the child turn is not a turn of its own in lead's timeline"
        );
        assert_eq!(
            last_text(&d, "[data-testid=turn] > ol > [data-testid=text-item]").await,
            "lead reports 42"
        );
        d.screenshot("live-delegation").await;

        // Replay of the stored turn nests the stored child turn the same way.
        d.wait_for("[data-testid=history-turn][data-state=completed]")
            .await;
        d.click("[data-testid=history-turn] [data-testid=replay]")
            .await;
        d.wait_for("[data-testid=replay-banner]").await;
        let replayed = d
            .wait_text(
                &format!("{child}[data-state=completed] [data-testid=sub-turn-text]"),
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(replayed, "helper found 42");
        d.wait_for(&format!(
            "{child} [data-testid=sub-tool][data-tool=file_read]"
        ))
        .await;

        // The link opens helper's own Live view, where the turn is a top-level one.
        d.click(&format!("{child} [data-testid=sub-turn-open]"))
            .await;
        d.wait_for("[data-testid=live-screen][data-agent=helper]")
            .await;
        let own = d
            .wait_text("[data-testid=text-item]", |t| t.contains("42"))
            .await;
        assert_eq!(own, "helper found 42");
        d.close().await;
    });
}

/// The value of the prompt box.
async fn prompt_value(d: &Desktop) -> String {
    d.wait_for("[data-testid=live-prompt]")
        .await
        .prop("value")
        .await
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Live follows the agent it shows: renamed in the window's Agents screen, then from another
/// process (the CLI's own API), it shows the new alias with its turns and the typed prompt
/// kept, and Send runs a turn under the new alias; a prompt refused (the agent paused) is given
/// back; deleted from another process, it says so and refuses to send.
#[test]
fn live_follows_renames_and_a_delete_of_the_agent_shown_and_keeps_the_prompt() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.script([
            Reply::text("First answer."),
            Reply::text("Answered as author."),
            Reply::text("Answered as editor."),
        ]);
        let cfg = config(&fake, 500);
        let d = launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap()).await;
        let other = warren_api::Warren::open(warren_config::InstallLayout::new(&d.home));
        open_live(&d, "writer").await;
        send(&d, "hello").await;
        d.wait_text("[data-testid=text-item]", |t| t == "First answer.")
            .await;
        d.wait_text("[data-testid=live-status]", |t| t == "idle")
            .await;

        // Renamed on the Agents screen while a prompt is half typed.
        d.wait_for("[data-testid=live-prompt]")
            .await
            .send_keys("a draft for later")
            .await
            .unwrap();
        d.nav("agents").await;
        d.click("[data-alias=writer] [data-testid=agent-rename]")
            .await;
        let input = d.wait_for("[data-testid=rename-input]").await;
        input.clear().await.unwrap();
        input.send_keys("author").await.unwrap();
        d.wait_text("[data-testid=rename-plan-workspace]", |t| {
            t.ends_with("agents/author/workspace")
        })
        .await;
        d.click("[data-testid=rename-submit]").await;
        d.wait_text("[data-testid=lifecycle-result][data-what=rename]", |t| {
            t.contains("author")
        })
        .await;
        d.nav("live").await;
        d.wait_for("[data-testid=live-screen][data-agent=author]")
            .await;
        let picked = d
            .wait_for("[data-testid=live-agent]")
            .await
            .prop("value")
            .await
            .unwrap()
            .unwrap_or_default();
        assert_eq!(picked, "author");
        assert_eq!(prompt_value(&d).await, "a draft for later");
        let placeholder = d
            .wait_for("[data-testid=live-prompt]")
            .await
            .attr("placeholder")
            .await
            .unwrap()
            .unwrap_or_default();
        assert!(placeholder.starts_with("Ask author"), "{placeholder}");
        // Its earlier turn came with it.
        d.wait_for("[data-testid=history-turn][data-state=completed]")
            .await;
        let button = d.wait_for("[data-testid=live-send]").await;
        button.click().await.unwrap();
        d.wait_text("[data-testid=text-item]", |t| t == "Answered as author.")
            .await;
        assert!(d
            .client
            .find(Locator::Css("[data-testid=live-error]"))
            .await
            .is_err());

        // Renamed by another process while Live shows it: the screen follows.
        d.wait_text("[data-testid=live-status]", |t| t == "idle")
            .await;
        d.wait_for("[data-testid=live-prompt]")
            .await
            .send_keys("typed before the rename")
            .await
            .unwrap();
        let renamed = other.rename_agent("author", "editor", false, false).await;
        assert!(renamed.as_ref().is_ok_and(|o| o.ok), "{renamed:?}");
        d.wait_for("[data-testid=live-screen][data-agent=editor]")
            .await;
        assert_eq!(prompt_value(&d).await, "typed before the rename");
        d.screenshot("live-after-rename").await;

        // Refused (paused elsewhere): the error is shown and the prompt given back.
        other.set_agent_paused("editor", true).await.unwrap();
        d.click("[data-testid=live-send]").await;
        let err = d
            .wait_text("[data-testid=live-error]", |t| !t.is_empty())
            .await;
        assert!(err.contains("paused"), "{err}");
        assert_eq!(prompt_value(&d).await, "typed before the rename");
        other.set_agent_paused("editor", false).await.unwrap();
        d.click("[data-testid=live-send]").await;
        d.wait_text("[data-testid=text-item]", |t| t == "Answered as editor.")
            .await;
        d.wait_text("[data-testid=live-status]", |t| t == "idle")
            .await;
        assert_eq!(fake.requests().len(), 3);
        assert!(d.home.join("agents/editor/workspace").is_dir());

        // Deleted by another process: the screen says so and sends nothing.
        d.wait_for("[data-testid=live-prompt]")
            .await
            .send_keys("anyone there?")
            .await
            .unwrap();
        let deleted = other.delete_agent("editor", false, false).await;
        assert!(deleted.as_ref().is_ok_and(|o| o.ok), "{deleted:?}");
        let gone = d
            .wait_text("[data-testid=live-gone]", |t| !t.is_empty())
            .await;
        assert!(gone.contains("editor was deleted"), "{gone}");
        let send = d.wait_for("[data-testid=live-send]").await;
        assert!(!send.is_enabled().await.unwrap());
        d.wait_text("[data-testid=live-status]", |t| t == "deleted")
            .await;
        assert_eq!(prompt_value(&d).await, "anyone there?");
        d.screenshot("live-agent-deleted").await;
        assert_eq!(fake.requests().len(), 3, "a turn ran after the delete");
        d.close().await;
    });
}
