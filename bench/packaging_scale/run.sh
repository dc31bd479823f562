#!/usr/bin/env bash
# P-7, second half: "≥ 100 streams of 5 Mbit/s per core". bench/packaging_cpu measures one
# 10 Mbit/s stream and extrapolates; this runs STREAMS (default 100) of them at once on one
# ingest streamer and measures what a core carries.
#
# Source: made once per run in the work directory (SOURCE=FILE reuses a file): testsrc2
# 1280x720 25 fps, x264 ultrafast CBR ~4.8 Mbit/s (BITRATE, video), 1 s GOP, AAC 128 kbit/s,
# DURATION (default 120) seconds, MPEG-TS. Every stream gets the same bytes.
# Streamer: central + one ingest streamer on loopback port 0 (--publish-threads PUBLISH_THREADS,
# default 1), streams p0…p{N-1} with input `publish://`, 2 s segments, 0.5 s parts: each is
# packaged into HLS-TS, LL-HLS and DASH, as in bench/packaging_cpu. Feed: feed.py, one process
# pushing every stream as a chunked HTTP PUT in real time (each paced by its packets' decode
# times, every TICK_MS = 20 ms; starts staggered over the first second).
# Measured: the streamer's CPU (its threads' run time, /proc/PID/task/*/schedstat) over the
# whole push and over its steady part — from STEADY_AFTER (default 40) s after the last stream
# started to the end: the first 36 s fill each stream's 18-segment window with new memory (page
# faults of fresh pages, ~25 % of the CPU then), after it each new segment reuses what the
# oldest one freed — less the idle rate measured for 10 s beforehand; streams per core =
# STREAMS × wall seconds / net CPU-seconds, scaled to 5 Mbit/s by the source's bit rate. Also
# printed: whether the streamer kept up (the feeder's worst lag behind its schedule: a streamer
# that stops reading shows there; over one part, 0.5 s, fails the run), every push's HTTP
# status, objects refused, segments dropped (at most the one per stream before audio starts),
# and each stream's last segment in its TS and LL-HLS playlists and its MPD (all must reach
# the source's end, less the last open segment), the streamer's peak RSS. Stream-seconds: the
# media pushed over the whole push (counted from the first stream's start), the wall time over
# the steady part. Exit status 1 when a stream is incomplete or late, or the bar is missed.
# Bar: ≥ 100 streams per core. PERF=FILE also `perf record`s the streamer over the steady part
# (PERF_ARGS, default -g; the figures of such a run include perf's own cost).
#
# Loopback only; bounded (~2 min: the encode, STREAMS stream creations, the DURATION-long push);
# every process it starts is stopped on exit. Binaries from BUILD_DIR (default <repo>/build).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-120}"
streams="${STREAMS:-100}"
bitrate="${BITRATE:-4800k}"
source "$root/bench/lib/origin.sh"

src="${SOURCE:-}"
if [ -z "$src" ]; then
  src="$work/source.ts"
  echo "encoding the ${duration} s source (x264 ultrafast, 720p25, 1 s GOP, $bitrate)…" >&2
  ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=1280x720:rate=25" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -t "$duration" \
    -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 25 -keyint_min 25 -sc_threshold 0 \
    -b:v "$bitrate" -minrate "$bitrate" -maxrate "$bitrate" -bufsize "$bitrate" \
    -x264-params nal-hrd=cbr -c:a aac -b:a 128k -ac 2 -f mpegts "$src"
fi
read -r src_dur src_kbps < <(ffprobe -v error -show_entries format=duration,bit_rate \
  -of default=nw=1:nk=1 "$src" | paste -sd' ' | awk '{ printf "%.1f %.0f\n", $1, $2 / 1000 }')

