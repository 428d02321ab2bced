//! Integration tests of the runtime state against real files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acp;
mod cron;
mod delegation;
mod events;
mod host;
mod lifecycle;
mod receipts;
mod secrets;
mod sessions;
mod turn;
