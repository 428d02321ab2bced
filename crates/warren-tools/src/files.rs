//! `file_read`, `file_write`, `file_edit` (rules §2.2). Each asks the policy before touching
//! anything and then acts on the resolved path only.

use crate::args::Args;
use crate::error::ToolError;
use crate::tool::{blocking, CallCheck, Tool, ToolContext, ToolSpec};
use async_trait::async_trait;
use serde_json::{json, Value};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use warren_policy::open::FileAccess;
use warren_policy::rustix::fs::FileType;
use warren_policy::{Access, OpenedFile};

/// Bytes read from a non-regular file (a device) when `max_bytes` is not given.
const DEFAULT_DEVICE_BYTES: u64 = 4096;

fn no_side_effects() -> CallCheck {
    CallCheck {
        side_effects: false,
        risk: None,
        reasons: Vec::new(),
    }
}

fn side_effects() -> CallCheck {
    CallCheck {
        side_effects: true,
        risk: None,
        reasons: Vec::new(),
    }
}

/// Reads an opened file: a regular file whole (at most `limit` bytes), anything else (a device,
/// a pipe) as a bounded prefix of `want` bytes.
fn read_opened(
    opened: &mut OpenedFile,
    limit: u64,
    want: u64,
) -> Result<(Vec<u8>, bool), ToolError> {
    let path = opened.path.clone();
    let mut buf = Vec::new();
    if opened.kind == FileType::RegularFile {
        buf.reserve_exact(usize::try_from(opened.len.min(limit)).unwrap_or(0) + 1);
        if opened.len > limit {
            return Err(ToolError::TooLarge {
                what: path.display().to_string(),
                size: opened.len,
                limit,
            });
        }
        (&opened.file)
            .take(limit + 1)
            .read_to_end(&mut buf)
            .map_err(|e| ToolError::io(&path, e))?;
        if buf.len() as u64 > limit {
            return Err(ToolError::TooLarge {
                what: path.display().to_string(),
                size: buf.len() as u64,
                limit,
            });
        }
        return Ok((buf, false));
    }
    (&opened.file)
        .take(want.min(limit))
        .read_to_end(&mut buf)
        .map_err(|e| ToolError::io(&path, e))?;
    Ok((buf, true))
}

/// Replaces the whole content of an opened regular file (or writes to `/dev/null`).
fn replace_content(opened: &OpenedFile, content: &[u8]) -> Result<(), ToolError> {
    let path = &opened.path;
    let mut f = &opened.file;
    if opened.kind == FileType::RegularFile {
        f.set_len(0).map_err(|e| ToolError::io(path, e))?;
        f.seek(SeekFrom::Start(0))
            .map_err(|e| ToolError::io(path, e))?;
    }
    f.write_all(content).map_err(|e| ToolError::io(path, e))?;
    if opened.kind == FileType::RegularFile {
        f.sync_all().map_err(|e| ToolError::io(path, e))?;
    }
    Ok(())
}

/// Whether the agent may read `path`: answers about a path it may only write must not say
/// whether something was there.
fn readable(ctx: &ToolContext, path: &Path) -> bool {
    ctx.policy.decide(path, Access::Read).0
}

/// Under a write-only grant, every failure that depends on what is already at the path gets
/// the same answer.
fn blind(ctx: &ToolContext, input: &Path, e: ToolError) -> ToolError {
    let decision = ctx.check(input, Access::Write);
    if readable(ctx, &decision.path) {
        return e;
    }
    // Named as written: a link's target is not revealed either.
    let resolved = decision.lexical;
    match e {
        ToolError::NotAFile(_)
        | ToolError::NotADirectory(_)
        | ToolError::SymlinkLeaf(_)
        | ToolError::PathChanged(_)
        | ToolError::NotFound(_)
        | ToolError::Io { .. } => ToolError::NotWritable(resolved),
        e => e,
    }
}

fn text_json(path: &Path, bytes: Vec<u8>, truncated: bool) -> Value {
    let len = bytes.len();
    let (content, utf8) = match String::from_utf8(bytes) {
        Ok(s) => (s, true),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), false),
    };
    json!({
        "path": path.display().to_string(),
        "bytes": len,
        "content": content,
        "utf8": utf8,
        "truncated": truncated,
    })
}

/// `file_read {path, max_bytes?}`: Read access.
pub struct FileRead;

impl FileRead {
    const ARGS: &'static [&'static str] = &["path", "max_bytes"];
}

#[async_trait]
impl Tool for FileRead {
    fn name(&self) -> &'static str {
        "file_read"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Read a text file. Relative paths are inside your workspace.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File to read"},
                    "max_bytes": {"type": "integer", "minimum": 1, "description": "For devices and pipes: how many bytes to read (default 4096)"}
                },
                "required": ["path"],
                "additionalProperties": false
            }),
        }
    }

    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let path = a.path("path")?;
        a.opt_u64("max_bytes")?;
        ctx.authorize(Path::new(path), Access::Read)?;
        Ok(no_side_effects())
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        blocking(args, ctx, |args, ctx| FileRead.run(args, ctx)).await
    }
}

