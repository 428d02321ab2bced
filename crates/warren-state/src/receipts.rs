//! Tool-call receipts (rules §6.3): one record per executed tool call, authenticated with
//! HMAC-SHA256 and chained to the previous record of the same agent. A per-agent head record,
//! itself authenticated, pins the chain's length so that removing the newest record is detected.

use crate::db::{agent_id, agent_id_sync, row_error, sync_row_error, DbError};
use crate::secrets::{SecretError, SecretRef, SecretStore};
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use sqlx::{Row, SqlitePool};
use warren_types::ReceiptVerification;

type HmacSha256 = Hmac<Sha256>;

/// The secret-store name of the receipt key.
pub const RECEIPT_KEY_NAME: &str = "warren.receipt-key";
const GENESIS: &str = "genesis";

/// Why a receipt operation failed.
#[derive(Debug, thiserror::Error)]
pub enum ReceiptError {
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
    /// The key could not be read or created.
    #[error("receipt key: {0}")]
    Key(#[from] SecretError),
    /// The stored key is not valid hex.
    #[error("receipt key in the secret store is malformed")]
    BadKey,
    /// The anchor file outside the database cannot be read or written.
    #[error("receipt anchor: {0}")]
    Anchor(String),
}

impl From<sqlx::Error> for ReceiptError {
    fn from(e: sqlx::Error) -> Self {
        ReceiptError::Db(DbError::Query(e))
    }
}

/// One stored receipt.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, sqlx::FromRow)]
pub struct Receipt {
    /// Unique id (returned in `tool_result` events).
    pub id: String,
    /// Position in the agent's chain, from 1.
    pub seq: i64,
    /// Tool name.
    pub tool: String,
    /// SHA-256 of the arguments (hex).
    pub args_hash: String,
    /// SHA-256 of the result (hex).
    pub result_hash: String,
    /// RFC 3339 UTC time.
    pub time: String,
    /// The previous receipt's MAC (`genesis` for the first).
    pub prev_mac: String,
    /// HMAC-SHA256 over the fields above and the agent id.
    pub mac: String,
}

/// Stores `r` in `agent_id`'s chain unless it is stored already (a chain imported again);
/// answers the rows written (0 when it was).
pub(crate) async fn insert_or_keep(
    conn: &mut sqlx::SqliteConnection,
    agent_id: &str,
    r: &Receipt,
) -> Result<u64, sqlx::Error> {
    let done = sqlx::query(
        "INSERT OR IGNORE INTO receipts (agent_id, seq, id, tool, args_hash, result_hash, time, prev_mac, mac)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(agent_id)
    .bind(r.seq)
    .bind(&r.id)
    .bind(&r.tool)
    .bind(&r.args_hash)
    .bind(&r.result_hash)
    .bind(&r.time)
    .bind(&r.prev_mac)
    .bind(&r.mac)
    .execute(conn)
    .await?;
    Ok(done.rows_affected())
}

/// Where the install keeps the receipt anchors: `<install>/data/receipt-anchors.json`.
pub fn anchor_path(layout: &warren_config::InstallLayout) -> std::path::PathBuf {
    layout.data_dir().join("receipt-anchors.json")
}

/// Appends one receipt for `agent` to the install's receipt chain for a caller that holds no
/// open sessions database (`warren tool`): opens it and the anchor, appends, closes.
pub async fn append_for_install(
    layout: &warren_config::InstallLayout,
    agent: &str,
    tool: &str,
    args: &serde_json::Value,
    result: &str,
) -> Result<Receipt, ReceiptError> {
    let pool = crate::db::open_sessions_db(&layout.sessions_db()).await?;
    let log = ReceiptLog::new(
        pool.clone(),
        &crate::secrets::FileSecretStore::for_install(layout),
    )?
    .with_anchor(anchor_path(layout));
    let r = log.append(agent, tool, args, result).await;
    let anchored = log.anchor_pending().await;
    pool.close().await;
    let r = r?;
    anchored?;
    Ok(r)
}

/// SHA-256 of bytes, hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// HMAC-SHA256 with `key` over `parts`, each followed by a newline; hex.
fn mac(key: &[u8], parts: &[&str]) -> String {
    // new_from_slice accepts any key length for HMAC.
    let mut m = match HmacSha256::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => return String::new(),
    };
    for p in parts {
        m.update(p.as_bytes());
        m.update(b"\n");
    }
    hex::encode(m.finalize().into_bytes())
}

/// The MAC of receipt `r` in `agent_id`'s chain.
fn receipt_mac(key: &[u8], agent_id: &str, r: &Receipt) -> String {
    let seq = r.seq.to_string();
    mac(
        key,
        &[
            "receipt",
            agent_id,
            &seq,
            &r.id,
            &r.tool,
            &r.args_hash,
            &r.result_hash,
            &r.time,
            &r.prev_mac,
        ],
    )
}

/// The MAC of `agent_id`'s chain head.
fn head_mac(key: &[u8], agent_id: &str, last_seq: i64, last_mac: &str) -> String {
    mac(key, &["head", agent_id, &last_seq.to_string(), last_mac])
}

/// Appends and verifies receipts in the sessions database.
pub struct ReceiptLog {
    pool: SqlitePool,
    /// The blocking connection appends go through (see [`crate::db::SyncDb`]); its write gate
    /// is this process's turn at writing `sessions.db` (see [`crate::db::write_gate`]).
    sync: std::sync::Arc<crate::db::SyncDb>,
    key: std::sync::Arc<[u8]>,
    anchor: Option<std::path::PathBuf>,
    /// Chains appended to since their anchor was last raised: agent id to the newest seq and
    /// MAC ([`ReceiptLog::anchor_pending`] raises them).
    pending: std::sync::Mutex<std::collections::BTreeMap<String, (i64, String)>>,
}

impl ReceiptLog {
    /// Opens the log, creating the receipt key in `secrets` on first use.
    pub fn new(pool: SqlitePool, secrets: &dyn SecretStore) -> Result<Self, ReceiptError> {
        let name = SecretRef::install(RECEIPT_KEY_NAME)?;
        // Made once per install: two logs opened at once (the runtime and the API, or two
        // processes) agree on the one the store keeps.
        let hex_key = secrets.get_or_set(&name, &|| {
            let mut k = [0u8; 32];
            getrandom::fill(&mut k).map_err(|e| SecretError::Backend(e.to_string()))?;
            Ok(hex::encode(k))
        })?;
        let key = hex::decode(hex_key.trim()).map_err(|_| ReceiptError::BadKey)?;
        if key.len() < 16 {
            return Err(ReceiptError::BadKey);
        }
        Ok(ReceiptLog {
            sync: std::sync::Arc::new(crate::db::SyncDb::new(
                pool.connect_options().get_filename(),
            )),
            pool,
            key: key.into(),
            anchor: None,
            pending: std::sync::Mutex::new(std::collections::BTreeMap::new()),
        })
    }

