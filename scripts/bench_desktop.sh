#!/usr/bin/env bash
# Release figures of the desktop app with a 20-agent install, under Xvfb:
#  - memory: the app started as a user starts it, left idle with its window open for IDLE
#    seconds (10 by default); VmRSS, RssAnon and PSS of the backend process (target: RSS under
#    120 MB), and of WebKit's helper processes (WebKitWebProcess, WebKitNetworkProcess) apart;
#  - idle CPU: the time the backend's threads ran over CPU_WINDOW seconds (20 by default) of that
#    idle window, as a share of one core (target: at most 0.1 %);
#  - cold start: from asking tauri-driver for a WebDriver session (which launches the app) to all
#    20 rows being in the Agents table, RUNS times (5 by default), each in a fresh WARREN_HOME;
#    the median is printed (target: under 1.5 s). The figure includes WebKitWebDriver's session
#    set-up, so it is an upper bound of what a user waits.
#   scripts/bench_desktop.sh                       # builds the release binary, then measures it
#   scripts/bench_desktop.sh path/to/warren-desktop
#   IDLE=30 RUNS=9 scripts/bench_desktop.sh ...
#   WARREN_GPU=1 scripts/bench_desktop.sh ...    # the app drawing with OpenGL (docs/desktop.md)
set -euo pipefail
cd "$(dirname "$0")/.."
APP="${1:-}"
IDLE="${IDLE:-10}"
RUNS="${RUNS:-5}"
AGENTS=20
if [ -z "$APP" ]; then
  cargo build --release --locked -p warren-desktop >&2
  TARGET_DIR=$(cargo metadata --format-version 1 --no-deps --locked |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  APP="$TARGET_DIR/release/warren-desktop"
fi
APP=$(realpath "$APP")
[ -x "$APP" ] || { echo "bench_desktop: $APP is not an executable" >&2; exit 1; }
for tool in Xvfb tauri-driver WebKitWebDriver xwininfo; do
  command -v "$tool" >/dev/null || {
    echo "bench_desktop: $tool is missing (scripts/setup.sh --test installs it)" >&2
    exit 1
  }
done

WORK=$(mktemp -d -t warren-bench-desktop-XXXXXX)
XVFB=""
DRIVER=""
# Every process started for a run (the app, WebKit's helpers, WebKitWebDriver) carries that run's
# WARREN_HOME in its environment.
pids_with() {
  local p
  for p in /proc/[0-9]*; do
    grep -qzxF "$1" "$p/environ" 2>/dev/null && echo "${p#/proc/}"
  done
  return 0
}
stop_run() { # stop_run HOME: the app first, then what is left of the run, by PID
  local p
  for p in $(pids_with "WARREN_HOME=$1"); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "warren-desktop" ] && kill -TERM "$p" 2>/dev/null
  done
  sleep 0.5
  if [ -n "$DRIVER" ]; then kill -TERM "$DRIVER" 2>/dev/null || true; wait "$DRIVER" 2>/dev/null || true; DRIVER=""; fi
  for p in $(pids_with "WARREN_HOME=$1"); do kill -KILL "$p" 2>/dev/null || true; done
  return 0
}
cleanup() {
  local h
  for h in "$WORK"/home-*; do [ -d "$h" ] && stop_run "$h"; done
  if [ -n "$XVFB" ]; then kill -TERM "$XVFB" 2>/dev/null || true; wait "$XVFB" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

# The install: 20 agents on one local provider (never called while idle) and one risk profile,
# as the desktop figure test writes it.
new_home() {
  local home="$WORK/home-$1" i
  mkdir -p "$home" "$WORK/xdg-$1"
  {
    echo 'schema_version = 1'
    echo '[risk_profiles.balanced]'
    echo 'level = "supervised"'
    echo '[providers.models.ollama.local]'
    echo 'model = "llama3.2"'
    echo 'uri = "http://127.0.0.1:9"'
    for i in $(seq -w 1 "$AGENTS"); do
      echo "[agents.agent_$i]"
      echo 'risk_profile = "balanced"'
      echo 'model_provider = "ollama.local"'
    done
  } > "$home/config.toml"
  chmod 600 "$home/config.toml"
  # An install past its first run (the first-run flow skipped), as a user's returning start is.
  mkdir -p "$home/data"
  echo '{"outcome": "skipped"}' > "$home/data/first_run.json"
  echo "$home"
}
set_env() { # set_env NAME HOME: fills ENVV, the environment a run's processes get
  ENVV=(PATH="$PATH" HOME="$WORK/xdg-$1/home" DISPLAY="$DISPLAY_ID" WARREN_HOME="$2" WARREN_LOG=warn
    WEBKIT_DISABLE_COMPOSITING_MODE=1 NO_AT_BRIDGE=1 DBUS_SESSION_BUS_ADDRESS=disabled:
    XDG_DATA_HOME="$WORK/xdg-$1/data" XDG_CONFIG_HOME="$WORK/xdg-$1/config"
    XDG_CACHE_HOME="$WORK/xdg-$1/cache")
  # WARREN_GPU=1 scripts/bench_desktop.sh measures the app drawing with OpenGL.
  [ -z "${WARREN_GPU:-}" ] || ENVV+=(WARREN_GPU="$WARREN_GPU")
}
mb() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }
kib() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/$3" 2>/dev/null || echo 0; }

