//! Every validation rule of rules §1.2, one at a time, and all at once.

use warren_config::{parse_config, Issue};

const BASE: &str = r#"
schema_version = 1

[risk_profiles.p]
level = "supervised"

[runtime_profiles.r]
max_tool_iterations = 5

[providers.models.openai.main]
model = "gpt-x"
fallbacks = ["ollama.local"]

[providers.models.ollama.local]
model = "llama"

[agents.alice]
risk_profile = "p"
runtime_profile = "r"
model_provider = "openai.main"

[agents.bob]
risk_profile = "p"

[agents.mark]
risk_profile = "p"
[agents.mark.memory]
backend = "markdown"
"#;

fn errors(extra: &str) -> Vec<Issue> {
    match parse_config(&format!("{BASE}\n{extra}")) {
        Ok(_) => Vec::new(),
        Err(e) => e.issues,
    }
}

/// Applies a snippet to the base config and expects exactly one error at `path` whose message
/// contains `needle`.
fn expect_one(snippet: &str, path: &str, needle: &str) {
    let errs = errors(snippet);
    assert_eq!(errs.len(), 1, "snippet:\n{snippet}\nerrors: {errs:#?}");
    assert_eq!(errs[0].path, path, "snippet:\n{snippet}");
    assert!(
        errs[0].message.contains(needle),
        "message {:?} lacks {needle:?}",
        errs[0].message
    );
}

#[test]
fn base_is_valid() {
    let cfg = parse_config(BASE).unwrap();
    assert_eq!(cfg.agents.len(), 3);
    assert_eq!(cfg.risk_profiles["p"].allowed_commands.len(), 20);
    assert_eq!(cfg.runtime_profiles["r"].max_tool_iterations, 5);
    assert_eq!(cfg.runtime_profiles["r"].max_actions_per_hour, 20);
}

#[test]
fn bad_alias() {
    expect_one(
        "[agents.Bad]\nrisk_profile = \"p\"",
        "agents.Bad",
        "invalid agent alias",
    );
    expect_one("[agents.a__b]\nrisk_profile = \"p\"", "agents.a__b", "__");
    expect_one(
        "[agents.default]\nrisk_profile = \"p\"",
        "agents.default",
        "reserved",
    );
}

#[test]
fn dangling_references() {
    expect_one(
        "[agents.c]\nrisk_profile = \"nope\"",
        "agents.c.risk_profile",
        "`nope`",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\nruntime_profile = \"nope\"",
        "agents.c.runtime_profile",
        "runtime profile `nope`",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\nmodel_provider = \"openai.nope\"",
        "agents.c.model_provider",
        "`openai.nope`",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\nmodel_provider = \"noperiod\"",
        "agents.c.model_provider",
        "family.alias",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\ndelegates = [\"bob\", \"ghost\"]",
        "agents.c.delegates[1]",
        "`ghost`",
    );
    expect_one(
        "[providers.models.anthropic.x]\nmodel = \"m\"\nfallbacks = [\"openai.gone\"]",
        "providers.models.anthropic.x.fallbacks[0]",
        "`openai.gone`",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace.access]\nghost = \"read\"",
        "agents.c.workspace.access.ghost",
        "not a defined agent",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace]\nread_memory_from = [\"ghost\"]",
        "agents.c.workspace.read_memory_from[0]",
        "not a defined agent",
    );
    expect_one(
        "[cron.daily]\nagent = \"ghost\"\nschedule = \"0 9 * * *\"\nprompt = \"hi\"",
        "cron.daily.agent",
        "`ghost`",
    );
}

#[test]
fn missing_risk_profile() {
    expect_one(
        "[agents.c]\nenabled = true",
        "agents.c.risk_profile",
        "missing required key",
    );
}

#[test]
fn self_grants() {
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace.access]\nc = \"read\"",
        "agents.c.workspace.access.c",
        "itself",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace]\nread_memory_from = [\"c\"]",
        "agents.c.workspace.read_memory_from[0]",
        "its own memory",
    );
}

