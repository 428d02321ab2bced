//! The turn's limits: the cap on tool rounds, single-tool rounds and today's cost budget,
//! checked before every provider call.

use super::{fail, now, Fail, TurnEnv};
use crate::events::Emitter;
use warren_llm::ToolCall;
use warren_types::{EventKind, NoticeCode, TurnFailure};

/// The limits one turn runs within, read from the agent's runtime profile once.
pub(super) struct Limits {
    /// Tool rounds before the model is asked to summarise (at least 1).
    pub(super) max_iter: u32,
    /// One tool call per response (asked for and supported by the route).
    pub(super) single_tool: bool,
    /// `max_cost_per_day_cents` of the budget agent.
    max_cost_per_day_cents: u32,
}

impl Limits {
    /// The agent's limits; a notice when single-tool rounds are asked for on a route that
    /// cannot do them (the turn then uses batch tool calls).
    pub(super) fn of(env: &TurnEnv, em: &mut Emitter) -> Self {
        let runtime = &env.tools.policy.runtime;
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
        Self {
            max_iter: runtime.max_tool_iterations.max(1),
            single_tool,
            max_cost_per_day_cents: runtime.max_cost_per_day_cents,
        }
    }

    /// Whether round `iteration` (from 1) is the one past the cap: the model is then asked to
    /// summarise without calling tools.
    pub(super) fn at_cap(&self, iteration: u32) -> bool {
        iteration > self.max_iter
    }

    /// The final answer of a turn stopped at the cap.
    pub(super) fn capped(&self, text: &str) -> String {
        format!(
            "{text}\n\n[Stopped at the cap of {} tool rounds.]",
            self.max_iter
        )
    }

    /// Fails the turn when the budget agent's spend today has reached its daily budget, or
    /// when the spend cannot be read.
    pub(super) async fn check_spend(&self, env: &TurnEnv) -> Result<(), Fail> {
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
        if cents >= f64::from(self.max_cost_per_day_cents) {
            return Err(fail(
                TurnFailure::CostBudgetExceeded,
                format!(
                    "today's spend ({cents:.2}¢) reached max_cost_per_day_cents ({})",
                    self.max_cost_per_day_cents
                ),
            ));
        }
        Ok(())
    }

    /// Fails the turn when the model asked for more than one call while single-tool rounds
    /// are on (none of them runs).
    pub(super) fn check_calls(&self, calls: &[ToolCall]) -> Result<(), Fail> {
        if self.single_tool && calls.len() > 1 {
            return Err(fail(
                TurnFailure::MultipleToolCalls,
                format!("the model asked for {} tool calls in one response while single-tool rounds are on; none was run", calls.len()),
            ));
        }
        Ok(())
    }
}
