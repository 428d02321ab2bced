//! Shell command analysis (SPEC §2.2): split the command into segments, check every path-looking
//! argument, `--opt=value` value and redirection target against the policy (the workspace or a
//! read-write root; the four devices as devices), allowlist each command against
//! `allowed_commands`, and classify the whole command low/medium/high.

pub mod lex;
pub mod risk;

use crate::access::{Access, Denial};
use crate::authorize::is_device;
use crate::policy::SecurityPolicy;
pub use lex::{parse, LexError, Redirect, RedirectKind, Script, Segment, Word};
pub use risk::{classify, Risk};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Commands accepted whatever `allowed_commands` says: builtins without side effects.
const IMPLICIT_BUILTINS: &[&str] = &["cd", "true", "false", ":", "test", "[", "[["];

/// Words that introduce a command rather than being one.
const PREFIX_KEYWORDS: &[&str] = &[
    "!", "{", "}", "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "esac",
    "time",
];

/// Headers whose words are all arguments (`for x in a b`).
const HEADER_KEYWORDS: &[&str] = &["for", "case", "select", "function", "in"];

/// Commands that run another command given as their arguments.
const WRAPPERS: &[&str] = &[
    "env", "nice", "nohup", "timeout", "stdbuf", "xargs", "command", "exec", "sudo", "doas",
    "ionice", "chrt", "setsid",
];

/// Directories whose programs may be named by absolute path.
const SYSTEM_BIN_DIRS: &[&str] = &["/usr", "/bin", "/sbin", "/lib", "/lib64"];

/// One command found in the line, after wrappers were looked through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommandInfo {
    /// Base name of the program.
    pub name: String,
    /// Its risk.
    pub risk: Risk,
    /// Why it is medium or high.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The analysis of an accepted command line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShellPlan {
    /// Every command, nested ones included.
    pub commands: Vec<CommandInfo>,
    /// The highest risk of any part of the line.
    pub risk: Risk,
    /// Why the line has that risk (empty for low).
    pub reasons: Vec<String>,
    /// Every checked path (resolved).
    pub paths: Vec<PathBuf>,
}

/// Why a shell command line is refused before it runs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShellError {
    /// The line is empty.
    #[error("the command is empty")]
    Empty,
    /// The line cannot be split safely.
    #[error(transparent)]
    Parse(#[from] LexError),
    /// A path argument or redirection target is outside the read-write allowlist.
    #[error("argument `{word}`: {denial}")]
    Path {
        /// The argument as written.
        word: String,
        /// The denial of the policy.
        denial: Denial,
    },
    /// A path-looking argument contains an expansion that cannot be checked before it runs.
    #[error(
        "argument `{word}` is a path built at run time ($VAR or substitution); write it literally"
    )]
    DynamicPath {
        /// The argument as written.
        word: String,
    },
    /// The program is not in `allowed_commands`.
    #[error("command `{command}` is not in allowed_commands of risk profile `{profile}`")]
    CommandNotAllowed {
        /// The program.
        command: String,
        /// The risk profile.
        profile: String,
    },
}

impl ShellError {
    /// A stable code for the error.
    pub fn code(&self) -> &'static str {
        match self {
            ShellError::Empty | ShellError::Parse(_) => "invalid_argument",
            ShellError::Path { .. } | ShellError::DynamicPath { .. } => "denied",
            ShellError::CommandNotAllowed { .. } => "command_not_allowed",
        }
    }
}

impl SecurityPolicy {
    /// Analyses a shell command line against this policy. `Ok` means every path and program
    /// passed; the plan's risk then drives approval ([`SecurityPolicy::gate`]).
    pub fn check_shell(&self, command: &str) -> Result<ShellPlan, ShellError> {
        if command.trim().is_empty() {
            return Err(ShellError::Empty);
        }
        let script = lex::parse(command)?;
        let mut plan = ShellPlan {
            commands: Vec::new(),
            risk: Risk::Low,
            reasons: Vec::new(),
            paths: Vec::new(),
        };
        if script.background {
            bump(
                &mut plan,
                Risk::Medium,
                "runs a command in the background".into(),
            );
        }
        for seg in &script.segments {
            self.check_segment(seg, &mut plan)?;
        }
        if plan.commands.is_empty() && script.segments.iter().all(|s| s.redirects.is_empty()) {
            return Err(ShellError::Empty);
        }
        Ok(plan)
    }

