//! The Usage and Logs screens: after a turn on the fake provider, the usage row of that agent
//! and day shows its tokens and cost (today's card and the chart's bar agree, and a second
//! agent's turn adds up and is compared by agent), and the log line the turn wrote (with its `agent` field)
//! shows in the logs view and goes away under another agent's or a stricter level's filter.

use crate::harness::{launch, Desktop};
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use std::time::{Duration, Instant};
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_types::ProviderFamily;

/// `writer` on the fake server at 1,000 USD per million tokens in and 2,000 out: the default
/// reply (10 in, 5 out) costs 2 cents. `other` never runs.
fn config(fake: &FakeLlm) -> String {
    format!(
        r#"# Activity test install.
schema_version = 1

[agents.writer]
risk_profile = "ro"
model_provider = "openai.fake"

[agents.other]
risk_profile = "ro"
model_provider = "openai.fake"

[risk_profiles.ro]
level = "readonly"

{}input_cost_per_mtok = 1000.0
output_cost_per_mtok = 2000.0
"#,
        fake.config_block("fake")
    )
}

/// Runs a prompt once the window is up: the turn's result.
async fn prompt(d: &Desktop, agent: &str, text: &str) -> serde_json::Value {
    d.wait_for("[data-testid=nav-usage]").await;
    d.send_prompt(agent, text).await
}

/// The agent of every log line shown, read in one script (no stale elements mid-render).
async fn log_agents(d: &Desktop) -> Vec<String> {
    let v = d
        .client
        .execute(
            "return [...document.querySelectorAll('[data-testid=log-line]')]
               .map((r) => r.dataset.agent ?? '');",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}

/// The value the usage chart's bar of `day` stands for.
async fn bar_value(d: &Desktop, day: &str) -> String {
    let bar = format!("[data-testid=usage-bar][data-day='{day}']");
    let v = d
        .client
        .execute(
            "return document.querySelector(arguments[0])?.dataset.value ?? 'none';",
            vec![serde_json::json!(bar)],
        )
        .await
        .unwrap();
    v.as_str().unwrap_or_default().to_string()
}

async fn select(d: &Desktop, select: &str, value: &str) {
    d.click(&format!("[data-testid={select}] option[value='{value}']"))
        .await;
}

#[test]
fn usage_by_day_and_the_logs_view_follow_a_turn() {
    let _serial = serial();
    block_on_mt(async {
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        fake.push(Reply::text("done"));
        let cfg = config(&fake);
        let d = launch(|home| std::fs::write(home.join("config.toml"), cfg).unwrap()).await;
        let out = prompt(&d, "writer", "hello").await;
        assert_eq!(out["status"], "completed", "{out}");
        assert_eq!(fake.requests().len(), 1);

        // Usage: today's row for writer, none for other.
        d.nav("usage").await;
        let date = std::process::Command::new("date")
            .args(["-u", "+%Y-%m-%d"])
            .output()
            .unwrap();
        let today = String::from_utf8(date.stdout).unwrap().trim().to_string();
        let row = format!("[data-testid=usage-row][data-day='{today}'][data-agent=writer]");
        let input = d
            .wait_text(&format!("{row} [data-testid=usage-input]"), |t| {
                !t.is_empty()
            })
            .await;
        assert_eq!(input, "10");
        let output = d
            .wait_text(&format!("{row} [data-testid=usage-output]"), |_| true)
            .await;
        assert_eq!(output, "5");
        let cost = d
            .wait_text(&format!("{row} [data-testid=usage-cost]"), |_| true)
            .await;
        assert_eq!(cost, "$0.02");
        let requests = d
            .wait_text(&format!("{row} [data-testid=usage-requests]"), |_| true)
            .await;
        assert_eq!(requests, "1");
        assert!(d
            .client
            .find(Locator::Css("[data-testid=usage-row][data-agent=other]"))
            .await
            .is_err());
        // Today's card and the chart's bar for today say the same; one agent has no by-agent table.
        let card = |id: &str, part: &str| {
            format!("[data-testid=usage-period-{id}] [data-testid=usage-period-{part}]")
        };
        for id in ["today", "week", "month"] {
            assert_eq!(d.wait_text(&card(id, "cost"), |_| true).await, "$0.02");
        }
        assert_eq!(
            d.wait_text(&card("today", "detail"), |_| true).await,
            "1 request · 15 tokens"
        );
        assert_eq!(bar_value(&d, &today).await, "0.02");
        assert!(d
            .client
            .find(Locator::Css("[data-testid=usage-agents]"))
            .await
            .is_err());

        // Logs: the turn's line carries the agent; filters hide it.
        d.nav("logs").await;
        let line = "[data-testid=log-line][data-agent=writer][data-level=INFO]";
        let msg = d
            .wait_text(&format!("{line} [data-testid=log-message]"), |t| {
                t == "turn ended"
            })
            .await;
        assert_eq!(msg, "turn ended");
        let logs = std::fs::read_dir(d.home.join("logs")).unwrap();
        let written: String = logs
            .flatten()
            .map(|f| std::fs::read_to_string(f.path()).unwrap_or_default())
            .collect();
        assert!(
            written.contains("\"agent\":\"writer\"") && written.contains("turn ended"),
            "the log file lacks the turn's line:\n{written}"
        );
        d.screenshot("logs").await;

        select(&d, "logs-agent", "other").await;
        wait_until(&d, "only other's lines", |agents| {
            agents.iter().all(|a| a == "other")
        })
        .await;
        select(&d, "logs-agent", "writer").await;
        wait_until(&d, "writer's lines", |agents| {
            !agents.is_empty() && agents.iter().all(|a| a == "writer")
        })
        .await;
        select(&d, "logs-level", "warn").await;
        wait_until(&d, "no info line under the warn filter", |agents| {
            agents.is_empty()
        })
        .await;

        // A second agent's turn: today's totals add up, and the two agents are compared.
        fake.push(Reply::text("done"));
        let out = prompt(&d, "other", "hello").await;
        assert_eq!(out["status"], "completed", "{out}");
        d.nav("usage").await;
        d.wait_text(&card("today", "cost"), |t| t == "$0.04").await;
        assert_eq!(
            d.wait_text(&card("today", "detail"), |_| true).await,
            "2 requests · 30 tokens"
        );
        assert_eq!(bar_value(&d, &today).await, "0.04");
        // Equal cost and requests: by name.
        let order = d
            .client
            .execute(
                "return [...document.querySelectorAll('[data-testid=usage-agent-row]')]
                   .map((r) => r.dataset.agent + ' ' + r.innerText.replace(/\\s+/g, ' ').trim());",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(
            order,
            serde_json::json!([
                "other other 1 10 5 $0.02 50 %",
                "writer writer 1 10 5 $0.02 50 %"
            ])
        );
        d.screenshot("usage").await;
        d.narrow_screenshot("usage-narrow").await;
        d.close().await;
    });
}

async fn wait_until(d: &Desktop, what: &str, ok: impl Fn(&[String]) -> bool) {
    let deadline = Instant::now() + crate::harness::UI_TIMEOUT;
    loop {
        let agents = log_agents(d).await;
        if ok(&agents) {
            return;
        }
        if Instant::now() > deadline {
            d.screenshot("timeout").await;
            panic!("log view never showed {what}: {agents:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
