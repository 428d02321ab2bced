//! The install's approvals inbox: every request a process parks in its broker is also written
//! to `data/approvals/<id>.request.json`, so another process of the same install (`warren
//! approvals list | answer`, while the desktop app or `warren serve` runs the turn) can see it
//! and answer it by writing `<id>.answer.json`. The waiting turn picks the answer up within a
//! fraction of a second and removes both files; a request whose process is gone is stale and
//! is neither listed nor answerable. `data/` is runtime state no agent may write (rules §2.1),
//! so only the user's own processes answer here.

use crate::approval::{ApprovalAnswer, PendingApproval};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};
use warren_config::InstallLayout;
use warren_types::ApprovalDecision;

/// A request as the inbox keeps it: the request and the process waiting for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxRequest {
    /// The agent.
    pub agent: String,
    /// The turn.
    pub turn_id: String,
    /// The tool call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// Its arguments as JSON text.
    pub arguments: String,
    /// Why it needs approval.
    pub reason: String,
    /// The process whose turn waits.
    pub pid: u32,
    /// That process's start time (clock ticks since boot), so a reused pid is not mistaken
    /// for it.
    pub started: u64,
    /// When the request was parked (RFC 3339, UTC).
    pub since: String,
}

/// An answer written by another process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxAnswer {
    /// The decision.
    pub decision: ApprovalDecision,
    /// A message for the model (with a denial).
    pub message: Option<String>,
}

/// Why an answer could not be delivered.
#[derive(Debug, thiserror::Error)]
pub enum InboxError {
    /// Nothing waits under that turn and call (answered, cancelled, or its process is gone).
    #[error("no approval request waits for call `{call_id}` of turn `{turn_id}`")]
    NotWaiting {
        /// The turn.
        turn_id: String,
        /// The call.
        call_id: String,
    },
    /// Reading or writing the inbox failed.
    #[error("approvals inbox {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
}

/// The inbox folder of one install.
#[derive(Debug, Clone)]
pub struct Inbox {
    dir: PathBuf,
}

