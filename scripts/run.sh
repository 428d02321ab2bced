#!/usr/bin/env bash
# Installs what Warren needs (when missing), builds the UI and starts the desktop app.
# The install root is $WARREN_HOME, else $XDG_DATA_HOME/warren, else ~/.local/share/warren;
# on first start Warren creates a config there with one agent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
(
  cd ui
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
  fi
  npm run --silent build
)
cargo build --locked -p warren-desktop -p warren-cli
# The sandbox helper that enters Landlock inside bubblewrap, found next to warren-desktop.
cargo build --locked -p warren-policy --bin warren-confine
exec ./target/debug/warren-desktop "$@"
