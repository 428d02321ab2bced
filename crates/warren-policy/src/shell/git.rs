//! `git` command lines as the shell analyzer sees them: the global options before the
//! subcommand (`-C dir`, `-c key=value`, `--git-dir=`, `--exec-path=`, ...), and which
//! configuration keys name a program git would run.

/// Global options that take the next word as their value.
const GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--config-env",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--super-prefix",
    "--attr-source",
];

/// Subcommands that reach a network, serve a repository or hand data to a remote party.
pub const GIT_NETWORK: &[&str] = &[
    "push",
    "fetch",
    "pull",
    "clone",
    "ls-remote",
    "remote",
    "submodule",
    "request-pull",
    "send-email",
    "send-pack",
    "fetch-pack",
    "daemon",
    "http-backend",
    "http-fetch",
    "http-push",
    "upload-pack",
    "receive-pack",
    "upload-archive",
    "imap-send",
    "instaweb",
    "svn",
    "p4",
    "cvsimport",
    "cvsserver",
    "cvsexportcommit",
    "archimport",
    "credential",
    "credential-cache",
    "credential-store",
    "credential-cache--daemon",
    "web--browse",
];

/// One `git` invocation split at its subcommand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GitCall {
    /// The subcommand (`status`, `push`, an alias...), if any.
    pub sub: Option<String>,
    /// Index of the subcommand in the arguments (the arguments' length when there is none).
    pub sub_at: usize,
    /// `-c key=value` and `--config-env=key=VAR` settings, in order (`--config-env` values are
    /// written `$VAR`).
    pub config: Vec<(String, String)>,
    /// `-C dir` values, in order.
    pub dirs: Vec<String>,
    /// `--git-dir` and `--work-tree` values.
    pub git_dirs: Vec<String>,
    /// `--exec-path=DIR`: git runs its `git-*` programs from that directory.
    pub exec_path: Option<String>,
}

/// Splits the arguments of `git` (the program name excluded) at the subcommand.
pub fn parse_git(args: &[&str]) -> GitCall {
    let mut call = GitCall {
        sub_at: args.len(),
        ..GitCall::default()
    };
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if !a.starts_with('-') {
            call.sub = Some(a.to_string());
            call.sub_at = i;
            break;
        }
        let (opt, attached) = match a.split_once('=') {
            Some((o, v)) if a.starts_with("--") => (o, Some(v)),
            _ => (a, None),
        };
        let value = if GLOBAL_WITH_VALUE.contains(&opt) && attached.is_none() {
            i += 1;
            args.get(i).copied()
        } else {
            attached
        };
        match (opt, value) {
            ("-C", Some(v)) => call.dirs.push(v.to_string()),
            ("-c", Some(v)) => call.config.push(split_setting(v)),
            ("--config-env", Some(v)) => {
                let (k, var) = split_setting(v);
                call.config.push((k, format!("${var}")));
            }
            ("--git-dir" | "--work-tree", Some(v)) => call.git_dirs.push(v.to_string()),
            ("--exec-path", Some(v)) => call.exec_path = Some(v.to_string()),
            _ => {}
        }
        i += 1;
    }
    call
}

/// `key=value` (a key without `=` is a boolean `true`).
fn split_setting(v: &str) -> (String, String) {
    match v.split_once('=') {
        Some((k, val)) => (k.to_string(), val.to_string()),
        None => (v.to_string(), "true".to_string()),
    }
}

/// Whether setting `key` to `value` makes git run a program (or load more configuration that
/// may): aliases starting with `!`, includes, hooks, fsmonitor, pagers, editors, helpers,
/// drivers, transports, tools and browsers.
pub fn key_runs_program(key: &str, value: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    let Some((section, rest)) = lower.split_once('.') else {
        return false;
    };
    let name = rest.rsplit('.').next().unwrap_or(rest);
    let off = matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "" | "false" | "no" | "off" | "0"
    );
    match (section, name) {
        ("alias", _) | ("submodule", "update") => value.trim_start().starts_with('!'),
        ("include" | "includeif", _) => true,
        (
            "core",
            "sshcommand"
            | "fsmonitor"
            | "pager"
            | "editor"
            | "hookspath"
            | "askpass"
            | "gitproxy"
            | "alternaterefscommand",
        ) => !off,
        ("tar", "command") => !off,
        ("diff", "external" | "textconv" | "command")
        | ("merge", "driver")
        | ("credential", "helper")
        | ("sequence", "editor")
        | ("uploadpack", "packobjectshook")
        | ("remote", "uploadpack" | "receivepack" | "vcs")
        | ("web", "browser")
        | ("interactive", "difffilter")
        | ("imap", "tunnel") => !off,
        (
            "filter" | "pager" | "hook" | "protocol" | "browser" | "man" | "difftool" | "mergetool"
            | "trailer" | "gpg" | "sendemail" | "instaweb",
            _,
        ) => !off,
        _ => false,
    }
}

