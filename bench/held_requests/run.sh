#!/usr/bin/env bash
# P-4: CONNECTIONS (default 10 000) concurrent held blocking-playlist requests on one streamer.
# Bars: ≤ 16 KiB RSS per held request; all answered within p99 ≤ 100 ms of the publish;
# first answer ≤ 1 ms after the publish.
#
# Starts central, one ingest streamer (--http-threads=2; no per-client connection cap: every
# connection comes from 127.0.0.1) and an ffmpeg source (lavfi test
# pattern, 25 fps, GOP 2 s, 60 s encoded beforehand, pushed with -re -c copy) into stream `ll`; waits for the LL-HLS
# playlist; lines up with a part boundary (one blocking request for the hinted part), then
# has held_client ask for the part AHEAD parts after the newly hinted one (rolling over into
# the next segment), so every request is held until it is due: (AHEAD + 1) × 0.5 s. AHEAD
# defaults to 4 (~2.5 s): writing 10 000 requests takes over a second on a loaded 2-core box,
# so with AHEAD=1 (~1 s) the part can be out before the last requests arrive. The streamer
# answers 503 after 3 target durations (6 s) and refuses parts past 3 target durations of
# parts ahead, so AHEAD ≤ 10. The streamer's VmRSS is read before the client starts and ~200 ms after
# all requests are written (while they are held); the difference / N is the cost of one
# held request. The answer spread is measured from the first answer (client side).
# Connections are kept alive as players keep theirs; CLOSE=1 sends `Connection: close`
# instead (the server then also pays a shutdown and close per answer inside the spread).
#
# Loopback only; bounded (ffmpeg -t 60, client --timeout-s TIMEOUT_S); everything it starts
# is stopped on exit. Uses the binaries in BUILD_DIR (default: <repo>/build).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
connections="${CONNECTIONS:-10000}"
ahead="${AHEAD:-4}"
timeout_s="${TIMEOUT_S:-20}"
stream=ll
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The streamer and the client each need one descriptor per held request.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt $((connections + 256)) ]; then
  echo "warning: open-file limit $(ulimit -n) is below $connections + 256" >&2
fi

die() { echo "error: $*" >&2; exit 1; }

ready() {  # ready FILE KEY — waits (≤ 20 s) for the READY line in FILE; prints KEY's value
  local line=""
  for _ in $(seq 1 200); do
    line=$(grep -m1 '^READY ' "$1" 2>/dev/null || true)
    [ -n "$line" ] && break
    sleep 0.1
  done
  [ -n "$line" ] || die "no READY line in $1; its log ends: $(tail -n5 "${1%.out}.log")"
  echo "${line#READY }" | python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }

"$build/central/central" --data-dir="$work/db" --http-listen=127.0.0.1:0 \
  --grpc-listen=127.0.0.1:0 >"$work/central.out" 2>"$work/central.log" &
pids+=($!)
central_http=$(ready "$work/central.out" http)
central_grpc=$(ready "$work/central.out" grpc)

"$build/streamer/streamer" --central="$central_grpc" \
  --cluster-token-file="$work/db/cluster-token" --node-id=ingest-1 --role=ingest \
  --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 --http-threads=2 \
  --http-max-connections-per-client=0 \
  >"$work/streamer.out" 2>"$work/streamer.log" &
streamer_pid=$!
pids+=($streamer_pid)
streamer_http=$(ready "$work/streamer.out" http)
streamer_publish=$(ready "$work/streamer.out" publish)

placed=""
for _ in $(seq 1 50); do
  if curl -fsS -X PUT "http://$central_http/central/api-v4/streams/$stream" \
    -d '{"placement":{"streamers":["ingest-1"]},"inputs":["publish://"]}' \
    >"$work/put.json" 2>>"$work/put.err"; then
    placed=yes
    break
  fi
  sleep 0.2
done
[ -n "$placed" ] || die "could not place the stream: $(cat "$work/put.err")"

# The source is encoded once before the run and pushed in real time with `-c copy`, so the
# encoder's CPU (x264 keyframes land on the very part boundary the requests wait for) does
# not compete with the measurement on a small machine.
ffmpeg -nostdin -hide_banner -loglevel error -y \
  -f lavfi -i testsrc2=size=640x360:rate=25 -f lavfi -i sine=frequency=440:sample_rate=48000 \
  -t 60 -c:v libx264 -g 50 -preset veryfast -tune zerolatency -c:a aac -f mpegts \
  "$work/source.ts" || die "could not encode the test source"

