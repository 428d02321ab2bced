//! The first-run flow's state, kept in the install (`<install>/data/first_run.json`), so the
//! window and every later start agree: the flow is shown while no outcome (completed or
//! skipped) is recorded and no agent uses a provider route that has answered a Test. A Test
//! that gets an answer (window or `warren providers test`) records its route here.

use crate::Warren;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use warren_types::{ApiError, ErrorCode};

/// How the first-run flow ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SetupOutcome {
    /// The user went through it to the end.
    Completed,
    /// The user chose "Skip setup".
    Skipped,
}

impl SetupOutcome {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            SetupOutcome::Completed => "completed",
            SetupOutcome::Skipped => "skipped",
        }
    }
}

/// What `first_run.json` holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SetupState {
    /// How the flow ended last, if it did.
    #[serde(default)]
    outcome: Option<SetupOutcome>,
    /// When (RFC 3339, UTC).
    #[serde(default)]
    decided_at: Option<String>,
    /// Routes that answered a Test, in the order they first did.
    #[serde(default)]
    answered: Vec<String>,
}

/// The first-run state as the window reads it at start.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct FirstRunView {
    /// Whether the flow should be shown now.
    pub show: bool,
    /// Why (or why not), in words.
    pub reason: String,
    /// How the flow ended last, if it did.
    pub outcome: Option<SetupOutcome>,
    /// When it ended (RFC 3339, UTC).
    pub decided_at: Option<String>,
    /// Routes that answered a Test.
    pub answered: Vec<String>,
    /// The agent the flow points first: `assistant` when it exists, else the first by name.
    pub default_agent: Option<String>,
    /// `<install>/data/first_run.json`.
    pub state_path: String,
}

fn io_error(what: &str, path: &std::path::Path, e: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::Io, format!("{what} {}: {e}", path.display()))
}

impl Warren {
    fn first_run_path(&self) -> PathBuf {
        self.layout().data_dir().join("first_run.json")
    }

