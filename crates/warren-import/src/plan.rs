//! The mapping from a ZeroClaw install to Warren: field by field, with every setting that has
//! no Warren equivalent listed with its reason and every value Warren treats as stronger or
//! weaker than ZeroClaw did called out. The plan is what `--dry-run` prints and what the import
//! then carries out.
//!
//! Counts and byte sizes are `u64` here and `number` in the window's TypeScript types (the
//! `specta(type = u32)` overrides): JSON carries them as numbers, exact up to 2^53.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{Offset, TimeZone, Utc};
use serde::{Deserialize, Serialize};
use warren_types::{
    AccessMode, AgentConfig, AgentMemoryConfig, AutonomyLevel, Config, CronJobConfig,
    DelegationMode, MemoryBackendKind, MemoryGrant, ProviderFamily, ProviderModel, RiskProfile,
    RuntimeProfile, WorkspaceConfig,
};

use super::markdown;
use super::source::{BrainCounts, Source};

/// A setting with no Warren equivalent: reported, never silently dropped.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Unmapped {
    /// Dotted path in the ZeroClaw config (or the file it concerns).
    pub setting: String,
    /// Its value, as TOML text.
    pub value: String,
    /// Why it is not carried over.
    pub reason: String,
}

/// Which way Warren's enforcement of a value differs from ZeroClaw's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum CalloutDirection {
    /// Warren allows less.
    Stronger,
    /// Warren allows more.
    Weaker,
}

impl CalloutDirection {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            CalloutDirection::Stronger => "stronger",
            CalloutDirection::Weaker => "weaker",
        }
    }
}

impl std::fmt::Display for CalloutDirection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// A value Warren enforces differently from ZeroClaw.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Callout {
    /// The Warren setting concerned.
    pub setting: String,
    /// Whether Warren allows less or more.
    pub direction: CalloutDirection,
    /// What changes.
    pub note: String,
}

/// One agent as it will be in Warren.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AgentPlan {
    /// Alias in ZeroClaw.
    pub source_alias: String,
    /// Alias in Warren.
    pub alias: String,
    /// Whether it may run turns.
    pub enabled: bool,
    /// Warren risk profile.
    pub risk_profile: String,
    /// Warren runtime profile.
    pub runtime_profile: Option<String>,
    /// `family.alias` of its provider entry.
    pub model_provider: Option<String>,
    /// Warren memory backend.
    pub memory_backend: String,
    /// `workspace.unrestricted_filesystem`.
    pub unrestricted_filesystem: bool,
    /// Sibling workspace grants: alias → `read` / `write` / `read_write`.
    pub access: BTreeMap<String, String>,
    /// Memory read grants (`alias`, or `alias: cat1, cat2`).
    pub read_memory_from: Vec<String>,
    /// Agents it may delegate to.
    pub delegates: Vec<String>,
    /// Its cron jobs (Warren ids).
    pub cron_jobs: Vec<String>,
    /// Source workspace folder.
    pub source_workspace: String,
    /// Warren workspace folder.
    pub workspace: String,
    /// Files in the workspace.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub workspace_files: u64,
    /// Bytes in the workspace.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub workspace_bytes: u64,
    /// Memory rows (or Markdown entries) per category.
    #[cfg_attr(feature = "specta", specta(type = BTreeMap<String, u32>))]
    pub memory: BTreeMap<String, u64>,
    /// Total memory rows (or Markdown entries).
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub memory_rows: u64,
    /// Distinct sessions among the rows.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub sessions: u64,
}

/// A renamed entry (profile, provider, cron job).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct NamePlan {
    /// Name in ZeroClaw.
    pub source: String,
    /// Name in Warren.
    pub name: String,
}

/// A provider entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ProviderPlan {
    /// `family.alias` in ZeroClaw.
    pub source: String,
    /// `family.alias` in Warren.
    pub reference: String,
    /// Vendor model.
    pub model: String,
    /// Secret store name of its API key, when it has one.
    pub secret: Option<String>,
}

/// A cron job.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CronPlan {
    /// Id in ZeroClaw.
    pub source_id: String,
    /// Id in Warren.
    pub id: String,
    /// Warren agent running it.
    pub agent: String,
    /// ZeroClaw expression and time zone.
    pub source_schedule: String,
    /// Warren expression (UTC).
    pub schedule: String,
}

/// Totals of the plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Totals {
    /// Agents.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub agents: u64,
    /// Memory rows from the SQLite store.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub memory_rows: u64,
    /// Markdown memory entries.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub markdown_entries: u64,
    /// Workspace files.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub workspace_files: u64,
    /// Workspace bytes.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub workspace_bytes: u64,
    /// Secrets moved into the secret store.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub secrets: u64,
    /// Cron jobs.
    #[cfg_attr(feature = "specta", specta(type = u32))]
    pub cron_jobs: u64,
}

/// The whole plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ImportPlan {
    /// The ZeroClaw install.
    pub source: String,
    /// Identity of the source install (the same install copied elsewhere keeps it).
    pub source_id: String,
    /// The prefix given to every imported name.
    pub prefix: String,
    /// Agents.
    pub agents: Vec<AgentPlan>,
    /// Risk profiles.
    pub risk_profiles: Vec<NamePlan>,
    /// Runtime profiles.
    pub runtime_profiles: Vec<NamePlan>,
    /// Provider entries.
    pub providers: Vec<ProviderPlan>,
    /// Cron jobs.
    pub cron_jobs: Vec<CronPlan>,
    /// Settings with no Warren equivalent.
    pub unmapped: Vec<Unmapped>,
    /// Values Warren treats as stronger or weaker.
    pub callouts: Vec<Callout>,
    /// Totals.
    pub totals: Totals,
    /// What stops the import (name collisions, invalid result); empty when it can run.
    pub problems: Vec<String>,
}

