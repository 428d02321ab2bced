//! The Network screen: a turn of an agent whose network is by domain runs a real sandboxed
//! `curl` through the app's own proxy (to a server of the test on 127.0.0.1, allowed; to a name
//! no pattern allows and to a denied one, refused). The screen lists the three connections as
//! sessions.db holds them, the Live screen notes the refusals, and "Allow this domain" on the
//! refused one shows the edit of the agent's risk profile, saves it on confirmation, and
//! config.toml on disk has the host in its allow list with every comment kept; on the denied
//! one it says why it cannot.

use crate::harness::Desktop;
use crate::{block_on_mt, serial};
use fantoccini::Locator;
use serde_json::json;
use std::time::Duration;
use warren_testkit::fake_llm::{FakeLlm, Reply};
use warren_types::ProviderFamily;

const BODY: &str = "served to the allowed name";

/// A plain HTTP server on 127.0.0.1 answering every request with `BODY`.
fn server() -> u16 {
    warren_testkit::http::fixed_body_server(BODY).unwrap()
}

fn config(fake: &FakeLlm) -> String {
    format!(
        r#"# Network test install.
schema_version = 1

[agents.web]
risk_profile = "net"
model_provider = "openai.fake"

[agents.other]
risk_profile = "net"
model_provider = "openai.fake"

# Reaches the test's server by name, nothing else.
[risk_profiles.net]
level = "full"
allowed_commands = ["*"]
block_high_risk_commands = false
network = {{ allow = ["localhost"], deny = ["*.evil.example"], allow_private = true }} # local only

{}"#,
        fake.config_block("fake")
    )
}

/// The rows shown, read in one script: (host, port, allowed, verdict, rule, bytes, time text,
/// time's datetime).
async fn rows(d: &Desktop) -> Vec<Vec<String>> {
    let v = d
        .client
        .execute(
            "return [...document.querySelectorAll('[data-testid=network-row]')].map((r) => [
               r.dataset.host, r.dataset.port, r.dataset.allowed,
               r.querySelector('[data-testid=network-verdict]').textContent.trim(),
               r.querySelector('[data-testid=network-rule]').textContent.trim(),
               r.querySelector('[data-testid=network-bytes]').textContent.trim(),
               r.querySelector('time').textContent.trim(),
               r.querySelector('time').getAttribute('datetime')]);",
            vec![],
        )
        .await
        .unwrap();
    serde_json::from_value(v).unwrap()
}

