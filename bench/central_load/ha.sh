#!/usr/bin/env bash
# P-11 with C-10: three centrals sharing one etcd (three members) and 1 000 simulated
# streamers, a third attached to each central, every one reporting each second. Each central
# also learns the other two thirds through etcd's watch (the shared, leased reports), so it
# routes on all 1 000. Bar, as for one central: <= 25 % of one core per central; routing
# latency unchanged. The reference is the single-central run (bench/central_load/run.sh),
# which this script runs first with the same COUNT and DURATION for the side-by-side ratio.
#
#   BUILD_DIR  build tree (default /work/main/build)
#   COUNT      simulated streamers in all (default 1000)
#   DURATION   CPU measurement window in seconds (default 30)
#   REQUESTS   timed routing probes per sample (default 200)
#
# Everything runs on 127.0.0.1; every process started here is stopped on exit.
set -euo pipefail

BUILD_DIR=${BUILD_DIR:-/work/main/build}
COUNT=${COUNT:-1000}
DURATION=${DURATION:-30}
REQUESTS=${REQUESTS:-200}
SETTLE_S=${SETTLE_S:-5}
CENTRAL_BIN="$BUILD_DIR/central/central"
SIMNODES_BIN="$BUILD_DIR/tools/simnodes/simnodes"
here="$(cd "$(dirname "$0")" && pwd)"
for bin in "$CENTRAL_BIN" "$SIMNODES_BIN" /usr/bin/etcd; do
  [[ -x "$bin" ]] || { echo "missing $bin" >&2; exit 2; }
done

echo "== reference: one central with RocksDB"
BUILD_DIR="$BUILD_DIR" COUNT="$COUNT" DURATION="$DURATION" REQUESTS="$REQUESTS" \
  bash "$here/run.sh" | tee "${TMPDIR:-/tmp}/p11-single.txt"
single_cpu=$(awk -F'  +' '/^central CPU/ { print $2 }' "${TMPDIR:-/tmp}/p11-single.txt" | awk '{print $1}')

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  sleep 1
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
wait_ready() {  # FILE TIMEOUT PID
  local deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    grep -m1 '^READY ' "$1" 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { echo "process $3 exited before READY" >&2; return 1; }
    sleep 0.1
  done
  echo "no READY in $1" >&2
  return 1
}

echo "== three centrals on a three-member etcd"
initial="" endpoints=""
declare -a CP PP
for i in 0 1 2; do
  CP[$i]=$(free_port); PP[$i]=$(free_port)
  initial+="${initial:+,}m$i=http://127.0.0.1:${PP[$i]}"
  endpoints+="${endpoints:+,}127.0.0.1:${CP[$i]}"
done
ETCD_PIDS=()
for i in 0 1 2; do
  /usr/bin/etcd --name "m$i" --data-dir "$WORK/etcd$i" \
    --listen-client-urls "http://127.0.0.1:${CP[$i]}" --advertise-client-urls "http://127.0.0.1:${CP[$i]}" \
    --listen-peer-urls "http://127.0.0.1:${PP[$i]}" --initial-advertise-peer-urls "http://127.0.0.1:${PP[$i]}" \
    --initial-cluster "$initial" --initial-cluster-state new --initial-cluster-token "p11-$$" \
    >"$WORK/etcd$i.log" 2>&1 &
  PIDS+=($!); ETCD_PIDS+=($!)
done
for i in 0 1 2; do
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:${CP[$i]}/health" >/dev/null && break; sleep 0.2; done
done
head -c 32 /dev/urandom | base64 | tr -d '=+/' >"$WORK/cluster-token"
chmod 600 "$WORK/cluster-token"
declare -a HTTP GRPC CENTRAL_PIDS
for i in 0 1 2; do
  "$CENTRAL_BIN" --etcd-endpoints="$endpoints" --cluster-token-file="$WORK/cluster-token" \
    --instance-id="c$i" --http-listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 \
    >"$WORK/c$i.out" 2>"$WORK/c$i.err" &
  pid=$!; PIDS+=($pid); CENTRAL_PIDS[$i]=$pid
  ready=$(wait_ready "$WORK/c$i.out" 20 "$pid")
  HTTP[$i]=$(sed -n 's/.*"http":"\([^"]*\)".*/\1/p' <<<"$ready")
  GRPC[$i]=$(sed -n 's/.*"grpc":"\([^"]*\)".*/\1/p' <<<"$ready")
