//! Chat and ACP sessions, their message history, the events of every turn and the usage ledger,
//! all in `<install>/data/sessions.db` and attributed to agents by their stable id.

use crate::db::{agent_id, column, row_error, DbError};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use sqlx::SqlitePool;
use warren_types::{TurnEvent, TurnTrigger};

/// Kinds of sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    /// Desktop chat or `warren run`.
    Chat,
    /// An editor over ACP.
    Acp,
    /// Scheduled runs.
    Cron,
}

impl SessionKind {
    fn as_str(self) -> &'static str {
        match self {
            SessionKind::Chat => "chat",
            SessionKind::Acp => "acp",
            SessionKind::Cron => "cron",
        }
    }
}

/// One session as listed.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct SessionInfo {
    /// Session id.
    pub id: String,
    /// The agent's current alias (None once the agent was deleted).
    #[sqlx(rename = "alias")]
    pub agent: Option<String>,
    /// `chat`, `acp` or `cron`.
    pub kind: String,
    /// Title (the first prompt, shortened).
    pub title: String,
    /// Creation time.
    pub created_at: String,
    /// Last activity.
    pub updated_at: String,
    /// When it ended (ACP sessions).
    pub ended_at: Option<String>,
}

/// One stored turn.
#[derive(Debug, Clone, PartialEq, Serialize, sqlx::FromRow)]
pub struct TurnInfo {
    /// Turn id.
    pub id: String,
    /// Session id.
    pub session_id: String,
    /// `user`, `cron`, `acp`, `delegate`.
    pub trigger: String,
    /// The prompt.
    pub prompt: String,
    /// `running`, `completed`, `failed`, `cancelled`.
    pub status: String,
    /// Start time.
    pub started_at: String,
    /// Final text when completed.
    pub final_text: Option<String>,
    /// Error code when failed.
    pub error_code: Option<String>,
}

/// RFC 3339 UTC with microseconds.
pub fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// The session store.
#[derive(Clone)]
pub struct SessionStore {
    pool: SqlitePool,
    /// Tools approved "for the session", per session, for as long as this process runs.
    approvals: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<String>>>>,
    /// Today's spend per (agent, day) as last read, with this process's usage added since.
    spend: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<(String, String), Spend>>>,
}

/// One agent's usage on one UTC day, summed from the usage ledger.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct DailyUsage {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    /// The agent's alias (`?` when its agent row is gone).
    pub agent: String,
    /// Provider responses recorded.
    pub requests: i64,
    /// Input tokens.
    #[sqlx(rename = "input")]
    pub input_tokens: i64,
    /// Output tokens.
    #[sqlx(rename = "output")]
    pub output_tokens: i64,
    /// Cost in US dollars.
    #[sqlx(rename = "cost")]
    pub cost_usd: f64,
}

/// A turn's token and cost totals as summed from the usage ledger.
#[derive(sqlx::FromRow)]
struct TurnUsage {
    input_tokens: i64,
    output_tokens: i64,
    cost_usd: f64,
}

/// A cached daily spend (see [`SessionStore::cost_today_cents`]).
#[derive(Clone, Copy)]
struct Spend {
    read_at: std::time::Instant,
    usd: f64,
}

/// How long a daily spend read from the database is reused. Usage recorded by this process is
/// added to it at once; usage recorded by another process is seen after at most this long.
const SPEND_TTL: std::time::Duration = std::time::Duration::from_secs(1);

/// The table a column of a session row comes from (the alias is the agent's).
fn session_table(column: &str) -> &'static str {
    if column == "alias" {
        "agents"
    } else {
        "sessions"
    }
}

impl SessionStore {
    /// A store over an open sessions database.
    pub fn new(pool: SqlitePool) -> Self {
        SessionStore {
            pool,
            approvals: Default::default(),
            spend: Default::default(),
        }
    }

