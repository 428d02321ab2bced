//! The file and search tools under attack: a parallel swap of a directory for a symbolic link
//! (the check-then-use race), planted links, FIFOs, and write-only grants that must not reveal
//! what exists. The file tools run in Warren's own process, so these cases hold whatever the
//! sandbox; they run with `sandbox = "none"` and the matrix is exercised where a shell is used.

use crate::fixture::call;
use crate::support::{assert_no_canary, Lab, Sandbox, CANARY};
use serde_json::{json, Value};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warren_policy::rustix;
use warren_tools::ToolError;
use warren_types::ToolErrorCode;

/// How many calls each race makes, and the longest it may run (it stops at whichever comes
/// first).
const RACE_CALLS: usize = 3000;
const RACE_LIMIT: Duration = Duration::from_secs(20);

/// Swaps `a` and `b` (one a real directory, the other a symbolic link) with
/// `renameat2(RENAME_EXCHANGE)` until stopped: at every instant `a` is one or the other.
struct Swapper {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl Swapper {
    fn start(a: PathBuf, b: PathBuf) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut swaps = 0u64;
            let started = Instant::now();
            while !flag.load(Ordering::Relaxed) && started.elapsed() < RACE_LIMIT * 2 {
                rustix::fs::renameat_with(
                    rustix::fs::CWD,
                    &a,
                    rustix::fs::CWD,
                    &b,
                    rustix::fs::RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps += 1;
            }
            swaps
        });
        Swapper {
            stop,
            thread: Some(thread),
        }
    }

    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

/// `ws/d` is a real directory holding `name` with harmless text; `ws/d_alt` is a link to
/// `target_dir`. Returns (d, d_alt).
fn swap_pair(lab: &Lab, name: &str, target_dir: &Path) -> (PathBuf, PathBuf) {
    let ws = lab.ws("mallory");
    let d = ws.join("d");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join(name), "harmless\n").unwrap();
    let alt = ws.join("d_alt");
    symlink(target_dir, &alt).unwrap();
    (d, alt)
}

/// Runs `f` up to RACE_CALLS times within RACE_LIMIT; returns how many calls ran.
fn race(mut f: impl FnMut(usize)) -> usize {
    let started = Instant::now();
    let mut n = 0;
    while n < RACE_CALLS && started.elapsed() < RACE_LIMIT {
        f(n);
        n += 1;
    }
    n
}

#[test]
fn file_read_racing_a_directory_swap_never_reads_through_the_link() {
    let lab = Lab::new(Sandbox::None, true);
    let (d, alt) = swap_pair(&lab, "secret.txt", &lab.ws("erin"));
    let ctx = lab.ctx();
    let swapper = Swapper::start(d, alt);
    let mut ok = 0;
    let calls = race(|_| {
        let r = call(&ctx, "file_read", json!({"path": "d/secret.txt"}));
        assert_no_canary(&r);
        ok += usize::from(r.is_ok());
    });
    let swaps = swapper.stop();
    println!("file_read race: {calls} reads, {ok} succeeded, {swaps} swaps");
    assert!(swaps > 0 && calls > 0);
}

#[test]
fn file_write_racing_a_directory_swap_never_writes_through_the_link() {
    let lab = Lab::new(Sandbox::None, true);
    let before = lab.snapshot();
    // bob is read-only for mallory: nothing may be created or changed there.
    let (d, alt) = swap_pair(&lab, "notes.txt", &lab.ws("bob"));
    let ctx = lab.ctx();
    let swapper = Swapper::start(d, alt);
    let calls = race(|i| {
        let name = if i % 2 == 0 {
            "d/notes.txt"
        } else {
            "d/new.txt"
        };
        let r = call(
            &ctx,
            "file_write",
            json!({"path": name, "content": "overwritten"}),
        );
        assert_no_canary(&r);
    });
    swapper.stop();
    println!("file_write race: {calls} writes");
    assert_eq!(
        lab.snapshot(),
        before,
        "something outside mallory's grant changed"
    );
}

