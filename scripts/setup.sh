#!/usr/bin/env bash
# Installs what Warren needs to build, run and test on Debian, skipping what is already present.
# Usage: scripts/setup.sh [--test]   (--test also installs the whole-app test tools)
set -euo pipefail

want_test=0
[ "${1:-}" = "--test" ] && want_test=1

build_pkgs=(libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libssl-dev pkg-config build-essential curl git libsqlite3-dev)
test_pkgs=(xvfb webkit2gtk-driver bubblewrap git imagemagick dbus-daemon dbus-bin gnome-keyring
  x11-utils python3 openssl)

pkgs=("${build_pkgs[@]}")
[ "$want_test" = 1 ] && pkgs+=("${test_pkgs[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: system packages present" >&2
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install Rust with rustup (https://rustup.rs) first" >&2
  exit 1
fi
if [ "$want_test" = 1 ] && ! command -v python3 >/dev/null 2>&1; then
  echo "setup: installing python3 (the npm license check)" >&2
  $SUDO apt-get install -y -qq python3 >/dev/null
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "setup: installing nodejs and npm" >&2
  $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi

if [ "$want_test" = 1 ] && ! command -v tauri-driver >/dev/null 2>&1; then
  echo "setup: installing tauri-driver" >&2
  cargo install tauri-driver --version '^2' --locked --quiet
fi

# The reference MCP servers the MCP tests run (pinned in tests/mcp/package-lock.json); installed
# again only when the lock file changed since the last install.
if [ "$want_test" = 1 ]; then
  mcp_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/mcp"
  if ! cmp -s "$mcp_dir/package-lock.json" "$mcp_dir/node_modules/.warren-installed-lock"; then
    echo "setup: installing the reference MCP servers (npm ci in tests/mcp)" >&2
    (cd "$mcp_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$mcp_dir/package-lock.json" "$mcp_dir/node_modules/.warren-installed-lock"
  fi
fi

if [ "$want_test" = 1 ] && ! command -v cargo-machete >/dev/null 2>&1; then
  echo "setup: installing cargo-machete" >&2
  cargo install cargo-machete --version '^0.9' --locked --quiet
fi

if [ "$want_test" = 1 ] && ! command -v cargo-deny >/dev/null 2>&1; then
  echo "setup: installing cargo-deny" >&2
  cargo install cargo-deny --version '^0.20' --locked --quiet
fi
