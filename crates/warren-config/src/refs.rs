//! The reference graph: everything in a config that points at an agent alias (rules §8).

use crate::issue::join;
use warren_types::Config;

/// How a reference blocks deletion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefStrength {
    /// Blocks deletion (an enabled cron job runs as the agent).
    Hard,
    /// Removed by a delete, rewritten by a rename.
    Soft,
}

/// Where the reference sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// An entry of another agent's `delegates`.
    Delegate,
    /// A key of another agent's `workspace.access`.
    WorkspaceAccess,
    /// An entry of another agent's `read_memory_from`.
    ReadMemoryFrom,
    /// `cron.<id>.agent`.
    CronAgent,
}

/// One reference to an alias.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Reference {
    /// Dotted path of the referencing key, e.g. `agents.bob.delegates[0]`.
    pub path: String,
    /// Kind of reference.
    pub kind: RefKind,
    /// Hard (blocks delete) or soft.
    pub strength: RefStrength,
    /// The agent alias or cron id that holds the reference.
    pub holder: String,
}

/// Every reference to `alias` from elsewhere in the config, in a stable order.
pub fn references_to(config: &Config, alias: &str) -> Vec<Reference> {
    let mut refs = Vec::new();
    for (holder, agent) in config.agents.iter().filter(|(a, _)| a.as_str() != alias) {
        let ap = join("agents", holder);
        for (i, d) in agent.delegates.iter().enumerate() {
            if d == alias {
                refs.push(Reference {
                    path: format!("{}[{i}]", join(&ap, "delegates")),
                    kind: RefKind::Delegate,
                    strength: RefStrength::Soft,
                    holder: holder.clone(),
                });
            }
        }
        if agent.workspace.access.contains_key(alias) {
            refs.push(Reference {
                path: join(&join(&join(&ap, "workspace"), "access"), alias),
                kind: RefKind::WorkspaceAccess,
                strength: RefStrength::Soft,
                holder: holder.clone(),
            });
        }
        for (i, g) in agent.workspace.read_memory_from.iter().enumerate() {
            if g.agent() == alias {
                refs.push(Reference {
                    path: format!("{}[{i}]", join(&join(&ap, "workspace"), "read_memory_from")),
                    kind: RefKind::ReadMemoryFrom,
                    strength: RefStrength::Soft,
                    holder: holder.clone(),
                });
            }
        }
    }
    for (id, job) in &config.cron {
        if job.agent == alias {
            refs.push(Reference {
                path: join(&join("cron", id), "agent"),
                kind: RefKind::CronAgent,
                strength: if job.enabled {
                    RefStrength::Hard
                } else {
                    RefStrength::Soft
                },
                holder: id.clone(),
            });
        }
    }
    refs
}
