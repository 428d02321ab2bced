//! The install's approvals inbox: every request a process parks in its broker is also written
//! to `data/approvals/<id>.request.json`, so another process of the same install (`warren
//! approvals list | answer`, while the desktop app or `warren serve` runs the turn) can see it.
//! An answer is not a file: the answering process connects to the socket of the process whose
//! turn waits (`data/approvals/<pid>.sock`) and sends it there. That process learns who is
//! answering from the kernel (`SO_PEERCRED`), refuses an answer from inside any agent's tool
//! call (the answerer or an ancestor is a call's reaper, see
//! [`warren_policy::sandbox::inside_a_tool_call`]), and takes it only for the exact request the
//! answerer read (agent, turn, call, tool and arguments, by digest). A request whose process is
//! gone is stale and is neither listed nor answerable. `data/` is runtime state no agent may
//! open (rules §2.1).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io;
use std::path::{Path, PathBuf};
use warren_config::InstallLayout;
use warren_types::ApprovalDecision;
use warren_types::PendingApproval;

/// A request as the inbox keeps it: the request and the process waiting for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxRequest {
    /// The request (its fields at the top level of the record).
    #[serde(flatten)]
    pub request: PendingApproval,
    /// The process whose turn waits.
    pub pid: u32,
    /// That process's start time (clock ticks since boot), so a reused pid is not mistaken
    /// for it.
    pub started: u64,
    /// When the request was parked (RFC 3339, UTC).
    pub since: String,
}

impl InboxRequest {
    /// Whether this is the request of call `call_id` in turn `turn_id`.
    fn is_of(&self, turn_id: &str, call_id: &str) -> bool {
        self.request.turn_id == turn_id && self.request.call_id == call_id
    }
}

/// An answer, as a front-end gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxAnswer {
    /// The decision.
    pub decision: ApprovalDecision,
    /// A message for the model (with a denial).
    pub message: Option<String>,
}

/// What an answering process sends over the waiting process's socket (one line of JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnswerMessage {
    /// The waiting call's turn.
    pub turn_id: String,
    /// The waiting call.
    pub call_id: String,
    /// The digest of the request the answerer read ([`request_digest`]).
    pub request: String,
    /// The answer.
    pub decision: ApprovalDecision,
    /// A message for the model (with a denial).
    pub message: Option<String>,
}

/// The waiting process's reply (one line of JSON).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnswerReply {
    /// Whether the answer was taken.
    pub ok: bool,
    /// Why it was not.
    pub reason: Option<String>,
}

/// The longest message either side reads.
pub const MAX_ANSWER_LINE: usize = 64 * 1024;