    fn setup_state(&self) -> Result<SetupState, ApiError> {
        let path = self.first_run_path();
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                ApiError::new(
                    ErrorCode::Storage,
                    format!("{} is not a first-run record: {e}", path.display()),
                )
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SetupState::default()),
            Err(e) => Err(io_error("reading", &path, e)),
        }
    }

    /// Reads, changes and writes `first_run.json` holding `first_run.lock` (an exclusive file
    /// lock), so that the window and a `warren` command changing it at once both keep their
    /// change: the record itself is replaced whole on each write, so it cannot carry the lock.
    fn update_setup_state(&self, change: impl FnOnce(&mut SetupState)) -> Result<(), ApiError> {
        let dir = self.layout().data_dir();
        std::fs::create_dir_all(&dir).map_err(|e| io_error("creating", &dir, e))?;
        let lock_path = dir.join("first_run.lock");
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| io_error("opening", &lock_path, e))?;
        lock.lock()
            .map_err(|e| io_error("locking", &lock_path, e))?;
        let mut state = self.setup_state()?;
        change(&mut state);
        let path = self.first_run_path();
        let text = serde_json::to_vec_pretty(&state)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
        warren_config::write_atomic(&path, &text).map_err(|e| io_error("writing", &path, e))
        // The lock goes with `lock`.
    }

    /// Whether the first-run flow should show: no outcome recorded, and no agent uses a route
    /// that answered a Test. A config that does not load shows no flow (the load error shows).
    pub fn first_run(&self) -> Result<FirstRunView, ApiError> {
        let state = self.setup_state()?;
        let cfg = self.load().ok().map(|l| l.config);
        let default_agent = cfg.as_ref().and_then(|c| {
            if c.agents.contains_key("assistant") {
                Some("assistant".to_string())
            } else {
                c.agents.keys().next().cloned()
            }
        });
        let answering = cfg.as_ref().and_then(|c| {
            c.agents.iter().find_map(|(alias, a)| {
                let route = a.model_provider.as_deref()?;
                state
                    .answered
                    .iter()
                    .any(|r| r == route)
                    .then(|| format!("agent `{alias}` uses `{route}`, which answered a Test"))
            })
        });
        let (show, reason) = match (state.outcome, &cfg, answering) {
            (Some(o), _, _) => (false, format!("setup was {} before", o.as_str())),
            (None, None, _) => (false, "the config does not load".to_string()),
            (None, Some(_), Some(why)) => (false, why),
            (None, Some(_), None) => (
                true,
                "no agent uses a provider route that has answered a Test yet".to_string(),
            ),
        };
        Ok(FirstRunView {
            show,
            reason,
            outcome: state.outcome,
            decided_at: state.decided_at,
            answered: state.answered,
            default_agent,
            state_path: self.first_run_path().display().to_string(),
        })
    }

    /// Records how the flow ended; later starts do not show it (Settings can run it again).
    pub fn finish_first_run(&self, outcome: SetupOutcome) -> Result<FirstRunView, ApiError> {
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        self.update_setup_state(|s| {
            s.outcome = Some(outcome);
            s.decided_at = Some(now);
        })?;
        tracing::info!(outcome = outcome.as_str(), "first-run setup ended");
        self.first_run()
    }

    /// Records that `reference` answered a Test (kept once).
    pub(crate) fn record_answered(&self, reference: &str) -> Result<(), ApiError> {
        if self.setup_state()?.answered.iter().any(|r| r == reference) {
            return Ok(());
        }
        self.update_setup_state(|s| {
            if !s.answered.iter().any(|r| r == reference) {
                s.answered.push(reference.to_string());
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn install(config: &str) -> (tempfile::TempDir, Warren) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config.toml"), config).unwrap();
        let w = Warren::open(warren_config::InstallLayout::new(dir.path()));
        (dir, w)
    }

    const TWO: &str = "[agents.zed]\nrisk_profile = \"r\"\nmodel_provider = \"ollama.local\"\n\
        [agents.bob]\nrisk_profile = \"r\"\n[risk_profiles.r]\nlevel = \"supervised\"\n\
        [providers.models.ollama.local]\nmodel = \"llama3.2\"\n";

    #[test]
    fn shown_until_an_outcome_or_an_answering_route_of_an_agent() {
        let (dir, w) = install(TWO);
        let v = w.first_run().unwrap();
        assert!(v.show, "{v:?}");
        assert_eq!(v.default_agent.as_deref(), Some("bob"), "first by name");
        // A route no agent uses answering does not end it.
        w.record_answered("openai.other").unwrap();
        assert!(w.first_run().unwrap().show);
        w.record_answered("ollama.local").unwrap();
        w.record_answered("ollama.local").unwrap();
        let v = w.first_run().unwrap();
        assert!(!v.show, "{v:?}");
        assert!(
            v.reason.contains("agent `zed` uses `ollama.local`"),
            "{v:?}"
        );
        assert_eq!(v.answered, ["openai.other", "ollama.local"]);
        let text = std::fs::read_to_string(dir.path().join("data/first_run.json")).unwrap();
        assert!(text.contains("\"ollama.local\""), "{text}");
    }

    #[test]
    fn concurrent_writers_with_their_own_handles_lose_no_update() {
        // Each thread opens the install on its own, as the window and a `warren` command do;
        // only the file lock orders their read-change-write.
        let (dir, _w) = install("schema_version = 1\n");
        let root = dir.path().to_path_buf();
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let root = root.clone();
                std::thread::spawn(move || {
                    let w = Warren::open(warren_config::InstallLayout::new(&root));
                    for j in 0..10 {
                        w.record_answered(&format!("p{i}.m{j}")).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = std::fs::read_to_string(root.join("data/first_run.json")).unwrap();
        let state: SetupState = serde_json::from_str(&text).unwrap();
        assert_eq!(state.answered.len(), 80, "{text}");
    }

    #[test]
    fn an_outcome_is_kept_in_the_install() {
        let (_dir, w) = install(TWO);
        let v = w.finish_first_run(SetupOutcome::Skipped).unwrap();
        assert!(!v.show);
        assert_eq!(v.outcome, Some(SetupOutcome::Skipped));
        assert!(v.decided_at.is_some());
        // Another process reading the same install agrees.
        let again = Warren::open(w.layout().clone()).first_run().unwrap();
        assert_eq!(again.outcome, Some(SetupOutcome::Skipped));
        assert!(again.reason.contains("skipped"), "{again:?}");
        let v = w.finish_first_run(SetupOutcome::Completed).unwrap();
        assert_eq!(v.outcome, Some(SetupOutcome::Completed));
    }

    #[test]
    fn a_damaged_record_is_an_error_naming_the_file() {
        let (dir, w) = install(TWO);
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        std::fs::write(
            dir.path().join("data/first_run.json"),
            "{\"outcome\": \"maybe\"}",
        )
        .unwrap();
        let e = w.first_run().unwrap_err();
        assert_eq!(e.code, ErrorCode::Storage);
        assert!(e.message.contains("first_run.json"), "{e:?}");
    }
}
