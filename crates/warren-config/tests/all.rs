//! Integration tests of the config layer against real files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod edit;
mod refs;
mod validation;
