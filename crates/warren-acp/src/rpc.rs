//! JSON-RPC 2.0 over newline-delimited JSON (the ACP stdio transport): one writer task that
//! owns the output stream, requests to the client with their pending answers, and the
//! classification of incoming lines.

use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// JSON-RPC error codes used here.
pub mod codes {
    /// The line is not JSON.
    pub const PARSE_ERROR: i64 = -32700;
    /// Not a valid request object.
    pub const INVALID_REQUEST: i64 = -32600;
    /// Unknown method.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// Bad parameters.
    pub const INVALID_PARAMS: i64 = -32602;
    /// The agent failed.
    pub const INTERNAL_ERROR: i64 = -32603;
}

/// One incoming message.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// A request (has an id) or a notification (no id).
    Call {
        /// The id (None for notifications).
        id: Option<Value>,
        /// The method.
        method: String,
        /// The params (`null` when absent).
        params: Value,
    },
    /// An answer to one of our requests.
    Response {
        /// Our request id.
        id: i64,
        /// The result, or the error object.
        result: Result<Value, Value>,
    },
    /// A line that is not a JSON-RPC message; answer with this error (id `null` when unknown).
    Invalid {
        /// The id, when one could be read.
        id: Value,
        /// JSON-RPC code.
        code: i64,
        /// What is wrong.
        message: String,
    },
}

/// Classifies one line.
pub fn parse_line(line: &str) -> Incoming {
    let v: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Invalid {
                id: Value::Null,
                code: codes::PARSE_ERROR,
                message: format!("the line is not JSON: {e}"),
            }
        }
    };
    let id = v.get("id").cloned();
    if v.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Incoming::Invalid {
            id: id.unwrap_or(Value::Null),
            code: codes::INVALID_REQUEST,
            message: "`jsonrpc` must be \"2.0\"".into(),
        };
    }
    match v.get("method") {
        Some(Value::String(m)) => Incoming::Call {
            id,
            method: m.clone(),
            params: v.get("params").cloned().unwrap_or(Value::Null),
        },
        Some(_) => Incoming::Invalid {
            id: id.unwrap_or(Value::Null),
            code: codes::INVALID_REQUEST,
            message: "`method` must be a string".into(),
        },
        None => match id.as_ref().and_then(Value::as_i64) {
            Some(n) => Incoming::Response {
                id: n,
                result: match (v.get("result"), v.get("error")) {
                    (_, Some(e)) => Err(e.clone()),
                    (Some(r), None) => Ok(r.clone()),
                    (None, None) => Err(json!({"code": codes::INVALID_REQUEST,
                        "message": "a response needs `result` or `error`"})),
                },
            },
            None => Incoming::Invalid {
                id: id.unwrap_or(Value::Null),
                code: codes::INVALID_REQUEST,
                message: "a message needs a `method`, or an integer `id` with a `result`".into(),
            },
        },
    }
}

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Result<Value, Value>>>>>;

/// Where the answer to one request sent to the client arrives.
pub type Answer = oneshot::Receiver<Result<Value, Value>>;

/// The sending half of a connection: cheap to clone, usable from any task.
#[derive(Clone)]
pub struct Peer {
    out: mpsc::UnboundedSender<Value>,
    next_id: Arc<AtomicI64>,
    pending: Pending,
}

impl Peer {
    /// A peer writing to `writer` from a background task (ends when every clone is dropped).
    pub fn spawn<W: AsyncWrite + Unpin + Send + 'static>(
        mut writer: W,
    ) -> (Self, tokio::task::JoinHandle<()>) {
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        let task = tokio::spawn(async move {
            while let Some(msg) = rx.recv().await {
                let mut line = msg.to_string();
                line.push('\n');
                if writer.write_all(line.as_bytes()).await.is_err() || writer.flush().await.is_err()
                {
                    break;
                }
            }
        });
        (
            Peer {
                out: tx,
                next_id: Arc::new(AtomicI64::new(1)),
                pending: Arc::new(Mutex::new(HashMap::new())),
            },
            task,
        )
    }

    fn send(&self, v: Value) {
        // A closed output means the client is gone; the reader sees EOF and shuts down.
        let _ = self.out.send(v);
    }

    /// Answers a request.
    pub fn respond(&self, id: Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    /// Answers a request with an error.
    pub fn respond_error(&self, id: Value, code: i64, message: &str) {
        let message = warren_types::redact::redact(message);
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}));
    }

    /// Answers a request with an error carrying `data` (a stable `code` and details).
    pub fn respond_error_data(&self, id: Value, code: i64, message: &str, data: Value) {
        let message = warren_types::redact::redact(message);
        self.send(json!({"jsonrpc": "2.0", "id": id,
            "error": {"code": code, "message": message, "data": data}}));
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its answer (Err: the error object, or the connection
    /// closed).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, Value> {
        Self::answer(self.start_request(method, params)).await
    }

    /// Queues a request on the output now (after everything queued before it) and returns
    /// where its answer arrives; await it with [`Peer::answer`].
    pub fn start_request(&self, method: &str, params: Value) -> Answer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(id, tx);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        rx
    }

    /// The answer of a request started with [`Peer::start_request`] (Err: the error object,
    /// or the connection closed).
    pub async fn answer(rx: Answer) -> Result<Value, Value> {
        rx.await.unwrap_or_else(|_| {
            Err(json!({"code": codes::INTERNAL_ERROR, "message": "connection closed"}))
        })
    }

    /// Delivers an answer to a pending request; false when none waits under `id`.
    pub fn deliver(&self, id: i64, result: Result<Value, Value>) -> bool {
        let waiter = self
            .pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&id);
        match waiter {
            Some(tx) => tx.send(result).is_ok(),
            None => false,
        }
    }

    /// Fails every pending request (the connection closed).
    pub fn close_pending(&self) {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_classified() {
        assert!(matches!(
            parse_line(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            Incoming::Call { method, .. } if method == "initialize"
        ));
        assert!(matches!(
            parse_line(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}"#),
            Incoming::Call { id: None, .. }
        ));
        assert_eq!(
            parse_line(r#"{"jsonrpc":"2.0","id":7,"result":{"ok":true}}"#),
            Incoming::Response {
                id: 7,
                result: Ok(json!({"ok": true}))
            }
        );
        assert!(matches!(
            parse_line("{nope"),
            Incoming::Invalid {
                code: codes::PARSE_ERROR,
                ..
            }
        ));
        assert!(matches!(
            parse_line(r#"{"id":1,"method":"x"}"#),
            Incoming::Invalid {
                code: codes::INVALID_REQUEST,
                ..
            }
        ));
    }
}
