#!/usr/bin/env bash
# Runs every test of Warren: formatting, unused dependencies, licenses, lints, the UI's type check and unit
# tests, and all Rust tests (unit, integration, the CLI as a black box, the desktop app through
# WebDriver under Xvfb).
# Installs what is missing first. Postgres tests run when WARREN_TEST_POSTGRES_URL is set.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --test

echo "== ui: install, type-check, lint and format check, unit tests, build"
(
  cd ui
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
  fi
  npm run --silent check
  npm run --silent lint
  npm test --silent
  npm run --silent build
)

echo "== rust: fmt"
cargo fmt --all -- --check

echo "== rust: unused dependencies"
cargo machete

echo "== layering: the front-ends reach the runtime only through warren-api"
for pkg in warren-cli warren-desktop; do
  below=$(cargo tree --locked -e normal -p "$pkg" --depth 1 --prefix none \
    | grep -E '^warren-(runtime|state|acp|import|tools|memory|llm|policy|net) ' || true)
  if [ -n "$below" ]; then
    echo "$pkg depends directly on: $below (call warren-api instead)" >&2
    exit 1
  fi
done
# No new circle between the modules of a crate (scripts/module_cycles.allowed lists the known ones).
python3 scripts/check_module_cycles.py
# One crate list: Cargo.toml's members, which docs/architecture.md's map names one by one.
members=$(grep -oE '^\s*"crates/warren-[a-z]+"' Cargo.toml | grep -oE 'warren-[a-z]+' | sort)
mapped=$(grep -oE '^  warren-[a-z]+ ' docs/architecture.md | tr -d ' ' | sort)
if [ "$members" != "$mapped" ]; then
  echo "docs/architecture.md's crate map and Cargo.toml's members differ:" >&2
  diff <(echo "$members") <(echo "$mapped") >&2 || true
  exit 1
fi
if grep -rnE '^\s*pub use warren_(runtime|state)' crates/warren-api/src; then
  echo "warren-api re-exports the runtime or its state (give the front-ends a view type instead)" >&2
  exit 1
fi

echo "== the window's commands: service calls that do file or database work run on a blocking thread"
# A synchronous warren-api call in a Tauri command body holds up the async executor the window's
# other commands and events run on: such calls go through commands::blocking.
if grep -nE '^\s+(let [a-z_]+ = )?core\.warren\.[a-z_]+\(.*\)\??;?$' src-tauri/commands.rs src-tauri/commands/*.rs \
  | grep -v -e '/ipc_tests.rs:' -e 'core\.warren\.clone()'; then
  echo "call these through commands::blocking (or an async warren-api function)" >&2
  exit 1
fi

echo "== licenses and sources of what ships (crates and bundled npm packages)"
# deny.toml holds the license allow list; --workspace: every member is a root, not only the
# desktop package at the workspace's root. Advisories are left out: their database is fetched
# from GitHub, which the machines that run these checks cannot reach (see deny.toml).
cargo deny --workspace --locked check licenses bans sources
python3 scripts/check_licenses.py

echo "== rust: clippy"
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== rust: tests"
cargo test --workspace --locked --no-fail-fast
