//! The unfinished lifecycle operations (journal entries) as a list a front-end shows, with the
//! error of the last attempt to finish each one, and resuming them on request.

use crate::lifecycle_view::{step_label, LifecycleKind, PendingOperationView};
use crate::Warren;
use warren_runtime::lifecycle::Operation;
use warren_runtime::lifecycle::ResumeOutcome;
use warren_state::lifecycle::journal::Journal;

impl Warren {
    fn lifecycle_errors(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<String, String>> {
        self.lifecycle_errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Remembers what resuming gave: the error of an entry that could not be finished, and
    /// nothing for one that was.
    pub(crate) fn note_resumed(&self, outcomes: &[ResumeOutcome]) {
        let mut errors = self.lifecycle_errors();
        for o in outcomes {
            match &o.error {
                Some(e) => errors.insert(o.journal.clone(), e.clone()),
                None => errors.remove(&o.journal),
            };
        }
    }

    /// Remembers `problem` as the last error of the unfinished operations involving `alias`.
    pub(crate) fn note_unfinished(&self, alias: &str, problem: String) {
        if let Some(entry) = warren_state::lifecycle::pending_for(self.layout(), alias) {
            self.lifecycle_errors().insert(entry.id, problem);
        }
    }

    /// The steps of a rename in the order they run: config, workspace, then one per kind of
    /// owned state (none when the lifecycle service cannot be opened).
    async fn rename_steps(&self) -> Vec<String> {
        match self.lifecycle().await {
            Ok(lc) => ["config".to_string(), "workspace".to_string()]
                .into_iter()
                .chain(
                    lc.participants()
                        .iter()
                        .map(|p| format!("rename:{}", p.kind())),
                )
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    /// Every unfinished rename, delete or restore, oldest first, then every unfinished import: what it is, the aliases it
    /// blocks, the step it stopped at, and why the last attempt in this process failed.
    pub async fn pending_lifecycle(&self) -> Vec<PendingOperationView> {
        let imports = {
            let errors = self.lifecycle_errors();
            self.pending_import_views(&errors)
        };
        let journal = Journal::new(self.layout().journal_dir());
        let entries = journal.pending();
        if entries.is_empty() {
            return imports;
        }
        let rename_steps = self.rename_steps().await;
        let errors = self.lifecycle_errors();
        let mut list: Vec<PendingOperationView> = entries
            .into_iter()
            .map(|item| match item {
                Ok(e) => PendingOperationView {
                    kind: LifecycleKind::from(&e.op),
                    description: e.op.describe(),
                    aliases: e.op.aliases().into_iter().map(String::from).collect(),
                    started_at: e.started_at.clone(),
                    stopped_at: match e.op {
                        Operation::Rename(_) => rename_steps
                            .iter()
                            .find(|s| !e.done(s))
                            .map(|s| step_label(s).unwrap_or_else(|| s.clone())),
                        _ => None,
                    },
                    last_error: errors.get(&e.id).cloned(),
                    hint: e.op.resume_hint(),
                    steps_done: e.steps.iter().filter_map(|s| step_label(s)).collect(),
                    journal: e.id,
                },
                Err(err) => PendingOperationView {
                    journal: String::new(),
                    kind: LifecycleKind::Unreadable,
                    description: "an unreadable journal entry".into(),
                    aliases: Vec::new(),
                    started_at: String::new(),
                    steps_done: Vec::new(),
                    stopped_at: None,
                    last_error: Some(err.to_string()),
                    hint: format!(
                        "repair or remove the file under {}",
                        self.layout().journal_dir().display()
                    ),
                },
            })
            .collect();
        list.extend(imports);
        list
    }

    /// Remembers what resuming the unfinished imports gave, like [`Warren::note_resumed`].
    pub(crate) fn note_imports_resumed(
        &self,
        outcomes: &[crate::lifecycle_view::ResumeOutcomeView],
    ) {
        let mut errors = self.lifecycle_errors();
        for o in outcomes {
            match &o.error {
                Some(e) => errors.insert(o.journal.clone(), e.clone()),
                None => errors.remove(&o.journal),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::lifecycle_view::LifecycleKind;
    use crate::test_support::{install, runtime};

    const CONFIG: &str = "schema_version = 1\n\n[risk_profiles.p]\nlevel = \"supervised\"\n\n[agents.alice]\nrisk_profile = \"p\"\n";

    #[test]
    fn an_unfinished_rename_is_listed_with_its_error_until_a_resume_finishes_it() {
        let (dir, w) = install(CONFIG);
        let ws = w.layout().default_workspace("alice");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("notes.md"), "alice's notes").unwrap();
        let rt = runtime();
        assert!(rt.block_on(w.pending_lifecycle()).is_empty());
        // The memory store fails for real: its database path is a directory.
        let db = w.layout().memory_db();
        std::fs::create_dir_all(db.join("not-a-database")).unwrap();
        let r = rt
            .block_on(w.rename_agent("alice", "ann", false, false))
            .unwrap();
        assert!(!r.ok, "{r:?}");
        let pending = rt.block_on(w.pending_lifecycle());
        assert_eq!(pending.len(), 1, "{pending:?}");
        let p = &pending[0];
        assert_eq!(p.kind, LifecycleKind::Rename);
        assert_eq!(p.description, "rename alice → ann");
        assert_eq!(p.aliases, vec!["alice".to_string(), "ann".to_string()]);
        assert_eq!(
            p.stopped_at.as_deref(),
            Some("memory moved to the new name"),
            "{p:?}"
        );
        assert!(
            p.steps_done
                .starts_with(&["config entry changed".into(), "workspace moved".into()]),
            "{p:?}"
        );
        let err = p.last_error.as_deref().unwrap_or_default();
        assert!(err.contains("memory"), "{err}");
        assert!(
            p.hint.contains("warren agents rename alice ann"),
            "{}",
            p.hint
        );

        // A new process knows no error until its own attempt fails.
        let other = crate::Warren::open(w.layout().clone());
        assert_eq!(rt.block_on(other.pending_lifecycle())[0].last_error, None);
        let again = rt.block_on(other.resume_lifecycle()).unwrap();
        assert!(again.len() == 1 && !again[0].ok, "{again:?}");
        let listed = rt.block_on(other.pending_lifecycle());
        assert_eq!(listed[0].last_error, again[0].error, "{listed:?}");

        // The fault is gone: resuming finishes it and the list is empty.
        std::fs::remove_dir_all(&db).unwrap();
        let done = rt.block_on(other.resume_lifecycle()).unwrap();
        assert!(done.len() == 1 && done[0].ok, "{done:?}");
        assert!(rt.block_on(other.pending_lifecycle()).is_empty());
        assert!(other.lifecycle_errors().is_empty());
        assert!(dir.path().join("agents/ann/workspace/notes.md").is_file());
    }

    #[test]
    fn an_unreadable_journal_entry_is_listed_with_its_problem() {
        let (_dir, w) = install(CONFIG);
        let journal = w.layout().journal_dir();
        std::fs::create_dir_all(&journal).unwrap();
        std::fs::write(journal.join("broken.json"), "{ not json").unwrap();
        let rt = runtime();
        let pending = rt.block_on(w.pending_lifecycle());
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].kind, LifecycleKind::Unreadable);
        assert!(pending[0].last_error.is_some(), "{pending:?}");
    }
}
