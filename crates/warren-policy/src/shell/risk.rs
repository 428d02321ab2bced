//! Low / medium / high risk classification of one simple command (rules §2.2, §2.3).

use super::git::{key_runs_program, parse_git, sub_runs_program, GIT_NETWORK};
use serde::Serialize;

/// How risky a shell command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Risk {
    /// Reads and inspects.
    Low,
    /// Modifies files or runs arbitrary code inside the boundary.
    Medium,
    /// Destroys, escalates privileges or reaches the network.
    High,
}

impl Risk {
    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        }
    }
}

const HIGH: &[&str] = &[
    "sudo",
    "su",
    "doas",
    "pkexec",
    "dd",
    "shutdown",
    "reboot",
    "poweroff",
    "halt",
    "init",
    "mount",
    "umount",
    "iptables",
    "nft",
    "useradd",
    "userdel",
    "usermod",
    "passwd",
    "chown",
    "chgrp",
    "crontab",
    "killall",
    "pkill",
    "eval",
    "curl",
    "wget",
    "nc",
    "ncat",
    "netcat",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "telnet",
    "ftp",
    "socat",
    "systemctl",
    "insmod",
    "rmmod",
    "modprobe",
    // Reach other services of the session or system, or leave the sandbox's namespaces.
    "systemd-run",
    "dbus-send",
    "gdbus",
    "busctl",
    "loginctl",
    "nsenter",
    "unshare",
    "setsid",
    "machinectl",
    "flatpak-spawn",
    "at",
    "batch",
    "dbus-run-session",
    "dbus-launch",
    "xdg-open",
    "chroot",
    "runuser",
    // Run other programs through their arguments or a terminal.
    "vi",
    "vim",
    "nvim",
    "view",
    "vimdiff",
    "ex",
    "nano",
    "pico",
    "ed",
    "red",
    "emacs",
    "emacsclient",
    "watch",
    "parallel",
    "strace",
    "ltrace",
    "gdb",
    "lldb",
    "valgrind",
    "make",
    "gmake",
];

const LOW: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "find",
    "echo",
    "pwd",
    "date",
    "sort",
    "uniq",
    "diff",
    "stat",
    "file",
    "tree",
    "cut",
    "tr",
    "which",
    "whoami",
    "id",
    "uname",
    "printenv",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "du",
    "df",
    "cmp",
    "comm",
    "less",
    "more",
    "md5sum",
    "sha512sum",
    "sha1sum",
    "sha256sum",
    "true",
    "false",
    "cd",
    "test",
    "[",
    "[[",
    "printf",
    "seq",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "column",
    "fold",
    "rev",
    "tac",
    "paste",
    "join",
    "expr",
    "sleep",
    "jq",
    "type",
    ":",
    // Wrappers: the command they run is classified on its own.
    "timeout",
    "nice",
    "nohup",
    "env",
    "stdbuf",
    "xargs",
    "command",
    "exec",
    "ionice",
];

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh"];

const GIT_LOW: &[&str] = &[
    "status",
    "log",
    "diff",
    "show",
    "rev-parse",
    "ls-files",
    "blame",
    "grep",
    "describe",
    "shortlog",
    "show-ref",
    "cat-file",
    "ls-tree",
    "rev-list",
    "version",
    "help",
];
/// Subcommands that change configuration or run programs.
const GIT_HIGH: &[&str] = &[
    "config",
    "filter-branch",
    "difftool",
    "mergetool",
    "fsmonitor--daemon",
];

/// Classifies one command: `name` is the command's base name, `args` its arguments (as
/// written, after quote removal), `after_pipe` whether its input comes from a pipe. Returns the
/// risk and, for medium and high, why.
pub fn classify(name: &str, args: &[&str], after_pipe: bool) -> (Risk, Option<String>) {
    let has = |flag: &str| args.contains(&flag);
    let has_short = |c: char| {
        args.iter()
            .any(|a| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c))
    };
    if HIGH.contains(&name) || name.starts_with("mkfs") {
        return (Risk::High, Some(format!("`{name}` is a high-risk command")));
    }
    if let Some(a) = args.iter().find(|a| {
        let v = a.split_once('=').map(|(_, v)| v).unwrap_or(a);
        super::is_net_device(v)
    }) {
        return (
            Risk::High,
            Some(format!("`{a}` opens a network connection")),
        );
    }
    if let Some(why) = runs_program_option(name, args) {
        return (Risk::High, Some(why));
    }
    if SHELLS.contains(&name) {
        if after_pipe || has("-c") {
            return (
                Risk::High,
                Some(format!(
                    "`{name}` runs a script the analyzer cannot inspect"
                )),
            );
        }
        return (Risk::Medium, Some(format!("`{name}` runs a script")));
    }
    match name {
        "rm" => {
            let recursive = has_short('r') || has_short('R') || has("--recursive");
            let force = has_short('f') || has("--force");
            let root = args
                .iter()
                .any(|a| matches!(*a, "/" | "/*" | "~" | "~/" | "." | ".." | "*"));
            if (recursive && force) || root {
                return (Risk::High, Some("recursive forced removal".into()));
            }
            return (Risk::Medium, Some("`rm` removes files".into()));
        }
        "chmod" if has_short('R') || has("--recursive") => {
            return (Risk::High, Some("recursive permission change".into()));
        }
        "find" => {
            if args
                .iter()
                .any(|a| matches!(*a, "-exec" | "-execdir" | "-ok" | "-okdir" | "-delete"))
            {
                return (
                    Risk::High,
                    Some("`find` with -exec/-delete runs or removes beyond the allowlist".into()),
                );
            }
            return (Risk::Low, None);
        }
        "sed" if has_short('i') || args.iter().any(|a| a.starts_with("--in-place")) => {
            return (Risk::Medium, Some("`sed -i` edits files".into()));
        }
        "git" => return classify_git(args),
        "npm" | "pnpm" | "yarn" | "pip" | "pip3" | "cargo" | "gem" | "go" | "apt" | "apt-get"
            if args
                .iter()
                .any(|a| matches!(*a, "install" | "add" | "get" | "publish" | "update")) =>
        {
            return (
                Risk::High,
                Some(format!("`{name}` fetches and runs code from the network")),
            );
        }
        _ => {}
    }
    if LOW.contains(&name) {
        return (Risk::Low, None);
    }
    (
        Risk::Medium,
        Some(format!("`{name}` may modify files or run code")),
    )
}

