//! The typed event stream of a turn (rules §6.2). The UI, `warren run --json` and the session
//! store all see the same events; every `tool_call` has exactly one `tool_result` with its id.

use crate::codes::{NoticeCode, TurnFailure};
use crate::error::UnknownCode;
use serde::{Deserialize, Serialize};

/// One event of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TurnEvent {
    /// The turn this event belongs to.
    pub turn_id: String,
    /// The agent running the turn.
    pub agent: String,
    /// Position in the turn's stream, from 1, without gaps.
    pub seq: u32,
    /// RFC 3339 UTC timestamp.
    pub time: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
    /// For a SubAgent's turn: the parent turn and its `delegate` call this event is nested
    /// under. Absent for top-level turns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<EventParent>,
}

/// Where a delegated (SubAgent) turn hangs in its parent's stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct EventParent {
    /// The parent's turn.
    pub turn_id: String,
    /// The parent's `delegate` tool call.
    pub call_id: String,
    /// The parent agent.
    pub agent: String,
}

/// How an approval request was answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    ApproveOnce,
    /// Run this call and every later call of the same tool in this session.
    ApproveSession,
    /// Do not run it.
    Deny,
}

impl ApprovalDecision {
    /// The decision in a user's words: `approve once`, `approve for the session`, `deny`.
    pub fn words(self) -> &'static str {
        match self {
            ApprovalDecision::ApproveOnce => "approve once",
            ApprovalDecision::ApproveSession => "approve for the session",
            ApprovalDecision::Deny => "deny",
        }
    }
}

/// Who or what started a turn. Stored with the turn and in its `turn_started` event under the
/// same snake_case names.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum TurnTrigger {
    /// A person: the desktop chat or `warren run`.
    User,
    /// A scheduled (or run-now) cron job.
    Cron,
    /// An editor over ACP.
    Acp,
    /// Another agent's `delegate` call (a SubAgent turn).
    Delegate,
}

impl TurnTrigger {
    /// Every trigger.
    pub const ALL: [TurnTrigger; 4] = [
        TurnTrigger::User,
        TurnTrigger::Cron,
        TurnTrigger::Acp,
        TurnTrigger::Delegate,
    ];

    /// The wire spelling, also the `trigger` column of the `turns` table.
    pub fn as_str(&self) -> &'static str {
        match self {
            TurnTrigger::User => "user",
            TurnTrigger::Cron => "cron",
            TurnTrigger::Acp => "acp",
            TurnTrigger::Delegate => "delegate",
        }
    }
}

impl std::str::FromStr for TurnTrigger {
    type Err = UnknownCode;

    fn from_str(s: &str) -> Result<Self, UnknownCode> {
        Self::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| UnknownCode::new("turn trigger", s))
    }
}

impl std::fmt::Display for TurnTrigger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// The event payloads, tagged by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "snake_case"
)]
pub enum EventKind {
    /// A turn began.
    TurnStarted {
        /// Session the turn belongs to.
        session_id: String,
        /// Who or what started it.
        trigger: TurnTrigger,
        /// The prompt.
        prompt: String,
    },
    /// A request to a provider route entry.
    ModelRequest {
        /// `"family.alias"` of the entry.
        route_entry: String,
        /// Attempt number within this round (1 = first entry).
        attempt: u32,
        /// Tool round, from 1.
        iteration: u32,
    },
    /// Streamed assistant text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// The model asked for a tool.
    ToolCall {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Arguments as JSON text.
        arguments: String,
    },
    /// A call waits for the user.
    ApprovalRequested {
        /// Call id.
        id: String,
        /// Tool name.
        tool: String,
        /// Arguments as JSON text.
        arguments: String,
        /// Why approval is needed.
        reason: String,
    },
    /// The user (or the runtime, with no one to ask) answered.
    ApprovalResolved {
        /// Call id.
        id: String,
        /// The answer.
        decision: ApprovalDecision,
        /// Message for the model, if any.
        message: Option<String>,
    },
    /// A tool call finished (or was refused or interrupted).
    ToolResult {
        /// Call id.
        id: String,
        /// Whether it succeeded.
        ok: bool,
        /// The first part of its output.
        output: String,
        /// Duration in milliseconds.
        duration_ms: u32,
        /// Receipt of an executed call.
        receipt_id: Option<String>,
        /// For a `delegate` call: the SubAgent turn it ran (its events name this call as their
        /// parent), so a replay of this turn can nest it. Absent for other tools.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sub_turn_id: Option<String>,
    },
    /// Tokens and cost of one provider response.
    Usage {
        /// Input tokens.
        input_tokens: u32,
        /// Output tokens.
        output_tokens: u32,
        /// Cost in US dollars.
        cost_usd: f64,
    },
    /// Something the user should know (for example single-tool rounds unsupported on the route).
    Notice {
        /// What it is about.
        code: NoticeCode,
        /// Human message.
        message: String,
    },
    /// The turn ended with a final answer.
    TurnCompleted {
        /// The final text.
        text: String,
    },
    /// The turn failed.
    TurnFailed {
        /// Why.
        code: TurnFailure,
        /// Human message.
        message: String,
    },
    /// The turn was cancelled.
    TurnCancelled {},
}

