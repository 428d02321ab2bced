//! `git_operations` against an agent that owns its repository's metadata: links and alternate
//! object directories planted anywhere below `.git` that lead into an ungranted sibling's
//! repository (`erin`), and working-tree paths the policy refuses. Every case asserts that none
//! of erin's commit messages, file contents or ref names (all carrying the canary) appear in
//! any output, and that nothing outside mallory's grant changed.

use crate::fixture::call;
use crate::support::{assert_no_canary, Lab, Sandbox, CANARY};
use serde_json::{json, Value};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use warren_testkit::git::{self as gitrepo, commit, git, head, init};
use warren_tools::ToolError;

fn p(path: &Path) -> String {
    path.display().to_string()
}

/// erin's repository: the canary in a file, a commit message, a branch name and a stash.
fn erin_repo(lab: &Lab) -> PathBuf {
    let repo = lab.ws("erin").join("repo");
    init(&repo);
    commit(
        &repo,
        &[("plans.txt", &format!("{CANARY} in erin's file\n"))],
        &format!("{CANARY} in erin's commit"),
    );
    git(&repo, &["branch", CANARY]);
    std::fs::write(repo.join("plans.txt"), format!("{CANARY} stashed\n")).unwrap();
    git(
        &repo,
        &["stash", "push", "-q", "-m", &format!("{CANARY} stash")],
    );
    repo
}

/// mallory's own repository in her workspace (`sub` nests it deeper).
fn mallory_repo(lab: &Lab, sub: &str) -> PathBuf {
    let repo = lab.ws("mallory").join(sub);
    init(&repo);
    commit(&repo, &[("mine.txt", "mallory's\n")], "mallory's commit");
    repo
}

/// Points mallory's HEAD at a branch holding erin's HEAD commit id (a plain file: knowing an
/// id gives nothing without the objects).
fn head_at_erins_commit(mine: &Path, erin: &Path) {
    std::fs::write(
        mine.join(".git/refs/heads/leak"),
        format!("{}\n", head(erin)),
    )
    .unwrap();
    std::fs::write(mine.join(".git/HEAD"), "ref: refs/heads/leak\n").unwrap();
}

/// Runs every read operation on `repo` as mallory, asserting each result is canary-free and
/// that nothing outside mallory's grant changed. Returns the results.
fn every_read(lab: &Lab, repo: &Path) -> Vec<Result<Value, ToolError>> {
    let before = lab.snapshot();
    let ctx = lab.ctx();
    let path = p(repo);
    let mut out = Vec::new();
    for args in [
        json!({"operation": "status", "path": path}),
        json!({"operation": "diff", "path": path}),
        json!({"operation": "diff", "path": path, "cached": true}),
        json!({"operation": "log", "path": path}),
        json!({"operation": "branch", "path": path}),
        json!({"operation": "stash_list", "path": path}),
        json!({"operation": "worktree_list", "path": path}),
    ] {
        let r = call(&ctx, "git_operations", args);
        assert_no_canary(&r);
        out.push(r);
    }
    assert!(
        lab.snapshot() == before,
        "something outside the grant changed"
    );
    out
}

/// The first error among `results` (the metadata check refuses every operation alike).
fn refused(results: &[Result<Value, ToolError>]) -> (String, String) {
    let e = results
        .iter()
        .find_map(|r| r.as_ref().err())
        .unwrap_or_else(|| panic!("every read succeeded: {results:?}"));
    (e.code().to_string(), e.to_string())
}

#[test]
fn a_refs_directory_linked_to_a_siblings_refs_lists_nothing_of_it() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    let mine = mallory_repo(&lab, "proj");
    symlink(
        erin.join(".git/refs/heads"),
        mine.join(".git/refs/heads/leak"),
    )
    .unwrap();
    let results = every_read(&lab, &mine);
    let (code, text) = refused(&results);
    assert_eq!(code, "git_metadata_symlink", "{text}");
    assert!(text.contains("refs/heads/leak"), "{text}");
}

