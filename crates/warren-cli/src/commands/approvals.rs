//! `warren approvals list | answer`: approval requests waiting in any process of the install
//! (the desktop app, `warren serve`, an ACP session). `list --json` → `[{"agent", "turn_id",
//! "call_id", "tool", "arguments", "reason", "since", "pid"}]`; `answer` exits 0 once the turn
//! took the answer, 1 with `not_found` when nothing waits under that turn and call (or, with
//! `--latest`, when nothing waits at all).

use super::choices::Decision;
use super::Ctx;
use crate::output::shown_line;
use clap::ValueEnum;
use std::process::ExitCode;
use warren_types::ApprovalDecision;

/// `warren approvals ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// Every request waiting for an answer, oldest first.
    List,
    /// Answer one request: approve (this call), session (this tool for the rest of the
    /// session) or deny. Name it by turn and call (from `list`), or answer the newest one
    /// with `--latest DECISION`.
    Answer {
        /// The turn id (from `list`); with `--latest`, the decision instead.
        turn: String,
        /// The tool call id (from `list`).
        #[arg(required_unless_present = "latest")]
        call: Option<String>,
        /// The answer.
        #[arg(required_unless_present = "latest")]
        decision: Option<Decision>,
        /// Answer the newest request waiting (`answer --latest approve`).
        #[arg(long, conflicts_with_all = ["call", "decision"])]
        latest: bool,
        /// A message for the model, with a denial.
        #[arg(long)]
        message: Option<String>,
    },
}

/// The decision a word names, or an error naming the word (with the one it is close to): the
/// word `--latest` takes in the turn's place, which clap reads as a turn id.
fn decision_of(word: &str) -> Result<ApprovalDecision, warren_api::ApiError> {
    const WORDS: [&str; 3] = ["approve", "session", "deny"];
    Decision::from_str(word, false)
        .map(ApprovalDecision::from)
        .map_err(|_| {
            warren_api::ApiError::new(
                warren_api::ErrorCode::InvalidArgument,
                format!(
                    "unknown decision `{word}`{} (expected approve, session or deny)",
                    warren_types::did_you_mean_hint(word, &WORDS)
                ),
            )
        })
}

/// Runs a `warren approvals` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::List => ctx.out.result(ctx.warren.waiting_approvals(), |list| {
            if list.is_empty() {
                return "no approval is waiting".into();
            }
            let mut s = String::new();
            for a in list.iter().map(|w| &w.request) {
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
            latest,
            message,
        } => {
            let decision = match decision {
                Some(d) if !latest => Ok(d.into()),
                // With --latest the one word given is the decision.
                _ => decision_of(if latest { &turn } else { "" }),
            };
            let decision = match decision {
                Ok(d) => d,
                Err(e) => return ctx.out.fail(&e),
            };
            if latest {
                let r = ctx.block_on(ctx.warren.answer_latest_approval(decision, message));
                return ctx.out.result(
                    r.map(|w| {
                        let a = w.request;
                        serde_json::json!({"answered": true, "decision": decision, "agent": a.agent,
                            "tool": a.tool, "turn_id": a.turn_id, "call_id": a.call_id})
                    }),
                    |v| {
                        format!(
                            "answered {}'s {} request: {}",
                            v["agent"].as_str().unwrap_or_default(),
                            v["tool"].as_str().unwrap_or_default(),
                            decision.words()
                        )
                    },
                );
            }
            let call = call.unwrap_or_default();
            let r = ctx.block_on(
                ctx.warren
                    .answer_waiting_approval(&turn, &call, decision, message),
            );
            ctx.out.result(
                r.map(|()| serde_json::json!({"answered": true, "turn_id": turn, "call_id": call})),
                |_| format!("answered: {}", decision.words()),
            )
        }
    }
}
