//! Semantic validation of a decoded config (rules §1.2): references resolve, grants are sane,
//! backends are configured. Every rule appends to the same issue list.

use crate::issue::{join, Issue};
use std::collections::BTreeSet;
use std::path::Path;
use std::str::FromStr;
use warren_types::{
    did_you_mean_hint, validate_alias, Config, McpServerConfig, MemoryBackendKind, RuntimeKind,
};

/// Normalises a 5-field cron expression (minute hour day month weekday) to the 6-field form with
/// seconds that the `cron` crate parses; 6- and 7-field expressions pass unchanged.
pub fn normalize_cron(expr: &str) -> String {
    if expr.split_whitespace().count() == 5 {
        format!("0 {}", expr.trim())
    } else {
        expr.trim().to_string()
    }
}

/// Host variables that never reach a shell child, even when a risk profile lists them in
/// `shell_env_passthrough`: they hand the child a way out of its sandbox (the session and system
/// buses, the user's runtime directory and display servers, the SSH and GPG agents). Every
/// `GIT_*` variable is refused as well (see [`env_never_passed`]).
pub const NEVER_PASSED_ENV: &[&str] = &[
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "XDG_RUNTIME_DIR",
    "WAYLAND_DISPLAY",
    "DISPLAY",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
];

/// Whether the host variable `name` must never be passed to a shell child: one of
/// [`NEVER_PASSED_ENV`] or any `GIT_*` variable (git's environment is set by Warren only).
pub fn env_never_passed(name: &str) -> bool {
    NEVER_PASSED_ENV.contains(&name) || name.starts_with("GIT_")
}

/// Runs every semantic rule over `cfg`, appending problems to `out`.
pub(crate) fn validate(cfg: &Config, out: &mut Vec<Issue>) {
    for (alias, agent) in &cfg.agents {
        let ap = join("agents", alias);
        if let Err(e) = validate_alias(alias) {
            out.push(Issue::new(
                ap.clone(),
                format!("invalid agent alias `{alias}`: {e}"),
            ));
        }
        if let Some(mp) = &agent.model_provider {
            check_provider_ref(cfg, mp, &join(&ap, "model_provider"), out);
        }
        if !agent.risk_profile.is_empty() && !cfg.risk_profiles.contains_key(&agent.risk_profile) {
            out.push(Issue::new(
                join(&ap, "risk_profile"),
                format!(
                    "risk profile `{}` is not defined in [risk_profiles]{}",
                    agent.risk_profile,
                    did_you_mean_hint(&agent.risk_profile, cfg.risk_profiles.keys())
                ),
            ));
        }
        if let Some(rp) = &agent.runtime_profile {
            if !cfg.runtime_profiles.contains_key(rp) {
                out.push(Issue::new(
                    join(&ap, "runtime_profile"),
                    format!(
                        "runtime profile `{rp}` is not defined in [runtime_profiles]{}",
                        did_you_mean_hint(rp, cfg.runtime_profiles.keys())
                    ),
                ));
            }
        }
        for (i, d) in agent.delegates.iter().enumerate() {
            if !cfg.agents.contains_key(d) {
                out.push(Issue::new(
                    format!("{}[{i}]", join(&ap, "delegates")),
                    format!(
                        "delegate `{d}` is not a defined agent{}",
                        did_you_mean_hint(d, cfg.agents.keys())
                    ),
                ));
            }
        }
        for (i, name) in agent.mcp_servers.iter().enumerate() {
            if !cfg.mcp_servers.contains_key(name) {
                out.push(Issue::new(
                    format!("{}[{i}]", join(&ap, "mcp_servers")),
                    format!(
                        "MCP server `{name}` is not defined in [mcp_servers]{}",
                        did_you_mean_hint(name, cfg.mcp_servers.keys())
                    ),
                ));
            }
        }
        let wp = join(&ap, "workspace");
        if let Some(p) = &agent.workspace.path {
            if !Path::new(p).is_absolute() {
                out.push(Issue::new(
                    join(&wp, "path"),
                    format!("workspace path `{p}` must be absolute"),
                ));
            }
        }
        for peer in agent.workspace.access.keys() {
            let p = join(&join(&wp, "access"), peer);
            if peer == alias {
                out.push(Issue::new(
                    p,
                    "an agent cannot be granted access to itself (it always owns its workspace)",
                ));
            } else if !cfg.agents.contains_key(peer) {
                out.push(Issue::new(
                    p,
                    format!(
                        "`{peer}` is not a defined agent{}",
                        did_you_mean_hint(peer, cfg.agents.keys())
                    ),
                ));
            }
        }
        validate_memory_grants(cfg, alias, &wp, out);
    }

    for (name, profile) in &cfg.runtime_profiles {
        let p = join("runtime_profiles", name);
        for (key, v) in [
            ("max_tool_iterations", profile.max_tool_iterations),
            ("shell_timeout_secs", profile.shell_timeout_secs),
            ("turn_timeout_secs", profile.turn_timeout_secs),
        ] {
            if v == 0 {
                out.push(Issue::new(
                    join(&p, key),
                    format!("`{key}` must be at least 1"),
                ));
            }
        }
    }
    for (name, profile) in &cfg.risk_profiles {
        let p = join("risk_profiles", name);
        for (i, var) in profile.shell_env_passthrough.iter().enumerate() {
            if env_never_passed(var) {
                out.push(Issue::new(
                    format!("{}[{i}]", join(&p, "shell_env_passthrough")),
                    format!(
                        "`{var}` is never passed to shell commands: it opens a way out of the \
                         sandbox (session bus, runtime dir, display, SSH/GPG agent or git environment)"
                    ),
                ));
            }
        }
        for (i, root) in profile.allowed_roots.iter().enumerate() {
            if !(Path::new(root).is_absolute() || root.starts_with('~')) {
                out.push(Issue::new(
                    format!("{}[{i}]", join(&p, "allowed_roots")),
                    format!("allowed root `{root}` must be absolute (or start with ~)"),
                ));
            }
        }
    }

    for (family, models) in &cfg.providers.models {
        for (alias, m) in models {
            let mp = join(&join(&join("providers.models", family), alias), "fallbacks");
            for (i, fb) in m.fallbacks.iter().enumerate() {
                check_provider_ref(cfg, fb, &format!("{mp}[{i}]"), out);
            }
            if m.timeout_secs == 0 {
                out.push(Issue::new(
                    join(
                        &join(&join("providers.models", family), alias),
                        "timeout_secs",
                    ),
                    "`timeout_secs` must be at least 1",
                ));
            }
            if let Some(u) = &m.uri {
                let rest = u
                    .strip_prefix("http://")
                    .or_else(|| u.strip_prefix("https://"));
                let host_ok = rest.is_some_and(|r| {
                    let host = r.split(['/', '?', '#']).next().unwrap_or_default();
                    !host.is_empty() && !r.contains(char::is_whitespace)
                });
                if !host_ok {
                    out.push(Issue::new(
                        join(&join(&join("providers.models", family), alias), "uri"),
                        format!(
                            "`{u}` is not an http:// or https:// address with a host; write it whole, for example http://127.0.0.1:11434"
                        ),
                    ));
                }
            }
        }
    }

    validate_backends(cfg, out);

    for (id, job) in &cfg.cron {
        let p = join("cron", id);
        if !job.agent.is_empty() && !cfg.agents.contains_key(&job.agent) {
            out.push(Issue::new(
                join(&p, "agent"),
                format!(
                    "agent `{}` is not defined{}",
                    job.agent,
                    did_you_mean_hint(&job.agent, cfg.agents.keys())
                ),
            ));
        }
        if !job.schedule.is_empty() {
            if let Err(e) = cron::Schedule::from_str(&normalize_cron(&job.schedule)) {
                out.push(Issue::new(
                    join(&p, "schedule"),
                    format!("invalid cron expression `{}`: {e}", job.schedule),
                ));
            }
        }
    }

    for (name, server) in &cfg.mcp_servers {
        validate_mcp_server(name, server, out);
    }

    if cfg.runtime.kind == RuntimeKind::Docker && cfg.runtime.docker.image.is_none() {
        out.push(Issue::new(
            "runtime.docker.image",
            "`[runtime] kind = \"docker\"` needs `[runtime.docker] image`",
        ));
    }
}

