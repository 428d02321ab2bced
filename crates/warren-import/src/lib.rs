//! The ZeroClaw importer behind `warren import zeroclaw` and the window's import: moving a
//! ZeroClaw install into Warren (docs/import.md). `warren-api` calls it through [`Importer`].
//!
//! The source is only read: its config with a TOML parser, its memory database opened
//! read-only and immutable, its workspaces copied. The import is one journaled operation
//! (`data/import/journal/`): secrets, then each workspace, then each agent's memory rows, then
//! the config (one validated, atomic save), then the record of the import. Every step is
//! idempotent; an interrupted import is finished by the next start (or by running the command
//! again). A source already imported is refused, except with `--update`, which adds the memory
//! rows not imported yet.
//!
//! Counts and byte sizes are `u64` here and `number` in the window's TypeScript types (the
//! `specta(type = u32)` overrides): JSON carries them as numbers, exact up to 2^53.

mod found;
mod markdown;
pub mod plan;
mod source;

pub use found::ZeroclawInstall;
pub use plan::{
    AgentPlan, Callout, CalloutDirection, Collision, CronPlan, ImportPlan, NamePlan, ProviderPlan,
    Totals, Unmapped,
};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use uuid::Uuid;
use warren_config::{ConfigDocument, ConfigError, ConfigStore, HostEnv, InstallLayout};
use warren_memory::{MemoryEntry, MemoryStore, MemoryStores, NewMemory};
use warren_state::keyring::open_user_secrets;
use warren_state::lifecycle::{NoInterrupt, StepHook};
use warren_state::secrets::{SecretRef, SecretStore};
use warren_types::{ApiError, Config, ErrorCode, MemoryBackendKind};

use source::Source;

/// Rows read and written per batch, each batch one transaction of Warren's store. Two batches
/// are in memory at once (one written while the next is read, a few MB), which bounds the
/// memory an import uses whatever the size of the source; fewer, bigger transactions write each
/// touched index page to the log fewer times.
pub const PAGE: i64 = 10_000;

/// Where the memory rows of an import stand: sent once before the first batch, after every
/// batch of rows (read, then written or refused), and once for each agent finished earlier.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportProgress {
    /// The Warren alias whose rows are being imported (empty before the first batch).
    pub agent: String,
    /// That agent's rows done so far.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub rows_done: u64,
    /// That agent's rows in the source.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub rows_total: u64,
    /// Rows done over every agent.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub overall_done: u64,
    /// Rows to import over every agent.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub overall_total: u64,
}

/// Receives [`ImportProgress`] while memory rows are imported (from the importing task; keep it
/// short: a redraw, or a send on a channel).
pub type Progress<'a> = &'a (dyn Fn(&ImportProgress) + Send + Sync);

/// The running overall count behind the [`ImportProgress`] reports.
struct Tally<'a> {
    progress: Progress<'a>,
    done: u64,
    total: u64,
}

impl Tally<'_> {
    fn report(&self, agent: &str, rows_done: u64, rows_total: u64) {
        (self.progress)(&ImportProgress {
            agent: agent.to_string(),
            rows_done,
            rows_total,
            overall_done: self.done,
            overall_total: self.total,
        });
    }
}

/// What the caller asks for.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The ZeroClaw install; ZeroClaw's own default when `None`.
    pub path: Option<PathBuf>,
    /// Only compute the plan.
    pub dry_run: bool,
    /// Prefix of every imported name (agents, profiles, provider entries, cron jobs).
    pub prefix: String,
    /// Add the memory rows not imported yet from a source imported before.
    pub update: bool,
    /// What to do with profiles and provider entries whose names Warren already uses for other
    /// settings (identical ones are always reused); `None` refuses and names the choices.
    pub collision: Option<plan::Collision>,
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportCounts {
    /// Agents added to the config.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub agents: u64,
    /// Memory rows written to Warren's store.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub memory_rows: u64,
    /// Memory rows left out because Warren already had their key for the agent.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub memory_rows_skipped: u64,
    /// Markdown entries written.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub markdown_entries: u64,
    /// Workspace files copied.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub workspace_files: u64,
    /// Workspace bytes copied.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub workspace_bytes: u64,
    /// Secrets stored.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub secrets: u64,
}

/// The answer of an import or a dry run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportReport {
    /// The plan (what a dry run prints).
    pub plan: ImportPlan,
    /// Whether nothing was written.
    pub dry_run: bool,
    /// Whether this added rows to an earlier import.
    pub update: bool,
    /// What was written (zero for a dry run).
    pub imported: ImportCounts,
    /// Problems that did not stop the import (rows Warren refuses, for example).
    pub warnings: Vec<String>,
}

