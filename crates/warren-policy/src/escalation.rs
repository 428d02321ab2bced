//! `ensure_no_escalation(child, parent)` (rules §5): a SubAgent's policy may never exceed its
//! parent's on any axis. The first violation is returned, named by its axis.

use crate::access::{Access, Rule};
use crate::authorize::under;
use crate::policy::{SecurityPolicy, Tier};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use warren_types::{DelegationMode, RiskProfile, RuntimeProfile, SandboxKind};

/// The first axis on which a child policy exceeds its parent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("delegation would escalate `{axis}`: {detail}")]
pub struct Escalation {
    /// The axis name (`autonomy_level`, `read_write_roots`, `allowed_commands`, ...).
    pub axis: &'static str,
    /// What exceeds the parent.
    pub detail: String,
}

fn fail(axis: &'static str, detail: impl Into<String>) -> Result<(), Escalation> {
    Err(Escalation {
        axis,
        detail: detail.into(),
    })
}

fn missing<'a>(child: &'a [String], parent: &[String]) -> Option<&'a String> {
    child.iter().find(|c| !parent.contains(c))
}

fn subset(axis: &'static str, child: &[String], parent: &[String]) -> Result<(), Escalation> {
    match missing(child, parent) {
        Some(x) => fail(axis, format!("`{x}` is not in the parent's list")),
        None => Ok(()),
    }
}

fn superset(axis: &'static str, child: &[String], parent: &[String]) -> Result<(), Escalation> {
    match missing(parent, child) {
        Some(x) => fail(axis, format!("the parent's `{x}` is missing")),
        None => Ok(()),
    }
}

/// A name no config uses, joined under each boundary path to probe what lies inside it.
const PROBE: &str = ".warren-escalation-probe";

/// Every path where either policy's decisions can change: roots, forbidden paths, runtime
/// state and the install root of both, each with one probe inside it. Between these points
/// both policies decide by the same rules, so comparing `decide()` here compares everywhere.
fn boundary_points(child: &SecurityPolicy, parent: &SecurityPolicy) -> BTreeSet<PathBuf> {
    let mut points = BTreeSet::new();
    for p in [child, parent] {
        let paths = p
            .roots
            .iter()
            .map(|r| &r.path)
            .chain(&p.forbidden)
            .chain(&p.runtime_state)
            .chain(std::iter::once(&p.install_root));
        for path in paths {
            points.insert(path.clone());
            points.insert(path.join(PROBE));
        }
    }
    points
}

/// The axis a decision escalates: the parent's denying rule when it names one, else the tier
/// of the child's deepest root at `path` (outside every root: `workspace_only`).
fn axis_of(child: &SecurityPolicy, path: &Path, parent_rule: Rule) -> &'static str {
    match parent_rule {
        Rule::ForbiddenPath => return "forbidden_paths",
        Rule::RuntimeState => return "runtime_state",
        _ => {}
    }
    let deepest = child
        .roots
        .iter()
        .filter(|r| under(path, &r.path))
        .max_by_key(|r| r.path.components().count());
    match deepest.map(|r| r.tier) {
        Some(Tier::ReadWrite) => "read_write_roots",
        Some(Tier::ReadOnly) => "read_only_roots",
        Some(Tier::WriteOnly) => "write_only_roots",
        None => "workspace_only",
    }
}

/// Root containment judged by `authorize()` decisions (deepest root wins), not by prefixes: at
/// every boundary point, what the child may read or write the parent may too. A read-only
/// sibling nested inside a read-write root, or a workspace nested in another's, is caught.
fn roots_by_decision(child: &SecurityPolicy, parent: &SecurityPolicy) -> Result<(), Escalation> {
    for point in boundary_points(child, parent) {
        for access in [Access::Read, Access::Write] {
            let (ok, rule) = child.decide(&point, access);
            if !ok {
                continue;
            }
            let (parent_ok, parent_rule) = parent.decide(&point, access);
            if !parent_ok {
                return fail(
                    axis_of(child, &point, parent_rule),
                    format!(
                        "the child may {} {} ({}) where the parent may not ({})",
                        access.as_str(),
                        point.display(),
                        rule.code(),
                        parent_rule.code()
                    ),
                );
            }
        }
    }
    Ok(())
}

fn sandbox_not_weaker(child: SandboxKind, parent: SandboxKind) -> bool {
    match parent {
        SandboxKind::None => true,
        SandboxKind::Auto => child != SandboxKind::None,
        p => child == p,
    }
}

