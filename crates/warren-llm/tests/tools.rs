//! Native tool calls: one, two, with text, streamed and one-shot; the tool specs on the wire.

use crate::common::*;
use serde_json::json;
use warren_llm::{ProviderFamily, StopReason, StreamEvent};
use warren_testkit::fake_llm::{Reply, ScriptedCall};

async fn one_tool_call(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::tool_call(
        "file_read",
        json!({"path": "notes/a.txt"}),
    ));
    let (res, events) = chat(&route_to(&fake), &with_tools()).await;
    let resp = res.unwrap();
    assert_eq!(resp.stop_reason, StopReason::ToolUse);
    assert_eq!(resp.text, "");
    assert_eq!(resp.tool_calls.len(), 1);
    let call = &resp.tool_calls[0];
    assert_eq!(call.name, "file_read");
    assert_eq!(call.arguments, json!({"path": "notes/a.txt"}));
    assert!(!call.id.is_empty());

    let stream = stream_events(&events);
    assert!(stream.iter().any(|e| matches!(e,
        StreamEvent::ToolCallStarted { index: 0, name, id } if name == "file_read" && *id == call.id)));
    let args: String = stream
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallArgsDelta { index: 0, delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    let parsed: serde_json::Value = serde_json::from_str(&args).unwrap();
    assert_eq!(parsed, call.arguments);

    let body = &fake.requests()[0].body;
    match f {
        ProviderFamily::Anthropic => {
            assert_eq!(body["tools"][0]["name"], "file_read");
            assert_eq!(
                body["tools"][0]["input_schema"]["required"],
                json!(["path"])
            );
        }
        _ => {
            assert_eq!(body["tools"][1]["type"], "function");
            assert_eq!(body["tools"][1]["function"]["name"], "shell");
            assert_eq!(body["tools"][1]["function"]["parameters"]["type"], "object");
        }
    }
}

async fn two_tool_calls(f: ProviderFamily) {
    for stream in [true, false] {
        let fake = fake(f);
        fake.push(Reply::tool_calls([
            ("file_read", json!({"path": "a"})),
            ("shell", json!({"command": "ls -la"})),
        ]));
        let mut req = with_tools();
        req.stream = stream;
        let (res, events) = chat(&route_to(&fake), &req).await;
        let resp = res.unwrap();
        let names: Vec<&str> = resp.tool_calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["file_read", "shell"], "stream={stream}");
        assert_eq!(resp.tool_calls[1].arguments, json!({"command": "ls -la"}));
        assert_ne!(resp.tool_calls[0].id, resp.tool_calls[1].id);
        let started: Vec<usize> = stream_events(&events)
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallStarted { index, .. } => Some(*index),
                _ => None,
            })
            .collect();
        assert_eq!(started, [0, 1], "stream={stream}");
    }
}

async fn text_then_tool_call(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::text_and_calls(
        "Let me check the file.",
        [("file_read", json!({"path": "x"}))],
    ));
    let (res, events) = chat(&route_to(&fake), &with_tools()).await;
    let resp = res.unwrap();
    assert_eq!(resp.text, "Let me check the file.");
    assert_eq!(resp.tool_calls.len(), 1);
    assert_eq!(resp.stop_reason, StopReason::ToolUse);
    // text streamed before the call started
    let stream = stream_events(&events);
    let first_text = stream
        .iter()
        .position(|e| matches!(e, StreamEvent::TextDelta { .. }));
    let first_call = stream
        .iter()
        .position(|e| matches!(e, StreamEvent::ToolCallStarted { .. }));
    assert!(first_text.unwrap() < first_call.unwrap());
}

async fn provider_call_ids_are_kept(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::scripted_calls(
        "",
        vec![ScriptedCall {
            id: Some("vendor_id_42".into()),
            name: "shell".into(),
            arguments: json!({"command": "pwd"}),
        }],
    ));
    let (res, _) = chat(&route_to(&fake), &with_tools()).await;
    assert_eq!(res.unwrap().tool_calls[0].id, "vendor_id_42");
}

async fn tool_call_without_arguments(f: ProviderFamily) {
    let fake = fake(f);
    fake.push(Reply::tool_call("shell", json!({})));
    let (res, _) = chat(&route_to(&fake), &with_tools()).await;
    assert_eq!(res.unwrap().tool_calls[0].arguments, json!({}));
}

per_family!(
    one_tool_call,
    two_tool_calls,
    text_then_tool_call,
    provider_call_ids_are_kept,
    tool_call_without_arguments,
);
