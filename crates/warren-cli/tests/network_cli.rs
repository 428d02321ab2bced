//! Network by domain through the command line: `warren tool` runs a sandboxed `curl` through
//! the install's proxy, `warren logs --network` lists what it reached and what was refused
//! (from sessions.db, attributed to the agent), and `config validate` names a bad pattern.

use crate::common::warren;
use warren_testkit::agents::Agents;

const BODY: &str = "served to the allowed name";

/// A plain HTTP server on 127.0.0.1 answering every request with `BODY`.
fn server() -> u16 {
    warren_testkit::http::fixed_body_server(BODY).unwrap()
}

#[test]
fn a_call_reaches_an_allowed_name_and_the_network_log_lists_it_and_the_refusal() {
    let t = Agents::new(&["web", "other"])
        .profile(
            "net",
            r#"level = "full"
allowed_commands = ["*"]
block_high_risk_commands = false
network = { allow = ["localhost"], allow_private = true }"#,
        )
        .install()
        .unwrap();
    let port = server();
    let tool = |command: &str| {
        let args = serde_json::json!({ "command": command }).to_string();
        warren(
            t.root(),
            &["--json", "tool", "--agent", "web", "shell", &args],
        )
        .json()
    };
    let v = tool(&format!("curl -sS -f http://localhost:{port}/"));
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["output"]["stdout"], BODY, "{v}");
    let v = tool("curl -sS -f http://example.com/");
    assert_eq!(v["ok"], false, "{v}");
    let stderr = v["output"]["stderr"].as_str().unwrap();
    assert!(
        stderr.contains("warren: network: example.com:80 refused: no allow pattern matches"),
        "{v}"
    );

    let r = warren(t.root(), &["--json", "logs", "--network", "--agent", "web"]);
    let rows = r.json();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    // Newest first: the refusal, then the allowed request.
    assert_eq!(rows[0]["host"], "example.com");
    assert_eq!(rows[0]["allowed"], false);
    assert_eq!(rows[0]["rule"], "no allow pattern matches");
    assert_eq!(rows[1]["host"], "localhost");
    assert_eq!(rows[1]["port"], port);
    assert_eq!(rows[1]["allowed"], true);
    assert_eq!(rows[1]["rule"], "allow \"localhost\"");
    assert!(
        rows[1]["bytes_down"].as_u64().unwrap() >= BODY.len() as u64,
        "{rows:?}"
    );
    assert!(rows.iter().all(|r| r["agent"] == "web"));

    // Only the refused ones; another agent has none; the text form says it in words.
    let refused = warren(t.root(), &["--json", "logs", "--network", "--refused"]).json();
    assert_eq!(refused.as_array().unwrap().len(), 1, "{refused}");
    let none = warren(
        t.root(),
        &["--json", "logs", "--network", "--agent", "other"],
    )
    .json();
    assert_eq!(none.as_array().unwrap().len(), 0, "{none}");
    let text = warren(t.root(), &["logs", "--network"]);
    assert!(
        text.stdout
            .contains("[web] REFUSED example.com:80 (no allow pattern matches)"),
        "{}",
        text.stdout
    );
    let bad = warren(t.root(), &["logs", "--network", "--agent", "nobody"]);
    assert_ne!(bad.code, 0, "{}", bad.stderr);
}

#[test]
fn config_validate_names_a_bad_domain_pattern_by_its_place() {
    let t = Agents::new(&["web"])
        .profile(
            "net",
            r#"level = "full"
network = { allow = ["crates.io", "https://pypi.org/simple"], deny = ["a*.b"], alow_private = true }"#,
        )
        .install()
        .unwrap();
    let r = warren(t.root(), &["config", "validate"]);
    assert_ne!(r.code, 0);
    let out = format!("{}{}", r.stdout, r.stderr);
    // Each problem on its own line: the place (with its line and column in the file), then
    // what is wrong.
    for (place, words) in [
        (
            "risk_profiles.net.network.allow[1] (line 5,",
            "\"https://pypi.org/simple\" is a URL; write the host alone (`pypi.org`)",
        ),
        (
            "risk_profiles.net.network.deny[0] (line 5,",
            "\"a*.b\" `*` is allowed only alone or as the first label (`*.example.com`)",
        ),
        (
            "risk_profiles.net.network.alow_private (line 5,",
            "unknown key `alow_private`: did you mean `allow_private`?",
        ),
    ] {
        assert!(
            out.lines()
                .any(|l| l.starts_with(place) && l.contains(words)),
            "missing {place:?} {words:?} in:\n{out}"
        );
    }
}

