//! Tests of the ZeroClaw import against the fixture install (a copy of it in a temp folder,
//! checked byte for byte before and after).

use super::*;
use crate::test_support::runtime;
use std::collections::BTreeSet;
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;
use uuid::Uuid;
use warren_config::InstallLayout;
use warren_import::{pending_imports as pending_jobs, PAGE};
use warren_memory::{ListQuery, MemoryEntry, MemoryStore, MemoryStores, RecallQuery};
use warren_runtime::lifecycle::{InterruptAfter, InterruptBeforeJournal};
use warren_state::lifecycle::StepHook;
use warren_state::secrets::{SecretRef, SecretStore};
use warren_types::{ErrorCode, MemoryBackendKind};

/// An RFC 3339 time with any offset, as an instant (as the importer reads the source's).
fn parse_time(s: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// Warren's SQLite memory store, as the importer writes it.
async fn import_store(w: &Warren, config: &warren_types::Config) -> Arc<dyn MemoryStore> {
    MemoryStores::new(w.layout().clone())
        .shared_store(config, MemoryBackendKind::Sqlite)
        .await
        .unwrap()
}

/// The finished imports recorded in `data/import/zeroclaw.json`.
fn read_records(layout: &InstallLayout) -> Result<Vec<serde_json::Value>, ApiError> {
    let path = layout.data_dir().join("import").join("zeroclaw.json");
    match std::fs::read(&path) {
        Ok(b) => serde_json::from_slice(&b)
            .map_err(|e| ApiError::new(ErrorCode::Io, format!("reading {}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(ApiError::new(
            ErrorCode::Io,
            format!("reading {}: {e}", path.display()),
        )),
    }
}
use warren_testkit::zeroclaw::{copy_zeroclaw_fixture, tree_snapshot};

const BASE: &str = "schema_version = 1\n\n# my own agent\n[risk_profiles.p]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"p\"\n";

struct Fx {
    _dir: tempfile::TempDir,
    src: PathBuf,
    home: PathBuf,
}

fn fixture() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let src = copy_zeroclaw_fixture(&dir.path().join("zeroclaw")).unwrap();
    let home = dir.path().join("warren");
    std::fs::create_dir_all(&home).unwrap();
    Fx {
        _dir: dir,
        src,
        home,
    }
}

fn open(home: &Path) -> Warren {
    let mut env = crate::HostEnv::default();
    env.vars
        .insert("WARREN_SECRET_BACKEND".into(), "file".into());
    Warren::open_with_env(InstallLayout::new(home), env)
}

fn opts(src: &Path) -> ImportOptions {
    ImportOptions {
        path: Some(src.to_path_buf()),
        ..ImportOptions::default()
    }
}

fn quiet() -> impl Fn(&ImportProgress) + Send + Sync {
    |_: &ImportProgress| {}
}

/// The source's rows, straight from its database: (alias, key) → (category, session, created,
/// updated, content).
type Row = (String, Option<String>, DateTime, DateTime, String);
type DateTime = chrono::DateTime<chrono::Utc>;

fn source_rows(src: &Path) -> BTreeMap<(String, String), Row> {
    runtime().block_on(async {
        let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&format!(
            "sqlite://{}",
            src.join("data/memory/brain.db").display()
        ))
        .unwrap()
        .immutable(true)
        .read_only(true);
        let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
        type Raw = (String, String, String, Option<String>, String, String, String);
        let rows: Vec<Raw> =
            sqlx::query_as(
                "SELECT a.alias, m.key, m.category, m.session_id, m.created_at, m.updated_at, m.content \
                 FROM memories m JOIN agents a ON a.id = m.agent_id",
            )
            .fetch_all(&pool)
            .await
            .unwrap();
        pool.close().await;
        rows.into_iter()
            .map(|(a, k, c, s, cr, up, content)| {
                (
                    (a, k),
                    (
                        c,
                        s,
                        parse_time(&cr).unwrap(),
                        parse_time(&up).unwrap(),
                        content,
                    ),
                )
            })
            .collect()
    })
}

/// Warren keeps times to the microsecond.
fn micros(t: DateTime) -> i64 {
    t.timestamp_micros()
}

fn warren_rows(w: &Warren, prefix: &str) -> BTreeMap<(String, String), Row> {
    runtime().block_on(async {
        let config = w.load().unwrap().config;
        let store = import_store(w, &config).await;
        let mut out = BTreeMap::new();
        for a in ["researcher", "writer", "reviewer"] {
            let alias = format!("{prefix}{a}");
            let r = store.lookup_agent(&alias).await.unwrap().unwrap();
            let page = store
                .list_for_agent(&r, &ListQuery::default())
                .await
                .unwrap();
            for e in page.entries {
                out.insert(
                    (a.to_string(), e.key),
                    (
                        e.category,
                        e.session_id,
                        e.created_at,
                        e.updated_at,
                        e.content,
                    ),
                );
            }
        }
        out
    })
}

