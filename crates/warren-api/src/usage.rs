//! Usage and cost by agent and UTC day, from the usage ledger in `sessions.db` (one row per
//! provider response).

use crate::Warren;
use serde::Serialize;
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
        // More days than the calendar holds means every day there is.
        let first = today
            .checked_sub_days(chrono::Days::new(u64::from(days - 1)))
            .unwrap_or(chrono::NaiveDate::MIN);
        let rows = host
            .sessions()
            .usage_by_day(&first.format("%Y-%m-%d").to_string())
            .await
            .map_err(|e| {
                ApiError::new(ErrorCode::Storage, format!("reading the usage ledger: {e}"))
            })?;
        Ok(rows
            .into_iter()
            .map(|r| UsageDay {
                day: r.day,
                agent: r.agent,
                requests: clamp(r.requests),
                input_tokens: clamp(r.input_tokens),
                output_tokens: clamp(r.output_tokens),
                cost_usd: r.cost_usd,
            })
            .collect())
    }
}