    fn spend_cache(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::HashMap<(String, String), Spend>> {
        self.spend
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The tools the user approved "for the session" in `session_id` (rules §6.3). They hold
    /// for every later turn of that session while this process runs; a restart asks again.
    pub fn session_approvals(&self, session_id: &str) -> Vec<String> {
        self.approvals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(session_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Records the tools approved for the session.
    pub fn set_session_approvals(&self, session_id: &str, tools: &[String]) {
        let mut map = self
            .approvals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if tools.is_empty() {
            map.remove(session_id);
        } else {
            map.insert(session_id.to_string(), tools.to_vec());
        }
    }

    /// The underlying pool.
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Creates a session for `agent`.
    pub async fn create_session(
        &self,
        agent: &str,
        kind: SessionKind,
        title: &str,
        now: DateTime<Utc>,
    ) -> Result<SessionInfo, DbError> {
        let aid = agent_id(&self.pool, agent).await?;
        let id = uuid::Uuid::new_v4().to_string();
        let t = rfc3339(now);
        let title: String = title.chars().take(80).collect();
        sqlx::query(
            "INSERT INTO sessions (id, agent_id, kind, title, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
        )
        .bind(&id)
        .bind(&aid)
        .bind(kind.as_str())
        .bind(&title)
        .bind(&t)
        .bind(&t)
        .execute(&self.pool)
        .await?;
        self.session(&id)
            .await?
            .ok_or(DbError::Query(sqlx::Error::RowNotFound))
    }

    /// One session.
    pub async fn session(&self, id: &str) -> Result<Option<SessionInfo>, DbError> {
        sqlx::query_as::<_, SessionInfo>(
            "SELECT s.*, a.alias FROM sessions s LEFT JOIN agents a ON a.id = s.agent_id WHERE s.id = ?",
        )
        .bind(id)
        .fetch_optional(&self.pool)
        .await
        .map_err(|e| row_error(e, session_table))
    }

    /// Sessions, newest first, optionally of one agent.
    pub async fn list_sessions(&self, agent: Option<&str>) -> Result<Vec<SessionInfo>, DbError> {
        sqlx::query_as::<_, SessionInfo>(
            "SELECT s.*, a.alias FROM sessions s LEFT JOIN agents a ON a.id = s.agent_id
             WHERE (?1 IS NULL OR a.alias = ?1) ORDER BY s.updated_at DESC, s.id",
        )
        .bind(agent)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| row_error(e, session_table))
    }

    /// How many turns each session holds, by session id, optionally of one agent's sessions
    /// (one query; sessions without a turn are absent).
    pub async fn turn_counts(
        &self,
        agent: Option<&str>,
    ) -> Result<std::collections::HashMap<String, i64>, DbError> {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT t.session_id, COUNT(*) FROM turns t
             JOIN sessions s ON s.id = t.session_id
             LEFT JOIN agents a ON a.id = s.agent_id
             WHERE (?1 IS NULL OR a.alias = ?1) GROUP BY t.session_id",
        )
        .bind(agent)
        .fetch_all(&self.pool)
        .await?;
        Ok(rows.into_iter().collect())
    }

    /// The message history of a session, in order (provider-neutral JSON messages).
    pub async fn history(&self, session_id: &str) -> Result<Vec<serde_json::Value>, DbError> {
        let rows = sqlx::query("SELECT body FROM messages WHERE session_id = ? ORDER BY seq")
            .bind(session_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                serde_json::from_str(column::<&str>(r, "messages", "body")?)
                    .map_err(|e| DbError::Query(sqlx::Error::Decode(Box::new(e))))
            })
            .collect()
    }

    /// Appends messages to a session's history in one transaction (a round is all or nothing).
    pub async fn append_messages(
        &self,
        session_id: &str,
        turn_id: &str,
        messages: &[serde_json::Value],
        now: DateTime<Utc>,
    ) -> Result<(), DbError> {
        if messages.is_empty() {
            return Ok(());
        }
        // One statement: the messages get consecutive `seq` numbers after the session's last,
        // all or none, without a separate read (each statement is a hop to SQLite's thread).
        let mut sql = String::from(
            "INSERT INTO messages (session_id, seq, turn_id, body)
             SELECT ?1, base.n + v.column1, ?2, v.column2
             FROM (SELECT COALESCE(MAX(seq), 0) AS n FROM messages WHERE session_id = ?1) AS base,
                  (VALUES ",
        );
        for i in 0..messages.len() {
            if i > 0 {
                sql.push_str(", ");
            }
            sql.push_str(&format!("({}, ?{})", i + 1, i + 3));
        }
        sql.push_str(") AS v");
        let mut q = sqlx::query(&sql).bind(session_id).bind(turn_id);
        for m in messages {
            q = q.bind(m.to_string());
        }
        q.execute(&self.pool).await?;
        sqlx::query("UPDATE sessions SET updated_at = ? WHERE id = ?")
            .bind(rfc3339(now))
            .bind(session_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// Records the start of a turn.
    pub async fn start_turn(
        &self,
        turn_id: &str,
        session_id: &str,
        agent: &str,
        trigger: &TurnTrigger,
        prompt: &str,
        now: DateTime<Utc>,
    ) -> Result<(), DbError> {
        let aid = agent_id(&self.pool, agent).await?;
        sqlx::query(
            "INSERT INTO turns (id, session_id, agent_id, trigger, prompt, status, started_at) VALUES (?, ?, ?, ?, ?, 'running', ?)",
        )
        .bind(turn_id)
        .bind(session_id)
        .bind(aid)
        .bind(trigger.as_str())
        .bind(prompt)
        .bind(rfc3339(now))
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Records how a turn ended.
    pub async fn finish_turn(
        &self,
        turn_id: &str,
        status: &str,
        final_text: Option<&str>,
        error_code: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), DbError> {
        sqlx::query("UPDATE turns SET status = ?, ended_at = ?, final_text = ?, error_code = ? WHERE id = ?")
            .bind(status)
            .bind(rfc3339(now))
            .bind(final_text)
            .bind(error_code)
            .bind(turn_id)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// The turns of a session, oldest first.
    pub async fn turns(&self, session_id: &str) -> Result<Vec<TurnInfo>, DbError> {
        sqlx::query_as::<_, TurnInfo>(
            "SELECT * FROM turns WHERE session_id = ? ORDER BY started_at, id",
        )
        .bind(session_id)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| row_error(e, |_| "turns"))
    }

    /// The session a turn belongs to.
    pub async fn turns_session(&self, turn_id: &str) -> Result<Option<String>, DbError> {
        Ok(
            sqlx::query_scalar("SELECT session_id FROM turns WHERE id = ?")
                .bind(turn_id)
                .fetch_optional(&self.pool)
                .await?,
        )
    }

    /// Stores one event of a turn.
    pub async fn append_event(&self, event: &TurnEvent) -> Result<(), DbError> {
        self.append_events(std::slice::from_ref(event)).await
    }

    /// Stores several events in one transaction.
    pub async fn append_events(&self, events: &[TurnEvent]) -> Result<(), DbError> {
        // Multi-row inserts: a statement is a hop to SQLite's thread, a row is not.
        const ROWS: usize = 256;
        let mut statements = Vec::new();
        for chunk in events.chunks(ROWS) {
            let mut sql = String::from("INSERT INTO events (turn_id, seq, type, body) VALUES ");
            let mut bodies = Vec::with_capacity(chunk.len());
            for (i, e) in chunk.iter().enumerate() {
                sql.push_str(if i == 0 {
                    "(?, ?, ?, ?)"
                } else {
                    ", (?, ?, ?, ?)"
                });
                bodies.push(
                    serde_json::to_string(e)
                        .map_err(|e| DbError::Query(sqlx::Error::Encode(Box::new(e))))?,
                );
            }
            statements.push((sql, chunk, bodies));
        }
        fn query<'q>(
            sql: &'q str,
            chunk: &[TurnEvent],
            bodies: Vec<String>,
        ) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>> {
            let mut q = sqlx::query(sql);
            for (e, body) in chunk.iter().zip(bodies) {
                q = q
                    .bind(e.turn_id.clone())
                    .bind(i64::from(e.seq))
                    .bind(e.kind.type_name())
                    .bind(body);
            }
            q
        }
        if statements.len() == 1 {
            if let Some((sql, chunk, bodies)) = statements.pop() {
                query(&sql, chunk, bodies).execute(&self.pool).await?;
            }
            return Ok(());
        }
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        for (sql, chunk, bodies) in statements {
            query(&sql, chunk, bodies).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The stored events of a turn, in order (for replay).
    pub async fn turn_events(&self, turn_id: &str) -> Result<Vec<TurnEvent>, DbError> {
        let rows = sqlx::query("SELECT body FROM events WHERE turn_id = ? ORDER BY seq")
            .bind(turn_id)
            .fetch_all(&self.pool)
            .await?;
        rows.iter()
            .map(|r| {
                serde_json::from_str(column::<&str>(r, "events", "body")?)
                    .map_err(|e| DbError::Query(sqlx::Error::Decode(Box::new(e))))
            })
            .collect()
    }

    /// Adds one provider response's tokens and cost to the usage ledger.
    #[allow(clippy::too_many_arguments)]
    pub async fn record_usage(
        &self,
        agent: &str,
        session_id: Option<&str>,
        turn_id: Option<&str>,
        provider: &str,
        input_tokens: u32,
        output_tokens: u32,
        cost_usd: f64,
        now: DateTime<Utc>,
    ) -> Result<(), DbError> {
        // The agent's row is looked up inside the insert (one statement); it is created first
        // only for an agent seen for the first time.
        let insert = |q: &'static str, key: String| {
            sqlx::query(q)
                .bind(key)
                .bind(session_id)
                .bind(turn_id)
                .bind(rfc3339(now))
                .bind(now.format("%Y-%m-%d").to_string())
                .bind(provider)
                .bind(i64::from(input_tokens))
                .bind(i64::from(output_tokens))
                .bind(cost_usd)
        };
        if let Some(s) = self
            .spend_cache()
            .get_mut(&(agent.to_string(), now.format("%Y-%m-%d").to_string()))
        {
            s.usd += cost_usd;
        }
        let by_alias = "INSERT INTO usage (agent_id, session_id, turn_id, time, day, provider, input_tokens, output_tokens, cost_usd)
             SELECT id, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM agents WHERE alias = ?1";
        let done = insert(by_alias, agent.to_string())
            .execute(&self.pool)
            .await?;
        if done.rows_affected() == 0 {
            let aid = agent_id(&self.pool, agent).await?;
            insert(
                "INSERT INTO usage (agent_id, session_id, turn_id, time, day, provider, input_tokens, output_tokens, cost_usd)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                aid,
            )
            .execute(&self.pool)
            .await?;
        }
        Ok(())
    }

    /// What the agent spent on the UTC day of `now`, in US cents.
    pub async fn cost_today_cents(&self, agent: &str, now: DateTime<Utc>) -> Result<f64, DbError> {
        let key = (agent.to_string(), now.format("%Y-%m-%d").to_string());
        if let Some(s) = self.spend_cache().get(&key) {
            if s.read_at.elapsed() < SPEND_TTL {
                return Ok(s.usd * 100.0);
            }
        }
        let read_at = std::time::Instant::now();
        let usd: f64 = sqlx::query_scalar(
            "SELECT COALESCE(SUM(u.cost_usd), 0.0) FROM usage AS u JOIN agents AS a ON a.id = u.agent_id
             WHERE a.alias = ? AND u.day = ?",
        )
        .bind(agent)
        .bind(&key.1)
        .fetch_one(&self.pool)
        .await?;
        self.spend_cache().insert(key, Spend { read_at, usd });
        Ok(usd * 100.0)
    }

    /// Usage per agent and UTC day from `first_day` (`YYYY-MM-DD`) on, newest day first, then
    /// by agent.
    pub async fn usage_by_day(&self, first_day: &str) -> Result<Vec<DailyUsage>, DbError> {
        sqlx::query_as::<_, DailyUsage>(
            "SELECT u.day AS day, COALESCE(a.alias, '?') AS agent, COUNT(*) AS requests,
                    COALESCE(SUM(u.input_tokens), 0) AS input,
                    COALESCE(SUM(u.output_tokens), 0) AS output,
                    COALESCE(SUM(u.cost_usd), 0.0) AS cost
             FROM usage AS u LEFT JOIN agents AS a ON a.id = u.agent_id
             WHERE u.day >= ?
             GROUP BY u.day, a.alias
             ORDER BY u.day DESC, agent",
        )
        .bind(first_day)
        .fetch_all(&self.pool)
        .await
        .map_err(Into::into)
    }

    /// Token totals of a turn: (input, output, cost_usd).
    pub async fn turn_usage(&self, turn_id: &str) -> Result<(i64, i64, f64), DbError> {
        let u = sqlx::query_as::<_, TurnUsage>(
            "SELECT COALESCE(SUM(input_tokens),0) AS input_tokens, COALESCE(SUM(output_tokens),0) AS output_tokens,
                    COALESCE(SUM(cost_usd),0.0) AS cost_usd FROM usage WHERE turn_id = ?",
        )
        .bind(turn_id)
        .fetch_one(&self.pool)
        .await
        .map_err(|e| row_error(e, |_| "usage"))?;
        Ok((u.input_tokens, u.output_tokens, u.cost_usd))
    }
}
