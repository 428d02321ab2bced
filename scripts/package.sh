#!/usr/bin/env bash
# Builds Warren's Debian package with the Tauri bundler: the desktop app (`warren-desktop`), its
# `.desktop` entry and icons, and the headless `warren` command in /usr/bin. Prints the path of
# the `.deb` on the last line of stdout.
#   scripts/package.sh
#   CARGO_TARGET_DIR=/some/dir scripts/package.sh     # builds (and bundles) in that target dir
# Then: sudo apt install ./<printed path>; scripts/check_package.sh <printed path> checks it.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

# Build dependencies (WebKitGTK, GTK, appindicator, ...), installed only when missing. The Tauri
# bundler writes the .deb itself (no dpkg-deb or fakeroot needed to build it) and adds the
# runtime Depends (libwebkit2gtk-4.1-0, libgtk-3-0, libayatana-appindicator3-1) on its own.
bash scripts/setup.sh >&2

echo "== packaging: the Tauri CLI (packaging/package-lock.json)" >&2
TAURI="$ROOT/packaging/node_modules/.bin/tauri"
want=$(sed -n 's/.*"@tauri-apps\/cli": "\([^"]*\)".*/\1/p' packaging/package.json)
have=$("$TAURI" --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  (cd packaging && npm ci --no-audit --no-fund --loglevel=error) >&2
fi

echo "== ui: install and build (ui/dist is embedded in the binary)" >&2
(
  cd ui
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    npm ci --no-audit --no-fund --loglevel=error
  fi
  npm run --silent build
) >&2

# The CLI first, on its own (its feature set, no desktop features): the bundler maps it to
# /usr/bin/warren, and the sandbox helper (Landlock inside bubblewrap) to /usr/bin/warren-confine.
# The bundler's own cargo run below builds warren-desktop.
echo "== cargo: release build of warren and warren-confine" >&2
cargo build --release --locked -p warren-cli >&2
cargo build --release --locked -p warren-policy --bin warren-confine >&2

TARGET_DIR=$(cargo metadata --format-version 1 --no-deps --locked |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
CLI="$TARGET_DIR/release/warren"
[ -x "$CLI" ] || { echo "package: $CLI was not built" >&2; exit 1; }
CONFINE="$TARGET_DIR/release/warren-confine"
[ -x "$CONFINE" ] || { echo "package: $CONFINE was not built" >&2; exit 1; }

# The config maps /usr/bin/warren{,-confine} to target/release; point them at the real target dir.
# The UI was built above, so the bundler's beforeBuildCommand is dropped (null removes it).
OVERRIDE=$(python3 -c 'import json, sys; print(json.dumps({
  "build": {"beforeBuildCommand": None},
  "bundle": {"linux": {"deb": {"files": {"/usr/bin/warren": sys.argv[1],
                                          "/usr/bin/warren-confine": sys.argv[2]}}}}}))' "$CLI" "$CONFINE")

echo "== tauri: bundle the .deb" >&2
# The workspace's default member is the CLI: name the desktop package for the bundler's cargo run.
"$TAURI" build --ci --bundles deb --config "$OVERRIDE" -- --locked -p warren-desktop >&2

VERSION=$(python3 -c 'import json; print(json.load(open("tauri.conf.json"))["version"])')
DEB=$(ls -t "$TARGET_DIR"/release/bundle/deb/*_"$VERSION"_*.deb 2>/dev/null | head -n 1 || true)
[ -n "$DEB" ] && [ -f "$DEB" ] || { echo "package: no .deb under $TARGET_DIR/release/bundle/deb" >&2; exit 1; }
echo "package: built $DEB" >&2
echo "$DEB"