#[test]
fn the_fixture_is_imported_whole_and_the_source_is_untouched() {
    let fx = fixture();
    std::fs::write(fx.home.join("config.toml"), BASE).unwrap();
    let before = tree_snapshot(&fx.src).unwrap();
    let w = open(&fx.home);
    let rt = runtime();
    let q = quiet();

    // The dry run writes nothing and counts everything.
    let mut o = opts(&fx.src);
    o.dry_run = true;
    let plan = rt.block_on(w.import_zeroclaw(&o, &q)).unwrap();
    assert!(plan.dry_run);
    assert!(plan.plan.problems.is_empty(), "{:?}", plan.plan.problems);
    assert_eq!(plan.plan.totals.agents, 4);
    assert_eq!(plan.plan.totals.memory_rows, 92);
    assert_eq!(plan.plan.totals.markdown_entries, 10);
    assert_eq!(plan.plan.totals.secrets, 1);
    assert_eq!(plan.plan.totals.cron_jobs, 1);
    let researcher = plan
        .plan
        .agents
        .iter()
        .find(|a| a.alias == "researcher")
        .unwrap();
    assert_eq!(researcher.memory.get("sources"), Some(&2));
    assert_eq!(researcher.memory.get("conversation"), Some(&10));
    assert_eq!(researcher.sessions, 3);
    let unmapped: Vec<&str> = plan
        .plan
        .unmapped
        .iter()
        .map(|u| u.setting.as_str())
        .collect();
    for s in [
        "providers.models.anthropic.default.temperature",
        "runtime_profiles.long_haul.max_history_messages",
        "agents.writer.delegates[0].mode",
        "agents.reviewer.delegate_same_risk_profile",
        "cron.writer_daily_digest.allowed_tools",
        "onboard_state.quickstart_completed",
        "risk_profiles.guarded.firejail_args",
    ] {
        assert!(unmapped.contains(&s), "{s} is not listed: {unmapped:?}");
    }
    assert!(plan
        .plan
        .callouts
        .iter()
        .any(|c| c.setting == "risk_profiles.trusted.network"
            && c.direction == CalloutDirection::Stronger));
    assert!(plan
        .plan
        .callouts
        .iter()
        .any(|c| c.setting == "risk_profiles.guarded.forbidden_paths"
            && c.direction == CalloutDirection::Weaker));
    assert_eq!(
        std::fs::read_to_string(fx.home.join("config.toml")).unwrap(),
        BASE
    );
    assert!(
        !fx.home.join("data").exists(),
        "a dry run wrote to the install"
    );
    assert!(!fx.home.join("agents").exists());

    // The import.
    let rep = rt.block_on(w.import_zeroclaw(&opts(&fx.src), &q)).unwrap();
    assert!(rep.warnings.is_empty(), "{:?}", rep.warnings);
    assert_eq!(rep.imported.agents, plan.plan.totals.agents);
    assert_eq!(rep.imported.memory_rows, plan.plan.totals.memory_rows);
    assert_eq!(
        rep.imported.markdown_entries,
        plan.plan.totals.markdown_entries
    );
    assert_eq!(
        rep.imported.workspace_files,
        plan.plan.totals.workspace_files
    );
    assert_eq!(
        rep.imported.workspace_bytes,
        plan.plan.totals.workspace_bytes
    );
    assert_eq!(rep.imported.secrets, 1);

    // Config: agents, profiles, grants, delegates, cron, provider; comments kept; no key.
    let loaded = w.load().unwrap();
    assert!(loaded.text.contains("# my own agent"));
    assert!(!loaded.text.contains("fixture-dummy-api-key-not-real"));
    assert!(!loaded.text.contains("enc2:"));
    let c = &loaded.config;
    assert_eq!(c.agents.len(), 5);
    let r = &c.agents["researcher"];
    assert_eq!(r.risk_profile, "trusted");
    assert_eq!(r.runtime_profile.as_deref(), Some("long_haul"));
    assert_eq!(r.model_provider.as_deref(), Some("anthropic.default"));
    assert!(r.workspace.unrestricted_filesystem);
    assert_eq!(r.workspace.access["writer"], warren_types::AccessMode::Read);
    assert_eq!(
        r.workspace.read_memory_from,
        vec![warren_types::MemoryGrant::Agent("writer".into())]
    );
    let wr = &c.agents["writer"];
    assert_eq!(
        wr.workspace.access["researcher"],
        warren_types::AccessMode::ReadWrite
    );
    assert_eq!(wr.delegates, vec!["reviewer".to_string()]);
    assert_eq!(wr.cron_jobs, vec!["writer_daily_digest".to_string()]);
    assert_eq!(
        c.agents["reviewer"].workspace.access["writer"],
        warren_types::AccessMode::Write
    );
    assert_eq!(
        c.agents["journal"].memory.backend,
        Some(MemoryBackendKind::Markdown)
    );
    assert_eq!(
        c.agents["journal"].model_provider.as_deref(),
        Some("ollama.local")
    );
    let guarded = &c.risk_profiles["guarded"];
    assert_eq!(
        guarded.allowed_commands,
        ["git", "ls", "cat", "grep", "wc", "pandoc"]
    );
    assert_eq!(guarded.always_ask, ["shell"]);
    assert_eq!(guarded.delegation, warren_types::DelegationMode::Allow);
    assert!(!guarded.forbidden_paths.iter().any(|p| p == "/tmp"));
    assert!(guarded.forbidden_paths.iter().any(|p| p == "/etc"));
    let trusted = &c.risk_profiles["trusted"];
    assert_eq!(trusted.level, warren_types::AutonomyLevel::Full);
    assert!(!trusted.workspace_only && !trusted.require_approval_for_medium_risk);
    let lh = &c.runtime_profiles["long_haul"];
    assert_eq!(
        (
            lh.max_tool_iterations,
            lh.max_actions_per_hour,
            lh.max_cost_per_day_cents,
            lh.shell_timeout_secs,
            lh.max_delegation_depth
        ),
        (40, 120, 1500, 180, 2)
    );
    let f = &c.runtime_profiles["focused"];
    assert_eq!(
        (
            f.max_tool_iterations,
            f.max_delegation_depth,
            f.parallel_tools
        ),
        (12, 0, false)
    );
    let job = &c.cron["writer_daily_digest"];
    assert_eq!(job.agent, "writer");
    assert!(job
        .prompt
        .starts_with("Summarise today's drafting progress"));
    assert!(
        job.schedule == "30 21 * * 1-5" || job.schedule == "30 22 * * 1-5",
        "{}",
        job.schedule
    );
    let anth = &c.providers.models["anthropic"]["default"];
    assert_eq!(anth.model, "claude-sonnet-4-5");
    assert_eq!(anth.secret.as_deref(), Some("zeroclaw.anthropic.default"));
    assert_eq!(
        c.providers.models["ollama"]["local"].uri.as_deref(),
        Some("http://127.0.0.1:11434")
    );

    // The key went to the secret store.
    let secrets = w.secret_store().unwrap();
    let key = secrets
        .get(&SecretRef::install("zeroclaw.anthropic.default").unwrap())
        .unwrap();
    assert_eq!(key.as_deref(), Some("fixture-dummy-api-key-not-real"));

    // Every row, with its category, session and times.
    let want = source_rows(&fx.src);
    assert_eq!(want.len(), 92);
    let got = warren_rows(&w, "");
    assert_eq!(got.len(), 92);
    for (k, (cat, sess, cr, up, content)) in &want {
        let g = got.get(k).unwrap_or_else(|| panic!("{k:?} missing"));
        assert_eq!((&g.0, &g.1, &g.4), (cat, sess, content), "{k:?}");
        assert_eq!(micros(g.2), micros(*cr), "{k:?} created_at");
        assert_eq!(micros(g.3), micros(*up), "{k:?} updated_at");
    }
    let topic = &got[&("researcher".to_string(), "topic_focus".to_string())];
    assert!(topic.3 > topic.2, "a row stored twice keeps both times");

    // Recall by the agent, and through its grant.
    rt.block_on(async {
        let stores = MemoryStores::new(w.layout().clone());
        let writer = stores.handle_for(c, "writer").await.unwrap();
        let hits = writer
            .recall(&RecallQuery::new("style guide voice").limit(50))
            .await
            .unwrap();
        assert!(
            hits.iter().any(|h| h.key == "style_guide_voice"),
            "{hits:?}"
        );
        let reviewer = stores.handle_for(c, "reviewer").await.unwrap();
        let own = reviewer.list(&ListQuery::default()).await.unwrap();
        assert_eq!(own.total, 30);
        let journal = stores.handle_for(c, "journal").await.unwrap();
        let md = journal.list(&ListQuery::default()).await.unwrap();
        assert_eq!(md.total, 10, "{md:?}");
        let core = md.entries.iter().filter(|e| e.category == "core").count();
        assert_eq!(core, 3);
        let reminder = journal.get("reminder_2026_08_21").await.unwrap().unwrap();
        assert_eq!(reminder.category, "daily");
        assert_eq!(
            reminder.content,
            "Remind me about the dentist appointment on Tuesday."
        );
        assert_eq!(
            reminder.created_at.format("%Y-%m-%d").to_string(),
            "2026-08-21"
        );
    });

    // Workspaces: byte for byte (the Markdown agent's memory files are converted).
    for a in ["researcher", "writer", "reviewer", "journal"] {
        let s = tree_snapshot(&fx.src.join(format!("agents/{a}/workspace"))).unwrap();
        let d = tree_snapshot(&w.layout().default_workspace(a)).unwrap();
        let strip = |m: &BTreeMap<String, (u32, Vec<u8>)>| -> BTreeMap<String, Vec<u8>> {
            m.iter()
                .filter(|(k, _)| {
                    a != "journal" || !(k.as_str() == "MEMORY.md" || k.starts_with("memory/"))
                })
                .map(|(k, (_, b))| (k.clone(), b.clone()))
                .collect()
        };
        assert_eq!(strip(&s), strip(&d), "workspace of {a}");
        assert_eq!(
            s.keys().collect::<Vec<_>>(),
            d.keys().collect::<Vec<_>>(),
            "{a}"
        );
    }
    let converted =
        std::fs::read_to_string(w.layout().default_workspace("journal").join("MEMORY.md")).unwrap();
    assert!(converted.starts_with("# Long-Term Memory\n"), "{converted}");
    assert!(
        converted.contains("[key:journal_owner] [category:core]"),
        "{converted}"
    );

    // The source was not modified.
    assert_eq!(
        tree_snapshot(&fx.src).unwrap(),
        before,
        "the source changed"
    );
    assert!(!fx.src.join("data/memory/brain.db-wal").exists());

    // A second import is refused; --update adds nothing new.
    let again = rt
        .block_on(w.import_zeroclaw(&opts(&fx.src), &q))
        .unwrap_err();
    assert_eq!(again.code, ErrorCode::AlreadyExists, "{again:?}");
    assert!(
        again.message.contains("already imported"),
        "{}",
        again.message
    );
    let mut u = opts(&fx.src);
    u.update = true;
    let up = rt.block_on(w.import_zeroclaw(&u, &q)).unwrap();
    assert_eq!(
        (up.imported.memory_rows, up.imported.memory_rows_skipped),
        (0, 92 + 10)
    );
    assert_eq!(tree_snapshot(&fx.src).unwrap(), before);
}

