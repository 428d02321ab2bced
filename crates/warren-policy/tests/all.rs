//! Integration tests of warren-policy against real files, symlinks and child processes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod authorize_table;
mod confinement;
mod escalation;
mod fixture;
mod gate;
mod kernel;
mod plan;
mod sandbox;
mod shell;
