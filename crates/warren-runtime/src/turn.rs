//! The turn loop (rules §6.1): one user prompt, as many provider rounds and tool calls as the
//! model needs, within the agent's policy, budgets and iteration cap. The same loop serves
//! `warren run`, the desktop chat, cron and ACP.

use crate::approval::{AsyncApprover, PendingApproval};
use crate::events::{Emitter, EventHub};
use crate::mcp::McpSet;
use crate::receipts::ReceiptLog;
use crate::sessions::SessionStore;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use warren_llm::{ChatRequest, LlmError, Message, Route, RouteEvent, StreamEvent, ToolCall};
use warren_memory::{Memory, RecallQuery};
use warren_tools::{CallIdentity, Permit, Prepared, Registry, ToolContext, ToolError};
use warren_types::{ApprovalDecision, EventKind, NoticeCode, ToolErrorCode, TurnFailure};

/// Largest tool output excerpt put in a `tool_result` event.
const EVENT_EXCERPT: usize = 2000;

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

struct CallResult {
    interrupted: bool,
    ok: bool,
    content: String,
    receipt: Option<String>,
    duration_ms: u32,
    /// The SubAgent turn a `delegate` call ran.
    sub_turn: Option<String>,
}

fn now(env: &TurnEnv) -> chrono::DateTime<chrono::Utc> {
    env.tools.clock.now().into()
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
    let (st, code) = match &status {
        TurnStatus::Completed => ("completed", None),
        TurnStatus::Cancelled => ("cancelled", None),
        TurnStatus::Failed { code, .. } => ("failed", Some(code.as_str())),
    };
    let final_text = (!text.is_empty()).then_some(text.as_str());
    if let Err(e) = env
        .sessions
        .finish_turn(&turn_id, st, final_text, code, now(env))
        .await
    {
        tracing::error!(agent = %agent, "recording the end of turn {turn_id} failed: {e}");
    }
    if let Err(e) = em.flush().await {
        tracing::error!(agent = %agent, "storing the events of turn {turn_id} failed: {e}");
    }
    TurnOutcome {
        turn_id,
        status,
        text,
    }
}