#[test]
fn update_adds_only_rows_not_imported_yet() {
    let fx = fixture();
    let w = open(&fx.home);
    let rt = runtime();
    let q = quiet();
    rt.block_on(w.import_zeroclaw(&opts(&fx.src), &q)).unwrap();
    // ZeroClaw stores a new row for writer and a new Markdown entry for journal.
    rt.block_on(async {
        let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&format!(
            "sqlite://{}",
            fx.src.join("data/memory/brain.db").display()
        ))
        .unwrap();
        let pool = sqlx::SqlitePool::connect_with(opts).await.unwrap();
        sqlx::query(
            "INSERT INTO memories (id, key, content, category, created_at, updated_at, agent_id) \
             SELECT 'new-row', 'late_note', 'Added after the import.', 'core', \
             '2026-09-01T10:00:00.5-04:00', '2026-09-01T10:00:00.5-04:00', id FROM agents WHERE alias = 'writer'",
        )
        .execute(&pool)
        .await
        .unwrap();
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)").execute(&pool).await.unwrap();
        pool.close().await;
    });
    let day = fx.src.join("agents/journal/workspace/memory/2026-08-21.md");
    let mut text = std::fs::read_to_string(&day).unwrap();
    text.push_str("\n- **late_entry**: Written after the import.\n");
    std::fs::write(&day, text).unwrap();
    let mut u = opts(&fx.src);
    u.update = true;
    let up = rt.block_on(w.import_zeroclaw(&u, &q)).unwrap();
    assert_eq!(up.imported.memory_rows, 1, "{up:?}");
    assert_eq!(up.imported.markdown_entries, 1, "{up:?}");
    let got = warren_rows(&w, "");
    let late = &got[&("writer".to_string(), "late_note".to_string())];
    assert_eq!(late.4, "Added after the import.");
    assert_eq!(late.2.to_rfc3339(), "2026-09-01T14:00:00.500+00:00");
}

fn final_state_ok(w: &Warren, ctx: &str) {
    let c = w.load().unwrap().config;
    for a in ["researcher", "writer", "reviewer", "journal"] {
        assert!(c.agents.contains_key(a), "{ctx}: {a} missing");
        assert!(
            w.layout()
                .default_workspace(a)
                .join("IDENTITY.md")
                .is_file(),
            "{ctx}: {a} workspace"
        );
    }
    assert_eq!(c.cron.len(), 1, "{ctx}");
    assert_eq!(warren_rows(w, "").len(), 92, "{ctx}");
    assert!(pending_jobs(w.layout()).is_empty(), "{ctx}: journal left");
    assert_eq!(read_records(w.layout()).unwrap().len(), 1, "{ctx}");
    let parent = w.layout().agents_dir();
    for e in std::fs::read_dir(parent).unwrap().flatten() {
        let leftovers: Vec<_> = std::fs::read_dir(e.path())
            .unwrap()
            .flatten()
            .filter(|x| x.file_name().to_string_lossy().starts_with(".workspace"))
            .collect();
        assert!(leftovers.is_empty(), "{ctx}: {leftovers:?}");
    }
}

#[test]
fn an_import_interrupted_after_any_step_converges_on_the_next_start() {
    // secrets, 4 workspaces, 3 agents' rows, config, record.
    const STEPS: usize = 10;
    let rt = runtime();
    let q = quiet();
    for n in 1..=STEPS {
        for before_journal in [false, true] {
            let fx = fixture();
            let src_before = tree_snapshot(&fx.src).unwrap();
            let ctx = format!("step {n}, before journal: {before_journal}");
            let w = open(&fx.home);
            let err = if before_journal {
                let hook = InterruptBeforeJournal::new(n);
                let e = rt.block_on(w.import_zeroclaw_with(&opts(&fx.src), &q, &hook));
                assert!(hook.fired(), "{ctx}");
                e
            } else {
                let hook = InterruptAfter::new(n);
                let e = rt.block_on(w.import_zeroclaw_with(&opts(&fx.src), &q, &hook));
                assert!(hook.fired(), "{ctx}");
                e
            };
            assert!(err.is_err(), "{ctx}");
            assert_eq!(pending_jobs(w.layout()).len(), 1, "{ctx}");
            // The next start (a new process) finishes it.
            let next = open(&fx.home);
            let outcomes = rt.block_on(next.resume_imports());
            assert!(
                outcomes.len() == 1 && outcomes[0].1.is_ok(),
                "{ctx}: {outcomes:?}"
            );
            final_state_ok(&next, &ctx);
            assert_eq!(tree_snapshot(&fx.src).unwrap(), src_before, "{ctx}");
        }
    }
    // Running the command again instead of restarting finishes it too.
    let fx = fixture();
    let w = open(&fx.home);
    let hook = InterruptAfter::new(3);
    assert!(rt
        .block_on(w.import_zeroclaw_with(&opts(&fx.src), &q, &hook))
        .is_err());
    rt.block_on(w.import_zeroclaw(&opts(&fx.src), &q)).unwrap();
    final_state_ok(&w, "rerun");
}

/// After the `n`-th journaled step a real fault is put in place until [`FaultAfter::lift`]:
/// the Warren install made immutable (every write after it fails with `EPERM`) and, on
/// Postgres memory, the server refusing writes to the schema.
struct FaultAfter {
    n: usize,
    seen: std::sync::atomic::AtomicUsize,
    root: PathBuf,
    pg: Option<(String, String)>,
    frozen: std::sync::Mutex<Option<warren_testkit::faults::Frozen>>,
}

impl FaultAfter {
    fn new(n: usize, root: &Path, pg: Option<&PgMemory>) -> Self {
        FaultAfter {
            n,
            seen: Default::default(),
            root: root.to_path_buf(),
            pg: pg.map(|p| (p.url.clone(), p.schema.clone())),
            frozen: Default::default(),
        }
    }
    fn fired(&self) -> bool {
        self.seen.load(std::sync::atomic::Ordering::SeqCst) >= self.n
    }
    fn put(&self) {
        if let Some((url, schema)) = &self.pg {
            warren_testkit::faults::refuse_pg_writes(url, schema, true);
        }
        *self.frozen.lock().unwrap() = Some(warren_testkit::faults::Frozen::freeze(&[&self.root]));
    }
    fn lift(&self) {
        if let Some(f) = self.frozen.lock().unwrap().take() {
            f.thaw();
            if let Some((url, schema)) = &self.pg {
                warren_testkit::faults::refuse_pg_writes(url, schema, false);
            }
        }
    }
}

impl StepHook for FaultAfter {
    fn after_step(&self, _op: &str, _step: &str) -> Result<(), String> {
        if self.seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 == self.n {
            self.put();
        }
        Ok(())
    }
}

