#!/usr/bin/env bash
# P-13: VIEWERS (default 1 000) LL-HLS viewers behind a Meshwork edge, behind nginx
# (`proxy_cache` + `proxy_cache_lock on`) and behind Varnish, all three in front of the same
# origin, one after the other in one run. Prints for each: the upstream requests per object
# (parts, segments, blocking playlist reloads), the delay the front added to each part's
# first byte over a viewer reading the origin directly (p50 / p99 / max), and the viewers'
# errors.
#
# The origin is an ingest streamer packaging an ffmpeg test source (640x360, 1 s GOP,
# VIDEO_BITRATE default 400k + 64k AAC, encoded once before the run, pushed with -re -c copy).
# The bitrate is low on purpose: the bench is about requests and delays, and a thousand
# viewers fetching every part and every segment of a richer stream would saturate this
# machine's two cores before any front does anything interesting.
#
# Between each front and the origin sits a counting hop: one more nginx (1 worker, no cache, no buffering, kept-alive upstream) with a
# port and an access log per front, so the three fronts pay the same extra hop and every
# upstream request is logged with its URI. The edge learns its upstream from central like
# any edge; the origin announces the hop's port as its public port (--public-port) so that is
# the address central hands out.
#
# The viewers (tests/tools/viewer_sim, one process, asio) each follow the media playlist with
# blocking reloads on the preload hint, fetch every listed part of the segment in progress
# and every completed segment, on one kept-alive connection; one more viewer (the probe)
# does the same on the origin directly. "Added" is a viewer's part answer header time minus
# the probe's for the same part (both as their threads read them). Lone viewers on threads of
# their own — the probe, one of the front ("front probe") and a second one of the origin
# ("floor": what this machine's scheduling alone puts between two identical viewers) — are
# timed by their sockets' kernel receive stamps.
#
# Settings: VIEWERS, DURATION (seconds per front, default 20), THREADS (the edge's
# --http-threads and nginx's worker_processes, default 2), FRONTS (default "edge nginx
# varnish"), KEEP_WORK=1 keeps the work directory. Loopback only; bounded in time (ffmpeg -t,
# viewer_sim --seconds); everything started is stopped on exit. Binaries from BUILD_DIR
# (default <repo>/build). PERF=FILE also runs `perf record -g` on the edge while its viewers
# play (PERF_FREQ, default 999 Hz).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
viewers="${VIEWERS:-1000}"
duration="${DURATION:-20}"
fronts="${FRONTS:-edge nginx varnish}"
sim="${VIEWER_SIM:-$build/tests/viewer_sim}"
# shellcheck source=../lib/origin.sh
source "$root/bench/lib/origin.sh"
[ -x "$sim" ] || die "no $sim: build the viewer_sim target first"
command -v varnishd >/dev/null || die "varnishd is missing (tools/bootstrap installs it)"

# start_node ROLE NODE_ID [ARGS…]: one streamer; sets node_http.
start_node() {
  local role="$1" id="$2"
  shift 2
  "$build/streamer/streamer" --central="$central_grpc" \
    --cluster-token-file="$work/db/cluster-token" --node-id="$id" --role="$role" \
    --hostname=127.0.0.1 --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 \
    --http-threads="$threads" --publish-threads=1 "${shed_flags[@]}" "$@" \
    >"$work/$id.out" 2>"$work/$id.log" &
  pids+=($!)
  node_http=$(ready "$work/$id.out" http)
  node_publish=$(ready "$work/$id.out" publish)
}

api() {  # api METHOD PATH JSON
  curl -fsS -X "$1" "http://$central_http/central/api-v4/$2" -d "$3" >/dev/null
}

# The counting hop and the nginx front share one nginx configuration; their ports first.
hop_edge=$(free_port)
hop_nginx=$(free_port)
hop_varnish=$(free_port)
front_nginx=$(free_port)
front_varnish=$(free_port)

