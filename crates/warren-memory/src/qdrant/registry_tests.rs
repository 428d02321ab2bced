//! Registration ids and rename planning, run against an in-memory model of the two
//! collections: every interruption point of a rename, in either order of its writes, is
//! resumed by planning again from what the store holds.

use super::*;

/// The agents collection (alias → agent) and the alias payload of each row, by agent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Model {
    regs: Vec<(String, Uuid)>,
    rows: Vec<(Uuid, String)>,
}

impl Model {
    fn agent(&self, alias: &str) -> Option<Uuid> {
        self.regs
            .iter()
            .find(|(a, _)| a == alias)
            .map(|(_, id)| *id)
    }

    /// What the store reads before a rename (rows counted whenever `new` is registered).
    fn observe(&self, old: &str, new: &str) -> RenameState {
        let new_id = self.agent(new);
        RenameState {
            old: self.agent(old),
            new: new_id,
            new_rows: self
                .rows
                .iter()
                .filter(|(id, _)| Some(*id) == new_id)
                .count() as u64,
        }
    }

    fn apply(&mut self, step: &RenameStep) {
        match step {
            RenameStep::Unregister { alias, agent_id } => {
                self.regs.retain(|(a, id)| !(a == alias && id == agent_id));
            }
            RenameStep::Register { alias, agent_id } => {
                // One point per alias: a second write overwrites.
                self.regs.retain(|(a, _)| a != alias);
                self.regs.push((alias.clone(), *agent_id));
            }
            RenameStep::Relabel { agent_id, alias } => {
                for (id, a) in &mut self.rows {
                    if id == agent_id {
                        *a = alias.clone();
                    }
                }
            }
        }
    }

    /// Runs `rename old new` to completion, as the store does.
    fn rename(&mut self, old: &str, new: &str) -> Result<bool, RenameRefusal> {
        let plan = plan_rename(old, new, &self.observe(old, new))?;
        for s in &plan.steps {
            self.apply(s);
        }
        Ok(plan.renamed)
    }

    fn normalised(mut self) -> Self {
        self.regs.sort();
        self.rows.sort();
        self
    }
}

const A: Uuid = Uuid::from_u128(0xa);
const B: Uuid = Uuid::from_u128(0xb);

/// alice (3 rows) and bob (1 row).
fn start() -> Model {
    Model {
        regs: vec![("alice".into(), A), ("bob".into(), B)],
        rows: vec![
            (A, "alice".into()),
            (A, "alice".into()),
            (A, "alice".into()),
            (B, "bob".into()),
        ],
    }
}

fn finished() -> Model {
    let mut m = start();
    assert_eq!(m.rename("alice", "alicia"), Ok(true));
    m.normalised()
}

#[test]
fn registration_ids_are_deterministic() {
    assert_eq!(registration_point("alice"), registration_point("alice"));
    assert_ne!(registration_point("alice"), registration_point("bob"));
    assert_eq!(
        agent_id_candidate("alice", 0),
        agent_id_candidate("alice", 0)
    );
    assert_ne!(agent_id_candidate("alice", 0), agent_id_candidate("bob", 0));
    let all: std::collections::BTreeSet<Uuid> = (0..MAX_ID_ATTEMPTS)
        .map(|n| agent_id_candidate("alice", n))
        .collect();
    assert_eq!(all.len(), MAX_ID_ATTEMPTS as usize, "candidates differ");
    assert!(!all.contains(&registration_point("alice")));
}

#[test]
fn the_deterministic_registration_speaks_for_its_alias() {
    let legacy = Registration {
        point: Uuid::from_u128(7).to_string(),
        agent_id: Uuid::from_u128(7),
    };
    let canonical = Registration {
        point: registration_point("alice").to_string(),
        agent_id: A,
    };
    let both = [legacy.clone(), canonical.clone()];
    assert_eq!(pick_registration("alice", &both), Some(&canonical));
    assert_eq!(
        pick_registration("alice", std::slice::from_ref(&legacy)),
        Some(&legacy)
    );
    assert_eq!(pick_registration("alice", &[]), None);
}

#[test]
fn a_rename_moves_registration_and_rows() {
    let m = finished();
    assert_eq!(m.agent("alicia"), Some(A));
    assert_eq!(m.agent("alice"), None);
    assert!(m
        .rows
        .iter()
        .all(|(id, a)| (*id == A && a == "alicia") || (*id == B && a == "bob")));
    let plan = plan_rename("alice", "alicia", &start().observe("alice", "alicia")).unwrap();
    assert!(
        matches!(plan.steps.last(), Some(RenameStep::Unregister { alias, .. }) if alias == "alice"),
        "the old registration goes last: {plan:?}"
    );
}

/// Registration written first (the store's order): interrupted after each write, rerun.
#[test]
fn rename_resumes_after_every_prefix_of_its_writes() {
    let plan = plan_rename("alice", "alicia", &start().observe("alice", "alicia")).unwrap();
    for k in 0..=plan.steps.len() {
        let mut m = start();
        for s in &plan.steps[..k] {
            m.apply(s);
        }
        let again = m.rename("alice", "alicia");
        assert!(again.is_ok(), "rerun after {k} writes: {again:?}");
        assert_eq!(m.normalised(), finished(), "rerun after {k} writes");
    }
}

/// Rows relabelled first, then interrupted before the registration moved.
#[test]
fn rename_resumes_after_the_rows_were_written_first() {
    let mut m = start();
    m.apply(&RenameStep::Relabel {
        agent_id: A,
        alias: "alicia".into(),
    });
    assert_eq!(m.rename("alice", "alicia"), Ok(true));
    assert_eq!(m.normalised(), finished());
}

/// The registration moved as a whole first (new written, old removed), then interrupted
/// before the rows: the rerun still relabels them.
#[test]
fn rename_resumes_after_the_registration_moved_first() {
    let mut m = start();
    m.apply(&RenameStep::Register {
        alias: "alicia".into(),
        agent_id: A,
    });
    m.apply(&RenameStep::Unregister {
        alias: "alice".into(),
        agent_id: A,
    });
    let state = m.observe("alice", "alicia");
    assert_eq!(state.new, Some(A));
    assert!(
        state.new_rows > 0,
        "the agent's own rows under the new alias"
    );
    assert_eq!(m.rename("alice", "alicia"), Ok(false), "old alias is gone");
    assert_eq!(m.normalised(), finished());
}

#[test]
fn a_finished_rename_run_again_changes_nothing() {
    let mut m = finished();
    assert_eq!(m.rename("alice", "alicia"), Ok(false));
    assert_eq!(m.normalised(), finished());
}

#[test]
fn rename_onto_an_alias_with_rows_is_refused_and_onto_an_empty_one_takes_it() {
    let mut m = start();
    assert_eq!(m.rename("alice", "bob"), Err(RenameRefusal::AliasTaken));
    assert_eq!(
        m.clone().normalised(),
        start().normalised(),
        "nothing written"
    );
    m.rows.retain(|(id, _)| *id != B);
    assert_eq!(m.rename("alice", "bob"), Ok(true));
    assert_eq!(m.agent("bob"), Some(A));
    assert_eq!(m.regs.len(), 1, "bob's empty registration replaced: {m:?}");
    assert!(m.rows.iter().all(|(id, a)| *id == A && a == "bob"));
}

#[test]
fn unknown_or_same_alias_renames_nothing() {
    let mut m = start();
    assert_eq!(m.rename("nobody", "zed"), Ok(false));
    assert_eq!(m.rename("alice", "alice"), Ok(true));
    assert_eq!(m.normalised(), start().normalised());
}
