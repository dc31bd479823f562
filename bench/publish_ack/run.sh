#!/usr/bin/env bash
# P-6: publish acknowledgement of 1 MiB segments, idle and while wrk saturates the viewer
# listener of the same origin.
#
# Set-up: central and one streamer (--role=origin, --http-threads=THREADS, one publish
# thread); stream `live` placed on it (2 s segments, live window 6, pipeline `a`,
# availability start 60 s ago). A 1 MiB segment is published as /live/v3/{producing−2}.ts for
# wrk to read. publish_client (bench/publish_ack/publish_client.cc) then PUTs COUNT (default
# 200) 1 MiB segments one after another over one keep-alive connection to the publish
# listener, consecutive msns from producing−1, and times each acknowledgement from the
# return of the write of its last body byte to the status line read. Twice:
#   idle    into rendition v1, nothing else running;
#   loaded  into rendition v2 while `wrk -t1 -c100` GETs the wrk segment on the viewer
#           listener (started 1 s before; at most DURATION, default 10 s, then stopped).
# Each run has its own rendition: a rendition keeps its newest 18 segments, so the 200
# publishes of one run trim their own rendition and never the one wrk reads.
# Bars: p50 ≤ 2 ms, p99 ≤ 10 ms, no acknowledgement over 500 ms. meshwork_slow_publish_total
# (the server's own count of acknowledgements later than 500 ms) is printed after both, and
# for context the server's own view of each run from meshwork_publish_ack_seconds (last byte
# received → answer handed over; bucket bounds only). The client's figure also holds the time
# the server takes to read the tail of the body: on loopback a 1 MiB write returns as soon as
# the bytes sit in the socket buffers, before the server has read them.
#
# SHED (default off): CPU shedding (L-16) samples the whole host's CPU, which includes wrk's
# own core here, so by default its thresholds are set out of reach (101 %) and wrk's GETs
# really are served (rather than answered 503); SHED=on keeps the node's defaults.
# Loopback only; every process it starts is stopped on exit. Uses the binaries in BUILD_DIR
# (default <repo>/build): central, streamer and bench/publish_ack/publish_client
# (cmake --build build --target publish_client); wrk from PATH.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-10}"
count="${COUNT:-200}"
client="$build/bench/publish_ack/publish_client"
source "$root/bench/lib/origin.sh"
[ -x "$client" ] || die "$client is missing: cmake --build build --target publish_client"
start_origin 6

producing() { echo $(( ($(now_ms) - start) / 2000 )); }

# ---- the segment wrk reads -----------------------------------------------------------------
wrk_path="/live/v3/$(( $(producing) - 2 )).ts"
head -c $((1 << 20)) /dev/urandom >"$work/segment.ts"
code=$(put "$wrk_path" "$work/segment.ts")
[ "$code" = 201 ] || die "PUT $wrk_path answered $code"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer$wrk_path")" = 200 ] ||
  die "GET $wrk_path does not answer 200"

publish_run() {  # publish_run RENDITION OUT — COUNT PUTs; the client's RESULT line into OUT
  timeout $((count + 60)) "$client" --target "$publish" --prefix "/live/$1/" \
    --first-msn $(( $(producing) - 1 )) --count "$count" --size $((1 << 20)) --pipeline a \
    >"$2" 2>"$2.err" || echo "publish_client failed: $(tail -n3 "$2.err")" >&2
  grep -q '^RESULT ' "$2" || die "publish_client printed no RESULT: $(tail -n3 "$2.err")"
}

ack_histogram() {  # ack_histogram FILE — the server's meshwork_publish_ack_seconds now
  curl -fsS "http://$viewer/metrics" | grep '^meshwork_publish_ack_seconds' >"$1" || true
}

# ---- idle ----------------------------------------------------------------------------------
ack_histogram "$work/h0"
publish_run v1 "$work/idle.txt"
ack_histogram "$work/h1"

