//! Checks of the params of `initialize` and `session/new`: malformed params are refused with
//! -32602 naming the field, a `cwd` the agent's policy does not grant for reading and writing
//! is refused naming the rule that decided, and MCP servers (not supported yet) are refused
//! rather than dropped.

use super::rpc::codes;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use warren_policy::{Access, Decision, Rule, SecurityPolicy};

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

/// Checks `session/new`'s `mcpServers`: absent or empty is fine; servers are refused, since
/// this agent cannot connect to them yet and dropping them silently would hide that.
pub(super) fn check_mcp_servers(params: &Value) -> Result<(), Refusal> {
    match params.get("mcpServers") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Array(servers)) if servers.is_empty() => Ok(()),
        Some(Value::Array(servers)) => {
            let names: Vec<String> = servers
                .iter()
                .map(|s| match s["name"].as_str() {
                    Some(n) => format!("`{n}`"),
                    None => "(unnamed)".to_string(),
                })
                .collect();
            Err((
                codes::INVALID_PARAMS,
                format!(
                    "session/new: MCP servers are not supported by this agent yet; `mcpServers` \
                     lists {}: remove them from the editor's settings for this agent",
                    names.join(", ")
                ),
                Some(json!({"code": "mcp_servers_unsupported"})),
            ))
        }
        Some(v) => Err(invalid(format!(
            "session/new: `mcpServers` must be an array, got {v}"
        ))),
    }
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
