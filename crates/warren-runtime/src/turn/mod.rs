//! The turn loop (rules §6.1): one user prompt, as many provider rounds and tool calls as the
//! model needs, within the agent's policy, budgets and iteration cap. The same loop serves
//! `warren run`, the desktop chat, cron and ACP.
//!
//! Its environment is built by the turn [`kit`], for a top-level turn and for a SubAgent's
//! alike; the [`delegate`] tool runs a SubAgent's turn through that kit, so the two call each
//! other (a turn's tool builds a child turn): that recursion is kept in this folder.

mod budget;
mod calls;
pub mod delegate;
pub mod kit;
mod record;
mod round;

use crate::approval::AsyncApprover;
use crate::events::{Emitter, EventHub};
use crate::mcp::McpSet;
use budget::Limits;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use warren_llm::{Message, Route};
use warren_memory::{Memory, RecallQuery};
use warren_state::receipts::ReceiptLog;
use warren_state::sessions::SessionStore;
use warren_tools::{Registry, ToolContext};
use warren_types::{EventKind, NoticeCode, TurnFailure};

/// Everything a turn needs, built by the host from the config.
#[derive(Clone)]
pub struct TurnEnv {
    /// The agent's provider route.
    pub route: Route,
    /// The tools.
    pub registry: Arc<Registry>,
    /// The MCP servers whose tools are in the registry (and those that failed to start).
    pub mcp: McpSet,
    /// The agent's policy, sandbox, ledger and clock.
    pub tools: ToolContext,
    /// The agent's memory (None: memory reported unavailable).
    pub memory: Option<Arc<dyn Memory>>,
    /// Sessions, history, events and usage.
    pub sessions: SessionStore,
    /// Receipt chains.
    pub receipts: Arc<ReceiptLog>,
    /// Who answers approvals.
    pub approver: Arc<dyn AsyncApprover>,
    /// Where events are published.
    pub hub: EventHub,
    /// The system prompt.
    pub system_prompt: String,
    /// Whose cost budget the turn spends and whose usage ledger it feeds: the agent itself, or
    /// for a SubAgent the delegating agent (child and parent share one budget).
    pub budget_agent: String,
}

