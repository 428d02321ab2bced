//! Property tests of the parsers that read text an agent or a user wrote: the shell lexer
//! against bash's own word splitting, the config decoder and its editor, every tool's
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

use proptest::test_runner::{Config, RngSeed};

/// The seed every property runs with unless `WARREN_PROPTEST_SEED` names another.
const SEED: u64 = 0x5741_5252_454e;

/// A runner configuration with `cases` cases (or `WARREN_PROPTEST_CASES`) from the fixed seed.
pub fn config(cases: u32) -> Config {
    let seed = std::env::var("WARREN_PROPTEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEED);
    let cases = std::env::var("WARREN_PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases);
    eprintln!("WARREN_PROPTEST_SEED={seed} WARREN_PROPTEST_CASES={cases}");
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}