/// Options of a subcommand that name a program or shell command for git to run.
pub fn sub_runs_program(sub: &str, args: &[&str]) -> Option<String> {
    let opt = |names: &[&str]| {
        args.iter().find_map(|a| {
            let head = a.split_once('=').map(|(h, _)| h).unwrap_or(a);
            names.contains(&head).then(|| a.to_string())
        })
    };
    let found = match sub {
        "rebase" => opt(&["-x", "--exec"]),
        "bisect" if args.first() == Some(&"run") => Some("bisect run".into()),
        "submodule" if args.contains(&"foreach") => Some("submodule foreach".into()),
        "filter-branch" => Some("filter-branch".into()),
        "difftool" | "mergetool" => Some(sub.to_string()),
        "fetch" | "pull" | "clone" | "ls-remote" | "push" | "archive" | "fetch-pack"
        | "send-pack" => opt(&["--upload-pack", "--receive-pack", "--exec", "-u"]),
        "help" => opt(&["-w", "--web", "-m", "--man"]),
        // `git grep -O<cmd>` / `--open-files-in-pager[=<cmd>]` (also bare: the pager runs).
        "grep" => args
            .iter()
            .find(|a| {
                (a.starts_with("-O") && !a.starts_with("--"))
                    || a.starts_with("--open-files-in-pager")
            })
            .map(std::string::ToString::to_string),
        _ => None,
    };
    if found.is_some() {
        return found;
    }
    // `git clone -c core.fsmonitor=...`, `git clone --config ...`.
    if sub == "clone" {
        let mut i = 0;
        while i < args.len() {
            let (k, v) = match args[i] {
                "-c" | "--config" => {
                    i += 1;
                    match args.get(i) {
                        Some(v) => split_setting(v),
                        None => break,
                    }
                }
                a => match a.strip_prefix("--config=") {
                    Some(v) => split_setting(v),
                    None => {
                        i += 1;
                        continue;
                    }
                },
            };
            if key_runs_program(&k, &v) {
                return Some(format!("clone --config {k}"));
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_options_are_skipped() {
        let c = parse_git(&[
            "-C",
            ".",
            "-c",
            "a.b=c",
            "--no-pager",
            "--git-dir=x",
            "push",
        ]);
        assert_eq!(c.sub.as_deref(), Some("push"));
        assert_eq!(c.sub_at, 6);
        assert_eq!(c.dirs, vec!["."]);
        assert_eq!(c.config, vec![("a.b".to_string(), "c".to_string())]);
        assert_eq!(c.git_dirs, vec!["x"]);
        let c = parse_git(&["--config-env=core.pager=EVIL", "--exec-path=/tmp", "log"]);
        assert_eq!(c.config[0], ("core.pager".into(), "$EVIL".into()));
        assert_eq!(c.exec_path.as_deref(), Some("/tmp"));
        assert_eq!(parse_git(&["--version"]).sub, None);
    }

    #[test]
    fn command_valued_keys() {
        for (k, v, runs) in [
            ("alias.x", "!sh -c id", true),
            ("alias.st", "status", false),
            ("core.fsmonitor", "./evil", true),
            ("core.fsmonitor", "false", false),
            ("core.sshCommand", "sh", true),
            ("core.hooksPath", "hooks", true),
            ("diff.foo.textconv", "sh", true),
            ("filter.lfs.clean", "x", true),
            ("merge.ours.driver", "x", true),
            ("credential.https://x.helper", "store", true),
            ("pager.log", "sh", true),
            ("include.path", "/tmp/c", true),
            ("includeIf.gitdir:/x.path", "/tmp/c", true),
            ("gpg.program", "x", true),
            ("uploadpack.packObjectsHook", "x", true),
            ("user.name", "x", false),
            ("color.ui", "auto", false),
        ] {
            assert_eq!(key_runs_program(k, v), runs, "{k}={v}");
        }
    }
}