    /// Keeps an anchor of every chain (its length and newest MAC, by agent id) in the file at
    /// `path`, outside the database: `verify` then detects a chain truncated in the database,
    /// head record included. The host passes `<install>/data/receipt-anchors.json`.
    ///
    /// The anchor is raised after a receipt is committed, never ahead of the chain: a chain's
    /// first receipt at once, later ones when [`anchor_pending`](ReceiptLog::anchor_pending)
    /// runs (at the end of each turn), so the anchor may lag the chain by the receipts of a
    /// turn still running or cut short by a crash. A lagging
    /// anchor still names a receipt that must exist, so removing the chain, or its end with
    /// the head, is still reported; a missing head with receipts left is reported by the chain
    /// itself.
    pub fn with_anchor(mut self, path: std::path::PathBuf) -> Self {
        self.anchor = Some(path);
        self
    }

    fn receipt_mac(&self, agent_id: &str, r: &Receipt) -> String {
        receipt_mac(&self.key, agent_id, r)
    }

    fn head_mac(&self, agent_id: &str, last_seq: i64, last_mac: &str) -> String {
        head_mac(&self.key, agent_id, last_seq, last_mac)
    }

    /// Records an executed tool call for `agent` and returns its receipt.
    pub async fn append(
        &self,
        agent: &str,
        tool: &str,
        args: &serde_json::Value,
        result: &str,
    ) -> Result<Receipt, ReceiptError> {
        let (aid, r) = self.append_now(agent, tool, args, result).await?;
        // The anchor is raised after the commit, never ahead of the chain: a new chain at
        // once, a longer one at the end of the turn.
        if self.anchor.is_some() {
            self.pending_lock().insert(aid, (r.seq, r.mac.clone()));
            if r.seq == 1 {
                self.anchor_pending().await?;
            }
        }
        Ok(r)
    }

