//! `file_read`, `file_write`, `file_edit` (SPEC §2.2). Each asks the policy before touching
//! anything and then acts on the resolved path only.

use crate::args::Args;
use crate::error::ToolError;
use crate::tool::{CallCheck, Tool, ToolContext, ToolSpec};
use serde_json::{json, Value};
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use warren_policy::{Access, Authorized};

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

/// Refuses when the path as written (before resolution) ends in a symbolic link.
fn refuse_symlink_leaf(auth: &Authorized) -> Result<(), ToolError> {
    match std::fs::symlink_metadata(&auth.lexical) {
        Ok(m) if m.file_type().is_symlink() => Err(ToolError::SymlinkLeaf(auth.lexical.clone())),
        _ => Ok(()),
    }
}

fn open_read(path: &Path) -> Result<File, ToolError> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ToolError::NotFound(path.to_path_buf()),
            _ => ToolError::io(path, e),
        })
}

/// Reads a whole regular file of at most `limit` bytes.
fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, ToolError> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::NotFound(path.to_path_buf()),
        _ => ToolError::io(path, e),
    })?;
    if !meta.is_file() {
        return Err(ToolError::NotAFile(path.to_path_buf()));
    }
    if meta.len() > limit {
        return Err(ToolError::TooLarge {
            what: path.display().to_string(),
            size: meta.len(),
            limit,
        });
    }
    let mut buf = Vec::new();
    open_read(path)?
        .take(limit + 1)
        .read_to_end(&mut buf)
        .map_err(|e| ToolError::io(path, e))?;
    Ok(buf)
}

/// Writes `content` to `path` (already authorized), creating missing parents only where the
/// policy allows writing, never following a symlink at the leaf.
fn write_file(ctx: &ToolContext, path: &Path, content: &[u8]) -> Result<bool, ToolError> {
    if let Some(parent) = path.parent() {
        let mut missing: Vec<PathBuf> = Vec::new();
        let mut p = parent.to_path_buf();
        while std::fs::symlink_metadata(&p).is_err() {
            missing.push(p.clone());
            if !p.pop() {
                break;
            }
        }
        for dir in missing.iter().rev() {
            let (ok, rule) = ctx.policy.decide(dir, Access::Write);
            if !ok {
                return Err(ToolError::Denied(warren_policy::Denial {
                    path: dir.clone(),
                    access: Access::Write,
                    rule,
                    detail: Some("a parent directory would be created there".into()),
                }));
            }
        }
        std::fs::create_dir_all(parent).map_err(|e| ToolError::io(parent, e))?;
    }
    let created = std::fs::symlink_metadata(path).is_err();
    if let Ok(m) = std::fs::metadata(path) {
        if m.is_dir() {
            return Err(ToolError::NotAFile(path.to_path_buf()));
        }
    }
    let mut f = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => ToolError::SymlinkLeaf(path.to_path_buf()),
            _ => ToolError::io(path, e),
        })?;
    f.write_all(content).map_err(|e| ToolError::io(path, e))?;
    if f.metadata().map(|m| m.is_file()).unwrap_or(false) {
        f.sync_all().map_err(|e| ToolError::io(path, e))?;
    }
    Ok(created)
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

impl Tool for FileRead {
    fn name(&self) -> &'static str {
        "file_read"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name(),
            description: "Read a text file. Relative paths are inside your workspace.",
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
        ctx.policy.authorize(Path::new(path), Access::Read)?;
        Ok(no_side_effects())
    }

    fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let input = a.path("path")?;
        let max = a.opt_u64("max_bytes")?;
        let auth = ctx.policy.authorize(Path::new(input), Access::Read)?;
        let limit = ctx.limits.max_file_bytes;
        let meta = std::fs::metadata(&auth.path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ToolError::NotFound(auth.path.clone()),
            _ => ToolError::io(&auth.path, e),
        })?;
        if meta.is_dir() {
            return Err(ToolError::NotAFile(auth.path));
        }
        if meta.is_file() {
            let bytes = read_regular(&auth.path, limit)?;
            return Ok(text_json(&auth.path, bytes, false));
        }
        // A device or pipe: read a bounded prefix.
        let want = max.unwrap_or(DEFAULT_DEVICE_BYTES).min(limit);
        let mut buf = Vec::new();
        open_read(&auth.path)?
            .take(want)
            .read_to_end(&mut buf)
            .map_err(|e| ToolError::io(&auth.path, e))?;
        Ok(text_json(&auth.path, buf, true))
    }
}

/// `file_write {path, content}`: Write access.
pub struct FileWrite;

impl FileWrite {
    const ARGS: &'static [&'static str] = &["path", "content"];

    fn prepare<'a>(args: &'a Value, ctx: &ToolContext) -> Result<(Authorized, &'a str), ToolError> {
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
        let auth = ctx.policy.authorize(Path::new(path), Access::Write)?;
        refuse_symlink_leaf(&auth)?;
        Ok((auth, content))
    }
}

impl Tool for FileWrite {
    fn name(&self) -> &'static str {
        "file_write"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name(),
            description: "Create or overwrite a text file (parent directories are created).",
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

    fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (auth, content) = Self::prepare(args, ctx)?;
        let created = write_file(ctx, &auth.path, content.as_bytes())?;
        Ok(json!({
            "path": auth.path.display().to_string(),
            "bytes_written": content.len(),
            "created": created,
        }))
    }
}

/// `file_edit {path, old_text, new_text}`: needs Read and Write, both checked before reading.
pub struct FileEdit;

impl FileEdit {
    const ARGS: &'static [&'static str] = &["path", "old_text", "new_text"];

    fn prepare<'a>(
        args: &'a Value,
        ctx: &ToolContext,
    ) -> Result<(Authorized, &'a str, &'a str), ToolError> {
        let a = Args::new(args, Self::ARGS)?;
        let path = a.path("path")?;
        let old = a.string("old_text")?;
        let new = a.string("new_text")?;
        if old.is_empty() {
            return Err(ToolError::arg("old_text", "must not be empty"));
        }
        let p = Path::new(path);
        ctx.policy.authorize(p, Access::Read)?;
        let auth = ctx.policy.authorize(p, Access::Write)?;
        refuse_symlink_leaf(&auth)?;
        Ok((auth, old, new))
    }
}

impl Tool for FileEdit {
    fn name(&self) -> &'static str {
        "file_edit"
    }

    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name(),
            description:
                "Replace one exact, unique occurrence of old_text with new_text in a file.",
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

    fn execute(&self, args: &Value, ctx: &ToolContext) -> Result<Value, ToolError> {
        let (auth, old, new) = Self::prepare(args, ctx)?;
        let bytes = read_regular(&auth.path, ctx.limits.max_file_bytes)?;
        let text = String::from_utf8(bytes).map_err(|_| ToolError::NotText(auth.path.clone()))?;
        let count = text.matches(old).count();
        match count {
            0 => return Err(ToolError::EditNoMatch(auth.path)),
            1 => {}
            n => {
                return Err(ToolError::EditAmbiguous {
                    path: auth.path,
                    count: n,
                })
            }
        }
        let updated = text.replacen(old, new, 1);
        if updated.len() as u64 > ctx.limits.max_file_bytes {
            return Err(ToolError::TooLarge {
                what: "the edited file".into(),
                size: updated.len() as u64,
                limit: ctx.limits.max_file_bytes,
            });
        }
        write_file(ctx, &auth.path, updated.as_bytes())?;
        Ok(json!({
            "path": auth.path.display().to_string(),
            "replaced": 1,
            "bytes": updated.len(),
        }))
    }
}
