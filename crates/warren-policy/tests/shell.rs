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
        ("echo x > /dev/zero".into(), Rule::OutsideWorkspace),
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
