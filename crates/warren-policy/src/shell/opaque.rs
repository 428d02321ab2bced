//! What one simple command does beyond its literal arguments: whether its paths can be known
//! statically (an "opaque" command runs only inside a real sandbox, rules §4), and which other
//! programs it starts through its arguments or options (each must itself be allowed).

use super::git;
use super::lex::Word;
use super::programs::{
    spec, wrapped, AWKS, BUILD_RUNNERS, EDITORS, INTERPRETERS, SHELLS, UNKNOWN_LAUNCHERS,
};
use super::sed;

/// A program started by the command being analysed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Launch {
    /// `args[start..end]` is a command line (program and arguments) run by this command.
    Command {
        /// First word (the program).
        start: usize,
        /// One past the last word.
        end: usize,
    },
    /// A shell command line given as one string (`sh -c '...'`, `eval ...`).
    Script(String),
    /// A program named by an option value (`sort --compress-program=gzip`).
    Program(String),
    /// A program or shell command that cannot be known before it runs.
    Unknown(String),
}

/// The analysis of one command.
#[derive(Debug, Default)]
pub(crate) struct Analysis {
    /// Why its paths cannot be known statically (empty when they can).
    pub opaque: Vec<String>,
    /// Programs it starts.
    pub launches: Vec<Launch>,
    /// Operand values that are paths although written `key=value` (`dd if=...`).
    pub paths: Vec<String>,
}

fn value_of<'a>(args: &[&'a str], i: usize, short: &str, long: &str) -> Option<Option<&'a str>> {
    let a = args[i];
    if a == short || a == long {
        return Some(args.get(i + 1).copied());
    }
    if let Some(v) = a.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
        return Some(Some(v));
    }
    if !short.is_empty() && short.len() == 2 && !short.starts_with("--") {
        if let Some(v) = a.strip_prefix(short) {
            if !v.is_empty() && !a.starts_with("--") {
                return Some(Some(v));
            }
        }
    }
    None
}

/// The first word of a program value (`"gzip -9"` is `gzip`), or unknown when it is a shell
/// string or empty.
fn program_value(owner: &str, opt: &str, v: Option<&str>) -> Launch {
    match v {
        Some(v)
            if !v.trim().is_empty()
                && !v.contains(['$', '`', ';', '|', '&', '<', '>', '(', ')', '\'', '"']) =>
        {
            Launch::Program(v.split_whitespace().next().unwrap_or(v).to_string())
        }
        _ => Launch::Unknown(format!(
            "`{owner} {opt}` names a program that cannot be checked"
        )),
    }
}

