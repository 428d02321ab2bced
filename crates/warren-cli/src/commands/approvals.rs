//! `warren approvals list | answer`: approval requests waiting in any process of the install
//! (the desktop app, `warren serve`, an ACP session). `list --json` → `[{"agent", "turn_id",
//! "call_id", "tool", "arguments", "reason", "since", "pid"}]`; `answer` exits 0 once the turn
//! took the answer, 1 with `not_found` when nothing waits under that turn and call.

use super::Ctx;
use crate::output::shown_line;
use std::process::ExitCode;
use warren_types::ApprovalDecision;

/// `warren approvals ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Every request waiting for an answer, oldest first.
    List,
    /// Answer one request: approve (this call), session (this tool for the rest of the
    /// session) or deny.
    Answer {
        /// The turn id (from `list`).
        turn: String,
        /// The tool call id (from `list`).
        call: String,
        /// approve, session or deny.
        decision: String,
        /// A message for the model, with a denial.
        #[arg(long)]
        message: Option<String>,
    },
}

/// Runs a `warren approvals` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::List => ctx.out.result(ctx.warren.waiting_approvals(), |list| {
            if list.is_empty() {
                return "no approval is waiting".into();
            }
            let mut s = String::new();
            for a in list {
                s.push_str(&format!(
                    "{} wants {} {} ({})\n  turn {} call {}\n",
                    a.agent,
                    shown_line(&a.tool),
                    shown_line(&a.arguments),
                    shown_line(&a.reason),
                    shown_line(&a.turn_id),
                    shown_line(&a.call_id)
                ));
            }
            s
        }),
        Cmd::Answer {
            turn,
            call,
            decision,
            message,
        } => {
            let decision = match decision.as_str() {
                "approve" => ApprovalDecision::ApproveOnce,
                "session" => ApprovalDecision::ApproveSession,
                "deny" => ApprovalDecision::Deny,
                other => {
                    return ctx.out.fail(&warren_api::ApiError::new(
                        warren_api::ErrorCode::InvalidArgument,
                        format!("unknown decision `{other}` (expected approve, session or deny)"),
                    ))
                }
            };
            let r = ctx.block_on(
                ctx.warren
                    .answer_waiting_approval(&turn, &call, decision, message),
            );
            ctx.out.result(
                r.map(|()| serde_json::json!({"answered": true, "turn_id": turn, "call_id": call})),
                |_| "answered".into(),
            )
        }
    }
}
