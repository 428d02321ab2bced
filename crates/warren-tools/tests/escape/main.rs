//! The adversarial suite: an agent that controls every argument of every tool call, runs calls
//! in parallel, plants symlinks and leaves processes behind, driven through the same gates the
//! agent loop uses (`Registry::invoke`), under `landlock`, `bubblewrap` and `none`. Every case
//! asserts on the filesystem and on every output: nothing outside the grant was read, created,
//! changed or removed. The threat model is `docs/security.md`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../fixture.rs"]
#[allow(dead_code)]
mod fixture;
mod support;

mod differential;
mod files;
mod git;
mod network;
mod sandbox;
mod shell;