/// Checks every axis of rules §5, in this order: autonomy level, roots (read-write, read-only,
/// write-only), `allowed_commands`, `workspace_only`, forbidden paths, `allowed_tools`,
/// `excluded_tools`, `auto_approve`, `always_ask`, env passthrough, sandbox, network,
/// delegation, high-risk blocking and medium-risk approval, action / cost / shell-timeout /
/// iteration / turn-timeout / context budgets, tool concurrency, delegation depth, memory
/// allowlist.
///
/// Both profiles are destructured field by field (no `..`): a field added to `RiskProfile` or
/// `RuntimeProfile` does not compile until it is decided here.
pub fn ensure_no_escalation(
    child: &SecurityPolicy,
    parent: &SecurityPolicy,
) -> Result<(), Escalation> {
    let RiskProfile {
        level,
        // workspace_only, forbidden_paths and allowed_roots are judged on the built policies
        // (`workspace_only` after `unrestricted_filesystem`; paths by decisions).
        workspace_only: _,
        allowed_commands,
        forbidden_paths: _,
        allowed_roots: _,
        require_approval_for_medium_risk,
        block_high_risk_commands,
        auto_approve,
        always_ask,
        allowed_tools,
        excluded_tools,
        sandbox,
        shell_env_passthrough,
        delegation,
        network,
    } = &child.risk;
    let p = &parent.risk;
    if level > &p.level {
        return fail(
            "autonomy_level",
            format!("{level:?} is above the parent's {:?}", p.level),
        );
    }
    roots_by_decision(child, parent)?;
    let any = |l: &[String]| l.iter().any(|x| x == "*");
    if !any(&p.allowed_commands) {
        if any(allowed_commands) {
            return fail("allowed_commands", "`*` is not allowed by the parent");
        }
        subset("allowed_commands", allowed_commands, &p.allowed_commands)?;
    }
    if parent.workspace_only && !child.workspace_only {
        return fail("workspace_only", "cannot turn workspace_only off");
    }
    if !p.allowed_tools.is_empty() {
        if allowed_tools.is_empty() {
            return fail("allowed_tools", "an empty list allows every tool");
        }
        subset("allowed_tools", allowed_tools, &p.allowed_tools)?;
    }
    superset("excluded_tools", excluded_tools, &p.excluded_tools)?;
    subset("auto_approve", auto_approve, &p.auto_approve)?;
    superset("always_ask", always_ask, &p.always_ask)?;
    subset(
        "shell_env_passthrough",
        shell_env_passthrough,
        &p.shell_env_passthrough,
    )?;
    if !sandbox_not_weaker(*sandbox, p.sandbox) {
        return fail(
            "sandbox",
            format!("{sandbox:?} is weaker than the parent's {:?}", p.sandbox),
        );
    }
    if !network.within(&p.network) {
        return fail(
            "network",
            format!(
                "reaches further than the parent's network ({})",
                p.network.label()
            ),
        );
    }
    if *delegation == DelegationMode::Allow && p.delegation == DelegationMode::Forbidden {
        return fail("delegation", "the parent may not delegate");
    }
    if p.block_high_risk_commands && !block_high_risk_commands {
        return fail(
            "block_high_risk_commands",
            "cannot unblock high-risk commands",
        );
    }
    if p.require_approval_for_medium_risk && !require_approval_for_medium_risk {
        return fail(
            "require_approval_for_medium_risk",
            "cannot drop approval of medium-risk commands",
        );
    }
    let RuntimeProfile {
        max_tool_iterations,
        parallel_tools,
        single_tool_rounds,
        max_actions_per_hour,
        max_cost_per_day_cents,
        shell_timeout_secs,
        turn_timeout_secs,
        max_delegation_depth,
        max_context_tokens,
    } = &child.runtime;
    let pr = &parent.runtime;
    for (axis, cv, pv) in [
        (
            "max_actions_per_hour",
            *max_actions_per_hour,
            pr.max_actions_per_hour,
        ),
        (
            "max_cost_per_day_cents",
            *max_cost_per_day_cents,
            pr.max_cost_per_day_cents,
        ),
        (
            "shell_timeout_secs",
            *shell_timeout_secs,
            pr.shell_timeout_secs,
        ),
        (
            "max_delegation_depth",
            *max_delegation_depth,
            pr.max_delegation_depth,
        ),
        (
            "max_tool_iterations",
            *max_tool_iterations,
            pr.max_tool_iterations,
        ),
        (
            "turn_timeout_secs",
            *turn_timeout_secs,
            pr.turn_timeout_secs,
        ),
    ] {
        if cv > pv {
            return fail(axis, format!("{cv} is above the parent's {pv}"));
        }
    }
    if let Some(pv) = pr.max_context_tokens {
        match max_context_tokens {
            Some(cv) if *cv <= pv => {}
            Some(cv) => {
                return fail(
                    "max_context_tokens",
                    format!("{cv} is above the parent's {pv}"),
                )
            }
            None => {
                return fail(
                    "max_context_tokens",
                    format!("the parent's bound {pv} is dropped"),
                )
            }
        }
    }
    // Running calls side by side, or several per round, widens what one round can race.
    if *parallel_tools && !pr.parallel_tools {
        return fail("parallel_tools", "the parent runs its calls one at a time");
    }
    if pr.single_tool_rounds && !single_tool_rounds {
        return fail("single_tool_rounds", "the parent allows one call per round");
    }
    if child.delegation_depth > pr.max_delegation_depth
        || child.delegation_depth <= parent.delegation_depth
    {
        return fail(
            "delegation_depth",
            format!(
                "depth {} is not below the parent's max_delegation_depth {} (parent depth {})",
                child.delegation_depth, pr.max_delegation_depth, parent.delegation_depth
            ),
        );
    }
    let allowed: BTreeSet<&str> = parent
        .memory_grants
        .iter()
        .map(warren_types::MemoryGrant::agent)
        .chain(std::iter::once(parent.alias.as_str()))
        .collect();
    for g in &child.memory_grants {
        if !allowed.contains(g.agent()) {
            return fail(
                "memory_grants",
                format!("`{}` is not readable by the parent", g.agent()),
            );
        }
        // A category-scoped parent grant bounds the child's grant to the same categories.
        if let Some(pg) = parent
            .memory_grants
            .iter()
            .find(|pg| pg.agent() == g.agent())
        {
            if let Some(pcats) = pg.categories() {
                let ok = g
                    .categories()
                    .is_some_and(|cc| cc.iter().all(|x| pcats.contains(x)));
                if !ok {
                    return fail(
                        "memory_grants",
                        format!("categories of `{}` exceed the parent's", g.agent()),
                    );
                }
            }
        }
    }
    Ok(())
}