/// Warren's memory in a fresh schema of a Postgres server, dropped afterwards.
struct PgMemory {
    url: String,
    schema: String,
}

impl PgMemory {
    fn fresh(url: &str) -> Self {
        PgMemory {
            url: url.to_string(),
            schema: format!("wi_fault_{}", &Uuid::new_v4().simple().to_string()[..16]),
        }
    }
    fn config(&self) -> String {
        format!(
            "schema_version = 1\n\n[memory]\nbackend = \"postgres\"\n\n[memory.postgres]\nurl = \"{}\"\nschema = \"{}\"\n",
            self.url, self.schema
        )
    }
}

impl Drop for PgMemory {
    fn drop(&mut self) {
        let _ = std::process::Command::new("psql")
            .args(["-q", &self.url, "-c"])
            .arg(format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.schema))
            .output();
    }
}

/// A fixture whose Warren install keeps its memory in `pg` (a config with only that), or on
/// SQLite without a config.
fn fixture_on(pg: Option<&PgMemory>) -> Fx {
    let fx = fixture();
    if let Some(pg) = pg {
        std::fs::write(fx.home.join("config.toml"), pg.config()).unwrap();
    }
    fx
}

/// A real fault (see [`FaultAfter`]) after each step of the import in turn: the import fails
/// with its own error; once the fault is lifted the unfinished import is listed, holds its
/// aliases (a create of one and a turn of one are refused with `lifecycle_pending`), and one
/// Resume finishes it with the rows a fault-free import writes. A fault already there before
/// the import starts makes it write nothing.
fn import_converges_after_a_real_fault_at_every_step(pg_url: Option<&str>) {
    use crate::lifecycle_view::LifecycleKind;
    use warren_types::{CreateAgentRequest, TurnTrigger};
    if !warren_testkit::faults::available() {
        return;
    }
    // secrets, 4 workspaces, 3 agents' rows, config, record.
    const STEPS: usize = 10;
    let rt = runtime();
    let q = quiet();
    let memory = || pg_url.map(PgMemory::fresh);
    let expected_rows = {
        let pg = memory();
        let fx = fixture_on(pg.as_ref());
        let w = open(&fx.home);
        rt.block_on(w.import_zeroclaw(&opts(&fx.src), &q)).unwrap();
        warren_rows(&w, "")
    };
    assert_eq!(expected_rows.len(), 92);
    {
        let pg = memory();
        let fx = fixture_on(pg.as_ref());
        let w = open(&fx.home);
        let before = tree_snapshot(&fx.home).unwrap();
        let fault = FaultAfter::new(0, &fx.home, pg.as_ref());
        fault.put();
        let err = rt
            .block_on(w.import_zeroclaw(&opts(&fx.src), &q))
            .unwrap_err();
        fault.lift();
        assert_eq!(tree_snapshot(&fx.home).unwrap(), before, "{}", err.message);
        assert!(rt.block_on(open(&fx.home).pending_lifecycle()).is_empty());
    }
    for n in 1..=STEPS {
        let pg = memory();
        let fx = fixture_on(pg.as_ref());
        let src_before = tree_snapshot(&fx.src).unwrap();
        let ctx = format!("a fault after step {n}");
        let w = open(&fx.home);
        let hook = FaultAfter::new(n, &fx.home, pg.as_ref());
        let out = rt.block_on(w.import_zeroclaw_with(&opts(&fx.src), &q, &hook));
        hook.lift();
        assert!(hook.fired(), "{ctx}");
        let err = out.expect_err(&ctx);
        assert!(
            matches!(err.code, ErrorCode::Io | ErrorCode::Storage),
            "{ctx}: {:?} {}",
            err.code,
            err.message
        );
        drop(w);

        let next = open(&fx.home);
        let pending = rt.block_on(next.pending_lifecycle());
        assert_eq!(pending.len(), 1, "{ctx}: {pending:?}");
        assert_eq!(pending[0].kind, LifecycleKind::Import, "{ctx}");
        let mut held = pending[0].aliases.clone();
        held.sort();
        assert_eq!(
            held,
            ["journal", "researcher", "reviewer", "writer"],
            "{ctx}"
        );
        assert!(pending[0].description.contains("ZeroClaw"), "{ctx}");
        let create = next.create_agent(CreateAgentRequest {
            alias: "writer".into(),
            risk_profile: "p".into(),
            ..Default::default()
        });
        assert_eq!(
            create.map(|_| ()).unwrap_err().code,
            ErrorCode::LifecyclePending,
            "{ctx}"
        );
        let turn = rt.block_on(next.run_prompt(
            crate::run::RunRequest {
                agent: "researcher".into(),
                session: None,
                prompt: "hi".into(),
            },
            TurnTrigger::User,
            None,
        ));
        let turn = turn.map(|_| ()).unwrap_err();
        assert_eq!(
            turn.code,
            ErrorCode::LifecyclePending,
            "{ctx}: {}",
            turn.message
        );
        assert!(turn.message.contains("import"), "{ctx}: {}", turn.message);

        let done = rt.block_on(next.resume_lifecycle()).unwrap();
        assert!(done.len() == 1 && done[0].ok, "{ctx}: {done:?}");
        final_state_ok(&next, &ctx);
        assert_eq!(warren_rows(&next, ""), expected_rows, "{ctx}");
        assert!(rt.block_on(next.pending_lifecycle()).is_empty(), "{ctx}");
        assert_eq!(tree_snapshot(&fx.src).unwrap(), src_before, "{ctx}");
    }
}

#[test]
fn an_import_that_meets_a_real_fault_at_any_step_converges_after_one_resume() {
    import_converges_after_a_real_fault_at_every_step(None);
}

#[test]
fn an_import_on_postgres_memory_that_meets_a_real_fault_at_any_step_converges_after_one_resume() {
    match std::env::var("WARREN_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => import_converges_after_a_real_fault_at_every_step(Some(&url)),
        _ => println!("skipped: WARREN_TEST_POSTGRES_URL not set"),
    }
}

#[test]
fn an_alias_taken_in_warren_stops_the_import_unless_a_prefix_renames_everything() {
    let fx = fixture();
    let cfg = "schema_version = 1\n[risk_profiles.p]\nlevel = \"supervised\"\n\n[agents.writer]\nrisk_profile = \"p\"\n";
    std::fs::write(fx.home.join("config.toml"), cfg).unwrap();
    let w = open(&fx.home);
    let rt = runtime();
    let q = quiet();
    let before = tree_snapshot(&fx.home).unwrap();
    let err = rt
        .block_on(w.import_zeroclaw(&opts(&fx.src), &q))
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::AlreadyExists);
    assert!(
        err.message.contains("agent `writer` already exists"),
        "{}",
        err.message
    );
    assert_eq!(
        tree_snapshot(&fx.home).unwrap(),
        before,
        "the refused import wrote something"
    );

    let mut o = opts(&fx.src);
    o.prefix = "zc_".into();
    let rep = rt.block_on(w.import_zeroclaw(&o, &q)).unwrap();
    assert_eq!(rep.imported.memory_rows, 92);
    let c = w.load().unwrap().config;
    assert_eq!(
        c.agents["writer"].risk_profile, "p",
        "the existing agent is untouched"
    );
    let zw = &c.agents["zc_writer"];
    assert_eq!(zw.risk_profile, "zc_guarded");
    assert_eq!(zw.runtime_profile.as_deref(), Some("zc_focused"));
    assert_eq!(zw.model_provider.as_deref(), Some("anthropic.zc_default"));
    assert_eq!(zw.delegates, vec!["zc_reviewer".to_string()]);
    assert_eq!(zw.cron_jobs, vec!["zc_writer_daily_digest".to_string()]);
    assert_eq!(
        zw.workspace.access["zc_researcher"],
        warren_types::AccessMode::ReadWrite
    );
    assert_eq!(
        zw.workspace.read_memory_from,
        vec![warren_types::MemoryGrant::Agent("zc_researcher".into())]
    );
    assert_eq!(c.cron["zc_writer_daily_digest"].agent, "zc_writer");
    assert_eq!(
        c.providers.models["anthropic"]["zc_default"]
            .secret
            .as_deref(),
        Some("zeroclaw.anthropic.zc_default")
    );
    assert!(
        c.risk_profiles.contains_key("zc_trusted")
            && c.runtime_profiles.contains_key("zc_long_haul")
    );
    assert_eq!(warren_rows(&w, "zc_").len(), 92);
    assert!(w
        .layout()
        .default_workspace("zc_journal")
        .join("MEMORY.md")
        .is_file());
    assert!(!w.layout().default_workspace("writer").exists());
}