# Wait until the streamer knows the stream (its publish endpoint accepts it).
ffmpeg_started=""
for _ in $(seq 1 50); do
  ffmpeg -nostdin -hide_banner -loglevel error -re -i "$work/source.ts" -c copy \
    -f mpegts -method PUT "http://$streamer_publish/$stream/publish" \
    >"$work/ffmpeg.out" 2>"$work/ffmpeg.log" &
  ffmpeg_pid=$!
  sleep 1
  if kill -0 "$ffmpeg_pid" 2>/dev/null; then
    pids+=($ffmpeg_pid)
    ffmpeg_started=yes
    break
  fi
  wait "$ffmpeg_pid" 2>/dev/null || true
done
[ -n "$ffmpeg_started" ] || die "ffmpeg could not publish: $(tail -3 "$work/ffmpeg.log")"

playlist_url="http://$streamer_http/$stream/v1/index.ll.m3u8"
# Wait for a live LL-HLS playlist with at least two complete segments and a preload hint.
have_playlist=""
for _ in $(seq 1 150); do
  if curl -fsS "$playlist_url" >"$work/playlist.m3u8" 2>/dev/null &&
    [ "$(grep -c '\.m4s\(?v=[0-9]*\)\{0,1\}$' "$work/playlist.m3u8" || true)" -ge 2 ] &&
    grep -q '^#EXT-X-PRELOAD-HINT:TYPE=PART' "$work/playlist.m3u8"; then
    have_playlist=yes
    break
  fi
  sleep 0.2
done
if [ -z "$have_playlist" ]; then
  echo "last playlist read:" >&2
  head -30 "$work/playlist.m3u8" >&2 2>/dev/null || true
  echo "streamer log (tail):" >&2
  tail -5 "$work/streamer.log" >&2 || true
  die "no LL-HLS playlist at $playlist_url"
fi

hint() {  # prints "M P" of the preload hint in the playlist file $1
  sed -n 's/^#EXT-X-PRELOAD-HINT:TYPE=PART,URI="\([0-9]*\)\.\([0-9]*\)\.m4s[^"]*".*/\1 \2/p' "$1" |
    tail -n1
}

# Line up with a part boundary: block until the hinted part is published; the answer's hint
# is then the part in progress (due in ~0.5 s), and the one after it is due in ~1 s.
read -r m p < <(hint "$work/playlist.m3u8")
[ -n "${m:-}" ] || die "no preload hint in the playlist"
curl -fsS "$playlist_url?_HLS_msn=$m&_HLS_part=$p" >"$work/aligned.m3u8"
read -r m p < <(hint "$work/aligned.m3u8")
# Parts per segment: TARGETDURATION / PART-TARGET (2 s / 0.5 s = 4).
per_segment=$(python3 - "$work/aligned.m3u8" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
td = re.search(r"#EXT-X-TARGETDURATION:([0-9.]+)", text)
pt = re.search(r"PART-TARGET=([0-9.]+)", text)
print(round(float(td.group(1)) / float(pt.group(1))) if td and pt else 4)
PY
)
index=$((m * per_segment + p + ahead))
want_m=$((index / per_segment))
want_p=$((index % per_segment))

rss_before=$(rss_kib "$streamer_pid")
"$build/bench/held_requests/held_client" --target "$streamer_http" \
  --path "/$stream/v1/index.ll.m3u8?_HLS_msn=$want_m&_HLS_part=$want_p" \
  --connections "$connections" --timeout-s "$timeout_s" ${CLOSE:+--close} \
  >"$work/client.out" 2>"$work/client.err" &
client_pid=$!
pids+=($client_pid)
rss_held=""
for _ in $(seq 1 $((timeout_s * 100))); do
  if grep -q '^SENT ' "$work/client.out"; then
    sleep 0.2
    rss_held=$(rss_kib "$streamer_pid")
    break
  fi
  kill -0 "$client_pid" 2>/dev/null || break
  sleep 0.01
done
wait "$client_pid" || die "held_client failed: $(cat "$work/client.err")"
result=$(grep -m1 '^RESULT ' "$work/client.out" || true)
[ -n "$result" ] || die "held_client printed no RESULT: $(cat "$work/client.err")"
[ -n "$rss_held" ] || die "held_client never printed SENT"
streamer_files=$(awk '/Max open files/ {print $4}' "/proc/$streamer_pid/limits")

# The reference, in the same run with the source still encoding: held_floor answers the same
# number of held requests with a body of the playlist's size, doing nothing but the sends.
body_bytes=$(curl -fsS "$playlist_url" | wc -c)
"$build/bench/held_requests/held_floor" --connections "$connections" \
  --body-bytes "$body_bytes" --threads 2 --timeout-s "$timeout_s" \
  >"$work/floor.out" 2>"$work/floor.log" &