#[test]
fn file_edit_racing_a_directory_swap_never_edits_through_the_link() {
    let lab = Lab::new(Sandbox::None, true);
    // erin's file holds the same old text as mallory's: an edit through the link would change it.
    std::fs::write(lab.ws("erin").join("plan.txt"), format!("old {CANARY}\n")).unwrap();
    let before = lab.snapshot();
    let ws = lab.ws("mallory");
    let d = ws.join("d");
    std::fs::create_dir_all(&d).unwrap();
    let alt = ws.join("d_alt");
    symlink(lab.ws("erin"), &alt).unwrap();
    let ctx = lab.ctx();
    let swapper = Swapper::start(d.clone(), alt);
    let calls = race(|_| {
        // Put the old text back in mallory's own copy whenever the real directory is in place.
        let _ = std::fs::write(d.join("plan.txt"), format!("old {CANARY}\n"));
        let r = call(
            &ctx,
            "file_edit",
            json!({"path": "d/plan.txt", "old_text": "old", "new_text": "new"}),
        );
        assert_no_canary(&r);
    });
    swapper.stop();
    println!("file_edit race: {calls} edits");
    // Mallory's own copies may have been written by the test itself through the link while it
    // was in place: compare erin's file alone.
    let after = lab.snapshot();
    let erin = lab.ws("erin").join("plan.txt");
    let pick = |s: &Vec<(PathBuf, Option<Vec<u8>>)>| {
        s.iter().find(|(p, _)| *p == erin).map(|(_, c)| c.clone())
    };
    assert_eq!(pick(&after), pick(&before));
}

#[test]
fn content_search_racing_a_directory_swap_never_reads_through_the_link() {
    let lab = Lab::new(Sandbox::None, true);
    let (d, alt) = swap_pair(&lab, "secret.txt", &lab.ws("erin"));
    std::fs::create_dir_all(d.join("deeper")).unwrap();
    let ctx = lab.ctx();
    let swapper = Swapper::start(d, alt);
    let calls = race(|i| {
        let args = if i % 2 == 0 {
            json!({"query": "CANARY|harmless"})
        } else {
            json!({"query": "CANARY|harmless", "path": "d"})
        };
        let r = call(&ctx, "content_search", args);
        assert_no_canary(&r);
    });
    swapper.stop();
    println!("content_search race: {calls} searches");
}

#[test]
fn glob_search_racing_a_directory_swap_never_lists_the_siblings_files() {
    let lab = Lab::new(Sandbox::None, true);
    // A file name that exists only in erin's workspace.
    std::fs::write(lab.ws("erin").join("erin-only-name.txt"), "x").unwrap();
    let (d, alt) = swap_pair(&lab, "secret.txt", &lab.ws("erin"));
    let ctx = lab.ctx();
    let swapper = Swapper::start(d, alt);
    race(|_| {
        let r = call(&ctx, "glob_search", json!({"pattern": "**/*.txt"}));
        if let Ok(v) = &r {
            assert!(!v.to_string().contains("erin-only-name"), "{v}");
        }
    });
    swapper.stop();
}

#[test]
fn a_link_planted_at_a_parent_directory_is_decided_on_its_target() {
    let lab = Lab::new(Sandbox::None, true);
    let ws = lab.ws("mallory");
    symlink(lab.ws("erin"), ws.join("e")).unwrap();
    symlink(lab.fx.root.join("data"), ws.join("data")).unwrap();
    let ctx = lab.ctx();
    for (tool, args) in [
        ("file_read", json!({"path": "e/secret.txt"})),
        ("file_read", json!({"path": "data/state.txt"})),
        (
            "file_write",
            json!({"path": "e/planted.txt", "content": "x"}),
        ),
        (
            "file_write",
            json!({"path": "data/planted.txt", "content": "x"}),
        ),
        (
            "file_edit",
            json!({"path": "e/secret.txt", "old_text": "CANARY", "new_text": "x"}),
        ),
        ("content_search", json!({"query": "CANARY", "path": "e"})),
        ("glob_search", json!({"pattern": "*", "path": "data"})),
    ] {
        let r = call(&ctx, tool, args.clone());
        assert_no_canary(&r);
        assert!(r.is_err(), "{tool} {args} succeeded: {r:?}");
    }
    assert!(!lab.ws("erin").join("planted.txt").exists());
    assert!(!lab.fx.root.join("data/planted.txt").exists());
}

