//! Lenient decoding of a parsed TOML table into the typed [`Config`]: every unknown key, wrong
//! type and unknown enum value is recorded as an [`Issue`] with its dotted path, and decoding
//! goes on so that all problems are reported at once.

use crate::issue::{join, Issue};
use serde::de::DeserializeOwned;
use std::collections::BTreeMap;
use toml::{Table, Value};
use warren_types::{
    did_you_mean, did_you_mean_hint, AgentConfig, AgentMemoryConfig, Config, CronJobConfig,
    DockerConfig, DomainRules, EmbeddingsConfig, LucidMemoryConfig, McpServerConfig, MemoryConfig,
    MemoryGrant, NetworkAccess, PostgresMemoryConfig, ProviderFamily, ProviderModel,
    ProvidersConfig, QdrantMemoryConfig, RiskProfile, RuntimeConfig, RuntimeProfile,
    SqliteMemoryConfig, WorkspaceConfig, SCHEMA_VERSION,
};

/// Top-level sections Warren knows. Other top-level keys are kept in the file and ignored.
pub(crate) const KNOWN_TOP: &[&str] = &[
    "schema_version",
    "agents",
    "risk_profiles",
    "runtime_profiles",
    "providers",
    "memory",
    "runtime",
    "cron",
    "mcp_servers",
];

/// The keys of each table below the top level (tested against the serde types in
/// `warren-types`, so a field added there cannot be refused here as unknown).
const AGENT_MEMORY_KEYS: &[&str] = &["backend"];
const MEMORY_GRANT_KEYS: &[&str] = &["agent", "categories"];
const PROVIDERS_KEYS: &[&str] = &["models"];
const SQLITE_KEYS: &[&str] = &["path"];
const POSTGRES_KEYS: &[&str] = &["url", "schema"];
const LUCID_KEYS: &[&str] = &["command"];
const EMBEDDINGS_KEYS: &[&str] = &["provider", "dimensions"];
const RUNTIME_CONFIG_KEYS: &[&str] = &["kind", "docker"];
const DOCKER_KEYS: &[&str] = &["image", "network"];
const CRON_KEYS: &[&str] = &["agent", "schedule", "prompt", "enabled"];
const MCP_SERVER_KEYS: &[&str] = &["command", "args", "env", "url"];
const QDRANT_KEYS: &[&str] = &["url", "collection", "api_key_env"];
const MEMORY_KEYS: &[&str] = &[
    "backend",
    "sqlite",
    "postgres",
    "qdrant",
    "lucid",
    "embeddings",
];

/// A view of one table being decoded, remembering which keys were consumed.
struct Obj<'a> {
    table: &'a Table,
    path: String,
    known: &'static [&'static str],
}

impl<'a> Obj<'a> {
    fn new(
        table: &'a Table,
        path: &str,
        known: &'static [&'static str],
        out: &mut Vec<Issue>,
    ) -> Self {
        for key in table.keys() {
            if !known.contains(&key.as_str()) {
                out.push(Issue::new(join(path, key), unknown_key_message(key, known)));
            }
        }
        Obj {
            table,
            path: path.to_string(),
            known,
        }
    }

    fn at(&self, key: &str) -> String {
        debug_assert!(self.known.contains(&key));
        join(&self.path, key)
    }

    /// Decodes `key` into `T` if present; records a typed error otherwise.
    fn get<T: DeserializeOwned>(&self, key: &str, out: &mut Vec<Issue>) -> Option<T> {
        let v = self.table.get(key)?;
        decode_value(v, &self.at(key), out)
    }

    /// Decodes `key` into `T`, keeping `slot` (the default) when absent or invalid.
    fn set<T: DeserializeOwned>(&self, key: &str, slot: &mut T, out: &mut Vec<Issue>) {
        if let Some(v) = self.get(key, out) {
            *slot = v;
        }
    }

    /// The sub-table at `key`, or an error when it is not a table.
    fn table(&self, key: &str, out: &mut Vec<Issue>) -> Option<&'a Table> {
        match self.table.get(key)? {
            Value::Table(t) => Some(t),
            other => {
                out.push(Issue::new(
                    self.at(key),
                    format!("expected a table, found {}", type_name(other)),
                ));
                None
            }
        }
    }
}