#[test]
fn category_scoped_memory_grants_are_imported_and_honoured() {
    let fx = fixture();
    let cfg = fx.src.join("config.toml");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "[agents.reviewer.workspace]\nread_memory_from = [\"writer\"]",
        "[agents.reviewer.workspace]\nread_memory_from = [{ agent = \"writer\", categories = [\"core\"] }]",
    );
    assert!(text.contains("categories = [\"core\"]"));
    std::fs::write(&cfg, text).unwrap();
    let w = open(&fx.home);
    let rt = runtime();
    rt.block_on(w.import_zeroclaw(&opts(&fx.src), &quiet()))
        .unwrap();
    let c = w.load().unwrap().config;
    assert_eq!(
        c.agents["reviewer"].workspace.read_memory_from,
        vec![warren_types::MemoryGrant::Scoped {
            agent: "writer".into(),
            categories: vec!["core".into()]
        }]
    );
    rt.block_on(async {
        let stores = MemoryStores::new(w.layout().clone());
        let reviewer = stores.handle_for(&c, "reviewer").await.unwrap();
        // `project_deadline` is a core row of both; writer's daily rows stay out of reach.
        let hits = reviewer
            .recall(&RecallQuery::new("progress").limit(100))
            .await
            .unwrap();
        assert!(
            !hits
                .iter()
                .any(|h| h.agent == "writer" && h.category != "core"),
            "{hits:?}"
        );
        let core = reviewer
            .recall(&RecallQuery::new("style guide voice").limit(100))
            .await
            .unwrap();
        assert!(
            core.iter()
                .any(|h| h.agent == "writer" && h.key == "style_guide_voice"),
            "{core:?}"
        );
    });
}

#[test]
fn bad_sources_are_refused_naming_the_file_and_nothing_is_written() {
    let rt = runtime();
    let q = quiet();
    let check = |fx: &Fx, want: &str, code: ErrorCode| {
        std::fs::write(fx.home.join("config.toml"), BASE).unwrap();
        let before = tree_snapshot(&fx.home).unwrap();
        let w = open(&fx.home);
        for dry_run in [true, false] {
            let mut o = opts(&fx.src);
            o.dry_run = dry_run;
            let err = rt.block_on(w.import_zeroclaw(&o, &q)).unwrap_err();
            assert_eq!(err.code, code, "{err:?}");
            assert!(err.message.contains(want), "{want} not in {}", err.message);
        }
        assert_eq!(tree_snapshot(&fx.home).unwrap(), before);
    };
    // A missing install.
    let fx = fixture();
    std::fs::remove_dir_all(&fx.src).unwrap();
    check(&fx, &fx.src.display().to_string(), ErrorCode::NotFound);
    // An unknown schema.
    let fx = fixture();
    let cfg = fx.src.join("config.toml");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("schema_version = 3", "schema_version = 4");
    std::fs::write(&cfg, text).unwrap();
    check(
        &fx,
        &format!(
            "{}: config schema_version 4 is not supported",
            cfg.display()
        ),
        ErrorCode::InvalidArgument,
    );
    // A corrupt memory database.
    let fx = fixture();
    let db = fx.src.join("data/memory/brain.db");
    let mut bytes = std::fs::read(&db).unwrap();
    for b in bytes.iter_mut().skip(4096).take(8192) {
        *b = 0x5a;
    }
    std::fs::write(&db, bytes).unwrap();
    check(&fx, &db.display().to_string(), ErrorCode::Storage);
    // Not a database at all.
    let fx = fixture();
    let db = fx.src.join("data/memory/brain.db");
    std::fs::write(&db, b"this is not a database").unwrap();
    check(&fx, &db.display().to_string(), ErrorCode::Storage);
}

