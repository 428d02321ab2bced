//! The sandbox plans are derived from the policy's own decisions.

use crate::fixture::{Fixture, FAMILY};
use std::ffi::OsString;
use std::path::Path;
use warren_policy::sandbox::{bwrap, fs_plan, layer_plan, layered_plan, mount_plan, FsGrant};
use warren_policy::{under, Access};

fn find<'a>(plan: &'a [FsGrant], p: &Path) -> Option<&'a FsGrant> {
    plan.iter().find(|g| g.path == p)
}

#[test]
fn landlock_rules_are_the_decisions_on_uniform_subtrees() {
    let fx = Fixture::new(FAMILY);
    let ws = fx.ws("alice");
    fx.write(&ws.join("secrets/key"), "k");
    fx.write(&ws.join("src/a.rs"), "a");
    fx.write(&ws.join("top.txt"), "t");
    fx.write(&fx.ws("bob").join("b.txt"), "b");
    let p = fx.policy("alice");
    let plan = fs_plan(&p);
    let system = ["/usr", "/etc"];
    for g in &plan {
        assert_eq!(g.write, p.decide(&g.path, Access::Write).0, "{g:?}");
        if !system.iter().any(|s| g.path.starts_with(s)) && !g.path.starts_with(&fx.home) {
            assert_eq!(g.read, p.decide(&g.path, Access::Read).0, "{g:?}");
        }
        // A rule with rights never sits above a denied, existing boundary (rights inherit down).
        for b in p.forbidden.iter().chain(&p.runtime_state) {
            if b.exists() && b != &g.path && under(b, &g.path) {
                assert!(g.is_hidden(), "{g:?} covers {}", b.display());
            }
        }
    }
    // The workspace is split around the existing forbidden dir: its entries get the rules.
    assert!(find(&plan, &ws).is_none());
    let src = find(&plan, &ws.join("src")).unwrap();
    assert!(src.read && src.write && src.exec);
    let top = find(&plan, &ws.join("top.txt")).unwrap();
    assert!(top.read && top.write && !top.is_dir);
    assert!(find(&plan, &ws.join("secrets")).unwrap().is_hidden());
    let bob = find(&plan, &fx.ws("bob")).unwrap();
    assert!(bob.read && !bob.write);
    let carol = find(&plan, &fx.ws("carol")).unwrap();
    assert!(!carol.read && carol.write && !carol.exec);
    let null = find(&plan, Path::new("/dev/null")).unwrap();
    assert!(null.read && null.write);
    let urandom = find(&plan, Path::new("/dev/urandom")).unwrap();
    assert!(urandom.read && urandom.write && !urandom.exec);
    let usr = find(&plan, Path::new("/usr")).unwrap();
    assert!(usr.read && usr.exec && !usr.write);
    // Nothing of erin, the config or data/ is granted.
    for g in &plan {
        assert!(!g.path.starts_with(fx.ws("erin")));
        assert!(!g.path.starts_with(fx.root.join("data")) || g.is_hidden());
    }
}

#[test]
fn bubblewrap_mounts_follow_the_same_decisions() {
    let fx = Fixture::new(FAMILY);
    let ws = fx.ws("alice");
    fx.write(&ws.join("secrets/key"), "k");
    let p = fx.policy("alice");
    let args: Vec<String> =
        bwrap::args(&layered_plan(&p), p.workspace_only, false, &ws, Vec::new())
            .unwrap()
            .args
            .iter()
            .map(|a: &OsString| a.to_string_lossy().into_owned())
            .collect();
    let joined = args.join(" ");
    let (w, b, c) = (
        ws.display().to_string(),
        fx.ws("bob").display().to_string(),
        fx.ws("carol").display().to_string(),
    );
    assert!(joined.contains(&format!("--bind {w} {w}")), "{joined}");
    assert!(joined.contains(&format!("--ro-bind {b} {b}")), "{joined}");
    assert!(
        !joined.contains(&format!("{c} {c}")),
        "write-only root is not mounted: {joined}"
    );
    assert!(joined.contains(&format!("--tmpfs {w}/secrets")), "{joined}");
    assert!(joined.contains("--unshare-net"));
    assert!(!joined.contains(&fx.ws("erin").display().to_string()));
    assert!(!joined.contains("config.toml"));
    assert!(joined.ends_with(&format!("--chdir {w}")));
}

