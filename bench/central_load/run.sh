#!/usr/bin/env bash
# P-11: central with 1 000 simulated streamers reporting every second.
# Bar: central uses <= 25 % of one core; routing latency unchanged.
#
# Builds nothing: expects central and simnodes in BUILD_DIR. Everything runs on 127.0.0.1 and
# every process started here is stopped on exit.
#
#   BUILD_DIR  build tree (default /work/main/build)
#   COUNT      simulated streamers (default 1000)
#   DURATION   CPU measurement window in seconds (default 30)
#   REQUESTS   timed requests per latency sample (default 200)
#   ROUTE_PATH request whose latency is measured before and during the load. The real routing
#              endpoint comes later: a streamer lookup stands in for it until then; switch with
#              ROUTE_PATH=/central/api-v4/routes/{stream} (and create that stream in
#              prepare_probe below).
#
# Steps: start central (empty data dir) -> time REQUESTS probes -> start simnodes --count=COUNT
# and wait for its READY -> let the registration burst settle -> sample central's utime+stime
# (/proc/PID/stat) and its report counter over DURATION s -> RSS -> time REQUESTS probes under
# load (after the CPU window, so the probes do not count as load) -> table.
set -euo pipefail

BUILD_DIR=${BUILD_DIR:-/work/main/build}
COUNT=${COUNT:-1000}
DURATION=${DURATION:-30}
REQUESTS=${REQUESTS:-200}
ROUTE_PATH=${ROUTE_PATH:-/central/api-v4/streamers/sim-1}
SETTLE_S=${SETTLE_S:-3}
CPU_BAR=25  # % of one core (P-11)
# "Unchanged" latency, made concrete: p50 during <= 1.5 x p50 before + 0.5 ms.
LAT_FACTOR=1.5
LAT_SLACK_MS=0.5

CENTRAL_BIN="$BUILD_DIR/central/central"
SIMNODES_BIN="$BUILD_DIR/tools/simnodes/simnodes"
for bin in "$CENTRAL_BIN" "$SIMNODES_BIN"; do
  [[ -x "$bin" ]] || { echo "missing $bin (build it first)" >&2; exit 2; }
done
command -v curl >/dev/null || { echo "curl is required" >&2; exit 2; }

WORK=$(mktemp -d)
CENTRAL_PID=""
SIM_PID=""

stop_pid() {  # TERM, up to 5 s grace, then KILL
  local pid=$1
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  stop_pid "$SIM_PID"
  stop_pid "$CENTRAL_PID"
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Waits until FILE has a line starting with READY (or TIMEOUT s pass); prints the line.
wait_ready() {
  local file=$1 timeout=$2 pid=$3 deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    if grep -q '^READY ' "$file" 2>/dev/null; then
      grep -m1 '^READY ' "$file"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || { echo "process $pid exited before READY" >&2; return 1; }
    sleep 0.1
  done
  echo "no READY in $file after ${timeout}s" >&2
  return 1
}

cpu_ticks() {  # utime + stime of PID, in clock ticks (fields 14 and 15; comm may hold spaces)
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}
rss_mib() {
  awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"
}
now_s() { date +%s.%N; }
metric() {  # value of a Prometheus sample on central's /metrics (exact name with labels)
  curl -s --max-time 5 "http://$HTTP/metrics" | awk -v m="$1" '$1 == m { print $2 }'
}

# Makes ROUTE_PATH answer 200 before any node has registered, so both samples time the same
# request: the stand-in probe needs sim-1 to exist (created as simnodes will register it).
prepare_probe() {
  case "$ROUTE_PATH" in
    /central/api-v4/streamers/sim-1)
      curl -sf -o /dev/null --max-time 5 -X PUT -H 'Content-Type: application/json' \
        -d '{"hostname":"sim-1.sim.invalid","role":"edge"}' \
        "http://$HTTP/central/api-v4/streamers/sim-1"
      ;;
  esac
}

# Times REQUESTS requests of ROUTE_PATH, each on a new connection (like a viewer's first
# request); prints "p50 p99" in ms. One curl process, so the probe itself stays cheap.
probe_latency() {
  local url="http://$HTTP$ROUTE_PATH" args=() i
  for ((i = 0; i < REQUESTS; i++)); do args+=(-o /dev/null "$url"); done
  curl -s --max-time 60 -H 'Connection: close' -w '%{http_code} %{time_total}\n' "${args[@]}" \
    >"$WORK/latency.txt"
  local bad
  bad=$(awk '$1 != 200' "$WORK/latency.txt" | wc -l)
  ((bad == 0)) || echo "warning: $bad of $REQUESTS probes did not answer 200" >&2
  awk '{ print $2 * 1000 }' "$WORK/latency.txt" | sort -n | awk '
    { v[NR] = $1 }
    END {
      i50 = int(NR * 0.50 + 0.999999); i99 = int(NR * 0.99 + 0.999999)
      printf "%.2f %.2f\n", v[i50], v[i99]
    }'
}

