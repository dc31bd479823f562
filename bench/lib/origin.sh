# Shared set-up of the live-origin benchmarks (P-3, P-5, P-6), sourced by their run.sh after
# they set `build` and `threads`: a work directory cleaned on exit with every process the
# script started, helpers, and `start_origin WINDOW`, which brings up central and one origin
# streamer on loopback port 0 with stream "live" (pipeline "a", availability start 60 s plus
# WINDOW segments ago) and waits until the streamer takes publishes.
# KEEP_WORK=1 keeps the work directory (logs, wrk output) for a look afterwards.
# SHED (default off): CPU shedding (L-16) samples the whole host's CPU, which includes wrk's
# own core here, so by default its thresholds are set out of reach (101 %); SHED=on keeps the
# node's defaults.
shed_flags=()
[ "${SHED:-off}" = on ] || shed_flags=(--shed-dvr-cpu=101 --shed-live-cpu=101)
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${KEEP_WORK:-0}" = 1 ]; then echo "work directory kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

die() { echo "error: $*" >&2; exit 1; }
# shellcheck source=ready.sh
source "$(dirname "${BASH_SOURCE[0]}")/ready.sh"
now_ms() { date +%s%3N; }
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
put() {  # put PATH FILE → HTTP status of the PUT on the publish listener
  curl -s -o /dev/null -w '%{http_code}' -X PUT -H 'X-Pipeline: a' \
    --data-binary @"$2" "http://$publish$1"
}

cycle_script() {  # cycle_script FILE LO HI — a wrk script GETting /live/v1/{LO…HI}.ts in turn
  cat >"$1" <<LUA
local lo, n, i = $2, $3 - $2 + 1, 0
request = function()
  local path = "/live/v1/" .. (lo + i % n) .. ".ts"
  i = i + 1
  return wrk.format("GET", path)
end
LUA
}

run_ns_s() {  # run_ns_s PID → the run time of the process's live threads in seconds
  cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.6f\n", s / 1e9 }'
}
# idle_rate PID → the process's CPU-seconds per wall second over 10 s, after 2 s of settling,
# from its threads' run time in nanoseconds (utime/stime count whole 10 ms ticks: one tick
# more or less over a few seconds moved a minute's estimate by 0.2 CPU-s; a 5 s window right
# after start-up moved it between 0.09 and 0.15 CPU-s per minute on one build).
idle_rate() {
  local c0 c1 t0 t1
  sleep 2
  c0=$(run_ns_s "$1"); t0=$(date +%s.%N)
  sleep 10
  c1=$(run_ns_s "$1"); t1=$(date +%s.%N)
  echo "$c0 $c1 $t0 $t1" | awk '{ printf "%.5f", ($2 - $1) / ($4 - $3) }'
}

# start_central: sets central_http and central_grpc.
start_central() {
  "$build/central/central" --data-dir="$work/db" --http-listen=127.0.0.1:0 \
    --grpc-listen=127.0.0.1:0 >"$work/central.out" 2>"$work/central.log" &
  pids+=($!)
  central_http=$(ready "$work/central.out" http)
  central_grpc=$(ready "$work/central.out" grpc)
}

# start_streamer ROLE NODE_ID: one streamer (--http-threads=$threads, one publish thread, and
# STREAMER_ARGS, split on spaces, e.g. "--object-file-min-kib=0"); sets viewer, publish and
# streamer_pid.
start_streamer() {
  "$build/streamer/streamer" --central="$central_grpc" \
    --cluster-token-file="$work/db/cluster-token" --node-id="$2" --role="$1" \
    --hostname=127.0.0.1 --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 \
    --http-threads="$threads" --publish-threads=1 "${shed_flags[@]}" ${STREAMER_ARGS:-} \
    >"$work/streamer.out" 2>"$work/streamer.log" &
  streamer_pid=$!
  pids+=($streamer_pid)
  viewer=$(ready "$work/streamer.out" http)
  publish=$(ready "$work/streamer.out" publish)
}

# put_stream NAME JSON: creates (or replaces) a stream on central, retrying while it starts.
put_stream() {
  local placed=""
  for _ in $(seq 1 50); do
    if curl -fsS -X PUT "http://$central_http/central/api-v4/streams/$1" -d "$2" \
      >/dev/null 2>>"$work/put.err"; then placed=yes; break; fi
    sleep 0.2
  done
  [ -n "$placed" ] || die "could not create stream $1: $(tail -n2 "$work/put.err")"
}

