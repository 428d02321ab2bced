//! `glob_search` and `content_search` (rules §2.2): Read access on the root and on every match;
//! unreadable matches are dropped silently and unreadable directories are not entered.

use crate::args::Args;
use crate::error::ToolError;
use crate::tool::{blocking, CallCheck, Tool, ToolContext, ToolSpec};
use async_trait::async_trait;
use serde_json::{json, Value};
use std::io::Read;
use std::path::{Component, Path};
use warren_policy::open::FileAccess;
use warren_policy::rustix::fs::FileType;
use warren_policy::{Access, Entry, OpenedDir, OpenedFile};

fn read_only() -> CallCheck {
    CallCheck {
        side_effects: false,
        risk: None,
        reasons: Vec::new(),
    }
}

/// What a walk visits: a readable entry with its path.
enum Visit<'a> {
    /// A regular file in a walked directory.
    File(&'a OpenedDir, &'a Path),
    /// A symbolic link: listed as the link; its target is decided and opened by path.
    Symlink(&'a Path),
    /// A directory (already entered or about to be).
    Dir(&'a Path),
    /// A FIFO, socket or device: listed, never read.
    Other(&'a Path),
}

/// Walks the opened directory `root` depth first in name order, through directory descriptors
/// (a directory swapped for a link during the walk is never entered), yielding every entry the
/// policy lets the agent read. `visit` returns false to stop.
fn walk_readable(ctx: &ToolContext, root: OpenedDir, mut visit: impl FnMut(Visit<'_>) -> bool) {
    let policy = &ctx.policy;
    let mut stack: Vec<std::vec::IntoIter<Entry>> = Vec::new();
    let mut dirs: Vec<OpenedDir> = Vec::new();
    if let Ok(entries) = policy.read_entries(&root) {
        stack.push(entries.into_iter());
        dirs.push(root);
    }
    while let Some(top) = stack.last_mut() {
        let Some(entry) = top.next() else {
            stack.pop();
            dirs.pop();
            continue;
        };
        let Some(dir) = dirs.last() else { break };
        let go_on = match &entry {
            Entry::File(p) => visit(Visit::File(dir, p)),
            Entry::Symlink(p) => {
                // Listed only when its target is readable (the policy resolves it).
                if policy.authorize(p, Access::Read).is_err() {
                    continue;
                }
                visit(Visit::Symlink(p))
            }
            Entry::Other(p) => visit(Visit::Other(p)),
            Entry::Dir(d) => visit(Visit::Dir(&d.path)),
        };
        if !go_on {
            return;
        }
        if let Entry::Dir(d) = entry {
            if let Ok(entries) = policy.read_entries(&d) {
                stack.push(entries.into_iter());
                dirs.push(d);
            }
        }
    }
}

/// The root of a search, opened race-free: a directory to walk, or (content_search) one file.
enum Root {
    Dir(OpenedDir),
    File(OpenedFile),
}

impl Root {
    fn path(&self) -> &Path {
        match self {
            Root::Dir(d) => &d.path,
            Root::File(f) => &f.path,
        }
    }
}

fn root_arg(a: &Args<'_>, ctx: &ToolContext, file_ok: bool) -> Result<Root, ToolError> {
    let input = ctx.path(Path::new(a.opt_path("path")?.unwrap_or(".")));
    let input = input.as_ref();
    match ctx.policy.open_dir(input) {
        Ok(d) => Ok(Root::Dir(d)),
        Err(warren_policy::OpenError::NotADirectory(_)) if file_ok => {
            Ok(Root::File(ctx.policy.open_file(input, FileAccess::Read)?))
        }
        Err(e) => Err(e.into()),
    }
}

/// Reads a searchable text file: `None` when it is over `limit` or looks binary.
fn read_text(f: &std::fs::File, len: u64, limit: u64) -> Option<String> {
    if len > limit {
        return None;
    }
    let mut buf = Vec::new();
    f.take(limit).read_to_end(&mut buf).ok()?;
    if buf[..buf.len().min(8192)].contains(&0) {
        return None;
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
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

#[async_trait]
impl Tool for GlobSearch {
    fn name(&self) -> &'static str {
        "glob_search"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Find files by glob pattern (e.g. `src/**/*.rs`) under a directory."
                .into(),
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
        root_arg(&a, ctx, false)?;
        Ok(read_only())
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        blocking(args, ctx, |args, ctx| GlobSearch.run(args, ctx)).await
    }
}

impl GlobSearch {
    /// The call itself, run on a blocking thread.
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let pattern = Self::pattern(&a)?;
        let Root::Dir(root) = root_arg(&a, ctx, false)? else {
            return Err(ToolError::arg("path", "must be a directory"));
        };
        let root_path = root.path.clone();
        let opts = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        let max = ctx.limits.max_matches;
        let mut matches: Vec<String> = Vec::new();
        let mut truncated = false;
        walk_readable(ctx, root, |visit| {
            let path = match visit {
                Visit::File(_, p) | Visit::Symlink(p) | Visit::Dir(p) | Visit::Other(p) => p,
            };
            let Ok(rel) = path.strip_prefix(&root_path) else {
                return true;
            };
            if rel.as_os_str().is_empty() || !pattern.matches_path_with(rel, opts) {
                return true;
            }
            if matches.len() >= max {
                truncated = true;
                return false;
            }
            matches.push(path.display().to_string());
            true
        });
        Ok(
            json!({"root": root_path.display().to_string(), "matches": matches, "truncated": truncated}),
        )
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

#[async_trait]
impl Tool for ContentSearch {
    fn name(&self) -> &'static str {
        "content_search"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Search text files for lines matching a regular expression.".into(),
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
        root_arg(&a, ctx, true)?;
        Ok(read_only())
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        blocking(args, ctx, |args, ctx| ContentSearch.run(args, ctx)).await
    }
}

impl ContentSearch {
    /// The call itself, run on a blocking thread.
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let re = Self::regex(&a)?;
        let root = root_arg(&a, ctx, true)?;
        let root_path = root.path().to_path_buf();
        let max = ctx.limits.max_matches;
        let limit = ctx.limits.max_file_bytes;
        let mut matches: Vec<Value> = Vec::new();
        let mut truncated = false;
        let mut skipped = 0usize;
        // Searches one opened file; false once the match limit is reached.
        let mut search = |shown_path: &Path, f: Option<OpenedFile>| -> bool {
            let Some(f) = f else { return true };
            if f.kind != FileType::RegularFile {
                return true;
            }
            let Some(text) = read_text(&f.file, f.len, limit) else {
                skipped += 1;
                return true;
            };
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
                    "path": shown_path.display().to_string(),
                    "line": i + 1,
                    "text": shown,
                }));
            }
            true
        };
        match root {
            Root::File(f) => {
                let p = f.path.clone();
                search(&p, Some(f));
            }
            Root::Dir(d) => walk_readable(ctx, d, |visit| match visit {
                Visit::File(dir, p) => search(p, ctx.policy.open_entry_file(dir, p)),
                Visit::Symlink(p) => search(p, ctx.policy.open_file(p, FileAccess::Read).ok()),
                Visit::Dir(_) | Visit::Other(_) => true,
            }),
        }
        Ok(json!({
            "root": root_path.display().to_string(),
            "matches": matches,
            "truncated": truncated,
            "skipped_files": skipped,
        }))
    }
}