/// Whether `name` may name an MCP server: 1 to 32 of `a-z`, `0-9`, `_`, `-`, starting with a
/// letter or digit, without `__` (the separator of `server__tool` names).
pub fn valid_mcp_server_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && !name.contains("__")
}

fn validate_mcp_server(name: &str, server: &McpServerConfig, out: &mut Vec<Issue>) {
    let p = join("mcp_servers", name);
    if !valid_mcp_server_name(name) {
        out.push(Issue::new(
            p.clone(),
            format!(
                "invalid MCP server name `{name}`: use 1 to 32 of a-z, 0-9, `_` and `-`, \
                 starting with a letter or digit, without `__`"
            ),
        ));
    }
    match (&server.command, &server.url) {
        (None, None) => out.push(Issue::new(
            p.clone(),
            "an MCP server needs `command` (stdio) or `url` (streamable HTTP)",
        )),
        (Some(_), Some(_)) => out.push(Issue::new(
            p.clone(),
            "an MCP server has either `command` (stdio) or `url` (streamable HTTP), not both",
        )),
        (Some(c), None) => {
            if c.trim().is_empty() || c.contains('\0') {
                out.push(Issue::new(
                    join(&p, "command"),
                    "`command` must name a program",
                ));
            }
        }
        (None, Some(u)) => {
            let host = u
                .strip_prefix("http://")
                .or_else(|| u.strip_prefix("https://"))
                .and_then(|rest| rest.split('/').next())
                .unwrap_or("");
            if host.is_empty() || u.chars().any(char::is_whitespace) {
                out.push(Issue::new(
                    join(&p, "url"),
                    format!("`{u}` is not an http:// or https:// URL"),
                ));
            }
            for key in ["args", "env"] {
                let set = if key == "args" {
                    !server.args.is_empty()
                } else {
                    !server.env.is_empty()
                };
                if set {
                    out.push(Issue::new(
                        join(&p, key),
                        format!("`{key}` applies to stdio servers (`command`) only"),
                    ));
                }
            }
        }
    }
    for var in server.env.keys() {
        if var.is_empty() || var.contains('=') || var.contains('\0') {
            out.push(Issue::new(
                join(&join(&p, "env"), var),
                format!("`{var}` is not an environment variable name (it is empty or has `=`)"),
            ));
            continue;
        }
        if env_never_passed(var) {
            out.push(Issue::new(
                join(&join(&p, "env"), var),
                format!(
                    "`{var}` is never set for an MCP server: it opens a way out of the sandbox \
                     (session bus, runtime dir, display, SSH/GPG agent or git environment)"
                ),
            ));
        }
    }
}

