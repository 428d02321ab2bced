//! Autonomy levels and approvals (rules §2.3): whether a tool call runs, must be approved, or is
//! refused, given the risk profile and (for the shell) the command's risk.

use crate::policy::SecurityPolicy;
use crate::shell::Risk;
use serde::Serialize;
use warren_types::AutonomyLevel;

/// Why a call is refused without asking anyone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalRule {
    /// The tool is not in `allowed_tools` or is in `excluded_tools`.
    ToolNotAllowed,
    /// The agent is `readonly` and the tool has side effects.
    ReadonlyAutonomy,
    /// A high-risk shell command while `block_high_risk_commands` is on.
    HighRiskBlocked,
    /// A `delegate` call the delegation rules refuse (rules §5: forbidden by the risk profile,
    /// target not in `delegates`, depth, or an escalating child policy).
    DelegationRefused,
}

impl RefusalRule {
    /// The stable code.
    pub fn code(self) -> &'static str {
        match self {
            RefusalRule::ToolNotAllowed => "tool_not_allowed",
            RefusalRule::ReadonlyAutonomy => "readonly",
            RefusalRule::HighRiskBlocked => "high_risk_blocked",
            RefusalRule::DelegationRefused => "delegation_refused",
        }
    }
}

/// The answer of the gate for one call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Gate {
    /// Runs without asking.
    Run,
    /// Runs only if the user approves.
    Ask {
        /// Why approval is needed.
        reason: String,
    },
    /// Never runs.
    Refuse {
        /// The deciding rule.
        rule: RefusalRule,
        /// A human explanation.
        reason: String,
    },
}

impl SecurityPolicy {
    /// Whether the tool is offered at all (`allowed_tools` empty = all; `excluded_tools` wins).
    pub fn tool_offered(&self, tool: &str) -> bool {
        let allowed =
            self.risk.allowed_tools.is_empty() || self.risk.allowed_tools.iter().any(|t| t == tool);
        allowed && !self.risk.excluded_tools.iter().any(|t| t == tool)
    }

    /// Decides whether a call runs, asks or is refused. `side_effects`: the tool changes
    /// something; `risk`: the shell command's risk (`None` for other tools).
    pub fn gate(&self, tool: &str, side_effects: bool, risk: Option<Risk>) -> Gate {
        if !self.tool_offered(tool) {
            return Gate::Refuse {
                rule: RefusalRule::ToolNotAllowed,
                reason: format!(
                    "tool `{tool}` is not allowed by risk profile `{}`",
                    self.risk_profile_name
                ),
            };
        }
        if self.risk.level == AutonomyLevel::Readonly && side_effects {
            return Gate::Refuse {
                rule: RefusalRule::ReadonlyAutonomy,
                reason: format!(
                    "risk profile `{}` is readonly: `{tool}` has side effects",
                    self.risk_profile_name
                ),
            };
        }
        if risk == Some(Risk::High) && self.risk.block_high_risk_commands {
            return Gate::Refuse {
                rule: RefusalRule::HighRiskBlocked,
                reason: "high-risk commands are blocked (block_high_risk_commands)".into(),
            };
        }
        if self.risk.level == AutonomyLevel::Full {
            return Gate::Run;
        }
        if self.risk.always_ask.iter().any(|t| t == tool) {
            return Gate::Ask {
                reason: format!("`{tool}` is in always_ask"),
            };
        }
        match risk {
            Some(Risk::High) => {
                return Gate::Ask {
                    reason: "high-risk command".into(),
                }
            }
            Some(Risk::Medium) if self.risk.require_approval_for_medium_risk => {
                return Gate::Ask {
                    reason: "medium-risk command (require_approval_for_medium_risk)".into(),
                }
            }
            _ => {}
        }
        if !self.risk.auto_approve.iter().any(|t| t == tool) {
            return Gate::Ask {
                reason: format!("`{tool}` is not in auto_approve"),
            };
        }
        Gate::Run
    }
}