/// Analyses command `name` (base name) with its arguments.
pub(crate) fn analyse(name: &str, words: &[&Word]) -> Analysis {
    let args: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    let mut an = Analysis::default();
    let mut op: Vec<String> = Vec::new();
    let mut launches = Vec::new();
    let unknown = |why: &str| Launch::Unknown(why.to_string());
    let version_only = args.iter().all(|a| {
        matches!(
            *a,
            "--version" | "-V" | "--help" | "-h" | "-v" | "version" | "help"
        )
    }) && !args.is_empty();
    if spec(name).is_some() {
        let mut split = false;
        if name == "env" {
            if args
                .iter()
                .any(|a| a.starts_with("-S") || a.starts_with("--split-string"))
            {
                split = true;
                op.push("`env -S` splits a string into a command".into());
                launches.push(unknown("`env -S` runs a command built from a string"));
            }
            if args
                .iter()
                .any(|a| a.starts_with("-C") || a.starts_with("--chdir"))
            {
                op.push(
                    "`env -C` changes the directory relative paths are resolved against".into(),
                );
            }
        }
        if name == "env"
            && args.iter().any(|a| {
                matches!(*a, "-" | "-i" | "--ignore-environment" | "-u" | "--unset")
                    || a.starts_with("--unset=")
                    || (a.starts_with('-') && !a.starts_with("--") && a.contains(['i', 'u']))
            })
        {
            launches.push(unknown(
                "`env -i`/`-u` removes variables Warren sets for the programs it runs",
            ));
        }
        if name == "xargs" {
            op.push("`xargs` builds command arguments from its input".into());
        }
        if !split {
            match wrapped(name, &args) {
                Ok(Some(i)) => launches.push(Launch::Command {
                    start: i,
                    end: args.len(),
                }),
                Ok(None) => {}
                Err(why) => {
                    op.push(why.clone());
                    launches.push(Launch::Unknown(why));
                }
            }
        }
        an.opaque = op;
        an.launches = launches;
        return an;
    }
    if let Some(opt) = args
        .iter()
        .enumerate()
        .find(|(i, a)| names_files_elsewhere(name, *i, a))
        .map(|(_, a)| *a)
    {
        op.push(format!(
            "`{name} {opt}` reads the names of the files it opens from a file or its input"
        ));
    }
    match name {
        "[[" if args
            .iter()
            .any(|a| matches!(*a, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" | "-v")) =>
        {
            launches.push(unknown(
                "`[[` evaluates its operands as arithmetic, and bash runs a command hidden in a variable's value (`a[$(cmd)]`)",
            ));
        }
        "cd" | "pushd" | "popd" => {
            op.push(format!(
                "`{name}` changes the directory relative paths are resolved against"
            ));
        }
        "eval" => {
            op.push("`eval` runs a string as shell code".into());
            launches.push(script_of(words, 0, "eval"));
        }
        "builtin" if !args.is_empty() => {
            launches.push(Launch::Command {
                start: 0,
                end: args.len(),
            });
        }
        "trap" => {
            // `trap 'code' SIGNAL...`: the code runs later in this shell.
            if let Some(i) = args.iter().position(|a| !a.starts_with('-')) {
                if args.len() > i + 1 {
                    op.push("`trap` runs shell code when a signal arrives".into());
                    launches.push(script_of(words, i, "trap"));
                }
            }
        }
        "source" | "." => {
            op.push(format!("`{name}` runs a script file"));
            launches.push(unknown(
                "a sourced script runs commands the analyzer cannot see",
            ));
        }
        n if SHELLS.contains(&n) && !version_only => {
            op.push(format!("`{n}` runs shell code the analyzer does not see"));
            match shell_string(&args) {
                Some(i) => launches.push(script_of(words, i, n)),
                None if args.iter().any(|a| is_short_cluster_with(a, 'c')) => {
                    launches.push(unknown("`sh -c` without a command string"));
                }
                None => launches.push(Launch::Unknown(format!(
                    "`{n}` runs a script file or its input"
                ))),
            }
        }
        n if (INTERPRETERS.contains(&n) || n.starts_with("python")) && !version_only => {
            op.push(format!("`{n}` runs code the analyzer does not see"));
        }
        n if AWKS.contains(&n) => {
            op.push(format!("`{n}` programs open files and run commands"));
            let file = args.iter().any(|a| *a == "-f" || a.starts_with("--file"));
            let prog = args.iter().find(|a| !a.starts_with('-'));
            let runs = file
                || prog.is_none_or(|p| {
                    p.contains("system") || p.contains('|') || p.contains("getline")
                });
            if runs {
                launches.push(Launch::Unknown(format!("`{n}` program may run commands")));
            }
        }
        "sed" => {
            let (io, exec) = sed::sed_effects(&args);
            if io || exec {
                op.push("`sed` script reads or writes files it names, or runs commands".into());
            }
            if exec {
                launches.push(unknown("`sed` script runs commands (`e`)"));
            }
        }
        "find" => {
            let mut i = 0;
            while i < args.len() {
                if matches!(args[i], "-exec" | "-execdir" | "-ok" | "-okdir") {
                    op.push(format!("`find {}` runs a command on each match", args[i]));
                    let start = i + 1;
                    let end = (start..args.len())
                        .find(|k| matches!(args[*k], ";" | "+"))
                        .unwrap_or(args.len());
                    if start < end {
                        launches.push(Launch::Command { start, end });
                    }
                    i = end;
                }
                i += 1;
            }
        }
        "busybox" if !args.is_empty() => {
            op.push("`busybox` runs an applet the analyzer does not model".into());
            launches.push(Launch::Command {
                start: 0,
                end: args.len(),
            });
        }
        "dd" => {
            for a in &args {
                for key in ["if=", "of="] {
                    if let Some(v) = a.strip_prefix(key) {
                        op.push(format!("`dd {key}` names a file in an operand"));
                        an.paths.push(v.to_string());
                    }
                }
            }
        }
        "tar" | "bsdtar" if extracts(&args) => {
            op.push(format!(
                "`{name}` unpacks entries (symbolic links included) the analyzer does not see"
            ));
            tar(&args, &mut op, &mut launches);
        }
        "dpkg-deb" | "dpkg"
            if args.iter().any(|a| {
                matches!(
                    *a,
                    "-x" | "-X" | "-R" | "--extract" | "--vextract" | "--raw-extract"
                ) || (name == "dpkg-deb"
                    && a.starts_with('-')
                    && !a.starts_with("--")
                    && (a.contains('x') || a.contains('X') || a.contains('R')))
            }) =>
        {
            op.push(format!(
                "`{name}` unpacks entries (symbolic links included) the analyzer does not see"
            ));
        }
        "patch" => {
            op.push(
                "`patch` creates, renames and replaces files (symbolic links included) named inside the patch"
                    .into(),
            );
        }
        "unzip" | "cpio" | "pax" | "7z" | "7za" | "7zr" | "ar" | "unsquashfs" | "rpm2cpio" => {
            op.push(format!(
                "`{name}` unpacks entries (symbolic links included) the analyzer does not see"
            ));
        }
        "cp" if args.iter().any(|a| {
            *a == "--symbolic-link"
                || (a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
        }) =>
        {
            op.push("`cp -s` creates symbolic links".into());
        }
        "ln" if args.iter().any(|a| {
            *a == "--symbolic" || (a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
        }) =>
        {
            op.push("`ln -s` creates a link that later paths may cross".into());
        }
        "sort" => {
            for i in 0..args.len() {
                if let Some(v) = value_of(&args, i, "", "--compress-program") {
                    op.push("`sort --compress-program` runs a program".into());
                    launches.push(program_value("sort", "--compress-program", v));
                }
            }
        }
        "tar" => tar(&args, &mut op, &mut launches),
        "rsync" => {
            for i in 0..args.len() {
                if let Some(v) = value_of(&args, i, "-e", "--rsh") {
                    op.push("`rsync -e` runs a remote shell program".into());
                    launches.push(program_value("rsync", "-e", v));
                } else if args[i].starts_with("--rsync-path") {
                    launches.push(unknown("`rsync --rsync-path` runs a program"));
                } else if args[i].starts_with('-')
                    && !args[i].starts_with("--")
                    && args[i].contains('e')
                {
                    launches.push(unknown("`rsync -e` in an option cluster runs a program"));
                }
            }
        }
        "zip"
            if args
                .iter()
                .any(|a| *a == "-TT" || a.starts_with("--unzip-command")) =>
        {
            op.push("`zip -TT` runs a command".into());
            launches.push(unknown("`zip -TT` runs a shell command"));
        }
        "man"
            if args.iter().any(|a| {
                a.starts_with("-P")
                    || a.starts_with("--pager")
                    || a.starts_with("-H")
                    || a.starts_with("--html")
            }) =>
        {
            op.push("`man -P` runs a pager program".into());
            launches.push(unknown("`man -P`/`-H` runs a program"));
        }
        "less" | "more" | "most" if args.iter().any(|a| a.starts_with('+')) => {
            op.push(format!("`{name} +cmd` runs pager commands"));
            launches.push(Launch::Unknown(format!("`{name} +cmd` may run a shell")));
        }
        n if EDITORS.contains(&n) => {
            op.push(format!("`{n}` can run commands"));
            if args.iter().any(|a| {
                a.starts_with('+')
                    || matches!(
                        *a,
                        "-c" | "--cmd" | "-S" | "-u" | "-x" | "--eval" | "-l" | "--load" | "-s"
                    )
            }) {
                launches.push(Launch::Unknown(format!("`{n}` is given commands to run")));
            }
        }
        "ssh" | "scp" | "sftp" => {
            for (i, a) in args.iter().enumerate() {
                let opt = match *a {
                    "-o" => args.get(i + 1).copied().unwrap_or(""),
                    a if a.starts_with("-o") => &a[2..],
                    _ => "",
                };
                let key = opt
                    .split(['=', ' '])
                    .next()
                    .unwrap_or("")
                    .to_ascii_lowercase();
                if matches!(
                    key.as_str(),
                    "proxycommand"
                        | "localcommand"
                        | "permitlocalcommand"
                        | "knownhostscommand"
                        | "remotecommand"
                        | "match"
                ) || *a == "-F"
                    || (*a == "-S" && name != "ssh")
                {
                    op.push(format!("`{name}` option runs a local command"));
                    launches.push(Launch::Unknown(format!("`{name}` option runs a command")));
                }
            }
        }
        "git" => git_launches(&args, &mut op, &mut launches),
        n if BUILD_RUNNERS.contains(&n) && !version_only => {
            op.push(format!("`{n}` runs recipes and build scripts from files"));
        }
        n if UNKNOWN_LAUNCHERS.contains(&n) && !version_only => {
            op.push(format!("`{n}` runs a command the analyzer cannot identify"));
            launches.push(Launch::Unknown(format!(
                "`{n}` runs a command the analyzer cannot identify"
            )));
        }
        _ => {}
    }
    an.opaque = op;
    an.launches = launches;
    an
}

/// An option by which a program takes the names of the files it opens from a file or its
/// standard input (`tar -T list`, `--files0-from=list`): those paths are unknown statically.
fn names_files_elsewhere(name: &str, index: usize, a: &str) -> bool {
    let long = |o: &str| a == o || a.strip_prefix(o).is_some_and(|r| r.starts_with('='));
    if long("--files0-from") || long("--files-from") || a == "-files0-from" {
        return true;
    }
    match name {
        "tar" | "bsdtar" => {
            is_short_cluster_with(a, 'T') || (index == 0 && !a.starts_with('-') && a.contains('T'))
        }
        "file" => is_short_cluster_with(a, 'f'),
        "zip" => a == "-@" || is_short_cluster_with(a, '@'),
        _ => false,
    }
}

fn is_short_cluster_with(a: &str, c: char) -> bool {
    a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c)
}

/// Index of the command string of `sh -c STRING`, if `-c` is given.
fn shell_string(args: &[&str]) -> Option<usize> {
    let mut has_c = false;
    for (i, a) in args.iter().enumerate() {
        if *a == "--" {
            return if has_c {
                Some(i + 1).filter(|k| *k < args.len())
            } else {
                None
            };
        }
        if a.starts_with('-') || a.starts_with('+') {
            if a == &"-o" || a == &"+o" {
                continue;
            }
            if is_short_cluster_with(a, 'c') {
                has_c = true;
            }
            continue;
        }
        return has_c.then_some(i);
    }
    None
}

/// The shell code of `words[i..]` (joined as `eval` does), or unknown when it is built at run time.
fn script_of(words: &[&Word], i: usize, owner: &str) -> Launch {
    let rest = &words[i.min(words.len())..];
    if rest.iter().any(|w| w.dynamic) {
        return Launch::Unknown(format!("`{owner}` runs shell code built at run time"));
    }
    let text = if owner == "eval" {
        rest.iter()
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        rest.first().map(|w| w.text.clone()).unwrap_or_default()
    };
    Launch::Script(text)
}

fn tar(args: &[&str], op: &mut Vec<String>, launches: &mut Vec<Launch>) {
    for (i, a) in args.iter().enumerate() {
        let head = a.split_once('=').map(|(h, _)| h).unwrap_or(a);
        match head {
            "-I" | "--use-compress-program" | "--rsh-command" | "--rmt-command" => {
                op.push(format!("`tar {head}` runs a program"));
                let v = value_of(args, i, "-I", head).flatten();
                launches.push(program_value("tar", head, v));
            }
            "--to-command"
            | "--checkpoint-action"
            | "--info-script"
            | "--new-volume-script"
            | "-F" => {
                op.push(format!("`tar {head}` runs a command"));
                launches.push(Launch::Unknown(format!(
                    "`tar {head}` runs a shell command"
                )));
            }
            _ => {
                let cluster = if a.starts_with('-') && !a.starts_with("--") {
                    Some(&a[1..])
                } else if i == 0 && !a.starts_with('-') {
                    Some(*a)
                } else {
                    None
                };
                if let Some(c) = cluster.filter(|c| c.len() > 1 && c.contains(['I', 'F'])) {
                    let _ = c;
                    op.push("`tar -I`/`-F` in an option cluster runs a program".into());
                    launches.push(Launch::Unknown(
                        "`tar -I`/`-F` in an option cluster runs a program".into(),
                    ));
                }
            }
        }
    }
}

fn git_launches(args: &[&str], op: &mut Vec<String>, launches: &mut Vec<Launch>) {
    op.push("`git` runs programs named in repository configuration".into());
    let call = git::parse_git(args);
    for (k, v) in &call.config {
        if git::key_runs_program(k, v) {
            launches.push(Launch::Unknown(format!(
                "`git -c {k}` makes git run a program"
            )));
        }
    }
    if call.exec_path.is_some() {
        launches.push(Launch::Unknown(
            "`git --exec-path=` runs programs from a chosen directory".into(),
        ));
    }
    if let Some(sub) = &call.sub {
        let rest = &args[(call.sub_at + 1).min(args.len())..];
        if let Some(what) = git::sub_runs_program(sub, rest) {
            launches.push(Launch::Unknown(format!("`git {what}` runs a command")));
        }
    }
}

/// Whether `tar` arguments select extraction (`-x`, `--extract`, `--get`, `xf`, `-xzf`, ...).
fn extracts(args: &[&str]) -> bool {
    args.iter().enumerate().any(|(i, a)| {
        matches!(*a, "--extract" | "--get")
            || (a.starts_with('-') && !a.starts_with("--") && a.contains('x'))
            || (i == 0 && !a.starts_with('-') && a.contains('x'))
    })
}
