//! Who answers approval requests during a turn: a fixed answer for non-interactive runs, or a
//! broker that parks each request until a front-end (UI, terminal, ACP client) answers it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::oneshot;
use warren_state::approval_inbox::{
    request_digest, AnswerMessage, AnswerReply, Inbox, MAX_ANSWER_LINE,
};
pub use warren_types::approval::{
    ApprovalAnswer, ApprovalWait, AsyncApprover, FixedApprover, PendingApproval,
};

/// A request's key: its turn and its call id (call ids are only unique within a turn).
type Key = (String, String);

type Parked = HashMap<Key, (PendingApproval, oneshot::Sender<ApprovalAnswer>)>;

/// Parks requests until [`ApprovalBroker::answer`] is called for their turn and call id, or,
/// with an inbox, until another process of the install answers through it.
#[derive(Clone, Default)]
pub struct ApprovalBroker {
    pending: Arc<Mutex<Parked>>,
    inbox: Option<Arc<Inbox>>,
    /// Set once this process's answer socket is listening; removes it when the last clone of
    /// the broker goes.
    listening: Arc<OnceLock<SocketFile>>,
}

/// The answer socket's file, removed when dropped.
struct SocketFile(std::path::PathBuf);

impl Drop for SocketFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Takes a parked request out when its wait ends, answered or dropped (a cancelled turn).
struct Unpark {
    pending: Arc<Mutex<Parked>>,
    inbox: Option<Arc<Inbox>>,
    key: Key,
}

impl Drop for Unpark {
    fn drop(&mut self) {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.key);
        if let Some(inbox) = &self.inbox {
            inbox.withdraw(&self.key.0, &self.key.1);
        }
    }
}

impl ApprovalBroker {
    /// A broker with nothing pending, answered in this process only.
    pub fn new() -> Self {
        Self::default()
    }

    /// A broker that also publishes every parked request to the install's approvals inbox
    /// and takes answers other processes leave there.
    pub fn with_inbox(inbox: Inbox) -> Self {
        ApprovalBroker {
            pending: Arc::default(),
            inbox: Some(Arc::new(inbox)),
            listening: Arc::default(),
        }
    }

    /// The requests waiting now.
    pub fn pending(&self) -> Vec<PendingApproval> {
        let map = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut v: Vec<_> = map.values().map(|(p, _)| p.clone()).collect();
        v.sort_by(|a, b| (&a.turn_id, &a.call_id).cmp(&(&b.turn_id, &b.call_id)));
        v
    }

    /// Answers the request of call `call_id` in turn `turn_id`; false when nothing waits
    /// under that pair.
    pub fn answer(&self, turn_id: &str, call_id: &str, answer: ApprovalAnswer) -> bool {
        let entry = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&(turn_id.to_string(), call_id.to_string()));
        match entry {
            Some((_, tx)) => tx.send(answer).is_ok(),
            None => false,
        }
    }
}

impl ApprovalBroker {
    /// Starts this process's answer socket once (inside a tokio runtime): other processes of
    /// the install answer its parked requests there.
    fn listen(&self, inbox: &Inbox) {
        if self.listening.get().is_some() {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let listener = match inbox.listen() {
            Ok(l) => l,
            Err(e) => {
                tracing::warn!(error = %e, "approvals from other processes cannot reach this one");
                return;
            }
        };
        let path = inbox.socket_path(std::process::id());
        if self.listening.set(SocketFile(path)).is_err() {
            return;
        }
        let pending = self.pending.clone();
        handle.spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    continue;
                };
                tokio::spawn(answer_connection(stream, pending.clone()));
            }
        });
    }
}

/// One answering connection: who is asking comes from the kernel, not from the message.
async fn answer_connection(stream: tokio::net::UnixStream, pending: Arc<Mutex<Parked>>) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    let peer = stream.peer_cred().ok().and_then(|c| c.pid());
    let (read, mut write) = stream.into_split();
    let mut reader = tokio::io::BufReader::new(read).take(MAX_ANSWER_LINE as u64);
    let mut line = String::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        reader.read_line(&mut line),
    )
    .await;
    let outcome = match (read, serde_json::from_str::<AnswerMessage>(&line)) {
        (Ok(Ok(_)), Ok(m)) => decide(peer, m, &pending),
        _ => Err("not an answer message".to_string()),
    };
    let reply = AnswerReply {
        ok: outcome.is_ok(),
        reason: outcome.err(),
    };
    if let Ok(mut bytes) = serde_json::to_vec(&reply) {
        bytes.push(b'\n');
        let _ = write.write_all(&bytes).await;
    }
}

