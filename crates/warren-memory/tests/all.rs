//! Integration tests of warren-memory against real stores: SQLite files, the Postgres test
//! server, Markdown files, real child processes for Lucid, and Qdrant when a server is given.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
mod support;

mod admin;
mod backends;
mod categories;
mod failures;
mod indexes;
mod lucid;
mod markdown;
mod migration;
mod planner;
mod purge;
mod qdrant;
mod validation;
