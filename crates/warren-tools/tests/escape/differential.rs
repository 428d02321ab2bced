//! A differential test of the three layers that must agree on every path: what
//! `SecurityPolicy::check` (authorize) decides, what the file tools do through the agent loop's
//! gate (`Registry::invoke`), and what a real child process can do under Landlock and under
//! bubblewrap (`sandbox::confine`, one Python child per install, agent and backend running every
//! probe of that agent).
//!
//! Installs (agents, grants, risk profiles, allowed roots, forbidden paths) and file trees (nested
//! folders, non-ASCII names, canary files, relative / absolute / chained / looping / device /
//! cross-workspace symbolic links, hard links, FIFOs) are generated from fixed seeds.
//!
//! - **Escape** (fails the test): a layer did what authorize denies, a denied file's canary
//!   appeared in any output, or a path the agent may not write changed on disk.
//! - **Stricter** (reported, does not fail): authorize allows, the layer refuses. Each case is
//!   classified; a case that fits no known class is printed in full under `other`.
//!
//! `WARREN_DIFF_SEED=<n>` runs that seed alone, `WARREN_DIFF_SEEDS=<n>` the first n seeds
//! (default 4): `WARREN_DIFF_SEED=3 cargo test -p warren-tools --test escape differential`.
//! `WARREN_DIFF_VERBOSE=1` prints every stricter case, not only one per class.

use crate::fixture::{call, Fixture};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::hash::{Hash, Hasher};
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use warren_policy::rustix;
use warren_policy::sandbox::plan::{KERNEL_DIRS, PROC_FILES, SYSTEM_DIRS};
use warren_policy::sandbox::{choose, confine, fs_plan, mount_plan, FsGrant};
use warren_policy::{
    under, Access, EffectiveSandbox, Rule, SandboxSupport, SecurityPolicy, Tier, DEVICES,
};
use warren_tools::ToolContext;
use warren_types::SandboxKind;

const ALIASES: [&str; 10] = [
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
];
const DEFAULT_SEEDS: u64 = 4;
const PYTHON: &str = "/usr/bin/python3";
/// The longest one probe child may run.
const CHILD_LIMIT: Duration = Duration::from_secs(120);
const OTHER: &str = "other";
/// The cause of escapes through a hard link that existed before the agent ran.
const ALIAS: &str = "pre-existing hard link: the same file has another name the agent may use";
/// A harmless change: the agent's own file changed, and a hard link to it elsewhere with it.
const OWN_FILE_CHANGED: &str =
    "on disk: the agent's own file changed, and with it a hard link to it where it may not write";

// ---------------------------------------------------------------------------------------------
// Deterministic randomness (splitmix64).

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0xA076_1D64_78BD_642F) ^ 0x5EED_D1FF)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i + 1);
            xs.swap(i, j);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Generated installs.

/// Where a generated path lives: under the install root, under the folder outside the install,
/// or on the host (`rel` is then absolute).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Base {
    Root,
    Out,
    Host,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Loc {
    base: Base,
    rel: String,
}

fn at_root(rel: &str) -> Loc {
    Loc {
        base: Base::Root,
        rel: rel.to_string(),
    }
}

fn at_out(rel: &str) -> Loc {
    Loc {
        base: Base::Out,
        rel: rel.to_string(),
    }
}

fn host(path: &str) -> Loc {
    Loc {
        base: Base::Host,
        rel: path.to_string(),
    }
}

impl Loc {
    fn join(&self, name: &str) -> Loc {
        let rel = if self.rel.is_empty() {
            name.to_string()
        } else {
            format!("{}/{}", self.rel, name)
        };
        Loc {
            base: self.base,
            rel,
        }
    }

    fn path(&self, w: &World) -> PathBuf {
        let base = match self.base {
            Base::Root => &w.root,
            Base::Out => &w.out,
            Base::Host => return PathBuf::from(&self.rel),
        };
        if self.rel.is_empty() {
            base.clone()
        } else {
            base.join(&self.rel)
        }
    }
}

/// The real places of one install.
struct World {
    root: PathBuf,
    out: PathBuf,
}

#[derive(Debug, Clone)]
enum Kind {
    Dir,
    File,
    Fifo,
    /// A symbolic link with this relative target.
    SymRel(String),
    /// A symbolic link to this place (absolute target).
    SymTo(Loc),
    /// A hard link to this (regular) file.
    Hard(Loc),
}

#[derive(Debug, Clone)]
struct Node {
    at: Loc,
    kind: Kind,
}

#[derive(Debug, Clone)]
struct ProfileSpec {
    workspace_only: bool,
    allowed_root: Option<&'static str>,
    /// `{out}` stands for the folder outside the install.
    forbidden: Vec<String>,
}

#[derive(Debug, Clone)]
struct AgentSpec {
    alias: &'static str,
    profile: usize,
    unrestricted: bool,
    access: Vec<(&'static str, &'static str)>,
}

struct Spec {
    seed: u64,
    profiles: Vec<ProfileSpec>,
    agents: Vec<AgentSpec>,
    nodes: Vec<Node>,
    /// Paths probed beyond the nodes (install state, devices, paths that do not exist).
    extra: Vec<Loc>,
}

fn generate(seed: u64) -> Spec {
    let mut rng = Rng::new(seed);
    let mut pool = ALIASES.to_vec();
    rng.shuffle(&mut pool);
    let n = 3 + rng.below(4);
    let aliases: Vec<&'static str> = pool[..n].to_vec();
    let mut profiles = Vec::new();
    for i in 0..1 + rng.below(2) {
        // Odd seeds start with an unrestricted profile, so that the default seeds cover both.
        let workspace_only = if i == 0 {
            seed.is_multiple_of(2)
        } else {
            rng.chance(60)
        };
        let allowed_root = match rng.below(3) {
            0 => None,
            1 => Some("{out}/granted"),
            _ => Some("~/projects"),
        };
        let mut forbidden = vec!["secrets".to_string()];
        for f in [
            "not-yet",
            "nested/a/b",
            "ñandú dir/файл.txt",
            "id_rsa.pem",
            "{out}/granted/classified",
            "{out}/granted/deep/er/classified",
            "~/vault",
            "~/later/x",
            "~/projects/inner/hidden",
        ] {
            if rng.chance(45) {
                forbidden.push(f.to_string());
            }
        }
        if rng.chance(40) {
            let sib = aliases[rng.below(n)];
            forbidden.push(format!("~/../agents/{sib}/workspace/secrets"));
        }
        profiles.push(ProfileSpec {
            workspace_only,
            allowed_root,
            forbidden,
        });
    }
    let mut agents = Vec::new();
    for alias in &aliases {
        let profile = rng.below(profiles.len());
        let unrestricted = profiles[profile].workspace_only && rng.chance(25);
        let mut access = Vec::new();
        for other in &aliases {
            if other == alias {
                continue;
            }
            match rng.below(5) {
                0 | 1 => {}
                2 => access.push((*other, "read")),
                3 => access.push((*other, "write")),
                _ => access.push((*other, "read_write")),
            }
        }
        agents.push(AgentSpec {
            alias,
            profile,
            unrestricted,
            access,
        });
    }
    let (nodes, extra) = tree(&mut rng, &aliases);
    Spec {
        seed,
        profiles,
        agents,
        nodes,
        extra,
    }
}

