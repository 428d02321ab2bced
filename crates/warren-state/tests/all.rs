//! Integration tests of the stored state against real files: sessions, receipts, secrets.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod receipts;
mod secrets;
mod sessions;
