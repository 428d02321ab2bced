//! Warren's agent host. This crate holds the runtime state kept under `<install>/data/`: the
//! secret store, the sessions database and the per-agent receipt chains.

pub mod db;
pub mod receipts;
pub mod secrets;
pub mod sessions;
