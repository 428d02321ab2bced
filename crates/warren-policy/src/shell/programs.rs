//! The programs the shell analyzer knows by name (shells, interpreters, editors, build tools,
//! launchers) and the wrappers whose options it parses exactly (`env`, `timeout`, `xargs`, ...)
//! to find the command they run.

/// Shells: with `-c` they run the string, otherwise a script file or their standard input.
pub(crate) const SHELLS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "fish",
    "csh",
    "tcsh",
    "ash",
    "busybox-sh",
];

/// Interpreters: inline code (`-c`, `-e`) or a script file, both invisible to the analyzer.
pub(crate) const INTERPRETERS: &[&str] = &[
    "python",
    "python2",
    "python3",
    "perl",
    "node",
    "nodejs",
    "ruby",
    "php",
    "lua",
    "luajit",
    "tclsh",
    "wish",
    "Rscript",
    "R",
    "deno",
    "bun",
    "jshell",
    "groovy",
    "julia",
    "pwsh",
    "expect",
    "osascript",
    "guile",
    "racket",
    "sbcl",
    "erl",
    "elixir",
    "swipl",
    "qjs",
];

pub(crate) const AWKS: &[&str] = &["awk", "gawk", "mawk", "nawk", "busybox-awk"];

/// Editors: their command options and scripts run programs.
pub(crate) const EDITORS: &[&str] = &[
    "vi",
    "vim",
    "nvim",
    "view",
    "vimdiff",
    "ex",
    "ed",
    "red",
    "nano",
    "pico",
    "emacs",
    "emacsclient",
    "joe",
    "mcedit",
    "kak",
    "hx",
];

/// Build tools and task runners: they run recipes and build scripts from files.
pub(crate) const BUILD_RUNNERS: &[&str] = &[
    "make", "gmake", "cmake", "ninja", "meson", "cargo", "npm", "npx", "pnpm", "yarn", "go",
    "gradle", "gradlew", "mvn", "ant", "rake", "bundle", "pip", "pip3", "poetry", "uv", "tox",
    "just", "scons", "bazel",
];

/// Programs that run a command the analyzer cannot reliably identify (through a shell string,
/// a tracer or debugger, another user or namespace, a scheduler or a terminal).
pub(crate) const UNKNOWN_LAUNCHERS: &[&str] = &[
    "sudo",
    "doas",
    "su",
    "pkexec",
    "runuser",
    "sg",
    "newgrp",
    "chroot",
    "unshare",
    "nsenter",
    "setpriv",
    "systemd-run",
    "machinectl",
    "flatpak-spawn",
    "firejail",
    "bwrap",
    "chrt",
    "taskset",
    "numactl",
    "setarch",
    "linux32",
    "linux64",
    "strace",
    "ltrace",
    "gdb",
    "lldb",
    "valgrind",
    "catchsegv",
    "perf",
    "watch",
    "parallel",
    "script",
    "at",
    "batch",
    "tmux",
    "screen",
    "dbus-run-session",
    "dbus-launch",
    "xdg-open",
    "gio",
    "open",
    "rlwrap",
    "entr",
    "inotifywait",
    "socat",
    "ssh-agent",
    "gpg-agent",
    "daemonize",
    "start-stop-daemon",
];

/// Variables that choose which program runs, or inject code into one.
pub(crate) fn launch_var(name: &str) -> bool {
    name.starts_with("GIT_")
        || name.starts_with("LD_")
        || matches!(
            name,
            "PATH"
                | "IFS"
                | "ENV"
                | "BASH_ENV"
                | "SHELLOPTS"
                | "BASHOPTS"
                | "PS4"
                | "PROMPT_COMMAND"
                | "SHELL"
                | "LESSOPEN"
                | "LESSCLOSE"
                | "LESSSECURE"
                | "PAGER"
                | "MANPAGER"
                | "MANOPT"
                | "EDITOR"
                | "VISUAL"
                | "BROWSER"
                | "SSH_ASKPASS"
                | "SUDO_ASKPASS"
                | "PYTHONSTARTUP"
                | "PYTHONPATH"
                | "PYTHONHOME"
                | "PERL5OPT"
                | "PERL5LIB"
                | "PERLLIB"
                | "RUBYOPT"
                | "RUBYLIB"
                | "NODE_OPTIONS"
                | "NODE_PATH"
                | "TAR_OPTIONS"
                | "ZIPOPT"
                | "GZIP"
                | "XZ_OPT"
                | "RSYNC_RSH"
                | "RSYNC_CONNECT_PROG"
                | "CVS_RSH"
                | "SYSTEMD_PAGER"
                | "SYSTEMD_EDITOR"
        )
}