/// `unknown key `x``, with the known key it is probably a slip of, and every known key.
fn unknown_key_message(key: &str, known: &[&str]) -> String {
    match did_you_mean(key, known) {
        Some(k) => format!(
            "unknown key `{key}`: did you mean `{k}`? (expected one of: {})",
            known.join(", ")
        ),
        None => format!(
            "unknown key `{key}` (expected one of: {})",
            known.join(", ")
        ),
    }
}

fn decode_value<T: DeserializeOwned>(v: &Value, path: &str, out: &mut Vec<Issue>) -> Option<T> {
    match v.clone().try_into::<T>() {
        Ok(x) => Some(x),
        Err(e) => {
            out.push(Issue::new(path, clean_message(&e.to_string())));
            None
        }
    }
}

/// The decoder's message in a reader's words: serde's `invalid type: string "ten", expected
/// u32` becomes `expected a whole number (0 or more), found the text "ten"`, and `invalid
/// value: integer \`-1\`, expected u32` becomes `-1 is out of range: expected a whole number
/// (0 or more)`. Messages of other shapes are kept.
fn clean_message(m: &str) -> String {
    let m = m.trim().replace('\n', " ");
    if let Some(rest) = m.strip_prefix("invalid type: ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return format!(
                "expected {}, found {}",
                expected_words(expected),
                found_words(found)
            );
        }
    }
    if let Some(rest) = m.strip_prefix("invalid value: ") {
        if let Some((found, expected)) = rest.split_once(", expected ") {
            return format!(
                "{} is out of range: expected {}",
                found_words(found),
                expected_words(expected)
            );
        }
    }
    if let Some(rest) = m.strip_prefix("unknown variant `") {
        if let Some((found, expected)) = rest.split_once("`, expected ") {
            let choices: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
            if let Some(c) = did_you_mean(found, &choices) {
                return format!(
                    "unknown value `{found}`: did you mean `{c}`? (expected {expected})"
                );
            }
            return format!("unknown value `{found}` (expected {expected})");
        }
    }
    m
}

/// What serde expected (`u32`, `a sequence`), said plainly.
fn expected_words(e: &str) -> String {
    match e.trim() {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number (0 or more)".into(),
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a sequence" => "a list".into(),
        "a map" => "a table".into(),
        "a boolean" => "true or false".into(),
        other => other.to_string(),
    }
}