/// What the import writes, besides the plan shown.
#[derive(Debug, Clone, Default)]
pub struct Mapped {
    /// The agents, by their Warren alias.
    pub agents: BTreeMap<String, AgentConfig>,
    /// The risk profiles, by their Warren name.
    pub risk_profiles: BTreeMap<String, RiskProfile>,
    /// The runtime profiles, by their Warren name.
    pub runtime_profiles: BTreeMap<String, RuntimeProfile>,
    /// The provider models, by family then alias.
    pub providers: BTreeMap<String, BTreeMap<String, ProviderModel>>,
    /// The scheduled jobs, by name.
    pub cron: BTreeMap<String, CronJobConfig>,
    /// Secret name → value.
    pub secrets: BTreeMap<String, String>,
    /// ZeroClaw alias → Warren alias.
    pub alias_map: BTreeMap<String, String>,
    /// Warren entries the import overwrites (their config paths), removed before it appends.
    pub replaced: Vec<Vec<String>>,
}

/// Context the mapping needs from the Warren side.
pub struct Target<'a> {
    /// The install's config as it is.
    pub config: &'a Config,
    /// The install's root folder.
    pub install_root: &'a Path,
    /// The user's home folder (`~` in paths).
    pub home: Option<&'a Path>,
    /// The workspace folder an alias would get.
    pub workspace_of: &'a dyn Fn(&str) -> PathBuf,
    /// The aliases whose rows Warren's memory store already holds (an imported agent may not
    /// take one of them).
    pub memory_taken: &'a BTreeSet<String>,
    /// What to do with a profile or provider entry whose name Warren already uses for
    /// different settings (`None`: the plan refuses and names the choices).
    pub collision: Option<Collision>,
}

/// What the import does with an entry whose name Warren already uses for other settings. An
/// identical entry is always reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Collision {
    /// Import it under a new name (`<name>_zeroclaw`); the imported agents use that one.
    Rename,
    /// Leave Warren's entry; the imported agents use it.
    Skip,
    /// Overwrite Warren's entry with the imported one.
    Replace,
}

impl Collision {
    /// Reads `rename`, `skip` or `replace`.
    pub fn from_name(s: &str) -> Option<Self> {
        match s {
            "rename" => Some(Collision::Rename),
            "skip" => Some(Collision::Skip),
            "replace" => Some(Collision::Replace),
            _ => None,
        }
    }
}

/// An imported entry whose name may already be Warren's.
struct Clash<'a, T> {
    /// What it is (`risk profile`), for messages.
    what: &'a str,
    /// Its Warren name.
    name: &'a str,
    /// Its config path.
    path: &'a [&'a str],
    /// The imported value.
    new: &'a T,
    /// Warren's entry of that name, if any.
    existing: Option<&'a T>,
    /// Whether Warren already uses a name (for `rename`).
    taken: &'a dyn Fn(&str) -> bool,
    /// Warren's agents that use Warren's entry (a `replace` changes what they get).
    used_by: Vec<String>,
}

/// The aliases of `config`'s agents for which `uses` holds.
fn users(config: &Config, uses: impl Fn(&AgentConfig) -> bool) -> Vec<String> {
    config
        .agents
        .iter()
        .filter(|(_, a)| uses(a))
        .map(|(alias, _)| alias.clone())
        .collect()
}

/// What a name collision came to: the name the imported agents use, and whether the entry is
/// written (under that name) at all.
fn settle<T: PartialEq>(
    c: Clash<'_, T>,
    target: &Target<'_>,
    ctx: &mut Ctx<'_>,
    problems: &mut Vec<String>,
    replaced: &mut Vec<Vec<String>>,
) -> (String, bool) {
    let Clash {
        what,
        name,
        path,
        new,
        existing,
        taken,
        used_by,
    } = c;
    let Some(existing) = existing else {
        return (name.to_string(), true);
    };
    let setting = path.join(".");
    if existing == new {
        ctx.unmapped(
            &setting,
            "(the same as Warren's)".into(),
            "Warren has an identical entry of this name; the imported agents use it",
        );
        return (name.to_string(), false);
    }
    match target.collision {
        None => {
            problems.push(format!(
                "{what} `{name}` already exists in Warren with other settings: choose to rename it (imported as `{name}_zeroclaw`), skip it (the imported agents use Warren's) or replace Warren's (--collisions rename|skip|replace)"
            ));
            (name.to_string(), true)
        }
        Some(Collision::Skip) => {
            ctx.unmapped(
                &setting,
                "(Warren's kept)".into(),
                "Warren has an entry of this name with other settings; it is kept and the imported agents use it",
            );
            (name.to_string(), false)
        }
        Some(Collision::Replace) => {
            replaced.push(path.iter().map(std::string::ToString::to_string).collect());
            let who = if used_by.is_empty() {
                "no Warren agent uses it".to_string()
            } else {
                format!(
                    "Warren's agents {} get the imported settings",
                    used_by.join(", ")
                )
            };
            ctx.unmapped(
                &setting,
                "(Warren's replaced)".into(),
                &format!("Warren's entry of this name is overwritten by the imported one; {who}"),
            );
            (name.to_string(), true)
        }
        Some(Collision::Rename) => {
            let mut n = format!("{name}_zeroclaw");
            let mut i = 2;
            while taken(&n) {
                n = format!("{name}_zeroclaw{i}");
                i += 1;
            }
            (n, true)
        }
    }
}

fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// Every leaf under `v`, as (`prefix.path`, value).
fn leaves(prefix: &str, v: &toml::Value, out: &mut Vec<(String, String)>) {
    match v {
        toml::Value::Table(t) if !t.is_empty() => {
            for (k, v) in t {
                leaves(&format!("{prefix}.{k}"), v, out);
            }
        }
        other => out.push((prefix.to_string(), show(other))),
    }
}

struct Ctx<'a> {
    prefix: &'a str,
    unmapped: Vec<Unmapped>,
    callouts: Vec<Callout>,
}

impl Ctx<'_> {
    fn name(&self, n: &str) -> String {
        format!("{}{n}", self.prefix)
    }
    fn unmapped(&mut self, setting: &str, value: String, reason: &str) {
        self.unmapped.push(Unmapped {
            setting: setting.to_string(),
            value,
            reason: reason.to_string(),
        });
    }
    fn rest(
        &mut self,
        base: &str,
        table: &toml::Table,
        handled: &[&str],
        reason: &dyn Fn(&str) -> String,
    ) {
        for (k, v) in table {
            if handled.contains(&k.as_str()) {
                continue;
            }
            let mut out = Vec::new();
            leaves(&format!("{base}.{k}"), v, &mut out);
            for (path, value) in out {
                let r = reason(k);
                self.unmapped(&path, value, &r);
            }
        }
    }
    fn callout(&mut self, setting: String, direction: CalloutDirection, note: String) {
        self.callouts.push(Callout {
            setting,
            direction,
            note,
        });
    }
}

