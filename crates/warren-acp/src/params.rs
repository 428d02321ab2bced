//! Checks of the params of `initialize` and `session/new`: malformed params are refused with
//! -32602 naming the field, a `cwd` the agent's policy does not grant for reading and writing
//! is refused naming the rule that decided, and the stdio MCP servers given are read (those of
//! another transport are refused rather than dropped).

use crate::rpc::codes;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use warren_policy::{Access, Decision, Rule, SecurityPolicy};
use warren_runtime::mcp::ServerSpec;
use warren_types::McpServerConfig;

/// A refused call: JSON-RPC code, message, and optional `data` (with a stable `code`).
pub(super) type Refusal = (i64, String, Option<Value>);

fn invalid(message: String) -> Refusal {
    (codes::INVALID_PARAMS, message, None)
}

/// Checks `initialize` params: an object with an integer `protocolVersion` (0 to 65535) and,
/// when present, an object `clientCapabilities`.
pub(super) fn check_initialize(params: &Value) -> Result<(), Refusal> {
    let Some(obj) = params.as_object() else {
        return Err(invalid(format!(
            "initialize: params must be an object with `protocolVersion`, got {params}"
        )));
    };
    match obj.get("protocolVersion") {
        Some(v) if v.as_u64().is_some_and(|n| n <= u64::from(u16::MAX)) => {}
        Some(v) => {
            return Err(invalid(format!(
                "initialize: `protocolVersion` must be an integer from 0 to 65535, got {v}"
            )))
        }
        None => {
            return Err(invalid(
                "initialize: `protocolVersion` is missing (an integer, this agent speaks 1)".into(),
            ))
        }
    }
    match obj.get("clientCapabilities") {
        None | Some(Value::Object(_)) => Ok(()),
        Some(v) => Err(invalid(format!(
            "initialize: `clientCapabilities` must be an object, got {v}"
        ))),
    }
}

/// Reads `session/new`'s `mcpServers`: absent or empty is none; each stdio server
/// (`{name, command, args, env: [{name, value}]}`) becomes a server started for every turn of
/// the session, named like a configured one (lowercase letters, digits, `_`, `-`). Servers of
/// another transport (`http`, `sse`) are refused, never dropped, as is a name that collides
/// with one of the agent's configured servers or another of the list.
pub(super) fn session_mcp_servers(
    params: &Value,
    configured: &[String],
) -> Result<Vec<ServerSpec>, Refusal> {
    let servers = match params.get("mcpServers") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(servers)) => servers,
        Some(v) => {
            return Err(invalid(format!(
                "session/new: `mcpServers` must be an array, got {v}"
            )))
        }
    };
    let mut out: Vec<ServerSpec> = Vec::new();
    for (i, s) in servers.iter().enumerate() {
        let at = format!("session/new: `mcpServers[{i}]`");
        let raw_name = s["name"].as_str().unwrap_or("");
        let kind = s.get("type").and_then(Value::as_str).unwrap_or("stdio");
        if kind != "stdio" {
            return Err((
                codes::INVALID_PARAMS,
                format!(
                    "{at} (`{raw_name}`) is an `{kind}` server; this agent starts stdio MCP servers \
                     only (its mcpCapabilities say so): configure it in Warren's [mcp_servers] or \
                     give a stdio command"
                ),
                Some(json!({"code": "mcp_transport_unsupported"})),
            ));
        }
        let Some(command) = s["command"].as_str().filter(|c| !c.trim().is_empty()) else {
            return Err(invalid(format!(
                "{at}: `command` must be a non-empty string"
            )));
        };
        let args = match s.get("args") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| invalid(format!("{at}: `args` must be an array of strings")))?,
            Some(v) => return Err(invalid(format!("{at}: `args` must be an array, got {v}"))),
        };
        let mut env = std::collections::BTreeMap::new();
        match s.get("env") {
            None | Some(Value::Null) => {}
            Some(Value::Array(vars)) => {
                for v in vars {
                    let (Some(k), Some(val)) = (v["name"].as_str(), v["value"].as_str()) else {
                        return Err(invalid(format!(
                            "{at}: each `env` entry must be {{\"name\": ..., \"value\": ...}}, got {v}"
                        )));
                    };
                    if warren_config::env_never_passed(k) {
                        return Err(invalid(format!(
                            "{at}: `env` sets `{k}`, which is never given to an MCP server (a way \
                             out of the sandbox)"
                        )));
                    }
                    env.insert(k.to_string(), val.to_string());
                }
            }
            Some(v) => return Err(invalid(format!("{at}: `env` must be an array, got {v}"))),
        }
        let name = server_name(raw_name);
        if !warren_config::valid_mcp_server_name(&name) {
            return Err(invalid(format!(
                "{at}: the name `{raw_name}` gives no usable server name"
            )));
        }
        if configured.contains(&name) || out.iter().any(|o| o.name == name) {
            return Err(invalid(format!(
                "{at}: the name `{raw_name}` (as `{name}`) is already taken by another MCP \
                 server of this agent or session"
            )));
        }
        out.push(ServerSpec {
            name,
            origin: "session",
            config: McpServerConfig {
                command: Some(command.to_string()),
                args,
                env,
                url: None,
            },
        });
    }
    Ok(out)
}