/// The start time of process `pid` in clock ticks since boot (field 22 of its `stat`).
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> InboxError + '_ {
    move |source| InboxError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Inbox {
    /// `<install>/data/approvals/`.
    pub fn for_install(layout: &InstallLayout) -> Self {
        Inbox {
            dir: layout.data_dir().join("approvals"),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A file name for a (turn, call) pair: call ids come from the model, so they are hashed
    /// rather than used as names.
    fn id(turn_id: &str, call_id: &str) -> String {
        let mut h = Sha256::new();
        h.update(turn_id.as_bytes());
        h.update([0]);
        h.update(call_id.as_bytes());
        hex::encode(&h.finalize()[..16])
    }

    fn request_path(&self, turn_id: &str, call_id: &str) -> PathBuf {
        self.dir
            .join(format!("{}.request.json", Self::id(turn_id, call_id)))
    }

    fn answer_path(&self, turn_id: &str, call_id: &str) -> PathBuf {
        self.dir
            .join(format!("{}.answer.json", Self::id(turn_id, call_id)))
    }

    fn ensure_dir(&self) -> Result<(), InboxError> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(io_err(&self.dir))
    }

    /// Writes `request` as waiting in this process.
    pub fn publish(&self, request: &PendingApproval) -> Result<(), InboxError> {
        self.ensure_dir()?;
        let pid = std::process::id();
        let record = InboxRequest {
            agent: request.agent.clone(),
            turn_id: request.turn_id.clone(),
            call_id: request.call_id.clone(),
            tool: request.tool.clone(),
            arguments: request.arguments.clone(),
            reason: request.reason.clone(),
            pid,
            started: start_ticks(pid).unwrap_or(0),
            since: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        };
        let path = self.request_path(&request.turn_id, &request.call_id);
        let bytes = serde_json::to_vec_pretty(&record).map_err(|e| InboxError::Io {
            path: path.clone(),
            source: io::Error::other(e),
        })?;
        warren_config::write_atomic(&path, &bytes).map_err(io_err(&path))
    }

    /// Removes the request and any answer of a (turn, call) pair: it was answered, or its
    /// wait ended.
    pub fn withdraw(&self, turn_id: &str, call_id: &str) {
        for p in [
            self.request_path(turn_id, call_id),
            self.answer_path(turn_id, call_id),
        ] {
            if let Err(e) = std::fs::remove_file(&p) {
                if e.kind() != io::ErrorKind::NotFound {
                    tracing::warn!(path = %p.display(), error = %e, "cannot remove an approvals inbox file");
                }
            }
        }
    }

    /// The answer another process wrote for a (turn, call) pair, taken out of the inbox.
    pub fn take_answer(&self, turn_id: &str, call_id: &str) -> Option<ApprovalAnswer> {
        let path = self.answer_path(turn_id, call_id);
        let bytes = std::fs::read(&path).ok()?;
        let _ = std::fs::remove_file(&path);
        match serde_json::from_slice::<InboxAnswer>(&bytes) {
            Ok(a) => Some(ApprovalAnswer {
                decision: a.decision,
                message: a.message.filter(|m| !m.trim().is_empty()),
                no_one_to_ask: false,
            }),
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "ignoring an unreadable approval answer");
                None
            }
        }
    }

    fn live(r: &InboxRequest) -> bool {
        start_ticks(r.pid).is_some_and(|t| r.started == 0 || t == r.started)
    }

    fn read_request(path: &Path) -> Option<InboxRequest> {
        serde_json::from_slice(&std::fs::read(path).ok()?).ok()
    }

    /// Every request waiting in a live process, oldest first. Files of processes that are
    /// gone are removed.
    pub fn list(&self) -> Result<Vec<InboxRequest>, InboxError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_err(&self.dir)(e)),
        };
        let mut out = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            let is_request = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".request.json"));
            if !is_request {
                continue;
            }
            match Self::read_request(&path) {
                Some(r) if Self::live(&r) => out.push(r),
                Some(r) => self.withdraw(&r.turn_id, &r.call_id),
                None => {}
            }
        }
        out.sort_by(|a, b| {
            (&a.since, &a.turn_id, &a.call_id).cmp(&(&b.since, &b.turn_id, &b.call_id))
        });
        Ok(out)
    }

    /// Whether a live process still waits for a (turn, call) pair.
    pub fn is_waiting(&self, turn_id: &str, call_id: &str) -> bool {
        Self::read_request(&self.request_path(turn_id, call_id))
            .is_some_and(|r| r.turn_id == turn_id && r.call_id == call_id && Self::live(&r))
    }

    /// Leaves `answer` for the process waiting on a (turn, call) pair.
    pub fn answer(
        &self,
        turn_id: &str,
        call_id: &str,
        answer: &InboxAnswer,
    ) -> Result<(), InboxError> {
        if !self.is_waiting(turn_id, call_id) {
            return Err(InboxError::NotWaiting {
                turn_id: turn_id.to_string(),
                call_id: call_id.to_string(),
            });
        }
        let path = self.answer_path(turn_id, call_id);
        let bytes = serde_json::to_vec(answer).map_err(|e| InboxError::Io {
            path: path.clone(),
            source: io::Error::other(e),
        })?;
        warren_config::write_atomic(&path, &bytes).map_err(io_err(&path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(call: &str) -> PendingApproval {
        PendingApproval {
            agent: "alice".into(),
            turn_id: "t1".into(),
            call_id: call.into(),
            tool: "shell".into(),
            arguments: "{\"command\":\"ls\"}".into(),
            reason: "supervised".into(),
        }
    }

    #[test]
    fn a_published_request_is_listed_answered_and_withdrawn() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = Inbox::for_install(&InstallLayout::new(dir.path()));
        assert!(inbox.list().unwrap().is_empty());
        inbox.publish(&request("../../etc/passwd")).unwrap();
        let listed = inbox.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].call_id, "../../etc/passwd");
        assert_eq!(listed[0].pid, std::process::id());
        // The file names never carry the model's call id.
        for e in std::fs::read_dir(inbox.dir()).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            assert!(!name.contains(".."), "{name}");
        }
        assert!(inbox.take_answer("t1", "../../etc/passwd").is_none());
        let a = InboxAnswer {
            decision: ApprovalDecision::Deny,
            message: Some("not now".into()),
        };
        assert!(matches!(
            inbox.answer("t1", "other", &a),
            Err(InboxError::NotWaiting { .. })
        ));
        inbox.answer("t1", "../../etc/passwd", &a).unwrap();
        let got = inbox.take_answer("t1", "../../etc/passwd").unwrap();
        assert_eq!(got.decision, ApprovalDecision::Deny);
        assert_eq!(got.message.as_deref(), Some("not now"));
        assert!(
            inbox.take_answer("t1", "../../etc/passwd").is_none(),
            "taken once"
        );
        inbox.withdraw("t1", "../../etc/passwd");
        assert!(inbox.list().unwrap().is_empty());
    }

    #[test]
    fn a_request_of_a_process_that_is_gone_is_stale() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = Inbox::for_install(&InstallLayout::new(dir.path()));
        inbox.publish(&request("c1")).unwrap();
        // Rewrite the record as if another process had parked it and then died.
        let path = inbox.request_path("t1", "c1");
        let mut r: InboxRequest = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        r.started += 1;
        std::fs::write(&path, serde_json::to_vec(&r).unwrap()).unwrap();
        assert!(!inbox.is_waiting("t1", "c1"));
        let a = InboxAnswer {
            decision: ApprovalDecision::ApproveOnce,
            message: None,
        };
        assert!(inbox.answer("t1", "c1", &a).is_err());
        assert!(inbox.list().unwrap().is_empty());
        assert!(!path.exists(), "stale request removed");
    }
}
