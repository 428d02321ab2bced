#!/usr/bin/env bash
# Checks a built Warren .deb: its metadata and Depends, its file list (both binaries, the
# .desktop entry, the icons the entry names), and that what it carries runs: the extracted
# `warren` answers --version and validates a config, and the extracted desktop app starts under
# Xvfb with a fresh WARREN_HOME, stays up, and creates the default install there.
# Exits non-zero on the first failed check.
#   scripts/check_package.sh path/to/Warren_0.1.0_amd64.deb
set -euo pipefail
cd "$(dirname "$0")/.."

DEB="${1:?usage: scripts/check_package.sh path/to/package.deb}"
[ -f "$DEB" ] || { echo "check_package: no such file: $DEB" >&2; exit 1; }
for tool in dpkg-deb Xvfb apt-cache; do
  command -v "$tool" >/dev/null || {
    echo "check_package: $tool is missing (scripts/setup.sh --test installs it)" >&2
    exit 1
  }
done

WORK=$(mktemp -d -t warren-check-deb-XXXXXX)
XVFB=""
APP=""
# Every process the app started carries our WARREN_HOME in its environment: stop them by PID.
pids_of_home() {
  local marker="WARREN_HOME=$WORK/home" p
  for p in /proc/[0-9]*; do
    grep -qzxF "$marker" "$p/environ" 2>/dev/null && echo "${p#/proc/}"
  done
  return 0
}
cleanup() {
  if [ -n "$APP" ]; then kill -TERM "$APP" 2>/dev/null || true; sleep 0.5; fi
  for p in $(pids_of_home); do kill -KILL "$p" 2>/dev/null || true; done
  if [ -n "$XVFB" ]; then kill -TERM "$XVFB" 2>/dev/null || true; wait "$XVFB" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

FAILS=0
pass() { echo "ok   $*"; }
fail() { echo "FAIL $*"; FAILS=$((FAILS + 1)); }
check() { # check "what" command...
  local what="$1"; shift
  if "$@" >/dev/null 2>&1; then pass "$what"; else fail "$what"; fi
}

VERSION=$(python3 -c 'import json; print(json.load(open("tauri.conf.json"))["version"])')
echo "== metadata: $DEB"
dpkg-deb -f "$DEB" Package Version Architecture Depends Section
PKG=$(dpkg-deb -f "$DEB" Package)
[ "$(dpkg-deb -f "$DEB" Version)" = "$VERSION" ] && pass "Version is $VERSION (tauri.conf.json)" \
  || fail "Version is not $VERSION"
DEPENDS=$(dpkg-deb -f "$DEB" Depends)
for dep in libwebkit2gtk-4.1-0 libgtk-3-0 libayatana-appindicator3-1; do
  case ", $DEPENDS," in
    *", $dep"[,\ ]*) pass "Depends names $dep" ;;
    *) fail "Depends lacks $dep" ;;
  esac
done
# Every dependency must be a real package of this distribution (not a typo, not a -dev package).
for dep in $(echo "$DEPENDS" | tr ',' '\n' | sed 's/(.*)//; s/|.*//' | tr -d ' '); do
  check "Depends entry $dep is a package apt knows" apt-cache show "$dep"
done

echo "== contents"
# Paths as dpkg-deb lists them, without a leading "./" (some builders write one, some do not).
dpkg-deb -c "$DEB" | awk '{print $NF}' | sed 's|^\./||' > "$WORK/files"
check "carries usr/bin/warren-desktop" grep -qx 'usr/bin/warren-desktop' "$WORK/files"
check "carries usr/bin/warren (the CLI)" grep -qx 'usr/bin/warren' "$WORK/files"
check "carries usr/bin/warren-confine (Landlock inside bubblewrap)" grep -qx 'usr/bin/warren-confine' "$WORK/files"
check "carries a .desktop entry" grep -Eq '^usr/share/applications/[^/]+\.desktop$' "$WORK/files"
ICONS=$(grep -Ec '^usr/share/icons/hicolor/[^/]+/apps/[^/]+\.png$' "$WORK/files" || true)
[ "$ICONS" -ge 3 ] && pass "carries $ICONS hicolor PNG icons" || fail "only $ICONS hicolor icons"
grep -E '^usr/share/icons/.*\.png$' "$WORK/files" | sed 's/^/       /'

