//! `warren run --agent A [--session S] [--approve | --deny | --wait-approval] PROMPT`: one
//! turn, streamed.

use super::Ctx;
use crate::output::{shown, shown_line};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;
use warren_api::{RunRequest, RunResult, RunStatus};
use warren_types::approval::{
    ApprovalAnswer, ApprovalWait, AsyncApprover, FixedApprover, PendingApproval,
};
use warren_types::{EventKind, TurnEvent, TurnTrigger};

/// Arguments of `warren run`.
#[derive(clap::Args)]
pub struct Args {
    /// The agent.
    #[arg(long)]
    agent: String,
    /// Continue this session.
    #[arg(long)]
    session: Option<String>,
    /// Approve every approval request.
    #[arg(long, conflicts_with = "deny")]
    approve: bool,
    /// Deny every approval request.
    #[arg(long, conflicts_with = "wait_approval")]
    deny: bool,
    /// Leave approval requests in the install's inbox and wait until they are answered from
    /// another shell (`warren approvals answer`) or the desktop app.
    #[arg(long, conflicts_with = "approve")]
    wait_approval: bool,
    /// The prompt.
    prompt: String,
}

/// Asks on the terminal: y = once, s = for this session, anything else = deny.
struct TerminalApprover;

impl AsyncApprover for TerminalApprover {
    fn ask(&self, p: PendingApproval) -> ApprovalWait<'_> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                eprint!(
                    "\n? {} wants to run {} {}\n  ({})\n  approve [y]es once, for the [s]ession, or [n]o (optionally: n <message>): ",
                    p.agent,
                    shown_line(&p.tool),
                    shown_line(&p.arguments),
                    shown_line(&p.reason)
                );
                let _ = std::io::stderr().flush();
                let mut line = String::new();
                if std::io::stdin().read_line(&mut line).is_err() {
                    return ApprovalAnswer::no_one();
                }
                let line = line.trim();
                match line {
                    "y" | "yes" => ApprovalAnswer::approve(),
                    "s" | "session" => ApprovalAnswer::approve_session(),
                    other => {
                        let msg = other.strip_prefix('n').map(str::trim).filter(|m| !m.is_empty());
                        ApprovalAnswer::deny(msg.map(str::to_string))
                    }
                }
            })
            .await
            .unwrap_or_else(|_| ApprovalAnswer::no_one())
        })
    }
}

fn render(e: &TurnEvent, out: &mut impl Write) {
    let _ = match &e.kind {
        EventKind::TextDelta { text } => write!(out, "{}", shown(text)),
        EventKind::ToolCall {
            name, arguments, ..
        } => writeln!(out, "\n→ {} {}", shown_line(name), shown_line(arguments)),
        EventKind::ToolResult {
            ok,
            output,
            duration_ms,
            ..
        } => {
            let first: String = output
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(160)
                .collect();
            writeln!(
                out,
                "{} {} ({duration_ms} ms)",
                if *ok { "✓" } else { "✗" },
                shown_line(&first)
            )
        }
        EventKind::ApprovalResolved { decision, .. } => {
            writeln!(out, "  approval: {}", decision.words())
        }
        EventKind::Usage {
            input_tokens,
            output_tokens,
            cost_usd,
        } => {
            writeln!(
                out,
                "\n[usage: {input_tokens} in / {output_tokens} out, ${cost_usd:.4}]"
            )
        }
        EventKind::Notice { message, .. } => writeln!(out, "\n! {}", shown(message)),
        // The failure itself is said once, on stderr, when the turn ends (see `run`).
        EventKind::TurnFailed { .. } => writeln!(out),
        EventKind::TurnCancelled {} => writeln!(out, "\n✗ turn cancelled"),
        EventKind::TurnCompleted { .. } => writeln!(out),
        _ => Ok(()),
    };
    let _ = out.flush();
}

/// Runs `warren run`.
pub fn run(ctx: &Ctx, args: Args) -> ExitCode {
    let approver: Option<Arc<dyn AsyncApprover>> = if args.wait_approval {
        // The host's broker: requests go to the inbox for `warren approvals answer`.
        None
    } else if args.approve {
        Some(Arc::new(FixedApprover(ApprovalAnswer::approve())))
    } else if args.deny {
        Some(Arc::new(FixedApprover(ApprovalAnswer::deny(Some(
            "denied by --deny".into(),
        )))))
    } else if std::io::stdin().is_terminal() {
        Some(Arc::new(TerminalApprover))
    } else {
        Some(Arc::new(FixedApprover(ApprovalAnswer::no_one())))
    };
    let json = ctx.out.json();
    let wait_approval = args.wait_approval;
    let req = RunRequest {
        agent: args.agent.clone(),
        session: args.session,
        prompt: args.prompt,
    };
    let result: Result<RunResult, warren_api::ApiError> = ctx.block_on_multi(async {
        // Unfinished renames, deletes and restores are finished before any turn runs.
        ctx.warren.resume_pending().await;
        let mut events = ctx.warren.events().await?;
        let turn = ctx.warren.run_prompt(req, TurnTrigger::User, approver);
        tokio::pin!(turn);
        let mut stdout = std::io::stdout();
        let emit = |e: &TurnEvent, stdout: &mut std::io::Stdout| {
            if json {
                if let Ok(line) = serde_json::to_string(e) {
                    let _ = writeln!(stdout, "{line}");
                }
            } else {
                render(e, stdout);
                if let (true, EventKind::ApprovalRequested { id, .. }) = (wait_approval, &e.kind) {
                    let _ = writeln!(
                        stdout,
                        "  waiting for an answer: warren approvals answer {} {} approve|session|deny",
                        e.turn_id,
                        shown_line(id)
                    );
                }
            }
        };
        loop {
            tokio::select! {
                r = &mut turn => {
                    while let Ok(e) = events.try_recv() {
                        emit(&e, &mut stdout);
                    }
                    return r;
                }
                Some(e) = events.recv() => emit(&e, &mut stdout),
                _ = tokio::signal::ctrl_c() => {
                    let _ = ctx.warren.cancel_turn(&args.agent).await;
                }
            }
        }
    });
    match result {
        Err(e) => ctx.out.fail(&e),
        Ok(r) if r.status == RunStatus::Completed => ExitCode::SUCCESS,
        Ok(r) => {
            if !json {
                eprintln!(
                    "error: turn {}: {}",
                    r.status,
                    shown(r.error_message.as_deref().unwrap_or("cancelled"))
                );
            }
            ExitCode::from(1)
        }
    }
}
