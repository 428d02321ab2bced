//! The repository's own configuration files, read as text before libgit2 opens the repository:
//! every file they make reads look at (`include.path`, `includeIf.<condition>.path`,
//! `core.excludesFile`, `core.attributesFile`) must be readable through the policy. libgit2
//! itself, on the confined read thread, could not open such a file anyway; checking first
//! turns that into a denial that names the key, the file and the rule.

use super::meta::{self, Location};
use crate::error::ToolError;
use std::path::{Path, PathBuf};
use warren_policy::{Access, SecurityPolicy};

/// Largest config file read.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// How deep includes are followed (git's own limit is 10).
const MAX_INCLUDE_DEPTH: usize = 10;

/// Config keys (lower case; `includeif.<condition>.path` by prefix and suffix) naming a file
/// that reads look at.
pub fn names_a_read_file(name: &str) -> bool {
    name == "include.path"
        || (name.starts_with("includeif.") && name.ends_with(".path"))
        || name == "core.excludesfile"
        || name == "core.attributesfile"
}

/// `(name, value)` of every entry with a value in a config file's text. Names are
/// `section[.subsection].key` with the section and key in lower case; values are unquoted and
/// unescaped as git does.
pub fn entries(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut section = String::new();
    let mut chars = text.chars().peekable();
    loop {
        // Start of a line: skip blanks.
        while chars
            .peek()
            .is_some_and(|c| *c == ' ' || *c == '\t' || *c == '\r' || *c == '\n')
        {
            chars.next();
        }
        let Some(&c) = chars.peek() else { break };
        if c == '#' || c == ';' {
            for c in chars.by_ref() {
                if c == '\n' {
                    break;
                }
            }
            continue;
        }
        if c == '[' {
            chars.next();
            let mut head = String::new();
            let mut sub: Option<String> = None;
            while let Some(c) = chars.next() {
                match c {
                    ']' => break,
                    '"' => {
                        let mut s = String::new();
                        while let Some(c) = chars.next() {
                            match c {
                                '\\' => s.extend(chars.next()),
                                '"' => break,
                                c => s.push(c),
                            }
                        }
                        sub = Some(s);
                    }
                    '\n' => break,
                    c if c.is_whitespace() => {}
                    c => head.push(c),
                }
            }
            // `[section.sub]` (legacy) keeps the subsection after the first dot.
            section = match sub {
                Some(s) => format!("{}.{s}", head.to_ascii_lowercase()),
                None => match head.split_once('.') {
                    Some((a, b)) => format!("{}.{b}", a.to_ascii_lowercase()),
                    None => head.to_ascii_lowercase(),
                },
            };
            continue;
        }
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c.is_ascii_alphanumeric() || c == '-' {
                key.push(c);
                chars.next();
            } else {
                break;
            }
        }
        while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
            chars.next();
        }
        if chars.peek() != Some(&'=') {
            // A boolean without a value, or garbage: skip the rest of the line.
            for c in chars.by_ref() {
                if c == '\n' {
                    break;
                }
            }
            continue;
        }
        chars.next();
        let value = value(&mut chars);
        if !key.is_empty() {
            out.push((format!("{section}.{}", key.to_ascii_lowercase()), value));
        }
    }
    out
}

/// One value up to the end of its (possibly continued) line.
fn value(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> String {
    let mut v = String::new();
    let mut quoted = false;
    // Length of `v` up to the last character that is not trailing unquoted blank space.
    let mut keep = 0;
    while chars.peek().is_some_and(|c| *c == ' ' || *c == '\t') {
        chars.next();
    }
    while let Some(c) = chars.next() {
        match c {
            '\n' => break,
            '"' => {
                quoted = !quoted;
                keep = v.len();
            }
            '\\' => match chars.next() {
                Some('\n') => {}
                Some('n') => v.push('\n'),
                Some('t') => v.push('\t'),
                Some('b') => {
                    v.pop();
                }
                Some(o) => v.push(o),
                None => {}
            },
            '#' | ';' if !quoted => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                break;
            }
            c => v.push(c),
        }
        if quoted || !matches!(c, ' ' | '\t' | '\r') {
            keep = v.len();
        }
    }
    v.truncate(keep);
    v
}

/// Reads a config file for the agent through the policy's race-free opener: decided for Read,
/// opened beneath its grant root without following links (a file swapped for a link after its
/// include was authorized is never read through the link).
fn read(policy: &SecurityPolicy, path: &Path) -> Result<Option<String>, ToolError> {
    use std::io::Read;
    let file = match policy.open_file(path, warren_policy::FileAccess::Read) {
        Ok(f) => f,
        Err(warren_policy::OpenError::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let mut buf = Vec::new();
    (&file.file)
        .take(MAX_CONFIG_BYTES)
        .read_to_end(&mut buf)
        .map_err(|e| ToolError::io(path, e))?;
    Ok(Some(String::from_utf8_lossy(&buf).into_owned()))
}

/// Checks the repository's own config (`config` in the common directory, `config.worktree` in
/// the git directory) and every file they include, following includes only where the policy
/// lets the agent read. The user's global and system config are the operator's and are not
/// read for agents at all.
pub fn verify(policy: &SecurityPolicy, loc: &Location) -> Result<(), ToolError> {
    let mut queue: Vec<(PathBuf, PathBuf, usize)> = vec![
        (loc.commondir.join("config"), loc.commondir.clone(), 0),
        (loc.gitdir.join("config.worktree"), loc.gitdir.clone(), 0),
    ];
    while let Some((file, base, depth)) = queue.pop() {
        let Some(text) = read(policy, &file)? else {
            continue;
        };
        for (name, value) in entries(&text) {
            if !names_a_read_file(&name) {
                continue;
            }
            let include = name.starts_with("include");
            let path = if value.starts_with('/') || value.starts_with('~') {
                PathBuf::from(&value)
            } else if include && depth > 0 {
                return Err(ToolError::GitMetadata {
                    path: file,
                    reason: format!(
                        "`{name} = {value}` in a file included by the repository's config is relative to that included file; use an absolute path"
                    ),
                });
            } else if include {
                base.join(&value)
            } else {
                loc.workdir.join(&value)
            };
            let what = format!("`{name}` in the repository's config");
            let resolved = meta::authorize_all(policy, &path, &[Access::Read], Some(&what))?;
            if include && depth < MAX_INCLUDE_DEPTH {
                let dir = resolved.parent().map(Path::to_path_buf).unwrap_or_default();
                queue.push((resolved, dir, depth + 1));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::entries;

    #[test]
    fn entries_follow_gits_syntax() {
        let text = "[core]\n\texcludesFile = /a/b # comment\n\tbare\n[include]\n  path = \"x y\"\n[includeIf \"gitdir:/w/\"]\n\tpath = /inc ; c\n[Core.Sub]\nKey = v\\\n w\n[core] attributesFile=~/at\n";
        let e = entries(text);
        assert_eq!(
            e,
            vec![
                ("core.excludesfile".to_string(), "/a/b".to_string()),
                ("include.path".to_string(), "x y".to_string()),
                ("includeif.gitdir:/w/.path".to_string(), "/inc".to_string()),
                ("core.Sub.key".to_string(), "v w".to_string()),
                ("core.attributesfile".to_string(), "~/at".to_string()),
            ]
        );
    }
}