/// A ZeroClaw install with ZeroClaw's schema (indexes included) and the given number of memory
/// rows per agent, every agent on SQLite memory.
fn generated_source(root: &Path, agents: &[(&str, u32)]) {
    std::fs::create_dir_all(root.join("data/memory")).unwrap();
    let mut cfg = String::from(
        "schema_version = 3\n\n[risk_profiles.p]\nlevel = \"supervised\"\nworkspace_only = true\n",
    );
    for (a, _) in agents {
        cfg.push_str(&format!(
            "\n[agents.{a}]\nrisk_profile = \"p\"\nenabled = true\n\n[agents.{a}.memory]\nbackend = \"sqlite\"\n"
        ));
        let ws = root.join(format!("agents/{a}/workspace"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("IDENTITY.md"), format!("{a}\n")).unwrap();
    }
    std::fs::write(root.join("config.toml"), cfg).unwrap();
    runtime().block_on(async {
        let pool = brain_pool(root).await;
        sqlx::raw_sql(
            "CREATE TABLE agents (id TEXT PRIMARY KEY, alias TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL);
             CREATE TABLE memories (id TEXT PRIMARY KEY, key TEXT NOT NULL, content TEXT NOT NULL,
                 category TEXT NOT NULL DEFAULT 'core', embedding BLOB, created_at TEXT NOT NULL,
                 updated_at TEXT NOT NULL, session_id TEXT, namespace TEXT DEFAULT 'default',
                 importance REAL DEFAULT 0.5, superseded_by TEXT,
                 agent_id TEXT NOT NULL REFERENCES agents(id), kind TEXT,
                 pinned INTEGER NOT NULL DEFAULT 0, tenant_id TEXT, UNIQUE (agent_id, key));
             CREATE INDEX idx_memories_agent_id ON memories(agent_id);",
        )
        .execute(&pool)
        .await
        .unwrap();
        for (a, n) in agents {
            sqlx::query("INSERT INTO agents VALUES (?, ?, '2026-08-17T13:05:00+00:00')")
                .bind(Uuid::new_v4().to_string())
                .bind(*a)
                .execute(&pool)
                .await
                .unwrap();
            add_source_rows(&pool, a, 0..*n).await;
        }
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    });
}

async fn brain_pool(root: &Path) -> sqlx::SqlitePool {
    let opts = sqlx::sqlite::SqliteConnectOptions::from_str(&format!(
        "sqlite://{}",
        root.join("data/memory/brain.db").display()
    ))
    .unwrap()
    .create_if_missing(true);
    sqlx::SqlitePool::connect_with(opts).await.unwrap()
}

/// Rows `range` of agent `alias`: every 97th has an id that is not a UUID (Warren gives it one);
/// times carry nanoseconds and an offset.
async fn add_source_rows(pool: &sqlx::SqlitePool, alias: &str, range: std::ops::Range<u32>) {
    let mut tx = pool.begin().await.unwrap();
    for i in range {
        let id = if i % 97 == 0 {
            format!("legacy-{alias}-{i}")
        } else {
            Uuid::new_v4().to_string()
        };
        let (cat, session) = match i % 3 {
            0 => ("core", None),
            1 => ("daily", None),
            _ => ("conversation", Some(format!("session-{}", i % 11))),
        };
        sqlx::query(
            "INSERT INTO memories (id, key, content, category, created_at, updated_at, session_id, agent_id) \
             SELECT ?, ?, ?, ?, ?, ?, ?, id FROM agents WHERE alias = ?",
        )
        .bind(id)
        .bind(format!("note_{i:05}"))
        .bind(format!("Note {i} of {alias}: marker{alias}{i}q about the refrigerant cycle."))
        .bind(cat)
        .bind(format!("2026-08-17T09:{:02}:{:02}.{:09}-04:00", i / 60 % 60, i % 60, 806_122_517 + i))
        .bind(format!("2026-08-18T10:{:02}:{:02}.{:09}+02:00", i / 60 % 60, i % 60, 1 + i * 1000))
        .bind(session)
        .bind(alias)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
}

/// Every row Warren holds for `aliases`, by (alias, key), with its id.
fn warren_rows_of(w: &Warren, aliases: &[&str]) -> BTreeMap<(String, String), (Row, Uuid)> {
    runtime().block_on(async {
        let config = w.load().unwrap().config;
        let store = import_store(w, &config).await;
        let mut out = BTreeMap::new();
        for alias in aliases {
            let r = store.lookup_agent(alias).await.unwrap().unwrap();
            let page = store
                .list_for_agent(&r, &ListQuery::default())
                .await
                .unwrap();
            for e in page.entries {
                let row = (
                    e.category,
                    e.session_id,
                    e.created_at,
                    e.updated_at,
                    e.content,
                );
                assert!(out
                    .insert((alias.to_string(), e.key), (row, e.id))
                    .is_none());
            }
        }
        out
    })
}

/// The source's rows by (alias, key) with their id text.
fn source_rows_with_ids(src: &Path) -> BTreeMap<(String, String), (Row, String)> {
    runtime().block_on(async {
        let pool = brain_pool(src).await;
        type Raw = (String, String, String, String, Option<String>, String, String, String);
        let rows: Vec<Raw> = sqlx::query_as(
            "SELECT a.alias, m.key, m.id, m.category, m.session_id, m.created_at, m.updated_at, m.content \
             FROM memories m JOIN agents a ON a.id = m.agent_id",
        )
        .fetch_all(&pool)
        .await
        .unwrap();
        pool.close().await;
        rows.into_iter()
            .map(|(a, k, id, c, s, cr, up, content)| {
                let cr = parse_time(&cr).unwrap();
                let up = parse_time(&up).unwrap();
                // Warren keeps microseconds.
                let cr = chrono::DateTime::from_timestamp_micros(cr.timestamp_micros()).unwrap();
                let up = chrono::DateTime::from_timestamp_micros(up.timestamp_micros()).unwrap();
                ((a, k), ((c, s, cr, up, content), id))
            })
            .collect()
    })
}

#[test]
fn a_bulk_import_with_colliding_ids_and_an_update_gives_the_exact_rows() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("zeroclaw");
    let home = dir.path().join("warren");
    std::fs::create_dir_all(&home).unwrap();
    // alpha crosses a page boundary, beta fits in one page; 12,000 rows to begin with.
    generated_source(&src, &[("alpha", 10_600), ("beta", 1400)]);
    let rt = runtime();
    let w = open(&home);
    let first = source_rows_with_ids(&src);
    assert_eq!(first.len(), 12_000);

    // Warren already holds rows with the ids of about 300 of alpha's rows and 200 of beta's
    // (another agent's, restored from an archive, say): those rows get new ids, the others keep
    // theirs (5 of the picked rows have no UUID to collide with).
    let colliding: BTreeSet<Uuid> = first
        .iter()
        .filter_map(|((a, k), (_, id))| {
            let n: u32 = k.trim_start_matches("note_").parse().unwrap();
            let pick = (a == "alpha" && n % 8 == 1 && n < 2400) || (a == "beta" && n % 7 == 1);
            Uuid::parse_str(id).ok().filter(|_| pick)
        })
        .collect();
    assert_eq!(colliding.len(), 297 + 198);
    rt.block_on(async {
        // No config yet: the importer plans against the default one.
        let config = match w.layout().config_path().exists() {
            true => w.load().unwrap().config,
            false => warren_types::Config::default(),
        };
        let store = import_store(&w, &config).await;
        let now = chrono::Utc::now();
        let held: Vec<MemoryEntry> = colliding
            .iter()
            .enumerate()
            .map(|(i, id)| MemoryEntry {
                id: *id,
                agent_id: Uuid::nil(),
                agent: "archived".into(),
                key: format!("held_{i}"),
                content: "held by another agent".into(),
                category: "core".into(),
                session_id: None,
                importance: 0.5,
                created_at: now,
                updated_at: now,
                score: None,
            })
            .collect();
        let r = store
            .import_agent("archived", Uuid::new_v4(), &held)
            .await
            .unwrap();
        assert_eq!(r.imported, 495);
    });

    let seen = std::sync::Mutex::new(Vec::<ImportProgress>::new());
    let record = |p: &ImportProgress| seen.lock().unwrap().push(p.clone());
    let rep = rt
        .block_on(w.import_zeroclaw(&opts(&src), &record))
        .unwrap();
    assert_eq!(
        (rep.imported.memory_rows, rep.imported.memory_rows_skipped),
        (12_000, 0)
    );
    assert!(rep.warnings.is_empty(), "{:?}", rep.warnings);
    let check = |want: &BTreeMap<(String, String), (Row, String)>, ctx: &str| {
        let got = warren_rows_of(&w, &["alpha", "beta"]);
        assert_eq!(got.len(), want.len(), "{ctx}");
        let mut ids = BTreeSet::new();
        for (k, (row, src_id)) in want {
            let (g, id) = got.get(k).unwrap_or_else(|| panic!("{ctx}: {k:?} missing"));
            assert_eq!(g, row, "{ctx}: {k:?}");
            assert!(ids.insert(*id), "{ctx}: id {id} given twice");
            match Uuid::parse_str(src_id) {
                Ok(u) if colliding.contains(&u) => {
                    assert_ne!(*id, u, "{ctx}: {k:?} kept a taken id");
                }
                Ok(u) => assert_eq!(*id, u, "{ctx}: {k:?} lost its free id"),
                Err(_) => {}
            }
            assert!(!colliding.contains(id), "{ctx}: {k:?}");
        }
    };
    check(&first, "first import");
    // Progress: per agent up to its total, overall up to 12,000, never backwards.
    let seen = seen.into_inner().unwrap();
    let last = seen.last().unwrap();
    assert_eq!((last.overall_done, last.overall_total), (12_000, 12_000));
    assert!(seen
        .windows(2)
        .all(|p| p[0].overall_done <= p[1].overall_done));
    for (a, n) in [("alpha", 10_600), ("beta", 1400)] {
        let mine: Vec<_> = seen.iter().filter(|p| p.agent == a).collect();
        assert!(mine.len() > usize::from(n > PAGE as u64), "{a}: {mine:?}");
        assert_eq!(
            mine.last().map(|p| (p.rows_done, p.rows_total)),
            Some((n, n))
        );
    }

    // ZeroClaw stores 700 more rows of alpha and 300 of beta; `--update` adds exactly those.
    rt.block_on(async {
        let pool = brain_pool(&src).await;
        add_source_rows(&pool, "alpha", 10_600..11_300).await;
        add_source_rows(&pool, "beta", 1400..1700).await;
        sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
            .execute(&pool)
            .await
            .unwrap();
        pool.close().await;
    });
    let all = source_rows_with_ids(&src);
    assert_eq!(all.len(), 13_000);
    let mut u = opts(&src);
    u.update = true;
    let up = rt.block_on(w.import_zeroclaw(&u, &quiet())).unwrap();
    assert_eq!(
        (up.imported.memory_rows, up.imported.memory_rows_skipped),
        (1000, 12_000)
    );
    check(&all, "after --update");
    let again = rt.block_on(w.import_zeroclaw(&u, &quiet())).unwrap();
    assert_eq!(
        (
            again.imported.memory_rows,
            again.imported.memory_rows_skipped
        ),
        (0, 13_000)
    );
    check(&all, "after a second --update");

    // Recall finds rows of both runs, a colliding one included.
    rt.block_on(async {
        let config = w.load().unwrap().config;
        let stores = MemoryStores::new(w.layout().clone());
        for (a, i) in [
            ("alpha", 1u32),
            ("alpha", 2599),
            ("alpha", 11_299),
            ("beta", 8),
            ("beta", 1650),
        ] {
            let h = stores.handle_for(&config, a).await.unwrap();
            let hits = h
                .recall(&RecallQuery::new(format!("marker{a}{i}q")).limit(5))
                .await
                .unwrap();
            assert_eq!(
                hits.iter().map(|h| h.key.clone()).collect::<Vec<_>>(),
                vec![format!("note_{i:05}")],
                "recall of {a} row {i}"
            );
        }
    });
}

/// The outside file a planted link points at: its text must never reach Warren.
const OUTSIDE: &str = "- **stolen**: OUTSIDE-SECRET-4711\n";

/// Whether `OUTSIDE`'s marker is anywhere in Warren's install (files and memory rows).
fn leaked(home: &Path) -> bool {
    fn walk(d: &Path) -> bool {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let p = e.path();
                match e.file_type() {
                    Ok(t) if t.is_dir() => walk(&p),
                    Ok(t) if t.is_file() => std::fs::read(&p)
                        .map(|b| b.windows(14).any(|w| w == b"OUTSIDE-SECRET"))
                        .unwrap_or(false),
                    _ => false,
                }
            })
    }
    walk(home)
}

