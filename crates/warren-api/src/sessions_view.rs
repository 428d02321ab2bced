//! An agent's chat sessions as the window's Live screen and `warren sessions list` show them:
//! each with a title (its first prompt, shortened), how many turns it holds and when it was last
//! active; and the stored turns of one session, to show it again and continue it.

use crate::activity::{storage, turn_summary};
use crate::{TurnSummary, Warren};
use serde::{Deserialize, Serialize};
use warren_types::{ApiError, ErrorCode, UnknownCode};

/// What started a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    /// The window's chat or `warren run` (also a delegated SubAgent's session).
    Chat,
    /// An editor over ACP.
    Acp,
    /// Scheduled runs.
    Cron,
}

impl SessionKind {
    /// Every kind.
    pub const ALL: [SessionKind; 3] = [SessionKind::Chat, SessionKind::Acp, SessionKind::Cron];

    /// The wire spelling, also the `kind` column of the `sessions` table.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Chat => "chat",
            SessionKind::Acp => "acp",
            SessionKind::Cron => "cron",
        }
    }
}

impl std::str::FromStr for SessionKind {
    type Err = UnknownCode;

    fn from_str(s: &str) -> Result<Self, UnknownCode> {
        Self::ALL
            .into_iter()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownCode::new("session kind", s))
    }
}

/// One session as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct SessionView {
    /// Session id (pass it as the session of a prompt to continue the session).
    pub id: String,
    /// The agent's alias (None once the agent was deleted).
    pub agent: Option<String>,
    /// What started it.
    pub kind: SessionKind,
    /// Its first prompt on one line, shortened.
    pub title: String,
    /// How many turns it holds.
    pub turns: u32,
    /// When it began (RFC 3339).
    pub started_at: String,
    /// Its last activity (RFC 3339).
    pub last_activity: String,
}

/// How many characters of the first prompt a title keeps.
pub const TITLE_CHARS: usize = 60;

/// `prompt` on one line, cut to [`TITLE_CHARS`] characters with an ellipsis.
pub fn session_title(prompt: &str) -> String {
    let line = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= TITLE_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(TITLE_CHARS - 1).collect();
    cut.truncate(cut.trim_end().len());
    cut.push('…');
    cut
}

impl Warren {
    /// The sessions of `agent` (or of every agent), newest activity first; a not-found error
    /// for an agent the config does not have.
    pub async fn sessions(&self, agent: Option<&str>) -> Result<Vec<SessionView>, ApiError> {
        if let Some(a) = agent {
            let config = self.load()?.config;
            if !config.agents.contains_key(a) {
                return Err(crate::errors::unknown_agent(&config, a));
            }
        }
        let whose = agent.map_or_else(|| "every agent".to_string(), |a| format!("`{a}`"));
        let host = self.host().await?;
        let store = host.sessions();
        let list = store
            .list_sessions(agent)
            .await
            .map_err(storage(format!("the sessions of {whose}")))?;
        let counts = store
            .turn_counts(agent)
            .await
            .map_err(storage(format!("the turns of {whose}")))?;
        list.into_iter()
            .map(|s| {
                let kind = s.kind.parse().map_err(|e: UnknownCode| {
                    ApiError::new(ErrorCode::Storage, format!("session `{}`: {e}", s.id))
                })?;
                let turns = counts.get(&s.id).copied().unwrap_or(0);
                Ok(SessionView {
                    title: session_title(&s.title),
                    turns: u32::try_from(turns).unwrap_or(u32::MAX),
                    id: s.id,
                    agent: s.agent,
                    kind,
                    started_at: s.created_at,
                    last_activity: s.updated_at,
                })
            })
            .collect()
    }