fn strings(v: Option<&toml::Value>) -> Vec<String> {
    v.and_then(|v| v.as_array())
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

fn boolean(t: &toml::Table, k: &str, default: bool) -> bool {
    t.get(k).and_then(toml::Value::as_bool).unwrap_or(default)
}

fn uint(t: &toml::Table, k: &str) -> Option<u32> {
    t.get(k)
        .and_then(toml::Value::as_integer)
        .and_then(|i| u32::try_from(i).ok())
}

fn expand(p: &str, home: Option<&Path>) -> Option<PathBuf> {
    if p == "~" {
        return home.map(Path::to_path_buf);
    }
    if let Some(rest) = p.strip_prefix("~/") {
        return home.map(|h| h.join(rest));
    }
    Some(PathBuf::from(p))
}

fn map_risk(name: &str, t: &toml::Table, ctx: &mut Ctx, target: &Target) -> RiskProfile {
    let base = format!("risk_profiles.{name}");
    let warren = format!("risk_profiles.{}", ctx.name(name));
    let mut p = RiskProfile::default();
    match t.get("level").and_then(|v| v.as_str()) {
        Some("full") => p.level = AutonomyLevel::Full,
        Some("readonly") | Some("read_only") => p.level = AutonomyLevel::Readonly,
        Some("supervised") | None => p.level = AutonomyLevel::Supervised,
        Some(other) => {
            ctx.unmapped(
                &format!("{base}.level"),
                format!("{other:?}"),
                "not a level Warren knows; Warren uses `supervised`",
            );
        }
    }
    p.workspace_only = boolean(t, "workspace_only", true);
    if t.contains_key("allowed_commands") {
        p.allowed_commands = strings(t.get("allowed_commands"));
    }
    p.allowed_roots = strings(t.get("allowed_roots"));
    p.require_approval_for_medium_risk = boolean(t, "require_approval_for_medium_risk", true);
    p.block_high_risk_commands = boolean(t, "block_high_risk_commands", true);
    p.auto_approve = strings(t.get("auto_approve"));
    p.always_ask = strings(t.get("always_ask"));
    p.allowed_tools = strings(t.get("allowed_tools"));
    p.excluded_tools = strings(t.get("excluded_tools"));
    p.shell_env_passthrough = strings(t.get("shell_env_passthrough"));
    // Warren denies a forbidden path before looking at the workspace; ZeroClaw's default list
    // (`/home`, `/tmp`, ...) contains the folders installs live in. An entry that contains
    // Warren's install would deny every agent its own workspace: it is left out, said so.
    let root = target.install_root;
    for raw in strings(t.get("forbidden_paths")) {
        let contains_install = expand(&raw, target.home).is_some_and(|p| root.starts_with(&p));
        if contains_install {
            ctx.callout(
                format!("{warren}.forbidden_paths"),
                CalloutDirection::Weaker,
                format!(
                    "`{raw}` is left out: it contains Warren's install ({}), and Warren lets a forbidden path win over the workspace. Outside the workspace and the grants, agents with workspace_only = false can reach {raw}",
                    root.display()
                ),
            );
        } else {
            p.forbidden_paths.push(raw);
        }
    }
    // ZeroClaw's autonomy table shares its keys with a Warren risk profile, except the three
    // Warren tables it has no counterpart for (reported as unmapped when present).
    let mut handled: Vec<&str> = warren_config::RISK_KEYS
        .iter()
        .copied()
        .filter(|k| !matches!(*k, "sandbox" | "delegation" | "network"))
        .collect();
    if let Some(dp) = t.get("delegation_policy").and_then(|v| v.as_table()) {
        handled.push("delegation_policy");
        match dp.get("mode").and_then(|v| v.as_str()) {
            Some("allow") => p.delegation = DelegationMode::Allow,
            Some(other) if other != "deny" && other != "forbidden" => {
                ctx.unmapped(
                    &format!("{base}.delegation_policy.mode"),
                    format!("{other:?}"),
                    "Warren's delegation is `allow` or `forbidden`; imported as `forbidden`",
                );
            }
            _ => {}
        }
        ctx.rest(&format!("{base}.delegation_policy"), dp, &["mode"], &|_| {
            "Warren's delegation setting has only allow/forbidden".into()
        });
    }
    ctx.rest(&base, t, &handled, &|k| match k {
        "firejail_args" => {
            "Warren confines commands with Landlock or bubblewrap (`sandbox`), not firejail".into()
        }
        _ => "Warren's risk profiles have no such setting".into(),
    });
    ctx.callout(
        format!("{warren}.sandbox"),
        CalloutDirection::Stronger,
        "shell commands run in Warren's OS sandbox (`auto`: Landlock, else bubblewrap), confined to the workspace and the grants".into(),
    );
    ctx.callout(
        format!("{warren}.network"),
        CalloutDirection::Stronger,
        "sandboxed shell commands get no network (`network = false`); set it to true if commands such as curl must connect".into(),
    );
    p
}

fn map_runtime(name: &str, t: &toml::Table, ctx: &mut Ctx) -> RuntimeProfile {
    let base = format!("runtime_profiles.{name}");
    let warren = format!("runtime_profiles.{}", ctx.name(name));
    let mut p = RuntimeProfile::default();
    if let Some(v) = uint(t, "max_tool_iterations") {
        p.max_tool_iterations = v;
    }
    p.parallel_tools = boolean(t, "parallel_tools", false);
    if let Some(v) = uint(t, "max_actions_per_hour") {
        p.max_actions_per_hour = v;
    }
    if let Some(v) = uint(t, "max_cost_per_day_cents") {
        p.max_cost_per_day_cents = v;
    }
    if let Some(v) = uint(t, "shell_timeout_secs") {
        p.shell_timeout_secs = v;
    }
    if let Some(v) = uint(t, "max_delegation_depth") {
        p.max_delegation_depth = v;
    }
    if let Some(v) = uint(t, "max_context_tokens") {
        p.max_context_tokens = Some(v);
    }
    ctx.rest(
        &base,
        t,
        &[
            "max_tool_iterations",
            "parallel_tools",
            "max_actions_per_hour",
            "max_cost_per_day_cents",
            "shell_timeout_secs",
            "max_delegation_depth",
            "max_context_tokens",
        ],
        &|k| match k {
            "agentic" => "Warren agents always run the tool loop".into(),
            "memory_recall_limit" => "Warren's memory tool takes its limit per call".into(),
            "max_history_messages" | "compact_context" | "context_compression" | "history_pruning" => {
                "Warren bounds the context with max_context_tokens, not by message count or compression".into()
            }
            "thinking" => "Warren has no reasoning-effort setting".into(),
            "eval" => "Warren does not grade answers".into(),
            "tool_receipts" => "Warren always writes tool-call receipts (warren receipts)".into(),
            _ => "Warren's runtime profiles have no such setting".into(),
        },
    );
    ctx.callout(
        format!("{warren}.turn_timeout_secs"),
        CalloutDirection::Stronger,
        format!(
            "Warren ends a turn after {} s (turn_timeout_secs); ZeroClaw had no whole-turn limit",
            p.turn_timeout_secs
        ),
    );
    p
}

/// Shifts a 5-field cron expression from a time zone to UTC at the offset that zone has now.
/// `None` when the minute or hour field is not plain numbers or the day would change.
fn cron_to_utc(expr: &str, tz: &str) -> Result<(String, Option<String>), String> {
    let fields: Vec<&str> = expr.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!("`{expr}` is not a 5-field cron expression"));
    }
    if tz.is_empty() || tz == "UTC" || tz == "Etc/UTC" {
        return Ok((expr.to_string(), None));
    }
    let zone: chrono_tz::Tz = tz
        .parse()
        .map_err(|_| format!("time zone `{tz}` is unknown"))?;
    let now = Utc::now();
    let offset = zone
        .offset_from_utc_datetime(&now.naive_utc())
        .fix()
        .local_minus_utc();
    if offset % 60 != 0 {
        return Err(format!("the offset of `{tz}` is not whole minutes"));
    }
    let shift_min = -(offset / 60);
    let minute: i32 = fields[0]
        .parse()
        .map_err(|_| format!("the minute field `{}` is not a number", fields[0]))?;
    let hours: Vec<i32> = fields[1]
        .split(',')
        .map(str::parse::<i32>)
        .collect::<Result<_, _>>()
        .map_err(|_| format!("the hour field `{}` is not a list of numbers", fields[1]))?;
    let mut new_hours = Vec::new();
    let mut new_minute = None;
    for h in hours {
        let total = h * 60 + minute + shift_min;
        if !(0..24 * 60).contains(&total) {
            return Err(format!(
                "{h}:{minute:02} in {tz} falls on another UTC day, which a day-of-week field cannot follow"
            ));
        }
        new_hours.push((total / 60).to_string());
        new_minute = Some(total % 60);
    }
    let m = new_minute.unwrap_or(minute);
    let out = format!(
        "{m} {} {} {} {}",
        new_hours.join(","),
        fields[2],
        fields[3],
        fields[4]
    );
    let local = zone.from_utc_datetime(&now.naive_utc());
    let note = format!(
        "`{expr}` in {tz} is `{out}` in UTC at today's offset ({:+03}:{:02}, {}); after a daylight-saving change the job runs an hour off its local time",
        offset / 3600,
        (offset.abs() % 3600) / 60,
        local.format("%Z"),
    );
    Ok((out, Some(note)))
}