echo "== extracted into a throwaway root"
ROOTFS="$WORK/root"
dpkg-deb -x "$DEB" "$ROOTFS"
DESKTOP=$(ls "$ROOTFS"/usr/share/applications/*.desktop 2>/dev/null | head -n 1 || true)
if [ -n "$DESKTOP" ]; then
  sed 's/^/       /' "$DESKTOP"
  EXEC=$(sed -n 's/^Exec=\([^ ]*\).*/\1/p' "$DESKTOP" | head -n 1)
  ICON=$(sed -n 's/^Icon=//p' "$DESKTOP" | head -n 1)
  check ".desktop is an Application entry" grep -qx 'Type=Application' "$DESKTOP"
  [ -x "$ROOTFS/usr/bin/$(basename "$EXEC")" ] && pass ".desktop Exec=$EXEC is in the package" \
    || fail ".desktop Exec=$EXEC is not in usr/bin"
  ls "$ROOTFS"/usr/share/icons/hicolor/*/apps/"$ICON".png >/dev/null 2>&1 \
    && pass ".desktop Icon=$ICON has PNGs in hicolor" || fail ".desktop Icon=$ICON has no PNG"
  if command -v desktop-file-validate >/dev/null; then
    check "desktop-file-validate accepts the entry" desktop-file-validate "$DESKTOP"
  fi
else
  fail "no .desktop file after extraction"
fi
for bin in warren warren-desktop warren-confine; do
  if [ -x "$ROOTFS/usr/bin/$bin" ]; then
    missing=$(ldd "$ROOTFS/usr/bin/$bin" | grep 'not found' || true)
    [ -z "$missing" ] && pass "$bin: every shared library resolves" || fail "$bin: $missing"
  fi
done

CLI="$ROOTFS/usr/bin/warren"
if [ -x "$CLI" ]; then
  out=$("$CLI" --version 2>&1 || true)
  case "$out" in *"$VERSION"*) pass "warren --version: $out" ;; *) fail "warren --version: $out" ;; esac
fi

echo "== the extracted desktop app under Xvfb, WARREN_HOME=$WORK/home"
mkdir -p "$WORK/home" "$WORK/xdg"
Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp > "$WORK/display" 2>/dev/null &
XVFB=$!
for _ in $(seq 1 100); do [ -s "$WORK/display" ] && break; sleep 0.05; done
DISPLAY_NUM=$(head -n 1 "$WORK/display" | tr -d '[:space:]')
[ -n "$DISPLAY_NUM" ] || { fail "Xvfb did not start"; exit 1; }
env -i PATH=/usr/bin:/bin HOME="$WORK/xdg/home" DISPLAY=":$DISPLAY_NUM" \
  WARREN_HOME="$WORK/home" WARREN_LOG=info WEBKIT_DISABLE_COMPOSITING_MODE=1 NO_AT_BRIDGE=1 \
  DBUS_SESSION_BUS_ADDRESS=disabled: XDG_DATA_HOME="$WORK/xdg/data" \
  XDG_CONFIG_HOME="$WORK/xdg/config" XDG_CACHE_HOME="$WORK/xdg/cache" \
  "$ROOTFS/usr/bin/warren-desktop" > "$WORK/app.out" 2> "$WORK/app.err" &
APP=$!
sleep 3
if kill -0 "$APP" 2>/dev/null; then
  pass "warren-desktop is still running after 3 s"
else
  wait "$APP" && rc=0 || rc=$?
  fail "warren-desktop exited within 3 s (exit $rc)"
  sed 's/^/       /' "$WORK/app.err" | tail -n 20
fi
check "the app created the default install ($WORK/home/config.toml)" test -s "$WORK/home/config.toml"
if command -v xwininfo >/dev/null; then
  check "a window titled Warren is on the display" \
    sh -c "xwininfo -display :$DISPLAY_NUM -root -tree | grep -q '\"Warren\"'"
fi
if [ -x "$CLI" ] && [ -s "$WORK/home/config.toml" ]; then
  check "the packaged warren validates the config the app wrote" \
    "$CLI" --home "$WORK/home" config validate
fi

if [ "$FAILS" -gt 0 ]; then
  echo "check_package: $FAILS check(s) failed for $PKG ($DEB)"
  exit 1
fi
echo "check_package: all checks passed for $PKG ($DEB)"