    /// [`ReceiptLog::append`]'s transaction on the blocking connection, on this task's thread,
    /// with the write gate held: the agent's id (created on first sight), its chain head, the
    /// receipt and the new head, committed together. A statement costs no hand-off to sqlx's
    /// connection thread and back, which for these four small statements was most of the time.
    async fn append_now(
        &self,
        agent: &str,
        tool: &str,
        args: &serde_json::Value,
        result: &str,
    ) -> Result<(String, Receipt), ReceiptError> {
        use rusqlite::OptionalExtension;
        let (agent, tool) = (agent.to_string(), tool.to_string());
        let (args_hash, result_hash) = (
            sha256_hex(args.to_string().as_bytes()),
            sha256_hex(result.as_bytes()),
        );
        let key = self.key.clone();
        let turn = self.sync.gate.clone().lock_owned().await;
        let db = self.sync.clone();
        let out = warren_memory::blocking::run(move || {
            db.with(|conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let aid = agent_id_sync(&tx, &agent)?;
                let head: Option<(i64, String)> = tx
                    .prepare_cached(
                        "SELECT last_seq, last_mac FROM receipt_heads WHERE agent_id = ?1",
                    )?
                    .query_row([&aid], |r| Ok((r.get(0)?, r.get(1)?)))
                    .optional()
                    .map_err(|e| sync_row_error(e, |_| "receipt_heads"))?;
                let (seq, prev_mac) = match head {
                    Some((last, mac)) => (last + 1, mac),
                    None => (1, GENESIS.to_string()),
                };
                let mut r = Receipt {
                    id: uuid::Uuid::new_v4().to_string(),
                    seq,
                    tool,
                    args_hash,
                    result_hash,
                    time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
                    prev_mac,
                    mac: String::new(),
                };
                r.mac = receipt_mac(&key, &aid, &r);
                tx.prepare_cached(
                    "INSERT INTO receipts (agent_id, seq, id, tool, args_hash, result_hash, time, prev_mac, mac)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                )?
                .execute(rusqlite::params![
                    aid,
                    r.seq,
                    r.id,
                    r.tool,
                    r.args_hash,
                    r.result_hash,
                    r.time,
                    r.prev_mac,
                    r.mac
                ])?;
                tx.prepare_cached(
                    "INSERT INTO receipt_heads (agent_id, last_seq, last_mac, head_mac) VALUES (?1, ?2, ?3, ?4)
                     ON CONFLICT(agent_id) DO UPDATE SET last_seq = excluded.last_seq,
                       last_mac = excluded.last_mac, head_mac = excluded.head_mac",
                )?
                .execute(rusqlite::params![
                    aid,
                    r.seq,
                    r.mac,
                    head_mac(&key, &aid, r.seq, &r.mac)
                ])?;
                tx.commit()?;
                Ok((aid, r))
            })
        })
        .await;
        drop(turn);
        Ok(out.unwrap_or(Err(DbError::Query(sqlx::Error::WorkerCrashed)))?)
    }