fn tree(rng: &mut Rng, aliases: &[&'static str]) -> (Vec<Node>, Vec<Loc>) {
    let mut areas: Vec<(String, Loc, bool)> = aliases
        .iter()
        .map(|a| {
            (
                a.to_string(),
                at_root(&format!("agents/{a}/workspace")),
                true,
            )
        })
        .collect();
    areas.push(("granted".into(), at_out("granted"), false));
    areas.push(("other".into(), at_out("other"), false));
    areas.push(("home".into(), at_root("home"), false));
    areas.push(("projects".into(), at_root("home/projects"), false));

    let mut nodes = Vec::new();
    let mut add = |at: Loc, kind: Kind| nodes.push(Node { at, kind });
    // Install-wide state and places around the areas.
    for rel in [
        "data",
        "shared",
        "shared/skills",
        "home/.ssh",
        "home/vault",
        "home/projects/inner",
        "home/projects/inner/hidden",
    ] {
        add(at_root(rel), Kind::Dir);
    }
    for rel in [
        "data/state.txt",
        "shared/skills/skill.md",
        "home/.ssh/id_rsa",
        "home/.gitconfig",
        "home/vault/v.txt",
        "home/projects/inner/hidden/h.txt",
    ] {
        add(at_root(rel), Kind::File);
    }
    for rel in [
        "granted/classified",
        "granted/deep",
        "granted/deep/er",
        "granted/deep/er/classified",
    ] {
        add(at_out(rel), Kind::Dir);
    }
    for rel in [
        "granted/classified/c.txt",
        "granted/deep/er/classified/c.txt",
        "other/o.txt",
    ] {
        add(at_out(rel), Kind::File);
    }
    for (i, (_, a, is_ws)) in areas.iter().enumerate() {
        add(a.clone(), Kind::Dir);
        for d in ["ñandú dir", "nested", "nested/a", "nested/a/b"] {
            add(a.join(d), Kind::Dir);
        }
        for f in [
            "plain.txt",
            "with space.txt",
            "ñandú dir/файл.txt",
            "nested/a/b/deep.txt",
        ] {
            add(a.join(f), Kind::File);
        }
        if *is_ws {
            add(a.join("secrets"), Kind::Dir);
            add(a.join("secrets/key.txt"), Kind::File);
            add(a.join("to-secret"), Kind::SymTo(a.join("secrets/key.txt")));
        }
        add(a.join("rel-link"), Kind::SymRel("plain.txt".into()));
        add(
            a.join("abs-link"),
            Kind::SymTo(a.join("ñandú dir/файл.txt")),
        );
        add(a.join("chain1"), Kind::SymRel("chain2".into()));
        add(a.join("chain2"), Kind::SymTo(a.join("plain.txt")));
        if rng.chance(60) {
            add(a.join("loop-a"), Kind::SymRel("loop-b".into()));
            add(a.join("loop-b"), Kind::SymRel("loop-a".into()));
        }
        add(a.join("urandom"), Kind::SymTo(host("/dev/urandom")));
        add(
            a.join("dangling"),
            Kind::SymRel("missing-target.txt".into()),
        );
        add(a.join("dir-link"), Kind::SymRel("nested/a".into()));
        add(a.join("hard-plain"), Kind::Hard(a.join("plain.txt")));
        if rng.chance(30) {
            add(
                a.join("hard-deep"),
                Kind::Hard(a.join("nested/a/b/deep.txt")),
            );
        }
        if rng.chance(70) {
            add(a.join("pipe"), Kind::Fifo);
        }
        if rng.chance(40) {
            add(
                a.join("ñandú dir/up-link"),
                Kind::SymRel("../nested/a/b/deep.txt".into()),
            );
        }
        for _ in 0..1 + rng.below(2) {
            let j = rng.below(areas.len());
            if j == i {
                continue;
            }
            let (tag, b, _) = &areas[j];
            add(a.join(&format!("to-{tag}")), Kind::SymTo(b.clone()));
            add(
                a.join(&format!("to-{tag}-file")),
                Kind::SymTo(b.join("plain.txt")),
            );
            if rng.chance(35) {
                add(
                    a.join(&format!("hard-x-{tag}")),
                    Kind::Hard(b.join("plain.txt")),
                );
            }
        }
        if rng.chance(50) {
            add(a.join("to-config"), Kind::SymTo(at_root("config.toml")));
            add(a.join("to-data"), Kind::SymTo(at_root("data")));
            add(a.join("to-state"), Kind::SymTo(at_root("data/state.txt")));
        }
        if rng.chance(35) {
            add(a.join("to-skills"), Kind::SymTo(at_root("shared/skills")));
            add(a.join("to-tty"), Kind::SymTo(host("/dev/tty")));
            add(a.join("to-ssh"), Kind::SymTo(at_root("home/.ssh/id_rsa")));
        }
    }

    let mut extra = vec![
        at_root(""),
        at_root("agents"),
        at_root("config.toml"),
        at_out(""),
        at_root("home/later"),
        at_root("home/later/x"),
        host("/nonexistent-warren-diff/x"),
    ];
    for d in DEVICES {
        extra.push(host(d));
    }
    extra.push(host("/dev/tty"));
    for a in aliases {
        let ws = at_root(&format!("agents/{a}/workspace"));
        extra.push(at_root(&format!("agents/{a}")));
        for rel in [
            "not-yet",
            "not-yet/x",
            "id_rsa.pem",
            "missing.txt",
            "missing-dir",
            "missing-dir/x",
        ] {
            extra.push(ws.join(rel));
        }
    }
    (nodes, extra)
}

fn toml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn config_text(spec: &Spec, kind: SandboxKind, out: &Path) -> String {
    let sb = match kind {
        SandboxKind::Landlock => "landlock",
        SandboxKind::Bubblewrap => "bubblewrap",
        _ => "none",
    };
    let out = out.display().to_string();
    let list = |xs: &[String]| {
        xs.iter()
            .map(|x| toml_str(&x.replace("{out}", &out)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut t = String::from(
        "[runtime_profiles.diff]\nmax_actions_per_hour = 1000000\nshell_timeout_secs = 60\n\n",
    );
    for (i, p) in spec.profiles.iter().enumerate() {
        let roots: Vec<String> = p
            .allowed_root
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        t.push_str(&format!(
            "[risk_profiles.p{i}]\nlevel = \"full\"\nallowed_commands = [\"*\"]\n\
             block_high_risk_commands = false\nrequire_approval_for_medium_risk = false\n\
             sandbox = \"{sb}\"\nworkspace_only = {}\nallowed_roots = [{}]\nforbidden_paths = [{}]\n\n",
            p.workspace_only,
            list(&roots),
            list(&p.forbidden)
        ));
    }
    for a in &spec.agents {
        t.push_str(&format!(
            "[agents.{}]\nrisk_profile = \"p{}\"\nruntime_profile = \"diff\"\n",
            a.alias, a.profile
        ));
        if a.unrestricted {
            t.push_str(&format!(
                "[agents.{}.workspace]\nunrestricted_filesystem = true\n",
                a.alias
            ));
        }
        if !a.access.is_empty() {
            t.push_str(&format!("[agents.{}.workspace.access]\n", a.alias));
            for (sib, mode) in &a.access {
                t.push_str(&format!("{sib} = \"{mode}\"\n"));
            }
        }
        t.push('\n');
    }
    t
}

/// One generated install on disk: the fixture (install root, home) and the folder outside it.
struct Install {
    _out_dir: tempfile::TempDir,
    fx: Fixture,
    w: World,
    seed: u64,
    next_canary: u64,
    /// Canary → the file it was planted in (its real path).
    homes: BTreeMap<String, PathBuf>,
}

impl Install {
    fn new(spec: &Spec, kind: SandboxKind) -> Self {
        let out_dir = tempfile::tempdir().unwrap();
        let out = std::fs::canonicalize(out_dir.path()).unwrap();
        for d in ["granted", "other"] {
            std::fs::create_dir_all(out.join(d)).unwrap();
        }
        let fx = Fixture::new(&config_text(spec, kind, &out));
        let w = World {
            root: fx.root.clone(),
            out,
        };
        let mut inst = Install {
            _out_dir: out_dir,
            fx,
            w,
            seed: spec.seed,
            next_canary: 0,
            homes: BTreeMap::new(),
        };
        inst.materialize(&spec.nodes);
        inst
    }

    fn canary(&mut self) -> String {
        self.next_canary += 1;
        format!("CANARY-{}-{}.", self.seed, self.next_canary)
    }

    /// A regular file holding a fresh canary (through any link on the way).
    fn plant_file(&mut self, p: &Path) {
        let c = self.canary();
        if let Some(d) = p.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        if std::fs::write(p, format!("{c}\n")).is_ok() {
            let real = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
            self.homes.insert(c, real);
        }
    }

    fn materialize(&mut self, nodes: &[Node]) {
        for n in nodes {
            let p = n.at.path(&self.w);
            match n.kind {
                Kind::Dir => std::fs::create_dir_all(&p).unwrap(),
                Kind::File => self.plant_file(&p),
                _ => {}
            }
        }
        for n in nodes {
            let p = n.at.path(&self.w);
            if std::fs::symlink_metadata(&p).is_ok() {
                continue;
            }
            if let Some(d) = p.parent() {
                let _ = std::fs::create_dir_all(d);
            }
            match &n.kind {
                Kind::Hard(t) => {
                    // Different filesystems: no hard link, the tree goes without it.
                    let _ = std::fs::hard_link(t.path(&self.w), &p);
                }
                Kind::Fifo => rustix::fs::mknodat(
                    rustix::fs::CWD,
                    &p,
                    rustix::fs::FileType::Fifo,
                    rustix::fs::Mode::from_raw_mode(0o644),
                    0,
                )
                .unwrap(),
                Kind::SymRel(t) => symlink(t, &p).unwrap(),
                Kind::SymTo(t) => symlink(t.path(&self.w), &p).unwrap(),
                Kind::Dir | Kind::File => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Probes.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Read,
    Write,
    Create,
    Mkdir,
    Rename,
    Remove,
    Link,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Create => "create",
            Op::Mkdir => "mkdir",
            Op::Rename => "rename",
            Op::Remove => "remove",
            Op::Link => "link",
        }
    }
}

/// One operation of the child on `a` (`b`: the new name of a rename, the new hard link).
#[derive(Debug, Clone)]
struct Probe {
    id: usize,
    op: Op,
    a: PathBuf,
    b: Option<PathBuf>,
    /// Write nothing (a terminal).
    empty_write: bool,
}

/// One file tool call: `file_read` or `file_write` of a path.
#[derive(Debug, Clone)]
struct ToolProbe {
    write: bool,
    path: PathBuf,
}

struct AgentProbes {
    probes: Vec<Probe>,
    tools: Vec<ToolProbe>,
}

fn with_suffix(p: &Path, suffix: &str) -> PathBuf {
    let mut name: OsString = p.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    p.with_file_name(name)
}

/// Every path of the tree and the extra places, once each, in generation order.
fn probe_paths(spec: &Spec, w: &World) -> Vec<PathBuf> {
    let mut seen = BTreeSet::new();
    spec.nodes
        .iter()
        .map(|n| n.at.path(w))
        .chain(spec.extra.iter().map(|l| l.path(w)))
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

/// The probes of one agent; plants the victims its removals need.
fn probes_for(inst: &mut Install, paths: &[PathBuf], alias: &str, ws: &Path) -> AgentProbes {
    let links = ws.join("probe/links");
    let mut probes = Vec::new();
    let mut tools = Vec::new();
    let mut victims = Vec::new();
    // Paths that other probes use as directories: a file_write there would make a file.
    let parents: BTreeSet<&Path> = paths.iter().flat_map(|p| p.ancestors().skip(1)).collect();
    let mut id = 0usize;
    let mut push = |probes: &mut Vec<Probe>, op: Op, a: PathBuf, b: Option<PathBuf>, e: bool| {
        id += 1;
        probes.push(Probe {
            id,
            op,
            a,
            b,
            empty_write: e,
        });
        id
    };
    for p in paths {
        let dev = p.starts_with("/dev");
        let inside = under(p, &inst.w.root) || under(p, &inst.w.out);
        let exists = std::fs::symlink_metadata(p).is_ok();
        let is_dir = std::fs::metadata(p).is_ok_and(|m| m.is_dir());
        let n = push(&mut probes, Op::Read, p.clone(), None, false);
        tools.push(ToolProbe {
            write: false,
            path: p.clone(),
        });
        if dev {
            let tty = p == Path::new("/dev/tty");
            push(&mut probes, Op::Write, p.clone(), None, tty);
            tools.push(ToolProbe {
                write: true,
                path: p.clone(),
            });
            continue;
        }
        if is_dir {
            push(
                &mut probes,
                Op::Create,
                p.join(format!("new-{alias}-{n}")),
                None,
                false,
            );
            push(
                &mut probes,
                Op::Mkdir,
                p.join(format!("newdir-{alias}-{n}")),
                None,
                false,
            );
            if inside {
                push(
                    &mut probes,
                    Op::Rename,
                    p.clone(),
                    Some(with_suffix(p, &format!(".mv-{alias}"))),
                    false,
                );
                let v = p.join(format!("victim-{alias}-{n}"));
                victims.push(v.clone());
                push(&mut probes, Op::Remove, v, None, false);
                tools.push(ToolProbe {
                    write: true,
                    path: p.join(format!("ft-{alias}-{n}")),
                });
            }
        } else {
            push(&mut probes, Op::Write, p.clone(), None, false);
            if inside && (exists || !parents.contains(p.as_path())) {
                tools.push(ToolProbe {
                    write: true,
                    path: p.clone(),
                });
            }
            if inside && exists {
                push(
                    &mut probes,
                    Op::Rename,
                    p.clone(),
                    Some(with_suffix(p, &format!(".mv-{alias}"))),
                    false,
                );
                let l = links.join(format!("l{n}"));
                push(&mut probes, Op::Link, p.clone(), Some(l), false);
            }
        }
    }
    for v in victims {
        inst.plant_file(&v);
    }
    AgentProbes { probes, tools }
}

/// What authorize says about one probe: allowed, the deciding rule, the resolved path it acts
/// on, and the directory whose entries it changes (create, mkdir, rename, remove).
#[derive(Debug, Clone)]
struct Expect {
    allowed: bool,
    rule: &'static str,
    target: PathBuf,
    dir: Option<PathBuf>,
}

/// The decision on an entry itself (its parent resolved, the entry not followed): what renaming
/// or removing a name acts on.
fn decide_entry(policy: &SecurityPolicy, p: &Path) -> (bool, Rule, PathBuf) {
    let (Some(parent), Some(name)) = (p.parent(), p.file_name()) else {
        return (false, Rule::InvalidPath, p.to_path_buf());
    };
    let d = policy.check(parent, Access::Read);
    if matches!(d.rule, Rule::InvalidPath | Rule::SymlinkLoop) {
        return (false, d.rule, p.to_path_buf());
    }
    let target = d.path.join(name);
    let (ok, rule) = policy.decide(&target, Access::Write);
    (ok, rule, target)
}

fn expect(policy: &SecurityPolicy, p: &Probe) -> Expect {
    let simple = |path: &Path, access: Access, entries: bool| {
        let d = policy.check(path, access);
        Expect {
            allowed: d.allowed,
            rule: d.rule.code(),
            dir: entries
                .then(|| d.path.parent().map(Path::to_path_buf))
                .flatten(),
            target: d.path,
        }
    };
    match p.op {
        Op::Read => simple(&p.a, Access::Read, false),
        Op::Write => simple(&p.a, Access::Write, false),
        Op::Create | Op::Mkdir => simple(&p.a, Access::Write, true),
        Op::Remove | Op::Rename => {
            let (mut ok, mut rule, target) = decide_entry(policy, &p.a);
            if let Some(b) = &p.b {
                let (ok2, rule2, _) = decide_entry(policy, b);
                if ok && !ok2 {
                    rule = rule2;
                }
                ok &= ok2;
            }
            Expect {
                allowed: ok,
                rule: rule.code(),
                dir: target.parent().map(Path::to_path_buf),
                target,
            }
        }
        Op::Link => {
            let r = policy.check(&p.a, Access::Read);
            let w = policy.check(&p.a, Access::Write);
            let l = policy.check(p.b.as_deref().unwrap_or(Path::new("")), Access::Write);
            let rule = [&r, &w, &l]
                .iter()
                .find(|d| !d.allowed)
                .map(|d| d.rule)
                .unwrap_or(r.rule);
            Expect {
                allowed: r.allowed && w.allowed && l.allowed,
                rule: rule.code(),
                target: r.path,
                dir: None,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The probe child.

const PROBE_SCRIPT: &str = r#"
import errno, json, os, sys

def name(e):
    return errno.errorcode.get(e.errno, str(e.errno))

def run(p, rec):
    op = p["o"]
    a = bytes.fromhex(p["a"])
    b = bytes.fromhex(p["b"])
    if op == "read":
        if os.path.isdir(a):
            rec["n"] = [n.hex() for n in os.listdir(a)]
            return
        fd = os.open(a, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            try:
                data = os.read(fd, 4096)
            except BlockingIOError:
                data = b""
        finally:
            os.close(fd)
        rec["d"] = data.hex()
    elif op == "write":
        fd = os.open(a, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            os.write(fd, b"" if p["e"] else b"MARK\n")
        finally:
            os.close(fd)
    elif op == "create":
        fd = os.open(a, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NONBLOCK | os.O_NOCTTY, 0o644)
        try:
            os.write(fd, b"MARK\n")
        finally:
            os.close(fd)
    elif op == "mkdir":
        os.mkdir(a, 0o755)
    elif op == "rename":
        os.rename(a, b)
        try:
            os.rename(b, a)
        except OSError as e:
            rec["back"] = name(e)
    elif op == "remove":
        os.unlink(a)
    elif op == "link":
        # With default directory descriptors CPython calls link(2), which does not follow a
        # link at `a`; a descriptor makes it call linkat(AT_SYMLINK_FOLLOW).
        os.link(a, b, src_dir_fd=ROOT, dst_dir_fd=ROOT, follow_symlinks=True)
        try:
            os.unlink(b)
        except OSError as e:
            rec["back"] = name(e)
    else:
        raise SystemExit("unknown op " + op)

ROOT = os.open("/", os.O_PATH | os.O_DIRECTORY)
with open(sys.argv[1], "rb") as f:
    probes = json.loads(f.read())
for p in probes:
    rec = {"i": p["i"]}
    try:
        run(p, rec)
        rec["r"] = "ok"
    except OSError as e:
        rec["r"] = name(e)
    sys.stdout.write(json.dumps(rec) + "\n")
sys.stdout.flush()
"#;

#[derive(Debug, Default, Clone)]
struct Outcome {
    r: String,
    data: Option<Vec<u8>>,
    names: Option<Vec<Vec<u8>>>,
    back: Option<String>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .filter_map(|i| u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok())
        .collect()
}

struct ChildRun {
    outcomes: BTreeMap<usize, Outcome>,
    stderr: String,
    status: Option<std::process::ExitStatus>,
}

/// Runs every probe in one confined Python child; returns what it reported. `before` is called
/// once the sandbox is prepared (closed paths made), just before the child starts.
fn run_child(
    policy: &SecurityPolicy,
    sb: &EffectiveSandbox,
    probes: &[Probe],
    before: impl FnOnce(),
) -> ChildRun {
    let dir = policy.workspace.join("probe");
    std::fs::create_dir_all(dir.join("links")).unwrap();
    let script = dir.join("probe.py");
    std::fs::write(&script, PROBE_SCRIPT).unwrap();
    let list: Vec<Value> = probes
        .iter()
        .map(|p| {
            json!({
                "i": p.id,
                "o": p.op.name(),
                "a": hex(p.a.as_os_str().as_bytes()),
                "b": p.b.as_ref().map(|b| hex(b.as_os_str().as_bytes())).unwrap_or_default(),
                "e": p.empty_write,
            })
        })
        .collect();
    let input = dir.join("probes.json");
    std::fs::write(&input, serde_json::to_vec(&list).unwrap()).unwrap();
    let args: Vec<OsString> = vec![
        "-I".into(),
        "-S".into(),
        "-B".into(),
        script.into_os_string(),
        input.into_os_string(),
    ];
    let mut cmd = confine(policy, sb, PYTHON.as_ref(), &args, &policy.workspace).unwrap();
    cmd.command_mut()
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    before();
    let mut child = cmd.spawn().unwrap();
    let mut so = child.take_stdout().unwrap();
    let mut se = child.take_stderr().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = so.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = se.read_to_string(&mut s);
        s
    });
    let deadline = Instant::now() + CHILD_LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if Instant::now() > deadline {
            let _ = child.terminate();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = out.join().unwrap();
    let stderr = err.join().unwrap();
    let mut outcomes = BTreeMap::new();
    for line in stdout.lines() {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(i) = v["i"].as_u64() else { continue };
        outcomes.insert(
            i as usize,
            Outcome {
                r: v["r"].as_str().unwrap_or("?").to_string(),
                data: v["d"].as_str().map(unhex),
                names: v["n"]
                    .as_array()
                    .map(|ns| ns.iter().filter_map(|n| n.as_str()).map(unhex).collect()),
                back: v["back"].as_str().map(str::to_string),
            },
        );
    }
    ChildRun {
        outcomes,
        stderr,
        status,
    }
}

// ---------------------------------------------------------------------------------------------
// On-disk snapshots and canaries.

#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    kind: char,
    mode: u32,
    ino: u64,
    nlink: u64,
    size: u64,
    mtime: (i64, i64),
    hash: u64,
    link: Option<PathBuf>,
    canary: Option<String>,
}

type Snap = BTreeMap<PathBuf, Entry>;

fn snapshot(w: &World) -> Snap {
    let mut out = Snap::new();
    let mut stack = vec![w.root.clone(), w.out.clone()];
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        let ft = m.file_type();
        let kind = if ft.is_dir() {
            'd'
        } else if ft.is_symlink() {
            'l'
        } else if ft.is_fifo() {
            'p'
        } else if ft.is_file() {
            'f'
        } else {
            '?'
        };
        let mut e = Entry {
            kind,
            mode: m.mode(),
            ino: m.ino(),
            nlink: 0,
            size: 0,
            mtime: (0, 0),
            hash: 0,
            link: None,
            canary: None,
        };
        match kind {
            'd' => {
                if let Ok(rd) = std::fs::read_dir(&p) {
                    stack.extend(rd.flatten().map(|e| e.path()));
                }
            }
            'l' => e.link = std::fs::read_link(&p).ok(),
            _ => {
                e.nlink = m.nlink();
                e.size = m.size();
                e.mtime = (m.mtime(), m.mtime_nsec());
                if kind == 'f' {
                    let content = std::fs::read(&p).unwrap_or_default();
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    content.hash(&mut h);
                    e.hash = h.finish();
                    e.canary = canaries_in(&content).into_iter().next();
                }
            }
        }
        out.insert(p, e);
    }
    out
}

/// Every canary token (`CANARY-<seed>-<n>.`) in `data`.
fn canaries_in(data: &[u8]) -> Vec<String> {
    let pat = b"CANARY-";
    let mut out = Vec::new();
    let mut i = 0;
    while i + pat.len() <= data.len() {
        if &data[i..i + pat.len()] == pat {
            if let Some(e) = data[i..].iter().take(48).position(|&c| c == b'.') {
                out.push(String::from_utf8_lossy(&data[i..=i + e]).into_owned());
                i += e;
            }
        }
        i += 1;
    }
    out
}

/// What the comparisons know about the tree: where each canary was planted, and the tree as it
/// was before the layer ran.
struct Known<'a> {
    homes: &'a BTreeMap<String, PathBuf>,
    snap: &'a Snap,
}

impl Known<'_> {
    /// The file the content at `target` was planted in (`target` itself, or the original of a
    /// hard link).
    fn home_of(&self, target: &Path) -> Option<&PathBuf> {
        let c = self.snap.get(target)?.canary.as_ref()?;
        self.homes.get(c)
    }

    fn same_file(&self, a: &Path, b: &Path) -> bool {
        match (self.snap.get(a), self.snap.get(b)) {
            (Some(x), Some(y)) => x.ino == y.ino && x.kind == y.kind,
            _ => false,
        }
    }

    /// Another name of the file at `target` (a hard link) that allows `access`, if any.
    fn alias_allowing(
        &self,
        policy: &SecurityPolicy,
        target: &Path,
        access: Access,
    ) -> Option<PathBuf> {
        let e = self.snap.get(target)?;
        if e.nlink < 2 {
            return None;
        }
        self.snap
            .iter()
            .find(|(p, x)| {
                p.as_path() != target
                    && x.ino == e.ino
                    && x.kind == e.kind
                    && policy.decide(p, access).0
            })
            .map(|(p, _)| p.clone())
    }
}

/// Canaries in `data` planted in a file the agent may not read: (cause, message). `via` is the
/// resolved path the data was read from.
fn leaks(
    policy: &SecurityPolicy,
    known: &Known,
    data: &[u8],
    via: Option<&Path>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for c in canaries_in(data) {
        let Some(orig) = known.homes.get(&c) else {
            continue;
        };
        if policy.decide(orig, Access::Read).0 {
            continue;
        }
        let alias = via.filter(|v| v != orig && known.same_file(v, orig));
        let (cause, note) = if let Some(v) = alias {
            (
                ALIAS.to_string(),
                format!(" through {}, a hard link to it", v.display()),
            )
        } else {
            (
                "canary of an unreadable file in the output".to_string(),
                String::new(),
            )
        };
        out.push((
            cause,
            format!(
                "canary {c} planted in {} (read denied) appeared{note}",
                orig.display()
            ),
        ));
    }
    out
}

/// How a change on disk to a path the agent may not write came about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    /// Nothing explains it: an escape.
    Plain,
    /// Through another name of the file (a hard link) the agent may write, the file having been
    /// planted where the agent may not write: an escape through a pre-existing hard link.
    Alias,
    /// The agent's own file, changed through its own name, has a hard link somewhere it may not
    /// write: the same file, nothing of anyone else's changed.
    OwnFile,
}

/// Changes between `before` and `after` to paths the agent may not write.
fn disk_changes(
    policy: &SecurityPolicy,
    known: &Known,
    after: &Snap,
) -> Vec<(PathBuf, String, Change)> {
    let before = known.snap;
    let keys: BTreeSet<&PathBuf> = before.keys().chain(after.keys()).collect();
    let mut out = Vec::new();
    for k in keys {
        let (b, a) = (before.get(k), after.get(k));
        if b == a || policy.decide(k, Access::Write).0 {
            continue;
        }
        let mut how = Change::Plain;
        let what = match (b, a) {
            (None, Some(a)) => format!("created ({:?})", a.kind),
            (Some(_), None) => "removed".to_string(),
            (Some(b), Some(a)) => {
                let mut what = format!("changed: before {b:?}, after {a:?}");
                if let Some(x) = known.alias_allowing(policy, k, Access::Write) {
                    let own = known
                        .home_of(k)
                        .is_some_and(|h| policy.decide(h, Access::Write).0);
                    how = if own { Change::OwnFile } else { Change::Alias };
                    what.push_str(&format!(
                        " (a hard link: the same file is also named {}, which the agent may write)",
                        x.display()
                    ));
                }
                what
            }
            (None, None) => continue,
        };
        out.push((k.clone(), what, how));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Classification of stricter answers.

fn host_kind(p: &Path) -> &'static str {
    match std::fs::symlink_metadata(p) {
        Err(_) => "missing",
        Ok(m) => {
            let t = m.file_type();
            if t.is_symlink() {
                "symlink"
            } else if t.is_dir() {
                "dir"
            } else if t.is_fifo() {
                "fifo"
            } else if t.is_char_device() || t.is_block_device() {
                "device"
            } else if t.is_socket() {
                "socket"
            } else {
                "file"
            }
        }
    }
}

/// The union of the Landlock rights (read, write) the plan gives `p`.
fn landlock_rights(plan: &[FsGrant], p: &Path) -> (bool, bool) {
    plan.iter()
        .filter(|g| g.path == p || (g.is_dir && under(p, &g.path)))
        .fold((false, false), |(r, w), g| (r || g.read, w || g.write))
}

/// The deepest mount of the bubblewrap plan holding `p`.
fn bwrap_mount<'a>(plan: &'a [FsGrant], p: &Path) -> Option<&'a FsGrant> {
    plan.iter()
        .filter(|g| under(p, &g.path))
        .max_by_key(|g| g.path.components().count())
}

/// The real directories holding the symbolic links met on the lexical path `p` (`leaf`: the
/// last component counts, it is followed).
fn link_locations(p: &Path, leaf: bool) -> Vec<PathBuf> {
    p.ancestors()
        .skip(usize::from(!leaf))
        .filter(|q| std::fs::symlink_metadata(q).is_ok_and(|m| m.file_type().is_symlink()))
        .filter_map(|q| std::fs::canonicalize(q.parent()?).ok())
        .collect()
}

/// A stricter answer of the child: its class, and what the plan says there (for `other`).
fn classify_child(
    backend: &str,
    policy: &SecurityPolicy,
    plan: &[FsGrant],
    p: &Probe,
    e: &Expect,
    errno: &str,
) -> (&'static str, String) {
    let entry_op = matches!(p.op, Op::Create | Op::Mkdir | Op::Rename | Op::Remove);
    // The directory whose entries change, or the object itself.
    let region = if entry_op {
        e.dir.clone().unwrap_or_else(|| e.target.clone())
    } else {
        e.target.clone()
    };
    let missing = match p.op {
        Op::Create | Op::Mkdir => !region.is_dir(),
        Op::Rename | Op::Remove => host_kind(&p.a) == "missing",
        _ => std::fs::metadata(&p.a).is_err(),
    };
    let diag = match backend {
        "landlock" => {
            let (r, w) = landlock_rights(plan, &region);
            format!(
                " [landlock at {}: read={r} write={w}, boundary beneath: {}]",
                region.display(),
                plan.iter()
                    .any(|g| g.path != region && under(&g.path, &region))
            )
        }
        _ => format!(
            " [bubblewrap mount of {}: {:?}]",
            region.display(),
            bwrap_mount(plan, &region).map(|g| (&g.path, g.read, g.write))
        ),
    };
    let visible = |loc: &Path| match bwrap_mount(plan, loc) {
        Some(g) => g.read || g.exec,
        None => !policy.workspace_only,
    };
    let class = (|| {
        if errno == "ENOENT" && missing {
            return "nothing there (missing on the host too)";
        }
        if backend == "bubblewrap"
            && link_locations(&p.a, !matches!(p.op, Op::Rename | Op::Remove))
                .iter()
                .any(|l| !visible(l))
        {
            return "bubblewrap: the link lies where nothing readable is mounted (authorize follows links there)";
        }
        if e.target.starts_with("/dev") {
            return "device (semantics of the device: /dev/full, /dev/tty)";
        }
        if host_kind(&e.target) == "fifo" && p.op == Op::Write && errno == "ENXIO" {
            return "fifo: non-blocking open for writing without a reader (ENXIO)";
        }
        if errno == "EISDIR" && region.is_dir() {
            return "a directory now (a closed path made by prepare_closed_paths after the probes were planned)";
        }
        let write_only = policy
            .roots_of(Tier::WriteOnly)
            .any(|r| under(&region, &r.path));
        match backend {
            "bubblewrap" => {
                if p.op == Op::Rename && errno == "EBUSY" {
                    return "bubblewrap: mount point cannot be renamed (EBUSY)";
                }
                if p.op == Op::Link && errno == "EXDEV" {
                    return "bubblewrap: hard link across mounts (EXDEV)";
                }
                if write_only {
                    return "bubblewrap: write-only root not mounted";
                }
                if !visible(&region) && p.a != e.target {
                    return "bubblewrap: link target not mounted";
                }
            }
            "landlock" => {
                if p.op == Op::Link && errno == "EXDEV" {
                    return "landlock: hard link without the refer right on both sides (EXDEV)";
                }
                let (r, w) = landlock_rights(plan, &region);
                let boundary_beneath = plan
                    .iter()
                    .any(|g| g.path != region && under(&g.path, &region));
                let lacks = if p.op == Op::Read { !r } else { !w };
                if errno == "EACCES" && lacks {
                    if region.is_dir() && boundary_beneath && !r && !w {
                        return "landlock: no rule at the top of a folder with a boundary beneath";
                    }
                    // The deepest rule over the region is a protected ancestor's: the denial
                    // meant for moving that directory is inherited by everything beneath it.
                    let deepest = plan
                        .iter()
                        .filter(|g| g.path == region || (g.is_dir && under(&region, &g.path)))
                        .max_by_key(|g| g.path.components().count());
                    if deepest.is_some_and(|g| policy.is_protected_ancestor(&g.path)) {
                        return "landlock: a protected ancestor's rule (no write) covers what is beneath it";
                    }
                }
            }
            _ => {}
        }
        OTHER
    })();
    (class, diag)
}

fn classify_tool(p: &ToolProbe, code: &str) -> &'static str {
    let leaf = host_kind(&p.path);
    let target = std::fs::metadata(&p.path).ok();
    let target_kind = |m: &std::fs::Metadata| {
        let t = m.file_type();
        if t.is_dir() {
            "dir"
        } else if t.is_fifo() {
            "fifo"
        } else if t.is_char_device() || t.is_block_device() {
            "device"
        } else {
            "file"
        }
    };
    let tk = target.as_ref().map(target_kind).unwrap_or("missing");
    match code {
        "not_found" if tk == "missing" => "nothing there (missing on the host too)",
        "symlink_leaf" => "file tool: symbolic link at the leaf refused for writes",
        "not_writable" if p.write && leaf == "symlink" => {
            "file tool: symbolic link at the leaf refused for writes"
        }
        _ if tk == "dir" => "file tool: a directory is not a file",
        _ if tk == "fifo" => "fifo: refused or empty for the file tools",
        _ if tk == "device" || p.path.starts_with("/dev") => {
            "device (semantics of the device: /dev/full, /dev/tty)"
        }
        _ => OTHER,
    }
}

// ---------------------------------------------------------------------------------------------
// The report.

#[derive(Default)]
struct Report {
    /// (cause, message).
    escapes: Vec<(String, String)>,
    failures: Vec<String>,
    stricter: BTreeMap<String, (usize, String)>,
    harmless: BTreeMap<String, (usize, String)>,
    /// Cases of a documented limit (pre-existing hard links): count and one example.
    not_defended: (usize, String),
    other: Vec<String>,
    compared: usize,
    agreed: usize,
    children: usize,
    skipped: BTreeSet<String>,
}

impl Report {
    fn stricter(&mut self, class: &str, line: String) {
        if std::env::var_os("WARREN_DIFF_VERBOSE").is_some() {
            println!("STRICTER [{class}] {line}");
        }
        if class == OTHER {
            self.other.push(line.clone());
        }
        self.stricter
            .entry(class.to_string())
            .or_insert((0, line))
            .0 += 1;
    }

    fn escape(&mut self, cause: impl Into<String>, line: String) {
        let cause = cause.into();
        if cause == ALIAS {
            // Documented in docs/security.md ("What is not defended"): a hard link made before
            // the agent ran, by someone with rights on both places, is one file under two names.
            self.not_defended.0 += 1;
            if self.not_defended.1.is_empty() {
                self.not_defended.1 = line;
            }
            return;
        }
        self.escapes.push((cause, line));
    }

    fn harmless(&mut self, class: &str, line: String) {
        self.harmless
            .entry(class.to_string())
            .or_insert((0, line))
            .0 += 1;
    }
}

/// Where a finding happened, as every message names it.
struct Site<'a> {
    seed: u64,
    alias: &'a str,
    backend: &'a str,
}

impl Site<'_> {
    fn at(&self, layer: &str, op: &str, path: &Path) -> String {
        format!(
            "seed={} agent={} backend={} layer={layer} op={op} path={}",
            self.seed,
            self.alias,
            self.backend,
            path.display()
        )
    }
}

fn describe_install(spec: &Spec) -> String {
    let mut s = format!("seed {}:", spec.seed);
    for (i, p) in spec.profiles.iter().enumerate() {
        s.push_str(&format!(
            " p{i}{{workspace_only={}, allowed_roots={:?}, forbidden={:?}}}",
            p.workspace_only, p.allowed_root, p.forbidden
        ));
    }
    for a in &spec.agents {
        s.push_str(&format!(" {}(p{}", a.alias, a.profile));
        if a.unrestricted {
            s.push_str(", unrestricted");
        }
        for (sib, mode) in &a.access {
            s.push_str(&format!(", {sib}={mode}"));
        }
        s.push(')');
    }
    s
}

/// Paths whose names a bubblewrap sandbox shows in its skeleton directories (mount points):
/// the policy's own boundaries, which the agent knows from its configuration.
fn known_boundaries(policy: &SecurityPolicy) -> Vec<PathBuf> {
    let mut k: Vec<PathBuf> = policy.roots.iter().map(|r| r.path.clone()).collect();
    k.extend(policy.forbidden.iter().cloned());
    k.extend(policy.runtime_state.iter().cloned());
    k.push(policy.install_root.clone());
    k.extend(
        DEVICES
            .iter()
            .chain(SYSTEM_DIRS)
            .chain(KERNEL_DIRS)
            .chain(PROC_FILES)
            .map(PathBuf::from),
    );
    k.extend([
        policy.home.clone().unwrap_or_default().join(".gitconfig"),
        policy
            .home
            .clone()
            .unwrap_or_default()
            .join(".config/git/config"),
    ]);
    k.push(PathBuf::from("/dev"));
    k.push(PathBuf::from("/tmp"));
    k
}

/// One child's probes with what authorize said about each and the plan it ran under.
struct Planned<'a> {
    plan: &'a [FsGrant],
    probes: &'a [Probe],
    expects: &'a [Expect],
}

fn check_child(
    site: &Site,
    policy: &SecurityPolicy,
    planned: &Planned,
    known: &Known,
    run: &ChildRun,
    report: &mut Report,
) {
    let Planned {
        plan,
        probes,
        expects,
    } = *planned;
    let ok_exit = run.status.is_some_and(|s| s.success());
    if !ok_exit {
        report.failures.push(format!(
            "{}: the probe child did not finish cleanly ({:?}): {}",
            site.at("child", "all", &policy.workspace),
            run.status,
            run.stderr.trim()
        ));
    }
    for (cause, leak) in leaks(policy, known, run.stderr.as_bytes(), None) {
        report.escape(
            cause,
            format!(
                "{}: in the child's stderr: {leak}",
                site.at("child", "any", &policy.workspace)
            ),
        );
    }
    let boundaries = known_boundaries(policy);
    for (p, e) in probes.iter().zip(expects) {
        let here = || {
            let mut s = site.at("child", p.op.name(), &p.a);
            if let Some(b) = &p.b {
                s.push_str(&format!(" to={}", b.display()));
            }
            s
        };
        let Some(o) = run.outcomes.get(&p.id) else {
            if ok_exit {
                report
                    .failures
                    .push(format!("{}: the child reported nothing", here()));
            }
            continue;
        };
        report.compared += 1;
        let ok = o.r == "ok";
        let leaked = o
            .data
            .as_ref()
            .map(|d| leaks(policy, known, d, Some(&e.target)))
            .unwrap_or_default();
        if !ok || e.allowed {
            for (cause, leak) in &leaked {
                report.escape(cause.clone(), format!("{}: {leak}", here()));
            }
        }
        if let Some(back) = &o.back {
            report.other.push(format!(
                "{}: the operation succeeded but undoing it failed ({back}); the tree changed",
                here()
            ));
        }
        if ok && !e.allowed {
            if let (Op::Read, Some(list)) = (p.op, &o.names) {
                let unknown: Vec<String> = list
                    .iter()
                    .map(|n| e.target.join(OsStr::from_bytes(n)))
                    .filter(|q| !boundaries.iter().any(|k| under(k, q)))
                    .map(|q| q.display().to_string())
                    .collect();
                if unknown.is_empty() {
                    report.harmless(
                        &format!(
                            "{}: listing shows only the names of the policy's own boundaries",
                            site.backend
                        ),
                        format!("{} ({} names)", here(), list.len()),
                    );
                    continue;
                }
                report.escape(
                    format!("{} child: directory listed where authorize says {}", site.backend, e.rule),
                    format!(
                        "{}: authorize denies (rule {}) but the child listed the directory: {unknown:?}",
                        here(),
                        e.rule
                    ),
                );
                continue;
            }
            let mut hint = String::new();
            let mut cause = format!(
                "{} child: {} where authorize says {}",
                site.backend,
                p.op.name(),
                e.rule
            );
            let accesses: &[Access] = match p.op {
                Op::Read => &[Access::Read],
                Op::Write => &[Access::Write],
                Op::Link => &[Access::Read, Access::Write],
                _ => &[],
            };
            let alias = (!accesses.is_empty())
                .then(|| {
                    accesses
                        .iter()
                        .map(|a| known.alias_allowing(policy, &e.target, *a))
                        .collect::<Option<Vec<PathBuf>>>()
                })
                .flatten();
            if let Some(x) = alias.as_ref().and_then(|v| v.first()) {
                let own = known
                    .home_of(&e.target)
                    .is_some_and(|h| accesses.iter().all(|a| policy.decide(h, *a).0));
                if own {
                    report.harmless(
                        &format!(
                            "{}: a hard link the agent may not use, to a file it may (its own content)",
                            site.backend
                        ),
                        format!("{}: same file as {}", here(), x.display()),
                    );
                    continue;
                }
                hint = format!(
                    " (a hard link: the same file is also named {}, which the agent may use)",
                    x.display()
                );
                cause = ALIAS.into();
            }
            let mut shown = o
                .data
                .as_ref()
                .map(|d| {
                    format!(
                        ", read {:?}",
                        String::from_utf8_lossy(&d[..d.len().min(60)])
                    )
                })
                .unwrap_or_default();
            for (_, leak) in &leaked {
                shown.push_str(&format!("; {leak}"));
            }
            report.escape(
                cause,
                format!(
                    "{}: authorize denies (rule {}, resolved {}) but the child succeeded{shown}{hint}",
                    here(),
                    e.rule,
                    e.target.display()
                ),
            );
        } else if !ok && e.allowed {
            let (class, diag) = classify_child(site.backend, policy, plan, p, e, &o.r);
            let diag = if class == OTHER { diag } else { String::new() };
            report.stricter(
                class,
                format!(
                    "{}: authorize allows (rule {}, resolved {}), the child got {}{diag}",
                    here(),
                    e.rule,
                    e.target.display(),
                    o.r
                ),
            );
        } else {
            report.agreed += 1;
        }
    }
}

fn tool_context(fx: &Fixture, policy: SecurityPolicy, support: &SandboxSupport) -> ToolContext {
    let mut env = BTreeMap::new();
    env.insert("PATH".to_string(), "/usr/bin:/bin".to_string());
    env.insert("HOME".to_string(), fx.home.display().to_string());
    ToolContext::new(Arc::new(policy), support.clone(), env)
}

fn check_tool(
    site: &Site,
    policy: &SecurityPolicy,
    ctx: &ToolContext,
    alias: &str,
    p: &ToolProbe,
    known: &Known,
    report: &mut Report,
) {
    let (tool, access) = if p.write {
        ("file_write", Access::Write)
    } else {
        ("file_read", Access::Read)
    };
    let path = p.path.display().to_string();
    let args = if p.write {
        json!({"path": path, "content": format!("FT-{alias}\n")})
    } else {
        json!({ "path": path })
    };
    let d = policy.check(&p.path, access);
    let r = call(ctx, tool, args);
    let here = site.at(tool, if p.write { "write" } else { "read" }, &p.path);
    let text = match &r {
        Ok(v) => v.to_string(),
        Err(e) => format!("{e} {e:?}"),
    };
    let leaked = leaks(policy, known, text.as_bytes(), Some(&d.path));
    if r.is_err() || d.allowed {
        for (cause, leak) in leaked {
            report.escape(cause, format!("{here}: {leak}"));
        }
    }
    report.compared += 1;
    match (&r, d.allowed) {
        (Ok(v), false) => report.escape(
            format!("{tool}: succeeded where authorize says {}", d.rule.code()),
            format!(
                "{here}: authorize denies (rule {}, resolved {}) but {tool} succeeded: {v}",
                d.rule.code(),
                d.path.display()
            ),
        ),
        (Err(e), true) => {
            let code = e.code().to_string();
            let class = classify_tool(p, &code);
            report.stricter(
                class,
                format!(
                    "{here}: authorize allows (rule {}, resolved {}), {tool} failed: {code}: {e}",
                    d.rule.code(),
                    d.path.display()
                ),
            );
        }
        _ => report.agreed += 1,
    }
}

// ---------------------------------------------------------------------------------------------
// The test.

fn seeds() -> Vec<u64> {
    if let Some(s) = std::env::var("WARREN_DIFF_SEED")
        .ok()
        .and_then(|s| s.trim().parse().ok())
    {
        return vec![s];
    }
    let n = std::env::var("WARREN_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(DEFAULT_SEEDS);
    (0..n).collect()
}

fn backend_name(kind: SandboxKind) -> &'static str {
    match kind {
        SandboxKind::Landlock => "landlock",
        SandboxKind::Bubblewrap => "bubblewrap",
        _ => "none",
    }
}

fn run_seed(seed: u64, support: &SandboxSupport, report: &mut Report) {
    let spec = generate(seed);
    println!("{}", describe_install(&spec));
    for (bi, kind) in [SandboxKind::Landlock, SandboxKind::Bubblewrap]
        .into_iter()
        .enumerate()
    {
        let backend = backend_name(kind);
        let mut inst = Install::new(&spec, kind);
        let paths = probe_paths(&spec, &inst.w);
        let mut plans = Vec::new();
        for a in &spec.agents {
            let ws = inst.fx.policy(a.alias).workspace;
            plans.push(probes_for(&mut inst, &paths, a.alias, &ws));
        }
        // 1. One confined child per agent.
        for (a, ap) in spec.agents.iter().zip(&plans) {
            let policy = inst.fx.policy(a.alias);
            let site = Site {
                seed,
                alias: a.alias,
                backend,
            };
            let sb = match choose(kind, policy.workspace_only, support) {
                Ok((sb, _)) => sb,
                Err(e) => {
                    assert!(
                        std::env::var_os("CI").is_none(),
                        "CI must run every backend: {backend}: {e}"
                    );
                    if report.skipped.insert(backend.to_string()) {
                        println!("skipped: {backend} not usable here: {e}");
                    }
                    break;
                }
            };
            let mut expects = Vec::new();
            let mut plan = Vec::new();
            let mut before = Snap::new();
            let w = &inst.w;
            let run = run_child(&policy, &sb, &ap.probes, || {
                // After `confine` made the closed paths: decide, plan, snapshot.
                expects = ap.probes.iter().map(|p| expect(&policy, p)).collect();
                plan = match kind {
                    SandboxKind::Landlock => fs_plan(&policy),
                    _ => mount_plan(&policy),
                };
                before = snapshot(w);
            });
            report.children += 1;
            let after = snapshot(w);
            let known = Known {
                homes: &inst.homes,
                snap: &before,
            };
            let planned = Planned {
                plan: &plan,
                probes: &ap.probes,
                expects: &expects,
            };
            check_child(&site, &policy, &planned, &known, &run, report);
            for (k, what, how) in disk_changes(&policy, &known, &after) {
                let by: Vec<String> = ap
                    .probes
                    .iter()
                    .zip(&expects)
                    .filter(|(p, e)| p.a == k || p.b.as_deref() == Some(&k) || e.target == k)
                    .map(|(p, _)| format!("{} {}", p.op.name(), p.a.display()))
                    .collect();
                let line = format!(
                    "{}: on disk after the child, a path the agent may not write: {what}; probes naming it: {by:?}",
                    site.at("disk", "child", &k)
                );
                match how {
                    Change::OwnFile => report.harmless(OWN_FILE_CHANGED, line),
                    Change::Alias => report.escape(ALIAS, line),
                    Change::Plain => report.escape(
                        format!(
                            "{backend} child: on-disk change where authorize says {}",
                            policy.decide(&k, Access::Write).1.code()
                        ),
                        line,
                    ),
                }
            }
        }
        // 2. The file tools (in Warren's own process: the same for every backend, run once).
        if bi != 0 {
            continue;
        }
        let start = snapshot(&inst.w);
        let known = Known {
            homes: &inst.homes,
            snap: &start,
        };
        for (a, ap) in spec.agents.iter().zip(&plans) {
            let policy = inst.fx.policy(a.alias);
            let ctx = tool_context(&inst.fx, policy.clone(), support);
            let site = Site {
                seed,
                alias: a.alias,
                backend: "file-tools",
            };
            for p in ap.tools.iter().filter(|p| !p.write) {
                check_tool(&site, &policy, &ctx, a.alias, p, &known, report);
            }
        }
        for (a, ap) in spec.agents.iter().zip(&plans) {
            let policy = inst.fx.policy(a.alias);
            let ctx = tool_context(&inst.fx, policy.clone(), support);
            let site = Site {
                seed,
                alias: a.alias,
                backend: "file-tools",
            };
            let before = snapshot(&inst.w);
            for p in ap.tools.iter().filter(|p| p.write) {
                check_tool(&site, &policy, &ctx, a.alias, p, &known, report);
            }
            let after = snapshot(&inst.w);
            let known_now = Known {
                homes: &inst.homes,
                snap: &before,
            };
            for (k, what, how) in disk_changes(&policy, &known_now, &after) {
                let line = format!(
                    "{}: on disk after file_write, a path the agent may not write: {what}",
                    site.at("disk", "file_write", &k)
                );
                match how {
                    Change::OwnFile => report.harmless(OWN_FILE_CHANGED, line),
                    Change::Alias => report.escape(ALIAS, line),
                    Change::Plain => report.escape(
                        format!(
                            "file_write: on-disk change where authorize says {}",
                            policy.decide(&k, Access::Write).1.code()
                        ),
                        line,
                    ),
                }
            }
        }
    }
}

#[test]
fn authorize_the_file_tools_and_the_sandboxes_agree() {
    let started = Instant::now();
    let support = SandboxSupport::probe(Some("/usr/bin:/bin".as_ref()));
    let seeds = seeds();
    let mut report = Report::default();
    for &seed in &seeds {
        run_seed(seed, &support, &mut report);
    }
    println!(
        "differential: seeds {seeds:?}, {} children, {} probes compared, {} agreed, {} stricter, {} harmless, {} escapes, in {:.1}s",
        report.children,
        report.compared,
        report.agreed,
        report.stricter.values().map(|(n, _)| n).sum::<usize>(),
        report.harmless.values().map(|(n, _)| n).sum::<usize>(),
        report.escapes.len(),
        started.elapsed().as_secs_f64()
    );
    println!("stricter (authorize allows, the layer refuses): class → count, one example");
    for (class, (n, example)) in &report.stricter {
        println!("  {n:6}  {class}\n          e.g. {example}");
    }
    println!("denied by authorize, harmless success: class → count, one example");
    for (class, (n, example)) in &report.harmless {
        println!("  {n:6}  {class}\n          e.g. {example}");
    }
    if !report.other.is_empty() {
        println!("stricter, class other (to investigate):");
        for o in &report.other {
            println!("  {o}");
        }
    }
    for f in &report.failures {
        println!("FAILURE {f}");
    }
    if report.not_defended.0 > 0 {
        println!(
            "not defended (documented): {} cases through hard links planted before the agent ran, e.g. {}",
            report.not_defended.0, report.not_defended.1
        );
    }
    for (_, e) in &report.escapes {
        println!("ESCAPE {e}");
    }
    let mut causes: BTreeMap<&str, (usize, &str)> = BTreeMap::new();
    for (cause, e) in &report.escapes {
        causes.entry(cause).or_insert((0, e)).0 += 1;
    }
    if !causes.is_empty() {
        println!("escapes by cause: cause → count, one example");
        for (cause, (n, example)) in &causes {
            println!("  {n:6}  {cause}\n          e.g. {example}");
        }
    }
    assert!(
        report.failures.is_empty(),
        "{} harness failures, first: {}",
        report.failures.len(),
        report.failures[0]
    );
    if !report.escapes.is_empty() {
        let summary: Vec<String> = causes
            .iter()
            .map(|(cause, (n, example))| format!("{n} × {cause}\n    e.g. {example}"))
            .collect();
        panic!(
            "{} escapes (reproduce one seed with WARREN_DIFF_SEED=<seed> cargo test -p warren-tools --test escape differential -- --nocapture; every one is printed above as ESCAPE):\n{}",
            report.escapes.len(),
            summary.join("\n")
        );
    }
}