fn tree_size(dir: &Path, ctx: &mut Ctx, label: &str) -> (u64, u64) {
    let (mut files, mut bytes) = (0u64, 0u64);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(ty) = e.file_type() else { continue };
            if ty.is_dir() {
                stack.push(e.path());
            } else if ty.is_file() {
                files += 1;
                bytes += e.metadata().map(|m| m.len()).unwrap_or(0);
            } else {
                let rel = e
                    .path()
                    .strip_prefix(dir)
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                ctx.unmapped(
                    &format!("{label}/{rel}"),
                    "(not a regular file)".into(),
                    "symbolic links and special files are not copied into Warren workspaces",
                );
            }
        }
    }
    (files, bytes)
}

/// Builds the plan and the values it writes.
pub fn build(
    src: &Source,
    source_id: &str,
    prefix: &str,
    counts: &BTreeMap<String, BrainCounts>,
    target: &Target,
) -> (ImportPlan, Mapped) {
    let mut ctx = Ctx {
        prefix,
        unmapped: Vec::new(),
        callouts: Vec::new(),
    };
    let mut mapped = Mapped::default();
    let mut problems = Vec::new();
    let empty = toml::Table::new();
    let agents = src.table("agents").unwrap_or(&empty);
    for alias in agents.keys() {
        mapped.alias_map.insert(alias.clone(), ctx.name(alias));
    }

    // Top level: everything besides the four maps, the providers and the cron jobs.
    ctx.rest("", &src.config, &["schema_version", "agents", "risk_profiles", "runtime_profiles", "providers", "cron"], &|k| match k {
        "onboard_state" => "ZeroClaw's first-run wizard state; Warren has its own first start".into(),
        "memory" => "install-wide ZeroClaw memory tuning (retention, hygiene, search); Warren's [memory] section is left as it is".into(),
        "channels" | "gateway" | "tunnel" => "Warren has no chat channels or gateway".into(),
        _ => "Warren has no such setting".into(),
    });
    for u in ctx.unmapped.iter_mut() {
        u.setting = u.setting.trim_start_matches('.').to_string();
    }

    let mut risk_plans = Vec::new();
    // ZeroClaw name → the Warren name the imported agents use (after collisions).
    let mut risk_names: BTreeMap<String, String> = BTreeMap::new();
    let mut runtime_names: BTreeMap<String, String> = BTreeMap::new();
    if let Some(rps) = src.table("risk_profiles") {
        for (name, v) in rps {
            let t = v.as_table().unwrap_or(&empty);
            let p = map_risk(name, t, &mut ctx, target);
            let n = ctx.name(name);
            let taken = |x: &str| target.config.risk_profiles.contains_key(x);
            let (n, write) = settle(
                Clash {
                    what: "risk profile",
                    name: &n,
                    path: &["risk_profiles", &n],
                    new: &p,
                    existing: target.config.risk_profiles.get(&n),
                    taken: &taken,
                    used_by: users(target.config, |a| a.risk_profile == n),
                },
                target,
                &mut ctx,
                &mut problems,
                &mut mapped.replaced,
            );
            risk_names.insert(name.clone(), n.clone());
            if write {
                mapped.risk_profiles.insert(n.clone(), p);
            }
            risk_plans.push(NamePlan {
                source: name.clone(),
                name: n,
            });
        }
    }
    let mut runtime_plans = Vec::new();
    if let Some(rps) = src.table("runtime_profiles") {
        for (name, v) in rps {
            let t = v.as_table().unwrap_or(&empty);
            let p = map_runtime(name, t, &mut ctx);
            let n = ctx.name(name);
            let taken = |x: &str| target.config.runtime_profiles.contains_key(x);
            let (n, write) = settle(
                Clash {
                    what: "runtime profile",
                    name: &n,
                    path: &["runtime_profiles", &n],
                    new: &p,
                    existing: target.config.runtime_profiles.get(&n),
                    taken: &taken,
                    used_by: users(target.config, |a| a.runtime_profile.as_deref() == Some(&n)),
                },
                target,
                &mut ctx,
                &mut problems,
                &mut mapped.replaced,
            );
            runtime_names.insert(name.clone(), n.clone());
            if write {
                mapped.runtime_profiles.insert(n.clone(), p);
            }
            runtime_plans.push(NamePlan {
                source: name.clone(),
                name: n,
            });
        }
    }

    // Providers: `[providers.models.<family>.<alias>]`.
    let mut provider_plans = Vec::new();
    let mut provider_map: BTreeMap<String, String> = BTreeMap::new();
    if let Some(p) = src.table("providers") {
        ctx.rest("providers", p, &["models"], &|_| {
            "Warren's [providers] holds only model entries".into()
        });
    }
    if let Some(models) = src.table("providers.models") {
        for (family, entries) in models {
            let Some(entries) = entries.as_table() else {
                continue;
            };
            let fam = ProviderFamily::from_name(family);
            for (alias, v) in entries {
                let base = format!("providers.models.{family}.{alias}");
                let t = v.as_table().unwrap_or(&empty);
                if fam.is_none() {
                    let mut out = Vec::new();
                    leaves(&base, v, &mut out);
                    for (path, value) in out {
                        let value = if path.ends_with(".api_key") {
                            "(secret, not shown)".into()
                        } else {
                            value
                        };
                        ctx.unmapped(&path, value, "Warren speaks to OpenAI, Anthropic and Ollama APIs only; add an `openai` entry with this URI if the vendor is OpenAI-compatible");
                    }
                    continue;
                }
                let new_alias = ctx.name(alias);
                let mut m = ProviderModel {
                    model: t
                        .get("model")
                        .and_then(|v| v.as_str())
                        .unwrap_or_default()
                        .to_string(),
                    uri: t.get("uri").and_then(|v| v.as_str()).map(String::from),
                    ..ProviderModel::default()
                };
                if let Some(s) = uint(t, "timeout_secs") {
                    m.timeout_secs = s;
                }
                let mut secret = None;
                if let Some(key) = t
                    .get("api_key")
                    .and_then(|v| v.as_str())
                    .filter(|k| !k.is_empty())
                {
                    match src.decrypt(key) {
                        Ok(plain) => {
                            let name = format!("zeroclaw.{family}.{new_alias}");
                            mapped.secrets.insert(name.clone(), plain);
                            m.secret = Some(name.clone());
                            secret = Some(name);
                        }
                        Err(why) => problems.push(format!(
                            "{}: the API key of `{base}` cannot be imported: {why}",
                            src.config_path.display()
                        )),
                    }
                }
                if let Some(env) = t.get("api_key_env").and_then(|v| v.as_str()) {
                    m.api_key_env = Some(env.to_string());
                }
                ctx.rest(
                    &base,
                    t,
                    &["model", "uri", "api_key", "api_key_env", "timeout_secs"],
                    &|k| match k {
                        "temperature" => {
                            "Warren sends no temperature; the vendor's default applies".into()
                        }
                        _ => "Warren's provider entries have no such setting".into(),
                    },
                );
                let warren_entries = target.config.providers.models.get(family);
                let taken = |x: &str| warren_entries.is_some_and(|e| e.contains_key(x));
                let (new_alias, write) = settle(
                    Clash {
                        what: "provider entry",
                        name: &format!("{family}.{new_alias}"),
                        path: &["providers", "models", family, &new_alias],
                        new: &m,
                        existing: warren_entries.and_then(|e| e.get(&new_alias)),
                        taken: &|x: &str| taken(x.strip_prefix(&format!("{family}.")).unwrap_or(x)),
                        used_by: {
                            let r = format!("{family}.{new_alias}");
                            users(target.config, |a| a.model_provider.as_deref() == Some(&r))
                        },
                    },
                    target,
                    &mut ctx,
                    &mut problems,
                    &mut mapped.replaced,
                );
                let new_alias = new_alias
                    .strip_prefix(&format!("{family}."))
                    .unwrap_or(&new_alias)
                    .to_string();
                let reference = format!("{family}.{new_alias}");
                provider_map.insert(format!("{family}.{alias}"), reference.clone());
                if write {
                    mapped
                        .providers
                        .entry(family.clone())
                        .or_default()
                        .insert(new_alias, m.clone());
                } else if let Some(s) = &secret {
                    // Warren's entry is used: the imported key has no entry to serve.
                    mapped.secrets.remove(s);
                }
                provider_plans.push(ProviderPlan {
                    source: format!("{family}.{alias}"),
                    reference,
                    model: m.model,
                    secret,
                });
            }
        }
    }

    // Cron jobs: the owner is the agent that lists the id.
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    for (alias, v) in agents {
        for id in strings(v.get("cron_jobs")) {
            owner.insert(id, alias.clone());
        }
    }
    let mut cron_plans = Vec::new();
    if let Some(jobs) = src.table("cron") {
        for (id, v) in jobs {
            let base = format!("cron.{id}");
            let t = v.as_table().unwrap_or(&empty);
            let Some(agent) = owner.get(id) else {
                let mut out = Vec::new();
                leaves(&base, v, &mut out);
                for (path, value) in out {
                    ctx.unmapped(
                        &path,
                        value,
                        "no agent lists this job in cron_jobs; Warren jobs belong to an agent",
                    );
                }
                continue;
            };
            let sched = t
                .get("schedule")
                .and_then(|v| v.as_table())
                .unwrap_or(&empty);
            let kind = sched.get("kind").and_then(|v| v.as_str()).unwrap_or("cron");
            let expr = sched
                .get("expr")
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            let tz = sched.get("tz").and_then(|v| v.as_str()).unwrap_or("UTC");
            if kind != "cron" {
                let mut out = Vec::new();
                leaves(&base, v, &mut out);
                for (path, value) in out {
                    ctx.unmapped(&path, value, &format!("schedule kind `{kind}` has no Warren equivalent (Warren jobs are cron expressions)"));
                }
                continue;
            }
            let new_id = ctx.name(id);
            let (schedule, note) = match cron_to_utc(expr, tz) {
                Ok(x) => x,
                Err(why) => {
                    ctx.callout(
                        format!("cron.{new_id}.schedule"),
                        CalloutDirection::Weaker,
                        format!("kept as `{expr}` but Warren reads it in UTC: {why}"),
                    );
                    (expr.to_string(), None)
                }
            };
            if let Some(note) = note {
                ctx.callout(
                    format!("cron.{new_id}.schedule"),
                    CalloutDirection::Weaker,
                    note,
                );
            }
            if target.config.cron.contains_key(&new_id) {
                problems.push(format!("cron job `{new_id}` already exists in Warren"));
            }
            let job = CronJobConfig {
                agent: ctx.name(agent),
                schedule: schedule.clone(),
                prompt: t
                    .get("prompt")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_string(),
                enabled: boolean(t, "enabled", true),
            };
            ctx.rest(&base, t, &["schedule", "prompt", "enabled"], &|k| match k {
                "allowed_tools" => {
                    "Warren jobs use the agent's tools as its risk profile allows".into()
                }
                "session_target" => "every Warren cron run is its own session".into(),
                "name" => "Warren names a job by its id".into(),
                _ => "Warren's cron jobs have no such setting".into(),
            });
            ctx.rest(
                &format!("{base}.schedule"),
                sched,
                &["kind", "expr", "tz"],
                &|_| "Warren's schedule is a cron expression only".into(),
            );
            cron_plans.push(CronPlan {
                source_id: id.clone(),
                id: new_id.clone(),
                agent: job.agent.clone(),
                source_schedule: format!("{expr} ({tz})"),
                schedule,
            });
            mapped.cron.insert(new_id, job);
        }
    }

    // Agents.
    let mut agent_plans = Vec::new();
    let mut totals = Totals::default();
    for (alias, v) in agents {
        let base = format!("agents.{alias}");
        let t = v.as_table().unwrap_or(&empty);
        let new_alias = ctx.name(alias);
        if let Err(e) = warren_types::validate_alias(&new_alias) {
            problems.push(format!("`{new_alias}` is not a valid Warren alias: {e}"));
        }
        if target.config.agents.contains_key(&new_alias) {
            problems.push(format!(
                "agent `{new_alias}` already exists in Warren (use --prefix to import under new names)"
            ));
        }
        let ws_target = (target.workspace_of)(&new_alias);
        if ws_target.exists() {
            problems.push(format!(
                "the workspace {} already exists in Warren",
                ws_target.display()
            ));
        }
        if target.memory_taken.contains(&new_alias) {
            problems.push(format!(
                "Warren's memory store already holds rows of an agent named `{new_alias}`"
            ));
        }
        let rename = |a: &str| mapped.alias_map.get(a).cloned();
        let mut agent = AgentConfig {
            enabled: boolean(t, "enabled", true),
            ..AgentConfig::default()
        };
        let mut handled = vec!["enabled"];
        if let Some(rp) = t.get("risk_profile").and_then(|v| v.as_str()) {
            agent.risk_profile = risk_names.get(rp).cloned().unwrap_or_else(|| ctx.name(rp));
            handled.push("risk_profile");
        }
        if let Some(rp) = t
            .get("runtime_profile")
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
        {
            agent.runtime_profile = Some(
                runtime_names
                    .get(rp)
                    .cloned()
                    .unwrap_or_else(|| ctx.name(rp)),
            );
            handled.push("runtime_profile");
        }
        if let Some(mp) = t
            .get("model_provider")
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
        {
            handled.push("model_provider");
            match provider_map.get(mp) {
                Some(r) => agent.model_provider = Some(r.clone()),
                None => ctx.unmapped(
                    &format!("{base}.model_provider"),
                    format!("{mp:?}"),
                    "the provider entry is not imported (see above); the agent gets none",
                ),
            }
        }
        handled.push("delegates");
        let mut delegates = Vec::new();
        if let Some(list) = t.get("delegates").and_then(|v| v.as_array()) {
            for (i, d) in list.iter().enumerate() {
                let (name, mode) = match d {
                    toml::Value::String(s) => (s.clone(), None),
                    toml::Value::Table(dt) => (
                        dt.get("agent")
                            .and_then(|v| v.as_str())
                            .unwrap_or_default()
                            .to_string(),
                        dt.get("mode").and_then(|v| v.as_str()).map(String::from),
                    ),
                    _ => continue,
                };
                match rename(&name) {
                    Some(n) => delegates.push(n),
                    None => ctx.unmapped(
                        &format!("{base}.delegates[{i}]"),
                        format!("{name:?}"),
                        "no such agent in the install",
                    ),
                }
                if let Some(mode) = mode {
                    ctx.unmapped(
                        &format!("{base}.delegates[{i}].mode"),
                        format!("{mode:?}"),
                        "Warren delegation is always bounded: the delegate runs under the intersection of both agents' policies",
                    );
                }
            }
        }
        agent.delegates = delegates;
        handled.push("cron_jobs");
        agent.cron_jobs = strings(t.get("cron_jobs"))
            .into_iter()
            .filter(|id| mapped.cron.contains_key(&ctx.name(id)))
            .map(|id| ctx.name(&id))
            .collect();
        // Memory backend.
        handled.push("memory");
        let mem = t.get("memory").and_then(|v| v.as_table()).unwrap_or(&empty);
        let backend_name = mem
            .get("backend")
            .and_then(|v| v.as_str())
            .unwrap_or("sqlite");
        let backend = match MemoryBackendKind::from_name(backend_name) {
            Some(b) => b,
            None => {
                ctx.unmapped(
                    &format!("{base}.memory.backend"),
                    format!("{backend_name:?}"),
                    "Warren has no such memory backend; the agent uses sqlite",
                );
                MemoryBackendKind::Sqlite
            }
        };
        if !matches!(backend_name, "sqlite" | "markdown" | "none") {
            ctx.unmapped(
                &format!("{base}.memory.backend"),
                format!("{backend_name:?}"),
                "the importer reads ZeroClaw's SQLite store (brain.db) and Markdown files only: rows kept in this backend's own store are not imported",
            );
        }
        agent.memory = AgentMemoryConfig {
            backend: Some(backend),
        };
        ctx.rest(&format!("{base}.memory"), mem, &["backend"], &|_| {
            "Warren's per-agent memory setting is the backend only".into()
        });
        // Workspace and grants.
        handled.push("workspace");
        let ws = t
            .get("workspace")
            .and_then(|v| v.as_table())
            .unwrap_or(&empty);
        let mut wsc = WorkspaceConfig {
            unrestricted_filesystem: boolean(ws, "unrestricted_filesystem", false),
            ..WorkspaceConfig::default()
        };
        if let Some(access) = ws.get("access").and_then(|v| v.as_table()) {
            for (peer, mode) in access {
                let m = match mode.as_str() {
                    Some("read") => Some(AccessMode::Read),
                    Some("write") => Some(AccessMode::Write),
                    Some("read_write") => Some(AccessMode::ReadWrite),
                    _ => None,
                };
                match (rename(peer), m) {
                    (Some(p), Some(m)) => {
                        wsc.access.insert(p, m);
                    }
                    _ => ctx.unmapped(
                        &format!("{base}.workspace.access.{peer}"),
                        show(mode),
                        "not an agent of the install or not read/write/read_write",
                    ),
                }
            }
        }
        if let Some(list) = ws.get("read_memory_from").and_then(|v| v.as_array()) {
            for (i, g) in list.iter().enumerate() {
                let grant = match g {
                    toml::Value::String(s) => rename(s).map(MemoryGrant::Agent),
                    toml::Value::Table(gt) => {
                        let a = gt.get("agent").and_then(|v| v.as_str()).unwrap_or_default();
                        let cats = strings(gt.get("categories"));
                        rename(a).map(|agent| {
                            if gt.contains_key("categories") {
                                MemoryGrant::Scoped {
                                    agent,
                                    categories: cats,
                                }
                            } else {
                                MemoryGrant::Agent(agent)
                            }
                        })
                    }
                    _ => None,
                };
                match grant {
                    Some(g) => wsc.read_memory_from.push(g),
                    None => ctx.unmapped(
                        &format!("{base}.workspace.read_memory_from[{i}]"),
                        show(g),
                        "no such agent in the install",
                    ),
                }
            }
        }
        if let Some(p) = ws.get("path").and_then(|v| v.as_str()) {
            ctx.unmapped(
                &format!("{base}.workspace.path"),
                format!("{p:?}"),
                "the workspace is copied to Warren's default place for the agent",
            );
        }
        ctx.rest(
            &format!("{base}.workspace"),
            ws,
            &[
                "access",
                "read_memory_from",
                "unrestricted_filesystem",
                "path",
            ],
            &|_| "Warren's workspace settings have no such setting".into(),
        );
        agent.workspace = wsc;
        // Everything else of the agent.
        ctx.rest(&base, t, &handled, &|k| match k {
            "channels" => "Warren has no chat channels".into(),
            "delegate_same_risk_profile" => "Warren decides delegation by the risk profiles' `delegation` and the policy intersection".into(),
            "a2a" | "acp_enable_mcp" => "Warren's ACP server has no such per-agent setting".into(),
            "identity" => "Warren reads the workspace's identity files as they are".into(),
            "precheck" => "Warren has no pre-turn check".into(),
            "skill_bundles" | "knowledge_bundles" | "mcp_bundles" => "Warren has no bundles".into(),
            _ => "Warren's agents have no such setting".into(),
        });

        // Counts.
        let src_ws = src.workspace(alias);
        let (files, bytes) = tree_size(&src_ws, &mut ctx, &format!("agents/{alias}/workspace"));
        let mut memory = BTreeMap::new();
        let mut sessions = 0;
        let mut rows = 0;
        if backend == MemoryBackendKind::Markdown {
            match markdown::entries(&|p| src.read_to_string(p), &src_ws) {
                Ok(entries) => {
                    for e in &entries {
                        *memory.entry(e.category.clone()).or_insert(0u64) += 1;
                    }
                    rows = entries.len() as u64;
                    totals.markdown_entries += rows;
                }
                Err((p, e)) => problems.push(format!("{}: {e}", p.display())),
            }
            if counts.get(alias).is_some_and(|c| !c.categories.is_empty()) {
                ctx.unmapped(&format!("{base}.memory"), "rows in brain.db".into(), "the agent uses Markdown memory; its rows in the SQLite store are not read by ZeroClaw either and are not imported");
            }
        } else if let Some(c) = counts.get(alias) {
            memory = c.categories.clone();
            rows = memory.values().sum();
            sessions = c.sessions;
            totals.memory_rows += rows;
            for (n, what) in [
                (c.pinned, "pinned"),
                (c.other_namespace, "in a namespace other than `default`"),
                (c.superseded, "marked superseded"),
                (c.embedded, "carrying an embedding vector"),
            ] {
                if n > 0 {
                    ctx.unmapped(&format!("brain.db memories of {alias}"), format!("{n} rows {what}"), "Warren's memory rows have no such attribute; the rows are imported without it (Warren computes its own embeddings)");
                }
            }
            if !matches!(
                backend,
                MemoryBackendKind::Sqlite | MemoryBackendKind::Lucid
            ) && rows > 0
            {
                ctx.unmapped(
                    &format!("{base}.memory.backend"),
                    format!("{backend_name:?}"),
                    "its rows in brain.db go to Warren's SQLite store, which this backend does not read: switch the agent to sqlite to see them",
                );
            }
        }
        totals.workspace_files += files;
        totals.workspace_bytes += bytes;
        agent_plans.push(AgentPlan {
            source_alias: alias.clone(),
            alias: new_alias.clone(),
            enabled: agent.enabled,
            risk_profile: agent.risk_profile.clone(),
            runtime_profile: agent.runtime_profile.clone(),
            model_provider: agent.model_provider.clone(),
            memory_backend: backend.as_str().to_string(),
            unrestricted_filesystem: agent.workspace.unrestricted_filesystem,
            access: agent
                .workspace
                .access
                .iter()
                .map(|(k, v)| {
                    let m = match v {
                        AccessMode::Read => "read",
                        AccessMode::Write => "write",
                        AccessMode::ReadWrite => "read_write",
                    };
                    (k.clone(), m.to_string())
                })
                .collect(),
            read_memory_from: agent
                .workspace
                .read_memory_from
                .iter()
                .map(|g| match g.categories() {
                    None => g.agent().to_string(),
                    Some(c) => format!("{}: {}", g.agent(), c.join(", ")),
                })
                .collect(),
            delegates: agent.delegates.clone(),
            cron_jobs: agent.cron_jobs.clone(),
            source_workspace: src_ws.display().to_string(),
            workspace: ws_target.display().to_string(),
            workspace_files: files,
            workspace_bytes: bytes,
            memory,
            memory_rows: rows,
            sessions,
        });
        mapped.agents.insert(new_alias, agent);
    }
    // Memory rows of aliases that are not agents of the config.
    for (alias, c) in counts {
        if !agents.contains_key(alias) {
            let n: u64 = c.categories.values().sum();
            let who = if alias.is_empty() {
                "rows with no agent".to_string()
            } else {
                format!("agent `{alias}`")
            };
            ctx.unmapped(
                &format!("brain.db memories of {who}"),
                format!("{n} rows"),
                "not an agent of config.toml: nobody would own them in Warren",
            );
        }
    }
    totals.agents = agent_plans.len() as u64;
    totals.secrets = mapped.secrets.len() as u64;
    totals.cron_jobs = cron_plans.len() as u64;
    let plan = ImportPlan {
        source: src.root.display().to_string(),
        source_id: source_id.to_string(),
        prefix: prefix.to_string(),
        agents: agent_plans,
        risk_profiles: risk_plans,
        runtime_profiles: runtime_plans,
        providers: provider_plans,
        cron_jobs: cron_plans,
        unmapped: ctx.unmapped,
        callouts: ctx.callouts,
        totals,
        problems,
    };
    (plan, mapped)
}

