//! Shell command analysis (rules §2.2): split the command into segments, check every path-looking
//! argument, `--opt=value` value and redirection target against the policy (the workspace or a
//! read-write root; the four devices as devices), allowlist each command against
//! `allowed_commands`, and classify the whole command low/medium/high.

pub mod git;
pub mod lex;
mod opaque;
mod paths;
mod programs;
pub mod risk;
mod sed;

use crate::access::{Access, Denial};
use crate::authorize::is_device;
use crate::policy::SecurityPolicy;
pub use lex::{parse, LexError, Redirect, RedirectKind, Script, Segment, Word};
use opaque::Launch;
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

/// Builtins whose `NAME=value` arguments set variables.
const DECLARERS: &[&str] = &["export", "declare", "typeset", "readonly", "local", "env"];

/// Most entries read from one directory when looking for symbolic links a glob may match.
const MAX_GLOB_SCAN: usize = 4096;

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
    /// Why the paths the line touches cannot be known before it runs (expansions, `cd`,
    /// inline code, programs started by other programs, `..` after a symbolic link, ...).
    /// An opaque line runs only inside a real sandbox (landlock or bubblewrap).
    pub opaque: Vec<String>,
    /// Directories `git` commands of the line work in (the workspace is implied), resolved:
    /// their repository configuration is read to neutralise the programs it names.
    pub git_dirs: Vec<PathBuf>,
    /// The line has several commands and one of them moves, copies, links or unpacks files: a
    /// path that does not exist yet may be a symbolic link by the time a later command uses it.
    #[serde(skip)]
    links_may_change: bool,
    /// Whether the workspace holds a symbolic link (looked up once, when first needed).
    #[serde(skip)]
    links_in_workspace: Option<bool>,
}

impl ShellPlan {
    /// Whether the line runs `git` (directly or through a wrapper or `sh -c`).
    pub fn runs_git(&self) -> bool {
        self.commands.iter().any(|c| c.name == "git")
    }
}

/// Warren's own programs: never run from an agent's shell, under any allowlist.
pub const WARREN_PROGRAMS: &[&str] = &["warren", "warren-desktop"];

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
    /// The program is Warren's own (the CLI or the desktop app): its control surface (config,
    /// approvals, cron, lifecycle, other agents' tools) is never an agent's, under any allowlist.
    #[error("command `{command}` is Warren's own program; no agent may run it, whatever allowed_commands says")]
    WarrenProgram {
        /// The program.
        command: String,
    },
    /// The program is not in `allowed_commands`.
    #[error("command `{command}` is not in allowed_commands of risk profile `{profile}`")]
    CommandNotAllowed {
        /// The program.
        command: String,
        /// The risk profile.
        profile: String,
    },
    /// An allowed program would start another program that cannot be known before it runs,
    /// and `allowed_commands` is restricted.
    #[error(
        "command `{command}`: {why}; allowed_commands of risk profile `{profile}` is restricted, so it is refused"
    )]
    UnknownProgram {
        /// The program that would start it.
        command: String,
        /// How it would start it.
        why: String,
        /// The risk profile.
        profile: String,
    },
    /// The line is opaque (its paths cannot be known statically) and the agent's effective
    /// sandbox is `none`.
    #[error(
        "sandbox_required: this command runs only inside a sandbox (landlock or bubblewrap) and the effective sandbox is none: {}",
        reasons.join("; ")
    )]
    SandboxRequired {
        /// Why the line is opaque.
        reasons: Vec<String>,
    },
}

impl SecurityPolicy {
    /// Analyses a shell command line against this policy. `Ok` means every path and program
    /// passed; the plan's risk then drives approval ([`SecurityPolicy::gate`]).
    pub fn check_shell(&self, command: &str) -> Result<ShellPlan, ShellError> {
        self.check_shell_in(command)
    }

    /// [`check_shell`](Self::check_shell) for a line run in the directory `base`: its relative
    /// words join `base` instead of the workspace. Only the anchor moves (the workspace field is
    /// nothing but the anchor of relative paths); every decision is the same `check`.
    pub fn check_shell_from(&self, base: &Path, command: &str) -> Result<ShellPlan, ShellError> {
        if base == self.workspace {
            return self.check_shell_in(command);
        }
        let mut anchored = self.clone();
        anchored.workspace = base.to_path_buf();
        anchored.check_shell_in(command)
    }