#[test]
fn a_single_ref_linked_to_a_siblings_ref_is_refused() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    let mine = mallory_repo(&lab, "proj");
    symlink(
        erin.join(".git/refs/heads").join(CANARY),
        mine.join(".git/refs/heads/x"),
    )
    .unwrap();
    let results = every_read(&lab, &mine);
    assert_eq!(refused(&results).0, "git_metadata_symlink");
}

#[test]
fn a_reflog_linked_to_a_siblings_stash_log_is_refused() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    let mine = mallory_repo(&lab, "proj");
    // A stash ref of her own, whose log is erin's.
    std::fs::write(mine.join(".git/refs/stash"), format!("{}\n", head(&mine))).unwrap();
    std::fs::create_dir_all(mine.join(".git/logs/refs")).unwrap();
    symlink(
        erin.join(".git/logs/refs/stash"),
        mine.join(".git/logs/refs/stash"),
    )
    .unwrap();
    let results = every_read(&lab, &mine);
    let (code, text) = refused(&results);
    assert_eq!(code, "git_metadata_symlink", "{text}");
    assert!(text.contains("logs/refs/stash"), "{text}");
}

#[test]
fn packed_refs_linked_to_a_siblings_are_refused() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    git(&erin, &["pack-refs", "--all"]);
    let mine = mallory_repo(&lab, "proj");
    symlink(erin.join(".git/packed-refs"), mine.join(".git/packed-refs")).unwrap();
    let results = every_read(&lab, &mine);
    assert_eq!(refused(&results).0, "git_metadata_symlink");
}

#[test]
fn a_pack_linked_from_a_siblings_objects_is_refused() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    git(&erin, &["repack", "-a", "-d", "-q"]);
    let mine = mallory_repo(&lab, "proj");
    let packs = erin.join(".git/objects/pack");
    std::fs::create_dir_all(mine.join(".git/objects/pack")).unwrap();
    for e in std::fs::read_dir(&packs).unwrap() {
        let e = e.unwrap();
        symlink(e.path(), mine.join(".git/objects/pack").join(e.file_name())).unwrap();
    }
    head_at_erins_commit(&mine, &erin);
    let results = every_read(&lab, &mine);
    let (code, text) = refused(&results);
    assert_eq!(code, "git_metadata_symlink", "{text}");
    assert!(text.contains("objects/pack"), "{text}");
}

#[test]
fn loose_objects_linked_into_a_fan_out_directory_are_refused() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    let mine = mallory_repo(&lab, "proj");
    // Every loose object of erin's, linked one by one into mallory's own fan-out directories.
    let objects = erin.join(".git/objects");
    for fan in std::fs::read_dir(&objects).unwrap() {
        let fan = fan.unwrap();
        let name = fan.file_name();
        if name.len() != 2 {
            continue;
        }
        let dest = mine.join(".git/objects").join(&name);
        std::fs::create_dir_all(&dest).unwrap();
        for obj in std::fs::read_dir(fan.path()).unwrap() {
            let obj = obj.unwrap();
            let target = dest.join(obj.file_name());
            if !target.exists() {
                symlink(obj.path(), target).unwrap();
            }
        }
    }
    head_at_erins_commit(&mine, &erin);
    let results = every_read(&lab, &mine);
    assert_eq!(refused(&results).0, "git_metadata_symlink");
}

#[test]
fn a_fan_out_directory_linked_to_a_siblings_is_refused() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    let mine = mallory_repo(&lab, "proj");
    let id = head(&erin);
    let fan = &id[..2];
    let dest = mine.join(".git/objects").join(fan);
    if dest.exists() {
        std::fs::remove_dir_all(&dest).unwrap();
    }
    symlink(erin.join(".git/objects").join(fan), &dest).unwrap();
    head_at_erins_commit(&mine, &erin);
    let results = every_read(&lab, &mine);
    assert_eq!(refused(&results).0, "git_metadata_symlink");
}

