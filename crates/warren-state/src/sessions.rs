//! Chat and ACP sessions, their message history, the events of every turn and the usage ledger,
//! all in `<install>/data/sessions.db` and attributed to agents by their stable id.

use crate::db::{agent_id_sync, column, named, row_error, DbError, SyncDb};
use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;
use sqlx::SqlitePool;
use std::sync::Arc;
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
    /// The blocking connection a turn's reads and writes run on (see [`SyncDb`]).
    sync: Arc<SyncDb>,
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
            sync: Arc::new(SyncDb::new(pool.connect_options().get_filename())),
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

    /// Runs `f` on the blocking connection, on this task's thread, holding the file's write gate
    /// meanwhile so that this process's writers take turns (see [`SyncDb`]).
    async fn blocking<T, F>(&self, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> Result<T, DbError> + Send + 'static,
    {
        let turn = self.sync.gate.clone().lock_owned().await;
        let db = self.sync.clone();
        let out = warren_memory::blocking::run(move || db.with(f)).await;
        drop(turn);
        out.unwrap_or(Err(DbError::Query(sqlx::Error::WorkerCrashed)))
    }

    /// Reads with `f` on the blocking connection (see [`Self::blocking`]).
    async fn read<T, F>(&self, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T, DbError> + Send + 'static,
    {
        self.blocking(move |conn| f(conn)).await
    }

    /// Runs `f` in one transaction on the blocking connection, committed when `f` succeeds and
    /// rolled back otherwise. It begins `IMMEDIATE` (see [`SyncDb`]): every write of this
    /// connection takes the write lock before its first read, so it waits its turn behind
    /// another connection's write instead of failing when that write lands between the two.
    async fn write<T, F>(&self, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Transaction<'_>) -> Result<T, DbError> + Send + 'static,
    {
        self.blocking(move |conn| {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        })
        .await
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
        self.insert_session(agent, kind, title, now, None).await
    }

    /// Creates a session served by process `pid`, its first heartbeat at `now`, in the same
    /// statement: no reader ever sees it without its process, which a reaper would end.
    pub(crate) async fn create_served_session(
        &self,
        agent: &str,
        kind: SessionKind,
        title: &str,
        pid: u32,
        now: DateTime<Utc>,
    ) -> Result<SessionInfo, DbError> {
        self.insert_session(agent, kind, title, now, Some(pid))
            .await
    }

    async fn insert_session(
        &self,
        agent: &str,
        kind: SessionKind,
        title: &str,
        now: DateTime<Utc>,
        served_by: Option<u32>,
    ) -> Result<SessionInfo, DbError> {
        let t = rfc3339(now);
        let info = SessionInfo {
            id: uuid::Uuid::new_v4().to_string(),
            agent: Some(agent.to_string()),
            kind: kind.as_str().to_string(),
            title: title.chars().take(80).collect(),
            created_at: t.clone(),
            updated_at: t,
            ended_at: None,
        };
        let row = info.clone();
        self.write(move |tx| {
            let aid = agent_id_sync(tx, row.agent.as_deref().unwrap_or_default())?;
            tx.prepare_cached(
                "INSERT INTO sessions (id, agent_id, kind, title, created_at, updated_at, pid, heartbeat_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(rusqlite::params![
                row.id,
                aid,
                row.kind,
                row.title,
                row.created_at,
                row.updated_at,
                served_by.map(i64::from),
                served_by.map(|_| &row.created_at),
            ])?;
            Ok(())
        })
        .await?;
        Ok(info)
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
        let session_id = session_id.to_string();
        let bodies: Vec<String> = self
            .read(move |conn| {
                let mut st = conn.prepare_cached(
                    "SELECT body FROM messages WHERE session_id = ?1 ORDER BY seq",
                )?;
                let mut rows = st.query([&session_id])?;
                let mut bodies = Vec::new();
                while let Some(r) = rows.next()? {
                    bodies.push(
                        r.get::<_, String>(0)
                            .map_err(|e| named("body", "messages", Box::new(e)))?,
                    );
                }
                Ok(bodies)
            })
            .await?;
        bodies
            .iter()
            .map(|b| serde_json::from_str(b).map_err(|e| named("body", "messages", Box::new(e))))
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
        // The messages get consecutive `seq` numbers after the session's last, all or none.
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
        let mut values = vec![session_id.to_string(), turn_id.to_string()];
        values.extend(messages.iter().map(ToString::to_string));
        let (session_id, at) = (session_id.to_string(), rfc3339(now));
        self.write(move |tx| {
            tx.prepare_cached(&sql)?
                .execute(rusqlite::params_from_iter(values))?;
            tx.prepare_cached("UPDATE sessions SET updated_at = ?1 WHERE id = ?2")?
                .execute([at, session_id])?;
            Ok(())
        })
        .await
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
        let (turn_id, session_id, agent) = (
            turn_id.to_string(),
            session_id.to_string(),
            agent.to_string(),
        );
        let (trigger, prompt, at) = (trigger.as_str(), prompt.to_string(), rfc3339(now));
        self.write(move |tx| {
            let aid = agent_id_sync(tx, &agent)?;
            tx.prepare_cached(
                "INSERT INTO turns (id, session_id, agent_id, trigger, prompt, status, started_at) VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6)",
            )?
            .execute(rusqlite::params![turn_id, session_id, aid, trigger, prompt, at])?;
            Ok(())
        })
        .await
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
        let end = TurnEnd {
            turn_id: turn_id.to_string(),
            status: status.to_string(),
            final_text: final_text.map(str::to_string),
            error_code: error_code.map(str::to_string),
            at: now,
        };
        self.finish_turn_with_events(&[], &end).await
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
        let statements = event_inserts(events)?;
        if statements.is_empty() {
            return Ok(());
        }
        self.write(move |tx| run_inserts(tx, statements)).await
    }

    /// Records how a turn ended and stores its last `events` (none is fine) in the same
    /// transaction: a reader sees the turn ended with all of them, or neither.
    pub async fn finish_turn_with_events(
        &self,
        events: &[TurnEvent],
        end: &TurnEnd,
    ) -> Result<(), DbError> {
        let statements = event_inserts(events)?;
        let end = end.clone();
        self.write(move |tx| {
            run_inserts(tx, statements)?;
            tx.prepare_cached(
                "UPDATE turns SET status = ?1, ended_at = ?2, final_text = ?3, error_code = ?4 WHERE id = ?5",
            )?
            .execute(rusqlite::params![
                end.status,
                rfc3339(end.at),
                end.final_text,
                end.error_code,
                end.turn_id
            ])?;
            Ok(())
        })
        .await
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
        let day = now.format("%Y-%m-%d").to_string();
        if let Some(s) = self
            .spend_cache()
            .get_mut(&(agent.to_string(), day.clone()))
        {
            s.usd += cost_usd;
        }
        let agent = agent.to_string();
        let (session_id, turn_id) = (session_id.map(str::to_string), turn_id.map(str::to_string));
        let (provider, at) = (provider.to_string(), rfc3339(now));
        self.write(move |tx| {
            let aid = agent_id_sync(tx, &agent)?;
            tx.prepare_cached(
                "INSERT INTO usage (agent_id, session_id, turn_id, time, day, provider, input_tokens, output_tokens, cost_usd)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(rusqlite::params![
                aid,
                session_id,
                turn_id,
                at,
                day,
                provider,
                i64::from(input_tokens),
                i64::from(output_tokens),
                cost_usd
            ])?;
            Ok(())
        })
        .await
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
        let (agent, day) = key.clone();
        let usd: f64 = self
            .read(move |conn| {
                Ok(conn
                    .prepare_cached(
                        "SELECT COALESCE(SUM(u.cost_usd), 0.0) FROM usage AS u JOIN agents AS a ON a.id = u.agent_id
                         WHERE a.alias = ?1 AND u.day = ?2",
                    )?
                    .query_row([agent, day], |r| r.get(0))?)
            })
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

/// Runs `statements` (from [`event_inserts`]) in the caller's transaction.
fn run_inserts(tx: &rusqlite::Transaction<'_>, statements: EventInserts) -> Result<(), DbError> {
    for (sql, values) in statements {
        tx.prepare_cached(&sql)?
            .execute(rusqlite::params_from_iter(values))?;
    }
    Ok(())
}

/// SQL statements with their values.
type EventInserts = Vec<(String, Vec<rusqlite::types::Value>)>;

/// The multi-row `INSERT`s that store `events` (a statement per row costs more), with their
/// values.
fn event_inserts(events: &[TurnEvent]) -> Result<EventInserts, DbError> {
    // Multi-row inserts of up to this many rows.
    const ROWS: usize = 256;
    let mut statements = Vec::new();
    for chunk in events.chunks(ROWS) {
        let mut sql = String::from("INSERT INTO events (turn_id, seq, type, body) VALUES ");
        let mut values: Vec<rusqlite::types::Value> = Vec::with_capacity(chunk.len() * 4);
        for (i, e) in chunk.iter().enumerate() {
            sql.push_str(if i == 0 {
                "(?, ?, ?, ?)"
            } else {
                ", (?, ?, ?, ?)"
            });
            let body = serde_json::to_string(e)
                .map_err(|e| DbError::Query(sqlx::Error::Encode(Box::new(e))))?;
            values.extend([
                e.turn_id.clone().into(),
                i64::from(e.seq).into(),
                e.kind.type_name().to_string().into(),
                body.into(),
            ]);
        }
        statements.push((sql, values));
    }
    Ok(statements)
}

/// How a turn ended, as [`SessionStore::finish_turn_with_events`] records it.
#[derive(Debug, Clone)]
pub struct TurnEnd {
    /// The turn.
    pub turn_id: String,
    /// `completed`, `cancelled` or `failed`.
    pub status: String,
    /// The final answer, when there is one.
    pub final_text: Option<String>,
    /// The failure's code, when it failed.
    pub error_code: Option<String>,
    /// When it ended.
    pub at: DateTime<Utc>,
}