start_central
start_node ingest ingest-1 --public-port="$hop_edge"
origin_http=$node_http
origin_publish=$node_publish
start_node edge edge-1
edge_pid=${pids[-1]}
front_edge=${node_http##*:}
for _ in $(seq 1 50); do
  api PUT zones/local '{"routes":["127.0.0.0/8","::1/128"]}' 2>/dev/null && break
  sleep 0.2
done
for id in ingest-1 edge-1; do
  for _ in $(seq 1 50); do
    api PATCH "streamers/$id" '{"zone":"local"}' 2>/dev/null && break
    sleep 0.2
  done
done
put_stream live '{"placement":{"streamers":["ingest-1"]},"inputs":["publish://"]}'

mkdir -p "$work/cache"
chmod -R a+rwX "$work"
{ nginx_preamble 8192; cat <<NGINX
  log_format hop '\$msec \$request_uri \$status \$body_bytes_sent';
  upstream origin { server $origin_http; keepalive 64; }
  proxy_http_version 1.1;
  proxy_set_header Connection "";
  proxy_read_timeout 30s;
  # The counting hop: passes everything through as it comes, one log per front.
  server { listen 127.0.0.1:$hop_edge; access_log $work/hop-edge.log hop;
           location / { proxy_pass http://origin; proxy_buffering off; } }
  server { listen 127.0.0.1:$hop_nginx; access_log $work/hop-nginx.log hop;
           location / { proxy_pass http://origin; proxy_buffering off; } }
  server { listen 127.0.0.1:$hop_varnish; access_log $work/hop-varnish.log hop;
           location / { proxy_pass http://origin; proxy_buffering off; } }
  # The nginx front: a cache that lets one request per object through (proxy_cache_lock).
  proxy_cache_path $work/cache levels=1:2 keys_zone=live:16m max_size=1g inactive=60s
                   use_temp_path=off;
  upstream hop_nginx { server 127.0.0.1:$hop_nginx; keepalive 64; }
  server {
    listen 127.0.0.1:$front_nginx;
    location / {
      proxy_pass http://hop_nginx;
      proxy_cache live;
      proxy_cache_key \$uri\$is_args\$args;
      proxy_cache_lock on;
      proxy_cache_lock_timeout 10s;
      proxy_cache_lock_age 10s;
    }
  }
}
NGINX
} >"$work/nginx.conf"
/usr/sbin/nginx -p "$work/" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
pids+=($!)
# Varnish with its built-in VCL (caching by the origin's Cache-Control; requests for one
# object coalesced on its waiting list), as the invoking user.
mkdir -p "$work/varnish"
varnishd -F -j none -n "$work/varnish" -a "127.0.0.1:$front_varnish" \
  -b "127.0.0.1:$hop_varnish" -s malloc,512m -p thread_pool_min=200 \
  >"$work/varnish.log" 2>&1 &
pids+=($!)

ffmpeg -nostdin -hide_banner -loglevel error -y \
  -f lavfi -i testsrc2=size=640x360:rate=25 -f lavfi -i sine=frequency=440:sample_rate=48000 \
  -t $((3 * (duration + 8) + 20)) -c:v libx264 -g 25 -keyint_min 25 -sc_threshold 0 \
  -preset veryfast -tune zerolatency -b:v "${VIDEO_BITRATE:-400k}" -c:a aac -b:a 64k \
  -f mpegts "$work/source.ts" ||
  die "could not encode the test source"
ffmpeg -nostdin -hide_banner -loglevel error -re -i "$work/source.ts" -c copy \
  -f mpegts -method PUT "http://$origin_publish/live/publish" \
  >"$work/ffmpeg.out" 2>"$work/ffmpeg.log" &
pids+=($!)

path=/live/v1/index.ll.m3u8
for _ in $(seq 1 150); do
  curl -fsS -o /dev/null "http://$origin_http$path" 2>/dev/null && break
  sleep 0.1
done
curl -fsS -o /dev/null "http://$origin_http$path" || die "the origin has no playlist"

# summarise LOG FROM_S: upstream requests per object kind in LOG at or after FROM_S.
summarise() {
  awk -v from="$2" '
    $1 >= from {
      uri = $2
      kind = "other"
      if (uri ~ /index\.ll\.m3u8\?_HLS_msn=/) kind = "playlist"
      else if (uri ~ /\/[0-9]+\.[0-9]+\.m4s$/) kind = "part"
      else if (uri ~ /\/[0-9]+\.(m4s|ts)$/) kind = "segment"
      n[kind]++; if (++per[kind, uri] == 1) objects[kind]++
      if (per[kind, uri] > most[kind]) most[kind] = per[kind, uri]
      bytes += $4
    }
    END {
      for (k in n) if (k != "other")
        printf "    %-9s %6d upstream requests for %5d objects: %.2f per object (most %d)\n",
          k, n[k], objects[k], n[k] / objects[k], most[k]
      printf "    all       %6d upstream requests, %.1f MiB\n", n["part"] + n["segment"] + \
        n["playlist"] + n["other"], bytes / 1048576
    }' "$1"
}

echo "P-13: $viewers LL-HLS viewers per front, ${duration} s each; the origin is ingest-1"
for front in $fronts; do
  case "$front" in
    edge) port=$front_edge ;;
    nginx) port=$front_nginx ;;
    varnish) port=$front_varnish ;;
    *) die "unknown front $front" ;;
  esac
  # One request first, so an edge's relay (and each cache) is running before the clock.
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null --max-time 10 "http://127.0.0.1:$port$path" 2>/dev/null && break
    sleep 0.1
  done
  sleep 2
  from=$(date +%s.%N)
  if [ "$front" = edge ] && [ -n "${PERF:-}" ]; then
    perf record -F "${PERF_FREQ:-999}" -g -q -p "$edge_pid" -o "$PERF" -- sleep "$duration" \
      2>"$work/perf.err" &
  fi
  "$sim" --target "127.0.0.1:$port" --path "$path" --viewers "$viewers" \
    --seconds "$duration" --probe "$origin_http" >"$work/sim-$front.txt" 2>&1 ||
    die "viewer_sim failed: $(tail -3 "$work/sim-$front.txt")"
  result=$(grep '^RESULT ' "$work/sim-$front.txt" | sed 's/^RESULT //')
  echo "== $front (127.0.0.1:$port)"
  echo "$result" | python3 -c '
import json, sys
r = json.load(sys.stdin)
a = r["added_ms"]
print("    viewers: %d requests, %d errors %s; %d parts, %d segments, %d playlists" % (
    r["requests"], r["errors"], r["statuses"] or "", r["parts"], r["segments"], r["playlists"]))
f = a["first"]
print("    added to a part first byte over the origin, first viewer of each part:"
      " p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d parts)" % (f["p50"], f["p99"], f["max"], f["n"]))
p = a.get("front_probe")
if p:
    print("    added, one viewer of the front on its own thread (apart from this load generator\x27s queue):"
          " p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d parts, %d errors)" % (
          p["p50"], p["p99"], p["max"], p["n"], p["errors"]))
z = a.get("floor")
if z:
    print("    floor: a second lone viewer of the origin over the first (what this run cannot tell"
          " from 0): p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d parts; %d lone-viewer parts"
          " without a kernel stamp)" % (z["p50"], z["p99"], z["max"], z["n"],
          a.get("stamp_fallbacks", 0)))
print("    added, every viewer (includes serving them all on this machine):"
      " p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d answers; probe errors %d)" % (
      a["p50"], a["p99"], a["max"], a["n"], a["probe_errors"]))'
  summarise "$work/hop-$front.log" "$from"
done
echo "Bars (P-13): 1 upstream request per object; the edge adds ≤ 1 ms p99 to a part's first"
echo "byte, below both peers'. The counting hop (one nginx pass-through) is in all three paths,"
echo "not in the probe's. The lone viewers' times are their sockets' kernel receive stamps."
