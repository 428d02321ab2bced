//! What a Warren install keeps under `<install>/data/`, below the engine that runs turns: the
//! sessions database (`sessions.db`: agents, sessions, messages, events, ACP sessions), the
//! per-agent receipt chains and action ledgers, the secret store and the system keyring, the
//! agent locks and paused agents, the approval inbox, the network log, the cron store, the
//! lifecycle journal, and each agent's owned state as the lifecycle service moves it.

pub mod acp_sessions;
pub mod agent_lock;
pub mod approval_inbox;
pub mod cron;
pub mod db;
pub mod keyring;
pub mod ledger;
pub mod lifecycle;
pub mod network_log;
pub mod owned_state;
pub mod pause;
pub mod receipts;
pub mod secrets;
pub mod sessions;
