//! Configuration overrides for `git` run by the shell tool under a restricted
//! `allowed_commands`: a repository's `.git/config` may name programs (fsmonitor, hooks, pagers,
//! editors, filters, textconv, credential helpers, merge drivers, aliases starting with `!`)
//! that are not in the allowlist. `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`
//! set every such key to a value that runs nothing; these have command-line precedence over
//! every config file.
//!
//! Keys with fixed names are always overridden. Driver and alias keys have names chosen by the
//! repository (`filter.<x>.clean`, `diff.<x>.textconv`, `merge.<x>.driver`, `pager.<cmd>`,
//! `alias.<x>`, ...): they are read, in process through libgit2, from the configuration of the
//! workspace's repository (and its parents), of every repository found under the workspace, and
//! of every directory the line points `git` at (`-C`, `--git-dir`, `--work-tree`).
//!
//! Residual race: the overrides are computed before the line runs. A line that itself adds a
//! driver under a new name (`git config filter.y.clean ...`, `echo ... >> .git/config`, creating a
//! new repository) and then runs git in the same call is not covered; such a line needs
//! `git config` or a write to `.git/`, and it still runs only inside the agent's sandbox
//! (shell lines that run git are opaque, rules §4).

use crate::error::ToolError;
use crate::tool::ToolContext;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use warren_policy::shell::git::key_runs_program;

/// Keys with fixed names and the values that make git run nothing for them.
const FIXED: &[(&str, &str)] = &[
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.pager", ""),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.sshCommand", ""),
    ("core.askPass", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("diff.external", ""),
    ("interactive.diffFilter", ""),
    ("uploadpack.packObjectsHook", ""),
    ("protocol.allow", "never"),
    ("web.browser", ""),
    ("imap.tunnel", ""),
];

/// Most directories visited when looking for repositories under the workspace.
const MAX_WALK: usize = 20_000;

/// Deepest directory level searched under the workspace.
const MAX_DEPTH: usize = 8;

/// `GIT_CONFIG_*` variables neutralising every command-valued key git could read for this
/// line (see the module documentation for what is covered).
///
/// The configuration is read by libgit2 in Warren's own process, so it is read on the thread
/// that Landlock confines to the agent's read grants ([`crate::git::confined`]): an include, a
/// linked `.git/config` or a discovered parent repository outside the grants is not read. When
/// that read cannot be done, the call is refused (fail closed) rather than run with fewer
/// overrides.
pub(crate) fn overrides(
    ctx: &ToolContext,
    dirs: &[PathBuf],
) -> Result<Vec<(String, String)>, ToolError> {
    let mut keys: BTreeMap<String, String> = FIXED
        .iter()
        .map(|(k, v)| (canonical(k), v.to_string()))
        .collect();
    // The line starts in the working directory: its repositories count as the workspace's.
    let starts = [ctx.policy.workspace.clone(), ctx.cwd.clone()];
    let mut repos = repositories_under(&ctx.policy.workspace);
    if ctx.cwd != ctx.policy.workspace {
        repos.extend(repositories_under(&ctx.cwd));
    }
    repos.extend(dirs.iter().cloned());
    let global = ctx
        .host_env
        .get("HOME")
        .map(|home| Path::new(home).join(".gitconfig"));
    let listed: Vec<&Path> = starts
        .iter()
        .chain(repos.iter())
        .map(PathBuf::as_path)
        .collect();
    crate::git::read::init_libgit2();
    let found = crate::git::confined::run(&ctx.policy, &listed, || {
        let mut found = BTreeMap::new();
        let mut seen = Vec::new();
        for dir in starts.iter().chain(repos.iter()) {
            if seen.contains(&dir) {
                continue;
            }
            // The repository's own files only (and what they include): libgit2's global and
            // system lookups go through Warren's HOME, which is not the agent's.
            if let Ok(repo) = git2::Repository::discover(dir) {
                for file in [
                    repo.commondir().join("config"),
                    repo.path().join("config.worktree"),
                ] {
                    if let Ok(config) = git2::Config::open(&file) {
                        named_keys(&config, &mut found);
                    }
                }
            }
            seen.push(dir);
        }
        if let Some(global) = &global {
            if let Ok(config) = git2::Config::open(global) {
                named_keys(&config, &mut found);
            }
        }
        Ok(found)
    })?;
    for (k, v) in found {
        keys.entry(k).or_insert(v);
    }
    let mut env = vec![("GIT_CONFIG_COUNT".to_string(), keys.len().to_string())];
    for (i, (k, v)) in keys.into_iter().enumerate() {
        env.push((format!("GIT_CONFIG_KEY_{i}"), k));
        env.push((format!("GIT_CONFIG_VALUE_{i}"), v));
    }
    Ok(env)
}

/// Adds every key of `config` that names a program (or is an alias) with its neutral value.
fn named_keys(config: &git2::Config, keys: &mut BTreeMap<String, String>) {
    let Ok(entries) = config.entries(None) else {
        return;
    };
    let _ = entries.for_each(|e| {
        let Some(name) = e.name() else { return };
        // A name without `=` has no value (a boolean true); value() would panic.
        let value = if e.has_value() {
            e.value().unwrap_or("")
        } else {
            "true"
        };
        let lower = name.to_ascii_lowercase();
        let section = lower.split('.').next().unwrap_or("");
        if matches!(section, "include" | "includeif") {
            // Included files are read by libgit2 too: their keys are in this listing.
            return;
        }
        let alias = section == "alias";
        let key = canonical(name);
        if !(alias || key_runs_program(name, value)) || keys.contains_key(&key) {
            return;
        }
        keys.insert(key, neutral(&lower).to_string());
    });
}

/// A key as git compares it: section and name lowercased, a subsection kept as written.
fn canonical(key: &str) -> String {
    match (key.find('.'), key.rfind('.')) {
        (Some(a), Some(b)) if a < b => format!(
            "{}{}{}",
            key[..a].to_ascii_lowercase(),
            &key[a..b],
            key[b..].to_ascii_lowercase()
        ),
        _ => key.to_ascii_lowercase(),
    }
}

/// The value of a command-valued key that runs nothing.
fn neutral(lower: &str) -> &'static str {
    let last = lower.rsplit('.').next().unwrap_or("");
    if lower.starts_with("pager.") {
        "false"
    } else if lower.starts_with("submodule.") && last == "update" {
        "none"
    } else if lower.starts_with("filter.") && last == "required" {
        "false"
    } else {
        ""
    }
}

/// Directories holding a `.git` under `root`, without following symbolic links (bounded).
fn repositories_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    let mut visited = 0usize;
    while let Some((dir, depth)) = stack.pop() {
        visited += 1;
        if visited > MAX_WALK {
            break;
        }
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            let name = e.file_name();
            if name == ".git" {
                out.push(dir.clone());
            } else if t.is_dir() && depth < MAX_DEPTH {
                stack.push((e.path(), depth + 1));
            }
        }
    }
    out
}