Xvfb -displayfd 1 -screen 0 1280x800x24 -nolisten tcp > "$WORK/display" 2>/dev/null &
XVFB=$!
for _ in $(seq 1 100); do [ -s "$WORK/display" ] && break; sleep 0.05; done
DISPLAY_ID=":$(head -n 1 "$WORK/display" | tr -d '[:space:]')"
[ "$DISPLAY_ID" != ":" ] || { echo "bench_desktop: Xvfb did not start" >&2; exit 1; }

echo "== desktop app, $AGENTS agents: $APP${WARREN_GPU:+ (WARREN_GPU=$WARREN_GPU)}"
echo "   load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"

# --- memory, idle, window open ---
HOME_M=$(new_home mem)
set_env mem "$HOME_M"
env -i "${ENVV[@]}" "$APP" > "$WORK/mem.out" 2> "$WORK/mem.err" &
BACKEND=$!
disown "$BACKEND" # stopped by PID below; no job notice when it is killed
sleep "$IDLE"
kill -0 "$BACKEND" 2>/dev/null || { echo "bench_desktop: the app exited"; cat "$WORK/mem.err"; exit 1; }
xwininfo -display "$DISPLAY_ID" -root -tree | grep -q '"Warren"' ||
  { echo "bench_desktop: no Warren window on $DISPLAY_ID after ${IDLE} s"; exit 1; }
printf '%-34s %10s %10s %10s %10s\n' "process (idle ${IDLE} s, window open)" "RSS MB" "anon MB" "file MB" "PSS MB"
row() { printf '%-34s %10s %10s %10s %10s\n' "$1" "$(mb "$(kib "$2" VmRSS status)")" \
  "$(mb "$(kib "$2" RssAnon status)")" "$(mb "$(kib "$2" RssFile status)")" \
  "$(mb "$(kib "$2" Pss smaps_rollup)")"; }
B_RSS=$(kib "$BACKEND" VmRSS status)
# Idle CPU of the backend: the time its threads ran over CPU_WINDOW seconds of the idle window
# open, as a share of one core (nanoseconds from /proc/PID/task/*/schedstat, threads that ended
# meanwhile left out).
CPU_WINDOW="${CPU_WINDOW:-20}"
ran_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
T0=$(ran_ns "$BACKEND"); sleep "$CPU_WINDOW"; T1=$(ran_ns "$BACKEND")
B_CPU=$(awk -v t="$((T1 - T0))" -v w="$CPU_WINDOW" 'BEGIN {printf "%.3f", 100 * t / 1e9 / w}')
row "backend (warren-desktop)" "$BACKEND"
W_RSS=0; W_PSS=0; W_N=0
for p in $(pids_with "WARREN_HOME=$HOME_M"); do
  c=$(cat "/proc/$p/comm" 2>/dev/null || true)
  case "$c" in
    WebKitWebProces*|WebKitNetworkPr*)
      r=$(kib "$p" VmRSS status); s=$(kib "$p" Pss smaps_rollup)
      case "$c" in WebKitWeb*) c=WebKitWebProcess ;; *) c=WebKitNetworkProcess ;; esac
      row "  $c" "$p"
      W_RSS=$((W_RSS + r)); W_PSS=$((W_PSS + s)); W_N=$((W_N + 1)) ;;
  esac