/// The TOML text the import appends to Warren's config.
pub fn config_text(m: &Mapped, source: &str) -> Result<String, String> {
    let mut out = format!(
        "\n# Imported from the ZeroClaw install at {source} on {}.\n",
        Utc::now().format("%Y-%m-%d")
    );
    let mut push = |key: &str, v: toml::Value| -> Result<(), String> {
        let mut root = toml::Table::new();
        root.insert(key.to_string(), v);
        let text = toml::to_string(&root).map_err(|e| e.to_string())?;
        out.push('\n');
        out.push_str(&text);
        Ok(())
    };
    let val = |x: &dyn erased::Ser| x.to_value();
    if !m.risk_profiles.is_empty() {
        push("risk_profiles", val(&m.risk_profiles)?)?;
    }
    if !m.runtime_profiles.is_empty() {
        push("runtime_profiles", val(&m.runtime_profiles)?)?;
    }
    if !m.providers.is_empty() {
        let mut models = toml::Table::new();
        models.insert("models".into(), val(&m.providers)?);
        push("providers", toml::Value::Table(models))?;
    }
    if !m.agents.is_empty() {
        push("agents", val(&m.agents)?)?;
    }
    if !m.cron.is_empty() {
        push("cron", val(&m.cron)?)?;
    }
    Ok(out)
}

