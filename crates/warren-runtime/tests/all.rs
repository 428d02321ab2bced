//! Integration tests of the runtime state against real files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod approvals;
mod cron;
mod crowd;
mod delegation;
mod delegation_memory;
mod delegation_nested;
mod events;
mod host;
mod lifecycle;
mod mcp;
mod memory_args;
mod route_secrets;
mod turn;