    /// The stored turns of session `id`, oldest first; a not-found error for a session that is
    /// not stored.
    pub async fn session_turns(&self, id: &str) -> Result<Vec<TurnSummary>, ApiError> {
        let host = self.host().await?;
        let store = host.sessions();
        if store
            .session(id)
            .await
            .map_err(storage(format!("session `{id}`")))?
            .is_none()
        {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!("session `{id}` does not exist"),
            ));
        }
        store
            .turns(id)
            .await
            .map_err(storage(format!("the turns of session `{id}`")))?
            .into_iter()
            .map(turn_summary)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{session_title, SessionKind, TITLE_CHARS};
    use warren_state::sessions::SessionKind as StoredKind;
    use warren_types::{ErrorCode, TurnTrigger};

    #[test]
    fn session_kinds_are_their_documented_codes() {
        let kinds = [
            (SessionKind::Chat, "chat"),
            (SessionKind::Acp, "acp"),
            (SessionKind::Cron, "cron"),
        ];
        crate::test_support::assert_codes(&kinds);
        assert_eq!(kinds.len(), SessionKind::ALL.len());
        for (k, code) in kinds {
            assert_eq!(code.parse::<SessionKind>().unwrap(), k);
        }
        let e = "webhook".parse::<SessionKind>().unwrap_err();
        assert_eq!(e.to_string(), "unknown session kind `webhook`");
    }

    #[test]
    fn a_title_is_the_first_prompt_on_one_line_shortened() {
        assert_eq!(session_title("  fix\nthe   build "), "fix the build");
        let long = "word ".repeat(40);
        let t = session_title(&long);
        assert_eq!(t.chars().count(), TITLE_CHARS);
        assert!(t.ends_with("word…"), "{t}");
        assert_eq!(session_title(&"é".repeat(80)).chars().count(), TITLE_CHARS);
    }

    #[test]
    fn sessions_are_listed_newest_first_with_their_turns_and_read_back() {
        let (_dir, w) = crate::test_support::install(
            "[risk_profiles.p]\n[agents.a]\nrisk_profile = \"p\"\n[agents.b]\nrisk_profile = \"p\"\n",
        );
        let rt = crate::test_support::runtime();
        rt.block_on(async {
            assert_eq!(w.sessions(Some("a")).await.unwrap(), vec![]);
            let e = w.sessions(Some("ghost")).await.unwrap_err();
            assert_eq!(e.code, ErrorCode::NotFound);
            assert!(e.message.contains("agent `ghost`"), "{}", e.message);

            let host = w.host().await.unwrap();
            let store = host.sessions();
            let t0 = chrono::DateTime::parse_from_rfc3339("2026-01-01T10:00:00Z")
                .unwrap()
                .to_utc();
            let first = store
                .create_session("a", StoredKind::Chat, "first\nquestion", t0)
                .await
                .unwrap();
            let second = store
                .create_session(
                    "a",
                    StoredKind::Cron,
                    "nightly",
                    t0 + chrono::Duration::hours(1),
                )
                .await
                .unwrap();
            store
                .create_session("b", StoredKind::Chat, "not a's", t0)
                .await
                .unwrap();
            for (turn, minutes) in [("t1", 0), ("t2", 1)] {
                let at = t0 + chrono::Duration::minutes(minutes);
                store
                    .start_turn(turn, &first.id, "a", &TurnTrigger::User, "q", at)
                    .await
                    .unwrap();
            }
            store
                .start_turn("t3", &second.id, "a", &TurnTrigger::Cron, "nightly", t0)
                .await
                .unwrap();

            let listed = w.sessions(Some("a")).await.unwrap();
            let rows: Vec<_> = listed
                .iter()
                .map(|s| (s.id.as_str(), s.kind, s.title.as_str(), s.turns))
                .collect();
            assert_eq!(
                rows,
                vec![
                    (second.id.as_str(), SessionKind::Cron, "nightly", 1),
                    (first.id.as_str(), SessionKind::Chat, "first question", 2),
                ]
            );
            assert_eq!(listed[1].agent.as_deref(), Some("a"));
            assert_eq!(listed[1].started_at, "2026-01-01T10:00:00.000000Z");
            assert_eq!(w.sessions(None).await.unwrap().len(), 3);

            let turns = w.session_turns(&first.id).await.unwrap();
            let ids: Vec<_> = turns.iter().map(|t| t.id.as_str()).collect();
            assert_eq!(ids, ["t1", "t2"]);
            assert!(turns.iter().all(|t| t.session_id == first.id));
            let e = w.session_turns("no-such-session").await.unwrap_err();
            assert_eq!(e.code, ErrorCode::NotFound);
            assert!(
                e.message.contains("session `no-such-session`"),
                "{}",
                e.message
            );

            // A kind this version does not know is a storage error naming the session.
            sqlx::query("UPDATE sessions SET kind = 'webhook' WHERE id = ?")
                .bind(&first.id)
                .execute(store.pool())
                .await
                .unwrap();
            let e = w.sessions(Some("a")).await.unwrap_err();
            assert_eq!(e.code, ErrorCode::Storage);
            assert_eq!(
                e.message,
                format!("session `{}`: unknown session kind `webhook`", first.id)
            );
        });
    }
}