# Sets central_http, central_grpc, viewer, publish and start (the availability start, ms).
start_origin() {
  local window="$1"
  start_central
  start_streamer origin origin-1
  start_published_stream live "$window"
}

# start_published_stream NAME WINDOW: stream NAME for a packager (pipeline "a", 2 s segments,
# availability start 60 s plus WINDOW segments ago, set in `start`) on origin-1; returns once
# the streamer takes its init.mp4.
start_published_stream() {
  local name="$1" window="$2"
  start=$(($(now_ms) - 60000 - 2000 * window))
  put_stream "$name" "{\"placement\":{\"streamers\":[\"origin-1\"]},\"segment_ms\":2000,\
\"live_window\":$window,\"pipelines\":[\"a\"],\"template\":{\"availability_start\":$start}}"
  printf 'init' >"$work/init.mp4"
  local code=""
  for _ in $(seq 1 100); do
    code=$(put "/$name/v1/init.mp4" "$work/init.mp4")
    [ "$code" = 201 ] && break
    sleep 0.1
  done
  [ "$code" = 201 ] || die "the streamer never accepted stream $name (last PUT: $code)"
}

# nginx_preamble WORKER_CONNECTIONS: the start of an nginx.conf every benchmark shares (THREADS
# workers in the foreground, pid, logs and temporary files in the work directory, keep-alive
# without a request cap), up to and including the opening of the http block.
nginx_preamble() {
  cat <<NGINX
worker_processes $threads;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections $1; }
http {
  access_log off;
  client_body_temp_path $work/client_body;
  proxy_temp_path $work/proxy;
  fastcgi_temp_path $work/fastcgi;
  uwsgi_temp_path $work/uwsgi;
  scgi_temp_path $work/scgi;
  keepalive_requests 1000000;
NGINX
}

# start_nginx_files ROOT: nginx (THREADS worker processes, sendfile, keep-alive without a
# request cap) serving the files under ROOT on loopback; sets nginx_port. Waits until it
# answers.
start_nginx_files() {
  local root_dir="$1"
  nginx_port=$(free_port)
  # When this runs as root, nginx's workers run as nobody: they must be able to read the files.
  chmod -R a+rX "$work"
  { nginx_preamble 4096; cat <<NGINX
  sendfile on;
  tcp_nopush on;
  open_file_cache max=64;
  types { video/mp2t ts; application/vnd.apple.mpegurl m3u8; }
  server {
    listen 127.0.0.1:$nginx_port;
    root $root_dir;
  }
}
NGINX
  } >"$work/nginx.conf"
  "${NGINX:-/usr/sbin/nginx}" -p "$work/" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
  pids+=($!)
  for _ in $(seq 1 50); do
    curl -s -o /dev/null "http://127.0.0.1:$nginx_port/" && return 0
    sleep 0.1
  done
  die "nginx did not start: $(tail -n3 "$work/nginx-error.log")"
}

# wrk_get URL [WRK_ARGS...] → "req/s MiB/s non-2xx": wrk -t${WRK_THREADS:-1}
# -c${CONNECTIONS:-100} -d${duration}s GETting URL over keep-alive (with WRK_ARGS, e.g. -H
# "Authorization: …"); MiB/s from wrk's Transfer/sec (binary units).
wrk_get() {
  wrk -t"${WRK_THREADS:-1}" -c"${CONNECTIONS:-100}" -d"${duration}s" "${@:2}" "$1" \
    >"$work/wrk.txt" 2>&1 || true
  awk '
    /Requests\/sec/ { rps = $2 }
    /Transfer\/sec/ { v = $2; f = 1 / 1048576
      if (v ~ /GB$/) f = 1024; else if (v ~ /MB$/) f = 1; else if (v ~ /KB$/) f = 1 / 1024
      sub(/[KMG]?B$/, "", v); mbs = v * f }
    /Non-2xx/ { bad += $NF }
    END { printf "%s %.2f %d\n", rps, mbs, bad }' "$work/wrk.txt"
}