floor_pid=$!
pids+=($floor_pid)
floor_http=$(ready "$work/floor.out" http)
"$build/bench/held_requests/held_client" --target "$floor_http" --path "/floor" \
  --connections "$connections" --timeout-s "$timeout_s" ${CLOSE:+--close} \
  >"$work/floor_client.out" 2>"$work/floor_client.err" ||
  die "held_client failed against held_floor: $(cat "$work/floor_client.err")"
floor_result=$(grep -m1 '^RESULT ' "$work/floor_client.out" || true)
[ -n "$floor_result" ] || die "held_client printed no RESULT for held_floor"

python3 - "$connections" "$rss_before" "$rss_held" "${result#RESULT }" \
  "$m.$p" "$want_m.$want_p" "$streamer_files" "$ahead" "${floor_result#RESULT }" \
  "$body_bytes" <<'PY'
import json, sys
n = int(sys.argv[1])
before, held = int(sys.argv[2]), int(sys.argv[3])
r = json.loads(sys.argv[4])
hinted, wanted, files, ahead = sys.argv[5], sys.argv[6], sys.argv[7], int(sys.argv[8])
floor = json.loads(sys.argv[9])
body_bytes = int(sys.argv[10])
fa = floor["answers_us_after_first"]
a = r["answers_us_after_first"]
k = r.get("kernel_rx_us_after_first")
per = (held - before) / max(1, r["written"])

def ok(cond):
    return "PASS" if cond else "FAIL"

print(f"\nP-4 held blocking-playlist requests, one streamer (--http-threads=2), "
      f"hint {hinted} → asked for part {wanted} (hint + {ahead}, due in ~{(ahead + 1) / 2:.1f} s); "
      f"streamer open-file limit {files}")
rows = [
    ("requests (N)", f"{n}", ""),
    ("connected / written", f"{r['connected']} / {r['written']}", ""),
    ("answered / 200", f"{r['answered']} / {r['status_200']}",
     ok(r["status_200"] == n)),
    ("errors (connect/write/read/timeout)",
     f"{r['errors']} ({r['connect_errors']}/{r['write_errors']}/{r['read_errors']}/"
     f"{r['timeouts']})", ""),
    ("answered before all were sent", f"{r['answered_before_sent']}",
     ok(r["answered_before_sent"] == 0)),
    ("all sent after (ms) / first answer after SENT (ms)",
     f"{r['sent_ms_after_start']:.0f} / {r['first_answer_ms_after_sent']:.0f}", ""),
    ("streamer RSS before / held (MiB)", f"{before / 1024:.1f} / {held / 1024:.1f}", ""),
    ("RSS per held request (KiB, bar ≤ 16)", f"{per:.2f}", ok(per <= 16)),
    ("answers after the first, p50 / p99 / max (ms)",
     f"{a['p50'] / 1000:.1f} / {a['p99'] / 1000:.1f} / {a['max'] / 1000:.1f}",
     ok(a["p99"] <= 100_000)),
]
if k:
    rows.append(("  same, kernel receive timestamps (ms)",
                 f"{k['p50'] / 1000:.1f} / {k['p99'] / 1000:.1f} / {k['max'] / 1000:.1f}", ""))
    lag = (r["first_answer_unix_us"] - r["kernel_first_rx_unix_us"]) / 1000
    rows.append(("  first answer: kernel receive → client read (ms)", f"{lag:.1f}", ""))
rows += [
    (f"reference held_floor ({body_bytes} B answers, 2 threads, sends only): answered",
     f"{floor['status_200']} / {n}", ""),
    ("  its answers after the first, p50 / p99 / max (ms)",
     f"{fa['p50'] / 1000:.1f} / {fa['p99'] / 1000:.1f} / {fa['max'] / 1000:.1f}", ""),
    ("streamer p99 / reference p99",
     f"{a['p99'] / max(1, fa['p99']):.2f}", ""),
    ("first answer after the publish (bar ≤ 1 ms)",
     "n/a: needs a server-side publish timestamp (future work)", ""),
]
w = max(len(x[0]) for x in rows)
for name, value, verdict in rows:
    print(f"{name:<{w}}  {value:<24} {verdict}".rstrip())
print("RESULT " + json.dumps(r, separators=(",", ":")))
print("FLOOR " + json.dumps(floor, separators=(",", ":")))
PY