# --- central -------------------------------------------------------------------------------
"$CENTRAL_BIN" --data-dir="$WORK/data" --http-listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 \
  >"$WORK/central.out" 2>"$WORK/central.err" &
CENTRAL_PID=$!
ready=$(wait_ready "$WORK/central.out" 20 "$CENTRAL_PID")
HTTP=$(sed -n 's/.*"http":"\([^"]*\)".*/\1/p' <<<"$ready")
GRPC=$(sed -n 's/.*"grpc":"\([^"]*\)".*/\1/p' <<<"$ready")
[[ -n "$HTTP" && -n "$GRPC" ]] || { echo "cannot parse central's READY line: $ready" >&2; exit 1; }
echo "central pid $CENTRAL_PID: http $HTTP, grpc $GRPC" >&2

prepare_probe
probe_latency >/dev/null  # warm-up
read -r p50_before p99_before < <(probe_latency)
rss_idle=$(rss_mib "$CENTRAL_PID")

# --- load ----------------------------------------------------------------------------------
# --duration-s is only a safety net; the trap stops simnodes.
"$SIMNODES_BIN" --central="$GRPC" --cluster-token-file="$WORK/data/cluster-token" \
  --count="$COUNT" --prefix=sim \
  --duration-s=$((DURATION + 900)) >"$WORK/sim.out" 2>"$WORK/sim.err" &
SIM_PID=$!
start=$SECONDS
wait_ready "$WORK/sim.out" 300 "$SIM_PID" >/dev/null
register_s=$((SECONDS - start))
echo "simnodes pid $SIM_PID: $COUNT nodes registered in ${register_s}s" >&2
sleep "$SETTLE_S"

online=$(metric 'meshwork_nodes{state="online"}')
reports0=$(metric meshwork_heartbeats_total)
clk_tck=$(getconf CLK_TCK)
c0=$(cpu_ticks "$CENTRAL_PID")
s0=$(cpu_ticks "$SIM_PID")
t0=$(now_s)
sleep "$DURATION"
c1=$(cpu_ticks "$CENTRAL_PID")
s1=$(cpu_ticks "$SIM_PID")
t1=$(now_s)
reports1=$(metric meshwork_heartbeats_total)
online_end=$(metric 'meshwork_nodes{state="online"}')
rss_load=$(rss_mib "$CENTRAL_PID")

read -r p50_during p99_during < <(probe_latency)

# --- table ---------------------------------------------------------------------------------
awk -v count="$COUNT" -v online="${online:-?}" -v online_end="${online_end:-?}" \
  -v c0="$c0" -v c1="$c1" -v s0="$s0" -v s1="$s1" -v t0="$t0" -v t1="$t1" -v hz="$clk_tck" \
  -v r0="${reports0:-0}" -v r1="${reports1:-0}" -v rss_idle="$rss_idle" -v rss_load="$rss_load" \
  -v b50="$p50_before" -v b99="$p99_before" -v d50="$p50_during" -v d99="$p99_during" \
  -v bar="$CPU_BAR" -v fac="$LAT_FACTOR" -v slack="$LAT_SLACK_MS" -v dur="$DURATION" \
  -v reqs="$REQUESTS" -v path="$ROUTE_PATH" -v reg="$register_s" 'BEGIN {
  el = t1 - t0
  cpu = (c1 - c0) / hz / el * 100
  sim = (s1 - s0) / hz / el * 100
  rate = (r1 - r0) / el
  cpu_ok = cpu <= bar
  lat_ok = d50 <= b50 * fac + slack
  printf "P-11 central load: %d simulated streamers, 1 report/s each, %.1f s window\n", count, el
  printf "%-36s %-20s %s\n", "metric", "value", "bar"
  printf "%-36s %-20s\n", "nodes (online at start/end)", count " (" online "/" online_end ")"
  printf "%-36s %-20s\n", "registration time (s)", reg
  printf "%-36s %-20.0f\n", "reports received by central (/s)", rate
  printf "%-36s %-20.1f <= %d %%  %s\n", "central CPU (% of one core)", cpu, bar, cpu_ok ? "PASS" : "FAIL"
  printf "%-36s %-20s\n", "central RSS (MiB, idle -> load)", rss_idle " -> " rss_load
  printf "%-36s %-20s\n", "probe p50/p99 before load (ms)", b50 " / " b99
  printf "%-36s %-20s unchanged (p50 <= %.1fx + %.1f ms)  %s\n", "probe p50/p99 during load (ms)", \
    d50 " / " d99, fac, slack, lat_ok ? "PASS" : "FAIL"
  printf "%-36s %-20.1f (load generator, same host)\n", "simnodes CPU (% of one core)", sim
  printf "probe: %d x GET %s, new connection each (stand-in until the routing endpoint exists)\n", \
    reqs, path
  printf "P-11: %s\n", (cpu_ok && lat_ok) ? "PASS" : "FAIL"
}'