done
[ "$W_N" -gt 0 ] || { echo "bench_desktop: no WebKit process belongs to the app"; exit 1; }
printf '%-34s %10s %10s %10s %10s\n' "WebKit processes, sum of $W_N" "$(mb "$W_RSS")" "" "" "$(mb "$W_PSS")"
stop_run "$HOME_M"

# --- cold start to the Agents screen, through tauri-driver ---
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
COLD=()
for run in $(seq 1 "$RUNS"); do
  HOME_C=$(new_home "cold$run")
  PORT=$(free_port); NATIVE=$(free_port)
  set_env "cold$run" "$HOME_C"
  env -i "${ENVV[@]}" tauri-driver --port "$PORT" --native-port "$NATIVE" \
    > /dev/null 2> "$WORK/driver$run.err" &
  DRIVER=$!
  for _ in $(seq 1 300); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 1)" 2>/dev/null && break
    sleep 0.05
  done
  # Starts the clock, opens the session (retrying while WebKitWebDriver behind tauri-driver is
  # not yet listening), polls for the rows, prints "total_ms session_ms".
  if ! out=$(python3 - "$PORT" "$APP" "$AGENTS" <<'EOF'
import json, sys, time, urllib.request, urllib.error
port, app, want = sys.argv[1], sys.argv[2], int(sys.argv[3])
base = f"http://127.0.0.1:{port}"
def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)["value"]
t0 = time.monotonic()
caps = {"capabilities": {"alwaysMatch": {"tauri:options": {"application": app}}}}
while True:
    try:
        sid = call("POST", "/session", caps)["sessionId"]
        break
    except (urllib.error.URLError, ConnectionError, KeyError):
        if time.monotonic() - t0 > 20:
            sys.exit("no WebDriver session within 20 s")
        time.sleep(0.1)
t_session = time.monotonic()
rows = 0
while time.monotonic() - t0 < 30:
    try:
        rows = len(call("POST", f"/session/{sid}/elements",
                        {"using": "css selector", "value": "[data-testid=agent-row]"}))
    except (urllib.error.URLError, ConnectionError):
        rows = 0  # WebKit answers errors while the page first loads
    if rows == want:
        break
    time.sleep(0.02)
t_rows = time.monotonic()
try:
    call("DELETE", f"/session/{sid}")
except Exception:
    pass
if rows != want:
    sys.exit(f"the Agents table showed {rows} of {want} rows after 30 s")
print(round((t_rows - t0) * 1000), round((t_session - t0) * 1000))
EOF
  ); then
    echo "bench_desktop: run $run failed: $out"; cat "$WORK/driver$run.err"; exit 1
  fi
  set -- $out
  COLD+=("$1")
  echo "   cold start run $run: Agents screen with $AGENTS rows after $1 ms (WebDriver session ready after $2 ms)"
  stop_run "$HOME_C"
done
MEDIAN=$(printf '%s\n' "${COLD[@]}" | sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}')
MIN=$(printf '%s\n' "${COLD[@]}" | sort -n | head -n 1)
MAX=$(printf '%s\n' "${COLD[@]}" | sort -n | tail -n 1)

echo "   load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-50s %16s %10s\n' "figure" "measured" "target"
printf '%-50s %13s MB %10s\n' "backend RSS, idle, window open, $AGENTS agents" "$(mb "$B_RSS")" "< 120 MB"
printf '%-50s %14s %% %10s\n' "backend CPU, idle ${CPU_WINDOW} s, share of one core" "$B_CPU" "<= 0.1 %"
printf '%-50s %13s MB %10s\n' "WebKit processes RSS, sum of $W_N (PSS $(mb "$W_PSS") MB)" "$(mb "$W_RSS")" "report"
printf '%-50s %13s ms %10s\n' "cold start to Agents screen, median of $RUNS" "$MEDIAN" "< 1500 ms"
printf '%-50s %16s\n' "cold start, min - max" "$MIN - $MAX ms"