    fn check_shell_in(&self, command: &str) -> Result<ShellPlan, ShellError> {
        if command.trim().is_empty() {
            return Err(ShellError::Empty);
        }
        let script = lex::parse(command)?;
        if script.arithmetic && !self.allows_any_command() {
            return Err(ShellError::UnknownProgram {
                command: "$((...))".into(),
                why: "an arithmetic expansion or array subscript names a variable, and bash runs a command hidden in its value (`a[$(cmd)]`)".into(),
                profile: self.risk_profile_name.clone(),
            });
        }
        let mut plan = ShellPlan {
            commands: Vec::new(),
            risk: Risk::Low,
            reasons: Vec::new(),
            paths: Vec::new(),
            opaque: Vec::new(),
            git_dirs: Vec::new(),
            links_may_change: script.segments.len() > 1 && moves_files(&script),
            links_in_workspace: None,
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
            if is_net_device(&r.target.text) {
                // Not a file: the shell opens a connection (bash) or fails (dash).
                bump(
                    plan,
                    Risk::High,
                    format!("`{}` opens a network connection", r.target.text),
                );
                continue;
            }
            self.note_path_opacity(&r.target, plan);
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
            if let Some((name, value)) = assignment(&w.text) {
                self.check_assignment(name, w, plan)?;
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
                note_word_opacity(w, plan);
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
        let any = self.allows_any_command();
        if cmd.dynamic && !any {
            return Err(ShellError::CommandNotAllowed {
                command: cmd.text.clone(),
                profile: self.risk_profile_name.clone(),
            });
        }
        let name = if cmd.text.contains('/') {
            self.note_path_opacity(cmd, plan);
            let p = self.check_program_path(cmd)?;
            plan.paths.push(p);
            Path::new(&cmd.text)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            cmd.text.clone()
        };
        self.check_allowed(&name)?;
        for w in words {
            note_word_opacity(w, plan);
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
        if DECLARERS.contains(&name.as_str()) {
            for w in args {
                if let Some((var, _)) = assignment(&w.text) {
                    self.check_assignment(var, w, plan)?;
                }
            }
        }
        if name == "unset" {
            for w in args {
                if !w.text.starts_with('-') {
                    self.check_assignment(&w.text, w, plan)?;
                }
            }
        }
        if name == "git" {
            let call = git::parse_git(&arg_texts);
            for d in call.dirs.iter().chain(&call.git_dirs) {
                plan.git_dirs
                    .push(self.check(Path::new(d), Access::Read).path);
            }
        }
        let analysis = opaque::analyse(&name, args);
        for why in analysis.opaque {
            add_opaque(plan, why);
        }
        for p in analysis.paths {
            let w = Word {
                text: p,
                ..Word::default()
            };
            self.push_path(&w, plan)?;
        }
        let mut skip = vec![false; args.len()];
        for launch in analysis.launches {
            match launch {
                Launch::Command { start, end } => {
                    let end = end.min(args.len());
                    for s in skip.iter_mut().take(end).skip(start) {
                        *s = true;
                    }
                    self.check_command(&args[start..end], after_pipe, plan)?;
                }
                Launch::Script(text) => self.check_script(&text, plan)?,
                Launch::Program(program) => self.check_started(&program, plan)?,
                Launch::Unknown(why) => {
                    if !any {
                        return Err(ShellError::UnknownProgram {
                            command: name,
                            why,
                            profile: self.risk_profile_name.clone(),
                        });
                    }
                }
            }
        }
        for (w, skipped) in args.iter().zip(skip) {
            if !skipped {
                self.push_arg(w, plan)?;
            }
        }
        Ok(())
    }

    /// Whether `allowed_commands` is `["*"]` (any program).
    pub fn allows_any_command(&self) -> bool {
        self.risk.allowed_commands.iter().any(|c| c == "*")
    }

    fn check_allowed(&self, name: &str) -> Result<(), ShellError> {
        if WARREN_PROGRAMS.contains(&name) {
            return Err(ShellError::WarrenProgram {
                command: name.to_string(),
            });
        }
        let allowed = self.allows_any_command()
            || IMPLICIT_BUILTINS.contains(&name)
            || self.risk.allowed_commands.iter().any(|c| c == name);
        if allowed {
            Ok(())
        } else {
            Err(ShellError::CommandNotAllowed {
                command: name.to_string(),
                profile: self.risk_profile_name.clone(),
            })
        }
    }

    /// A program named by another program's option: allowlisted like a command.
    fn check_started(&self, program: &str, plan: &mut ShellPlan) -> Result<(), ShellError> {
        let w = Word {
            text: program.to_string(),
            ..Word::default()
        };
        let name = if program.contains('/') {
            let p = self.check_program_path(&w)?;
            plan.paths.push(p);
            Path::new(program)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        } else {
            program.to_string()
        };
        self.check_allowed(&name)?;
        let (risk, reason) = risk::classify(&name, &[], false);
        if let Some(r) = &reason {
            bump(plan, risk, r.clone());
        }
        plan.commands.push(CommandInfo { name, risk, reason });
        Ok(())
    }

    /// Shell code given as a string (`sh -c '...'`, `eval ...`): analysed like the line.
    fn check_script(&self, text: &str, plan: &mut ShellPlan) -> Result<(), ShellError> {
        let script = lex::parse(text)?;
        // The string runs inside a larger line: any mover in it counts.
        plan.links_may_change |= moves_files(&script);
        if script.background {
            bump(
                plan,
                Risk::Medium,
                "runs a command in the background".into(),
            );
        }
        for seg in &script.segments {
            self.check_segment(seg, plan)?;
        }
        Ok(())
    }

    /// `NAME=value` before a command or given to `export`/`env`: a variable that chooses
    /// which program runs (`PATH`, `LD_PRELOAD`, `GIT_*`, `PAGER`, ...) makes the line opaque
    /// and is refused under a restricted allowlist.
    fn check_assignment(
        &self,
        var: &str,
        w: &Word,
        plan: &mut ShellPlan,
    ) -> Result<(), ShellError> {
        note_word_opacity(w, plan);
        if programs::launch_var(var) {
            let why = format!("setting `{var}` changes which programs run or what they load");
            if !self.allows_any_command() {
                return Err(ShellError::UnknownProgram {
                    command: w.text.clone(),
                    why,
                    profile: self.risk_profile_name.clone(),
                });
            }
            add_opaque(plan, why);
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
        self.note_path_opacity(w, plan);
        if let Some(p) = self.check_shell_path(w, None)? {
            plan.paths.push(p);
        }
        Ok(())
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
pub(crate) fn assignment(text: &str) -> Option<(&str, &str)> {
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

/// `/dev/tcp/HOST/PORT`, `/dev/udp/HOST/PORT`: a network connection opened by the shell.
pub(crate) fn is_net_device(text: &str) -> bool {
    text.starts_with("/dev/tcp/") || text.starts_with("/dev/udp/")
}

/// Programs that move or copy directory entries (symbolic links included) to new names.
const MOVERS: &[&str] = &["mv", "cp", "rsync", "rename", "install"];

/// Whether some word of the script names one of [`MOVERS`].
fn moves_files(script: &Script) -> bool {
    script.segments.iter().flat_map(|s| &s.words).any(|w| {
        let base = w.text.rsplit('/').next().unwrap_or(&w.text);
        MOVERS.contains(&base)
    })
}

/// Records why the line is opaque (once per reason).
fn add_opaque(plan: &mut ShellPlan, why: String) {
    if !plan.opaque.contains(&why) {
        plan.opaque.push(why);
    }
}

/// Expansions and brace expansions make a word's final value unknown.
fn note_word_opacity(w: &Word, plan: &mut ShellPlan) {
    if w.dynamic {
        add_opaque(plan, format!("`{}` is expanded at run time", w.text));
    }
    if w.brace {
        add_opaque(plan, format!("`{}` is a brace expansion", w.text));
    }
}
