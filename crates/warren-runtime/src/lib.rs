//! Warren's agent host. This crate holds the runtime state kept under `<install>/data/`: the
//! secret store, the sessions database and the per-agent receipt chains.

pub mod acp;
pub mod agent_lock;
pub mod approval;
pub mod approval_inbox;
pub mod bounded;
pub mod cron;
pub mod db;
pub mod delegate;
pub mod delegate_memory;
pub mod events;
pub mod host;
pub mod keyring;
pub mod ledger;
pub mod lifecycle;
pub mod mcp;
pub mod memory_tools;
pub mod network_log;
pub mod owned_state;
pub mod pause;
pub mod provider_models;
pub mod provider_probe;
pub mod receipts;
pub mod secrets;
pub mod sessions;
pub mod turn;
pub mod turn_kit;
