//! `glob_search` and `content_search` (SPEC §2.2): Read access on the root and on every match;
//! unreadable matches are dropped silently and unreadable directories are not entered.

use crate::args::Args;
use crate::error::ToolError;
use crate::tool::{CallCheck, Tool, ToolContext, ToolSpec};
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use warren_policy::Access;

fn read_only() -> CallCheck {
    CallCheck {
        side_effects: false,
        risk: None,
        reasons: Vec::new(),
    }
}

/// Walks `root`, yielding every entry the policy lets the agent read (symlinks are resolved by
/// the policy and never followed into directories). `visit` returns false to stop.
fn walk_readable(
    ctx: &ToolContext,
    root: &Path,
    mut visit: impl FnMut(&walkdir::DirEntry, &Path) -> bool,
) {
    let policy = &ctx.policy;
    let walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| policy.authorize(e.path(), Access::Read).is_ok());
    for entry in walker.flatten() {
        let Ok(auth) = policy.authorize(entry.path(), Access::Read) else {
            continue;
        };
        if !visit(&entry, &auth.path) {
            break;
        }
    }
}

fn root_arg(a: &Args<'_>, ctx: &ToolContext) -> Result<PathBuf, ToolError> {
    let input = a.opt_path("path")?.unwrap_or(".");
    let auth = ctx.policy.authorize(Path::new(input), Access::Read)?;
    if !auth.path.exists() {
        return Err(ToolError::NotFound(auth.path));
    }
    Ok(auth.path)
}

/// `glob_search {pattern, path?}`: files whose path relative to `path` (default the workspace)
/// matches the glob (`*`, `?`, `[...]`, `**`).
pub struct GlobSearch;

impl GlobSearch {
    const ARGS: &'static [&'static str] = &["pattern", "path"];

    fn pattern(a: &Args<'_>) -> Result<glob::Pattern, ToolError> {
        let p = a.string("pattern")?;
        if p.is_empty() || p.contains('\0') {
            return Err(ToolError::arg(
                "pattern",
                "must be a non-empty string without NUL",
            ));
        }
        if Path::new(p).is_absolute()
            || Path::new(p).components().any(|c| c == Component::ParentDir)
        {
            return Err(ToolError::arg(
                "pattern",
                "must be relative to `path` and contain no `..` (use `path` to choose the root)",
            ));
        }
        glob::Pattern::new(p).map_err(|e| ToolError::arg("pattern", e.to_string()))
    }
}

impl Tool for GlobSearch {
    fn name(&self) -> &'static str {
        "glob_search"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name(),
            description: "Find files by glob pattern (e.g. `src/**/*.rs`) under a directory.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Glob relative to path"},
                    "path": {"type": "string", "description": "Directory to search (default: workspace)"}
                },
                "required": ["pattern"],
                "additionalProperties": false
            }),
        }
    }

    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        Self::pattern(&a)?;
        root_arg(&a, ctx)?;
        Ok(read_only())
    }

    fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let pattern = Self::pattern(&a)?;
        let root = root_arg(&a, ctx)?;
        let opts = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        let max = ctx.limits.max_matches;
        let mut matches: Vec<String> = Vec::new();
        let mut truncated = false;
        walk_readable(ctx, &root, |entry, _| {
            let Ok(rel) = entry.path().strip_prefix(&root) else {
                return true;
            };
            if rel.as_os_str().is_empty() || !pattern.matches_path_with(rel, opts) {
                return true;
            }
            if matches.len() >= max {
                truncated = true;
                return false;
            }
            matches.push(entry.path().display().to_string());
            true
        });
        Ok(json!({"root": root.display().to_string(), "matches": matches, "truncated": truncated}))
    }
}

/// `content_search {query, path?}`: lines matching a regular expression in the readable text
/// files under `path` (default the workspace), or in one file.
pub struct ContentSearch;

impl ContentSearch {
    const ARGS: &'static [&'static str] = &["query", "path"];

    fn regex(a: &Args<'_>) -> Result<regex::Regex, ToolError> {
        let q = a.string("query")?;
        if q.is_empty() {
            return Err(ToolError::arg("query", "must not be empty"));
        }
        regex::RegexBuilder::new(q)
            .size_limit(1 << 20)
            .build()
            .map_err(|e| ToolError::arg("query", format!("invalid regular expression: {e}")))
    }
}

impl Tool for ContentSearch {
    fn name(&self) -> &'static str {
        "content_search"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name(),
            description: "Search text files for lines matching a regular expression.",
            parameters: json!({
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "Regular expression (Rust syntax)"},
                    "path": {"type": "string", "description": "File or directory (default: workspace)"}
                },
                "required": ["query"],
                "additionalProperties": false
            }),
        }
    }

    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        Self::regex(&a)?;
        root_arg(&a, ctx)?;
        Ok(read_only())
    }

    fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let re = Self::regex(&a)?;
        let root = root_arg(&a, ctx)?;
        let max = ctx.limits.max_matches;
        let limit = ctx.limits.max_file_bytes;
        let mut matches: Vec<Value> = Vec::new();
        let mut truncated = false;
        let mut skipped = 0usize;
        walk_readable(ctx, &root, |entry, resolved| {
            let Ok(meta) = std::fs::metadata(resolved) else {
                return true;
            };
            if !meta.is_file() {
                return true;
            }
            if meta.len() > limit {
                skipped += 1;
                return true;
            }
            let mut buf = Vec::new();
            let read =
                std::fs::File::open(resolved).and_then(|f| f.take(limit).read_to_end(&mut buf));
            if read.is_err() || buf[..buf.len().min(8192)].contains(&0) {
                skipped += 1;
                return true;
            }
            let text = String::from_utf8_lossy(&buf);
            for (i, line) in text.lines().enumerate() {
                if !re.is_match(line) {
                    continue;
                }
                if matches.len() >= max {
                    truncated = true;
                    return false;
                }
                let shown: String = line.chars().take(300).collect();
                matches.push(json!({
                    "path": entry.path().display().to_string(),
                    "line": i + 1,
                    "text": shown,
                }));
            }
            true
        });
        Ok(json!({
            "root": root.display().to_string(),
            "matches": matches,
            "truncated": truncated,
            "skipped_files": skipped,
        }))
    }
}
