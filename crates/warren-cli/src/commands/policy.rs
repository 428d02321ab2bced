//! `warren policy show | check | map | explain`. `map --json` → `{"agents", "rows": [{"agent",
//! "sandbox", "cells": [{"peer", "read", "write", "memory", "memory_categories",
//! "delegate"}]}]}`; `explain --json` → `{"agent", "peer", "aspect", "allowed", "rule", "path",
//! "grants", "enforced_by"}` (exit 0 allowed, 1 not).

use super::choices::Aspect;
use super::Ctx;
use std::process::ExitCode;

/// `warren policy ...` subcommands.
#[derive(clap::Subcommand)]
pub enum Cmd {
    /// The effective policy of an agent: roots and tiers, workspace_only, the sandbox and why.
    Show {
        /// The agent's alias.
        #[arg(long)]
        agent: String,
    },
    /// Whether an agent may read or write a path; prints the deciding rule (exit 0 allowed, 1 denied).
    #[command(group(clap::ArgGroup::new("access").required(true).args(["read", "write"])))]
    Check {
        /// The agent's alias.
        #[arg(long)]
        agent: String,
        /// Check read access.
        #[arg(long)]
        read: bool,
        /// Check write access.
        #[arg(long)]
        write: bool,
        /// The path (relative paths are inside the agent's workspace; `~` is your home).
        path: String,
    },
    /// Every agent against every other: workspace read / write, memory reads, delegation.
    Map,
    /// Why an agent may or may not read, write, read the memory of, or delegate to a peer.
    Explain {
        /// The agent's alias.
        #[arg(long)]
        agent: String,
        /// The other agent.
        peer: String,
        /// The permission asked about.
        aspect: Aspect,
    },
}

fn map_text(m: &warren_api::permission_map::PermissionMap) -> String {
    let mut s = String::from(
        "agent -> peer: workspace (R/W/RW), memory (M, M[categories]), delegate (D)\n",
    );
    for r in &m.rows {
        let sandbox = r.sandbox.as_deref().unwrap_or("UNAVAILABLE");
        s.push_str(&format!("{} (sandbox {sandbox})\n", r.agent));
        for c in &r.cells {
            let ws = match (c.read, c.write) {
                (true, true) => "RW",
                (true, false) => "R",
                (false, true) => "W",
                (false, false) => "",
            };
            let mut parts: Vec<String> = Vec::new();
            if !ws.is_empty() {
                parts.push(ws.to_string());
            }
            if c.memory {
                parts.push(match &c.memory_categories {
                    Some(cats) => format!("M[{}]", cats.join(",")),
                    None => "M".to_string(),
                });
            }
            if c.delegate {
                parts.push("D".into());
            }
            if !parts.is_empty() {
                s.push_str(&format!("  -> {:<24} {}\n", c.peer, parts.join(" ")));
            }
        }
    }
    s
}

/// Runs a `warren policy` subcommand.
pub fn run(ctx: &Ctx, cmd: Cmd) -> ExitCode {
    match cmd {
        Cmd::Show { agent } => ctx.out.result(ctx.warren.policy_show(&agent), |p| {
            let mut t = format!(
                "agent:           {}\nrisk profile:    {} ({})\nworkspace:       {}\nworkspace_only:  {}\n",
                p.agent, p.risk_profile, p.level.as_str(), p.workspace, p.workspace_only
            );
            t.push_str("roots:\n");
            for r in &p.roots {
                let name = r.name.as_deref().map(|n| format!(" {n}")).unwrap_or_default();
                let missing = if r.exists { "" } else { " (missing)" };
                t.push_str(&format!("  {:<11} {}{}  [{}{}]\n", r.tier, r.path, missing, r.source, name));
            }
            for f in &p.forbidden_paths {
                t.push_str(&format!("  forbidden   {f}\n"));
            }
            for s in &p.runtime_state {
                t.push_str(&format!("  protected   {s}\n"));
            }
            t.push_str(&format!("allowed commands: {}\n", p.allowed_commands.join(" ")));
            t.push_str(&format!(
                "budget:          {} actions/hour, shell timeout {}s\n",
                p.max_actions_per_hour, p.shell_timeout_secs
            ));
            let s = &p.sandbox;
            t.push_str(&format!(
                "sandbox:         {} -> {} ({})\n",
                s.configured,
                s.effective.as_deref().unwrap_or("UNAVAILABLE"),
                s.error.as_deref().unwrap_or(&s.reason)
            ));
            for n in &s.notes {
                t.push_str(&format!("  note: {n}\n"));
            }
            t
        }),
        Cmd::Check {
            agent,
            read: _,
            write,
            path,
        } => match ctx.warren.policy_check(&agent, write, &path) {
            Ok(c) => {
                let code = ctx.out.ok(&c, || {
                    let mut s = format!(
                        "{} {} {} (rule {})",
                        if c.allowed { "allowed" } else { "denied" },
                        c.access,
                        c.path,
                        c.rule
                    );
                    if let Some(m) = &c.meant {
                        s.push_str(&format!(
                            "\nrelative paths start in the agent's own workspace; the sibling's file is {m}, and that is allowed"
                        ));
                    }
                    s
                });
                if c.allowed {
                    code
                } else {
                    ExitCode::from(1)
                }
            }
            Err(e) => ctx.out.fail(&e),
        },
        Cmd::Map => ctx.out.result(ctx.warren.permission_map(), map_text),
        Cmd::Explain {
            agent,
            peer,
            aspect,
        } => {
            match ctx.warren.explain_permission(&agent, &peer, aspect.into()) {
                Ok(x) => {
                    let allowed = x.allowed;
                    let code = ctx.out.ok(&x, || {
                        let mut t = format!(
                            "{} {} {} {}: {} (rule {})\n",
                            x.agent,
                            if x.allowed { "may" } else { "may not" },
                            aspect_words(x.aspect),
                            x.peer,
                            if x.allowed { "allowed" } else { "denied" },
                            x.rule
                        );
                        if let Some(p) = &x.path {
                            t.push_str(&format!("path:        {p}\n"));
                        }
                        for g in &x.grants {
                            t.push_str(&format!("config:      {g}\n"));
                        }
                        t.push_str(&format!("enforced by: {}\n", x.enforced_by));
                        t
                    });
                    if allowed {
                        code
                    } else {
                        ExitCode::from(1)
                    }
                }
                Err(e) => ctx.out.fail(&e),
            }
        }
    }
}

/// What a permission lets an agent do, in words (`read the workspace of`).
fn aspect_words(a: warren_api::permission_map::PermissionAspect) -> &'static str {
    use warren_api::permission_map::PermissionAspect as A;
    match a {
        A::Read => "read the workspace of",
        A::Write => "write the workspace of",
        A::Memory => "read the memory of",
        A::Delegate => "delegate to",
    }
}