    fn check_segment(&self, seg: &Segment, plan: &mut ShellPlan) -> Result<(), ShellError> {
        for r in &seg.redirects {
            let (access, both) = match r.kind {
                RedirectKind::Read => (Access::Read, false),
                RedirectKind::Write | RedirectKind::Append => (Access::Write, false),
                RedirectKind::ReadWrite => (Access::Write, true),
                RedirectKind::Dup | RedirectKind::HereDoc | RedirectKind::HereString => continue,
            };
            let resolved = self.check_shell_path(&r.target, Some((access, both)))?;
            if let Some(p) = resolved {
                if access == Access::Write && !is_device(&p, Access::Write) {
                    bump(plan, Risk::Medium, format!("writes {}", p.display()));
                }
                plan.paths.push(p);
            }
        }
        let mut words = seg.words.iter().peekable();
        // Assignments before the command.
        while let Some(w) = words.peek() {
            if let Some((_, value)) = assignment(&w.text) {
                if value.contains('/') || value.starts_with('~') {
                    let v = Word {
                        text: value.to_string(),
                        ..(*w).clone()
                    };
                    self.push_path(&v, plan)?;
                }
                words.next();
            } else {
                break;
            }
        }
        let rest: Vec<&Word> = words.collect();
        let mut i = 0;
        while i < rest.len() && PREFIX_KEYWORDS.contains(&rest[i].text.as_str()) && !rest[i].quoted
        {
            i += 1;
        }
        if i >= rest.len() {
            return Ok(());
        }
        if HEADER_KEYWORDS.contains(&rest[i].text.as_str()) && !rest[i].quoted {
            for w in &rest[i + 1..] {
                self.push_path(w, plan)?;
            }
            return Ok(());
        }
        self.check_command(&rest[i..], seg.after_pipe, plan)
    }

    /// `words[0]` is the program; the rest are its arguments.
    fn check_command(
        &self,
        words: &[&Word],
        after_pipe: bool,
        plan: &mut ShellPlan,
    ) -> Result<(), ShellError> {
        let Some((cmd, args)) = words.split_first() else {
            return Ok(());
        };
        let any = self.risk.allowed_commands.iter().any(|c| c == "*");
        if cmd.dynamic && !any {
            return Err(ShellError::CommandNotAllowed {
                command: cmd.text.clone(),
                profile: self.risk_profile_name.clone(),
            });
        }
        let name = if cmd.text.contains('/') {
            let p = self.check_program_path(cmd)?;
            plan.paths.push(p);
            Path::new(&cmd.text)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            cmd.text.clone()
        };
        let allowed = any
            || IMPLICIT_BUILTINS.contains(&name.as_str())
            || self.risk.allowed_commands.contains(&name);
        if !allowed {
            return Err(ShellError::CommandNotAllowed {
                command: name,
                profile: self.risk_profile_name.clone(),
            });
        }
        let arg_texts: Vec<&str> = args.iter().map(|w| w.text.as_str()).collect();
        let (risk, reason) = risk::classify(&name, &arg_texts, after_pipe);
        if let Some(r) = &reason {
            bump(plan, risk, r.clone());
        }
        plan.commands.push(CommandInfo {
            name: name.clone(),
            risk,
            reason,
        });
        if WRAPPERS.contains(&name.as_str()) {
            if let Some(inner) = wrapped_command(&name, args) {
                // Arguments before the inner command are still checked as paths.
                for w in &args[..inner] {
                    self.push_arg(w, plan)?;
                }
                return self.check_command(&args[inner..], after_pipe, plan);
            }
        }
        for w in args {
            self.push_arg(w, plan)?;
        }
        Ok(())
    }

    fn push_arg(&self, w: &Word, plan: &mut ShellPlan) -> Result<(), ShellError> {
        let t = &w.text;
        if t == "-" || t == "--" || t.is_empty() && !w.quoted {
            return Ok(());
        }
        if let Some(opt) = t.strip_prefix("--") {
            if let Some((_, value)) = opt.split_once('=') {
                if !value.is_empty() {
                    let v = Word {
                        text: value.to_string(),
                        ..w.clone()
                    };
                    self.push_path(&v, plan)?;
                }
            }
            return Ok(());
        }
        if let Some(short) = t.strip_prefix('-') {
            // `-I/usr/include`, `-o~/out`: the attached value is a path.
            if let Some(pos) = short.find(['/', '~']) {
                let v = Word {
                    text: short[pos..].to_string(),
                    ..w.clone()
                };
                self.push_path(&v, plan)?;
            }
            return Ok(());
        }
        self.push_path(w, plan)
    }

    fn push_path(&self, w: &Word, plan: &mut ShellPlan) -> Result<(), ShellError> {
        if let Some(p) = self.check_shell_path(w, None)? {
            plan.paths.push(p);
        }
        Ok(())
    }

