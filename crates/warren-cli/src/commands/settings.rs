//! `warren agents set | grant | memory-grant` and `warren profiles ...`: config edits through
//! the same preview-and-save service as the desktop's editors. With `--dry-run` the diff of
//! `config.toml` and the validator's findings are printed and nothing is written (`--json`:
//! `{"diff": [{"kind", "text"}], "errors": [{"path", "message", "line", "column"}]}`, exit 2
//! when there are findings). A saved edit prints the agent (or profile) as saved; a refused one
//! exits 2 with every finding, and leaves `config.toml` byte for byte unchanged.

use super::Ctx;
use std::process::ExitCode;
use warren_api::profiles::DiffKind;
use warren_api::profiles::{FieldValue, ProfilePreview};
use warren_api::{ApiError, ErrorCode};

/// Reads a value given on the command line: JSON when it parses as JSON (`true`, `10`,
/// `["ls", "cat"]`, `"text"`, and a risk profile's network by domain as an object:
/// `{"allow": ["crates.io"], "deny": [], "allow_private": false}`), else the text as it is. With
/// `list`, plain text is split at commas (`a,b`; an empty value is the empty list).
pub fn parse_value(raw: &str, list: bool) -> Result<FieldValue, ApiError> {
    let bad = || {
        ApiError::new(
            ErrorCode::InvalidArgument,
            format!("value `{raw}`: expected true/false, a number, text or a list of text"),
        )
    };
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Bool(b)) if !list => Ok(FieldValue::Bool(b)),
        Ok(serde_json::Value::Number(n)) if !list => {
            n.as_f64().map(FieldValue::Number).ok_or_else(bad)
        }
        Ok(serde_json::Value::String(s)) if !list => Ok(FieldValue::Text(s)),
        Ok(serde_json::Value::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                serde_json::Value::String(s) => Ok(s),
                _ => Err(bad()),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(FieldValue::List),
        Ok(serde_json::Value::Object(o)) if !list => {
            serde_json::from_value::<warren_types::DomainRules>(serde_json::Value::Object(o))
                .map(FieldValue::Domains)
                .map_err(|e| {
                    ApiError::new(
                        ErrorCode::InvalidArgument,
                        format!(
                            "value `{raw}`: an object is a network by domain, {{\"allow\": [...], \"deny\": [...], \"allow_private\": false}}: {e}"
                        ),
                    )
                })
        }
        Ok(serde_json::Value::Object(_)) | Ok(serde_json::Value::Null) => Err(bad()),
        _ if list => Ok(FieldValue::List(
            raw.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        )),
        _ => Ok(FieldValue::Text(raw.to_string())),
    }
}

/// Prints a preview: the diff, then the findings; exit 2 when there are findings.
pub fn render_preview(ctx: &Ctx, r: Result<ProfilePreview, ApiError>) -> ExitCode {
    let p = match r {
        Ok(p) => p,
        Err(e) => return ctx.out.fail(&e),
    };
    let has_errors = !p.errors.is_empty();
    let code = ctx.out.ok(&p, || {
        let mut s = String::new();
        if p.diff.is_empty() {
            s.push_str("no change\n");
        }
        for l in &p.diff {
            let mark = match l.kind {
                DiffKind::Add => "+ ",
                DiffKind::Remove => "- ",
                DiffKind::Same | DiffKind::Gap => "  ",
            };
            s.push_str(mark);
            s.push_str(&l.text);
            s.push('\n');
        }
        for e in &p.errors {
            match e.line {
                Some(line) => {
                    s.push_str(&format!("error: {} (line {line}): {}\n", e.path, e.message));
                }
                None => s.push_str(&format!("error: {}: {}\n", e.path, e.message)),
            }
        }
        s
    });
    if has_errors {
        ExitCode::from(2)
    } else {
        code
    }
}
