//! Table-driven tests of every rule of rules §2.1 on real paths.

use crate::fixture::{Fixture, FAMILY};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use warren_policy::{Access, Rule, SecurityPolicy};

struct Case {
    input: String,
    access: Access,
    allowed: bool,
    rule: Rule,
    resolved: Option<PathBuf>,
}

fn case(input: impl Into<String>, access: Access, allowed: bool, rule: Rule) -> Case {
    Case {
        input: input.into(),
        access,
        allowed,
        rule,
        resolved: None,
    }
}

fn run(policy: &SecurityPolicy, cases: &[Case]) {
    let mut failures = Vec::new();
    for c in cases {
        let d = policy.check(Path::new(&c.input), c.access);
        if d.allowed != c.allowed || d.rule != c.rule {
            failures.push(format!(
                "{} {:?}: got allowed={} rule={} (path {}), want allowed={} rule={}",
                c.access,
                c.input,
                d.allowed,
                d.rule,
                d.path.display(),
                c.allowed,
                c.rule
            ));
        }
        if let Some(want) = &c.resolved {
            if &d.path != want {
                failures.push(format!(
                    "{:?}: resolved {} want {}",
                    c.input,
                    d.path.display(),
                    want.display()
                ));
            }
        }
        // authorize() agrees with check().
        assert_eq!(
            policy.authorize(Path::new(&c.input), c.access).is_ok(),
            d.allowed
        );
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

fn setup() -> Fixture {
    let fx = Fixture::new(FAMILY);
    let alice = fx.ws("alice");
    fx.write(&fx.ws("bob").join("readme.md"), "bob's notes");
    fx.write(&fx.ws("erin").join("private.txt"), "erin only");
    fx.write(&alice.join("file.txt"), "hello");
    symlink(fx.ws("bob"), alice.join("tobob")).unwrap();
    symlink(fx.ws("carol"), alice.join("tocarol")).unwrap();
    symlink(fx.root.join("outside/target"), alice.join("dangling")).unwrap();
    symlink(
        fx.ws("dave").join("not-yet"),
        alice.join("dangling_in_dave"),
    )
    .unwrap();
    symlink("loop_b", alice.join("loop_a")).unwrap();
    symlink("loop_a", alice.join("loop_b")).unwrap();
    symlink(fx.root.join("config.toml"), alice.join("cfg")).unwrap();
    fx
}

#[test]
fn alice_with_workspace_only() {
    use Access::{Read as R, Write as W};
    let fx = setup();
    let p = fx.policy("alice");
    let ws = fx.ws("alice");
    let bob = fx.ws("bob");
    let carol = fx.ws("carol");
    let dave = fx.ws("dave");
    let erin = fx.ws("erin");
    let root = fx.root.display().to_string();
    let mut cases = vec![
        // The workspace, relative and absolute, existing and new.
        case("file.txt", R, true, Rule::Workspace),
        case("file.txt", W, true, Rule::Workspace),
        case("new/dir/x.txt", W, true, Rule::Workspace),
        case(
            ws.join("file.txt").display().to_string(),
            R,
            true,
            Rule::Workspace,
        ),
        case("./a/../file.txt", R, true, Rule::Workspace),
        // `..` escapes.
        case(
            "../../erin/workspace/private.txt",
            R,
            false,
            Rule::OutsideWorkspace,
        ),
        case(
            "../../../../../../../../etc/passwd",
            R,
            false,
            Rule::OutsideWorkspace,
        ),
        case("a/../../workspace2/x", W, false, Rule::OutsideWorkspace),
        // Absolute paths outside.
        case("/etc/passwd", R, false, Rule::OutsideWorkspace),
        case("/tmp/x", W, false, Rule::OutsideWorkspace),
        case(
            erin.join("private.txt").display().to_string(),
            R,
            false,
            Rule::OutsideWorkspace,
        ),
        // `~`.
        case("~", R, false, Rule::OutsideWorkspace),
        case("~/notes.txt", W, false, Rule::OutsideWorkspace),
        case("~/secret/key", R, false, Rule::ForbiddenPath),
        case("~root/x", R, false, Rule::InvalidPath),
        // Forbidden path inside the workspace (relative entry).
        case("secrets/token", R, false, Rule::ForbiddenPath),
        case("secrets", W, false, Rule::ForbiddenPath),
        // Read-only sibling.
        case(
            "../../bob/workspace/readme.md",
            R,
            true,
            Rule::ReadOnlyGrant,
        ),
        case(
            bob.join("readme.md").display().to_string(),
            W,
            false,
            Rule::ReadOnlyGrant,
        ),
        case(
            bob.join("new.txt").display().to_string(),
            W,
            false,
            Rule::ReadOnlyGrant,
        ),
        // Write-only sibling.
        case(
            carol.join("drop.txt").display().to_string(),
            W,
            true,
            Rule::WriteOnlyGrant,
        ),
        case(
            carol.join("drop.txt").display().to_string(),
            R,
            false,
            Rule::WriteOnlyGrant,
        ),
        case(carol.display().to_string(), R, false, Rule::WriteOnlyGrant),
        // Read-write sibling.
        case(
            dave.join("x").display().to_string(),
            R,
            true,
            Rule::ReadWriteGrant,
        ),
        case(
            dave.join("x").display().to_string(),
            W,
            true,
            Rule::ReadWriteGrant,
        ),
        // Symlink in the workspace to a read-only sibling: read ok, write denied.
        case("tobob/readme.md", R, true, Rule::ReadOnlyGrant),
        case("tobob/readme.md", W, false, Rule::ReadOnlyGrant),
        case("tocarol/drop.txt", R, false, Rule::WriteOnlyGrant),
        case("tocarol/drop.txt", W, true, Rule::WriteOnlyGrant),
        // Dangling symlink followed to its target.
        case("dangling", W, false, Rule::OutsideWorkspace),
        case("dangling/deeper/file", W, false, Rule::OutsideWorkspace),
        case("dangling_in_dave", W, true, Rule::ReadWriteGrant),
        // Loops and NUL.
        case("loop_a", R, false, Rule::SymlinkLoop),
        case("loop_b/x", W, false, Rule::SymlinkLoop),
        case("bad\0name", R, false, Rule::InvalidPath),
        case("", R, false, Rule::InvalidPath),
        // Devices: the five POSIX devices, read and written alike.
        case("/dev/null", R, true, Rule::Device),
        case("/dev/zero", R, true, Rule::Device),
        case("/dev/full", R, true, Rule::Device),
        case("/dev/random", R, true, Rule::Device),
        case("/dev/urandom", R, true, Rule::Device),
        case("/dev/null", W, true, Rule::Device),
        case("/dev/zero", W, true, Rule::Device),
        case("/dev/urandom", W, true, Rule::Device),
        case("/dev/tty", R, false, Rule::OutsideWorkspace),
        case("/dev/sda", R, false, Rule::OutsideWorkspace),
        // Runtime state: never writable (nor readable).
        case(format!("{root}/config.toml"), W, false, Rule::RuntimeState),
        case(format!("{root}/config.toml"), R, false, Rule::RuntimeState),
        case("cfg", W, false, Rule::RuntimeState),
        case(
            format!("{root}/data/memory/memory.db"),
            W,
            false,
            Rule::RuntimeState,
        ),
        case(
            format!("{root}/data/agents/_deleted/x-1/workspace/f"),
            W,
            false,
            Rule::RuntimeState,
        ),
        // Shared skills: read-only.
        case(
            format!("{root}/shared/skills/s.md"),
            R,
            true,
            Rule::ReadOnlyGrant,
        ),
        case(
            format!("{root}/shared/skills/s.md"),
            W,
            false,
            Rule::ReadOnlyGrant,
        ),
    ];
    cases.push(Case {
        resolved: Some(fx.root.join("outside/target")),
        ..case("dangling", R, false, Rule::OutsideWorkspace)
    });
    cases.push(Case {
        resolved: Some(bob.join("readme.md")),
        ..case("tobob/readme.md", R, true, Rule::ReadOnlyGrant)
    });
    run(&p, &cases);
}

#[test]
fn frank_without_workspace_only() {
    use Access::{Read as R, Write as W};
    let fx = setup();
    let p = fx.policy("frank");
    assert!(!p.workspace_only);
    let root = fx.root.display().to_string();
    let bob = fx.ws("bob").display().to_string();
    let carol = fx.ws("carol").display().to_string();
    let cases = vec![
        case("/etc/hostname", R, true, Rule::Unrestricted),
        case(format!("{root}/elsewhere/x"), W, true, Rule::Unrestricted),
        case(
            fx.ws("erin").join("private.txt").display().to_string(),
            R,
            true,
            Rule::Unrestricted,
        ),
        // Read-only sibling stays unwritable even with workspace_only off.
        case(format!("{bob}/readme.md"), W, false, Rule::ReadOnlyGrant),
        case(format!("{bob}/readme.md"), R, true, Rule::ReadOnlyGrant),
        // Write-only sibling stays unreadable.
        case(format!("{carol}/x"), R, false, Rule::WriteOnlyGrant),
        case(format!("{carol}/x"), W, true, Rule::WriteOnlyGrant),
        // Runtime state and forbidden paths stay denied.
        case(format!("{root}/config.toml"), W, false, Rule::RuntimeState),
        case(format!("{root}/data"), W, false, Rule::RuntimeState),
        case("~/secret/id", R, false, Rule::ForbiddenPath),
        case(
            format!("{root}/shared/skills/x"),
            W,
            false,
            Rule::ReadOnlyGrant,
        ),
    ];
    run(&p, &cases);
}

#[test]
fn policy_shape_follows_the_config() {
    let fx = setup();
    let p = fx.policy("alice");
    assert!(p.workspace_only);
    assert_eq!(p.workspace, fx.ws("alice"));
    assert!(p.workspace.is_dir());
    let tiers: Vec<(String, warren_policy::Tier)> = p
        .roots
        .iter()
        .map(|r| (r.path.display().to_string(), r.tier))
        .collect();
    use warren_policy::Tier::*;
    for (path, tier) in [
        (fx.ws("alice"), ReadWrite),
        (fx.ws("bob"), ReadOnly),
        (fx.ws("carol"), WriteOnly),
        (fx.ws("dave"), ReadWrite),
        (fx.root.join("shared/skills"), ReadOnly),
    ] {
        assert!(
            tiers.contains(&(path.display().to_string(), tier)),
            "{path:?} {tier:?} in {tiers:?}"
        );
    }
    assert!(!tiers.iter().any(|(p, _)| p.contains("/erin/")));
}

#[test]
fn workspace_created_and_custom_path_honoured() {
    let dir = tempfile::tempdir().unwrap();
    let custom = std::fs::canonicalize(dir.path())
        .unwrap()
        .join("elsewhere/ws");
    let text = format!(
        "[risk_profiles.p]\n[agents.a]\nrisk_profile = \"p\"\n[agents.a.workspace]\npath = \"{}\"\n",
        custom.display()
    );
    let fx = Fixture::new(&text);
    // The fixture prepared every agent; building the policy again after removing the folder
    // reads only, and preparing it (as an acting caller does) makes the folder again.
    std::fs::remove_dir_all(&custom).unwrap();
    let read = SecurityPolicy::for_agent(&fx.config, "a", &fx.env()).unwrap();
    assert!(!custom.exists(), "a policy read made {}", custom.display());
    read.prepare().unwrap();
    let p = fx.policy("a");
    assert!(custom.is_dir(), "custom workspace created");
    assert_eq!(p.workspace, custom);
    assert!(p
        .authorize(Path::new("x"), Access::Write)
        .unwrap()
        .path
        .starts_with(&custom));
}

#[test]
fn bad_configs_are_named() {
    let fx = Fixture::new(FAMILY);
    let mut cfg = fx.config.clone();
    cfg.agents.get_mut("alice").unwrap().risk_profile = "nope".into();
    let err = SecurityPolicy::for_agent(&cfg, "alice", &fx.env()).unwrap_err();
    assert!(
        err.to_string().contains("agents.alice.risk_profile"),
        "{err}"
    );
    let err = SecurityPolicy::for_agent(&fx.config, "zed", &fx.env()).unwrap_err();
    assert!(err.to_string().contains("`zed`"), "{err}");
    let mut cfg = fx.config.clone();
    cfg.agents.get_mut("alice").unwrap().workspace.path = Some("relative/ws".into());
    let err = SecurityPolicy::for_agent(&cfg, "alice", &fx.env()).unwrap_err();
    assert!(err.to_string().contains("must be absolute"), "{err}");
}

#[test]
fn kernel_interfaces_and_protected_ancestors() {
    use Access::{Read as R, Write as W};
    let fx = setup();
    let p = fx.policy("frank");
    let root = fx.root.display().to_string();
    let me = std::process::id();
    let cases = vec![
        // Another process's /proc entries: whose pid is the caller's is unknowable here.
        case(
            format!("/proc/{me}/environ"),
            R,
            false,
            Rule::KernelInterface,
        ),
        case(format!("/proc/{me}/mem"), R, false, Rule::KernelInterface),
        case("/proc/1/fd/0", R, false, Rule::KernelInterface),
        case("/proc/1", R, false, Rule::KernelInterface),
        // The caller's own entries and system-wide facts are readable.
        case("/proc/self/status", R, true, Rule::Unrestricted),
        case("/proc/thread-self/comm", R, true, Rule::Unrestricted),
        case("/proc/cpuinfo", R, true, Rule::Unrestricted),
        case("/sys/kernel", R, true, Rule::Unrestricted),
        // Never written.
        case(
            "/proc/sys/kernel/domainname",
            W,
            false,
            Rule::KernelInterface,
        ),
        case("/proc/self/oom_score_adj", W, false, Rule::KernelInterface),
        case("/sys/kernel/mm", W, false, Rule::KernelInterface),
        // The install root and every ancestor of it, of runtime state or of a read-only root.
        case(root.clone(), W, false, Rule::ProtectedAncestor),
        case("/", W, false, Rule::ProtectedAncestor),
        case(format!("{root}/agents"), W, false, Rule::ProtectedAncestor),
        case(
            format!("{root}/agents/bob"),
            W,
            false,
            Rule::ProtectedAncestor,
        ),
        case(format!("{root}/shared"), W, false, Rule::ProtectedAncestor),
        case(format!("{root}/data/agents"), W, false, Rule::RuntimeState),
        // Reading them is fine, and so is writing next to them.
        case(format!("{root}/agents"), R, true, Rule::Unrestricted),
        case(format!("{root}/agents/erin"), W, true, Rule::Unrestricted),
        // carol's workspace is a write-only root: moving its folder would make it readable.
        case(
            format!("{root}/agents/carol"),
            W,
            false,
            Rule::ProtectedAncestor,
        ),
        case(
            format!("{root}/agents/carol/workspace/new"),
            W,
            true,
            Rule::WriteOnlyGrant,
        ),
        case(
            format!("{root}/agents/frank/workspace/x"),
            W,
            true,
            Rule::Workspace,
        ),
    ];
    run(&p, &cases);
    // Under workspace_only the same paths are denied too (by the boundary or the new rules).
    let a = fx.policy("alice");
    assert!(
        !a.check(Path::new(&format!("/proc/{me}/environ")), R)
            .allowed
    );
    assert_eq!(
        a.check(Path::new(&format!("{root}/agents")), W).rule,
        Rule::ProtectedAncestor
    );
    // Shared skills is protected even before it exists (and the policy creates it).
    std::fs::remove_dir(fx.root.join("shared/skills")).unwrap();
    let p = fx.policy("frank");
    assert!(fx.root.join("shared/skills").is_dir());
    assert_eq!(
        p.check(Path::new(&format!("{root}/shared")), W).rule,
        Rule::ProtectedAncestor
    );
    assert_eq!(Rule::KernelInterface.code(), "kernel_interface");
    assert_eq!(Rule::ProtectedAncestor.code(), "protected_ancestor");
}

#[test]
fn network_is_off_by_default_and_on_in_the_yolo_preset() {
    use warren_config::{default_config_text, parse_config, Preset};
    assert!(warren_types::RiskProfile::default().network.is_off());
    for preset in [Preset::LockedDown, Preset::Balanced, Preset::Yolo] {
        let config = parse_config(&default_config_text(preset)).unwrap();
        for (name, profile) in &config.risk_profiles {
            assert_eq!(profile.network.is_open(), name == "yolo", "{name}");
        }
    }
    let config = parse_config("[risk_profiles.p]\nnetwork = true\n").unwrap();
    assert!(config.risk_profiles["p"].network.is_open());
}