    /// Checks one path word. `access`: `None` for an argument (must be readable and writable),
    /// `Some((a, both))` for a redirection. Devices pass as devices.
    fn check_shell_path(
        &self,
        w: &Word,
        access: Option<(Access, bool)>,
    ) -> Result<Option<PathBuf>, ShellError> {
        let looks_like_path = w.text.contains('/') || w.text.starts_with('~');
        if w.dynamic {
            if looks_like_path || access.is_some() {
                return Err(ShellError::DynamicPath {
                    word: w.text.clone(),
                });
            }
            return Ok(None);
        }
        if w.text.is_empty() {
            return Ok(None);
        }
        let literal = if w.glob {
            glob_prefix(&w.text)
        } else {
            w.text.clone()
        };
        let path = Path::new(&literal);
        let read = self.check(path, Access::Read);
        let device_access = match access {
            Some((a, false)) => a,
            _ => Access::Read,
        };
        if read.allowed
            && read.rule == crate::access::Rule::Device
            && is_device(&read.path, device_access)
        {
            return Ok(Some(read.path));
        }
        let need_read = !matches!(access, Some((Access::Write, false)));
        if need_read && !read.allowed {
            return Err(ShellError::Path {
                word: w.text.clone(),
                denial: deny(read),
            });
        }
        let write = self.check(path, Access::Write);
        if !write.allowed {
            return Err(ShellError::Path {
                word: w.text.clone(),
                denial: deny(write),
            });
        }
        // Arguments and redirections must be in the workspace or a read-write root, even
        // when `workspace_only` is off: the shell may read or write anything it names.
        if !(read.allowed && is_rw_rule(read.rule) && is_rw_rule(write.rule)) {
            let rule = if !read.allowed {
                read.rule
            } else {
                crate::access::Rule::OutsideWorkspace
            };
            return Err(ShellError::Path {
                word: w.text.clone(),
                denial: Denial {
                    path: write.path,
                    access: if read.allowed {
                        Access::Write
                    } else {
                        Access::Read
                    },
                    rule,
                    detail: Some(
                        "shell arguments must be inside the workspace or a read-write root".into(),
                    ),
                },
            });
        }
        Ok(Some(write.path))
    }

    fn check_program_path(&self, cmd: &Word) -> Result<PathBuf, ShellError> {
        let d = self.check(Path::new(&cmd.text), Access::Read);
        if SYSTEM_BIN_DIRS.iter().any(|s| d.path.starts_with(s))
            && d.rule != crate::access::Rule::InvalidPath
        {
            return Ok(d.path);
        }
        match self.check_shell_path(cmd, None)? {
            Some(p) => Ok(p),
            None => Err(ShellError::DynamicPath {
                word: cmd.text.clone(),
            }),
        }
    }
}

fn is_rw_rule(rule: crate::access::Rule) -> bool {
    use crate::access::Rule;
    matches!(
        rule,
        Rule::Workspace | Rule::ReadWriteGrant | Rule::AllowedRoot
    )
}

fn deny(d: crate::access::Decision) -> Denial {
    Denial {
        path: d.path,
        access: d.access,
        rule: d.rule,
        detail: d.detail,
    }
}

fn bump(plan: &mut ShellPlan, risk: Risk, reason: String) {
    if risk > plan.risk {
        plan.risk = risk;
    }
    if risk > Risk::Low && !plan.reasons.contains(&reason) {
        plan.reasons.push(reason);
    }
}

/// `NAME=value` (a shell assignment word).
fn assignment(text: &str) -> Option<(&str, &str)> {
    let (name, value) = text.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    if (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        Some((name, value))
    } else {
        None
    }
}

/// The literal directory part of a glob: components before the first one with a glob char.
fn glob_prefix(text: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for part in text.split('/') {
        if part.contains(['*', '?', '[']) {
            break;
        }
        out.push(part);
    }
    let joined = out.join("/");
    if joined.is_empty() {
        if text.starts_with('/') {
            "/".into()
        } else {
            ".".into()
        }
    } else {
        joined
    }
}

/// Index in `args` of the command a wrapper runs, if any.
fn wrapped_command(wrapper: &str, args: &[&Word]) -> Option<usize> {
    let mut i = 0;
    let mut skip_value = matches!(wrapper, "timeout");
    while i < args.len() {
        let t = args[i].text.as_str();
        if t.starts_with('-') {
            // Options with a separate value.
            if matches!(
                (wrapper, t),
                ("nice", "-n")
                    | ("ionice", "-c")
                    | ("ionice", "-n")
                    | ("xargs", "-I")
                    | ("xargs", "-n")
                    | ("sudo", "-u")
                    | ("env", "-u")
                    | ("timeout", "-s")
                    | ("timeout", "-k")
                    | ("stdbuf", "-o")
                    | ("stdbuf", "-e")
                    | ("stdbuf", "-i")
            ) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if wrapper == "env" && assignment(t).is_some() {
            i += 1;
            continue;
        }
        if skip_value {
            skip_value = false;
            i += 1;
            continue;
        }
        return Some(i);
    }
    None
}
