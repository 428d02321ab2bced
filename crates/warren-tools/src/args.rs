//! Reading JSON tool arguments with clear errors naming the argument.

use crate::error::ToolError;
use serde_json::{Map, Value};

/// The arguments object of a call.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    /// Checks that `value` is an object whose keys are all in `known`.
    pub fn new(value: &'a Value, known: &[&str]) -> Result<Self, ToolError> {
        let map = value
            .as_object()
            .ok_or_else(|| ToolError::arg("(arguments)", "must be a JSON object"))?;
        if let Some(k) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return Err(ToolError::arg(
                k,
                format!("unknown argument (expected one of: {})", known.join(", ")),
            ));
        }
        Ok(Args { map })
    }

    /// A required string.
    pub fn string(&self, field: &str) -> Result<&'a str, ToolError> {
        self.opt_string(field)?
            .ok_or_else(|| ToolError::arg(field, "is required"))
    }

    /// An optional string (`null` counts as absent).
    pub fn opt_string(&self, field: &str) -> Result<Option<&'a str>, ToolError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(other) => Err(ToolError::arg(
                field,
                format!("must be a string, got {}", kind(other)),
            )),
        }
    }

    /// A required path string: non-empty, no NUL byte.
    pub fn path(&self, field: &str) -> Result<&'a str, ToolError> {
        let s = self.string(field)?;
        check_path(field, s)?;
        Ok(s)
    }

    /// An optional path string.
    pub fn opt_path(&self, field: &str) -> Result<Option<&'a str>, ToolError> {
        let s = self.opt_string(field)?;
        if let Some(s) = s {
            check_path(field, s)?;
        }
        Ok(s)
    }

    /// An optional boolean (`null` counts as absent).
    pub fn opt_bool(&self, field: &str) -> Result<Option<bool>, ToolError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(ToolError::arg(
                field,
                format!("must be a boolean, got {}", kind(other)),
            )),
        }
    }

    /// An optional array of path strings (each non-empty, no NUL byte).
    pub fn opt_paths(&self, field: &str) -> Result<Option<Vec<&'a str>>, ToolError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => {
                        check_path(&format!("{field}[{i}]"), s)?;
                        Ok(s.as_str())
                    }
                    other => Err(ToolError::arg(
                        &format!("{field}[{i}]"),
                        format!("must be a string, got {}", kind(other)),
                    )),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(other) => Err(ToolError::arg(
                field,
                format!("must be an array of strings, got {}", kind(other)),
            )),
        }
    }

    /// An optional non-negative integer.
    pub fn opt_u64(&self, field: &str) -> Result<Option<u64>, ToolError> {
        match self.map.get(field) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| {
                ToolError::arg(field, format!("must be a non-negative integer, got {n}"))
            }),
            Some(other) => Err(ToolError::arg(
                field,
                format!("must be an integer, got {}", kind(other)),
            )),
        }
    }
}

fn check_path(field: &str, s: &str) -> Result<(), ToolError> {
    if s.is_empty() {
        return Err(ToolError::arg(field, "must not be empty"));
    }
    if s.contains('\0') {
        return Err(ToolError::arg(field, "contains a NUL byte"));
    }
    Ok(())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