#[test]
fn search_results_leave_out_links_to_unreadable_places_and_forbidden_paths() {
    let lab = Lab::new(Sandbox::None, true);
    let ws = lab.ws("mallory");
    symlink(lab.ws("erin").join("secret.txt"), ws.join("leak.txt")).unwrap();
    symlink(lab.ws("bob").join("notes.txt"), ws.join("bob-notes.txt")).unwrap();
    let ctx = lab.ctx();
    let r = call(&ctx, "content_search", json!({"query": "CANARY"}));
    // bob's notes are readable (read grant) and may be found; erin's and forbidden/ may not.
    let v = r.unwrap();
    let text = v.to_string();
    assert!(!text.contains("of erin"), "{text}");
    assert!(!text.contains("forbidden"), "{text}");
    assert!(text.contains("of bob"), "{text}");
    let g = call(&ctx, "glob_search", json!({"pattern": "**/*"})).unwrap();
    let names = g.to_string();
    assert!(!names.contains("leak.txt"), "{names}");
    assert!(!names.contains("key.txt"), "{names}");
}

fn without_path(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("path");
    v
}

#[test]
fn a_write_only_grant_answers_the_same_whether_or_not_the_file_existed() {
    let lab = Lab::new(Sandbox::None, true);
    let carol = lab.ws("carol");
    let ctx = lab.ctx();
    let existed = call(
        &ctx,
        "file_write",
        json!({"path": carol.join("private.txt"), "content": "dropped"}),
    )
    .unwrap();
    let fresh = call(
        &ctx,
        "file_write",
        json!({"path": carol.join("fresh.txt"), "content": "dropped"}),
    )
    .unwrap();
    assert_eq!(
        without_path(existed.clone()),
        without_path(fresh),
        "{existed}"
    );
    assert!(existed.get("created").is_none(), "{existed}");
    // In its own workspace the agent is told.
    let own = call(
        &ctx,
        "file_write",
        json!({"path": "fresh.txt", "content": "x"}),
    )
    .unwrap();
    assert_eq!(own["created"], json!(true));
}