start_central
"$build/streamer/streamer" --central="$central_grpc" \
  --cluster-token-file="$work/db/cluster-token" --node-id=ingest-1 --role=ingest \
  --hostname=127.0.0.1 --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 \
  --http-threads="$threads" --publish-threads="${PUBLISH_THREADS:-1}" "${shed_flags[@]}" \
  >"$work/streamer.out" 2>"$work/streamer.log" &
streamer_pid=$!
pids+=($streamer_pid)
viewer=$(ready "$work/streamer.out" http)
publish=$(ready "$work/streamer.out" publish)

echo "creating $streams streams…" >&2
for i in $(seq 0 $((streams - 1))); do
  put_stream "p$i" '{"placement":{"streamers":["ingest-1"]},"inputs":["publish://"],
"segment_ms":2000,"part_ms":500}'
done
for _ in $(seq 1 300); do
  n=$(curl -fsS "http://$central_http/central/api-v4/streamers/ingest-1" 2>/dev/null |
    python3 -c 'import json,sys; print(len(json.load(sys.stdin)["status"]["report"].get("streams",[])))' \
    2>/dev/null || echo 0)
  [ "$n" -ge "$streams" ] && break
  sleep 0.2
done
[ "$n" -ge "$streams" ] || die "the streamer reports $n of $streams streams"

idle=$(idle_rate "$streamer_pid")

STARTED_FILE="$work/started" python3 "$root/bench/packaging_scale/feed.py" "$publish" "$src" \
  "$streams" p "${TICK_MS:-20}" >"$work/feed.json" &
feeder=$!
pids+=($feeder)
# The whole push is counted from the first stream's start (after the feeder's set-up: the
# source's ffprobe, the connections).
for _ in $(seq 1 600); do [ -s "$work/started" ] && break; sleep 0.05; done
[ -s "$work/started" ] || die "the feeder never started"
c0=$(run_ns_s "$streamer_pid"); t0=$(date +%s.%N)
# The steady part starts STEADY_AFTER s after the last stream started (1 s after the first),
# or, for a source too short to have one, halfway.
steady_after="${STEADY_AFTER:-40}"
half=$(awk -v d="$src_dur" -v s="$steady_after" \
  'BEGIN { printf "%.1f", (d >= s + 20) ? s + 1 : d / 2 + 1 }')
sleep "$half"
cm=$(run_ns_s "$streamer_pid"); tm=$(date +%s.%N)
perf_pid=""
if [ -n "${PERF:-}" ]; then
  perf record ${PERF_ARGS:--g} -q -p "$streamer_pid" -o "$PERF" 2>"$work/perf.err" &
  perf_pid=$!
  pids+=($perf_pid)
fi
wait "$feeder" || die "the feeder failed"
if [ -n "$perf_pid" ]; then
  kill -INT "$perf_pid" 2>/dev/null || true
  wait "$perf_pid" 2>/dev/null || true
fi
c1=$(run_ns_s "$streamer_pid"); t1=$(date +%s.%N)
sleep 2  # the input timeout closes each stream's last segment
hwm_kib=$(awk '/^VmHWM/ { print $2 }' "/proc/$streamer_pid/status")
refused=$(grep -c 'event=local_publish_refused' "$work/streamer.log" || true)
dropped=$(grep -c 'event=segment_dropped' "$work/streamer.log" || true)

python3 - "$viewer" "$streams" "$src_dur" "$src_kbps" "$idle" "$c0" "$cm" \
  "$c1" "$t0" "$tm" "$t1" "$hwm_kib" "$refused" "$dropped" "$(cat "$work/feed.json")" <<'PY'
import http.client, json, re, sys
a = sys.argv[1:]
viewer, n, src_dur, kbps = a[0], int(a[1]), float(a[2]), float(a[3])
idle_rate, c0, cm, c1, t0, tm, t1 = map(float, a[4:11])
hwm_kib, refused, dropped, feed = int(a[11]), int(a[12]), int(a[13]), json.loads(a[14])
host, port = viewer.rsplit(":", 1)
conn = http.client.HTTPConnection(host, int(port), timeout=5)
def get(path):
    conn.request("GET", path)
    r = conn.getresponse()
    return r.status, r.read().decode(errors="replace")
