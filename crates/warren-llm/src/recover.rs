//! Tool calls written as text by models without native tool calling (rules §6.1 step 3):
//! `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` blocks and fenced JSON blocks
//! (```` ```json ````) holding `{"name", "arguments"}`. Only registered tool names count; any
//! block that is not entirely made of valid calls to registered tools stays text.

use crate::types::ToolCall;
use serde_json::{Map, Value};

/// Calls found in a text, and the text without them.
#[derive(Debug, Clone, PartialEq)]
pub struct Recovered {
    /// The recovered calls in text order, with ids `<id_prefix>1`, `<id_prefix>2`, ...
    pub calls: Vec<ToolCall>,
    /// The text with every recovered block removed (trimmed).
    pub text: String,
}

const OPEN_TAG: &str = "<tool_call>";
const CLOSE_TAG: &str = "</tool_call>";
const FENCE: &str = "```";

/// Extracts the tool calls written in `text` for the tools named in `registered`. Ids are
/// `id_prefix` followed by a 1-based counter, so callers make them unique per round.
pub fn recover_tool_calls(text: &str, registered: &[&str], id_prefix: &str) -> Recovered {
    let mut calls = Vec::new();
    let mut kept = String::with_capacity(text.len());
    let mut pos = 0;
    while pos < text.len() {
        let rest = &text[pos..];
        let tag = rest.find(OPEN_TAG);
        let fence = rest.find(FENCE);
        let (start, is_tag) = match (tag, fence) {
            (Some(t), Some(f)) if t < f => (t, true),
            (Some(t), None) => (t, true),
            (_, Some(f)) => (f, false),
            (None, None) => break,
        };
        let block_start = pos + start;
        let (block_end, found) = if is_tag {
            tag_block(text, block_start, registered)
        } else {
            fence_block(text, block_start, registered)
        };
        kept.push_str(&text[pos..block_start]);
        match found {
            Some(found) => {
                for (name, arguments) in found {
                    calls.push(ToolCall {
                        id: format!("{id_prefix}{}", calls.len() + 1),
                        name,
                        arguments,
                    });
                }
            }
            None => kept.push_str(&text[block_start..block_end]),
        }
        pos = block_end;
    }
    if pos < text.len() {
        kept.push_str(&text[pos..]);
    }
    let text = if calls.is_empty() {
        text.to_string()
    } else {
        kept.trim().to_string()
    };
    Recovered { calls, text }
}

type Found = Option<Vec<(String, Value)>>;

/// `<tool_call>...</tool_call>`, or an unclosed tag running to the end of the text (models often
/// stop on the closing tag). Returns the block's end and its calls.
fn tag_block(text: &str, start: usize, registered: &[&str]) -> (usize, Found) {
    let inner_start = start + OPEN_TAG.len();
    let (inner_end, end) = match text[inner_start..].find(CLOSE_TAG) {
        Some(i) => (inner_start + i, inner_start + i + CLOSE_TAG.len()),
        None => (text.len(), text.len()),
    };
    let mut inner = text[inner_start..inner_end].trim();
    // a fenced block inside the tags
    if let Some(body) = inner
        .strip_prefix(FENCE)
        .and_then(|b| b.strip_suffix(FENCE))
    {
        inner = body.split_once('\n').map(|(_, b)| b).unwrap_or(body);
    }
    (end, parse_calls(inner, registered, false))
}

/// A fenced block whose info string is empty, `json` or `tool_call`. An unclosed fence is text.
fn fence_block(text: &str, start: usize, registered: &[&str]) -> (usize, Found) {
    let after = start + FENCE.len();
    let Some(nl) = text[after..].find('\n') else {
        return (text.len(), None);
    };
    let info = text[after..after + nl].trim();
    let body_start = after + nl + 1;
    let Some(close) = text[body_start..].find(FENCE) else {
        return (text.len(), None);
    };
    let end = body_start + close + FENCE.len();
    if !matches!(info, "" | "json" | "tool_call") {
        return (end, None);
    }
    (
        end,
        parse_calls(&text[body_start..body_start + close], registered, true),
    )
}

/// The calls of one block: a call object or an array of them, all valid, else `None`.
fn parse_calls(inner: &str, registered: &[&str], strict: bool) -> Found {
    let v: Value = serde_json::from_str(inner.trim()).ok()?;
    let items = match v {
        Value::Array(a) if !a.is_empty() => a,
        o @ Value::Object(_) => vec![o],
        _ => return None,
    };
    items
        .into_iter()
        .map(|i| one_call(i, registered, strict))
        .collect()
}