/// An editor's server name as a server name: lowercase, other characters as `-`, no `__`, at
/// most 32 characters.
fn server_name(raw: &str) -> String {
    let mut name: String = raw
        .trim()
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    while name.contains("__") {
        name = name.replace("__", "_");
    }
    let name = name.trim_start_matches(['-', '_']);
    name.chars().take(32).collect()
}

/// Whether a decision allows `access` through a grant: the workspace, an allowed root or a
/// sibling workspace granted `read_write` (not a path that is merely outside every root).
fn granted(d: &Decision) -> bool {
    d.allowed
        && matches!(
            d.rule,
            Rule::Workspace | Rule::AllowedRoot | Rule::ReadWriteGrant
        )
}

/// The session's working directory: `cwd` (absolute) resolved, when `policy` grants it for
/// reading and writing and it is a directory. The refusal names the path and the rule.
pub(super) fn session_cwd(policy: &SecurityPolicy, params: &Value) -> Result<PathBuf, Refusal> {
    let cwd = match params.get("cwd") {
        Some(Value::String(c)) if c.starts_with('/') => c.as_str(),
        Some(v) => {
            return Err(invalid(format!(
                "session/new: `cwd` must be an absolute path, got {v}"
            )))
        }
        None => return Err(invalid("session/new: `cwd` is missing".into())),
    };
    let read = policy.check(Path::new(cwd), Access::Read);
    let write = policy.check(Path::new(cwd), Access::Write);
    let refused = [&read, &write].into_iter().find(|d| !granted(d));
    if let Some(d) = refused {
        let why = if d.allowed {
            format!(
                "{} access is allowed only because it is outside every root (rule {})",
                d.access, d.rule
            )
        } else {
            format!("{} access is denied (rule {})", d.access, d.rule)
        };
        return Err((
            codes::INVALID_PARAMS,
            format!(
                "session/new: `cwd` {} is not granted to agent `{}`: {why}; a session's cwd \
                 needs read and write through the workspace, an `allowed_roots` entry or a \
                 `read_write` workspace grant",
                d.path.display(),
                policy.alias
            ),
            Some(json!({
                "code": "cwd_not_granted",
                "path": d.path,
                "access": d.access,
                "rule": d.rule,
            })),
        ));
    }
    if !read.path.is_dir() {
        return Err(invalid(format!(
            "session/new: `cwd` {} is not a directory",
            read.path.display()
        )));
    }
    Ok(read.path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn initialize_params_are_checked_field_by_field() {
        assert!(check_initialize(&json!({"protocolVersion": 1})).is_ok());
        assert!(check_initialize(&json!({"protocolVersion": 1, "clientCapabilities": {}})).is_ok());
        for (bad, field) in [
            (json!({"protocolVersion": "one"}), "protocolVersion"),
            (json!({"protocolVersion": 70000}), "protocolVersion"),
            (json!({}), "protocolVersion"),
            (json!([1]), "protocolVersion"),
            (
                json!({"protocolVersion": 1, "clientCapabilities": []}),
                "clientCapabilities",
            ),
        ] {
            let (code, message, _) = check_initialize(&bad).err().unwrap_or_default();
            assert_eq!(code, codes::INVALID_PARAMS, "{bad}");
            assert!(message.contains(field), "{bad}: {message}");
        }
    }
}