#[test]
fn a_nested_alternates_chain_into_a_siblings_objects_is_refused() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    let mine = mallory_repo(&lab, "proj");
    // Level one: a directory of her own; level two: erin's objects.
    let hop = lab.ws("mallory").join("hop/objects");
    std::fs::create_dir_all(hop.join("info")).unwrap();
    std::fs::write(
        hop.join("info/alternates"),
        format!("{}\n", p(&erin.join(".git/objects"))),
    )
    .unwrap();
    std::fs::create_dir_all(mine.join(".git/objects/info")).unwrap();
    std::fs::write(
        mine.join(".git/objects/info/alternates"),
        format!("{}\n", p(&hop)),
    )
    .unwrap();
    head_at_erins_commit(&mine, &erin);
    let results = every_read(&lab, &mine);
    let (code, text) = refused(&results);
    assert_eq!(code, "denied", "{text}");
    assert!(text.contains("alternate object directory"), "{text}");
    assert!(text.contains(&p(&erin.join(".git/objects"))), "{text}");
}

#[test]
fn an_alternate_relative_to_the_process_directory_is_refused() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    // Deep enough that the same text, read relative to the object directory, stays inside
    // mallory's workspace while libgit2 reads it relative to the process's directory.
    let cwd = std::env::current_dir().unwrap();
    let ups = cwd.components().count();
    let nest: Vec<String> = (0..ups + 2).map(|i| format!("n{i}")).collect();
    let mine = mallory_repo(&lab, &nest.join("/"));
    let first = std::fs::read_dir(&cwd)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| {
            e.file_type().unwrap().is_dir() && !e.file_name().to_string_lossy().starts_with('.')
        })
        .expect("a directory in the working directory")
        .file_name();
    let line = format!(
        "{}/{}{}",
        first.to_string_lossy(),
        "../".repeat(ups + 1),
        p(&erin.join(".git/objects")).trim_start_matches('/')
    );
    std::fs::create_dir_all(mine.join(".git/objects/info")).unwrap();
    std::fs::write(
        mine.join(".git/objects/info/alternates"),
        format!("{line}\n"),
    )
    .unwrap();
    head_at_erins_commit(&mine, &erin);
    let results = every_read(&lab, &mine);
    let (code, text) = refused(&results);
    assert_eq!(code, "git_metadata", "{text}");
    assert!(text.contains("working directory"), "{text}");
}

#[test]
fn the_read_thread_cannot_open_what_the_policy_refuses() {
    let lab = Lab::new(Sandbox::None, true);
    if !warren_tools::git::confined::available() {
        assert!(std::env::var_os("CI").is_none(), "CI needs Landlock");
        println!("skipped: no Landlock on this kernel");
        return;
    }
    let ctx = lab.ctx();
    let secret = lab.ws("erin").join("secret.txt");
    let own = lab.ws("mallory").join("own.txt");
    let bob = lab.ws("bob").join("notes.txt");
    let forbidden = lab.ws("mallory").join("forbidden/key.txt");
    let (s, o, b, f) = warren_tools::git::confined::run(&ctx.policy, &[], || {
        Ok((
            std::fs::read(&secret).map_err(|e| e.kind()),
            std::fs::read(&own).map_err(|e| e.kind()),
            std::fs::read(&bob).map_err(|e| e.kind()),
            std::fs::read(&forbidden).map_err(|e| e.kind()),
        ))
    })
    .unwrap();
    assert_eq!(s, Err(std::io::ErrorKind::PermissionDenied));
    assert_eq!(f, Err(std::io::ErrorKind::PermissionDenied));
    assert_eq!(o.unwrap(), b"mine\n");
    assert!(b.is_ok());
    // Warren's own thread stays unrestricted.
    assert!(std::fs::read(&secret).is_ok());
}