#[test]
fn kernel_interfaces_and_protected_ancestors_get_no_wholesale_rule() {
    let fx = Fixture::new(FAMILY);
    let p = fx.policy("frank");
    let plan = fs_plan(&p);
    for g in &plan {
        if under(&g.path, Path::new("/proc")) {
            assert!(!g.write && !g.exec, "{g:?}");
            assert_ne!(g.path, Path::new("/proc"), "/proc granted wholesale");
            let pid = g.path.components().nth(2).map(|c| c.as_os_str().to_owned());
            let digits =
                pid.is_some_and(|c| c.to_string_lossy().bytes().all(|b| b.is_ascii_digit()));
            assert!(!digits, "{g:?}");
        }
        if under(&g.path, Path::new("/sys")) {
            assert!(!g.write, "{g:?}");
        }
        // No writable rule on the install root or an ancestor (nothing can rename them).
        assert!(!(under(&fx.root, &g.path) && g.write), "{g:?}");
    }
    assert!(plan
        .iter()
        .any(|g| g.path == Path::new("/proc/cpuinfo") && g.read));
    let sys = find(&plan, Path::new("/sys")).unwrap();
    assert!(sys.read && !sys.write);
    // bubblewrap: every ancestor of the install root becomes a mount point (no `/` itself).
    let mounts = warren_policy::sandbox::mount_plan(&p);
    for a in fx.root.ancestors().filter(|a| *a != Path::new("/")) {
        assert!(
            find(&mounts, a).is_some(),
            "{} is not a mount point",
            a.display()
        );
    }
    assert!(find(&mounts, &fx.root.join("agents/bob")).is_some());
    let args: Vec<String> = bwrap::args(&mounts, false, false, &fx.ws("frank"), Vec::new())
        .unwrap()
        .args
        .iter()
        .map(|a: &OsString| a.to_string_lossy().into_owned())
        .collect();
    let joined = args.join(" ");
    assert!(joined.contains("--cap-drop ALL"), "{joined}");
    assert!(joined.contains("--remount-ro /proc"), "{joined}");
    assert!(joined.contains("--ro-bind /sys /sys"), "{joined}");
    let with_net = bwrap::args(&mounts, false, true, &fx.ws("frank"), Vec::new()).unwrap();
    assert!(!with_net.args.iter().any(|a| a == "--unshare-net"));
}

/// The Landlock layer inside bubblewrap: where a mount already decides (a forbidden folder
/// inside the workspace, hidden by a mask), the folder above it keeps its own rule, so the layer
/// is not stricter than the view; `/dev` is carved (bubblewrap makes its own), and nothing of
/// what the policy closes gets a right.
#[test]
fn the_layer_inside_bubblewrap_rules_what_no_mount_decides() {
    let fx = Fixture::new(FAMILY);
    let ws = fx.ws("alice");
    fx.write(&ws.join("secrets/key"), "k");
    fx.write(&ws.join("top.txt"), "t");
    let p = fx.policy("alice");
    let mounts = mount_plan(&p);
    let plan = layer_plan(&p, &mounts);
    // The Landlock backend cannot give the workspace a rule (a boundary beneath); the layer can,
    // because the forbidden folder is a mount of the view.
    assert!(find(&fs_plan(&p), &ws).is_none());
    let w = find(&plan, &ws).unwrap();
    assert!(w.read && w.write && w.exec, "{w:?}");
    assert!(mounts
        .iter()
        .any(|g| g.path == ws.join("secrets") && g.is_hidden()));
    // Every rule with rights agrees with the policy at its own path.
    for g in plan.iter().filter(|g| !g.is_hidden()) {
        if g.path.starts_with("/usr") || g.path.starts_with("/etc") || g.path.starts_with("/proc") {
            continue;
        }
        assert!(!g.write || p.decide(&g.path, Access::Write).0, "{g:?}");
        assert!(!g.read || p.decide(&g.path, Access::Read).0, "{g:?}");
        assert!(!g.path.starts_with(fx.ws("erin")), "{g:?}");
    }
    // /dev: the five devices, no rule on /dev itself (bubblewrap's own /dev is a new folder).
    assert!(find(&plan, Path::new("/dev")).is_none_or(warren_policy::FsGrant::is_hidden));
    assert!(find(&plan, Path::new("/dev/urandom")).is_some_and(|g| g.read && g.write));
}