    fn pending_lock(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<String, (i64, String)>> {
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Raises the anchor of every chain appended to since it was last raised, in one
    /// replacement of the anchor file made under the database's write lock. Called at the end
    /// of each turn (and of each `warren tool` call).
    pub async fn anchor_pending(&self) -> Result<(), ReceiptError> {
        let Some(path) = &self.anchor else {
            return Ok(());
        };
        if self.pending_lock().is_empty() {
            return Ok(());
        }
        let _turn = self.sync.gate.lock().await;
        // A transaction object, not a bare BEGIN: if this future is dropped part-way (the
        // turn's task cancelled), it is rolled back, never returned to the pool still open.
        let tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let pending = std::mem::take(&mut *self.pending_lock());
        // The file is replaced (with its fsyncs) on a blocking thread, not on the async
        // worker that runs this turn and others.
        let (file, chains) = (path.clone(), pending.clone());
        let raised = tokio::task::spawn_blocking(move || {
            anchor::raise_all(
                &file,
                chains
                    .iter()
                    .map(|(aid, (seq, mac))| (aid.as_str(), *seq, mac.as_str())),
            )
        })
        .await
        .unwrap_or_else(|e| Err(format!("raising the anchor stopped: {e}")));
        let committed = tx.commit().await;
        if committed.is_err() || raised.is_err() {
            // Kept for the next try (meanwhile the anchor lags, which is safe).
            let mut p = self.pending_lock();
            for (aid, v) in pending {
                p.entry(aid).or_insert(v);
            }
        }
        committed?;
        raised.map_err(ReceiptError::Anchor)
    }

    /// The agent's receipts in chain order.
    pub async fn list(&self, agent: &str) -> Result<Vec<Receipt>, ReceiptError> {
        let aid = agent_id(&self.pool, agent).await?;
        sqlx::query_as::<_, Receipt>(
            "SELECT id, seq, tool, args_hash, result_hash, time, prev_mac, mac
             FROM receipts WHERE agent_id = ? ORDER BY seq",
        )
        .bind(&aid)
        .fetch_all(&self.pool)
        .await
        .map_err(|e| row_error(e, |_| "receipts").into())
    }

    /// Verifies the agent's whole chain: every MAC, every link, no gap, and the authenticated
    /// head. Each problem names the record.
    pub async fn verify(&self, agent: &str) -> Result<ReceiptVerification, ReceiptError> {
        let aid = agent_id(&self.pool, agent).await?;
        let receipts = self.list(agent).await?;
        let mut problems = Vec::new();
        let mut prev = GENESIS.to_string();
        let mut expected_seq = 1;
        for r in &receipts {
            let name = format!("receipt #{} (id {})", r.seq, r.id);
            if r.seq != expected_seq {
                problems.push(format!(
                    "{name}: expected #{expected_seq} here; records are missing or reordered"
                ));
            }
            if r.mac != self.receipt_mac(&aid, r) {
                problems.push(format!(
                    "{name}: authentication failed; the record was edited"
                ));
            }
            if r.prev_mac != prev {
                problems.push(format!(
                    "{name}: does not link to the record before it; records were removed or reordered"
                ));
            }
            prev = r.mac.clone();
            expected_seq = r.seq + 1;
        }
        let head = sqlx::query(
            "SELECT last_seq, last_mac, head_mac FROM receipt_heads WHERE agent_id = ?",
        )
        .bind(&aid)
        .fetch_optional(&self.pool)
        .await?;
        match head {
            None if !receipts.is_empty() => {
                problems.push("the chain head record is missing".to_string());
            }
            None => {}
            Some(h) => {
                let (last_seq, last_mac, head_mac): (i64, String, String) =
                    (h.get(0), h.get(1), h.get(2));
                if head_mac != self.head_mac(&aid, last_seq, &last_mac) {
                    problems.push("the chain head record was edited".to_string());
                } else if last_mac != prev || last_seq != expected_seq - 1 {
                    problems.push(format!(
                        "the chain should end at receipt #{last_seq}, but the newest stored record is #{}; records after it were removed",
                        expected_seq - 1
                    ));
                }
            }
        }
        if let Some(path) = &self.anchor {
            match anchor::read(path).map_err(ReceiptError::Anchor)?.get(&aid) {
                Some(a) if a.seq > 0 => match receipts.iter().find(|r| r.seq == a.seq) {
                    Some(r) if r.mac == a.mac => {}
                    Some(_) => problems.push(format!(
                        "receipt #{} differs from the one anchored outside the database ({}); the chain was rewritten",
                        a.seq,
                        path.display()
                    )),
                    None => problems.push(format!(
                        "the install's anchor ({}) records {} receipts, but the database holds {}; receipts were removed",
                        path.display(),
                        a.seq,
                        receipts.len()
                    )),
                },
                _ => {}
            }
        }
        Ok(ReceiptVerification {
            agent: agent.to_string(),
            checked: u32::try_from(receipts.len()).unwrap_or(u32::MAX),
            ok: problems.is_empty(),
            problems,
        })
    }
}

/// The anchor file: `{"<agent id>": {"seq": N, "mac": "<hex>"}}`, replaced atomically.
mod anchor {
    use std::collections::BTreeMap;
    use std::path::Path;

    /// One chain's anchor: its length and newest MAC.
    #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
    pub(super) struct Anchor {
        pub(super) seq: i64,
        pub(super) mac: String,
    }

    /// Every anchor in the file (none when it does not exist yet).
    pub(super) fn read(path: &Path) -> Result<BTreeMap<String, Anchor>, String> {
        match std::fs::read(path) {
            Ok(b) => serde_json::from_slice(&b)
                .map_err(|e| format!("{} is malformed: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(e) => Err(format!("reading {}: {e}", path.display())),
        }
    }

    /// Records each `(agent id, seq, mac)` as that chain's anchor unless a longer chain is
    /// anchored, in one replacement of the file (none when nothing changes).
    pub(super) fn raise_all<'a>(
        path: &Path,
        chains: impl IntoIterator<Item = (&'a str, i64, &'a str)>,
    ) -> Result<(), String> {
        let mut all = read(path)?;
        let mut changed = false;
        for (agent_id, seq, mac) in chains {
            if all.get(agent_id).is_some_and(|a| a.seq >= seq) {
                continue;
            }
            all.insert(
                agent_id.to_string(),
                Anchor {
                    seq,
                    mac: mac.to_string(),
                },
            );
            changed = true;
        }
        if !changed {
            return Ok(());
        }
        let bytes = serde_json::to_vec_pretty(&all).map_err(|e| e.to_string())?;
        warren_config::write_atomic(path, &bytes)
            .map_err(|e| format!("writing {}: {e}", path.display()))
    }
}
