//! `warren import zeroclaw` against a copy of the fixture install: the plan, the import, the
//! grants as `warren policy check` answers them, memory as `warren memory` shows it, a second
//! import refused, and bad sources refused with nothing written.

use crate::common::{warren, warren_cmd, Run};
use std::path::Path;
use warren_testkit::zeroclaw::{copy_zeroclaw_fixture, tree_snapshot};
use warren_testkit::TestInstall;

fn import(home: &Path, args: &[&str]) -> Run {
    warren_cmd(home)
        .env("WARREN_SECRET_BACKEND", "file")
        .args(["--json", "import", "zeroclaw"])
        .args(args)
        .output()
        .unwrap()
        .into()
}

fn check(home: &Path, agent: &str, access: &str, path: &Path) -> (bool, String) {
    let r = warren(
        home,
        &[
            "--json",
            "policy",
            "check",
            "--agent",
            agent,
            access,
            &path.display().to_string(),
        ],
    );
    let v = r.json();
    (
        v["allowed"].as_bool().unwrap(),
        v["rule"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn the_fixture_imports_and_its_grants_answer_as_in_zeroclaw() {
    let t = TestInstall::empty().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let src = copy_zeroclaw_fixture(&scratch.path().join("zc")).unwrap();
    let before = tree_snapshot(&src).unwrap();
    let home = t.root();
    let s = src.display().to_string();

    let plan = import(home, &[&s, "--dry-run"]);
    assert_eq!(plan.code, 0, "{}", plan.stderr);
    let plan = plan.json();
    assert_eq!(plan["dry_run"], true);
    assert!(
        !home.join("config.toml").exists(),
        "the dry run wrote a config"
    );

    let done = import(home, &[&s]);
    assert_eq!(done.code, 0, "{}", done.stderr);
    let done = done.json();
    for k in [
        "memory_rows",
        "markdown_entries",
        "workspace_files",
        "workspace_bytes",
        "agents",
    ] {
        assert_eq!(done["imported"][k], plan["plan"]["totals"][k], "{k}");
    }
    assert_eq!(done["imported"]["memory_rows"], 92);
    assert_eq!(done["imported"]["markdown_entries"], 10);

    // Workspace grants, all three tiers, and unrestricted_filesystem.
    let ws = |a: &str| home.join("agents").join(a).join("workspace");
    let cases: &[(&str, &str, std::path::PathBuf, bool, &str)] = &[
        (
            "researcher",
            "--read",
            ws("writer").join("notes.md"),
            true,
            "read_only_grant",
        ),
        (
            "researcher",
            "--write",
            ws("writer").join("notes.md"),
            false,
            "read_only_grant",
        ),
        (
            "writer",
            "--read",
            ws("researcher").join("notes.md"),
            true,
            "read_write_grant",
        ),
        (
            "writer",
            "--write",
            ws("researcher").join("new.md"),
            true,
            "read_write_grant",
        ),
        (
            "reviewer",
            "--write",
            ws("writer").join("drafts/review.md"),
            true,
            "write_only_grant",
        ),
        (
            "reviewer",
            "--read",
            ws("writer").join("notes.md"),
            false,
            "write_only_grant",
        ),
        (
            "journal",
            "--read",
            ws("writer").join("notes.md"),
            false,
            "outside_workspace",
        ),
        (
            "researcher",
            "--read",
            scratch.path().join("elsewhere.txt"),
            true,
            "unrestricted",
        ),
        (
            "writer",
            "--read",
            scratch.path().join("elsewhere.txt"),
            false,
            "outside_workspace",
        ),
        (
            "researcher",
            "--read",
            "/etc/hostname".into(),
            false,
            "forbidden_path",
        ),
    ];
    for (agent, access, path, allowed, rule) in cases {
        let (ok, got) = check(home, agent, access, path);
        assert_eq!(
            (ok, got.as_str()),
            (*allowed, *rule),
            "{agent} {access} {}",
            path.display()
        );
    }

    // Memory: rows recallable by their agent, with category and session.
    let r = warren(home, &["--json", "memory", "list", "--agent", "researcher"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let rows = r.json();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 32);
    let conv = rows
        .iter()
        .find(|x| x["key"] == "user_msg_1c943c85-d61e-47f8-b506-7eb11ef54a64")
        .unwrap();
    assert_eq!(conv["category"], "conversation");
    assert_eq!(conv["session"], "8c23d574-eca6-414e-8ba0-d1a7a334c660");
    let r = warren(home, &["--json", "memory", "list", "--agent", "journal"]);
    assert_eq!(r.json().as_array().unwrap().len(), 10, "{}", r.stderr);

    // A second import is refused; the source was never modified.
    let again = import(home, &[&s]);
    assert_eq!(again.code, 1);
    assert!(
        again.stderr.contains("already imported"),
        "{}",
        again.stderr
    );
    assert_eq!(tree_snapshot(&src).unwrap(), before);
}

#[test]
fn a_bad_source_is_refused_naming_the_file() {
    let t = TestInstall::empty().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let missing = scratch.path().join("nowhere");
    let r = import(t.root(), &[&missing.display().to_string()]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains(&missing.display().to_string()),
        "{}",
        r.stderr
    );
    let src = copy_zeroclaw_fixture(&scratch.path().join("zc")).unwrap();
    let cfg = src.join("config.toml");
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace("schema_version = 3", "schema_version = 2");
    std::fs::write(&cfg, text).unwrap();
    let r = import(t.root(), &[&src.display().to_string()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(&cfg.display().to_string()),
        "{}",
        r.stderr
    );
    // (The command's log folder is the only thing any command makes.)
    let written: Vec<String> = std::fs::read_dir(t.root())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "logs")
        .collect();
    assert!(written.is_empty(), "something was written: {written:?}");
}

#[test]
fn progress_is_written_to_stderr_and_never_to_stdout() {
    let scratch = tempfile::tempdir().unwrap();
    let src = copy_zeroclaw_fixture(&scratch.path().join("zc")).unwrap();
    let s = src.display().to_string();

    // Not a terminal, `--json`: stdout is the JSON document alone, stderr has plain lines.
    let t = TestInstall::empty().unwrap();
    let r = import(t.root(), &[&s]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json()["imported"]["memory_rows"], 92);
    let lines: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("memory rows: "))
        .collect();
    assert_eq!(
        lines.first().copied(),
        Some("memory rows: 0/92 (0%)"),
        "{}",
        r.stderr
    );
    assert!(
        lines
            .last()
            .is_some_and(|l| l.starts_with("memory rows: 92/92 (100%), ")),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains('\r'), "no bar without a terminal");

    // Not a terminal, human output: the report on stdout, the lines on stderr.
    let t = TestInstall::empty().unwrap();
    let r: Run = warren_cmd(t.root())
        .env("WARREN_SECRET_BACKEND", "file")
        .args(["import", "zeroclaw", &s])
        .output()
        .unwrap()
        .into();
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("Imported: ZeroClaw install"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("memory rows:"), "{}", r.stdout);
    assert!(
        r.stderr.contains("memory rows: 92/92 (100%)"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_terminal_gets_a_progress_bar() {
    // `script` runs the command on a pseudo-terminal (util-linux).
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        println!("skipped: `script` is not installed");
        return;
    }
    let scratch = tempfile::tempdir().unwrap();
    let src = copy_zeroclaw_fixture(&scratch.path().join("zc")).unwrap();
    let t = TestInstall::empty().unwrap();
    let cmd = format!(
        "'{}' --home '{}' import zeroclaw '{}'",
        env!("CARGO_BIN_EXE_warren"),
        t.root().display(),
        src.display()
    );
    let out = std::process::Command::new("script")
        .args(["-qefc", &cmd, "/dev/null"])
        .env("WARREN_SECRET_BACKEND", "file")
        .env("HOME", t.root().join("fake-home"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("\rmemory rows [                              ] 0/92 (0%)"),
        "{text:?}"
    );
    assert!(
        text.contains("\rmemory rows [##############################] 92/92 (100%), "),
        "{text:?}"
    );
    assert!(text.contains("Imported: ZeroClaw install"), "{text:?}");
}

/// Into a first-start install: the differing `ollama.local` is refused without a choice, and
/// `--collisions rename` imports it beside Warren's; `assistant` stays.
#[test]
fn collisions_with_the_default_install_take_a_choice() {
    let t = TestInstall::with_config(&warren_config::default_config_text(
        warren_config::Preset::Balanced,
    ))
    .unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let src = copy_zeroclaw_fixture(&scratch.path().join("zc")).unwrap();
    let r = import(t.root(), &[&src.display().to_string()]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("--collisions rename"), "{}", r.stderr);
    let r = import(
        t.root(),
        &[&src.display().to_string(), "--collisions", "maybe"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = import(
        t.root(),
        &[&src.display().to_string(), "--collisions", "rename"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let text = t.read_config().unwrap();
    assert!(text.contains("[agents.assistant]"), "{text}");
    assert!(text.contains("[agents.journal]"), "{text}");
    assert!(text.contains("ollama.local_zeroclaw"), "{text}");
}