#[test]
fn unknown_access_mode() {
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace.access]\nbob = \"execute\"",
        "agents.c.workspace.access.bob",
        "unknown value `execute`",
    );
}

#[test]
fn cross_backend_memory_grant() {
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace]\nread_memory_from = [\"mark\"]",
        "agents.c.workspace.read_memory_from[0]",
        "cross-backend cross-agent memory is not supported",
    );
}

#[test]
fn category_grant_with_markdown_side() {
    // The granted side is markdown.
    expect_one(
        "[agents.m2]\nrisk_profile = \"p\"\nmemory.backend = \"markdown\"\n[agents.m2.workspace]\nread_memory_from = [{ agent = \"mark\", categories = [\"core\"] }]",
        "agents.m2.workspace.read_memory_from[0]",
        "markdown",
    );
    // A whole-agent grant between markdown agents is fine.
    assert!(errors(
        "[agents.m2]\nrisk_profile = \"p\"\nmemory.backend = \"markdown\"\n[agents.m2.workspace]\nread_memory_from = [\"mark\"]"
    )
    .is_empty());
}

#[test]
fn empty_category_list_and_duplicates() {
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace]\nread_memory_from = [{ agent = \"bob\", categories = [] }]",
        "agents.c.workspace.read_memory_from[0]",
        "empty `categories`",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace]\nread_memory_from = [\"bob\", { agent = \"bob\", categories = [\"core\"] }]",
        "agents.c.workspace.read_memory_from[1]",
        "duplicate memory grant",
    );
}

#[test]
fn unknown_keys_are_errors() {
    expect_one(
        "[risk_profiles.q]\nlevel = \"full\"\nallow_everything = true",
        "risk_profiles.q.allow_everything",
        "unknown key",
    );
    expect_one(
        "[runtime_profiles.q]\nmax_tool_iteration = 3",
        "runtime_profiles.q.max_tool_iteration",
        "unknown key",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\nnickname = \"cee\"",
        "agents.c.nickname",
        "unknown key",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace]\npaths = \"/x\"",
        "agents.c.workspace.paths",
        "unknown key",
    );
}

#[test]
fn unknown_enum_values_are_errors() {
    expect_one(
        "[risk_profiles.q]\nlevel = \"reckless\"",
        "risk_profiles.q.level",
        "unknown value `reckless`",
    );
    expect_one(
        "[risk_profiles.q]\nsandbox = \"firejail\"",
        "risk_profiles.q.sandbox",
        "unknown value",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.memory]\nbackend = \"redis\"",
        "agents.c.memory.backend",
        "unknown value `redis`",
    );
    expect_one(
        "[providers.models.gemini.x]\nmodel = \"m\"",
        "providers.models.gemini",
        "unknown provider family",
    );
}

#[test]
fn wrong_types_and_ranges() {
    expect_one(
        "[runtime_profiles.q]\nmax_tool_iterations = \"ten\"",
        "runtime_profiles.q.max_tool_iterations",
        "expected a whole number (0 or more), found the text \"ten\"",
    );
    expect_one(
        "[runtime_profiles.q]\nmax_actions_per_hour = -1",
        "runtime_profiles.q.max_actions_per_hour",
        "-1 is out of range: expected a whole number (0 or more)",
    );
    expect_one(
        "[runtime_profiles.q]\nshell_timeout_secs = 0",
        "runtime_profiles.q.shell_timeout_secs",
        "at least 1",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace]\npath = \"relative/dir\"",
        "agents.c.workspace.path",
        "absolute",
    );
    expect_one(
        "[cron.j]\nagent = \"bob\"\nschedule = \"every tuesday\"\nprompt = \"x\"",
        "cron.j.schedule",
        "invalid cron expression",
    );
}

