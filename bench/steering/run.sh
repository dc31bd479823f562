#!/usr/bin/env bash
# P-18 (CS-5): central's steering answers vs its own 302 viewer redirects (P-2), side by side
# in one run, and nginx serving the same steering JSON as a static answer for scale. Central
# with THREADS (default 2) HTTP threads, two ingest nodes holding stream ch1 with steering on;
# each case is wrk -t1 -c64 over HTTP/1.1 keep-alive for DURATION seconds (default 10). The
# steering request is an hls.js reload (`_HLS_pathway`, `_HLS_throughput`). Prints req/s and
# p99 for each, and the ratio steering / redirect (bar: ≥ 0.8). Loopback only; every process
# it starts is stopped on exit.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-10}"
work="$(mktemp -d)"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

field() { python3 -c "import json,sys; print(json.loads(sys.argv[1].removeprefix('READY '))['$2'])" "$1"; }

mkfifo "$work/central.out"
"$build/central/central" --data-dir="$work/db" --http-listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 \
  --http-threads="$threads" --steering-max-answers-per-s=100000000 \
  >"$work/central.out" 2>"$work/central.log" &
pids+=($!)
read -r central_ready < "$work/central.out"
central_http=$(field "$central_ready" http)
central_grpc=$(field "$central_ready" grpc)

for id in ingest-1 ingest-2; do
  mkfifo "$work/$id.out"
  "$build/streamer/streamer" --central="$central_grpc" \
    --cluster-token-file="$work/db/cluster-token" --node-id="$id" --role=ingest \
    --hostname=127.0.0.1 --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 \
    >"$work/$id.out" 2>"$work/$id.log" &
  pids+=($!)
  read -r _ < "$work/$id.out"
done
api="http://$central_http/central/api-v4"
curl -fsS -X PUT "$api/streams/ch1" \
  -d '{"placement": {"streamers": ["ingest-1", "ingest-2"]}, "steering": {"enabled": true}}' >/dev/null
steer="http://$central_http/steering/ch1?_HLS_pathway=ingest-1&_HLS_throughput=5000000"
for _ in $(seq 1 100); do
  body=$(curl -s "$steer" || true)
  case "$body" in *'"ingest-2"'*) break ;; esac
  sleep 0.1
done
case "$body" in *'"ingest-2"'*) ;; *) echo "no steering answer naming both nodes: $body; see $work"; exit 1 ;; esac
code=$(curl -s -o /dev/null -w '%{http_code}' "http://$central_http/ch1/index.m3u8")
[ "$code" = 302 ] || { echo "central does not redirect ($code); see $work/central.log"; exit 1; }

nginx_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf '%s' "$body" > "$work/steering.json"
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
    location / { default_type application/json; root $work; try_files /steering.json =404; }
  }
}
NGINX
nginx -c "$work/nginx.conf" -p "$work" &
pids+=($!)
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$nginx_port/" && break; sleep 0.1; done

source "$root/bench/lib/wrk.sh"
measure() { wrk_measure "$1" 64 "$duration" "$work/wrk.txt"; }  # measure URL → "req/s p99_ms"
read -r r_rps r_p99 < <(measure "http://$central_http/ch1/index.m3u8")
read -r s_rps s_p99 < <(measure "$steer")
read -r n_rps n_p99 < <(measure "http://127.0.0.1:$nginx_port/")
answers=$(curl -s "http://$central_http/metrics" | awk '/^meshwork_steering_answers_total\{result="ok"\}/ {print $2}')

printf '\nP-18 steering answers, wrk -t1 -c64 -d%ss, %s threads each\n' "$duration" "$threads"
printf '%-26s %12s %10s\n' case 'req/s' 'p99 ms'
printf '%-26s %12s %10s\n' "central 302 redirect" "$r_rps" "$r_p99" \
  "central steering answer" "$s_rps" "$s_p99" "nginx static steering JSON" "$n_rps" "$n_p99"
echo "steering answers counted by central: $answers"
python3 - "$s_rps" "$r_rps" "$n_rps" <<'PY'
import sys
s, r, n = map(float, sys.argv[1:])
print(f"ratio steering/redirect = {s/r:.2f} (bar ≥ 0.80); steering/nginx static = {s/n:.2f}")
PY