mod erased {
    /// Serialises any value to a TOML value.
    pub trait Ser {
        fn to_value(&self) -> Result<toml::Value, String>;
    }
    impl<T: serde::Serialize> Ser for T {
        fn to_value(&self) -> Result<toml::Value, String> {
            toml::Value::try_from(self).map_err(|e| e.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cron_moves_to_utc_or_says_why_not() {
        let (out, note) = cron_to_utc("30 17 * * 1-5", "America/Toronto").unwrap();
        assert!(out == "30 21 * * 1-5" || out == "30 22 * * 1-5", "{out}");
        assert!(note.unwrap().contains("America/Toronto"));
        assert_eq!(cron_to_utc("0 9 * * *", "UTC").unwrap().0, "0 9 * * *");
        assert!(cron_to_utc("0 23 * * 1", "America/Toronto").is_err());
        assert!(cron_to_utc("*/5 * * * *", "America/Toronto").is_err());
        assert!(cron_to_utc("0 9 * * *", "Mars/Olympus").is_err());
    }

    #[test]
    fn callout_directions_are_their_documented_codes() {
        let table = [
            (CalloutDirection::Stronger, "stronger"),
            (CalloutDirection::Weaker, "weaker"),
        ];
        for (value, code) in &table {
            let json = serde_json::to_string(value).unwrap();
            assert_eq!(json, format!("\"{code}\""), "{value:?}");
            let back: CalloutDirection = serde_json::from_str(&json).unwrap();
            assert_eq!(&back, value);
        }
        for (d, code) in table {
            assert_eq!(d.as_str(), code);
        }
    }
}