/// `{"name", "arguments" | "parameters"}` (also wrapped as `{"type": "function", "function":
/// {...}}`). In fenced blocks (`strict`) the arguments must be present, so that an ordinary
/// JSON example with a `name` key is not taken for a call.
fn one_call(v: Value, registered: &[&str], strict: bool) -> Option<(String, Value)> {
    let Value::Object(mut o) = v else {
        return None;
    };
    if let Some(Value::Object(inner)) = o.get("function").cloned() {
        if o.keys()
            .all(|k| k == "function" || k == "type" || k == "id")
        {
            o = inner;
        }
    }
    if !o.keys().all(|k| {
        matches!(
            k.as_str(),
            "name" | "arguments" | "parameters" | "id" | "type"
        )
    }) {
        return None;
    }
    let name = o.get("name")?.as_str()?.to_string();
    if !registered.contains(&name.as_str()) {
        return None;
    }
    let args = match o.remove("arguments").or_else(|| o.remove("parameters")) {
        Some(a) => a,
        None if strict => return None,
        None => Value::Object(Map::new()),
    };
    let args = match args {
        Value::Object(m) => Value::Object(m),
        Value::String(s) => match serde_json::from_str::<Value>(&s).ok()? {
            Value::Object(m) => Value::Object(m),
            _ => return None,
        },
        Value::Null if !strict => Value::Object(Map::new()),
        _ => return None,
    };
    Some((name, args))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// (text, calls as (name, arguments), text left)
    type Case<'a> = (&'a str, Vec<(&'a str, Value)>, &'a str);

    const TOOLS: &[&str] = &["file_read", "shell"];

    #[test]
    fn recovery_table() {
        // (text, expected calls as (name, args), expected remaining text)
        let cases: Vec<Case> = vec![
            (
                "<tool_call>{\"name\": \"file_read\", \"arguments\": {\"path\": \"a.txt\"}}</tool_call>",
                vec![("file_read", json!({"path": "a.txt"}))],
                "",
            ),
            (
                "Let me look.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>\nDone.",
                vec![("shell", json!({"command": "ls"}))],
                "Let me look.\n\nDone.",
            ),
            (
                "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>",
                vec![],
                "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call>",
            ),
            (
                "```json\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"x\"}}\n```",
                vec![("file_read", json!({"path": "x"}))],
                "",
            ),
            (
                "```\n{\"name\": \"shell\", \"parameters\": {\"command\": \"pwd\"}}\n```",
                vec![("shell", json!({"command": "pwd"}))],
                "",
            ),
            (
                "```json\n{\"name\": \"file_read\", \"description\": \"reads\"}\n```",
                vec![],
                "```json\n{\"name\": \"file_read\", \"description\": \"reads\"}\n```",
            ),
            (
                "```json\n{\"name\": \"file_read\"}\n```",
                vec![],
                "```json\n{\"name\": \"file_read\"}\n```",
            ),
            (
                "```python\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n```",
                vec![],
                "```python\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n```",
            ),
            (
                "<tool_call>{\"name\": \"file_read\", \"arguments\": {\"path\": \"a\"}}</tool_call><tool_call>{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}</tool_call>",
                vec![("file_read", json!({"path": "a"})), ("shell", json!({"command": "ls"}))],
                "",
            ),
            (
                "<tool_call>[{\"name\": \"file_read\", \"arguments\": {\"path\": \"a\"}}, {\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}]</tool_call>",
                vec![("file_read", json!({"path": "a"})), ("shell", json!({"command": "ls"}))],
                "",
            ),
            (
                "<tool_call>[{\"name\": \"file_read\", \"arguments\": {}}, {\"name\": \"nope\", \"arguments\": {}}]</tool_call>",
                vec![],
                "<tool_call>[{\"name\": \"file_read\", \"arguments\": {}}, {\"name\": \"nope\", \"arguments\": {}}]</tool_call>",
            ),
            (
                "<tool_call>{\"name\": \"file_read\", \"arguments\": {\"path\": </tool_call>",
                vec![],
                "<tool_call>{\"name\": \"file_read\", \"arguments\": {\"path\": </tool_call>",
            ),
            (
                "<tool_call>{\"name\": \"shell\", \"arguments\": \"{\\\"command\\\": \\\"ls\\\"}\"}</tool_call>",
                vec![("shell", json!({"command": "ls"}))],
                "",
            ),
            (
                "ok <tool_call>{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}",
                vec![("shell", json!({"command": "ls"}))],
                "ok",
            ),
            (
                "<tool_call>{\"name\": \"shell\"}</tool_call>",
                vec![("shell", json!({}))],
                "",
            ),
            (
                "<tool_call>{\"type\": \"function\", \"function\": {\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}}</tool_call>",
                vec![("shell", json!({"command": "ls"}))],
                "",
            ),
            (
                "{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}",
                vec![],
                "{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}",
            ),
            ("plain answer, no calls", vec![], "plain answer, no calls"),
            (
                "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}",
                vec![],
                "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}",
            ),
            (
                "<tool_call>\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"id\"}}\n```\n</tool_call>",
                vec![("shell", json!({"command": "id"}))],
                "",
            ),
            (
                "<tool_call>{\"name\": \"shell\", \"arguments\": [1, 2]}</tool_call>",
                vec![],
                "<tool_call>{\"name\": \"shell\", \"arguments\": [1, 2]}</tool_call>",
            ),
        ];
        for (text, want, rest) in cases {
            let got = recover_tool_calls(text, TOOLS, "rc_");
            let got_calls: Vec<(&str, Value)> = got
                .calls
                .iter()
                .map(|c| (c.name.as_str(), c.arguments.clone()))
                .collect();
            assert_eq!(got_calls, want, "calls recovered from {text:?}");
            assert_eq!(got.text, rest, "text left from {text:?}");
        }
    }

    #[test]
    fn ids_use_the_prefix_and_count_from_one() {
        let got = recover_tool_calls(
            "<tool_call>{\"name\": \"shell\", \"arguments\": {}}</tool_call>\n```json\n{\"name\": \"file_read\", \"arguments\": {\"path\": \"a\"}}\n```",
            TOOLS,
            "r3_",
        );
        let ids: Vec<&str> = got.calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["r3_1", "r3_2"]);
    }
}