#[test]
fn links_in_the_source_are_never_followed() {
    let rt = runtime();
    let q = quiet();
    let journal = |fx: &Fx| fx.src.join("agents/journal/workspace");
    let outside_dir = |fx: &Fx| {
        let d = fx.src.parent().unwrap().join("elsewhere");
        std::fs::create_dir_all(d.join("memory")).unwrap();
        std::fs::write(d.join("outside.md"), OUTSIDE).unwrap();
        std::fs::write(d.join("memory/2026-08-20.md"), OUTSIDE).unwrap();
        std::fs::write(d.join("MEMORY.md"), OUTSIDE).unwrap();
        d
    };
    type Plant = Box<dyn Fn(&Fx) -> &'static str>;
    let cases: Vec<(&str, Plant)> = vec![
        (
            "file",
            Box::new(move |fx: &Fx| {
                let d = outside_dir(fx);
                let m = journal(fx).join("MEMORY.md");
                std::fs::remove_file(&m).unwrap();
                std::os::unix::fs::symlink(d.join("outside.md"), &m).unwrap();
                "agents/journal/workspace/MEMORY.md"
            }),
        ),
        (
            "folder",
            Box::new(move |fx: &Fx| {
                let d = outside_dir(fx);
                let m = journal(fx).join("memory");
                std::fs::remove_dir_all(&m).unwrap();
                std::os::unix::fs::symlink(d.join("memory"), &m).unwrap();
                "agents/journal/workspace/memory"
            }),
        ),
        (
            "chain",
            Box::new(move |fx: &Fx| {
                let d = outside_dir(fx);
                let ws = journal(fx);
                std::fs::remove_file(ws.join("MEMORY.md")).unwrap();
                std::os::unix::fs::symlink(d.join("outside.md"), ws.join("hop.md")).unwrap();
                std::os::unix::fs::symlink("hop.md", ws.join("MEMORY.md")).unwrap();
                "agents/journal/workspace/MEMORY.md"
            }),
        ),
        (
            "loop",
            Box::new(move |fx: &Fx| {
                let m = journal(fx).join("memory");
                std::os::unix::fs::symlink("2026-01-02.md", m.join("2026-01-01.md")).unwrap();
                std::os::unix::fs::symlink("2026-01-01.md", m.join("2026-01-02.md")).unwrap();
                "agents/journal/workspace/memory/2026-01-01.md"
            }),
        ),
        (
            "workspace",
            Box::new(move |fx: &Fx| {
                let d = outside_dir(fx);
                let ws = journal(fx);
                std::fs::remove_dir_all(&ws).unwrap();
                std::os::unix::fs::symlink(&d, &ws).unwrap();
                "agents/journal/workspace"
            }),
        ),
        (
            "database",
            Box::new(move |fx: &Fx| {
                let db = fx.src.join("data/memory/brain.db");
                let copy = fx.src.parent().unwrap().join("brain-elsewhere.db");
                std::fs::rename(&db, &copy).unwrap();
                std::os::unix::fs::symlink(&copy, &db).unwrap();
                "data/memory/brain.db"
            }),
        ),
    ];
    for (name, plant) in &cases {
        let fx = fixture();
        let link = plant(&fx);
        std::fs::write(fx.home.join("config.toml"), BASE).unwrap();
        let before = tree_snapshot(&fx.home).unwrap();
        let w = open(&fx.home);
        for dry_run in [true, false] {
            let mut o = opts(&fx.src);
            o.dry_run = dry_run;
            let err = rt.block_on(w.import_zeroclaw(&o, &q)).unwrap_err();
            assert_eq!(err.code, ErrorCode::InvalidArgument, "{name}: {err:?}");
            assert!(
                err.message.contains(link),
                "{name}: {link} not in {}",
                err.message
            );
            assert!(
                err.message.contains("without following links"),
                "{name}: {}",
                err.message
            );
        }
        assert_eq!(
            tree_snapshot(&fx.home).unwrap(),
            before,
            "{name}: Warren's install changed"
        );
        assert!(!leaked(&fx.home), "{name}: the outside text reached Warren");
        assert!(
            pending_jobs(w.layout()).is_empty(),
            "{name}: a journal was left"
        );
    }
    // Control: a link elsewhere in a workspace does not stop the import; it is not copied,
    // and nothing it points at is read.
    let fx = fixture();
    let d = outside_dir(&fx);
    std::os::unix::fs::symlink(d.join("outside.md"), journal(&fx).join("notes-link.md")).unwrap();
    std::fs::write(fx.home.join("config.toml"), BASE).unwrap();
    let w = open(&fx.home);
    let report = rt.block_on(w.import_zeroclaw(&opts(&fx.src), &q)).unwrap();
    assert!(
        report
            .plan
            .unmapped
            .iter()
            .any(|u| u.setting.ends_with("journal/workspace/notes-link.md")),
        "{:?}",
        report.plan.unmapped
    );
    let ws = w.layout().default_workspace("journal");
    assert!(ws.join("MEMORY.md").is_file(), "the import ran");
    assert!(std::fs::symlink_metadata(ws.join("notes-link.md")).is_err());
    assert!(!leaked(&fx.home), "the outside text reached Warren");
}

