//! Helpers shared by the provider tests: fake servers, entries pointing at them, event capture.

use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use warren_llm::{
    ChatRequest, ChatResponse, KeyResolver, LlmError, Message, NoKeys, ProviderEntry, Providers,
    ProxyMode, Route, RouteEvent, StreamEvent, ToolSpec,
};
use warren_testkit::fake_llm::{FakeLlm, ProviderFamily};
use warren_types::ProviderModel;

/// Generates one `#[tokio::test]` per family for each listed `async fn name(ProviderFamily)`.
macro_rules! per_family {
    ($($name:ident),* $(,)?) => {
        mod openai {
            $( #[tokio::test] async fn $name() { super::$name(warren_llm::ProviderFamily::Openai).await } )*
        }
        mod anthropic {
            $( #[tokio::test] async fn $name() { super::$name(warren_llm::ProviderFamily::Anthropic).await } )*
        }
        mod ollama {
            $( #[tokio::test] async fn $name() { super::$name(warren_llm::ProviderFamily::Ollama).await } )*
        }
    };
}

/// Providers without keys, connecting directly (no proxy) to 127.0.0.1.
pub fn providers() -> Providers {
    providers_with_keys(Arc::new(NoKeys))
}

/// Providers with the given key resolver.
pub fn providers_with_keys(keys: Arc<dyn KeyResolver>) -> Providers {
    Providers::with_proxy(keys, ProxyMode::Direct).unwrap()
}

/// A fake server of `family`.
pub fn fake(family: ProviderFamily) -> FakeLlm {
    FakeLlm::start(family).unwrap()
}

/// The entry `<family>.<alias>` pointing at `uri`, model `fake-model`.
pub fn entry_at(family: ProviderFamily, alias: &str, uri: &str) -> ProviderEntry {
    let model = ProviderModel {
        model: "fake-model".into(),
        uri: Some(uri.to_string()),
        ..ProviderModel::default()
    };
    ProviderEntry::new(&format!("{}.{alias}", family.as_str()), family, &model)
}

/// The entry `<family>.<alias>` pointing at `fake`.
pub fn entry(fake: &FakeLlm, alias: &str) -> ProviderEntry {
    entry_at(fake.family(), alias, &fake.uri())
}

/// A one-entry route to `fake`.
pub fn route_to(fake: &FakeLlm) -> Route {
    providers().route_of(vec![entry(fake, "main")])
}

/// A route over entries with a short timeout.
pub fn route_of(entries: Vec<ProviderEntry>, timeout: Duration) -> Route {
    providers().route_of(
        entries
            .into_iter()
            .map(|mut e| {
                e.timeout = timeout;
                e
            })
            .collect(),
    )
}

/// Two tools: `file_read {path}` and `shell {command}`.
pub fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "file_read".into(),
            description: "Reads a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}},
                "required": ["path"]}),
        },
        ToolSpec {
            name: "shell".into(),
            description: "Runs a command".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}},
                "required": ["command"]}),
        },
    ]
}

/// A streaming request: system prompt, one user message, no tools.
pub fn hello() -> ChatRequest {
    ChatRequest::new("You are terse.", vec![Message::user("Say hello")])
}

/// A streaming request with the two tools.
pub fn with_tools() -> ChatRequest {
    hello().with_tools(tools())
}

/// Calls `route`, capturing every event.
pub async fn chat(
    route: &Route,
    req: &ChatRequest,
) -> (Result<ChatResponse, LlmError>, Vec<RouteEvent>) {
    let mut events = Vec::new();
    let res = route.chat(req, &mut |e| events.push(e)).await;
    (res, events)
}

/// The stream events among route events.
pub fn stream_events(events: &[RouteEvent]) -> Vec<StreamEvent> {
    events
        .iter()
        .filter_map(|e| match e {
            RouteEvent::Stream(s) => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// The text deltas, in order.
pub fn text_deltas(events: &[RouteEvent]) -> Vec<String> {
    stream_events(events)
        .into_iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text } => Some(text),
            _ => None,
        })
        .collect()
}

/// The attempts as (entry, attempt number).
pub fn attempts(events: &[RouteEvent]) -> Vec<(String, u32)> {
    events
        .iter()
        .filter_map(|e| match e {
            RouteEvent::Attempt { entry, attempt, .. } => Some((entry.clone(), *attempt)),
            _ => None,
        })
        .collect()
}

/// The failed attempts as (entry, code, falls_back).
pub fn failures(events: &[RouteEvent]) -> Vec<(String, &'static str, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            RouteEvent::AttemptFailed {
                entry,
                code,
                falls_back,
                ..
            } => Some((entry.clone(), code.as_str(), *falls_back)),
            _ => None,
        })
        .collect()
}