impl EventKind {
    /// The `type` tag.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::TurnStarted { .. } => "turn_started",
            EventKind::ModelRequest { .. } => "model_request",
            EventKind::TextDelta { .. } => "text_delta",
            EventKind::ToolCall { .. } => "tool_call",
            EventKind::ApprovalRequested { .. } => "approval_requested",
            EventKind::ApprovalResolved { .. } => "approval_resolved",
            EventKind::ToolResult { .. } => "tool_result",
            EventKind::Usage { .. } => "usage",
            EventKind::Notice { .. } => "notice",
            EventKind::TurnCompleted { .. } => "turn_completed",
            EventKind::TurnFailed { .. } => "turn_failed",
            EventKind::TurnCancelled {} => "turn_cancelled",
        }
    }

    /// Replaces every registered secret in the event's text ([`crate::redact`]). Every field
    /// is named, so a new text field cannot be forgotten.
    pub fn redact_secrets(&mut self) {
        use crate::redact::redact_string as r;
        match self {
            EventKind::TurnStarted {
                session_id: _,
                trigger: _,
                prompt,
            } => r(prompt),
            EventKind::ModelRequest {
                route_entry: _,
                attempt: _,
                iteration: _,
            } => {}
            EventKind::TextDelta { text } => r(text),
            EventKind::ToolCall {
                id,
                name: _,
                arguments,
            } => {
                r(id);
                r(arguments);
            }
            EventKind::ApprovalRequested {
                id,
                tool: _,
                arguments,
                reason,
            } => {
                r(id);
                r(arguments);
                r(reason);
            }
            EventKind::ApprovalResolved {
                id,
                decision: _,
                message,
            } => {
                r(id);
                if let Some(m) = message {
                    r(m);
                }
            }
            EventKind::ToolResult {
                id,
                ok: _,
                output,
                duration_ms: _,
                receipt_id: _,
                sub_turn_id: _,
            } => {
                r(id);
                r(output);
            }
            EventKind::Usage {
                input_tokens: _,
                output_tokens: _,
                cost_usd: _,
            } => {}
            EventKind::Notice { code: _, message } => r(message),
            EventKind::TurnCompleted { text } => r(text),
            EventKind::TurnFailed { code: _, message } => r(message),
            EventKind::TurnCancelled {} => {}
        }
    }

    /// True for the three events that end a turn.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            EventKind::TurnCompleted { .. }
                | EventKind::TurnFailed { .. }
                | EventKind::TurnCancelled {}
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_serialise_with_a_type_tag() {
        let e = TurnEvent {
            turn_id: "t1".into(),
            agent: "alice".into(),
            seq: 3,
            time: "2026-01-01T00:00:00Z".into(),
            kind: EventKind::ToolResult {
                id: "c1".into(),
                ok: true,
                output: "hi".into(),
                duration_ms: 4,
                receipt_id: None,
                sub_turn_id: None,
            },
            parent: None,
        };
        let v = serde_json::to_value(&e).unwrap();
        assert!(
            v.get("parent").is_none(),
            "top-level events carry no parent"
        );
        assert!(
            v.get("sub_turn_id").is_none(),
            "only delegate results name a SubAgent turn"
        );
        assert_eq!(v["type"], "tool_result");
        assert_eq!(v["seq"], 3);
        assert_eq!(v["duration_ms"], 4);
        let back: TurnEvent = serde_json::from_value(v).unwrap();
        assert_eq!(back, e);
        assert_eq!(e.kind.type_name(), "tool_result");
        let c = serde_json::to_value(EventKind::TurnCancelled {}).unwrap();
        assert_eq!(c, serde_json::json!({"type": "turn_cancelled"}));
    }

    #[test]
    fn triggers_are_their_documented_codes_and_old_stored_events_still_read() {
        let table = [
            (TurnTrigger::User, "user"),
            (TurnTrigger::Cron, "cron"),
            (TurnTrigger::Acp, "acp"),
            (TurnTrigger::Delegate, "delegate"),
        ];
        assert_eq!(table.len(), TurnTrigger::ALL.len());
        for (t, code) in &table {
            assert_eq!(serde_json::to_value(t).unwrap(), *code);
            assert_eq!(t.as_str(), *code);
            assert_eq!(code.parse::<TurnTrigger>().unwrap(), *t);
        }
        let e = "webhook".parse::<TurnTrigger>().unwrap_err();
        assert_eq!(e.to_string(), "unknown turn trigger `webhook`");

        // A `turn_started` event as the session store has kept it (the trigger a plain
        // string) reads as the typed event and writes back byte for byte.
        let stored = r#"{"turn_id":"t1","agent":"alice","seq":1,"time":"2026-01-01T00:00:00Z","type":"turn_started","session_id":"s1","trigger":"cron","prompt":"hi"}"#;
        let e: TurnEvent = serde_json::from_str(stored).unwrap();
        assert_eq!(
            e.kind,
            EventKind::TurnStarted {
                session_id: "s1".into(),
                trigger: TurnTrigger::Cron,
                prompt: "hi".into(),
            }
        );
        assert_eq!(serde_json::to_string(&e).unwrap(), stored);
        // A trigger this version does not know is refused, not read as another one.
        let unknown = stored.replace(r#""cron""#, r#""webhook""#);
        assert!(serde_json::from_str::<TurnEvent>(&unknown).is_err());
    }

    #[test]
    fn a_delegate_result_names_its_sub_turn_and_older_stored_results_still_read() {
        let kind = EventKind::ToolResult {
            id: "c1".into(),
            ok: true,
            output: "{}".into(),
            duration_ms: 1,
            receipt_id: None,
            sub_turn_id: Some("t2".into()),
        };
        let v = serde_json::to_value(&kind).unwrap();
        assert_eq!(v["sub_turn_id"], "t2");
        let old = serde_json::json!({"type": "tool_result", "id": "c1", "ok": true,
            "output": "", "duration_ms": 1, "receipt_id": null});
        let back: EventKind = serde_json::from_value(old).unwrap();
        assert!(matches!(
            back,
            EventKind::ToolResult {
                sub_turn_id: None,
                ..
            }
        ));
    }
}
