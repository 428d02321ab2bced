//! Single-tool control in the request (rules §6.4) and route support decisions.

use crate::common::*;
use serde_json::{json, Value};
use warren_llm::{resolve_route, ProviderFamily};
use warren_testkit::fake_llm::Reply;

/// The vendor's control field in a recorded body, if any.
fn control(body: &Value) -> (Option<&Value>, Option<&Value>) {
    (body.get("parallel_tool_calls"), body.get("tool_choice"))
}

async fn recorded_body(
    f: ProviderFamily,
    single_tool: bool,
    override_: Option<bool>,
    with: bool,
) -> Value {
    let fake = fake(f);
    fake.push(Reply::text("ok"));
    let mut e = entry(&fake, "main");
    if let Some(o) = override_ {
        e.single_tool_control = o;
    }
    let mut req = if with { with_tools() } else { hello() };
    req.single_tool = single_tool;
    let (res, _) = chat(&providers().route_of(vec![e]), &req).await;
    res.unwrap();
    fake.requests()[0].body.clone()
}

async fn control_present_when_asked(f: ProviderFamily) {
    let body = recorded_body(f, true, None, true).await;
    match f {
        ProviderFamily::Openai => {
            assert_eq!(control(&body), (Some(&json!(false)), None));
        }
        ProviderFamily::Anthropic => {
            assert_eq!(
                control(&body),
                (
                    None,
                    Some(&json!({"type": "auto", "disable_parallel_tool_use": true}))
                )
            );
        }
        ProviderFamily::Ollama => assert_eq!(control(&body), (None, None), "ollama has none"),
    }
}

async fn control_absent_in_batch_mode(f: ProviderFamily) {
    let body = recorded_body(f, false, None, true).await;
    assert_eq!(control(&body), (None, None));
}

async fn control_absent_when_overridden_off(f: ProviderFamily) {
    let body = recorded_body(f, true, Some(false), true).await;
    assert_eq!(control(&body), (None, None));
}

async fn control_absent_without_tools(f: ProviderFamily) {
    // OpenAI rejects parallel_tool_calls and Anthropic tool_choice when no tools are sent
    let body = recorded_body(f, true, None, false).await;
    assert_eq!(control(&body), (None, None));
    assert!(body.get("tools").is_none());
}

async fn forbidding_tool_calls_keeps_tools_but_says_none(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text("summary"));
    let mut req = with_tools();
    req.single_tool = true;
    req.forbid_tool_calls = true;
    let (res, _) = chat(&providers().route_of(vec![entry(&fake, "main")]), &req).await;
    assert_eq!(res.unwrap().text, "summary");
    let body = fake.requests()[0].body.clone();
    match f {
        ProviderFamily::Openai => {
            assert_eq!(control(&body), (None, Some(&json!("none"))));
            assert_eq!(body["tools"].as_array().map(Vec::len), Some(2));
        }
        ProviderFamily::Anthropic => {
            assert_eq!(control(&body), (None, Some(&json!({"type": "none"}))));
            assert_eq!(body["tools"].as_array().map(Vec::len), Some(2));
        }
        ProviderFamily::Ollama => assert!(
            body.get("tools").is_none(),
            "ollama cannot forbid: no tools"
        ),
    }
}

per_family!(
    forbidding_tool_calls_keeps_tools_but_says_none,
    control_present_when_asked,
    control_absent_in_batch_mode,
    control_absent_when_overridden_off,
    control_absent_without_tools,
);

fn config(text: &str) -> warren_types::Config {
    warren_config::parse_config(text).unwrap()
}

const PROVIDERS: &str = r#"
schema_version = 1
[providers.models.openai.main]
model = "gpt"
fallbacks = ["anthropic.claude"]
[providers.models.openai.compat]
model = "local"
uri = "http://127.0.0.1:9/v1"
single_tool_control = false
[providers.models.openai.with_ollama]
model = "gpt"
fallbacks = ["anthropic.claude", "ollama.llama"]
[providers.models.anthropic.claude]
model = "claude"
fallbacks = ["ollama.llama"]
[providers.models.ollama.llama]
model = "llama3"
[providers.models.ollama.forced]
model = "llama3"
single_tool_control = true
"#;

#[test]
fn route_support_covers_every_reachable_entry() {
    let cfg = config(PROVIDERS);
    let p = providers();
    let cases = [
        ("openai.main", true),    // openai + anthropic (not anthropic's own fallbacks)
        ("openai.compat", false), // overridden off
        ("openai.with_ollama", false), // an ollama fallback
        ("anthropic.claude", false), // its own ollama fallback
        ("ollama.llama", false),  // family default
        ("ollama.forced", true),  // overridden on
    ];
    for (reference, want) in cases {
        let route = p.route(&cfg, reference).unwrap();
        assert_eq!(
            route.supports_single_tool(),
            want,
            "route of {reference}: {:?}",
            route.references()
        );
    }
}

#[test]
fn route_is_the_entry_then_its_own_fallbacks() {
    let cfg = config(PROVIDERS);
    let refs: Vec<String> = resolve_route(&cfg, "openai.main")
        .unwrap()
        .into_iter()
        .map(|e| e.reference)
        .collect();
    assert_eq!(refs, ["openai.main", "anthropic.claude"]);
}