#[test]
fn backends_need_their_settings() {
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\nmemory.backend = \"postgres\"",
        "memory.postgres.url",
        "not set",
    );
}

#[test]
fn syntax_error_has_line_and_column() {
    let errs = errors("[agents.c\nrisk_profile = \"p\"");
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].message.starts_with("TOML syntax error"));
    let base_lines = BASE.lines().count();
    assert_eq!(errs[0].line, Some(base_lines + 2), "{errs:#?}");
    assert!(errs[0].column.is_some());
}

#[test]
fn semantic_errors_carry_lines() {
    let errs = errors("[agents.c]\nrisk_profile = \"nope\"");
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].line, Some(BASE.lines().count() + 3), "{errs:#?}");
}

/// The ten distinct mistakes of the acceptance list, in one file: ten errors, each with its path.
pub const TEN_MISTAKES: &str = include_str!("ten_mistakes.toml");

#[test]
fn ten_mistakes_ten_errors() {
    let errs = parse_config(TEN_MISTAKES).unwrap_err().issues;
    let paths: Vec<&str> = errs.iter().map(|e| e.path.as_str()).collect();
    let mut want = vec![
        "agents.Bad_Alias",
        "agents.alice.risk_profile",
        "agents.alice.workspace.access.alice",
        "agents.alice.workspace.access.bob",
        "agents.bob.workspace.read_memory_from[0]",
        "agents.mark.workspace.read_memory_from[0]",
        "agents.bob.workspace.read_memory_from[1]",
        "agents.bob.workspace.read_memory_from[3]",
        "risk_profiles.p.colour",
        "risk_profiles.q.sandbox",
    ];
    let mut got = paths.clone();
    got.sort();
    want.sort();
    assert_eq!(got, want, "{errs:#?}");
    assert!(errs.iter().all(|e| e.line.is_some()), "{errs:#?}");
}

#[test]
fn passthrough_never_hands_out_buses_agents_or_git_variables() {
    for var in [
        "DBUS_SESSION_BUS_ADDRESS",
        "DBUS_SYSTEM_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
        "WAYLAND_DISPLAY",
        "DISPLAY",
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
        "GIT_DIR",
        "GIT_CONFIG_PARAMETERS",
    ] {
        expect_one(
            &format!("[risk_profiles.q]\nshell_env_passthrough = [\"CARGO_HOME\", \"{var}\"]\n"),
            "risk_profiles.q.shell_env_passthrough[1]",
            var,
        );
    }
    assert!(errors("[risk_profiles.q]\nshell_env_passthrough = [\"CARGO_HOME\"]\n").is_empty());
}

#[test]
fn mcp_servers_are_checked_and_referenced_by_name() {
    let ok = "[mcp_servers.fs]\ncommand = \"node\"\nargs = [\"server.js\", \".\"]\nenv = { LOG = \"1\" }\n\
              [mcp_servers.web]\nurl = \"https://mcp.example.test/mcp\"\n";
    let cfg = parse_config(&format!(
        "{BASE}\n{ok}\n[agents.zed]\nrisk_profile = \"p\"\nmcp_servers = [\"fs\", \"web\"]\n"
    ))
    .unwrap();
    assert_eq!(cfg.agents["zed"].mcp_servers, ["fs", "web"]);
    assert_eq!(cfg.mcp_servers["fs"].args, ["server.js", "."]);
    assert_eq!(
        cfg.mcp_servers["web"].url.as_deref(),
        Some("https://mcp.example.test/mcp")
    );
    expect_one(
        "[agents.zed]\nrisk_profile = \"p\"\nmcp_servers = [\"nope\"]",
        "agents.zed.mcp_servers[0]",
        "MCP server `nope` is not defined",
    );
    expect_one(
        "[mcp_servers.x]\nargs = []",
        "mcp_servers.x",
        "needs `command`",
    );
    expect_one(
        "[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://h\"",
        "mcp_servers.x",
        "not both",
    );
    expect_one(
        "[mcp_servers.x]\nurl = \"ftp://h\"",
        "mcp_servers.x.url",
        "not an http",
    );
    expect_one(
        "[mcp_servers.x]\nurl = \"http://h\"\nargs = [\"a\"]",
        "mcp_servers.x.args",
        "stdio servers",
    );
    expect_one(
        "[mcp_servers.a__b]\ncommand = \"a\"",
        "mcp_servers.a__b",
        "invalid MCP server name",
    );
    expect_one(
        "[mcp_servers.x]\ncommand = \"a\"\nenv = { SSH_AUTH_SOCK = \"/s\" }",
        "mcp_servers.x.env.SSH_AUTH_SOCK",
        "never set",
    );
    expect_one(
        "[mcp_servers.x]\ncommand = \"a\"\ncwd = \"/\"",
        "mcp_servers.x.cwd",
        "unknown key",
    );
}