/// How a precisely parsed wrapper takes its options.
pub(crate) struct Spec {
    /// Short options without a value.
    flags: &'static str,
    /// Short options whose value is attached or the next word.
    values: &'static str,
    /// Short options whose value, if any, is attached (`xargs -i{}`).
    optional: &'static str,
    /// Long options without a value.
    long_flags: &'static [&'static str],
    /// Long options whose value is after `=` or the next word.
    long_values: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `flock FILE`).
    positional: usize,
}

pub(crate) fn spec(name: &str) -> Option<Spec> {
    let s = |flags, values, long_flags, long_values, positional| Spec {
        flags,
        values,
        optional: "",
        long_flags,
        long_values,
        positional,
    };
    Some(match name {
        "env" => s(
            "i0v",
            "u",
            &["--ignore-environment", "--null", "--debug"],
            &["--unset"],
            0,
        ),
        "nice" => s("", "n", &[], &["--adjustment"], 0),
        "nohup" => s("", "", &[], &[], 0),
        "timeout" => s(
            "v",
            "sk",
            &["--preserve-status", "--foreground", "--verbose"],
            &["--signal", "--kill-after"],
            1,
        ),
        "stdbuf" => s("", "ioe", &[], &["--input", "--output", "--error"], 0),
        "command" => s("pvV", "", &[], &[], 0),
        "exec" => s("cl", "a", &[], &[], 0),
        "ionice" => s("t", "cnpPu", &["--ignore"], &["--class", "--classdata"], 0),
        "setsid" => s("cfw", "", &["--ctty", "--fork", "--wait"], &[], 0),
        "flock" => s(
            "sxunoFe",
            "wE",
            &[
                "--shared",
                "--exclusive",
                "--unlock",
                "--nonblock",
                "--close",
                "--no-fork",
                "--verbose",
            ],
            &["--timeout", "--conflict-exit-code"],
            1,
        ),
        "xargs" => Spec {
            optional: "eil",
            ..s(
                "0prtx",
                "aEdInLPs",
                &[
                    "--null",
                    "--no-run-if-empty",
                    "--interactive",
                    "--verbose",
                    "--exit",
                    "--open-tty",
                    "--show-limits",
                ],
                &[
                    "--arg-file",
                    "--delimiter",
                    "--max-lines",
                    "--max-args",
                    "--max-procs",
                    "--max-chars",
                    "--process-slot-var",
                ],
                0,
            )
        },
        _ => return None,
    })
}

/// Index of the command a wrapper runs (`Ok(None)`: it runs none), or why it cannot be told.
pub(crate) fn wrapped(name: &str, args: &[&str]) -> Result<Option<usize>, String> {
    let Some(sp) = spec(name) else {
        return Ok(None);
    };
    let unknown = |a: &str| Err(format!("`{name}` option `{a}` is not understood"));
    let mut i = 0;
    let mut positional = sp.positional;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            i += 1;
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let head = long.split_once('=').map(|(h, _)| h).unwrap_or(long);
            let head = format!("--{head}");
            let attached =
                long.contains('=') && (sp.long_values.contains(&head.as_str()) || name == "xargs");
            let flag = sp.long_flags.contains(&head.as_str())
                || (name == "xargs" && matches!(head.as_str(), "--replace" | "--eof"));
            if attached || flag {
                i += 1;
            } else if sp.long_values.contains(&head.as_str()) {
                i += 2;
            } else {
                return unknown(a);
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            if name == "nice" && a[1..].chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            if name == "env" && a == "-" {
                i += 1;
                continue;
            }
            let letters: Vec<char> = a[1..].chars().collect();
            let mut next_is_value = false;
            for (k, c) in letters.iter().enumerate() {
                if sp.optional.contains(*c) {
                    break;
                }
                if sp.values.contains(*c) {
                    next_is_value = k + 1 == letters.len();
                    break;
                }
                if !sp.flags.contains(*c) {
                    return unknown(a);
                }
            }
            i += if next_is_value { 2 } else { 1 };
            continue;
        }
        if name == "env" && super::assignment(a).is_some() {
            i += 1;
            continue;
        }
        if positional > 0 {
            positional -= 1;
            // `flock FD` locks a descriptor and runs nothing.
            if name == "flock" && a.chars().all(|c| c.is_ascii_digit()) {
                return Ok(None);
            }
            i += 1;
            continue;
        }
        return Ok(Some(i));
    }
    Ok((i < args.len() && positional == 0).then_some(i))
}