async fn load_history(env: &TurnEnv, session_id: &str) -> Result<Vec<Message>, Fail> {
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

async fn persist(
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
                system.push_str(&format!("- {who}{}: {}\n", r.key, r.content));
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

/// Ok(Some(text)) completed, Ok(None) cancelled, Err failed.
async fn turn_body(
    env: &TurnEnv,
    input: &TurnInput,
    em: &mut Emitter,
    turn_id: &str,
    tool_cancel: &warren_tools::CancelToken,
    cancel: &CancellationToken,
) -> Result<Option<String>, Fail> {
    let policy = env.tools.policy.clone();
    let runtime = policy.runtime.clone();
    let mut history = load_history(env, &input.session_id).await?;
    let user = Message::user(input.prompt.clone());
    persist(env, &input.session_id, turn_id, std::slice::from_ref(&user)).await?;
    history.push(user);
    let system = system_prompt(env, &input.prompt, em).await;

    let mut ctx = env.tools.clone();
    ctx.cancel = tool_cancel.clone();
    report_mcp_failures(env, em);
    let mut specs = tool_specs(env, &ctx);
    let single_tool = runtime.single_tool_rounds && env.route.supports_single_tool();
    if runtime.single_tool_rounds && !single_tool {
        em.emit(EventKind::Notice {
            code: NoticeCode::SingleToolRoundsUnsupported,
            message: format!(
                "single-tool rounds are not supported on route {}; this turn uses batch tool calls",
                env.route.references().join(" → ")
            ),
        });
    }
    let mut approved_for_session = env.sessions.session_approvals(&input.session_id);
    let max_iter = runtime.max_tool_iterations.max(1);
    for iteration in 1..=max_iter + 1 {
        let at_cap = iteration > max_iter;
        let cents = env
            .sessions
            .cost_today_cents(&env.budget_agent, now(env))
            .await
            .map_err(|e| {
                fail(
                    TurnFailure::BudgetUnavailable,
                    format!("cannot read today's spend: {e}"),
                )
            })?;
        if cents >= f64::from(runtime.max_cost_per_day_cents) {
            return Err(fail(
                TurnFailure::CostBudgetExceeded,
                format!(
                    "today's spend ({cents:.2}¢) reached max_cost_per_day_cents ({})",
                    runtime.max_cost_per_day_cents
                ),
            ));
        }
        let mut req = ChatRequest::new(system.clone(), history.clone()).with_tools(specs.clone());
        if at_cap {
            req.forbid_tool_calls = true;
            req.messages.push(Message::user(format!(
                "You have reached the limit of {max_iter} tool rounds for this turn. Do not call tools; summarise what was done and what remains."
            )));
        } else {
            req.single_tool = single_tool;
        }
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
                    em.emit(EventKind::TextDelta { text })
                }
                _ => {}
            };
            tokio::select! {
                r = env.route.chat(&req, &mut on_event) => r,
                () = cancel.cancelled() => return Ok(None),
            }
        };
        let response = response.map_err(|e: LlmError| fail(e.code().into(), e.to_string()))?;
        let (inp, out) = (
            u32::try_from(response.usage.input_tokens).unwrap_or(u32::MAX),
            u32::try_from(response.usage.output_tokens).unwrap_or(u32::MAX),
        );
        env.sessions
            .record_usage(
                &env.budget_agent,
                Some(&input.session_id),
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

        let mut calls = response.tool_calls.clone();
        let mut text = response.text.clone();
        if calls.is_empty() && !at_cap {
            let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
            // The turn's id in the prefix keeps recovered ids apart across the turns of a
            // session and across agents waiting for approval at once.
            let short: String = turn_id.chars().filter(|c| *c != '-').take(8).collect();
            let recovered = warren_llm::recover_tool_calls(
                &text,
                &names,
                &format!("text-{short}-{iteration}-"),
            );
            if !recovered.calls.is_empty() {
                calls = recovered.calls;
                text = recovered.text;
            }
        }
        if at_cap || calls.is_empty() {
            let final_text = if at_cap {
                format!("{text}\n\n[Stopped at the cap of {max_iter} tool rounds.]")
            } else {
                text.clone()
            };
            persist(
                env,
                &input.session_id,
                turn_id,
                &[Message::assistant(final_text.clone())],
            )
            .await?;
            return Ok(Some(final_text));
        }
        if single_tool && calls.len() > 1 {
            return Err(fail(
                TurnFailure::MultipleToolCalls,
                format!("the model asked for {} tool calls in one response while single-tool rounds are on; none was run", calls.len()),
            ));
        }
        let results = run_calls(
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
            .set_session_approvals(&input.session_id, &approved_for_session);
        let mut round = vec![Message::Assistant {
            text,
            tool_calls: calls.clone(),
        }];
        let interrupted = results.iter().any(Result::is_err);
        for (call, r) in calls.iter().zip(results) {
            let (ok, content, receipt, duration_ms, sub_turn) = match r {
                Ok(r) => (r.ok, r.content, r.receipt, r.duration_ms, r.sub_turn),
                Err(sub_turn) => (
                    false,
                    "interrupted: the turn was cancelled before this call finished".to_string(),
                    None,
                    0,
                    sub_turn,
                ),
            };
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
        persist(env, &input.session_id, turn_id, &round).await?;
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

/// Prepares calls (the gates and the budget: allowed, ask or denied) on the blocking pool: the
/// checks read the file system and the budget may be a database.
async fn prepare(env: &TurnEnv, ctx: &ToolContext, calls: &[ToolCall]) -> Vec<Prepared> {
    let (registry, ctx, calls) = (env.registry.clone(), ctx.clone(), calls.to_vec());
    let n = calls.len();
    let prepared = tokio::task::spawn_blocking(move || {
        calls
            .iter()
            .map(|c| registry.prepare(&c.name, &c.arguments, &ctx))
            .collect::<Vec<_>>()
    })
    .await;
    match prepared {
        Ok(v) => v,
        Err(e) => (0..n)
            .map(|_| Prepared::Denied {
                error: ToolError::Io {
                    path: "(tool gate)".into(),
                    source: std::io::Error::other(format!("preparing the call failed: {e}")),
                },
                at_check: false,
            })
            .collect(),
    }
}

/// The result of a call that did not run, with the reason for the model.
fn not_run(content: String) -> CallResult {
    CallResult {
        interrupted: false,
        ok: false,
        content,
        receipt: None,
        duration_ms: 0,
        sub_turn: None,
    }
}

/// The calls of a batch that are running, each with its index. Dropped (the turn was
/// cancelled or timed out), it leaves them to finish on their own: their cancel token has
/// fired, so a shell is killed and a SubAgent turn ends recorded as cancelled.
struct Running(JoinSet<(usize, CallResult)>);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.detach_all();
    }
}

impl Running {
    /// Waits until every running call has reported; true unless the turn was cancelled. On
    /// the cancel, the calls' token has fired with the turn's: they get a moment to report
    /// how they ended before the batch is left.
    async fn settle(
        &mut self,
        slots: &mut [Option<CallResult>],
        cancel: &CancellationToken,
    ) -> bool {
        let mut put = |joined: Result<(usize, CallResult), tokio::task::JoinError>| match joined {
            Ok((i, r)) => slots[i] = Some(r),
            Err(e) => tracing::error!("a tool call ended abnormally: {e}"),
        };
        loop {
            tokio::select! {
                next = self.0.join_next() => match next {
                    Some(joined) => put(joined),
                    None => return !cancel.is_cancelled(),
                },
                () = cancel.cancelled() => break,
            }
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while let Ok(Some(joined)) = tokio::time::timeout_at(deadline, self.0.join_next()).await {
            put(joined);
        }
        false
    }
}

async fn run_calls(
    env: &TurnEnv,
    ctx: &ToolContext,
    em: &mut Emitter,
    turn_id: &str,
    calls: &[ToolCall],
    approved_for_session: &mut Vec<String>,
    cancel: &CancellationToken,
) -> Vec<Result<CallResult, Option<String>>> {
    for c in calls {
        em.emit(EventKind::ToolCall {
            id: c.id.clone(),
            name: c.name.clone(),
            arguments: c.arguments.to_string(),
        });
    }
    // Every call is prepared once, before any runs: its answer (allowed, ask, denied) is what
    // the loop acts on, and a call that asks is asked about once.
    let mut prepared: Vec<Option<Prepared>> = prepare(env, ctx, calls)
        .await
        .into_iter()
        .map(Some)
        .collect();
    // Only calls that need no question run in parallel: one whose check failed is prepared
    // again right before it runs, after the calls before it.
    let parallel = ctx.policy.runtime.parallel_tools
        && calls.iter().zip(&prepared).all(|(c, p)| match p {
            Some(Prepared::Allowed(_)) => true,
            Some(Prepared::Ask { .. }) => approved_for_session.contains(&c.name),
            Some(Prepared::Denied { at_check, .. }) => !at_check,
            None => false,
        });
    let mut slots: Vec<Option<CallResult>> = (0..calls.len()).map(|_| None).collect();
    let mut running = Running(JoinSet::new());
    let mut unrun: Vec<Permit> = Vec::new();
    if parallel {
        for (i, c) in calls.iter().enumerate() {
            let permit = match prepared[i].take() {
                Some(Prepared::Allowed(p)) => p,
                // Approved for the session (checked above).
                Some(Prepared::Ask { permit, .. }) => permit.approve(),
                Some(Prepared::Denied { error, .. }) => {
                    slots[i] = Some(not_run(error.to_json().to_string()));
                    continue;
                }
                None => continue,
            };
            spawn_call(&mut running, env, ctx, turn_id, c.clone(), i, permit);
        }
        running.settle(&mut slots, cancel).await;
    } else {
        for (i, c) in calls.iter().enumerate() {
            if cancel.is_cancelled() {
                break;
            }
            let verdict = match prepared[i].take() {
                Some(Prepared::Denied { .. }) | None => {
                    // Refused or unjudged when the batch was scanned: the calls before it have
                    // run now, so it is prepared again (what it needs may exist, a budget unit
                    // may have been given back).
                    let mut again = prepare(env, ctx, std::slice::from_ref(c)).await;
                    match again.pop() {
                        Some(p) => p,
                        None => continue,
                    }
                }
                Some(p) => p,
            };
            let permit = match verdict {
                Prepared::Allowed(p) => p,
                Prepared::Denied { error, .. } => {
                    slots[i] = Some(not_run(error.to_json().to_string()));
                    continue;
                }
                // A tool approved for the session runs without a question.
                Prepared::Ask { permit, .. } if approved_for_session.contains(&c.name) => {
                    permit.approve()
                }
                Prepared::Ask { permit, reason } => {
                    let req = PendingApproval {
                        agent: ctx.policy.alias.clone(),
                        turn_id: turn_id.to_string(),
                        call_id: c.id.clone(),
                        tool: c.name.clone(),
                        arguments: c.arguments.to_string(),
                        reason: reason.clone(),
                    };
                    // Registered before it is announced: an answer sent on the announcement
                    // always finds it.
                    let wait = env.approver.register(req);
                    em.emit(EventKind::ApprovalRequested {
                        id: c.id.clone(),
                        tool: c.name.clone(),
                        arguments: c.arguments.to_string(),
                        reason,
                    });
                    let answer = tokio::select! {
                        a = wait => a,
                        () = cancel.cancelled() => {
                            unrun.push(permit);
                            break;
                        }
                    };
                    em.emit(EventKind::ApprovalResolved {
                        id: c.id.clone(),
                        decision: answer.decision,
                        message: answer.message.clone(),
                    });
                    match answer.decision {
                        ApprovalDecision::Deny => {
                            let why = match (&answer.message, answer.no_one_to_ask) {
                                (Some(m), true) => m.clone(),
                                (Some(m), false) => format!("the user denied this call: {m}"),
                                (None, _) => "the user denied this call".to_string(),
                            };
                            slots[i] = Some(not_run(why));
                            // Its budget unit goes back.
                            release(permit).await;
                            continue;
                        }
                        ApprovalDecision::ApproveSession => {
                            approved_for_session.push(c.name.clone())
                        }
                        ApprovalDecision::ApproveOnce => {}
                    }
                    permit.approve()
                }
            };
            spawn_call(&mut running, env, ctx, turn_id, c.clone(), i, permit);
            if !running.settle(&mut slots, cancel).await {
                break;
            }
        }
    }
    // Calls prepared but never run (the turn was cancelled) give their budget units back.
    unrun.extend(prepared.into_iter().flatten().filter_map(|p| match p {
        Prepared::Allowed(p) | Prepared::Ask { permit: p, .. } => Some(p),
        Prepared::Denied { .. } => None,
    }));
    if !unrun.is_empty() {
        release_all(unrun).await;
    }
    // A call cut off by the cancel (or never run) is reported as interrupted; one that ran a
    // SubAgent turn still names it, so a replay nests the cancelled child.
    slots
        .into_iter()
        .map(|r| match r {
            Some(r) if r.interrupted && cancel.is_cancelled() => Err(r.sub_turn),
            Some(r) => Ok(r),
            None => Err(None),
        })
        .collect()
}

/// Drops a permit that will not run on the blocking pool: it gives its budget unit back to a
/// ledger that may be a database.
async fn release(permit: Permit) {
    release_all(vec![permit]).await;
}

async fn release_all(permits: Vec<Permit>) {
    if let Err(e) = tokio::task::spawn_blocking(move || drop(permits)).await {
        tracing::error!("giving back the budget of calls that did not run failed: {e}");
    }
}

/// Starts one prepared call in the batch: it runs with its identity in its context, and its
/// receipt is written when it acted.
fn spawn_call(
    running: &mut Running,
    env: &TurnEnv,
    ctx: &ToolContext,
    turn_id: &str,
    call: ToolCall,
    index: usize,
    permit: Permit,
) {
    let receipts = env.receipts.clone();
    let ctx = ctx.for_call(CallIdentity::new(turn_id, &call.id, &ctx.policy.alias));
    let task = async move {
        let start = Instant::now();
        let result = permit.execute(&call.arguments, &ctx).await;
        let duration_ms = u32::try_from(start.elapsed().as_millis()).unwrap_or(u32::MAX);
        let (ok, content, executed, interrupted) = match result {
            Ok(v) => (
                true,
                match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                },
                true,
                false,
            ),
            Err(e) => (
                false,
                e.to_json().to_string(),
                e.ran(),
                e.code() == ToolErrorCode::Cancelled,
            ),
        };
        let receipt = if executed {
            match receipts
                .append(&ctx.policy.alias, &call.name, &call.arguments, &content)
                .await
            {
                Ok(r) => Some(r.id),
                Err(e) => {
                    tracing::error!(agent = %ctx.policy.alias, "writing a receipt failed: {e}");
                    None
                }
            }
        } else {
            None
        };
        // The SubAgent turn a `delegate` call ran, named in its result event.
        let sub_turn = ctx.call.sub_turn.get().cloned();
        (
            index,
            CallResult {
                interrupted,
                ok,
                content,
                receipt,
                duration_ms,
                sub_turn,
            },
        )
    };
    running.0.spawn(task.in_current_span());
}