/// The digest binding an answer to one request: its agent, turn, call, tool and arguments.
pub fn request_digest(
    agent: &str,
    turn_id: &str,
    call_id: &str,
    tool: &str,
    arguments: &str,
) -> String {
    let mut h = Sha256::new();
    for part in [agent, turn_id, call_id, tool, arguments] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    hex::encode(h.finalize())
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
    /// The waiting process refused the answer, saying why.
    #[error("approval_refused: {reason}")]
    Refused {
        /// Why.
        reason: String,
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

    /// The record of the request of `call_id` in `turn_id`.
    pub fn request_path(&self, turn_id: &str, call_id: &str) -> PathBuf {
        self.dir
            .join(format!("{}.request.json", Self::id(turn_id, call_id)))
    }

    /// The socket of the process `pid` whose turns wait.
    pub fn socket_path(&self, pid: u32) -> PathBuf {
        self.dir.join(format!("{pid}.sock"))
    }

    /// Binds this process's answer socket (a stale one of a process that had the same pid is
    /// replaced), readable and writable by the user only.
    pub fn listen(&self) -> Result<tokio::net::UnixListener, InboxError> {
        use std::os::unix::fs::PermissionsExt;
        self.ensure_dir()?;
        let path = self.socket_path(std::process::id());
        let _ = std::fs::remove_file(&path);
        let listener = tokio::net::UnixListener::bind(&path).map_err(io_err(&path))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
            .map_err(io_err(&path))?;
        Ok(listener)
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
            request: request.clone(),
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

    /// Removes the request of a (turn, call) pair: it was answered, or its wait ended.
    pub fn withdraw(&self, turn_id: &str, call_id: &str) {
        let p = self.request_path(turn_id, call_id);
        if let Err(e) = std::fs::remove_file(&p) {
            if e.kind() != io::ErrorKind::NotFound {
                tracing::warn!(path = %p.display(), error = %e, "cannot remove an approvals inbox file");
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
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            // The answer socket of a process that is gone.
            if let Some(pid) = name
                .strip_suffix(".sock")
                .and_then(|p| p.parse::<u32>().ok())
            {
                if start_ticks(pid).is_none() {
                    let _ = std::fs::remove_file(&path);
                }
                continue;
            }
            if !name.ends_with(".request.json") {
                continue;
            }
            match Self::read_request(&path) {
                Some(r) if Self::live(&r) => out.push(r),
                Some(r) => self.withdraw(&r.request.turn_id, &r.request.call_id),
                None => {}
            }
        }
        out.sort_by(|a, b| {
            let (x, y) = (&a.request, &b.request);
            (&a.since, &x.turn_id, &x.call_id).cmp(&(&b.since, &y.turn_id, &y.call_id))
        });
        Ok(out)
    }

    /// Whether a live process still waits for a (turn, call) pair.
    pub fn is_waiting(&self, turn_id: &str, call_id: &str) -> bool {
        Self::read_request(&self.request_path(turn_id, call_id))
            .is_some_and(|r| r.is_of(turn_id, call_id) && Self::live(&r))
    }

    /// Sends `answer` to the process waiting on a (turn, call) pair, bound to the request as
    /// read now; returns once that process took it (or refused it, saying why).
    pub async fn answer(
        &self,
        turn_id: &str,
        call_id: &str,
        answer: &InboxAnswer,
    ) -> Result<(), InboxError> {
        use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
        let not_waiting = || InboxError::NotWaiting {
            turn_id: turn_id.to_string(),
            call_id: call_id.to_string(),
        };
        let request = Self::read_request(&self.request_path(turn_id, call_id))
            .filter(|r| r.is_of(turn_id, call_id) && Self::live(r))
            .ok_or_else(not_waiting)?;
        let message = AnswerMessage {
            turn_id: turn_id.to_string(),
            call_id: call_id.to_string(),
            request: request_digest(
                &request.request.agent,
                &request.request.turn_id,
                &request.request.call_id,
                &request.request.tool,
                &request.request.arguments,
            ),
            decision: answer.decision,
            message: answer.message.clone(),
        };
        let path = self.socket_path(request.pid);
        let exchange = async {
            let mut stream = tokio::net::UnixStream::connect(&path).await?;
            let mut line = serde_json::to_vec(&message).map_err(io::Error::other)?;
            line.push(b'\n');
            stream.write_all(&line).await?;
            let mut reader = tokio::io::BufReader::new(stream).take(MAX_ANSWER_LINE as u64);
            let mut reply = String::new();
            reader.read_line(&mut reply).await?;
            serde_json::from_str::<AnswerReply>(&reply).map_err(io::Error::other)
        };
        let reply = tokio::time::timeout(std::time::Duration::from_secs(10), exchange)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "no reply within 10 s"))
            .and_then(|r| r)
            .map_err(io_err(&path))?;
        if reply.ok {
            Ok(())
        } else {
            Err(InboxError::Refused {
                reason: reply
                    .reason
                    .unwrap_or_else(|| "the waiting process refused the answer".into()),
            })
        }
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

    /// An inbox in a fresh install with `request("c1")` published: the folder, the inbox and
    /// the record's path.
    fn published() -> (tempfile::TempDir, Inbox, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let inbox = Inbox::for_install(&InstallLayout::new(dir.path()));
        inbox.publish(&request("c1")).unwrap();
        let path = inbox.request_path("t1", "c1");
        (dir, inbox, path)
    }

    #[test]
    fn the_record_keeps_the_request_at_its_top_level() {
        let (_dir, inbox, path) = published();
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        let flat = [
            "agent",
            "arguments",
            "call_id",
            "pid",
            "reason",
            "since",
            "started",
            "tool",
            "turn_id",
        ];
        assert_eq!(keys, flat, "{v}");
        assert_eq!(v["call_id"], "c1");
        assert_eq!(v["pid"], std::process::id());
        let listed = inbox.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].request, request("c1"));
    }

    #[test]
    fn a_request_of_a_process_that_is_gone_is_stale() {
        // Rewrite the record as if another process had parked it and then died.
        let (_dir, inbox, path) = published();
        let mut r: InboxRequest = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        r.started += 1;
        std::fs::write(&path, serde_json::to_vec(&r).unwrap()).unwrap();
        assert!(!inbox.is_waiting("t1", "c1"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let a = InboxAnswer {
            decision: ApprovalDecision::ApproveOnce,
            message: None,
        };
        assert!(rt.block_on(inbox.answer("t1", "c1", &a)).is_err());
        assert!(inbox.list().unwrap().is_empty());
        assert!(!path.exists(), "stale request removed");
    }
}