/// One finished import (`data/import/zeroclaw.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ImportRecord {
    source_id: String,
    source: PathBuf,
    imported_at: String,
    prefix: String,
    /// ZeroClaw alias → Warren alias.
    agents: BTreeMap<String, String>,
    /// Warren alias → memory backend.
    backends: BTreeMap<String, MemoryBackendKind>,
}

/// An import in flight (`data/import/journal/<id>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ImportJob {
    id: String,
    started_at: String,
    source: PathBuf,
    source_id: String,
    prefix: String,
    /// The collision choice it started with (a resume plans the same names).
    #[serde(default)]
    collision: Option<plan::Collision>,
    /// The Warren aliases it writes: until it is finished they refuse turns, `agents create`
    /// and lifecycle commands (see `InstallLayout::import_journal_dir`).
    #[serde(default)]
    aliases: Vec<String>,
    steps: Vec<String>,
    #[serde(default)]
    counts: BTreeMap<String, u64>,
    #[serde(default)]
    warnings: Vec<String>,
}

impl ImportJob {
    fn done(&self, step: &str) -> bool {
        self.steps.iter().any(|s| s == step)
    }
}

fn journal_dir(layout: &InstallLayout) -> PathBuf {
    layout.import_journal_dir()
}

fn records_path(layout: &InstallLayout) -> PathBuf {
    layout.data_dir().join("import").join("zeroclaw.json")
}

fn io_err(action: &str, path: &Path, e: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::Io, format!("{action} {}: {e}", path.display()))
}

fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<(), ApiError> {
    let text = serde_json::to_vec_pretty(value)
        .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_err("creating", dir, e))?;
    }
    warren_config::write_atomic(path, &text).map_err(|e| io_err("writing", path, e))
}

fn read_records(layout: &InstallLayout) -> Result<Vec<ImportRecord>, ApiError> {
    let path = records_path(layout);
    match std::fs::read(&path) {
        Ok(b) => serde_json::from_slice(&b).map_err(|e| io_err("reading", &path, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(io_err("reading", &path, e)),
    }
}

fn pending_jobs(layout: &InstallLayout) -> Vec<Result<ImportJob, ApiError>> {
    let dir = journal_dir(layout);
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            std::fs::read(&p)
                .map_err(|e| io_err("reading", &p, e))
                .and_then(|b| serde_json::from_slice(&b).map_err(|e| io_err("reading", &p, e)))
        })
        .collect()
}

/// Where ZeroClaw itself looks: `$ZEROCLAW_CONFIG_DIR`, else `~/.zeroclaw`.
pub fn default_source(vars: &BTreeMap<String, String>, home: Option<&Path>) -> Option<PathBuf> {
    if let Some(d) = vars.get("ZEROCLAW_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    home.map(|h| h.join(".zeroclaw"))
}

/// The identity of an install: its memory agents' UUIDs (random per install, so a copy of the
/// folder is the same source), else its folder.
fn source_id(root: &Path, agents: &BTreeMap<String, String>) -> String {
    let mut h = Sha256::new();
    if agents.is_empty() {
        h.update(root.as_os_str().as_encoded_bytes());
    } else {
        for (alias, id) in agents {
            h.update(alias.as_bytes());
            h.update(b"\0");
            h.update(id.as_bytes());
            h.update(b"\n");
        }
    }
    hex::encode(&h.finalize()[..12])
}

/// A row as Warren validates it (the same checks a store call makes).
fn acceptable(e: &MemoryEntry) -> Result<(), String> {
    NewMemory {
        key: e.key.clone(),
        content: e.content.clone(),
        category: e.category.clone(),
        session_id: e.session_id.clone(),
        importance: e.importance,
    }
    .validate()
    .map_err(|err| format!("{}/{}: {err}", e.agent, e.key))
}

/// Everything the steps need, derived again from the source on every attempt.
struct Prepared {
    src: Source,
    brain: Option<source::Brain>,
    brain_agents: BTreeMap<String, String>,
    plan: ImportPlan,
    mapped: plan::Mapped,
    config: Config,
    config_exists: bool,
}

/// The importer of one Warren install: its config store and the host facts (home folder,
/// environment) that say where ZeroClaw keeps its install and where secrets go.
pub struct Importer<'a> {
    store: &'a ConfigStore,
    env: &'a HostEnv,
}

/// An unfinished import, as its journal entry (`data/import/journal/<id>.json`) records it.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingImport {
    /// The journal entry's id (its file name without `.json`).
    pub id: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// The install imported from.
    pub source: PathBuf,
    /// The Warren aliases it writes.
    pub aliases: Vec<String>,
    /// The steps done so far, in order.
    pub steps: Vec<String>,
}

/// The unfinished imports of the install at `layout`, in journal order; an entry that cannot be
/// read is an error in its place.
pub fn pending_imports(layout: &InstallLayout) -> Vec<Result<PendingImport, ApiError>> {
    pending_jobs(layout)
        .into_iter()
        .map(|job| {
            job.map(|j| PendingImport {
                id: j.id,
                started_at: j.started_at,
                source: j.source,
                aliases: j.aliases,
                steps: j.steps,
            })
        })
        .collect()
}