fn check_provider_ref(cfg: &Config, reference: &str, path: &str, out: &mut Vec<Issue>) {
    match reference.split_once('.') {
        None => out.push(Issue::new(
            path,
            format!("provider reference `{reference}` must have the form \"family.alias\""),
        )),
        Some(_) if cfg.provider(reference).is_none() => {
            let known: Vec<String> = cfg
                .providers
                .models
                .iter()
                .flat_map(|(family, models)| models.keys().map(move |a| format!("{family}.{a}")))
                .collect();
            out.push(Issue::new(
                path,
                format!(
                    "provider `{reference}` is not defined in [providers.models]{}",
                    did_you_mean_hint(reference, &known)
                ),
            ));
        }
        Some(_) => {}
    }
}

fn validate_memory_grants(cfg: &Config, alias: &str, wp: &str, out: &mut Vec<Issue>) {
    let Some(agent) = cfg.agents.get(alias) else {
        return;
    };
    let own_backend = cfg.effective_memory_backend(alias);
    let mut seen = BTreeSet::new();
    for (i, grant) in agent.workspace.read_memory_from.iter().enumerate() {
        let p = format!("{}[{i}]", join(wp, "read_memory_from"));
        let peer = grant.agent();
        if peer == alias {
            out.push(Issue::new(
                p,
                "an agent cannot be granted its own memory (it always reads its own)",
            ));
            continue;
        }
        if !seen.insert(peer.to_string()) {
            out.push(Issue::new(
                p,
                format!("duplicate memory grant for `{peer}`: give each agent one grant"),
            ));
            continue;
        }
        let Some(peer_backend) = cfg.effective_memory_backend(peer) else {
            out.push(Issue::new(
                p,
                format!(
                    "`{peer}` is not a defined agent{}",
                    did_you_mean_hint(peer, cfg.agents.keys())
                ),
            ));
            continue;
        };
        if Some(peer_backend) != own_backend {
            out.push(Issue::new(
                p,
                format!(
                    "cross-backend cross-agent memory is not supported: `{alias}` uses {} and `{peer}` uses {}",
                    own_backend.map(warren_types::MemoryBackendKind::as_str).unwrap_or("?"),
                    peer_backend.as_str()
                ),
            ));
            continue;
        }
        if let Some(cats) = grant.categories() {
            if cats.is_empty() {
                out.push(Issue::new(
                    p,
                    "empty `categories` list: omit `categories` to grant all, or name at least one",
                ));
            } else if peer_backend == MemoryBackendKind::Markdown
                || own_backend == Some(MemoryBackendKind::Markdown)
            {
                out.push(Issue::new(
                    p,
                    "category-scoped memory grants are not supported with the markdown backend \
                     (it does not keep per-row categories); grant the whole agent instead",
                ));
            }
        }
    }
}

fn validate_backends(cfg: &Config, out: &mut Vec<Issue>) {
    let mut used: BTreeSet<&'static str> = BTreeSet::new();
    for alias in cfg.agents.keys() {
        if let Some(b) = cfg.effective_memory_backend(alias) {
            used.insert(b.as_str());
        }
    }
    if used.contains("postgres") && cfg.memory.postgres.url.is_none() {
        out.push(Issue::new(
            "memory.postgres.url",
            "an agent uses the postgres memory backend but `[memory.postgres] url` is not set",
        ));
    }
    if used.contains("qdrant") && cfg.memory.qdrant.url.is_none() {
        out.push(Issue::new(
            "memory.qdrant.url",
            "an agent uses the qdrant memory backend but `[memory.qdrant] url` is not set",
        ));
    }
    if used.contains("lucid") && cfg.memory.lucid.command.is_none() {
        out.push(Issue::new(
            "memory.lucid.command",
            "an agent uses the lucid memory backend but `[memory.lucid] command` is not set",
        ));
    }
    if let Some(p) = &cfg.memory.embeddings.provider {
        if p != "local" {
            check_provider_ref(cfg, p, "memory.embeddings.provider", out);
        }
    }
}
