//! Many agents at once (cargo feature `runtime`): an install of `n` agents, each with a fake
//! provider of its own answering after a fixed latency, every agent running a turn of `rounds`
//! `file_read` rounds at the same time; then the rows the run left in sessions.db checked for
//! losses and duplicates. Used by the many-agents benchmark and by its small-size test.

use crate::fake_llm::{FakeLlm, Reply};
use crate::turn::host_env;
use crate::TestInstall;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};
use warren_runtime::host::Host;
use warren_runtime::turn::TurnOutcome;
use warren_types::{EventKind, ProviderFamily, TurnTrigger};

/// An install of many agents and the host over it.
pub struct Crowd {
    // Declared first so the host (and its database pools) closes before the folder goes.
    host: Host,
    install: TestInstall,
    fakes: Vec<FakeLlm>,
    aliases: Vec<String>,
}

/// What one run of [`Crowd::run`] measured.
#[derive(Debug)]
pub struct CrowdRun {
    /// From the start of the first turn to the end of the last.
    pub wall: Duration,
    /// Time between consecutive model requests of one turn (a round: the provider's answer,
    /// the tool call and the round's records), every turn's rounds together.
    pub rounds: Vec<Duration>,
    /// Each agent's outcome, in agent order.
    pub outcomes: Vec<Result<TurnOutcome, String>>,
}

/// What the rows of a run hold, counted per agent (see [`Crowd::check_rows`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct RowCounts {
    /// Turns that completed.
    pub completed_turns: usize,
    /// `tool_call` events.
    pub tool_calls: usize,
    /// Receipts.
    pub receipts: usize,
    /// Usage rows (one a provider call).
    pub usage: usize,
    /// Rows of the action ledger.
    pub actions: usize,
}

impl Crowd {
    /// `n` agents (`a0`, `a1`, …), each on a full-access profile with its own fake OpenAI
    /// provider and a `f.txt` in its workspace. Call inside a tokio runtime.
    pub async fn open(n: usize) -> Result<Crowd, String> {
        let fakes = (0..n)
            .map(|_| FakeLlm::start(ProviderFamily::Openai))
            .collect::<Result<Vec<FakeLlm>, _>>()
            .map_err(|e| format!("starting a fake provider: {e}"))?;
        let aliases: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
        let mut config = String::from(
            "[risk_profiles.y]\nlevel = \"full\"\n[runtime_profiles.r]\nmax_tool_iterations = 1000\nmax_actions_per_hour = 1000000\n",
        );
        for (alias, fake) in aliases.iter().zip(&fakes) {
            config.push_str(&format!(
                "[agents.{alias}]\nrisk_profile = \"y\"\nruntime_profile = \"r\"\nmodel_provider = \"openai.m{alias}\"\n{}",
                fake.config_block(&format!("m{alias}"))
            ));
        }
        let install =
            TestInstall::with_config(&config).map_err(|e| format!("writing the install: {e}"))?;
        for alias in &aliases {
            let ws = install.root().join("agents").join(alias).join("workspace");
            std::fs::create_dir_all(&ws)
                .and_then(|()| std::fs::write(ws.join("f.txt"), "hello"))
                .map_err(|e| format!("{}: {e}", ws.display()))?;
        }
        let host = Host::open(install.layout(), host_env(&install))
            .await
            .map_err(|e| format!("opening the host: {e}"))?;
        Ok(Crowd {
            host,
            install,
            fakes,
            aliases,
        })
    }

    /// The host.
    pub fn host(&self) -> &Host {
        &self.host
    }

    /// The install.
    pub fn install(&self) -> &TestInstall {
        &self.install
    }

    /// Whether the fake providers keep every request (on by default; see
    /// [`FakeLlm::keep_requests`]).
    pub fn keep_requests(&self, keep: bool) {
        for fake in &self.fakes {
            fake.keep_requests(keep);
        }
    }