impl<'a> Importer<'a> {
    /// The importer of the install whose config `store` keeps, with the host facts `env`.
    pub fn new(store: &'a ConfigStore, env: &'a HostEnv) -> Self {
        Importer { store, env }
    }

    fn layout(&self) -> &InstallLayout {
        self.store.layout()
    }

    fn load(&self) -> Result<warren_config::LoadedConfig, ApiError> {
        self.store.load().map_err(ApiError::from)
    }

    fn secret_store(&self) -> Result<warren_state::keyring::UserSecrets, ApiError> {
        open_user_secrets(self.layout(), &self.env.vars).map_err(ApiError::from)
    }

    fn import_source_path(&self, path: Option<&Path>) -> Result<PathBuf, ApiError> {
        match path {
            Some(p) => Ok(p.to_path_buf()),
            None => default_source(&self.env.vars, self.env.home.as_deref()).ok_or_else(|| {
                ApiError::new(
                    ErrorCode::InvalidArgument,
                    "no ZeroClaw install given and no home folder to look in: pass its folder",
                )
            }),
        }
    }

    fn current_config(&self) -> Result<(Config, bool), ApiError> {
        if self.layout().config_path().exists() {
            Ok((self.load()?.config, true))
        } else {
            Ok((Config::default(), false))
        }
    }

    /// Which of `aliases` already own rows in Warren's SQLite store (without creating it).
    async fn memory_aliases(
        &self,
        config: &Config,
        aliases: &[String],
    ) -> Result<BTreeSet<String>, ApiError> {
        let path = config
            .memory
            .sqlite
            .path
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(|| self.layout().memory_db());
        if !path.exists() {
            return Ok(BTreeSet::new());
        }
        let store = self.import_store(config).await?;
        let mut out = BTreeSet::new();
        for alias in aliases {
            let known = store.lookup_agent(alias).await.map_err(ApiError::from)?;
            if let Some(r) = known {
                if store.count_for_agent(&r).await.map_err(ApiError::from)? > 0 {
                    out.insert(alias.clone());
                }
            }
        }
        Ok(out)
    }

    /// Warren's store for the rows, opened on first use and kept for the following agents.
    async fn opened_store(
        &self,
        slot: &mut Option<Arc<dyn MemoryStore>>,
        config: &Config,
    ) -> Result<Arc<dyn MemoryStore>, ApiError> {
        if let Some(s) = slot {
            return Ok(Arc::clone(s));
        }
        let s = self.import_store(config).await?;
        *slot = Some(Arc::clone(&s));
        Ok(s)
    }

    async fn import_store(&self, config: &Config) -> Result<Arc<dyn MemoryStore>, ApiError> {
        MemoryStores::new(self.layout().clone())
            .shared_store(config, MemoryBackendKind::Sqlite)
            .await
            .map_err(ApiError::from)
    }