# Each stream: the last msn its TS and LL-HLS playlists list, parts listed, the MPD.
expect_last = int(src_dur // 2) - 2  # 2 s segments from msn 0, the last one open, one dropped
short = []
for i in range(n):
    s1, ts = get(f"/p{i}/v1/index.m3u8")
    s2, ll = get(f"/p{i}/v1/index.ll.m3u8")
    s3, _ = get(f"/p{i}/index.mpd")
    last = lambda text: max([int(m) for m in re.findall(r"^(\d+)\.(?:ts|m4s)", text, re.M)] or [-1])
    if (s1, s2, s3) != (200, 200, 200) or last(ts) < expect_last or last(ll) < expect_last \
            or "#EXT-X-PART:" not in ll:
        short.append((i, s1, s2, s3, last(ts), last(ll)))
scale = kbps / 5000.0  # streams of this source's rate → streams of 5 Mbit/s
# Stream-seconds: over the whole push, the media pushed (n × the source); over the steady
# part, its wall time (every stream runs through it) — both only count when the feeder kept
# to its schedule (a streamer that stops reading stretches the wall time).
def per_core(c_a, c_b, t_a, t_b, stream_s):
    net = max((c_b - c_a) - idle_rate * (t_b - t_a), 1e-9)
    return net, stream_s / net * scale
net_all, pc_all = per_core(c0, c1, t0, t1, n * feed["source_s"])
net_2nd, pc_2nd = per_core(cm, c1, tm, t1, n * (t1 - tm))
max_lag = 0.5  # one part
ok = (not short and refused == 0 and feed["statuses"] in ({"204": n}, {"200": n})
      and feed["worst_lag_s"] <= max_lag and dropped <= n)
print(f"\nP-7 (streams per core): {n} streams of the {src_dur:.1f} s source at {kbps:.0f} kbit/s "
      f"(H.264 720p25 1 s GOP + AAC), each packaged into HLS-TS + LL-HLS + DASH")
print(f"feeder: {feed['bytes'] / 1e6:.0f} MB in {feed['wall_s']:.1f} s, worst lag behind schedule "
      f"{feed['worst_lag_s']:.3f} s, push answers {feed['statuses']}, its own CPU "
      f"{feed['feeder_cpu_s']:.1f} s (not counted)")
print(f"streamer idle rate {idle_rate * 1000:.1f} ms/s; peak RSS {hwm_kib / 1024:.0f} MiB; "
      f"objects refused {refused}; segments dropped {dropped} (first, before audio)")
print(f"whole push:  {net_all:6.2f} CPU-s net over {t1 - t0:5.1f} s = "
      f"{net_all / (t1 - t0) * 100:5.1f} % of a core → {pc_all:6.0f} streams of 5 Mbit/s per core")
print(f"steady part: {net_2nd:6.2f} CPU-s net over {t1 - tm:5.1f} s = "
      f"{net_2nd / (t1 - tm) * 100:5.1f} % of a core → {pc_2nd:6.0f} streams of 5 Mbit/s per core")
if feed["worst_lag_s"] > max_lag:
    print(f"the feeder fell {feed['worst_lag_s']:.2f} s behind its schedule (> {max_lag} s): "
          "the streamer did not keep up")
if dropped > n:
    print(f"{dropped} segments dropped: more than the one per stream before audio starts")
if short:
    print(f"incomplete streams ({len(short)}; stream, TS/LL/MPD status, last msn TS/LL; "
          f"expected ≥ {expect_last}): {short[:10]}")
met = ok and min(pc_all, pc_2nd) >= 100
print(f"bar ≥ 100 streams per core: {'PASS' if met else 'FAIL'}"
      f"{'' if ok else ' (packaging incomplete or late)'}")
sys.exit(0 if met else 1)
PY
