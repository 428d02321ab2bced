//! Checks that keep one agent's authority from reaching another through the config: a provider
//! entry naming an agent's own secret (`agent:<alias>/NAME`) may be used only by that agent
//! (an error), and workspaces nested inside one another are reported (a warning: the outer
//! agent's workspace root then covers the inner agent's files).

use crate::issue::{join, Issue};
use crate::layout::InstallLayout;
use std::path::{Component, Path, PathBuf};
use warren_types::Config;

/// The owner of an agent-namespaced secret reference (`agent:<alias>/NAME` → `alias`).
pub fn secret_owner(reference: &str) -> Option<&str> {
    let rest = reference.trim().strip_prefix("agent:")?;
    rest.split_once('/').map(|(alias, _)| alias)
}

/// The provider references an agent's route uses: its `model_provider` and that entry's own
/// `fallbacks` (the route does not follow fallbacks of fallbacks).
fn route_refs<'a>(cfg: &'a Config, reference: &'a str) -> Vec<&'a str> {
    let mut out = vec![reference];
    if let Some((_, entry)) = cfg.provider(reference) {
        for fb in &entry.fallbacks {
            if !out.contains(&fb.as_str()) {
                out.push(fb);
            }
        }
    }
    out
}

fn secret_path(reference: &str) -> String {
    match reference.split_once('.') {
        Some((family, alias)) => join(&join(&join("providers.models", family), alias), "secret"),
        None => join("providers.models", reference),
    }
}