    async fn prepare(
        &self,
        root: &Path,
        prefix: &str,
        collision: Option<plan::Collision>,
    ) -> Result<Prepared, ApiError> {
        let src = Source::open(root)?;
        let aliases: Vec<String> = src
            .table("agents")
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        let links = src.links(&aliases);
        if !links.is_empty() {
            let list: Vec<String> = links.iter().map(|l| l.display().to_string()).collect();
            return Err(ApiError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "the ZeroClaw install at {} has symbolic links where the import reads ({}); a source is read without following links: replace each link with what it points at, or remove it. Nothing was imported",
                    src.root.display(),
                    list.join(", ")
                ),
            ));
        }
        let brain = src.brain().await?;
        let (brain_agents, counts) = match &brain {
            Some(b) => (b.agents().await?, b.counts().await?),
            None => (BTreeMap::new(), BTreeMap::new()),
        };
        let sid = source_id(&src.root, &brain_agents);
        let (config, config_exists) = self.current_config()?;
        let candidates: Vec<String> = src
            .table("agents")
            .map(|t| t.keys().map(|a| format!("{prefix}{a}")).collect())
            .unwrap_or_default();
        let taken = self.memory_aliases(&config, &candidates).await?;
        let layout = self.layout().clone();
        let workspace_of = move |a: &str| layout.default_workspace(a);
        let target = plan::Target {
            config: &config,
            install_root: self.layout().root(),
            home: self.env.home.as_deref(),
            workspace_of: &workspace_of,
            memory_taken: &taken,
            collision,
        };
        let (mut plan, mapped) = plan::build(&src, &sid, prefix, &counts, &target);
        // An alias an unfinished rename, delete or restore holds is not free.
        for a in &plan.agents {
            if let Some(e) = warren_state::lifecycle::pending_for(self.layout(), &a.alias) {
                plan.problems.push(format!(
                    "agent `{}` is held by an unfinished operation ({}): {}",
                    a.alias,
                    e.op.describe(),
                    e.op.resume_hint()
                ));
            }
        }
        Ok(Prepared {
            src,
            brain,
            brain_agents,
            plan,
            mapped,
            config,
            config_exists,
        })
    }

    /// Plans, and unless `dry_run` carries out, the import of a ZeroClaw install.
    pub async fn import_zeroclaw(
        &self,
        opts: &ImportOptions,
        progress: Progress<'_>,
    ) -> Result<ImportReport, ApiError> {
        self.import_zeroclaw_with(opts, progress, &NoInterrupt)
            .await
    }

    /// [`Importer::import_zeroclaw`] with a step hook (tests interrupt it after a step).
    pub async fn import_zeroclaw_with(
        &self,
        opts: &ImportOptions,
        progress: Progress<'_>,
        hook: &dyn StepHook,
    ) -> Result<ImportReport, ApiError> {
        let root = self.import_source_path(opts.path.as_deref())?;
        let prep = self.prepare(&root, &opts.prefix, opts.collision).await?;
        let sid = prep.plan.source_id.clone();
        let record = read_records(self.layout())?
            .into_iter()
            .find(|r| r.source_id == sid);
        let pending = pending_jobs(self.layout())
            .into_iter()
            .filter_map(Result::ok)
            .find(|j| j.source_id == sid);
        if let Some(job) = pending {
            if opts.dry_run {
                return Err(ApiError::new(
                    ErrorCode::LifecyclePending,
                    format!(
                        "an import of {} is unfinished ({}); run the command without --dry-run to finish it",
                        prep.src.root.display(),
                        journal_dir(self.layout()).join(format!("{}.json", job.id)).display()
                    ),
                ));
            }
            // Finish it under the names it started with.
            let prep = if job.prefix == opts.prefix && job.collision == opts.collision {
                prep
            } else {
                self.prepare(&root, &job.prefix, job.collision).await?
            };
            return self.run_job(job, prep, progress, hook).await;
        }
        if let Some(rec) = record {
            if !opts.update {
                return Err(ApiError::new(
                    ErrorCode::AlreadyExists,
                    format!(
                        "the ZeroClaw install at {} was already imported on {} (agents {}); `--update` adds the memory rows not imported yet",
                        prep.src.root.display(),
                        rec.imported_at,
                        rec.agents.values().cloned().collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            return self.update_import(rec, prep, opts.dry_run, progress).await;
        }
        if opts.update {
            return Err(ApiError::new(
                ErrorCode::NotFound,
                format!(
                    "the ZeroClaw install at {} was never imported: run the import without --update",
                    prep.src.root.display()
                ),
            ));
        }
        let mut prep = prep;
        // The result must be a valid config before anything is written.
        let text = self.config_after(&prep)?;
        if let Err(e) = warren_config::parse_for_install(&text, self.layout()) {
            prep.plan.problems.extend(
                e.issues
                    .iter()
                    .map(|i| format!("the imported config would be invalid: {i}")),
            );
        }
        // An alias another unfinished import writes is not free either.
        for a in &prep.plan.agents {
            if let Some(hold) = warren_state::lifecycle::import_holding(self.layout(), &a.alias) {
                prep.plan.problems.push(format!(
                    "agent `{}` is held by the unfinished import of {} ({}): finish it first with `warren agents unfinished --finish`",
                    a.alias,
                    hold.source.display(),
                    hold.path.display()
                ));
            }
        }
        if opts.dry_run {
            return Ok(ImportReport {
                plan: prep.plan,
                dry_run: true,
                update: false,
                imported: ImportCounts::default(),
                warnings: Vec::new(),
            });
        }
        if !prep.plan.problems.is_empty() {
            let first = prep.plan.problems[0].clone();
            return Err(ApiError::new(
                ErrorCode::AlreadyExists,
                format!("nothing was imported: {first}"),
            )
            .with_details(prep.plan.problems.clone()));
        }
        let job = ImportJob {
            id: format!(
                "{}-zeroclaw-{}",
                chrono::Utc::now().format("%Y%m%dT%H%M%S"),
                &sid[..8.min(sid.len())]
            ),
            started_at: chrono::Utc::now().to_rfc3339(),
            source: prep.src.root.clone(),
            source_id: sid,
            prefix: opts.prefix.clone(),
            collision: opts.collision,
            aliases: prep.plan.agents.iter().map(|a| a.alias.clone()).collect(),
            steps: Vec::new(),
            counts: BTreeMap::new(),
            warnings: Vec::new(),
        };
        self.run_job(job, prep, progress, hook).await
    }

    fn config_after(&self, prep: &Prepared) -> Result<String, ApiError> {
        let add = plan::config_text(&prep.mapped, &prep.src.root.display().to_string())
            .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        let base = if prep.config_exists {
            let text = self.load()?.text;
            if prep.mapped.replaced.is_empty() {
                text
            } else {
                let mut doc = ConfigDocument::parse(&text)
                    .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
                remove_replaced(&mut doc, &prep.mapped.replaced)
                    .map_err(|e| ApiError::new(ErrorCode::Internal, e.to_string()))?;
                doc.to_string()
            }
        } else {
            format!("schema_version = {}\n", warren_types::SCHEMA_VERSION)
        };
        Ok(format!(
            "{}{add}",
            base.trim_end_matches('\n').to_string() + "\n"
        ))
    }

    fn save_job(&self, job: &ImportJob) -> Result<(), ApiError> {
        write_json(
            &journal_dir(self.layout()).join(format!("{}.json", job.id)),
            job,
        )
    }

    async fn step(
        &self,
        job: &mut ImportJob,
        hook: &dyn StepHook,
        name: &str,
    ) -> Result<(), ApiError> {
        hook.before_journal("import", name)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        job.steps.push(name.to_string());
        self.save_job(job)?;
        hook.after_step("import", name)
            .map_err(|e| ApiError::new(ErrorCode::Internal, e))
    }

    async fn run_job(
        &self,
        mut job: ImportJob,
        prep: Prepared,
        progress: Progress<'_>,
        hook: &dyn StepHook,
    ) -> Result<ImportReport, ApiError> {
        self.save_job(&job)?;
        let mut counts = ImportCounts::default();
        // 1. Secrets.
        if !job.done("secrets") {
            if !prep.mapped.secrets.is_empty() {
                let store = self.secret_store()?;
                for (name, value) in &prep.mapped.secrets {
                    let r = SecretRef::install(name).map_err(ApiError::from)?;
                    store.set(&r, value).map_err(ApiError::from)?;
                }
            }
            job.counts
                .insert("secrets".into(), prep.mapped.secrets.len() as u64);
            self.step(&mut job, hook, "secrets").await?;
        }
        // 2. Workspaces, one step each.
        for a in &prep.plan.agents {
            let step = format!("workspace:{}", a.alias);
            if job.done(&step) {
                continue;
            }
            let backend = MemoryBackendKind::from_name(&a.memory_backend);
            let (files, bytes) = copy_workspace(
                &prep.src,
                Path::new(&a.source_workspace),
                Path::new(&a.workspace),
                backend == Some(MemoryBackendKind::Markdown),
            )?;
            *job.counts.entry("workspace_files".into()).or_default() += files;
            *job.counts.entry("workspace_bytes".into()).or_default() += bytes;
            if backend == Some(MemoryBackendKind::Markdown) {
                *job.counts.entry("markdown_entries".into()).or_default() += a.memory_rows;
            }
            self.step(&mut job, hook, &step).await?;
        }
        // 3. Memory rows, one step per agent.
        let total: u64 = prep
            .plan
            .agents
            .iter()
            .filter(|a| a.memory_backend != "markdown")
            .map(|a| a.memory_rows)
            .sum();
        let mut tally = Tally {
            progress,
            done: 0,
            total,
        };
        if total > 0 {
            tally.report("", 0, 0);
        }
        // Warren's store, opened once for every agent's rows.
        let mut opened: Option<Arc<dyn MemoryStore>> = None;
        for a in &prep.plan.agents {
            if a.memory_backend == "markdown" || a.memory_rows == 0 {
                continue;
            }
            let step = format!("memory:{}", a.alias);
            if job.done(&step) {
                tally.done += a.memory_rows;
                tally.report(&a.alias, a.memory_rows, a.memory_rows);
                continue;
            }
            let store = self.opened_store(&mut opened, &prep.config).await?;
            let (written, skipped) = self
                .import_rows(&*store, &prep, a, &mut job.warnings, &mut tally)
                .await?;
            *job.counts.entry("memory_rows".into()).or_default() += written;
            *job.counts.entry("memory_rows_skipped".into()).or_default() += skipped;
            self.step(&mut job, hook, &step).await?;
        }
        if let Some(store) = opened {
            // Its last connection writes the log back into the database file: part of the import.
            store.close().await;
        }
        // 4. The config: one validated, atomic save.
        if !job.done("config") {
            self.save_import_config(&prep)?;
            job.counts
                .insert("agents".into(), prep.mapped.agents.len() as u64);
            self.step(&mut job, hook, "config").await?;
        }
        // 5. The record that refuses a second import of the same source.
        if !job.done("record") {
            let mut records = read_records(self.layout())?;
            records.retain(|r| r.source_id != job.source_id);
            records.push(ImportRecord {
                source_id: job.source_id.clone(),
                source: prep.src.root.clone(),
                imported_at: chrono::Utc::now().to_rfc3339(),
                prefix: job.prefix.clone(),
                agents: prep.mapped.alias_map.clone(),
                backends: prep
                    .mapped
                    .agents
                    .iter()
                    .map(|(k, v)| (k.clone(), v.memory.backend.unwrap_or_default()))
                    .collect(),
            });
            write_json(&records_path(self.layout()), &records)?;
            self.step(&mut job, hook, "record").await?;
        }
        if let Some(b) = &prep.brain {
            b.close().await;
        }
        let path = journal_dir(self.layout()).join(format!("{}.json", job.id));
        std::fs::remove_file(&path).map_err(|e| io_err("removing", &path, e))?;
        let c = |k: &str| job.counts.get(k).copied().unwrap_or(0);
        counts.agents = c("agents");
        counts.memory_rows = c("memory_rows");
        counts.memory_rows_skipped = c("memory_rows_skipped");
        counts.markdown_entries = c("markdown_entries");
        counts.workspace_files = c("workspace_files");
        counts.workspace_bytes = c("workspace_bytes");
        counts.secrets = c("secrets");
        Ok(ImportReport {
            plan: prep.plan,
            dry_run: false,
            update: false,
            imported: counts,
            warnings: job.warnings,
        })
    }

    fn save_import_config(&self, prep: &Prepared) -> Result<(), ApiError> {
        let add = plan::config_text(&prep.mapped, &prep.src.root.display().to_string())
            .map_err(|e| ApiError::new(ErrorCode::Internal, e))?;
        let aliases: Vec<String> = prep.mapped.agents.keys().cloned().collect();
        let store = self.store;
        if !self.layout().config_path().exists() {
            let text = format!("schema_version = {}\n{add}", warren_types::SCHEMA_VERSION);
            store.create(&text).map_err(ApiError::from)?;
            return Ok(());
        }
        store
            .edit(|doc, cfg| {
                // Saved before a crash that kept the step from being journaled: done.
                if !aliases.is_empty() && aliases.iter().all(|a| cfg.agents.contains_key(a)) {
                    return Ok(());
                }
                remove_replaced(doc, &prep.mapped.replaced).map_err(ConfigError::from)?;
                let text = format!("{}\n{add}", doc.to_string().trim_end_matches('\n'));
                *doc = ConfigDocument::parse(&text).map_err(ConfigError::from)?;
                Ok(())
            })
            .map_err(ApiError::from)?;
        Ok(())
    }

    /// Imports one agent's rows page by page, reading the next page while the current one is
    /// written; returns (written, skipped).
    async fn import_rows(
        &self,
        store: &dyn MemoryStore,
        prep: &Prepared,
        a: &AgentPlan,
        warnings: &mut Vec<String>,
        tally: &mut Tally<'_>,
    ) -> Result<(u64, u64), ApiError> {
        let Some(brain) = &prep.brain else {
            return Ok((0, 0));
        };
        let Some(src_id) = prep.brain_agents.get(&a.source_alias) else {
            return Ok((0, 0));
        };
        // An earlier, interrupted attempt may have created the agent already: keep its id.
        let mut agent_id = match store.lookup_agent(&a.alias).await.map_err(ApiError::from)? {
            Some(r) => r.id,
            None => Uuid::parse_str(src_id).unwrap_or_else(|_| Uuid::new_v4()),
        };
        let (mut written, mut skipped, mut rows_done) = (0u64, 0u64, 0u64);
        let mut page = brain.page(&a.source_alias, src_id, 0, PAGE).await?;
        loop {
            let (rows, last, problems) = page;
            if rows.is_empty() && problems.is_empty() {
                break;
            }
            let n = (rows.len() + problems.len()) as u64;
            warnings.extend(problems);
            let mut entries = Vec::with_capacity(rows.len());
            for r in rows {
                let mut e = r.entry;
                e.agent = a.alias.clone();
                match acceptable(&e) {
                    Ok(()) => entries.push(e),
                    Err(why) => warnings.push(format!("row not imported: {why}")),
                }
            }
            let next = brain.page(&a.source_alias, src_id, last, PAGE);
            if entries.is_empty() {
                page = next.await?;
            } else {
                // The source and Warren's store are two files with their own connections: the
                // next page is read while this one is written.
                let write = store.import_agent(&a.alias, agent_id, &entries);
                let (rep, following) = tokio::join!(write, next);
                let rep = rep.map_err(ApiError::from)?;
                page = following?;
                agent_id = rep.agent_id;
                written += rep.imported;
                skipped += rep.skipped;
            }
            rows_done += n;
            tally.done += n;
            tally.report(&a.alias, rows_done, a.memory_rows.max(rows_done));
        }
        Ok((written, skipped))
    }

    /// `--update`: adds the rows (and Markdown entries) not imported yet, for the agents the
    /// first import created. Workspaces and the config are left as they are.
    async fn update_import(
        &self,
        rec: ImportRecord,
        mut prep: Prepared,
        dry_run: bool,
        progress: Progress<'_>,
    ) -> Result<ImportReport, ApiError> {
        // The plan's names are the ones the first import used.
        prep.plan.problems.clear();
        let mut counts = ImportCounts::default();
        let mut warnings = Vec::new();
        if dry_run {
            return Ok(ImportReport {
                plan: prep.plan,
                dry_run: true,
                update: true,
                imported: counts,
                warnings,
            });
        }
        // The rows read from the SQLite store (Markdown entries are read as whole files).
        let total: u64 = prep
            .plan
            .agents
            .iter()
            .filter(|a| {
                rec.agents.get(&a.source_alias).is_some_and(|alias| {
                    rec.backends.get(alias) != Some(&MemoryBackendKind::Markdown)
                })
            })
            .map(|a| a.memory_rows)
            .sum();
        let mut tally = Tally {
            progress,
            done: 0,
            total,
        };
        if total > 0 {
            tally.report("", 0, 0);
        }
        let mut opened: Option<Arc<dyn MemoryStore>> = None;
        let agents: Vec<AgentPlan> = prep.plan.agents.clone();
        for a in &agents {
            let Some(alias) = rec.agents.get(&a.source_alias) else {
                warnings.push(format!(
                    "agent `{}` was added to ZeroClaw after the first import; it is not imported by --update",
                    a.source_alias
                ));
                continue;
            };
            let mut a = a.clone();
            a.alias = alias.clone();
            match rec.backends.get(alias) {
                Some(MemoryBackendKind::Markdown) => {
                    let ws = self.layout().default_workspace(alias);
                    let src_ws = Path::new(&a.source_workspace);
                    let entries = markdown::entries(&|p| prep.src.read_to_string(p), src_ws)
                        .map_err(|(p, e)| io_err("reading", &p, e))?;
                    let rows: Vec<MemoryEntry> = entries
                        .into_iter()
                        .map(|e| MemoryEntry {
                            id: Uuid::new_v4(),
                            agent_id: Uuid::nil(),
                            agent: alias.clone(),
                            key: e.key,
                            content: e.content,
                            category: e.category,
                            session_id: e.session_id,
                            importance: 0.5,
                            created_at: e.created_at,
                            updated_at: e.updated_at,
                            score: None,
                        })
                        .collect();
                    let store = warren_memory::MarkdownStore::new(alias.clone(), ws);
                    let (written, skipped) = store.import(&rows).await.map_err(ApiError::from)?;
                    counts.markdown_entries += written;
                    counts.memory_rows_skipped += skipped;
                }
                _ => {
                    let store = self.opened_store(&mut opened, &prep.config).await?;
                    let (written, skipped) = self
                        .import_rows(&*store, &prep, &a, &mut warnings, &mut tally)
                        .await?;
                    counts.memory_rows += written;
                    counts.memory_rows_skipped += skipped;
                }
            }
        }
        if let Some(store) = opened {
            store.close().await;
        }
        Ok(ImportReport {
            plan: prep.plan,
            dry_run: false,
            update: true,
            imported: counts,
            warnings,
        })
    }

    /// Finishes every interrupted import (at start, like unfinished renames and deletes).
    pub async fn resume_imports(&self) -> Vec<(String, Result<ImportReport, ApiError>)> {
        let mut out = Vec::new();
        for job in pending_jobs(self.layout()) {
            let job = match job {
                Ok(j) => j,
                Err(e) => {
                    out.push((String::new(), Err(e)));
                    continue;
                }
            };
            let id = job.id.clone();
            let res = match self
                .prepare(&job.source.clone(), &job.prefix.clone(), job.collision)
                .await
            {
                Ok(prep) => {
                    let quiet = |_: &ImportProgress| {};
                    self.run_job(job, prep, &quiet, &NoInterrupt).await
                }
                Err(e) => Err(e),
            };
            out.push((id, res));
        }
        out
    }
}

/// How the list of unfinished operations names an import of `source`.
pub fn import_description(source: &Path) -> String {
    format!("import of the ZeroClaw install at {}", source.display())
}

/// An import step in a user's words, as the list of unfinished operations shows it.
pub fn import_step_label(step: &str) -> String {
    match step.split_once(':') {
        Some(("workspace", a)) => format!("workspace of {a} copied"),
        Some(("memory", a)) => format!("memory of {a} imported"),
        _ => match step {
            "secrets" => "secrets stored".into(),
            "config" => "config entries added".into(),
            "record" => "import recorded".into(),
            s => s.replace('_', " "),
        },
    }
}

/// Copies `from` to `to` (which must not exist): into a temporary sibling first, renamed into
/// place when complete, so a crash never leaves a half-copied workspace under the real name.
/// For a Markdown agent the memory files are converted to Warren's entry lines on the way.
fn copy_workspace(
    src: &Source,
    from: &Path,
    to: &Path,
    markdown_agent: bool,
) -> Result<(u64, u64), ApiError> {
    if to.exists() {
        // Renamed into place by an attempt whose step was not journaled: complete.
        let mut ctx_files = 0u64;
        let mut ctx_bytes = 0u64;
        count_tree(to, &mut ctx_files, &mut ctx_bytes);
        return Ok((ctx_files, ctx_bytes));
    }
    let parent = to
        .parent()
        .ok_or_else(|| ApiError::new(ErrorCode::Internal, "a workspace has no parent folder"))?;
    std::fs::create_dir_all(parent).map_err(|e| io_err("creating", parent, e))?;
    let tmp = parent.join(".workspace.importing");
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).map_err(|e| io_err("removing", &tmp, e))?;
    }
    let (mut files, mut bytes) = (0u64, 0u64);
    let from_is_dir = std::fs::symlink_metadata(from).is_ok_and(|m| m.is_dir());
    if from_is_dir {
        copy_dir(src, from, &tmp, &mut files, &mut bytes)?;
    } else {
        std::fs::create_dir_all(&tmp).map_err(|e| io_err("creating", &tmp, e))?;
    }
    if markdown_agent && from_is_dir {
        let finals: BTreeMap<String, (chrono::DateTime<chrono::Utc>, String)> =
            markdown::entries(&|p| src.read_to_string(p), from)
                .map_err(|(p, e)| io_err("reading", &p, e))?
                .into_iter()
                .map(|e| (e.key, (e.created_at, e.content)))
                .collect();
        for f in markdown::memory_files(from) {
            let text = src_file_text(src, &from.join(&f.rel))?;
            let keep = |e: &warren_memory::markdown::format::MdEntry| {
                finals
                    .get(&e.key)
                    .is_some_and(|(t, c)| *t == e.created_at && *c == e.content)
            };
            let out = markdown::convert(&text, &f, &keep);
            let dst = tmp.join(&f.rel);
            warren_config::write_atomic(&dst, out.as_bytes())
                .map_err(|e| io_err("writing", &dst, e))?;
        }
    }
    std::fs::rename(&tmp, to).map_err(|e| io_err("moving into place", to, e))?;
    if let Ok(d) = std::fs::File::open(parent) {
        let _ = d.sync_all();
    }
    Ok((files, bytes))
}

fn count_tree(dir: &Path, files: &mut u64, bytes: &mut u64) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            match e.file_type() {
                Ok(t) if t.is_dir() => count_tree(&e.path(), files, bytes),
                Ok(t) if t.is_file() => {
                    *files += 1;
                    *bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
                }
                _ => {}
            }
        }
    }
}

