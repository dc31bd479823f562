#!/usr/bin/env bash
# P-15: HTTP/2 over TLS (S-24). One origin streamer serving a published stream from memory
# and nginx (`listen … ssl http2`) serving the very same bytes from files, side by side in
# one run, both with the same self-signed certificate, loaded by h2load (Debian
# nghttp2-client) over TLS with ALPN h2:
#
#   segment    a 1 MiB segment (/live/v1/{msn}.ts)
#   part       a 64 KiB object (an LL-HLS part's size at 1–2 Mbit/s)
#   playlist   the ~1 KiB media playlist (/live/v1/index.m3u8)
# Bar (P-15): ≥ 0.8 × nginx on the playlist and the 1 MiB segment.
#
# Load per case and server: h2load -t1 -c CONNECTIONS (default 10) -m STREAMS (default 10)
# -n REQUESTS (default 20000). The streamer runs THREADS (default 2) HTTP threads, nginx
# THREADS worker processes. Prints req/s of each and the streamer/nginx ratio.
# Loopback only; every process it starts is stopped on exit. KEEP_WORK=1 keeps the work
# directory. Uses the binaries in BUILD_DIR (default <repo>/build).
# PERF=FILE records the streamer (`perf record`, PERF_FREQ default 999 Hz, PERF_ARGS default
# -g) while h2load loads it with the case PERF_CASE (segment, part or playlist; default
# segment); that case's figures then include perf's cost.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
requests="${REQUESTS:-20000}"
connections="${CONNECTIONS:-10}"
streams="${STREAMS:-10}"
window=13
source "$root/bench/lib/origin.sh"
www="$work/www"

openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -days 1 \
  -keyout "$work/key.pem" -out "$work/cert.pem" >/dev/null 2>&1 || die "openssl failed"
shed_flags+=(--https-listen=127.0.0.1:0 "--tls-cert=$work/cert.pem" "--tls-key=$work/key.pem")
start_central
start_streamer origin origin-1
https=$(ready "$work/streamer.out" https)
start_published_stream live "$window"
producing=$(( ($(now_ms) - start) / 2000 ))
head -c 65536 /dev/urandom >"$work/part.ts"
head -c $((1 << 20)) /dev/urandom >"$work/segment.ts"
head -c 1500 /dev/urandom >"$work/small.ts"
for msn in $(seq $((producing - window - 1)) $((producing - 1))); do
  file="$work/small.ts"
  [ "$msn" = $((producing - 2)) ] && file="$work/part.ts"
  [ "$msn" = $((producing - 3)) ] && file="$work/segment.ts"
  code=$(put "/live/v1/$msn.ts" "$file")
  [ "$code" = 201 ] || die "PUT /live/v1/$msn.ts answered $code"
done
part_path="/live/v1/$((producing - 2)).ts"
segment_path="/live/v1/$((producing - 3)).ts"
mkdir -p "$www/live/v1"
for p in "$part_path:part" "$segment_path:segment"; do
  curl -fsS -k --http2 -o "$www${p%%:*}" "https://$https${p%%:*}" || die "GET ${p%%:*} failed"
  cmp -s "$www${p%%:*}" "$work/${p##*:}.ts" || die "the streamer served other bytes than published"
done
curl -fsS -k --http2 -o "$www/live/v1/index.m3u8" "https://$https/live/v1/index.m3u8"

nginx_port=$(free_port)
chmod -R a+rX "$work"
{ nginx_preamble 4096; cat <<NGINX
  types { video/mp2t ts; application/vnd.apple.mpegurl m3u8; }
  server {
    listen 127.0.0.1:$nginx_port ssl http2;
    ssl_certificate $work/cert.pem;
    ssl_certificate_key $work/key.pem;
    http2_max_concurrent_streams 128;
    root $www;
  }
}
NGINX
} >"$work/nginx.conf"
"${NGINX:-/usr/sbin/nginx}" -p "$work/" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
pids+=($!)
for _ in $(seq 1 50); do
  curl -sk -o /dev/null "https://127.0.0.1:$nginx_port/" && break
  sleep 0.1
done
cmp -s <(curl -sk --http2 "https://127.0.0.1:$nginx_port$part_path") "$work/part.ts" ||
  die "nginx serves other bytes"

h2() {  # h2 URL → "req/s protocol succeeded"
  local out
  out=$(h2load -t1 -c "$connections" -m "$streams" -n "$requests" "$1" 2>&1)
  local rps proto ok
  rps=$(echo "$out" | sed -nE 's/^finished in [^,]+, ([0-9.]+) req\/s.*/\1/p')
  proto=$(echo "$out" | sed -nE 's/^Application protocol: (.*)$/\1/p')
  ok=$(echo "$out" | sed -nE 's/.* ([0-9]+) succeeded.*/\1/p')
  echo "${rps:-0} ${proto:-none} ${ok:-0}"
}
echo "== P-15: h2load -t1 -c$connections -m$streams -n$requests over TLS (ALPN h2), $threads threads/workers each"
for c in "1 MiB segment|$segment_path" "64 KiB part|$part_path" \
  "~1 KiB playlist|/live/v1/index.m3u8"; do
  name="${c%%|*}"
  path="${c##*|}"
  perf_pid=
  if [ -n "${PERF:-}" ] && [[ "$name" == *"${PERF_CASE:-segment}"* ]]; then
    perf record -F "${PERF_FREQ:-999}" ${PERF_ARGS:--g} -q -p "$streamer_pid" -o "$PERF" \
      2>"$work/perf.err" &
    perf_pid=$!
  fi
  read -r s_rps s_proto s_ok <<<"$(h2 "https://$https$path")"
  if [ -n "$perf_pid" ]; then
    kill -INT "$perf_pid"
    wait "$perf_pid" || true
  fi
  read -r n_rps n_proto n_ok <<<"$(h2 "https://127.0.0.1:$nginx_port$path")"
  printf '  %-16s streamer %10s req/s (%s, %s ok)   nginx %10s req/s (%s, %s ok)   ratio %s\n' \
    "$name" "$s_rps" "$s_proto" "$s_ok" "$n_rps" "$n_proto" "$n_ok" \
    "$(python3 -c "print('%.2f' % ($s_rps / $n_rps if $n_rps else 0))")"
done