#[test]
fn a_write_only_grant_hides_what_stands_in_the_way() {
    let lab = Lab::new(Sandbox::None, true);
    let carol = lab.ws("carol");
    std::fs::create_dir_all(carol.join("a_dir")).unwrap();
    symlink(carol.join("private.txt"), carol.join("a_link")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        carol.join("a_fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let before = lab.snapshot();
    let ctx = lab.ctx();
    let mut answers = Vec::new();
    for name in ["a_dir", "a_link", "a_fifo"] {
        let r = call(
            &ctx,
            "file_write",
            json!({"path": carol.join(name), "content": "x"}),
        );
        assert_no_canary(&r);
        let e = r.unwrap_err();
        let msg = e.to_string().replace(name, "NAME");
        answers.push((e.code().to_string(), msg));
    }
    assert!(answers.iter().all(|a| a == &answers[0]), "{answers:?}");
    assert_eq!(answers[0].0, "not_writable");
    assert_eq!(lab.snapshot(), before);
}

/// Runs a call on its own thread and fails when it has not returned after `limit`: a call that
/// blocks forever (a FIFO with no reader) must never hang the tool.
fn returns_within(
    limit: Duration,
    f: impl FnOnce() -> Result<Value, ToolError> + Send + 'static,
) -> Result<Value, ToolError> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .expect("the call blocked: it must refuse a FIFO at open without waiting")
}

#[test]
fn writing_or_reading_a_fifo_never_blocks() {
    let lab = Lab::new(Sandbox::None, true);
    let ws = lab.ws("mallory");
    for p in [ws.join("pipe"), lab.ws("carol").join("pipe")] {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &p,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
    }
    for (path, code) in [
        (ws.join("pipe"), ToolErrorCode::NotAFile),
        (lab.ws("carol").join("pipe"), ToolErrorCode::NotWritable),
    ] {
        let ctx = lab.ctx();
        let r = returns_within(Duration::from_secs(10), move || {
            call(&ctx, "file_write", json!({"path": path, "content": "x"}))
        });
        assert_eq!(r.unwrap_err().code(), code);
    }
    let ctx = lab.ctx();
    let r = returns_within(Duration::from_secs(10), move || {
        call(&ctx, "file_read", json!({"path": "pipe"}))
    });
    // An empty pipe with no writer reads as empty, bounded.
    assert_eq!(r.unwrap()["truncated"], json!(true));
}

#[test]
fn devices_stay_usable_and_other_device_writes_are_refused() {
    let lab = Lab::new(Sandbox::None, false);
    let ctx = lab.ctx();
    call(
        &ctx,
        "file_write",
        json!({"path": "/dev/null", "content": "x"}),
    )
    .unwrap();
    let z = call(
        &ctx,
        "file_read",
        json!({"path": "/dev/zero", "max_bytes": 8}),
    )
    .unwrap();
    assert_eq!(z["bytes"], json!(8));
    // `/dev/full` is one of the five devices: opened, and full.
    let r = call(
        &ctx,
        "file_write",
        json!({"path": "/dev/full", "content": "x"}),
    );
    assert_eq!(r.unwrap_err().code(), ToolErrorCode::Io);
    // Unrestricted, but a terminal or other device is not a file to write.
    let r = call(
        &ctx,
        "file_write",
        json!({"path": "/dev/ptmx", "content": "x"}),
    );
    assert_eq!(r.unwrap_err().code(), ToolErrorCode::NotAFile);
}

#[test]
fn a_symlink_leaf_is_never_written_through() {
    let lab = Lab::new(Sandbox::None, true);
    let ws = lab.ws("mallory");
    // Points at mallory's own file: allowed target, still refused (a leaf link is never
    // followed for writing).
    symlink(ws.join("own.txt"), ws.join("alias.txt")).unwrap();
    symlink(lab.ws("bob").join("notes.txt"), ws.join("bob.txt")).unwrap();
    let before = lab.snapshot();
    let ctx = lab.ctx();
    let r = call(
        &ctx,
        "file_write",
        json!({"path": "alias.txt", "content": "x"}),
    );
    assert_eq!(r.unwrap_err().code(), ToolErrorCode::SymlinkLeaf);
    let r = call(
        &ctx,
        "file_write",
        json!({"path": "bob.txt", "content": "x"}),
    );
    assert!(r.is_err());
    assert_eq!(
        std::fs::read_to_string(ws.join("own.txt")).unwrap(),
        "mine\n"
    );
    assert_eq!(lab.snapshot(), before);
}

#[test]
fn missing_parents_are_created_only_where_writing_is_allowed() {
    let lab = Lab::new(Sandbox::None, true);
    let before = lab.snapshot();
    let ctx = lab.ctx();
    let r = call(
        &ctx,
        "file_write",
        json!({"path": lab.ws("bob").join("new/dir/x.txt"), "content": "x"}),
    );
    assert_eq!(r.unwrap_err().rule(), Some("read_only_grant"));
    let r = call(
        &ctx,
        "file_write",
        json!({"path": "forbidden/new/x.txt", "content": "x"}),
    );
    assert_eq!(r.unwrap_err().rule(), Some("forbidden_path"));
    assert_eq!(lab.snapshot(), before);
    call(
        &ctx,
        "file_write",
        json!({"path": "a/b/c.txt", "content": "x"}),
    )
    .unwrap();
    assert_eq!(
        std::fs::read_to_string(lab.ws("mallory").join("a/b/c.txt")).unwrap(),
        "x"
    );
}