#[test]
fn status_and_diff_omit_forbidden_and_unreadable_paths() {
    let lab = Lab::new(Sandbox::None, true);
    let ws = lab.ws("mallory");
    // The workspace is the repository: `forbidden/` (a forbidden path) lies inside it.
    init(&ws);
    // `forbidden/key.txt` is tracked (committed by the operator), then changed on disk.
    commit(&ws, &[("d/kept.txt", "kept\n")], "first");
    std::fs::write(ws.join("forbidden/key.txt"), format!("{CANARY} changed\n")).unwrap();
    std::fs::write(ws.join("forbidden/new.txt"), format!("{CANARY} new\n")).unwrap();
    // A tracked directory replaced by a link into erin's workspace (holding secret.txt).
    commit(&ws, &[("link/secret.txt", "mine\n")], "second");
    std::fs::remove_dir_all(ws.join("link")).unwrap();
    symlink(lab.ws("erin"), ws.join("link")).unwrap();
    // An untracked link to erin's workspace.
    symlink(lab.ws("erin"), ws.join("peek")).unwrap();
    std::fs::write(ws.join("d/kept.txt"), "kept changed\n").unwrap();
    git(&ws, &["add", "d/kept.txt"]);
    std::fs::write(ws.join("d/kept.txt"), "kept changed again\n").unwrap();
    let results = every_read(&lab, &ws);
    let text: String = results
        .iter()
        .map(|r| match r {
            Ok(v) => v.to_string(),
            Err(e) => e.to_string(),
        })
        .collect();
    assert!(!text.contains("forbidden/"), "{text}");
    assert!(!text.contains("link/secret.txt"), "{text}");
    assert!(!text.contains("\"peek\""), "{text}");
    // What mallory may read is still there.
    let status = results[0].as_ref().unwrap();
    assert!(status.to_string().contains("d/kept.txt"), "{status}");
    let diff = results[1].as_ref().unwrap();
    assert!(diff.to_string().contains("+kept changed again"), "{diff}");
}

/// A repository in mallory's workspace whose tracked `forbidden/key.txt` differs on branch
/// `other`, and is modified in the working tree when `dirty`.
fn forbidden_tracked(lab: &Lab, dirty: bool) -> PathBuf {
    let ws = lab.ws("mallory");
    init(&ws);
    // The operator's commit tracks `forbidden/key.txt` too.
    commit(&ws, &[("d/own.txt", "mine\n")], "first");
    git(&ws, &["checkout", "-q", "-b", "other"]);
    std::fs::write(ws.join("forbidden/key.txt"), "replaced\n").unwrap();
    git(&ws, &["commit", "-q", "-a", "-m", "other"]);
    git(&ws, &["checkout", "-q", "main"]);
    if dirty {
        std::fs::write(ws.join("forbidden/key.txt"), format!("{CANARY} dirty\n")).unwrap();
    }
    ws
}

#[test]
fn checkout_that_would_change_a_forbidden_file_is_refused_before_git_starts() {
    for sandbox in Sandbox::ALL {
        if !sandbox.available() {
            continue;
        }
        let lab = Lab::new(sandbox, true);
        let ws = forbidden_tracked(&lab, false);
        let key = ws.join("forbidden/key.txt");
        let before = std::fs::read(&key).unwrap();
        let outside = lab.snapshot();
        let r = call(
            &lab.ctx(),
            "git_operations",
            json!({"operation": "checkout", "branch": "other"}),
        );
        assert_no_canary(&r);
        let e = r.unwrap_err();
        assert_eq!(
            (e.code().as_str(), e.rule()),
            ("denied", Some("forbidden_path")),
            "{e}"
        );
        assert!(e.to_string().contains("forbidden/key.txt"), "{e}");
        assert_eq!(std::fs::read(&key).unwrap(), before, "{}", sandbox.name());
        assert_eq!(
            gitrepo::git(&ws, &["branch", "--show-current"]).trim(),
            "main"
        );
        assert!(lab.snapshot() == outside);
    }
}

#[test]
fn stash_push_that_would_reset_a_forbidden_file_is_refused_before_git_starts() {
    for sandbox in Sandbox::ALL {
        if !sandbox.available() {
            continue;
        }
        let lab = Lab::new(sandbox, true);
        let ws = forbidden_tracked(&lab, true);
        let key = ws.join("forbidden/key.txt");
        let before = std::fs::read(&key).unwrap();
        let ctx = lab.ctx();
        for args in [
            json!({"operation": "stash_push"}),
            json!({"operation": "stash_push", "paths": ["."]}),
            json!({"operation": "add", "paths": ["."]}),
        ] {
            let r = call(&ctx, "git_operations", args.clone());
            assert_no_canary(&r);
            let e = r.unwrap_err();
            assert_eq!(
                (e.code().as_str(), e.rule()),
                ("denied", Some("forbidden_path")),
                "{args}: {e}"
            );
            // The file, or for `add` (which would walk it) the forbidden directory itself.
            assert!(e.to_string().contains("workspace/forbidden"), "{e}");
        }
        assert_eq!(std::fs::read(&key).unwrap(), before, "{}", sandbox.name());
        assert!(!gitrepo::git_ok(
            &ws,
            &["rev-parse", "--verify", "-q", "refs/stash"]
        ));
        // Paths of her own still stash.
        std::fs::write(ws.join("d/own.txt"), "changed\n").unwrap();
        let r = call(
            &ctx,
            "git_operations",
            json!({"operation": "stash_push", "paths": ["d/own.txt"]}),
        );
        assert_no_canary(&r);
        r.unwrap();
        assert_eq!(std::fs::read(ws.join("d/own.txt")).unwrap(), b"mine\n");
        assert_eq!(std::fs::read(&key).unwrap(), before);
    }
}