# ---- under load ----------------------------------------------------------------------------
wrk -t1 -c100 -d"${duration}s" "http://$viewer$wrk_path" >"$work/wrk.txt" 2>&1 &
wrk_pid=$!
pids+=($wrk_pid)
sleep 1
publish_run v2 "$work/loaded.txt"
ack_histogram "$work/h2"
load_covered=yes
kill -0 "$wrk_pid" 2>/dev/null || load_covered=no
kill -INT "$wrk_pid" 2>/dev/null || true  # wrk stops and prints its summary
wait "$wrk_pid" 2>/dev/null || true
read -r w_rps w_mbs w_non < <(awk '
  /Requests\/sec/ { rps = $2 }
  /Transfer\/sec/ { v = $2; f = 1 / 1048576
    if (v ~ /GB$/) f = 1024; else if (v ~ /MB$/) f = 1; else if (v ~ /KB$/) f = 1 / 1024
    sub(/[KMG]?B$/, "", v); mbs = v * f }
  /Non-2xx/ { non = $NF }
  END { printf "%s %.1f %d\n", rps, mbs, non }' "$work/wrk.txt")

slow=$(curl -fsS "http://$viewer/metrics" |
  awk '$1 ~ /^meshwork_slow_publish_total(\{|$)/ { s += $2; seen = 1 }
       END { if (seen) printf "%.0f\n", s; else print "missing" }')

printf '\nP-6 publish acknowledgement, %s × 1 MiB PUTs over one connection, one publish thread;\n' \
  "$count"
printf 'load: wrk -t1 -c100 on the viewer listener (%s threads), CPU shedding %s\n' \
  "$threads" "${SHED:-off}"
python3 - "$(grep '^RESULT ' "$work/idle.txt")" "$(grep '^RESULT ' "$work/loaded.txt")" \
  "${w_rps:-0}" "${w_mbs:-0}" "${w_non:-0}" "$load_covered" "$slow" \
  "$work/h0" "$work/h1" "$work/h2" <<'PY'
import json, re, sys
idle, loaded = (json.loads(s.removeprefix("RESULT ")) for s in sys.argv[1:3])
w_rps, w_mbs, w_non, covered, slow = sys.argv[3:8]

def histogram(path):
    h = {"buckets": {}, "sum": 0.0, "count": 0.0}
    for line in open(path):
        m = re.match(r'meshwork_publish_ack_seconds_bucket\{.*le="([^"]+)".*\} (\S+)', line)
        if m:
            h["buckets"][float(m[1])] = float(m[2])
        elif line.startswith("meshwork_publish_ack_seconds_sum"):
            h["sum"] = float(line.split()[-1])
        elif line.startswith("meshwork_publish_ack_seconds_count"):
            h["count"] = float(line.split()[-1])
    return h

def server_side(before, after):
    """The server's own ack times (last byte received → answer handed over) in a run."""
    n = after["count"] - before["count"]
    if n <= 0:
        return "no samples"
    cum = sorted((le, after["buckets"][le] - before["buckets"].get(le, 0))
                 for le in after["buckets"])
    def bound(q):
        for le, c in cum:
            if c >= q * n:
                return "∞" if le == float("inf") else f"{le * 1000:g}"
        return "?"
    mean = (after["sum"] - before["sum"]) / n * 1000
    return f"{n:.0f} acks, mean {mean:.2f} ms, p50 ≤ {bound(0.5)} ms, p99 ≤ {bound(0.99)} ms"

hist = [histogram(p) for p in sys.argv[8:11]]
print(f"{'run':<8} {'acked':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8} {'>500ms':>7} "
      f"{'write p50':>10} {'wall s':>7}  verdict")
for name, r in (("idle", idle), ("loaded", loaded)):
    a = r["ack_ms"]
    ok = (a["p50"] <= 2 and a["p99"] <= 10 and r["over_500ms"] == 0 and r["errors"] == 0
          and r["status_2xx"] == r["sent"])
    print(f"{name:<8} {r['status_2xx']:>6} {a['p50']:>8.2f} {a['p99']:>8.2f} {a['max']:>8.2f} "
          f"{r['over_500ms']:>7} {r['write_ms']['p50']:>10.2f} {r['wall_s']:>7.2f}  "
          f"{'PASS' if ok else 'FAIL'}")
print("bars: p50 ≤ 2 ms, p99 ≤ 10 ms, none over 500 ms ('write p50': time to write one body)")
print(f"server side (meshwork_publish_ack_seconds buckets), idle:   {server_side(hist[0], hist[1])}")
print(f"server side (meshwork_publish_ack_seconds buckets), loaded: {server_side(hist[1], hist[2])}")
print(f"wrk during the loaded run: {float(w_rps):.0f} req/s, {float(w_mbs):.1f} MB/s, "
      f"{w_non} non-2xx")
if covered != "yes":
    print("warning: wrk ended before the loaded publishes did (raise DURATION)")
print(f"meshwork_slow_publish_total after both runs: {slow} "
      f"{'PASS' if slow == '0' else 'FAIL'}")
PY