/// Takes an answer from process `peer` for the request it names, or says why not.
fn decide(peer: Option<i32>, m: AnswerMessage, pending: &Mutex<Parked>) -> Result<(), String> {
    let pid = peer
        .and_then(|p| u32::try_from(p).ok())
        .ok_or("the answering process could not be identified")?;
    if warren_policy::sandbox::inside_a_tool_call(pid) {
        tracing::warn!(pid, turn = %m.turn_id, "an approval answer from inside a tool call was refused");
        return Err("an approval cannot be answered from inside an agent's tool call; answer it in the window or with `warren approvals` in your own terminal".into());
    }
    let key = (m.turn_id.clone(), m.call_id.clone());
    let mut map = pending
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let Some((request, _)) = map.get(&key) else {
        return Err(format!(
            "no approval request waits for call `{}` of turn `{}`",
            m.call_id, m.turn_id
        ));
    };
    let digest = request_digest(
        &request.agent,
        &request.turn_id,
        &request.call_id,
        &request.tool,
        &request.arguments,
    );
    if digest != m.request {
        return Err("the answer is for another request than the one waiting under this call; list the approvals again".into());
    }
    let Some((_, tx)) = map.remove(&key) else {
        return Err("the request was answered meanwhile".into());
    };
    tx.send(ApprovalAnswer {
        decision: m.decision,
        message: m.message.filter(|t| !t.trim().is_empty()),
        no_one_to_ask: false,
    })
    .map_err(|_| "the turn stopped waiting".to_string())
}

impl AsyncApprover for ApprovalBroker {
    fn ask(&self, request: PendingApproval) -> ApprovalWait<'_> {
        self.register(request)
    }

    fn register(&self, request: PendingApproval) -> ApprovalWait<'_> {
        let (tx, rx) = oneshot::channel();
        let key = (request.turn_id.clone(), request.call_id.clone());
        if let Some(inbox) = &self.inbox {
            // Without the inbox the request is still answerable here; another process just
            // cannot see it.
            self.listen(inbox);
            if let Err(e) = inbox.publish(&request) {
                tracing::warn!(error = %e, "approval request not published to the inbox");
            }
        }
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key.clone(), (request, tx));
        let unpark = Unpark {
            pending: self.pending.clone(),
            inbox: self.inbox.clone(),
            key,
        };
        Box::pin(async move {
            let answer = rx.await.unwrap_or_else(|_| ApprovalAnswer::no_one());
            drop(unpark);
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use warren_config::InstallLayout;
    use warren_state::approval_inbox::{Inbox, InboxAnswer, InboxError, InboxRequest};
    use warren_types::{ApprovalDecision, AsyncApprover, PendingApproval};

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

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_parked_request_is_listed_answered_over_the_socket_and_withdrawn() {
        let dir = tempfile::tempdir().unwrap();
        let layout = InstallLayout::new(dir.path());
        let inbox = Inbox::for_install(&layout);
        assert!(inbox.list().unwrap().is_empty());
        let broker = ApprovalBroker::with_inbox(Inbox::for_install(&layout));
        let wait = broker.ask(request("../../etc/passwd"));
        let listed = inbox.list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].request.call_id, "../../etc/passwd");
        assert_eq!(listed[0].pid, std::process::id());
        // The file names never carry the model's call id.
        for e in std::fs::read_dir(inbox.dir()).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            assert!(!name.contains(".."), "{name}");
        }
        let a = InboxAnswer {
            decision: ApprovalDecision::Deny,
            message: Some("not now".into()),
        };
        assert!(matches!(
            inbox.answer("t1", "other", &a).await,
            Err(InboxError::NotWaiting { .. })
        ));
        // This test process is outside every tool call: its answer is taken.
        inbox.answer("t1", "../../etc/passwd", &a).await.unwrap();
        let got = wait.await;
        assert_eq!(got.decision, ApprovalDecision::Deny);
        assert_eq!(got.message.as_deref(), Some("not now"));
        assert!(inbox.list().unwrap().is_empty(), "withdrawn once answered");
        assert!(matches!(
            inbox.answer("t1", "../../etc/passwd", &a).await,
            Err(InboxError::NotWaiting { .. })
        ));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_answer_for_other_arguments_is_refused_and_the_request_still_waits() {
        let dir = tempfile::tempdir().unwrap();
        let layout = InstallLayout::new(dir.path());
        let inbox = Inbox::for_install(&layout);
        let broker = ApprovalBroker::with_inbox(Inbox::for_install(&layout));
        let _wait = broker.ask(request("c1"));
        // The record the answerer reads shows other arguments than the call that waits.
        let path = inbox.request_path("t1", "c1");
        let mut r: InboxRequest = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        r.request.arguments = "{\"command\":\"touch harmless.txt\"}".into();
        std::fs::write(&path, serde_json::to_vec(&r).unwrap()).unwrap();
        let a = InboxAnswer {
            decision: ApprovalDecision::ApproveOnce,
            message: None,
        };
        let e = inbox.answer("t1", "c1", &a).await.unwrap_err();
        assert!(
            matches!(&e, InboxError::Refused { reason } if reason.contains("another request")),
            "{e}"
        );
        assert_eq!(broker.pending().len(), 1, "still waiting");
    }
}