/// Removes the Warren entries an import with `--collisions replace` overwrites.
fn remove_replaced(
    doc: &mut ConfigDocument,
    paths: &[Vec<String>],
) -> Result<(), warren_config::DocumentError> {
    for p in paths {
        let parts: Vec<&str> = p.iter().map(String::as_str).collect();
        doc.remove(&parts)?;
    }
    Ok(())
}

fn src_file_text(src: &Source, path: &Path) -> Result<String, ApiError> {
    src.read_to_string(path)
        .map_err(|e| io_err("reading", path, e))
}

/// Copies the regular files and folders of `from` (under the source) into `to`; links and
/// special files are left out (the plan lists them), and every file is opened without
/// following links.
fn copy_dir(
    src: &Source,
    from: &Path,
    to: &Path,
    files: &mut u64,
    bytes: &mut u64,
) -> Result<(), ApiError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(to).map_err(|e| io_err("creating", to, e))?;
    let rd = std::fs::read_dir(from).map_err(|e| io_err("reading", from, e))?;
    for e in rd {
        let e = e.map_err(|e| io_err("reading", from, e))?;
        let path = e.path();
        let dst = to.join(e.file_name());
        let ty = e.file_type().map_err(|err| io_err("reading", &path, err))?;
        if ty.is_dir() {
            copy_dir(src, &path, &dst, files, bytes)?;
        } else if ty.is_file() {
            let mut input = src
                .open_file(&path)
                .map_err(|err| io_err("reading", &path, err))?;
            let mode = input
                .metadata()
                .map_err(|err| io_err("reading", &path, err))?
                .permissions()
                .mode()
                & 0o777;
            let mut out = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&dst)
                .map_err(|err| io_err("creating", &dst, err))?;
            let n =
                std::io::copy(&mut input, &mut out).map_err(|err| io_err("copying", &path, err))?;
            // The copy is the user's own file in Warren: keep the execute bits, make it writable.
            out.set_permissions(std::fs::Permissions::from_mode(mode | 0o600))
                .map_err(|err| io_err("setting the mode of", &dst, err))?;
            out.sync_all().map_err(|err| io_err("syncing", &dst, err))?;
            *files += 1;
            *bytes += n;
        }
        // Symbolic links and special files are listed as unmapped in the plan, not copied.
    }
    Ok(())
}
