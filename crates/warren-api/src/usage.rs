//! Usage and cost by agent and UTC day, from the usage ledger in `sessions.db` (one row per
//! provider response).

use crate::Warren;
use serde::Serialize;
use sqlx::Row;
use warren_types::{ApiError, ErrorCode};

/// One agent's usage on one UTC day.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct UsageDay {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    /// The agent's alias.
    pub agent: String,
    /// Provider responses recorded.
    pub requests: u32,
    /// Input tokens.
    pub input_tokens: u32,
    /// Output tokens.
    pub output_tokens: u32,
    /// Cost in US dollars (from the route's prices; 0 when the route has none).
    pub cost_usd: f64,
}

fn clamp(n: i64) -> u32 {
    u32::try_from(n.max(0)).unwrap_or(u32::MAX)
}

impl Warren {
    /// Usage per agent and day for the last `days` UTC days (today included), newest day first.
    pub async fn usage_by_day(&self, days: u32) -> Result<Vec<UsageDay>, ApiError> {
        if days == 0 {
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                "the number of days must be at least 1",
            ));
        }
        let host = self.host().await?;
        let today = chrono::DateTime::<chrono::Utc>::from(host.kit().clock.now()).date_naive();
        let first = today - chrono::Days::new(u64::from(days - 1));
        let rows = sqlx::query(
            "SELECT u.day AS day, COALESCE(a.alias, '?') AS agent, COUNT(*) AS requests,
                    SUM(u.input_tokens) AS input, SUM(u.output_tokens) AS output,
                    SUM(u.cost_usd) AS cost
             FROM usage AS u LEFT JOIN agents AS a ON a.id = u.agent_id
             WHERE u.day >= ?
             GROUP BY u.day, a.alias
             ORDER BY u.day DESC, agent",
        )
        .bind(first.format("%Y-%m-%d").to_string())
        .fetch_all(host.sessions().pool())
        .await
        .map_err(|e| ApiError::new(ErrorCode::Storage, format!("reading the usage ledger: {e}")))?;
        rows.iter()
            .map(|r| {
                Ok(UsageDay {
                    day: r.try_get("day")?,
                    agent: r.try_get("agent")?,
                    requests: clamp(r.try_get("requests")?),
                    input_tokens: clamp(r.try_get("input")?),
                    output_tokens: clamp(r.try_get("output")?),
                    cost_usd: r.try_get("cost")?,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(|e| {
                ApiError::new(ErrorCode::Storage, format!("reading the usage ledger: {e}"))
            })
    }
}
