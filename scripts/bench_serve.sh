#!/usr/bin/env bash
# Idle `warren serve` with 20 agents (and 20 yearly cron jobs): resident memory and CPU over a
# window (60 s by default), read from /proc. Targets: RSS under 40 MB, CPU under 0.5 %.
#   scripts/bench_serve.sh                 # builds and measures the release binary
#   scripts/bench_serve.sh target/debug/warren   # measures a given binary
#   DURATION=30 scripts/bench_serve.sh ...
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-}"
DURATION="${DURATION:-60}"
AGENTS="${AGENTS:-20}"
if [ -z "$BIN" ]; then
  cargo build --release --locked -p warren-cli
  BIN=target/release/warren
fi
HOME_DIR=$(mktemp -d -t warren-bench-serve-XXXXXX)
PID=""
cleanup() {
  if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then kill -KILL "$PID" 2>/dev/null || true; fi
  rm -rf "$HOME_DIR"
}
trap cleanup EXIT

{
  echo 'schema_version = 1'
  echo
  echo '[risk_profiles.p]'
  echo 'level = "supervised"'
  echo
  # Never called while idle: the port is closed.
  echo '[providers.models.openai.main]'
  echo 'model = "none"'
  echo 'uri = "http://127.0.0.1:9/v1"'
  for i in $(seq 1 "$AGENTS"); do
    echo
    echo "[agents.agent$i]"
    echo 'risk_profile = "p"'
    echo 'model_provider = "openai.main"'
    echo
    echo "[cron.yearly$i]"
    echo "agent = \"agent$i\""
    echo 'schedule = "0 0 1 1 *"'
    echo 'prompt = "happy new year"'
  done
} > "$HOME_DIR/config.toml"
chmod 600 "$HOME_DIR/config.toml"

env -i PATH="$PATH" HOME="$HOME_DIR/home" "$BIN" --home "$HOME_DIR" serve \
  > "$HOME_DIR/serve.out" 2> "$HOME_DIR/serve.err" &
PID=$!
for _ in $(seq 1 300); do
  grep -q ready "$HOME_DIR/serve.err" 2>/dev/null && break
  kill -0 "$PID" 2>/dev/null || { cat "$HOME_DIR/serve.err"; exit 1; }
  sleep 0.1
done
grep -q ready "$HOME_DIR/serve.err" || { echo "warren serve did not start"; cat "$HOME_DIR/serve.err"; exit 1; }
sleep 2 # let start-up settle; the window measures the idle state

ticks() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$PID/status"; }
HZ=$(getconf CLK_TCK)
T0=$(ticks)
START=$(date +%s.%N)
MAX_RSS=0
SUM_RSS=0
N=0
for _ in $(seq 1 "$DURATION"); do
  sleep 1
  R=$(rss_kb)
  SUM_RSS=$((SUM_RSS + R))
  N=$((N + 1))
  [ "$R" -gt "$MAX_RSS" ] && MAX_RSS=$R
done
T1=$(ticks)
END=$(date +%s.%N)
HWM=$(awk '/^VmHWM:/ {print $2}' "/proc/$PID/status")
THREADS=$(awk '/^Threads:/ {print $2}' "/proc/$PID/status")

kill -TERM "$PID"
STATUS=0
wait "$PID" || STATUS=$?
PID=""

awk -v t0="$T0" -v t1="$T1" -v hz="$HZ" -v s="$START" -v e="$END" -v max="$MAX_RSS" \
    -v sum="$SUM_RSS" -v n="$N" -v hwm="$HWM" -v th="$THREADS" -v agents="$AGENTS" \
    -v bin="$BIN" -v st="$STATUS" 'BEGIN {
  wall = e - s; cpu = (t1 - t0) / hz;
  printf "== idle warren serve: %d agents, %d cron jobs, %s\n", agents, agents, bin
  printf "%-28s %12s %10s\n", "figure", "value", "target"
  printf "%-28s %9.1f MB %10s\n", "RSS max over window", max / 1024, "< 40 MB"
  printf "%-28s %9.1f MB\n", "RSS mean over window", sum / n / 1024
  printf "%-28s %9.1f MB\n", "RSS high-water mark", hwm / 1024
  printf "%-28s %10.3f %% %10s\n", "CPU over window", 100 * cpu / wall, "< 0.5 %"
  printf "%-28s %9.1f s\n", "window", wall
  printf "%-28s %12d\n", "threads", th
  printf "%-28s %12d\n", "exit code after SIGTERM", st
}'
