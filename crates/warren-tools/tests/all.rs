//! Integration tests of the tools against real files, symlinks and sandboxed processes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod cwd;
mod files;
mod fixture;
mod gates;
mod git;
mod search;
mod shell;
