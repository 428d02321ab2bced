//! The model round: one request to the agent's route, streamed into the turn's events with
//! its attempts and fallbacks, and the answer read as text and tool calls.

use super::budget::Limits;
use super::{fail, Fail, TurnEnv};
use crate::events::Emitter;
use tokio_util::sync::CancellationToken;
use warren_llm::{
    ChatRequest, ChatResponse, LlmError, Message, RouteEvent, StreamEvent, ToolCall, ToolSpec,
};
use warren_types::{EventKind, NoticeCode};

/// The request of one round: the system prompt, the history and the tools offered; past the
/// cap, tools stay listed but calling them is forbidden and the model is asked to summarise.
pub(super) fn request(
    system: &str,
    history: &[Message],
    specs: &[ToolSpec],
    limits: &Limits,
    at_cap: bool,
) -> ChatRequest {
    let mut req = ChatRequest::new(system.to_owned(), history.to_vec()).with_tools(specs.to_vec());
    if at_cap {
        req.forbid_tool_calls = true;
        req.messages.push(Message::user(format!(
            "You have reached the limit of {} tool rounds for this turn. Do not call tools; summarise what was done and what remains.",
            limits.max_iter
        )));
    } else {
        req.single_tool = limits.single_tool;
    }
    req
}

/// Sends `req` over the route: each attempt is a `model_request` event, a failed entry that
/// falls back a notice, streamed text a `text_delta`. None when the turn was cancelled first.
pub(super) async fn call_model(
    env: &TurnEnv,
    em: &mut Emitter,
    req: &ChatRequest,
    iteration: u32,
    cancel: &CancellationToken,
) -> Result<Option<ChatResponse>, Fail> {
    let response = {
        let mut on_event = |ev: RouteEvent| match ev {
            RouteEvent::Attempt { entry, attempt, .. } => em.emit(EventKind::ModelRequest {
                route_entry: entry,
                attempt,
                iteration,
            }),
            RouteEvent::AttemptFailed {
                code,
                message,
                falls_back: true,
                ..
            } => em.emit(EventKind::Notice {
                code: NoticeCode::ProviderFallback,
                message: format!("{message} ({code}); trying the next route entry"),
            }),
            RouteEvent::Stream(StreamEvent::TextDelta { text }) => {
                em.emit(EventKind::TextDelta { text });
            }
            _ => {}
        };
        tokio::select! {
            r = env.route.chat(req, &mut on_event) => r,
            () = cancel.cancelled() => return Ok(None),
        }
    };
    response
        .map(Some)
        .map_err(|e: LlmError| fail(e.code().into(), e.to_string()))
}

/// The answer's text and the tool calls to run. Below the cap, a response without native
/// calls may carry calls written in its text: those are recovered (with ids naming the turn
/// and the round) and taken out of the text.
pub(super) fn answer(
    response: ChatResponse,
    specs: &[ToolSpec],
    turn_id: &str,
    iteration: u32,
    at_cap: bool,
) -> (String, Vec<ToolCall>) {
    let mut calls = response.tool_calls;
    let mut text = response.text;
    if calls.is_empty() && !at_cap {
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        // The turn's id in the prefix keeps recovered ids apart across the turns of a
        // session and across agents waiting for approval at once.
        let short: String = turn_id.chars().filter(|c| *c != '-').take(8).collect();
        let recovered =
            warren_llm::recover_tool_calls(&text, &names, &format!("text-{short}-{iteration}-"));
        if !recovered.calls.is_empty() {
            calls = recovered.calls;
            text = recovered.text;
        }
    }
    (text, calls)
}

/// Makes every call id of the turn unique: a model chooses the ids that key approvals, events
/// and ACP announcements, so a repeated (or empty) id is renamed (`<id>~2`, ...) before the call
/// goes anywhere. The renamed id is the one the model sees in the round's history, so its
/// results still pair with its calls.
pub(super) fn unique_ids(calls: &mut [ToolCall], seen: &mut std::collections::HashSet<String>) {
    for c in calls {
        if c.id.is_empty() {
            c.id = "call".to_string();
        }
        if seen.contains(&c.id) {
            let base = c.id.clone();
            let mut n = 2u32;
            while seen.contains(&format!("{base}~{n}")) {
                n += 1;
            }
            c.id = format!("{base}~{n}");
        }
        seen.insert(c.id.clone());
    }
}