done
# The probe: a routing redirect for a stream that one simulated node serves.
curl -sf -o /dev/null -X PUT -d '{"routes":["127.0.0.0/8"]}' "http://${HTTP[0]}/central/api-v4/zones/local"
probe() {  # HTTP -> "p50 p99" of REQUESTS redirects, a new connection each
  local url="http://$1/central/api-v4/streamers/sim0-1" args=() i
  for ((i = 0; i < REQUESTS; i++)); do args+=(-o /dev/null "$url"); done
  curl -s --max-time 60 -H 'Connection: close' -w '%{http_code} %{time_total}\n' "${args[@]}" |
    awk '{ print $2 * 1000 }' | sort -n | awk '{ v[NR] = $1 } END {
      printf "%.2f %.2f\n", v[int(NR * 0.5 + 0.999999)], v[int(NR * 0.99 + 0.999999)] }'
}
curl -sf -o /dev/null -X PUT -d '{"hostname":"sim0-1.sim.invalid","role":"edge"}' \
  "http://${HTTP[0]}/central/api-v4/streamers/sim0-1"
sleep 1
probe "${HTTP[1]}" >/dev/null
read -r b50 b99 < <(probe "${HTTP[1]}")

per=$((COUNT / 3))
for i in 0 1 2; do
  n=$((per + (i < COUNT % 3 ? 1 : 0)))  # the remainder goes to the first centrals
  "$SIMNODES_BIN" --central="${GRPC[$i]}" --cluster-token-file="$WORK/cluster-token" \
    --count="$n" --prefix="sim$i" --duration-s=$((DURATION + 900)) \
    >"$WORK/sim$i.out" 2>"$WORK/sim$i.err" &
  PIDS+=($!)
  wait_ready "$WORK/sim$i.out" 300 $! >/dev/null
done
sleep "$SETTLE_S"
online() { curl -s "http://$1/metrics" | awk '$1 == "meshwork_nodes{state=\"online\"}" { print $2 }'; }
declare -a C0 C1
E0=0; E1=0
for i in 0 1 2; do C0[$i]=$(cpu_ticks "${CENTRAL_PIDS[$i]}"); E0=$((E0 + $(cpu_ticks "${ETCD_PIDS[$i]}"))); done
t0=$(date +%s.%N)
sleep "$DURATION"
for i in 0 1 2; do C1[$i]=$(cpu_ticks "${CENTRAL_PIDS[$i]}"); E1=$((E1 + $(cpu_ticks "${ETCD_PIDS[$i]}"))); done
t1=$(date +%s.%N)
read -r d50 d99 < <(probe "${HTTP[1]}")
hz=$(getconf CLK_TCK)
echo
printf "P-11 with C-10: %d simulated streamers (%d-%d per central), 3 centrals, 3 etcd members\n" \
  "$COUNT" "$per" "$((per + (COUNT % 3 > 0 ? 1 : 0)))"
worst=0
for i in 0 1 2; do
  cpu=$(awk -v a="${C0[$i]}" -v b="${C1[$i]}" -v t0="$t0" -v t1="$t1" -v hz="$hz" 'BEGIN { printf "%.1f", (b - a) / hz / (t1 - t0) * 100 }')
  printf "central c%d CPU (%% of one core)     %-8s  nodes online as it sees them: %s\n" "$i" "$cpu" "$(online "${HTTP[$i]}")"
  worst=$(awk -v a="$worst" -v b="$cpu" 'BEGIN { print (b > a) ? b : a }')
done
awk -v a="$E0" -v b="$E1" -v t0="$t0" -v t1="$t1" -v hz="$hz" 'BEGIN { printf "etcd, 3 members together (%% of one core) %.1f\n", (b - a) / hz / (t1 - t0) * 100 }'
printf "probe p50/p99 on c1 before / during (ms)  %s / %s  ->  %s / %s\n" "$b50" "$b99" "$d50" "$d99"
printf "busiest central vs the single central: %s %% vs %s %% (ratio %s)\n" "$worst" "$single_cpu" \
  "$(awk -v a="$worst" -v b="$single_cpu" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')"
awk -v w="$worst" -v b50="$b50" -v d50="$d50" 'BEGIN {
  ok = (w <= 25) && (d50 <= b50 * 1.5 + 0.5)
  printf "P-11 (C-10): %s\n", ok ? "PASS" : "FAIL" }'
