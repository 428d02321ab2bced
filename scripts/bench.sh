#!/usr/bin/env bash
# Builds Warren in release mode, runs the criterion benchmarks of every crate that has them and
# times whole CLI commands, then prints the headline figures. Not part of CI (machines are noisy:
# compare ratios measured in one run, quote medians).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p warren-cli
echo "== CLI wall times (release)"
python3 scripts/bench_cli.py target/release/warren
for crate in crates/*/; do
  if [ -d "$crate/benches" ]; then
    name=$(basename "$crate")
    echo "== criterion: $name"
    cargo bench --locked -p "$name" -- --noplot 2>&1 | grep -vE '^(\s+Compiling|\s+Finished|\s+Running|Benchmarking .*: (Warming|Collecting|Analyzing))'
  fi
done