#[test]
fn an_mcp_server_of_the_agent_reaches_the_network_only_through_the_proxy() {
    let script = std::fs::canonicalize(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp/fetch_server.py"),
    )
    .unwrap();
    let t = Agents::new(&["web"])
        .profile(
            "net",
            r#"level = "full"
allowed_commands = ["*"]
network = { allow = ["localhost"], allow_private = true }"#,
        )
        .extra(&format!(
            "[mcp_servers.fetcher]\ncommand = \"/usr/bin/python3\"\nargs = [{:?}]\n",
            script.display().to_string()
        ))
        .install()
        .unwrap();
    // The agent uses the server.
    let config = t.root().join("config.toml");
    let text = std::fs::read_to_string(&config).unwrap().replace(
        "[agents.web]\nrisk_profile = \"net\"\n",
        "[agents.web]\nrisk_profile = \"net\"\nmcp_servers = [\"fetcher\"]\n",
    );
    std::fs::write(&config, text).unwrap();
    let port = server();
    let fetch = |url: &str| {
        let args = serde_json::json!({ "url": url }).to_string();
        warren(
            t.root(),
            &["--json", "tool", "--agent", "web", "fetcher__fetch", &args],
        )
        .json()
    };
    // Positive control: the allowed name, through the proxy the server's environment names.
    let v = fetch(&format!("http://localhost:{port}/"));
    assert!(v.to_string().contains(BODY), "{v}");
    // A name no pattern allows: the proxy's refusal is what the server gets.
    let v = fetch("http://example.com/");
    assert!(!v.to_string().contains(BODY), "{v}");
    assert!(v.to_string().contains("no allow pattern matches"), "{v}");
    let rows = warren(t.root(), &["--json", "logs", "--network", "--agent", "web"]).json();
    let rows = rows.as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["host"] == "localhost" && r["allowed"] == true && r["agent"] == "web"),
        "{rows:?}"
    );
    assert!(
        rows.iter()
            .any(|r| r["host"] == "example.com" && r["allowed"] == false),
        "{rows:?}"
    );
}

#[test]
fn profiles_set_writes_a_network_by_domain_and_refuses_a_bad_one_in_words() {
    let t = Agents::new(&["web"])
        .profile("net", "level = \"full\"")
        .install()
        .unwrap();
    let config = t.root().join("config.toml");
    let r = warren(
        t.root(),
        &[
            "profiles",
            "set",
            "risk",
            "net",
            "network",
            r#"{"allow": ["crates.io", "*.npmjs.org"], "deny": ["evil.npmjs.org"]}"#,
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains(
            r#"network = { allow = ["crates.io", "*.npmjs.org"], deny = ["evil.npmjs.org"] }"#
        ),
        "{text}"
    );
    let shown = warren(t.root(), &["--json", "profiles", "show", "risk", "net"]).json();
    assert_eq!(
        shown["risk"]["network"]["allow"][1], "*.npmjs.org",
        "{shown}"
    );

    // A key the table does not have, and a pattern that does not parse: refused, file unchanged.
    let before = std::fs::read(&config).unwrap();
    let r = warren(
        t.root(),
        &[
            "profiles",
            "set",
            "risk",
            "net",
            "network",
            r#"{"alow": ["x.org"]}"#,
        ],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("alow"), "{}", r.stderr);
    let r = warren(
        t.root(),
        &[
            "profiles",
            "set",
            "risk",
            "net",
            "network",
            r#"{"allow": ["https://x.org/"]}"#,
        ],
    );
    assert_ne!(r.code, 0);
    assert!(
        r.stderr.contains("risk_profiles.net.network.allow[0]") && r.stderr.contains("is a URL"),
        "{}",
        r.stderr
    );
    assert_eq!(std::fs::read(&config).unwrap(), before);
    // Back to no network.
    let r = warren(
        t.root(),
        &["profiles", "set", "risk", "net", "network", "false"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::read_to_string(&config)
        .unwrap()
        .contains("network = false"));
}

#[test]
fn profiles_allow_domain_adds_a_refused_host_like_the_window() {
    let t = Agents::new(&["web", "peer"])
        .profile(
            "net",
            "level = \"full\"\nnetwork = { allow = [\"crates.io\"], deny = [\"*.evil.example\"] } # kept",
        )
        .install()
        .unwrap();
    let config = t.root().join("config.toml");
    let before = std::fs::read(&config).unwrap();
    let r = warren(
        t.root(),
        &[
            "profiles",
            "allow-domain",
            "--agent",
            "web",
            "pypi.org",
            "--dry-run",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains(r#"+ network = { allow = ["crates.io", "pypi.org"]"#),
        "{}",
        r.stdout
    );
    assert_eq!(
        std::fs::read(&config).unwrap(),
        before,
        "a dry run writes nothing"
    );
    let r = warren(
        t.root(),
        &["profiles", "allow-domain", "--agent", "web", "pypi.org"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = std::fs::read_to_string(&config).unwrap();
    assert!(
        text.contains(
            r#"network = { allow = ["crates.io", "pypi.org"], deny = ["*.evil.example"] } # kept"#
        ),
        "{text}"
    );
    // A denied host: refused, naming the deny pattern; nothing written.
    let before = std::fs::read(&config).unwrap();
    let r = warren(
        t.root(),
        &[
            "profiles",
            "allow-domain",
            "--agent",
            "web",
            "cdn.evil.example",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("*.evil.example"), "{}", r.stderr);
    assert_eq!(std::fs::read(&config).unwrap(), before);
}
