//! The memory tools (`memory_store`, `memory_recall`, `memory_forget`): thin adapters from the
//! tool gate to the agent's own memory handle, which does the agent scoping.

use async_trait::async_trait;
use serde_json::{json, Value};
use std::sync::Arc;
use warren_memory::{Memory, NewMemory, RecallQuery};
use warren_tools::{Args, CallCheck, Tool, ToolContext, ToolError, ToolSpec};

/// A required string argument without NUL bytes (memory keys and contents are stored as text).
fn text<'a>(a: &Args<'a>, field: &str) -> Result<&'a str, ToolError> {
    let s = a.string(field)?;
    if s.contains('\0') {
        return Err(ToolError::arg(field, "contains a NUL byte"));
    }
    Ok(s)
}

fn memory_error(e: warren_memory::MemoryError) -> ToolError {
    ToolError::Io {
        path: "memory".into(),
        source: std::io::Error::other(e.to_string()),
    }
}

fn checked(side_effects: bool) -> CallCheck {
    CallCheck {
        side_effects,
        risk: None,
        reasons: Vec::new(),
    }
}

/// Refuses a write on a read-only memory (a SubAgent for an agent its parent cannot write).
fn ensure_writable(writable: bool, memory: &Arc<dyn Memory>) -> Result<(), ToolError> {
    if writable {
        return Ok(());
    }
    Err(ToolError::Refused {
        rule: warren_policy::RefusalRule::DelegationRefused,
        reason: format!(
            "the memory of `{}` is read-only in this SubAgent: its parent cannot write it",
            memory.agent()
        ),
    })
}

/// The three memory tools over one agent's handle; with `writable` false, `memory_store` and
/// `memory_forget` are refused at check time (nothing runs).
pub fn memory_tools(memory: Arc<dyn Memory>, writable: bool) -> Vec<Box<dyn Tool>> {
    vec![
        Box::new(MemoryStoreTool {
            memory: memory.clone(),
            writable,
        }),
        Box::new(MemoryRecallTool {
            memory: memory.clone(),
        }),
        Box::new(MemoryForgetTool { memory, writable }),
    ]
}

struct MemoryStoreTool {
    memory: Arc<dyn Memory>,
    writable: bool,
}

impl MemoryStoreTool {
    fn parse(args: &Value) -> Result<NewMemory, ToolError> {
        let a = Args::new(args, &["key", "content", "category"])?;
        let key = text(&a, "key")?;
        if key.trim().is_empty() || key.len() > 256 {
            return Err(ToolError::arg("key", "must be 1 to 256 characters"));
        }
        Ok(NewMemory {
            key: key.to_string(),
            content: text(&a, "content")?.to_string(),
            category: a.opt_string("category")?.unwrap_or("core").to_string(),
            session_id: None,
            importance: 0.5,
        })
    }
}

#[async_trait]
impl Tool for MemoryStoreTool {
    fn name(&self) -> &'static str {
        "memory_store"
    }
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Remember a fact under a key (storing an existing key replaces it)."
                .into(),
            parameters: json!({"type": "object", "properties": {
                "key": {"type": "string"}, "content": {"type": "string"},
                "category": {"type": "string", "description": "core (default), daily or your own"}},
                "required": ["key", "content"], "additionalProperties": false}),
        }
    }
    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        ensure_writable(self.writable, &self.memory)?;
        Self::parse(args).map(|_| checked(true))
    }
    async fn execute(&self, args: &Value, _ctx: &ToolContext) -> Result<Value, ToolError> {
        ensure_writable(self.writable, &self.memory)?;
        let new = Self::parse(args)?;
        let r = self.memory.store(new).await.map_err(memory_error)?;
        Ok(json!({"stored": r.entry.key, "category": r.entry.category, "warnings": r.warnings}))
    }
}

struct MemoryRecallTool {
    memory: Arc<dyn Memory>,
}

impl MemoryRecallTool {
    fn parse(args: &Value) -> Result<RecallQuery, ToolError> {
        let a = Args::new(args, &["query", "limit"])?;
        let limit = match a.opt_u64("limit")? {
            None => 10,
            Some(n) if (1..=100).contains(&n) => n,
            Some(_) => return Err(ToolError::arg("limit", "must be an integer from 1 to 100")),
        };
        Ok(RecallQuery {
            query: text(&a, "query")?.to_string(),
            limit: usize::try_from(limit).unwrap_or(10),
            category: None,
            session: None,
        })
    }
}

#[async_trait]
impl Tool for MemoryRecallTool {
    fn name(&self) -> &'static str {
        "memory_recall"
    }
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Search your memory (and what your grants let you read) by relevance."
                .into(),
            parameters: json!({"type": "object", "properties": {
                "query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 100}},
                "required": ["query"], "additionalProperties": false}),
        }
    }
    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        Self::parse(args).map(|_| checked(false))
    }
    async fn execute(&self, args: &Value, _ctx: &ToolContext) -> Result<Value, ToolError> {
        let q = Self::parse(args)?;
        let rows = self.memory.recall(&q).await.map_err(memory_error)?;
        Ok(json!(rows
            .iter()
            .map(|r| json!({"agent": r.agent, "key": r.key, "content": r.content, "category": r.category}))
            .collect::<Vec<_>>()))
    }
}

struct MemoryForgetTool {
    memory: Arc<dyn Memory>,
    writable: bool,
}

#[async_trait]
impl Tool for MemoryForgetTool {
    fn name(&self) -> &'static str {
        "memory_forget"
    }
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: self.name().to_owned().into(),
            description: "Forget one of your own memories by key.".into(),
            parameters: json!({"type": "object", "properties": {"key": {"type": "string"}},
                "required": ["key"], "additionalProperties": false}),
        }
    }
    fn check(&self, args: &Value, _ctx: &ToolContext) -> Result<CallCheck, ToolError> {
        ensure_writable(self.writable, &self.memory)?;
        text(&Args::new(args, &["key"])?, "key")?;
        Ok(checked(true))
    }
    async fn execute(&self, args: &Value, _ctx: &ToolContext) -> Result<Value, ToolError> {
        ensure_writable(self.writable, &self.memory)?;
        let a = Args::new(args, &["key"])?;
        let key = text(&a, "key")?;
        let removed = self.memory.forget(key).await.map_err(memory_error)?;
        Ok(json!({"key": key, "removed": removed}))
    }
}