/// One prompt to run.
#[derive(Debug, Clone)]
pub struct TurnInput {
    /// The session it belongs to.
    pub session_id: String,
    /// The prompt.
    pub prompt: String,
    /// Who or what started it.
    pub trigger: warren_types::TurnTrigger,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnStatus {
    /// With a final answer.
    Completed,
    /// With an error code and message.
    Failed {
        /// Why.
        code: TurnFailure,
        /// Message.
        message: String,
    },
    /// Cancelled by the user (or shutdown).
    Cancelled,
}

/// The result of [`run_turn`].
#[derive(Debug, Clone)]
pub struct TurnOutcome {
    /// The turn id.
    pub turn_id: String,
    /// How it ended.
    pub status: TurnStatus,
    /// The final text (empty unless completed).
    pub text: String,
}

struct Fail(TurnFailure, String);

fn fail(code: TurnFailure, message: impl Into<String>) -> Fail {
    Fail(code, message.into())
}

fn now(env: &TurnEnv) -> chrono::DateTime<chrono::Utc> {
    env.tools.clock.now().into()
}

/// Runs one turn to its end and returns how it ended. Every event is published and stored;
/// the session history gains the user message and every completed round, never a rejected
/// response.
pub fn run_turn(
    env: &TurnEnv,
    input: TurnInput,
    cancel: CancellationToken,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = TurnOutcome> + Send + '_>> {
    let turn_id = uuid::Uuid::new_v4().to_string();
    let span = tracing::info_span!("turn", agent = %env.tools.policy.alias, turn = %turn_id);
    Box::pin(run_turn_inner(env, input, cancel, turn_id).instrument(span))
}

async fn run_turn_inner(
    env: &TurnEnv,
    input: TurnInput,
    cancel: CancellationToken,
    turn_id: String,
) -> TurnOutcome {
    let agent = env.tools.policy.alias.clone();
    let mut em = Emitter::new(
        &turn_id,
        &agent,
        env.hub.clone(),
        env.sessions.clone(),
        env.tools.clock.clone(),
    );
    if let Err(e) = env
        .sessions
        .start_turn(
            &turn_id,
            &input.session_id,
            &agent,
            &input.trigger,
            &input.prompt,
            now(env),
        )
        .await
    {
        em.emit(EventKind::TurnFailed {
            code: TurnFailure::Storage,
            message: e.to_string(),
        });
        let _ = em.flush().await;
        return TurnOutcome {
            turn_id,
            status: TurnStatus::Failed {
                code: TurnFailure::Storage,
                message: e.to_string(),
            },
            text: String::new(),
        };
    }
    em.emit(EventKind::TurnStarted {
        session_id: input.session_id.clone(),
        trigger: input.trigger.clone(),
        prompt: input.prompt.clone(),
    });
    let timeout = Duration::from_secs(u64::from(env.tools.policy.runtime.turn_timeout_secs.max(1)));
    // The tool calls' token: fired with the turn's, or alone when the turn times out.
    let tool_cancel = cancel.child_token();
    let result = tokio::select! {
        r = turn_body(env, &input, &mut em, &turn_id, &tool_cancel, &cancel) => r,
        () = tokio::time::sleep(timeout) => {
            tool_cancel.cancel();
            Err(fail(TurnFailure::TurnTimeout, format!("the turn exceeded turn_timeout_secs ({}s)", timeout.as_secs())))
        }
    };
    let (status, text) = match result {
        Ok(Some(text)) => {
            em.emit(EventKind::TurnCompleted { text: text.clone() });
            (TurnStatus::Completed, text)
        }
        Ok(None) => {
            em.emit(EventKind::TurnCancelled {});
            (TurnStatus::Cancelled, String::new())
        }
        Err(Fail(code, message)) => {
            em.emit(EventKind::TurnFailed {
                code,
                message: message.clone(),
            });
            (TurnStatus::Failed { code, message }, String::new())
        }
    };
    if let Err(e) = env.receipts.anchor_pending().await {
        tracing::error!(agent = %env.tools.policy.alias, "raising the receipt anchor failed: {e}");
    }
    record::end(env, em, &turn_id, &status, &text).await;
    TurnOutcome {
        turn_id,
        status,
        text,
    }
}

/// The loop: the history and the prompt in, then rounds until the model answers without a
/// tool call, the iteration cap is reached, a limit stops the turn or it is cancelled. Each
/// round is its steps: the budget, the model round, the tool calls and the recording.
///
/// Ok(Some(text)) completed, Ok(None) cancelled, Err failed.
async fn turn_body(
    env: &TurnEnv,
    input: &TurnInput,
    em: &mut Emitter,
    turn_id: &str,
    tool_cancel: &warren_tools::CancelToken,
    cancel: &CancellationToken,
) -> Result<Option<String>, Fail> {
    let session = input.session_id.as_str();
    let mut history = record::load_history(env, session).await?;
    let user = Message::user(input.prompt.clone());
    record::persist(env, session, turn_id, std::slice::from_ref(&user)).await?;
    history.push(user);
    let system = system_prompt(env, &input.prompt, em).await;

    let mut ctx = env.tools.clone();
    ctx.cancel = tool_cancel.clone();
    report_mcp_failures(env, em);
    let mut specs = tool_specs(env, &ctx);
    let limits = Limits::of(env, em);
    let mut approved_for_session = env.sessions.session_approvals(session);
    let mut call_ids = std::collections::HashSet::new();
    for iteration in 1..=limits.max_iter + 1 {
        let at_cap = limits.at_cap(iteration);
        limits.check_spend(env).await?;
        let req = round::request(&system, &history, &specs, &limits, at_cap);
        let Some(response) = round::call_model(env, em, &req, iteration, cancel).await? else {
            return Ok(None);
        };
        record::usage(env, em, session, turn_id, &response).await?;
        let (text, mut calls) = round::answer(response, &specs, turn_id, iteration, at_cap);
        round::unique_ids(&mut calls, &mut call_ids);
        if at_cap || calls.is_empty() {
            let final_text = if at_cap { limits.capped(&text) } else { text };
            record::persist(
                env,
                session,
                turn_id,
                &[Message::assistant(final_text.clone())],
            )
            .await?;
            return Ok(Some(final_text));
        }
        limits.check_calls(&calls)?;
        let results = calls::run_calls(
            env,
            &ctx,
            em,
            turn_id,
            &calls,
            &mut approved_for_session,
            cancel,
        )
        .await;
        env.sessions
            .set_session_approvals(session, &approved_for_session);
        let interrupted = results.iter().any(Result::is_err);
        let round = record::tool_round(env, em, session, turn_id, text, &calls, results).await?;
        history.extend(round);
        // A server that stopped during the round is reported and its tools withdrawn.
        if report_mcp_failures(env, em) {
            specs = tool_specs(env, &ctx);
        }
        if interrupted || cancel.is_cancelled() {
            return Ok(None);
        }
    }
    Err(fail(
        TurnFailure::Internal,
        "the turn loop ended without an answer",
    ))
}

/// The most of one memory row's content that enters the system prompt (docs/security.md,
/// "Limits").
pub const MAX_PROMPT_MEMORY_ROW: usize = 4096;
/// The most of a memory key that enters the system prompt.
const MAX_PROMPT_MEMORY_KEY: usize = 256;

async fn system_prompt(env: &TurnEnv, prompt: &str, em: &mut Emitter) -> String {
    let mut system = env.system_prompt.clone();
    let Some(memory) = &env.memory else {
        return system;
    };
    match memory
        .recall(&RecallQuery {
            query: prompt.to_string(),
            limit: 5,
            category: None,
            session: None,
        })
        .await
    {
        Ok(rows) if !rows.is_empty() => {
            system.push_str("\n\nRelevant memory:\n");
            for r in rows {
                let who = if r.agent == env.tools.policy.alias {
                    String::new()
                } else {
                    format!("[{}] ", r.agent)
                };
                // A row enters the prompt bounded (a grantee's 8 MiB row would otherwise go in
                // whole); `memory_recall` shows it in full, within the tool-result bound.
                let key = record::bounded(r.key, MAX_PROMPT_MEMORY_KEY);
                let content = record::bounded(r.content, MAX_PROMPT_MEMORY_ROW);
                system.push_str(&format!("- {who}{key}: {content}\n"));
            }
        }
        Ok(_) => {}
        Err(e) => em.emit(EventKind::Notice {
            code: NoticeCode::MemoryUnavailable,
            message: format!("memory is unavailable for this turn: {e}"),
        }),
    }
    system
}

/// The specs of the tools offered now, for the model.
fn tool_specs(env: &TurnEnv, ctx: &ToolContext) -> Vec<warren_llm::ToolSpec> {
    env.registry
        .specs_for(ctx)
        .into_iter()
        .map(|s| warren_llm::ToolSpec {
            name: s.name.into_owned(),
            description: s.description.into_owned(),
            parameters: s.parameters,
        })
        .collect()
}

/// Emits one `mcp_server_failed` notice per MCP server that failed to start or stopped since
/// the last look; true when there was one.
fn report_mcp_failures(env: &TurnEnv, em: &mut Emitter) -> bool {
    let failed = env.mcp.take_failures();
    for (server, message) in &failed {
        em.emit(EventKind::Notice {
            code: NoticeCode::McpServerFailed,
            message: format!(
                "MCP server `{server}`: {message}; its tools are not available in this turn"
            ),
        });
    }
    !failed.is_empty()
}
