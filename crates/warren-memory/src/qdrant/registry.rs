//! The pure half of the agents collection (`<collection>_agents`): deterministic ids for
//! registrations and new agents, and the plan of a rename derived from what the store holds,
//! so an interrupted rename run again converges whichever of its writes had landed.

use uuid::Uuid;

/// Namespace of registration point ids (one point per alias).
const REGISTRATION_NS: Uuid = Uuid::from_u128(0x5741_5252_454e_5152_4547_4953_5452_0001);
/// Namespace of agent UUIDs first handed out by this store.
const AGENT_NS: Uuid = Uuid::from_u128(0x5741_5252_454e_5152_4147_454e_5449_0001);
/// How many candidate agent UUIDs registration tries before giving up.
pub const MAX_ID_ATTEMPTS: u32 = 64;

/// The point id of an alias's registration: a retried or concurrent registration of one alias
/// overwrites the same point instead of adding a second one.
pub fn registration_point(alias: &str) -> Uuid {
    Uuid::new_v5(&REGISTRATION_NS, alias.as_bytes())
}

/// The `attempt`-th candidate UUID for a new agent under `alias`. Deterministic, so two
/// registrations of one alias racing each other pick the same UUID; later candidates exist
/// because an earlier one may still belong to an agent that was renamed away from the alias.
pub fn agent_id_candidate(alias: &str, attempt: u32) -> Uuid {
    if attempt == 0 {
        Uuid::new_v5(&AGENT_NS, alias.as_bytes())
    } else {
        // NUL never occurs in an alias, so no alias collides with a numbered candidate.
        Uuid::new_v5(&AGENT_NS, format!("{alias}\u{0}{attempt}").as_bytes())
    }
}

/// One registration point as read back from the agents collection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// The point's id.
    pub point: String,
    /// The agent's UUID (payload `agent_id`).
    pub agent_id: Uuid,
}

/// The registration that speaks for `alias` among the points carrying it: the one at its
/// deterministic id, else the first (stores written before ids were deterministic).
pub fn pick_registration<'a>(alias: &str, found: &'a [Registration]) -> Option<&'a Registration> {
    let canonical = registration_point(alias).to_string();
    found
        .iter()
        .find(|r| r.point == canonical)
        .or_else(|| found.first())
}

/// What a rename `old → new` finds in the store before acting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenameState {
    /// The agent registered under the old alias.
    pub old: Option<Uuid>,
    /// The agent registered under the new alias.
    pub new: Option<Uuid>,
    /// Rows of the agent under the new alias, when it is another agent than `old`'s.
    pub new_rows: u64,
}

/// One write of a rename.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenameStep {
    /// Delete the registrations of `alias` that point at `agent_id`.
    Unregister {
        /// The alias.
        alias: String,
        /// The agent it points at.
        agent_id: Uuid,
    },
    /// Write the registration `alias → agent_id` (idempotent: a deterministic point).
    Register {
        /// The alias.
        alias: String,
        /// The agent.
        agent_id: Uuid,
    },
    /// Set payload `agent = alias` on every row of `agent_id` (idempotent).
    Relabel {
        /// The agent whose rows change.
        agent_id: Uuid,
        /// The alias they carry afterwards.
        alias: String,
    },
}

/// A rename's writes, in order, and what the rename reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenamePlan {
    /// Writes to run, in order; each is idempotent.
    pub steps: Vec<RenameStep>,
    /// Whether the store knew `old` (the rename's answer).
    pub renamed: bool,
}

/// Why a rename cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RenameRefusal {
    /// The new alias belongs to another agent that holds rows.
    AliasTaken,
}

/// Plans a rename from the observed state. The new registration is written first and the old
/// one removed last, with the rows relabelled between: while the old registration exists the
/// rename is unfinished and a rerun redoes the remaining (idempotent) writes. A state where the
/// old registration is already gone but the new one exists (the registration moved before the
/// rows) still gets its rows relabelled, so either order of the two writes converges.
pub fn plan_rename(old: &str, new: &str, state: &RenameState) -> Result<RenamePlan, RenameRefusal> {
    let relabel = |agent_id: Uuid| RenameStep::Relabel {
        agent_id,
        alias: new.to_string(),
    };
    if old == new {
        return Ok(RenamePlan {
            steps: Vec::new(),
            renamed: state.old.is_some(),
        });
    }
    let Some(a) = state.old else {
        return Ok(RenamePlan {
            steps: state.new.map(relabel).into_iter().collect(),
            renamed: false,
        });
    };
    let mut steps = Vec::new();
    match state.new {
        Some(b) if b == a => {}
        Some(_) if state.new_rows > 0 => return Err(RenameRefusal::AliasTaken),
        Some(b) => {
            steps.push(RenameStep::Unregister {
                alias: new.to_string(),
                agent_id: b,
            });
            steps.push(RenameStep::Register {
                alias: new.to_string(),
                agent_id: a,
            });
        }
        None => steps.push(RenameStep::Register {
            alias: new.to_string(),
            agent_id: a,
        }),
    }
    steps.push(relabel(a));
    steps.push(RenameStep::Unregister {
        alias: old.to_string(),
        agent_id: a,
    });
    Ok(RenamePlan {
        steps,
        renamed: true,
    })
}

#[cfg(test)]
#[path = "registry_tests.rs"]
mod tests;
