//! Recording: the session history loaded and stored, the usage of each provider call, the
//! results of a round's tool calls and the turn's end.

use super::calls::CallResult;
use super::{fail, now, Fail, TurnEnv, TurnStatus};
use crate::events::Emitter;
use serde_json::Value;
use warren_llm::{ChatResponse, Message, ToolCall};
use warren_state::sessions::TurnEnd;
use warren_types::{EventKind, TurnFailure};

/// Largest tool output excerpt put in a `tool_result` event.
const EVENT_EXCERPT: usize = 2000;

/// The most of one tool result that enters a model's history (docs/security.md, "Limits");
/// the built-in tools cap their own output lower, this bounds every tool (MCP servers too).
pub const MAX_TOOL_RESULT_BYTES: usize = 1024 * 1024;

/// `s` cut to at most `max` bytes (at a character boundary), saying how much was left out.
pub(super) fn bounded(s: String, max: usize) -> String {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[cut: {} more bytes of {} not shown]",
        &s[..end],
        s.len() - end,
        s.len()
    )
}

fn excerpt(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The session's history as the model reads it.
pub(super) async fn load_history(env: &TurnEnv, session_id: &str) -> Result<Vec<Message>, Fail> {
    let raw = env
        .sessions
        .history(session_id)
        .await
        .map_err(|e| fail(TurnFailure::Storage, e.to_string()))?;
    raw.into_iter()
        .map(|v| {
            serde_json::from_value::<Message>(v).map_err(|e| {
                fail(
                    TurnFailure::Storage,
                    format!("session history is unreadable: {e}"),
                )
            })
        })
        .collect()
}

/// Appends `msgs` to the session's history, as part of turn `turn_id`.
pub(super) async fn persist(
    env: &TurnEnv,
    session_id: &str,
    turn_id: &str,
    msgs: &[Message],
) -> Result<(), Fail> {
    let values: Vec<Value> = msgs
        .iter()
        .map(|m| serde_json::to_value(m).unwrap_or(Value::Null))
        .collect();
    env.sessions
        .append_messages(session_id, turn_id, &values, now(env))
        .await
        .map_err(|e| fail(TurnFailure::Storage, e.to_string()))
}

/// Records the usage of one provider call against the budget agent and emits its `usage`
/// event.
pub(super) async fn usage(
    env: &TurnEnv,
    em: &mut Emitter,
    session_id: &str,
    turn_id: &str,
    response: &ChatResponse,
) -> Result<(), Fail> {
    let (inp, out) = (
        u32::try_from(response.usage.input_tokens).unwrap_or(u32::MAX),
        u32::try_from(response.usage.output_tokens).unwrap_or(u32::MAX),
    );
    env.sessions
        .record_usage(
            &env.budget_agent,
            Some(session_id),
            Some(turn_id),
            &response.provider,
            inp,
            out,
            response.cost_usd,
            now(env),
        )
        .await
        .map_err(|e| fail(TurnFailure::Storage, e.to_string()))?;
    em.emit(EventKind::Usage {
        input_tokens: inp,
        output_tokens: out,
        cost_usd: response.cost_usd,
    });
    Ok(())
}

/// Records a round of tool calls: a `tool_result` event per call (an interrupted call is
/// reported as such), and the assistant's message with the calls' results stored in the
/// history. Returns the round's messages.
pub(super) async fn tool_round(
    env: &TurnEnv,
    em: &mut Emitter,
    session_id: &str,
    turn_id: &str,
    text: String,
    calls: &[ToolCall],
    results: Vec<Result<CallResult, Option<String>>>,
) -> Result<Vec<Message>, Fail> {
    let mut round = vec![Message::Assistant {
        text,
        tool_calls: calls.to_vec(),
    }];
    for (call, r) in calls.iter().zip(results) {
        let (ok, mut content, receipt, duration_ms, sub_turn) = match r {
            Ok(r) => (r.ok, r.content, r.receipt, r.duration_ms, r.sub_turn),
            Err(sub_turn) => (
                false,
                "interrupted: the turn was cancelled before this call finished".to_string(),
                None,
                0,
                sub_turn,
            ),
        };
        // What a tool returned enters the model's history without any secret Warren holds
        // (a SubAgent's provider error echoing its key, a command printing one).
        content = bounded(content, MAX_TOOL_RESULT_BYTES);
        warren_types::redact::redact_string(&mut content);
        em.emit(EventKind::ToolResult {
            id: call.id.clone(),
            ok,
            output: excerpt(&content, EVENT_EXCERPT),
            duration_ms,
            receipt_id: receipt,
            sub_turn_id: sub_turn,
        });
        round.push(Message::Tool {
            call_id: call.id.clone(),
            name: call.name.clone(),
            content,
            is_error: !ok,
        });
    }
    persist(env, session_id, turn_id, &round).await?;
    Ok(round)
}

/// Records how the turn ended and stores the events not yet stored; a failure here is
/// logged (the turn's outcome stands).
pub(super) async fn end(
    env: &TurnEnv,
    em: Emitter,
    turn_id: &str,
    status: &TurnStatus,
    text: &str,
) {
    let agent = &env.tools.policy.alias;
    let (st, code) = match status {
        TurnStatus::Completed => ("completed", None),
        TurnStatus::Cancelled => ("cancelled", None),
        TurnStatus::Failed { code, .. } => ("failed", Some(code.as_str())),
    };
    let end = TurnEnd {
        turn_id: turn_id.to_string(),
        status: st.to_string(),
        final_text: (!text.is_empty()).then(|| text.to_string()),
        error_code: code.map(str::to_string),
        at: now(env),
    };
    let (row, events) = em.finish(&end).await;
    if let Err(e) = row {
        tracing::error!(agent = %agent, "recording the end of turn {turn_id} failed: {e}");
    }
    if let Err(e) = events {
        tracing::error!(agent = %agent, "storing the events of turn {turn_id} failed: {e}");
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;

    #[test]
    fn a_tool_result_is_cut_at_a_character_boundary_and_says_so() {
        assert_eq!(bounded("short".into(), 10), "short");
        let s = "é".repeat(10); // 20 bytes
        let cut = bounded(s, 5);
        assert!(
            cut.starts_with("éé\n[cut: 16 more bytes of 20 not shown]"),
            "{cut}"
        );
        let big = "x".repeat(MAX_TOOL_RESULT_BYTES + 7);
        let cut = bounded(big, MAX_TOOL_RESULT_BYTES);
        assert!(cut.len() < MAX_TOOL_RESULT_BYTES + 64);
        assert!(
            cut.ends_with("[cut: 7 more bytes of 1048583 not shown]"),
            "{}",
            &cut[cut.len() - 60..]
        );
    }
}
