//! The request rules the real vendors enforce with a 400, checked by the fake servers so that a
//! corrupt history (a tool call without its result, a result without its call) fails a test
//! the way it would fail in production.

use serde_json::Value;
use warren_types::ProviderFamily;

/// Checks a request body against the vendor's rules; the error is the vendor's message.
pub(crate) fn check(family: ProviderFamily, body: &Value) -> Result<(), String> {
    if body["model"].as_str().is_none_or(str::is_empty) {
        return Err("model: a non-empty model name is required".into());
    }
    let Some(messages) = body["messages"].as_array() else {
        return Err("messages: field required (an array)".into());
    };
    match family {
        ProviderFamily::Openai => openai(body, messages),
        ProviderFamily::Anthropic => anthropic(body, messages),
        ProviderFamily::Ollama => Ok(()),
    }
}

fn has_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

fn openai(body: &Value, messages: &[Value]) -> Result<(), String> {
    if messages.is_empty() {
        return Err("[] is too short - 'messages'".into());
    }
    if body.get("parallel_tool_calls").is_some() && !has_tools(body) {
        return Err(
            "Invalid value for 'parallel_tool_calls': only allowed when 'tools' are specified."
                .into(),
        );
    }
    let unanswered = |ids: &[String]| {
        format!(
            "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: {}",
            ids.join(", ")
        )
    };
    let mut pending: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        match m["role"].as_str() {
            Some("tool") => {
                let id = m["tool_call_id"].as_str().unwrap_or_default();
                match pending.iter().position(|p| p == id) {
                    Some(at) => {
                        pending.remove(at);
                    }
                    None => {
                        return Err(format!(
                            "Invalid parameter: messages.[{i}]: messages with role 'tool' must be a response to a preceeding message with 'tool_calls' (tool_call_id {id:?})."
                        ))
                    }
                }
            }
            Some(role @ ("assistant" | "user" | "system" | "developer")) => {
                if !pending.is_empty() {
                    return Err(unanswered(&pending));
                }
                if role == "assistant" {
                    pending = m["tool_calls"]
                        .as_array()
                        .map(|calls| {
                            calls
                                .iter()
                                .map(|c| c["id"].as_str().unwrap_or_default().to_string())
                                .collect()
                        })
                        .unwrap_or_default();
                }
            }
            other => return Err(format!("messages.[{i}].role: invalid value {other:?}")),
        }
    }
    if pending.is_empty() {
        Ok(())
    } else {
        Err(unanswered(&pending))
    }
}

/// The content blocks of a message (a string content has none of interest).
fn blocks(m: &Value) -> &[Value] {
    m["content"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn anthropic(body: &Value, messages: &[Value]) -> Result<(), String> {
    if !body["max_tokens"].is_u64() {
        return Err("max_tokens: Field required".into());
    }
    if messages.is_empty() {
        return Err("messages: at least one message is required".into());
    }
    let mut previous_uses: Vec<String> = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let role = m["role"].as_str().unwrap_or_default();
        if !matches!(role, "user" | "assistant") {
            return Err(format!(
                "messages.{i}.role: Input should be 'user' or 'assistant'"
            ));
        }
        let empty = match &m["content"] {
            Value::String(t) => t.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => true,
        };
        if empty && !(role == "assistant" && i + 1 == messages.len()) {
            return Err(format!(
                "messages.{i}: all messages must have non-empty content except for the optional final assistant message"
            ));
        }
        let content = blocks(m);
        let results: Vec<(usize, &str)> = content
            .iter()
            .enumerate()
            .filter(|(_, b)| b["type"] == "tool_result")
            .map(|(j, b)| (j, b["tool_use_id"].as_str().unwrap_or_default()))
            .collect();
        for (j, id) in &results {
            if !previous_uses.iter().any(|u| u == id) {
                return Err(format!(
                    "messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: {id}. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
                ));
            }
        }
        let missing: Vec<&str> = previous_uses
            .iter()
            .map(String::as_str)
            .filter(|u| role != "user" || !results.iter().any(|(_, id)| id == u))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
                missing.join(", ")
            ));
        }
        previous_uses = if role == "assistant" {
            content
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| b["id"].as_str().unwrap_or_default().to_string())
                .collect()
        } else {
            Vec::new()
        };
    }
    if previous_uses.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "messages.{}: `tool_use` ids were found without `tool_result` blocks immediately after: {}. Each `tool_use` block must have a corresponding `tool_result` block in the next message.",
            messages.len() - 1,
            previous_uses.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_rules() {
        let call = json!({"role": "assistant", "content": null,
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                           {"id": "b", "type": "function", "function": {"name": "f", "arguments": "{}"}}]});
        let user = json!({"role": "user", "content": "hi"});
        let res = |id: &str| json!({"role": "tool", "tool_call_id": id, "content": "ok"});
        let cases = [
            (json!([user, call, res("a"), res("b")]), None),
            (json!([user, call, res("b"), res("a"), user]), None),
            (
                json!([user, call, res("a")]),
                Some("did not have response messages: b"),
            ),
            (
                json!([user, call, res("a"), user]),
                Some("did not have response messages: b"),
            ),
            (
                json!([user, res("a")]),
                Some("must be a response to a preceeding message"),
            ),
            (
                json!([user, call, res("a"), res("b"), res("b")]),
                Some("preceeding"),
            ),
            (json!([]), Some("too short")),
        ];
        for (messages, want) in cases {
            let body = json!({"model": "m", "messages": messages});
            match (check(ProviderFamily::Openai, &body), want) {
                (Ok(()), None) => {}
                (Err(e), Some(w)) => assert!(e.contains(w), "{e} lacks {w}"),
                (got, want) => panic!("{messages}: got {got:?}, wanted {want:?}"),
            }
        }
        let no_tools = json!({"model": "m", "messages": [user], "parallel_tool_calls": false});
        assert!(check(ProviderFamily::Openai, &no_tools).is_err());
    }

    #[test]
    fn anthropic_rules() {
        let user = json!({"role": "user", "content": "hi"});
        let call = json!({"role": "assistant", "content": [
            {"type": "text", "text": "ok"},
            {"type": "tool_use", "id": "a", "name": "f", "input": {}},
            {"type": "tool_use", "id": "b", "name": "f", "input": {}}]});
        let results = |ids: &[&str]| {
            let blocks: Vec<Value> = ids
                .iter()
                .map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": "x"}))
                .collect();
            json!({"role": "user", "content": blocks})
        };
        let cases = [
            (json!([user, call, results(&["a", "b"])]), None),
            (
                json!([user, call, results(&["a"])]),
                Some("immediately after: b"),
            ),
            (json!([user, call, user]), Some("immediately after: a, b")),
            (json!([user, call]), Some("immediately after: a, b")),
            (
                json!([user, results(&["a"])]),
                Some("unexpected `tool_use_id`"),
            ),
            (
                json!([user, call, results(&["a", "b", "c"])]),
                Some("content.2"),
            ),
        ];
        for (messages, want) in cases {
            let body = json!({"model": "m", "max_tokens": 10, "messages": messages});
            match (check(ProviderFamily::Anthropic, &body), want) {
                (Ok(()), None) => {}
                (Err(e), Some(w)) => assert!(e.contains(w), "{e} lacks {w}"),
                (got, want) => panic!("{messages}: got {got:?}, wanted {want:?}"),
            }
        }
        let no_max = json!({"model": "m", "messages": [user]});
        assert!(check(ProviderFamily::Anthropic, &no_max).is_err());
    }
}
