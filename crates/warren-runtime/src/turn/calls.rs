//! Running a round's tool calls: each prepared once (allowed, ask or denied), approvals asked
//! for, the calls run in parallel or one by one, receipts written, and the budget units of
//! calls that did not run given back.

use super::TurnEnv;
use crate::approval::PendingApproval;
use crate::events::Emitter;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use warren_llm::ToolCall;
use warren_tools::{CallIdentity, Permit, Prepared, ToolContext, ToolError};
use warren_types::{ApprovalDecision, EventKind, ToolErrorCode};

/// How one call ended.
pub(super) struct CallResult {
    pub(super) interrupted: bool,
    pub(super) ok: bool,
    pub(super) content: String,
    pub(super) receipt: Option<String>,
    pub(super) duration_ms: u32,
    /// The SubAgent turn a `delegate` call ran.
    pub(super) sub_turn: Option<String>,
}

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

/// Runs a round's calls and returns, per call in order, its result, or Err (naming the
/// SubAgent turn it ran, if any) when the cancel cut it off or it never ran.
pub(super) async fn run_calls(
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
                            approved_for_session.push(c.name.clone());
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