    /// Every agent runs one turn of `rounds` `file_read` rounds and a final answer at the same
    /// time, each provider answering after `latency`.
    pub async fn run(&self, rounds: usize, latency: Duration) -> CrowdRun {
        for fake in &self.fakes {
            for _ in 0..rounds {
                fake.push(
                    Reply::tool_call("file_read", serde_json::json!({"path": "f.txt"}))
                        .delay(latency),
                );
            }
            fake.push(Reply::text("done").delay(latency));
        }
        let mut events = self.host.subscribe();
        let gaps = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = gaps.clone();
        let collector = tokio::spawn(async move {
            let mut last: BTreeMap<String, Instant> = BTreeMap::new();
            while let Some(e) = events.recv().await {
                if matches!(e.kind, EventKind::ModelRequest { .. }) {
                    let now = Instant::now();
                    if let Some(before) = last.insert(e.turn_id.clone(), now) {
                        into.lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push(now - before);
                    }
                }
            }
        });
        let start = Instant::now();
        let turns = self.aliases.iter().map(|alias| async move {
            self.host
                .run(alias, None, "read", TurnTrigger::User, None)
                .await
                .map_err(|e| e.to_string())
        });
        let outcomes = futures::future::join_all(turns).await;
        let wall = start.elapsed();
        // The subscription outlives the run: give the collector the events already sent.
        tokio::time::sleep(Duration::from_millis(50)).await;
        collector.abort();
        let rounds = std::mem::take(
            &mut *gaps
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        CrowdRun {
            wall,
            rounds,
            outcomes,
        }
    }

    /// Counts, per agent, what sessions.db holds, and checks that nothing was lost or doubled:
    /// every turn's events numbered 1..n without a gap, every agent's receipts numbered without
    /// a gap and its chain head at the last, every session's messages likewise. Answers the
    /// counts per agent, or what is wrong.
    pub fn check_rows(&self) -> Result<BTreeMap<String, RowCounts>, String> {
        check_rows(&self.install.layout().sessions_db(), &self.aliases)
    }
}

fn check_rows(db: &Path, aliases: &[String]) -> Result<BTreeMap<String, RowCounts>, String> {
    let db = rusqlite::Connection::open(db).map_err(|e| e.to_string())?;
    let q = |sql: &str, alias: &str| -> Result<i64, String> {
        db.query_row(sql, [alias], |r| r.get(0))
            .map_err(|e| format!("{sql}: {e}"))
    };
    let mut out = BTreeMap::new();
    for alias in aliases {
        let agent = "(SELECT id FROM agents WHERE alias = ?1)";
        let gaps = q(
            &format!(
                "SELECT COUNT(*) FROM (SELECT turn_id, COUNT(*) AS n, MIN(seq) AS lo, MAX(seq) AS hi
                 FROM events WHERE turn_id IN (SELECT id FROM turns WHERE agent_id = {agent})
                 GROUP BY turn_id) WHERE lo != 1 OR hi != n"
            ),
            alias,
        )?;
        if gaps != 0 {
            return Err(format!("{alias}: {gaps} turns whose events have a gap"));
        }
        let (n, lo, hi): (i64, Option<i64>, Option<i64>) = db
            .query_row(
                &format!(
                    "SELECT COUNT(*), MIN(seq), MAX(seq) FROM receipts WHERE agent_id = {agent}"
                ),
                [alias],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .map_err(|e| e.to_string())?;
        if n > 0 && (lo != Some(1) || hi != Some(n)) {
            return Err(format!(
                "{alias}: {n} receipts numbered {lo:?}..{hi:?}: lost or doubled"
            ));
        }
        let head = q(
            &format!(
                "SELECT COALESCE(MAX(last_seq), 0) FROM receipt_heads WHERE agent_id = {agent}"
            ),
            alias,
        )?;
        if head != n {
            return Err(format!(
                "{alias}: receipt chain head at {head}, {n} receipts"
            ));
        }
        let message_gaps = q(
            &format!(
                "SELECT COUNT(*) FROM (SELECT session_id, COUNT(*) AS n, MIN(seq) AS lo, MAX(seq) AS hi
                 FROM messages WHERE session_id IN (SELECT id FROM sessions WHERE agent_id = {agent})
                 GROUP BY session_id) WHERE hi - lo + 1 != n"
            ),
            alias,
        )?;
        if message_gaps != 0 {
            return Err(format!(
                "{alias}: {message_gaps} sessions whose messages have a gap"
            ));
        }
        let count = |sql: String| -> Result<usize, String> {
            q(&sql, alias).map(|n| usize::try_from(n).unwrap_or(0))
        };
        out.insert(
            alias.clone(),
            RowCounts {
                completed_turns: count(format!(
                    "SELECT COUNT(*) FROM turns WHERE agent_id = {agent} AND status = 'completed'"
                ))?,
                tool_calls: count(format!(
                    "SELECT COUNT(*) FROM events WHERE type = 'tool_call'
                     AND turn_id IN (SELECT id FROM turns WHERE agent_id = {agent})"
                ))?,
                receipts: usize::try_from(n).unwrap_or(0),
                usage: count(format!(
                    "SELECT COUNT(*) FROM usage WHERE agent_id = {agent}"
                ))?,
                actions: count(format!(
                    "SELECT COUNT(*) FROM actions WHERE agent_id = {agent}"
                ))?,
            },
        );
    }
    Ok(out)
}