#[test]
fn a_database_value_of_an_unexpected_type_is_an_error_naming_its_column() {
    let rt = runtime();
    let q = quiet();
    for (column, set) in [
        ("memories.content", "content = x'00ff'"),
        ("memories.created_at", "created_at = x'01'"),
        ("memories.session_id", "session_id = x'02'"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("zc");
        generated_source(&src, &[("ana", 5)]);
        rt.block_on(async {
            let pool = brain_pool(&src).await;
            sqlx::query(&format!(
                "UPDATE memories SET {set} WHERE key = 'note_00002'"
            ))
            .execute(&pool)
            .await
            .unwrap();
            sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&pool)
                .await
                .unwrap();
            pool.close().await;
        });
        let home = dir.path().join("warren");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join("config.toml"), "schema_version = 1\n").unwrap();
        let w = open(&home);
        let err = rt.block_on(w.import_zeroclaw(&opts(&src), &q)).unwrap_err();
        assert_eq!(err.code, ErrorCode::Storage, "{column}: {err:?}");
        assert!(
            err.message.contains(&format!("`{column}`")),
            "{column}: {}",
            err.message
        );
    }
}

#[test]
fn an_alias_an_unfinished_operation_holds_is_not_imported() {
    use warren_state::lifecycle::journal::{DeleteJob, Journal, JournalEntry, Operation};
    let rt = runtime();
    let q = quiet();
    let fx = fixture();
    std::fs::write(fx.home.join("config.toml"), "schema_version = 1\n").unwrap();
    let w = open(&fx.home);
    // A delete of `writer` that stopped half-way (its journal is all that is left).
    let journal = Journal::new(w.layout().journal_dir());
    journal
        .save(&JournalEntry {
            id: "20261203T000000Z-delete-writer".into(),
            started_at: "2026-12-03T00:00:00Z".into(),
            op: Operation::Delete(DeleteJob {
                alias: "writer".into(),
                archive: w
                    .layout()
                    .root()
                    .join("data/agents/_deleted/writer-20261203T000000Z"),
                workspace: w.layout().default_workspace("writer"),
                custom_workspace: false,
                memory_backend: MemoryBackendKind::Sqlite,
                memory_agent_id: None,
                sessions_agent_id: None,
                time: "20261203T000000Z".into(),
                exported: BTreeMap::new(),
                purged: BTreeMap::new(),
                failed: BTreeMap::new(),
                cron_jobs: Vec::new(),
                references: Vec::new(),
                holder_ids: BTreeMap::new(),
            }),
            steps: vec!["config_saved".into()],
            warnings: Vec::new(),
        })
        .unwrap();
    let before = tree_snapshot(&fx.home).unwrap();
    for dry_run in [true, false] {
        let mut o = opts(&fx.src);
        o.dry_run = dry_run;
        let out = rt.block_on(w.import_zeroclaw(&o, &q));
        let text = match &out {
            Ok(r) => r.plan.problems.join("\n"),
            Err(e) => format!("{} {}", e.message, e.details.join("\n")),
        };
        assert!(
            text.contains("agent `writer` is held by an unfinished operation (delete writer)"),
            "{text}"
        );
        assert!(text.contains("warren agents delete writer"), "{text}");
        if !dry_run {
            assert!(out.is_err(), "the import ran");
        }
    }
    assert_eq!(
        tree_snapshot(&fx.home).unwrap(),
        before,
        "Warren's install changed"
    );
    // Control: under a prefix the aliases are free and the import runs.
    let mut o = opts(&fx.src);
    o.prefix = "zc_".into();
    let r = rt.block_on(w.import_zeroclaw(&o, &q)).unwrap();
    assert!(r.plan.problems.is_empty(), "{:?}", r.plan.problems);
    assert!(w.layout().default_workspace("zc_writer").is_dir());
}

/// Into the install a first start writes (agent `assistant`, provider `ollama.local`): the
/// fixture's `ollama.local` has another model, so the plan names the collision and its choices;
/// each choice does what it says; an identical entry is reused without asking. Imported agents
/// keep their names and `assistant` stays.
#[test]
fn an_import_into_the_default_install_settles_each_collision_as_chosen() {
    let rt = runtime();
    let q = quiet();
    let default = warren_config::default_config_text(warren_config::Preset::Balanced);
    let provider = |w: &Warren, r: &str| -> Option<warren_types::ProviderModel> {
        let (f, a) = r.split_once('.').unwrap();
        w.load()
            .unwrap()
            .config
            .providers
            .models
            .get(f)?
            .get(a)
            .cloned()
    };
    let agent_provider = |w: &Warren, a: &str| -> Option<String> {
        w.load().unwrap().config.agents[a].model_provider.clone()
    };
    // No choice given: refused, naming the entry and the choices; nothing written.
    let fx = fixture();
    std::fs::write(fx.home.join("config.toml"), &default).unwrap();
    let w = open(&fx.home);
    let before = tree_snapshot(&fx.home).unwrap();
    let err = rt
        .block_on(w.import_zeroclaw(&opts(&fx.src), &q))
        .unwrap_err();
    let all = format!("{} {}", err.message, err.details.join("\n"));
    assert!(
        all.contains("provider entry `ollama.local` already exists in Warren with other settings"),
        "{all}"
    );
    assert!(all.contains("--collisions rename"), "{all}");
    assert_eq!(tree_snapshot(&fx.home).unwrap(), before);

    for (choice, journal_uses, model_of_warrens) in [
        (Collision::Rename, "ollama.local_zeroclaw", "llama3.2"),
        (Collision::Skip, "ollama.local", "llama3.2"),
        (Collision::Replace, "ollama.local", "llama3.1:8b"),
    ] {
        let fx = fixture();
        std::fs::write(fx.home.join("config.toml"), &default).unwrap();
        let w = open(&fx.home);
        let mut o = opts(&fx.src);
        o.collision = Some(choice);
        let r = rt.block_on(w.import_zeroclaw(&o, &q)).unwrap();
        assert!(
            r.plan.problems.is_empty(),
            "{choice:?}: {:?}",
            r.plan.problems
        );
        let cfg = w.load().unwrap().config;
        for a in ["assistant", "journal", "writer", "reviewer", "researcher"] {
            assert!(cfg.agents.contains_key(a), "{choice:?}: `{a}` missing");
        }
        assert_eq!(
            agent_provider(&w, "assistant").as_deref(),
            Some("ollama.local")
        );
        assert_eq!(
            agent_provider(&w, "journal").as_deref(),
            Some(journal_uses),
            "{choice:?}"
        );
        assert_eq!(
            provider(&w, "ollama.local").unwrap().model,
            model_of_warrens,
            "{choice:?}"
        );
        assert_eq!(
            provider(&w, "ollama.local_zeroclaw").map(|p| p.model),
            (choice == Collision::Rename).then(|| "llama3.1:8b".to_string()),
            "{choice:?}"
        );
        if choice == Collision::Replace {
            // The plan says whose settings change.
            assert!(
                r.plan
                    .unmapped
                    .iter()
                    .any(|u| u.setting == "providers.models.ollama.local"
                        && u.reason
                            .contains("Warren's agents assistant get the imported settings")),
                "{:?}",
                r.plan.unmapped
            );
        }
    }

    // An identical entry: reused, no choice needed, no second entry.
    let fx = fixture();
    let same = default.replace("model = \"llama3.2\"", "model = \"llama3.1:8b\"");
    std::fs::write(fx.home.join("config.toml"), &same).unwrap();
    let w = open(&fx.home);
    let r = rt.block_on(w.import_zeroclaw(&opts(&fx.src), &q)).unwrap();
    assert!(r.plan.problems.is_empty(), "{:?}", r.plan.problems);
    assert!(r
        .plan
        .unmapped
        .iter()
        .any(|u| u.setting == "providers.models.ollama.local" && u.reason.contains("identical")));
    let text = std::fs::read_to_string(fx.home.join("config.toml")).unwrap();
    assert_eq!(
        text.matches("[providers.models.ollama.local]").count(),
        1,
        "{text}"
    );
    assert_eq!(
        agent_provider(&w, "journal").as_deref(),
        Some("ollama.local")
    );
}
