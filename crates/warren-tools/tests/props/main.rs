//! Property tests of the parsers that read text an agent or a user wrote: the shell lexer
//! against /bin/sh and bash, the config decoder and its editor, every tool's
//! arguments. Each property runs a fixed number of cases from a fixed seed, so a run is
//! reproducible and bounded; `WARREN_PROPTEST_CASES` and `WARREN_PROPTEST_SEED` widen a local
//! run. A case that once failed is kept as a named regression test next to its property.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "../fixture.rs"]
#[allow(dead_code)]
mod fixture;

mod args;
mod config;
mod lexer;

pub use warren_testkit::props::config;