impl FileRead {
    /// The call itself, run on a blocking thread.
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let input = a.path("path")?;
        let max = a.opt_u64("max_bytes")?;
        let mut opened = ctx
            .policy
            .open_file(&ctx.path(Path::new(input)), FileAccess::Read)?;
        let want = max.unwrap_or(DEFAULT_DEVICE_BYTES);
        let (bytes, truncated) = read_opened(&mut opened, ctx.limits.max_file_bytes, want)?;
        Ok(text_json(&opened.path, bytes, truncated))
    }
}

/// `file_write {path, content}`: Write access.
pub struct FileWrite;

impl FileWrite {
    const ARGS: &'static [&'static str] = &["path", "content"];

    fn prepare<'a>(args: &'a Value, ctx: &ToolContext) -> Result<(&'a str, &'a str), ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let path = a.path("path")?;
        let content = a.string("content")?;
        let limit = ctx.limits.max_file_bytes;
        if content.len() as u64 > limit {
            return Err(ToolError::TooLarge {
                what: "argument `content`".into(),
                size: content.len() as u64,
                limit,
            });
        }
        ctx.authorize(Path::new(path), Access::Write)?;
        Ok((path, content))
    }
}

#[async_trait]
impl Tool for FileWrite {
    fn name(&self) -> &'static str {
        "file_write"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Create or overwrite a text file (parent directories are created).".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "File to write"},
                    "content": {"type": "string", "description": "The whole new content"}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        }
    }

    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        Self::prepare(args, ctx)?;
        Ok(side_effects())
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        blocking(args, ctx, |args, ctx| FileWrite.run(args, ctx)).await
    }
}

impl FileWrite {
    /// The call itself, run on a blocking thread.
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (input, content) = Self::prepare(args, ctx)?;
        let input = Path::new(input);
        let opened = ctx
            .policy
            .open_file(&ctx.path(input), FileAccess::Write)
            .map_err(|e| blind(ctx, input, e.into()))?;
        replace_content(&opened, content.as_bytes()).map_err(|e| blind(ctx, input, e))?;
        let mut out = json!({
            "path": opened.path.display().to_string(),
            "bytes_written": content.len(),
        });
        // Whether the file was there before is only said to an agent that may read it.
        if readable(ctx, &opened.path) {
            out["created"] = Value::Bool(opened.created);
        }
        Ok(out)
    }
}

/// `file_edit {path, old_text, new_text}`: needs Read and Write, both checked before reading.
pub struct FileEdit;

impl FileEdit {
    const ARGS: &'static [&'static str] = &["path", "old_text", "new_text"];

    fn prepare<'a>(
        args: &'a Value,
        ctx: &ToolContext,
    ) -> Result<(&'a str, &'a str, &'a str), ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let path = a.path("path")?;
        let old = a.string("old_text")?;
        let new = a.string("new_text")?;
        if old.is_empty() {
            return Err(ToolError::arg("old_text", "must not be empty"));
        }
        let p = Path::new(path);
        ctx.authorize(p, Access::Read)?;
        ctx.authorize(p, Access::Write)?;
        Ok((path, old, new))
    }
}

#[async_trait]
impl Tool for FileEdit {
    fn name(&self) -> &'static str {
        "file_edit"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description:
                "Replace one exact, unique occurrence of old_text with new_text in a file.".into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old_text": {"type": "string", "description": "Exact text to replace; must occur exactly once"},
                    "new_text": {"type": "string"}
                },
                "required": ["path", "old_text", "new_text"],
                "additionalProperties": false
            }),
        }
    }

    fn check(&self, args: &Value, ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        Self::prepare(args, ctx)?;
        Ok(side_effects())
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        blocking(args, ctx, |args, ctx| FileEdit.run(args, ctx)).await
    }
}

impl FileEdit {
    /// The call itself, run on a blocking thread.
    fn run(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (input, old, new) = Self::prepare(args, ctx)?;
        let mut opened = ctx
            .policy
            .open_file(&ctx.path(Path::new(input)), FileAccess::ReadWrite)?;
        let (bytes, _) = read_opened(&mut opened, ctx.limits.max_file_bytes, 0)?;
        let path = opened.path.clone();
        let text = String::from_utf8(bytes).map_err(|_| ToolError::NotText(path.clone()))?;
        let count = text.matches(old).count();
        match count {
            0 => return Err(ToolError::EditNoMatch(path)),
            1 => {}
            n => return Err(ToolError::EditAmbiguous { path, count: n }),
        }
        let updated = text.replacen(old, new, 1);
        if updated.len() as u64 > ctx.limits.max_file_bytes {
            return Err(ToolError::TooLarge {
                what: "the edited file".into(),
                size: updated.len() as u64,
                limit: ctx.limits.max_file_bytes,
            });
        }
        replace_content(&opened, updated.as_bytes())?;
        Ok(json!({
            "path": path.display().to_string(),
            "replaced": 1,
            "bytes": updated.len(),
        }))
    }
}