async fn wait_rows(d: &Desktop, n: usize) -> Vec<Vec<String>> {
    let deadline = std::time::Instant::now() + crate::harness::UI_TIMEOUT;
    loop {
        let r = rows(d).await;
        if r.len() == n {
            return r;
        }
        if std::time::Instant::now() > deadline {
            d.screenshot("network-timeout").await;
            panic!("expected {n} rows, saw {r:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[test]
fn connections_are_listed_and_allow_this_domain_adds_the_host_to_the_profile() {
    let _serial = serial();
    block_on_mt(async {
        let port = server();
        let fake = FakeLlm::start(ProviderFamily::Openai).unwrap();
        let curl = |url: String| {
            Reply::tool_call(
                "shell",
                json!({ "command": format!("curl -sS -f --max-time 20 {url}") }),
            )
        };
        fake.script([
            curl(format!("http://localhost:{port}/")),
            curl("http://example.com/".into()),
            curl("http://cdn.evil.example/".into()),
            Reply::text("fetched what I could"),
        ]);
        let cfg = config(&fake);
        let d =
            crate::harness::launch(|home| std::fs::write(home.join("config.toml"), &cfg).unwrap())
                .await;
        let path = d.home.join("config.toml");

        // Before anything ran: the empty state says which agents are listed at all.
        d.nav("network").await;
        let empty = d
            .wait_text("[data-testid=network-empty]", |t| {
                t.contains("No connection recorded yet")
            })
            .await;
        assert!(
            empty.contains("Only agents whose risk profile's network is by domain"),
            "{empty}"
        );
        d.screenshot("network-empty").await;

        let out = d.send_prompt("web", "fetch the pages").await;
        assert_eq!(out["status"], "completed", "{out}");
        assert_eq!(fake.requests().len(), 4);

        // Newest first: the denied name, the name no pattern allows, the allowed request.
        let r = wait_rows(&d, 3).await;
        assert_eq!(
            r[0][0..5],
            [
                "cdn.evil.example",
                "80",
                "false",
                "refused",
                "deny \"*.evil.example\""
            ],
            "{r:?}"
        );
        assert_eq!(
            r[1][0..5],
            [
                "example.com",
                "80",
                "false",
                "refused",
                "no allow pattern matches"
            ],
            "{r:?}"
        );
        assert_eq!(
            r[2][0..5],
            [
                "localhost",
                port.to_string().as_str(),
                "true",
                "allowed",
                "allow \"localhost\""
            ],
            "{r:?}"
        );
        // Bytes each way ("78 B / 160 B"): the answer came back.
        let down: Vec<&str> = r[2][5].split(" / ").collect();
        assert_eq!(down.len(), 2, "{r:?}");
        assert_ne!(down[1], "0 B", "{r:?}");
        // Local time in words, the exact UTC time in the element.
        for row in &r {
            assert!(row[7].ends_with('Z') && row[7].contains('T'), "{row:?}");
            assert!(!row[6].contains('T') && row[6] != row[7], "{row:?}");
        }
        let target = d
            .wait_text(
                "[data-testid=network-row][data-host=localhost] [data-testid=network-target]",
                |t| !t.is_empty(),
            )
            .await;
        assert_eq!(target, format!("localhost:{port}"));

        // Filters: refused only; another agent has none.
        d.click("[data-testid=network-refused-only]").await;
        let r = wait_rows(&d, 2).await;
        assert!(r.iter().all(|x| x[2] == "false"), "{r:?}");
        d.click("[data-testid=network-agent] option[value='other']")
            .await;
        d.wait_text("[data-testid=network-empty]", |t| {
            t.contains("No connection matches these filters")
        })
        .await;
        d.click("[data-testid=network-agent] option[value='']")
            .await;
        d.click("[data-testid=network-refused-only]").await;
        wait_rows(&d, 3).await;

        // Allow a denied name: refused beside its row, in words.
        d.click(
            "[data-testid=network-row][data-host='cdn.evil.example'] [data-testid=network-allow]",
        )
        .await;
        let why = d
            .wait_text("[data-testid=network-allow-error]", |t| !t.is_empty())
            .await;
        assert!(
            why.contains("refused by deny \"*.evil.example\" of risk profile `net`"),
            "{why}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), cfg);

        // Allow the other one: the diff first, nothing written until Save.
        d.click("[data-testid=network-row][data-host='example.com'] [data-testid=network-allow]")
            .await;
        let diff = d
            .wait_text("[data-testid=network-allow-diff]", |t| t.contains("+ "))
            .await;
        assert!(
            diff.contains(r#"- network = { allow = ["localhost"], deny = ["*.evil.example"], allow_private = true } # local only"#),
            "{diff}"
        );
        assert!(
            diff.contains(r#"+ network = { allow = ["localhost", "example.com"], deny = ["*.evil.example"], allow_private = true } # local only"#),
            "{diff}"
        );
        let ask = d
            .wait_text("[data-testid=network-allow-preview]", |t| !t.is_empty())
            .await;
        assert!(
            ask.contains("Add example.com to the allowed domains of risk profile net"),
            "{ask}"
        );
        assert!(
            ask.contains("web, other") || ask.contains("other, web"),
            "{ask}"
        );
        assert!(d
            .client
            .find(Locator::Css("[data-testid=network-allow-error]"))
            .await
            .is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), cfg);
        d.docs_screenshot("network-screen").await;

        d.click("[data-testid=network-allow-save]").await;
        let done = d
            .wait_text("[data-testid=network-allowed]", |t| !t.is_empty())
            .await;
        assert!(
            done.contains("Allowed example.com in risk profile net"),
            "{done}"
        );
        let saved = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            saved,
            cfg.replace(
                r#"allow = ["localhost"]"#,
                r#"allow = ["localhost", "example.com"]"#
            ),
            "only the allow list changed"
        );
        for comment in [
            "# Network test install.",
            "# Reaches the test's server by name, nothing else.",
            "# local only",
        ] {
            assert!(saved.contains(comment), "lost `{comment}`:\n{saved}");
        }
        // The list is read again (the refusals stay: they happened); the preview is gone.
        wait_rows(&d, 3).await;
        assert!(d
            .client
            .find(Locator::Css("[data-testid=network-allow-preview]"))
            .await
            .is_err());

        // The Live screen notes the agent's refusals in a line each.
        d.nav("live").await;
        d.click("[data-testid=live-agent] option[value='web']")
            .await;
        let note = d
            .wait_text("[data-testid=live-network]", |t| t.contains("example.com"))
            .await;
        assert!(
            note.contains("network: example.com refused (no allow pattern matches)"),
            "{note}"
        );
        assert!(
            note.contains("network: cdn.evil.example refused (deny \"*.evil.example\")"),
            "{note}"
        );
        d.client
            .execute("window.scrollTo(0, 0); return true;", vec![])
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(400)).await;
        d.screenshot("live-network-note").await;
        d.close().await;
    });
}