#[test]
fn a_provider_address_needs_its_scheme_and_host() {
    for bad in [
        "127.0.0.1:11434",
        "localhost",
        "http://",
        "ftp://host",
        "http://a b",
    ] {
        expect_one(
            &format!("[providers.models.anthropic.x]\nmodel = \"m\"\nuri = \"{bad}\"\n"),
            "providers.models.anthropic.x.uri",
            "is not an http:// or https:// address",
        );
    }
    for good in [
        "http://127.0.0.1:11434",
        "https://api.example.com/v1",
        "http://[::1]:8080",
    ] {
        assert!(
            errors(&format!(
                "[providers.models.anthropic.x]\nmodel = \"m\"\nuri = \"{good}\"\n"
            ))
            .is_empty(),
            "{good}"
        );
    }
}

#[test]
fn misspelt_keys_and_names_get_a_did_you_mean() {
    // Keys, under the table and key they are in.
    expect_one(
        "[agents.c]\nrisk_profle = \"p\"\nrisk_profile = \"p\"",
        "agents.c.risk_profle",
        "unknown key `risk_profle`: did you mean `risk_profile`?",
    );
    expect_one(
        "[risk_profiles.q]\nworkspace_onl = true",
        "risk_profiles.q.workspace_onl",
        "did you mean `workspace_only`?",
    );
    // A slip of a known section's name is refused instead of silently ignored.
    expect_one(
        "[risk_profle.q]\nlevel = \"full\"",
        "risk_profle",
        "did you mean `risk_profiles`?",
    );
    // Names referenced.
    expect_one(
        "[risk_profiles.balanced]\n[agents.c]\nrisk_profile = \"balancd\"",
        "agents.c.risk_profile",
        "risk profile `balancd` is not defined in [risk_profiles] (did you mean `balanced`?)",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\nruntime_profile = \"rr\"",
        "agents.c.runtime_profile",
        "(did you mean `r`?)",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\nmodel_provider = \"openai.mian\"",
        "agents.c.model_provider",
        "(did you mean `openai.main`?)",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\ndelegates = [\"alcie\"]",
        "agents.c.delegates[0]",
        "delegate `alcie` is not a defined agent (did you mean `alice`?)",
    );
    expect_one(
        "[agents.c]\nrisk_profile = \"p\"\n[agents.c.workspace.access]\nbobb = \"read\"",
        "agents.c.workspace.access.bobb",
        "(did you mean `bob`?)",
    );
    expect_one(
        "[risk_profiles.q]\nlevel = \"supervsed\"",
        "risk_profiles.q.level",
        "unknown value `supervsed`: did you mean `supervised`?",
    );
    expect_one(
        "[providers.models.olama.x]\nmodel = \"m\"",
        "providers.models.olama",
        "(did you mean `ollama`?)",
    );
    // Nothing close: no guess.
    let errs = errors("[agents.c]\nrisk_profile = \"zzzzzz\"");
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(!errs[0].message.contains("did you mean"), "{errs:#?}");
}