#[test]
fn a_linked_worktrees_own_reflog_linked_to_a_siblings_is_refused() {
    let lab = Lab::new(Sandbox::None, true);
    let erin = erin_repo(&lab);
    let mine = mallory_repo(&lab, "proj");
    let wt = lab.ws("mallory").join("wt");
    git(&mine, &["worktree", "add", "-q", "-b", "side", &p(&wt)]);
    // The per-worktree metadata lives in `.git/worktrees/wt`, not in the common directory.
    let logs = mine.join(".git/worktrees/wt/logs");
    std::fs::create_dir_all(&logs).unwrap();
    let head_log = logs.join("HEAD");
    if head_log.exists() {
        std::fs::remove_file(&head_log).unwrap();
    }
    symlink(erin.join(".git/logs/HEAD"), &head_log).unwrap();
    let results = every_read(&lab, &wt);
    let (code, text) = refused(&results);
    assert_eq!(code, "git_metadata_symlink", "{text}");
    assert!(text.contains("worktrees/wt/logs/HEAD"), "{text}");
}

#[test]
fn an_alternate_into_a_write_only_sibling_is_refused() {
    let lab = Lab::new(Sandbox::None, true);
    // carol's repository: mallory may write there but never read.
    let carol = lab.ws("carol").join("repo");
    init(&carol);
    commit(
        &carol,
        &[("c.txt", &format!("{CANARY} carol\n"))],
        &format!("{CANARY} carol's commit"),
    );
    let mine = mallory_repo(&lab, "proj");
    std::fs::create_dir_all(mine.join(".git/objects/info")).unwrap();
    std::fs::write(
        mine.join(".git/objects/info/alternates"),
        format!("{}\n", p(&carol.join(".git/objects"))),
    )
    .unwrap();
    head_at_erins_commit(&mine, &carol);
    let results = every_read(&lab, &mine);
    let e = results.iter().find_map(|r| r.as_ref().err()).unwrap();
    assert_eq!(
        (e.code().as_str(), e.rule()),
        ("denied", Some("write_only_grant")),
        "{e}"
    );
}

#[test]
fn stash_pop_that_would_write_a_forbidden_file_is_refused_before_git_starts() {
    for sandbox in Sandbox::ALL {
        if !sandbox.available() {
            continue;
        }
        let lab = Lab::new(sandbox, true);
        let ws = forbidden_tracked(&lab, true);
        // The operator parked a change of the forbidden file.
        git(&ws, &["stash", "push", "-q"]);
        let key = ws.join("forbidden/key.txt");
        let before = std::fs::read(&key).unwrap();
        let outside = lab.snapshot();
        let r = call(
            &lab.ctx(),
            "git_operations",
            json!({"operation": "stash_pop"}),
        );
        assert_no_canary(&r);
        let e = r.unwrap_err();
        assert_eq!(
            (e.code().as_str(), e.rule()),
            ("denied", Some("forbidden_path")),
            "{}: {e}",
            lab.sandbox.name()
        );
        assert_eq!(std::fs::read(&key).unwrap(), before);
        assert!(gitrepo::git_ok(
            &ws,
            &["rev-parse", "--verify", "-q", "refs/stash"]
        ));
        assert!(lab.snapshot() == outside);
    }
}
