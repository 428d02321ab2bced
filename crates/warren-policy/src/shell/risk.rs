//! Low / medium / high risk classification of one simple command (SPEC §2.2, §2.3).

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
    "less",
    "more",
    "cmp",
    "comm",
    "md5sum",
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
    "setsid",
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
const GIT_HIGH: &[&str] = &[
    "push",
    "fetch",
    "pull",
    "clone",
    "submodule",
    "remote",
    "config",
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

fn classify_git(args: &[&str]) -> (Risk, Option<String>) {
    let sub = args.iter().find(|a| !a.starts_with('-')).copied();
    let Some(sub) = sub else {
        return (Risk::Low, None);
    };
    if GIT_HIGH.contains(&sub) {
        return (
            Risk::High,
            Some(format!(
                "`git {sub}` reaches the network or changes git config"
            )),
        );
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
        let listing = args.len() == 1
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
mod tests {
    use super::*;

    #[test]
    fn classification_table() {
        let cases: &[(&str, &[&str], bool, Risk)] = &[
            ("ls", &["-la"], false, Risk::Low),
            ("cat", &["a.txt"], false, Risk::Low),
            ("grep", &["-r", "x", "."], false, Risk::Low),
            ("find", &[".", "-name", "*.rs"], false, Risk::Low),
            ("find", &[".", "-exec", "rm", "{}", ";"], false, Risk::High),
            ("rm", &["a.txt"], false, Risk::Medium),
            ("rm", &["-rf", "build"], false, Risk::High),
            ("rm", &["-r", "-f", "build"], false, Risk::High),
            ("rm", &["-r", "build"], false, Risk::Medium),
            ("rm", &["/"], false, Risk::High),
            ("mv", &["a", "b"], false, Risk::Medium),
            ("sed", &["-i", "s/a/b/", "f"], false, Risk::Medium),
            ("sed", &["s/a/b/", "f"], false, Risk::Medium),
            ("sudo", &["ls"], false, Risk::High),
            ("curl", &["http://x"], false, Risk::High),
            ("sh", &[], true, Risk::High),
            ("bash", &["-c", "ls"], false, Risk::High),
            ("bash", &["script.sh"], false, Risk::Medium),
            ("git", &["status"], false, Risk::Low),
            ("git", &["log", "-n", "3"], false, Risk::Low),
            ("git", &["commit", "-m", "x"], false, Risk::Medium),
            ("git", &["push"], false, Risk::High),
            ("git", &["reset", "--hard"], false, Risk::High),
            ("git", &["branch"], false, Risk::Low),
            ("git", &["branch", "feature"], false, Risk::Medium),
            ("npm", &["install", "left-pad"], false, Risk::High),
            ("cargo", &["build"], false, Risk::Medium),
            ("mkfs.ext4", &["/dev/sda"], false, Risk::High),
            ("python3", &["x.py"], false, Risk::Medium),
            ("chmod", &["-R", "777", "."], false, Risk::High),
        ];
        for (name, args, piped, want) in cases {
            let (got, why) = classify(name, args, *piped);
            assert_eq!(got, *want, "{name} {args:?}");
            assert_eq!(why.is_some(), *want != Risk::Low, "{name} {args:?} reason");
        }
    }
}
