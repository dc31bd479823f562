#!/usr/bin/env bash
# P-2: central's 302 viewer redirects vs nginx `return 302`, side by side in one run.
# Both get the same number of worker threads/processes (THREADS, default 2) and the same
# load: wrk -t1 -c64 over HTTP/1.1 keep-alive for DURATION seconds (default 10).
# ROUNDS (default 3) rounds, the two servers measured one after the other in each, the order
# swapped from one round to the next: this machine's speed drifts by ±15 % between two
# consecutive runs of the same server (nginx alone, 3 s each: 81–108 k req/s), so one pair of
# phases is a poor sample of the ratio. Prints each round's req/s, p99 and ratios, then the
# medians over the rounds (bar: ≥ 0.8 × nginx req/s, p99 ≤ 2 × nginx).
# PERF=FILE records central (`perf record`, PERF_FREQ default 999 Hz, PERF_ARGS default -g)
# during its measurement. Loopback only; every process it starts is stopped on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-10}"
rounds="${ROUNDS:-3}"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer" >&2; exit 2; }
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

ready() {  # ready FIFO KEY — waits for the READY line and prints the address under KEY
  timeout 20 head -n1 "$1" | sed 's/^READY //' | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}

mkfifo "$work/central.out"
"$build/central/central" --data-dir="$work/db" --http-listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 \
  --http-threads="$threads" >"$work/central.out" 2>"$work/central.log" &
central_pid=$!
pids+=($central_pid)
read -r central_ready < "$work/central.out"
central_http=$(echo "${central_ready#READY }" | python3 -c "import json,sys; print(json.load(sys.stdin)['http'])")
central_grpc=$(echo "${central_ready#READY }" | python3 -c "import json,sys; print(json.load(sys.stdin)['grpc'])")

mkfifo "$work/node.out"
"$build/streamer/streamer" --central="$central_grpc" \
  --cluster-token-file="$work/db/cluster-token" --node-id=ingest-1 --role=ingest \
  --hostname=127.0.0.1 --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 \
  >"$work/node.out" 2>"$work/node.log" &
pids+=($!)
read -r _ < "$work/node.out"
api="http://$central_http/central/api-v4"
curl -fsS -X PUT "$api/streams/ch1" -d '{"placement": {"streamers": ["ingest-1"]}}' >/dev/null
for _ in $(seq 1 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://$central_http/ch1/index.m3u8")
  [ "$code" = 302 ] && break
  sleep 0.1
done
location=$(curl -s -o /dev/null -w '%{redirect_url}' "http://$central_http/ch1/index.m3u8")
[ -n "$location" ] || { echo "central does not redirect; see $work/central.log"; exit 1; }

nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/nginx.conf" <<NGINX
worker_processes $threads;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nginx_port;
    location / { return 302 $location; }
  }
}
NGINX
nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$nginx_port/" && break; sleep 0.1; done

source "$root/bench/lib/wrk.sh"
measure() { wrk_measure "$1" 64 "$duration" "$work/wrk.txt"; }  # measure URL → "req/s p99_ms"
# PERF records central during the first round's central phase only.
perf_once() {
  if [ -n "${PERF:-}" ] && [ ! -e "$work/perf.done" ]; then
    touch "$work/perf.done"
    perf record -F "${PERF_FREQ:-999}" ${PERF_ARGS:--g} -q -p "$central_pid" -o "$PERF" \
      -- sleep "$duration" 2>"$work/perf.err" &
    perf_pid=$!
  fi
}
rows=()
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then order=(central nginx); else order=(nginx central); fi
  for server in "${order[@]}"; do
    if [ "$server" = central ]; then
      perf_once
      read -r c_rps c_p99 < <(measure "http://$central_http/ch1/index.m3u8")
      if [ -n "${perf_pid:-}" ]; then wait "$perf_pid" || true; perf_pid=; fi
    else
      read -r n_rps n_p99 < <(measure "http://127.0.0.1:$nginx_port/ch1/index.m3u8")
    fi
  done
  rows+=("$round $c_rps $c_p99 $n_rps $n_p99")
done

printf '\nP-2 redirects, wrk -t1 -c64 -d%ss, %s workers each, %s rounds\n' "$duration" "$threads" "$rounds"
printf '%s\n' "${rows[@]}" | python3 -c '
import statistics, sys
rows = [list(map(float, l.split())) for l in sys.stdin if l.strip()]
print("%-6s %14s %7s %12s %7s %11s" % ("round", "central req/s", "p99 ms", "nginx req/s", "p99 ms", "req/s ratio"))
for r, c, cp, n, np_ in rows:
    print(f"{int(r):<6} {c:>14.0f} {cp:>7.2f} {n:>12.0f} {np_:>7.2f} {c / n:>11.2f}")
ratio = statistics.median(c / n for _, c, _, n, _ in rows)
p99 = statistics.median(cp / np_ for _, _, cp, _, np_ in rows)
print(f"ratio req/s central/nginx = {ratio:.2f} (median of {len(rows)} rounds; bar ≥ 0.80); "
      f"p99 central/nginx = {p99:.2f} (bar ≤ 2.00)")
'