/// What serde found (`string "ten"`, an integer in backticks), said plainly.
fn found_words(f: &str) -> String {
    let f = f.trim();
    if let Some(v) = f.strip_prefix("string ") {
        return format!("the text {v}");
    }
    for prefix in ["integer ", "floating point ", "boolean "] {
        if let Some(v) = f.strip_prefix(prefix) {
            return v.trim_matches('`').to_string();
        }
    }
    match f {
        "sequence" => "a list".into(),
        "map" => "a table".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod messages {
    use super::clean_message;

    #[test]
    fn decoder_messages_are_said_in_words() {
        assert_eq!(
            clean_message("invalid type: string \"ten\", expected u32"),
            "expected a whole number (0 or more), found the text \"ten\""
        );
        assert_eq!(
            clean_message("invalid value: integer `-1`, expected u32"),
            "-1 is out of range: expected a whole number (0 or more)"
        );
        assert_eq!(
            clean_message("invalid type: sequence, expected a boolean"),
            "expected true or false, found a list"
        );
        assert_eq!(
            clean_message("unknown variant `redis`, expected one of `sqlite`"),
            "unknown value `redis` (expected one of `sqlite`)"
        );
        assert_eq!(
            clean_message(
                "unknown variant `supervsed`, expected one of `readonly`, `supervised`, `full`"
            ),
            "unknown value `supervsed`: did you mean `supervised`? (expected one of `readonly`, `supervised`, `full`)"
        );
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a datetime",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// Iterates the sub-tables of a map-like section (`[agents.*]`, ...), reporting non-tables.
fn entries<'a>(
    parent: &Obj<'a>,
    key: &str,
    out: &mut Vec<Issue>,
) -> Vec<(String, String, &'a Table)> {
    let Some(t) = parent.table(key, out) else {
        return Vec::new();
    };
    let base = parent.at(key);
    let mut v = Vec::new();
    for (name, item) in t {
        let path = join(&base, name);
        match item {
            Value::Table(sub) => v.push((name.clone(), path, sub)),
            other => out.push(Issue::new(
                path,
                format!("expected a table, found {}", type_name(other)),
            )),
        }
    }
    v
}

/// Decodes a whole config table. Issues are appended to `out`; the returned config holds every
/// value that decoded cleanly and defaults elsewhere.
pub(crate) fn decode_config(root: &Table, out: &mut Vec<Issue>) -> Config {
    let mut cfg = Config::default();
    // Unknown top-level sections are tolerated (kept on save), except one that is a slip of
    // a known section's name (`[risk_profle.x]`): its settings would be silently ignored.
    let top = Obj {
        table: root,
        path: String::new(),
        known: KNOWN_TOP,
    };
    for key in root.keys() {
        if !KNOWN_TOP.contains(&key.as_str()) && did_you_mean(key, KNOWN_TOP).is_some() {
            out.push(Issue::new(
                join("", key),
                unknown_key_message(key, KNOWN_TOP),
            ));
        }
    }
    if let Some(v) = top.get::<i64>("schema_version", out) {
        if v != i64::from(SCHEMA_VERSION) {
            out.push(Issue::new(
                "schema_version",
                format!("unsupported schema_version {v}; this Warren reads {SCHEMA_VERSION}"),
            ));
        }
    }
    for (alias, path, t) in entries(&top, "agents", out) {
        cfg.agents.insert(alias, decode_agent(t, &path, out));
    }
    for (name, path, t) in entries(&top, "risk_profiles", out) {
        cfg.risk_profiles.insert(name, decode_risk(t, &path, out));
    }
    for (name, path, t) in entries(&top, "runtime_profiles", out) {
        cfg.runtime_profiles
            .insert(name, decode_runtime(t, &path, out));
    }
    if let Some(t) = top.table("providers", out) {
        cfg.providers = decode_providers(t, "providers", out);
    }
    if let Some(t) = top.table("memory", out) {
        cfg.memory = decode_memory(t, "memory", out);
    }
    if let Some(t) = top.table("runtime", out) {
        cfg.runtime = decode_runtime_section(t, "runtime", out);
    }
    for (id, path, t) in entries(&top, "cron", out) {
        cfg.cron.insert(id, decode_cron(t, &path, out));
    }
    for (name, path, t) in entries(&top, "mcp_servers", out) {
        cfg.mcp_servers
            .insert(name, decode_mcp_server(t, &path, out));
    }
    cfg
}

const AGENT_KEYS: &[&str] = &[
    "enabled",
    "model_provider",
    "risk_profile",
    "runtime_profile",
    "delegates",
    "cron_jobs",
    "mcp_servers",
    "workspace",
    "memory",
];

fn decode_agent(t: &Table, path: &str, out: &mut Vec<Issue>) -> AgentConfig {
    let o = Obj::new(t, path, AGENT_KEYS, out);
    let mut a = AgentConfig::default();
    o.set("enabled", &mut a.enabled, out);
    a.model_provider = o.get("model_provider", out);
    match o.get::<String>("risk_profile", out) {
        Some(p) => a.risk_profile = p,
        None if !t.contains_key("risk_profile") => out.push(Issue::new(
            join(path, "risk_profile"),
            "missing required key `risk_profile`",
        )),
        None => {}
    }
    a.runtime_profile = o.get("runtime_profile", out);
    o.set("delegates", &mut a.delegates, out);
    o.set("cron_jobs", &mut a.cron_jobs, out);
    o.set("mcp_servers", &mut a.mcp_servers, out);
    if let Some(w) = o.table("workspace", out) {
        a.workspace = decode_workspace(w, &o.at("workspace"), out);
    }
    if let Some(m) = o.table("memory", out) {
        let mo = Obj::new(m, &o.at("memory"), AGENT_MEMORY_KEYS, out);
        a.memory = AgentMemoryConfig {
            backend: mo.get("backend", out),
        };
    }
    a
}

const WORKSPACE_KEYS: &[&str] = &[
    "path",
    "unrestricted_filesystem",
    "read_memory_from",
    "access",
];

fn decode_workspace(t: &Table, path: &str, out: &mut Vec<Issue>) -> WorkspaceConfig {
    let o = Obj::new(t, path, WORKSPACE_KEYS, out);
    let mut w = WorkspaceConfig {
        path: o.get("path", out),
        ..WorkspaceConfig::default()
    };
    o.set(
        "unrestricted_filesystem",
        &mut w.unrestricted_filesystem,
        out,
    );
    if let Some(v) = t.get("read_memory_from") {
        let p = o.at("read_memory_from");
        match v {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    if let Some(g) = decode_grant(item, &format!("{p}[{i}]"), out) {
                        w.read_memory_from.push(g);
                    }
                }
            }
            other => out.push(Issue::new(
                p,
                format!("expected an array, found {}", type_name(other)),
            )),
        }
    }
    if let Some(access) = o.table("access", out) {
        let base = o.at("access");
        let mut map = BTreeMap::new();
        for (alias, v) in access {
            if let Some(mode) = decode_value(v, &join(&base, alias), out) {
                map.insert(alias.clone(), mode);
            }
        }
        w.access = map;
    }
    w
}

fn decode_grant(v: &Value, path: &str, out: &mut Vec<Issue>) -> Option<MemoryGrant> {
    match v {
        Value::String(s) => Some(MemoryGrant::Agent(s.clone())),
        Value::Table(t) => {
            let o = Obj::new(t, path, MEMORY_GRANT_KEYS, out);
            let agent = o.get::<String>("agent", out);
            let categories = o.get::<Vec<String>>("categories", out);
            if !t.contains_key("agent") {
                out.push(Issue::new(path, "missing required key `agent`"));
            }
            match (agent, categories) {
                (Some(agent), Some(categories)) => Some(MemoryGrant::Scoped { agent, categories }),
                (Some(agent), None) if !t.contains_key("categories") => {
                    Some(MemoryGrant::Agent(agent))
                }
                _ => None,
            }
        }
        other => {
            out.push(Issue::new(
                path,
                format!(
                    "expected an alias string or {{ agent = \"...\", categories = [...] }}, found {}",
                    type_name(other)
                ),
            ));
            None
        }
    }
}

/// The keys of a `[risk_profiles.<name>]` table, in the order the decoder reads them.
pub const RISK_KEYS: &[&str] = &[
    "level",
    "workspace_only",
    "allowed_commands",
    "forbidden_paths",
    "allowed_roots",
    "require_approval_for_medium_risk",
    "block_high_risk_commands",
    "auto_approve",
    "always_ask",
    "allowed_tools",
    "excluded_tools",
    "sandbox",
    "shell_env_passthrough",
    "delegation",
    "network",
];

fn decode_risk(t: &Table, path: &str, out: &mut Vec<Issue>) -> RiskProfile {
    let o = Obj::new(t, path, RISK_KEYS, out);
    let mut r = RiskProfile::default();
    o.set("level", &mut r.level, out);
    o.set("workspace_only", &mut r.workspace_only, out);
    o.set("allowed_commands", &mut r.allowed_commands, out);
    o.set("forbidden_paths", &mut r.forbidden_paths, out);
    o.set("allowed_roots", &mut r.allowed_roots, out);
    o.set(
        "require_approval_for_medium_risk",
        &mut r.require_approval_for_medium_risk,
        out,
    );
    o.set(
        "block_high_risk_commands",
        &mut r.block_high_risk_commands,
        out,
    );
    o.set("auto_approve", &mut r.auto_approve, out);
    o.set("always_ask", &mut r.always_ask, out);
    o.set("allowed_tools", &mut r.allowed_tools, out);
    o.set("excluded_tools", &mut r.excluded_tools, out);
    o.set("sandbox", &mut r.sandbox, out);
    o.set("shell_env_passthrough", &mut r.shell_env_passthrough, out);
    o.set("delegation", &mut r.delegation, out);
    if let Some(v) = t.get("network") {
        if let Some(n) = decode_network(v, &o.at("network"), out) {
            r.network = n;
        }
    }
    r
}

const NETWORK_KEYS: &[&str] = &["allow", "deny", "allow_private"];

/// `network = false | true | { allow, deny, allow_private }`; every pattern that does not
/// parse is an issue naming its place (`risk_profiles.p.network.allow[1]`).
fn decode_network(v: &Value, path: &str, out: &mut Vec<Issue>) -> Option<NetworkAccess> {
    match v {
        Value::Boolean(b) => Some(NetworkAccess::Switch(*b)),
        Value::Table(t) => {
            let before = out.len();
            let o = Obj::new(t, path, NETWORK_KEYS, out);
            let mut d = DomainRules::default();
            o.set("allow", &mut d.allow, out);
            o.set("deny", &mut d.deny, out);
            o.set("allow_private", &mut d.allow_private, out);
            for (key, i, pattern, problem) in d.problems() {
                out.push(Issue::new(
                    format!("{path}.{key}[{i}]"),
                    format!("\"{pattern}\" {problem}"),
                ));
            }
            if d.allow.is_empty() && out.len() == before {
                out.push(Issue::new(
                    format!("{path}.allow"),
                    "lists no domain: nothing could be reached (write `network = false` for no network)",
                ));
            }
            (out.len() == before).then_some(NetworkAccess::Domains(d))
        }
        other => {
            out.push(Issue::new(
                path,
                format!(
                    "expected true, false or a table of domains ({{ allow = [\"crates.io\"] }}), found {}",
                    type_name(other)
                ),
            ));
            None
        }
    }
}

const RUNTIME_KEYS: &[&str] = &[
    "max_tool_iterations",
    "parallel_tools",
    "single_tool_rounds",
    "max_actions_per_hour",
    "max_cost_per_day_cents",
    "shell_timeout_secs",
    "turn_timeout_secs",
    "max_delegation_depth",
    "max_context_tokens",
];

fn decode_runtime(t: &Table, path: &str, out: &mut Vec<Issue>) -> RuntimeProfile {
    let o = Obj::new(t, path, RUNTIME_KEYS, out);
    let mut r = RuntimeProfile::default();
    o.set("max_tool_iterations", &mut r.max_tool_iterations, out);
    o.set("parallel_tools", &mut r.parallel_tools, out);
    o.set("single_tool_rounds", &mut r.single_tool_rounds, out);
    o.set("max_actions_per_hour", &mut r.max_actions_per_hour, out);
    o.set("max_cost_per_day_cents", &mut r.max_cost_per_day_cents, out);
    o.set("shell_timeout_secs", &mut r.shell_timeout_secs, out);
    o.set("turn_timeout_secs", &mut r.turn_timeout_secs, out);
    o.set("max_delegation_depth", &mut r.max_delegation_depth, out);
    r.max_context_tokens = o.get("max_context_tokens", out);
    r
}

const PROVIDER_KEYS: &[&str] = &[
    "model",
    "uri",
    "api_key_env",
    "secret",
    "fallbacks",
    "timeout_secs",
    "single_tool_control",
    "input_cost_per_mtok",
    "output_cost_per_mtok",
];

fn decode_providers(t: &Table, path: &str, out: &mut Vec<Issue>) -> ProvidersConfig {
    let o = Obj::new(t, path, PROVIDERS_KEYS, out);
    let mut p = ProvidersConfig::default();
    for (family, fpath, ft) in entries(&o, "models", out) {
        if ProviderFamily::from_name(&family).is_none() {
            out.push(Issue::new(
                fpath.clone(),
                format!(
                    "unknown provider family `{family}`{} (expected one of: openai, anthropic, ollama)",
                    did_you_mean_hint(&family, &["openai", "anthropic", "ollama"])
                ),
            ));
            continue;
        }
        let mut models = BTreeMap::new();
        for (alias, v) in ft {
            let mpath = join(&fpath, alias);
            let Value::Table(mt) = v else {
                out.push(Issue::new(
                    mpath,
                    format!("expected a table, found {}", type_name(v)),
                ));
                continue;
            };
            let mo = Obj::new(mt, &mpath, PROVIDER_KEYS, out);
            let mut m = ProviderModel::default();
            match mo.get::<String>("model", out) {
                Some(s) => m.model = s,
                None if !mt.contains_key("model") => out.push(Issue::new(
                    join(&mpath, "model"),
                    "missing required key `model`",
                )),
                None => {}
            }
            m.uri = mo.get("uri", out);
            m.api_key_env = mo.get("api_key_env", out);
            m.secret = mo.get("secret", out);
            mo.set("fallbacks", &mut m.fallbacks, out);
            mo.set("timeout_secs", &mut m.timeout_secs, out);
            m.single_tool_control = mo.get("single_tool_control", out);
            m.input_cost_per_mtok = mo.get("input_cost_per_mtok", out);
            m.output_cost_per_mtok = mo.get("output_cost_per_mtok", out);
            models.insert(alias.clone(), m);
        }
        p.models.insert(family, models);
    }
    p
}

fn decode_memory(t: &Table, path: &str, out: &mut Vec<Issue>) -> MemoryConfig {
    let o = Obj::new(t, path, MEMORY_KEYS, out);
    let mut m = MemoryConfig::default();
    o.set("backend", &mut m.backend, out);
    if let Some(s) = o.table("sqlite", out) {
        let so = Obj::new(s, &o.at("sqlite"), SQLITE_KEYS, out);
        m.sqlite = SqliteMemoryConfig {
            path: so.get("path", out),
        };
    }
    if let Some(s) = o.table("postgres", out) {
        let so = Obj::new(s, &o.at("postgres"), POSTGRES_KEYS, out);
        m.postgres = PostgresMemoryConfig {
            url: so.get("url", out),
            schema: so.get("schema", out),
        };
    }
    if let Some(s) = o.table("qdrant", out) {
        let so = Obj::new(s, &o.at("qdrant"), QDRANT_KEYS, out);
        m.qdrant = QdrantMemoryConfig {
            url: so.get("url", out),
            collection: so.get("collection", out),
            api_key_env: so.get("api_key_env", out),
        };
    }
    if let Some(s) = o.table("lucid", out) {
        let so = Obj::new(s, &o.at("lucid"), LUCID_KEYS, out);
        m.lucid = LucidMemoryConfig {
            command: so.get("command", out),
        };
    }
    if let Some(s) = o.table("embeddings", out) {
        let so = Obj::new(s, &o.at("embeddings"), EMBEDDINGS_KEYS, out);
        m.embeddings = EmbeddingsConfig {
            provider: so.get("provider", out),
            dimensions: so.get("dimensions", out),
        };
    }
    m
}

fn decode_runtime_section(t: &Table, path: &str, out: &mut Vec<Issue>) -> RuntimeConfig {
    let o = Obj::new(t, path, RUNTIME_CONFIG_KEYS, out);
    let mut r = RuntimeConfig::default();
    o.set("kind", &mut r.kind, out);
    if let Some(d) = o.table("docker", out) {
        let dobj = Obj::new(d, &o.at("docker"), DOCKER_KEYS, out);
        r.docker = DockerConfig {
            image: dobj.get("image", out),
            network: dobj.get("network", out),
        };
    }
    r
}

fn decode_cron(t: &Table, path: &str, out: &mut Vec<Issue>) -> CronJobConfig {
    let o = Obj::new(t, path, CRON_KEYS, out);
    let mut c = CronJobConfig::default();
    for key in ["agent", "schedule", "prompt"] {
        if !t.contains_key(key) {
            out.push(Issue::new(
                join(path, key),
                format!("missing required key `{key}`"),
            ));
        }
    }
    o.set("agent", &mut c.agent, out);
    o.set("schedule", &mut c.schedule, out);
    o.set("prompt", &mut c.prompt, out);
    o.set("enabled", &mut c.enabled, out);
    c
}

fn decode_mcp_server(t: &Table, path: &str, out: &mut Vec<Issue>) -> McpServerConfig {
    let o = Obj::new(t, path, MCP_SERVER_KEYS, out);
    let mut m = McpServerConfig {
        command: o.get("command", out),
        url: o.get("url", out),
        ..McpServerConfig::default()
    };
    o.set("args", &mut m.args, out);
    o.set("env", &mut m.env, out);
    m
}

#[cfg(test)]
mod key_lists {
    //! Every key list above names exactly the fields of the serde type it decodes.
    use super::*;
    use std::collections::BTreeSet;

    fn fields<T: Default + serde::Serialize>() -> BTreeSet<String> {
        match serde_json::to_value(T::default()).unwrap() {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            other => panic!("not a table: {other}"),
        }
    }

    fn listed(keys: &[&str]) -> BTreeSet<String> {
        keys.iter().map(std::string::ToString::to_string).collect()
    }

    #[test]
    fn each_key_list_matches_its_type() {
        assert_eq!(listed(KNOWN_TOP), fields::<Config>(), "top level");
        assert_eq!(listed(AGENT_KEYS), fields::<AgentConfig>(), "agents.*");
        assert_eq!(
            listed(AGENT_MEMORY_KEYS),
            fields::<AgentMemoryConfig>(),
            "agents.*.memory"
        );
        assert_eq!(
            listed(WORKSPACE_KEYS),
            fields::<WorkspaceConfig>(),
            "agents.*.workspace"
        );
        assert_eq!(
            listed(RISK_KEYS),
            fields::<RiskProfile>(),
            "risk_profiles.*"
        );
        assert_eq!(
            listed(RUNTIME_KEYS),
            fields::<RuntimeProfile>(),
            "runtime_profiles.*"
        );
        assert_eq!(
            listed(PROVIDERS_KEYS),
            fields::<ProvidersConfig>(),
            "providers"
        );
        assert_eq!(
            listed(PROVIDER_KEYS),
            fields::<ProviderModel>(),
            "providers.models.*.*"
        );
        assert_eq!(listed(MEMORY_KEYS), fields::<MemoryConfig>(), "memory");
        assert_eq!(
            listed(SQLITE_KEYS),
            fields::<SqliteMemoryConfig>(),
            "memory.sqlite"
        );
        assert_eq!(
            listed(POSTGRES_KEYS),
            fields::<PostgresMemoryConfig>(),
            "memory.postgres"
        );
        assert_eq!(
            listed(QDRANT_KEYS),
            fields::<QdrantMemoryConfig>(),
            "memory.qdrant"
        );
        assert_eq!(
            listed(LUCID_KEYS),
            fields::<LucidMemoryConfig>(),
            "memory.lucid"
        );
        assert_eq!(
            listed(EMBEDDINGS_KEYS),
            fields::<EmbeddingsConfig>(),
            "memory.embeddings"
        );
        assert_eq!(
            listed(RUNTIME_CONFIG_KEYS),
            fields::<RuntimeConfig>(),
            "runtime"
        );
        assert_eq!(
            listed(DOCKER_KEYS),
            fields::<DockerConfig>(),
            "runtime.docker"
        );
        assert_eq!(listed(CRON_KEYS), fields::<CronJobConfig>(), "cron.*");
        assert_eq!(
            listed(MCP_SERVER_KEYS),
            fields::<McpServerConfig>(),
            "mcp_servers.*"
        );
        // The table form of a memory grant.
        let grant = serde_json::to_value(MemoryGrant::Scoped {
            agent: String::new(),
            categories: Vec::new(),
        })
        .unwrap();
        let keys: BTreeSet<String> = grant.as_object().unwrap().keys().cloned().collect();
        assert_eq!(listed(MEMORY_GRANT_KEYS), keys, "read_memory_from table");
    }
}