/// Errors: an agent's route (or the install-wide embedding provider) reaching a provider entry
/// whose secret is namespaced to another agent.
pub(crate) fn validate_secret_refs(cfg: &Config, out: &mut Vec<Issue>) {
    for (family, models) in &cfg.providers.models {
        for (name, entry) in models {
            let Some(secret) = entry.secret.as_deref() else {
                continue;
            };
            if secret.trim().starts_with("warren.") {
                out.push(Issue::new(
                    secret_path(&format!("{family}.{name}")),
                    format!("`{secret}` is reserved for Warren's own state (names starting with `warren.`) and cannot be a provider key"),
                ));
            }
        }
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut report = |provider: &str, user: &str, owner: &str, secret: &str, how: String| {
        let key = (provider.to_string(), user.to_string());
        if seen.contains(&key) {
            return;
        }
        seen.push(key);
        out.push(Issue::new(
            secret_path(provider),
            format!(
                "`{secret}` is a secret of agent `{owner}`, but {how} uses this provider; only `{owner}` may use its own secrets (use an install-wide secret, or one of that agent's own)"
            ),
        ));
    };
    for (alias, agent) in &cfg.agents {
        let Some(reference) = agent.model_provider.as_deref() else {
            continue;
        };
        for r in route_refs(cfg, reference) {
            let Some((_, entry)) = cfg.provider(r) else {
                continue;
            };
            let Some(secret) = entry.secret.as_deref() else {
                continue;
            };
            match secret_owner(secret) {
                Some(owner) if owner != alias => report(
                    r,
                    alias,
                    owner,
                    secret,
                    format!(
                        "agent `{alias}` ({})",
                        join(&join("agents", alias), "model_provider")
                    ),
                ),
                _ => {}
            }
        }
    }
    if let Some(reference) = cfg.memory.embeddings.provider.as_deref() {
        if let Some((_, entry)) = cfg.provider(reference) {
            if let Some(secret) = entry.secret.as_deref() {
                if let Some(owner) = secret_owner(secret) {
                    report(
                        reference,
                        "",
                        owner,
                        secret,
                        "the install-wide memory.embeddings.provider".into(),
                    );
                }
            }
        }
    }
}

/// `.` and `..` removed lexically (workspace paths are absolute; symlinks are not followed).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `path` with its longest existing ancestor's links resolved (the rest joined lexically), so a
/// workspace reached through a symlinked directory compares with the directory itself.
fn resolved(path: &Path) -> PathBuf {
    let path = normal(path);
    let mut existing = path.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = std::fs::canonicalize(existing) {
            return rest.iter().rev().fold(c, |acc, part| acc.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return path,
        }
    }
}

/// Errors: the shared SQLite memory file (`[memory.sqlite] path`, every agent's memories) inside
/// an agent's workspace, where that agent could read it, replace it or put a link in its place.
pub(crate) fn validate_install_paths(cfg: &Config, layout: &InstallLayout, out: &mut Vec<Issue>) {
    let configured = cfg.memory.sqlite.path.as_deref();
    let files: Vec<(PathBuf, PathBuf)> = layout
        .memory_sqlite_files(configured)
        .iter()
        .map(|f| (normal(f), resolved(f)))
        .collect();
    for (alias, agent) in &cfg.agents {
        let ws = layout.workspace_for(alias, agent.workspace.path.as_deref());
        let (lexical, real) = (normal(&ws), resolved(&ws));
        let inside = files
            .iter()
            .any(|(l, r)| l.starts_with(&lexical) || r.starts_with(&real));
        if inside {
            out.push(Issue::new(
                "memory.sqlite.path",
                format!(
                    "the memory database {} is inside the workspace of `{alias}` ({}): that agent could read every agent's memories or replace the file; keep it outside every workspace",
                    layout.memory_sqlite(configured).display(),
                    ws.display()
                ),
            ));
        }
    }
}

/// Warnings: one per pair of agents whose workspaces nest (the inner agent's files lie under
/// the outer agent's own workspace root), at `agents.<inner>.workspace.path` when the inner one
/// is custom, else at the outer one's.
pub fn nested_workspace_warnings(cfg: &Config, layout: &InstallLayout) -> Vec<Issue> {
    let spaces: Vec<(&String, PathBuf, bool)> = cfg
        .agents
        .iter()
        .map(|(alias, a)| {
            let custom = a.workspace.path.as_deref();
            (
                alias,
                normal(&layout.workspace_for(alias, custom)),
                custom.is_some(),
            )
        })
        .collect();
    let mut out = Vec::new();
    for (outer, outer_path, outer_custom) in &spaces {
        for (inner, inner_path, inner_custom) in &spaces {
            if outer == inner || !inner_path.starts_with(outer_path) {
                continue;
            }
            // Two agents on the same directory are reported once, by alias order.
            if inner_path == outer_path && inner >= outer {
                continue;
            }
            let at = if *inner_custom || !*outer_custom {
                inner
            } else {
                outer
            };
            out.push(Issue::new(
                join(&join(&join("agents", at), "workspace"), "path"),
                format!(
                    "the workspace of `{inner}` ({}) is inside the workspace of `{outer}` ({}): `{outer}` can read and write `{inner}`'s files without a grant, and a grant of `{inner}` on `{outer}` covers them; give each agent its own directory",
                    inner_path.display(),
                    outer_path.display()
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHARED: &str = r#"
[risk_profiles.p]
[providers.models.openai.main]
model = "m"
secret = "agent:alice/KEY"
[agents.alice]
risk_profile = "p"
model_provider = "openai.main"
"#;

    #[test]
    fn another_agents_secret_is_an_error_for_every_other_user() {
        assert!(
            crate::parse_config(SHARED).is_ok(),
            "alice's own use is fine"
        );
        let text = format!(
            "{SHARED}[agents.bob]\nrisk_profile = \"p\"\nmodel_provider = \"openai.main\"\n"
        );
        let errs = crate::parse_config(&text).unwrap_err();
        assert_eq!(errs.issues.len(), 1, "{errs}");
        assert_eq!(errs.issues[0].path, "providers.models.openai.main.secret");
        assert!(errs.issues[0].message.contains("agent `bob`"), "{errs}");
        let reserved = SHARED.replace("agent:alice/KEY", "warren.receipt-key");
        let errs = crate::parse_config(&reserved).unwrap_err();
        assert!(errs.issues[0].message.contains("reserved"), "{errs}");
    }

    #[test]
    fn nested_workspaces_warn_at_the_inner_custom_path() {
        let layout = InstallLayout::new("/srv/warren");
        let text = "[risk_profiles.p]\n[agents.alice]\nrisk_profile = \"p\"\n[agents.bob]\nrisk_profile = \"p\"\n[agents.bob.workspace]\npath = \"/srv/warren/agents/alice/workspace/sub/../bob\"\n[agents.carol]\nrisk_profile = \"p\"\n";
        let cfg = crate::parse_config(text).unwrap();
        let w = nested_workspace_warnings(&cfg, &layout);
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].path, "agents.bob.workspace.path");
        assert!(w[0].message.contains("inside the workspace of `alice`"));
    }

    #[test]
    fn owners_of_references() {
        assert_eq!(secret_owner("agent:alice/KEY"), Some("alice"));
        assert_eq!(secret_owner("KEY"), None);
        assert_eq!(secret_owner("agent:alice"), None);
    }
}