/// Options that make a (usually harmless) program run another program.
fn runs_program_option(name: &str, args: &[&str]) -> Option<String> {
    let any = |pred: &dyn Fn(&str) -> bool| args.iter().any(|a| pred(a));
    let cluster =
        |a: &str, c: char| a.starts_with('-') && !a.starts_with("--") && a[1..].contains(c);
    let hit = match name {
        "sort" => any(&|a| a.starts_with("--compress-program")),
        "tar" => {
            any(&|a| {
                a.starts_with("--to-command")
                    || a.starts_with("--use-compress-program")
                    || a.starts_with("--checkpoint-action")
                    || a.starts_with("--info-script")
                    || a.starts_with("--new-volume-script")
                    || a.starts_with("--rsh-command")
                    || a.starts_with("--rmt-command")
                    || a == "-I"
                    || a == "-F"
                    || (cluster(a, 'I') || cluster(a, 'F'))
            }) || args
                .first()
                .is_some_and(|a| !a.starts_with('-') && a.contains(['I', 'F']))
        }
        "find" => any(&|a| matches!(a, "-exec" | "-execdir" | "-ok" | "-okdir")),
        "rsync" => any(&|a| a.starts_with("--rsh") || a == "-e" || a.starts_with("--rsync-path")),
        "zip" => any(&|a| a == "-TT" || a.starts_with("--unzip-command")),
        "less" | "more" | "most" => any(&|a| a.starts_with('+')),
        "man" => any(&|a| {
            a.starts_with("-P")
                || a.starts_with("--pager")
                || a.starts_with("-H")
                || a.starts_with("--html")
        }),
        "script" => any(&|a| a == "-c" || a.starts_with("--command")),
        "flock" => args.len() > 1,
        "ssh" | "scp" | "sftp" => any(&|a| {
            let l = a.to_ascii_lowercase();
            l.contains("proxycommand") || l.contains("localcommand") || a == "-F"
        }),
        "awk" | "gawk" | "mawk" | "nawk" => {
            any(&|a| a.contains("system") || a.contains('|') || a.contains("getline") || a == "-f")
        }
        "sed" => {
            let (_, exec) = super::sed::sed_effects(args);
            exec
        }
        "env" => any(&|a| a.starts_with("-S") || a.starts_with("--split-string")),
        _ => false,
    };
    hit.then(|| format!("`{name}` is given an option that runs another program"))
}

fn classify_git(args: &[&str]) -> (Risk, Option<String>) {
    let call = parse_git(args);
    if let Some(dir) = &call.exec_path {
        return (
            Risk::High,
            Some(format!(
                "`git --exec-path={dir}` runs git programs from that directory"
            )),
        );
    }
    if let Some((k, _)) = call.config.iter().find(|(k, v)| key_runs_program(k, v)) {
        return (
            Risk::High,
            Some(format!("`git -c {k}` makes git run a program")),
        );
    }
    let Some(sub) = call.sub.as_deref() else {
        return (Risk::Low, None);
    };
    let rest = &args[(call.sub_at + 1).min(args.len())..];
    let args = rest;
    if GIT_NETWORK.contains(&sub)
        || (sub == "archive" && args.iter().any(|a| a.starts_with("--remote")))
    {
        return (Risk::High, Some(format!("`git {sub}` reaches the network")));
    }
    if GIT_HIGH.contains(&sub) {
        return (
            Risk::High,
            Some(format!("`git {sub}` changes git config or runs programs")),
        );
    }
    if let Some(what) = sub_runs_program(sub, args) {
        return (Risk::High, Some(format!("`git {what}` runs a command")));
    }
    if (sub == "reset" && args.contains(&"--hard"))
        || (sub == "clean" && args.iter().any(|a| a.starts_with("-f") || *a == "--force"))
    {
        return (Risk::High, Some(format!("`git {sub}` discards work")));
    }
    if GIT_LOW.contains(&sub) {
        return (Risk::Low, None);
    }
    if sub == "branch" || sub == "tag" || sub == "stash" || sub == "worktree" {
        let listing = args.is_empty()
            || args
                .iter()
                .any(|a| matches!(*a, "list" | "-l" | "--list" | "-a" | "-v" | "-vv"));
        if listing {
            return (Risk::Low, None);
        }
    }
    (
        Risk::Medium,
        Some(format!("`git {sub}` modifies the repository")),
    )
}

#[cfg(test)]
#[path = "risk_tests.rs"]
mod tests;
