//! Provider client tests against fake vendor servers on 127.0.0.1, over real HTTP.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[macro_use]
mod common;
mod cancel;
mod errors;
mod fallback;
mod models;
mod routes;
mod single_tool;
mod text;
mod tools;
