#!/usr/bin/env bash
# P-3: a live origin serving a published 1 MiB segment and a small media playlist from
# memory, against nginx serving the very same bytes from disk (page cache), side by side.
#
# Set-up: central and one streamer (--role=origin, --http-threads=THREADS, one publish
# thread); stream `live` placed on it (2 s segments, live window LIVE_WINDOW (default 6),
# pipeline `a`, availability start in the past). A 1 MiB segment is published as msn
# producing−2 and small segments around it (producing−W−1 … producing−1), so the media
# playlist lists W segments. The playlist the streamer answers is saved, and nginx serves
# that file and the segment file at the same paths.
#
# Load: wrk -t1 -c100 -dDURATION (default 10 s) per phase, HTTP/1.1 keep-alive; nginx runs
# THREADS (default 2) worker processes. The 1 MiB segment stays in the window for the whole
# run: the origin keeps ≥ 18 segments per rendition and nothing newer is published.
# Prints req/s and MB/s (wrk's transfer rate) of each server and the ratios. Bars: segment
# ≥ 0.9 × nginx, playlist ≥ 0.8 × nginx (req/s and bytes/s).
#
# SHED (default off) and LIVE_WINDOW (default 6): see below.
# Loopback only; every process it starts is stopped on exit. Uses the binaries in BUILD_DIR
# (default <repo>/build) and /usr/sbin/nginx, wrk from PATH.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-10}"
# CPU shedding (L-16) samples the whole host's CPU, which on this loopback set-up includes
# wrk's own core, so by default (SHED=off) its thresholds are set out of reach (101 %) to
# measure serving rather than 503s; SHED=on keeps the node's defaults. 503s are counted.
# The media playlist lists LIVE_WINDOW segments: 6 gives ~0.2 KiB, 36 about 1 KiB.
window="${LIVE_WINDOW:-6}"
nginx_bin="${NGINX:-/usr/sbin/nginx}"
source "$root/bench/lib/origin.sh"
start_origin "$window"

# ---- the objects ---------------------------------------------------------------------------
producing=$(( ($(now_ms) - start) / 2000 ))
seg_msn=$((producing - 2))
mkdir -p "$work/www/live/v1"
head -c $((1 << 20)) /dev/urandom >"$work/www/live/v1/$seg_msn.ts"
head -c 1500 /dev/urandom >"$work/small.ts"
for msn in $(seq $((producing - window - 1)) $((producing - 1))); do
  file="$work/small.ts"
  [ "$msn" = "$seg_msn" ] && file="$work/www/live/v1/$seg_msn.ts"
  code=$(put "/live/v1/$msn.ts" "$file")
  [ "$code" = 201 ] || die "PUT /live/v1/$msn.ts answered $code"
done
seg_path="/live/v1/$seg_msn.ts"
pl_path="/live/v1/index.m3u8"
curl -fsS -o "$work/got.ts" "http://$viewer$seg_path" || die "GET $seg_path failed"
cmp -s "$work/got.ts" "$work/www/live/v1/$seg_msn.ts" || die "GET $seg_path: other bytes"
curl -fsS -o "$work/www/live/v1/index.m3u8" "http://$viewer$pl_path" || die "GET $pl_path failed"
pl_bytes=$(stat -c %s "$work/www/live/v1/index.m3u8")

# ---- nginx with the same bytes on disk -----------------------------------------------------
nginx_port=$(free_port)
# When this runs as root, nginx's workers run as nobody: they must be able to read the files.
chmod -R a+rX "$work"
cat >"$work/nginx.conf" <<NGINX
worker_processes $threads;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $work/client_body;
  proxy_temp_path $work/proxy;
  fastcgi_temp_path $work/fastcgi;
  uwsgi_temp_path $work/uwsgi;
  scgi_temp_path $work/scgi;
  keepalive_requests 1000000;
  sendfile on;
  tcp_nopush on;
  open_file_cache max=64;
  types { video/mp2t ts; application/vnd.apple.mpegurl m3u8; }
  server {
    listen 127.0.0.1:$nginx_port;
    root $work/www;
  }
}
NGINX
"$nginx_bin" -p "$work/" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
pids+=($!)
for _ in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$nginx_port$pl_path" && break; sleep 0.1; done
# Both files into the page cache, and the same bytes on both sides.
curl -fsS -o "$work/nginx.ts" "http://127.0.0.1:$nginx_port$seg_path" || die "nginx does not serve"
cmp -s "$work/nginx.ts" "$work/got.ts" || die "nginx serves other bytes"

# ---- measurements --------------------------------------------------------------------------
measure() {  # measure URL → "req/s MB/s non2xx"
  wrk -t1 -c100 -d"${duration}s" "$1" >"$work/wrk.txt" 2>&1 || true
  awk '
    /Requests\/sec/ { rps = $2 }
    /Transfer\/sec/ { v = $2; f = 1 / 1048576
      if (v ~ /GB$/) f = 1024; else if (v ~ /MB$/) f = 1; else if (v ~ /KB$/) f = 1 / 1024
      sub(/[KMG]?B$/, "", v); mbs = v * f }
    /Non-2xx/ { bad += $NF }
    END { printf "%s %.2f %d\n", rps, mbs, bad }' "$work/wrk.txt"
}
read -r s_seg_rps s_seg_mbs s_seg_bad < <(measure "http://$viewer$seg_path")
read -r n_seg_rps n_seg_mbs n_seg_bad < <(measure "http://127.0.0.1:$nginx_port$seg_path")
read -r s_pl_rps s_pl_mbs s_pl_bad < <(measure "http://$viewer$pl_path")
read -r n_pl_rps n_pl_mbs n_pl_bad < <(measure "http://127.0.0.1:$nginx_port$pl_path")
# The segment must still be served at the end (not trimmed, not shed).
end_code=$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer$seg_path")

printf '\nP-3 origin serving, wrk -t1 -c100 -d%ss, %s threads / workers each, CPU shedding %s\n' \
  "$duration" "$threads" "${SHED:-off}"
python3 - "$pl_bytes" "$end_code" \
  "$s_seg_rps" "$s_seg_mbs" "$s_seg_bad" "$n_seg_rps" "$n_seg_mbs" "$n_seg_bad" \
  "$s_pl_rps" "$s_pl_mbs" "$s_pl_bad" "$n_pl_rps" "$n_pl_mbs" "$n_pl_bad" <<'PY'
import sys
pl_bytes, end_code = int(sys.argv[1]), sys.argv[2]
v = sys.argv[3:]
rows = [("1 MiB segment", 0.9, v[0:6]), (f"playlist ({pl_bytes} B)", 0.8, v[6:12])]
print(f"{'object':<22} {'server':<9} {'req/s':>10} {'MB/s':>9} {'non-2xx':>8}")
for name, bar, (srps, smbs, sbad, nrps, nmbs, nbad) in rows:
    print(f"{name:<22} {'streamer':<9} {float(srps):>10.0f} {float(smbs):>9.1f} {sbad:>8}")
    print(f"{'':<22} {'nginx':<9} {float(nrps):>10.0f} {float(nmbs):>9.1f} {nbad:>8}")
for name, bar, (srps, smbs, sbad, nrps, nmbs, nbad) in rows:
    r = float(srps) / float(nrps)
    b = float(smbs) / float(nmbs)
    ok = r >= bar and b >= bar and sbad == "0"
    print(f"{name}: streamer/nginx req/s {r:.2f}, bytes/s {b:.2f} (bar ≥ {bar:.1f}) "
          f"{'PASS' if ok else 'FAIL'}")
if end_code != "200":
    print(f"warning: the segment answered {end_code} after the run")
PY
