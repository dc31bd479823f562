#!/usr/bin/env bash
# P-7: CPU cost of packaging. The streamer ingests 60 s of ~10 Mbit/s H.264/AAC (MPEG-TS pushed
# over HTTP at full speed) and packages HLS-TS, LL-HLS (fMP4 segments and parts) and DASH (the
# same fMP4 segments) from it; in the same run ffmpeg packages the same file twice with
# `-c copy`: once to HLS-TS, once to fMP4 HLS. Compared: CPU-seconds (user + system) of the
# streamer process over the ingest vs the sum of the two ffmpeg packagers. Bar: streamer
# ≤ 0.5 × ffmpeg.
#
# Source: made once per run in the work directory (SOURCE=FILE reuses a file instead):
# testsrc2 1280x720 25 fps, x264 ultrafast CBR ~9.8 Mbit/s, 1 s GOP (25 frames), AAC 128 kbit/s
# 48 kHz stereo, DURATION (default 60) seconds, MPEG-TS.
#
# Streamer: central + one ingest streamer on loopback port 0, stream `p7` with input
# `publish://`, 2 s segments, 0.5 s parts. Feed: `ffmpeg -re -i SOURCE -c copy -f mpegts
# -method PUT http://PUBLISH/p7/publish`, in real time (PACE=realtime, the default): since the
# one store, the local packager publishes into the OriginStore, which refuses a segment more
# than 3 segments ahead of its due time on the stream's template (the anchor is taken at the
# push's start), so a full-speed push has every segment after the first ~6 s refused
# (event=local_publish_refused) and the packaging is incomplete. PACE=full pushes without -re
# (as before the one store) to look at that. The streamer's CPU is read from
# /proc/PID/stat (utime + stime) before the push and once the playlists have stopped changing
# after it; the idle CPU of an equally long interval (measured for 10 s before, after 2 s of
# settling) is printed and subtracted. The feeder ffmpeg's own CPU (demux + TS remux + HTTP) is
# printed, not counted.
# Completeness: the ingest store keeps only the newest 18 segments, so a watcher polls the TS
# and LL-HLS media playlists (every 2 s in real time, 100 ms at full speed; one kept-alive
# connection) during the push and collects every segment listed;
# they must be contiguous and, with the segments the segmenter logged as dropped (the first,
# before audio starts) and the parts of the still-open last segment, cover ≥ DURATION − 1 s;
# the final LL-HLS playlist must list parts and the MPD must be served.
#
# ffmpeg side, run one after the other on the same file into the work directory (tmpfs or
# page cache): `-c copy -f hls -hls_time 2` (TS) and `-c copy -f hls -hls_segment_type fmp4
# -hls_time 2`; CPU-seconds from wait4() of each process, each run FF_RUNS times (default 3),
# its median counted.
#
# Then, since P-7 reads "from the same input", ffmpeg also packages both forms in one process
# that listens for the same real-time push the streamer got (RTMP or HTTP PUT; SAME_RUNS,
# default 1, each as long as the source): its CPU and the ratio against it are printed beside
# the file-to-file figure.
#
# INPUT=rtmp: the same push over RTMP instead (`ffmpeg -re -c copy -f flv rtmp://…/live/p7`,
# stream input `rtmp://`), so the FLV → frames path is measured in place of the TS demuxer.
# bench/packaging_cpu/rtmp.sh runs both on one source, side by side.
#
# PERF=FILE: also `perf record -g` the streamer (all its threads) from the push's start until
# the playlists settle, into FILE (the CPU figures of such a run include perf's sampling cost;
# take the ratio from a run without it). `perf report -i FILE --no-children` reads it.
# PERF_ARGS (default -g) replaces the call-graph option, e.g. PERF_ARGS="--call-graph dwarf".
#
# STREAMER_ENV="NAME=VALUE …": the streamer's environment only (e.g. GLIBC_TUNABLES).
#
# Loopback only; every process it starts is stopped on exit; bounded (~1.5–2 min: the source
# encode, the DURATION-long real-time push, then ffmpeg's own real-time run). Binaries from BUILD_DIR (default <repo>/build).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-60}"
pace="${PACE:-realtime}"
case "$pace" in realtime) feed_rate=(-re) ;; full) feed_rate=() ;; *) echo "PACE: realtime or full" >&2; exit 2 ;; esac
perf_out="${PERF:-}"
input="${INPUT:-ts}"
case "$input" in
  ts) input_url="publish://"; input_flags=() ;;
  rtmp) input_url="rtmp://"; input_flags=(--rtmp-listen=127.0.0.1:0) ;;
  *) echo "INPUT: ts or rtmp" >&2; exit 2 ;;
esac
source "$root/bench/lib/origin.sh"

clk_tck=$(getconf CLK_TCK)
cpu_s() {  # cpu_s PID → utime+stime of the process in seconds
  awk -v t="$clk_tck" '{ sub(/^.*\) /, ""); printf "%.3f\n", ($12 + $13) / t }' "/proc/$1/stat"
}
# Runs a command to completion and prints its own CPU-seconds (user + system, wait4). A
# SIGTERM (the cleanup's kill) is passed on to the command; RUN_LIMIT_S, when set, kills it
# after that many seconds (a listener whose feeder never came). It execs python, so call it
# only in a subshell — `$(run_cpu …)` or `run_cpu … &`, where `$!` is then the python that
# the cleanup's kill reaches.
run_cpu() {
  exec python3 - "$@" <<'PY'
import os, signal, subprocess, sys, threading
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
for sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, lambda *_: p.kill())
limit = os.environ.get("RUN_LIMIT_S")
timer = threading.Timer(float(limit), p.kill) if limit else None
if timer:
    timer.daemon = True
    timer.start()
_, status, ru = os.wait4(p.pid, 0)
if timer:
    timer.cancel()
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit(f"{sys.argv[1:]} failed: {status}")
print(f"{ru.ru_utime + ru.ru_stime:.3f}")
PY
}
ff=(ffmpeg -hide_banner -loglevel error -nostdin -y)

# ---- the source -----------------------------------------------------------------------------
src="${SOURCE:-}"
if [ -z "$src" ]; then
  src="$work/source.ts"
  echo "encoding the ${duration} s source (x264 ultrafast, 720p25, 1 s GOP, ~9.8 Mbit/s)…" >&2
  "${ff[@]}" -f lavfi -i "testsrc2=size=1280x720:rate=25" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -t "$duration" \
    -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 25 -keyint_min 25 -sc_threshold 0 \
    -b:v 9800k -minrate 9800k -maxrate 9800k -bufsize 4900k -x264-params nal-hrd=cbr \
    -c:a aac -b:a 128k -ac 2 -f mpegts "$src"
fi
read -r src_dur src_kbps < <(ffprobe -v error -show_entries format=duration,bit_rate \
  -of default=nw=1:nk=1 "$src" | paste -sd' ' | awk '{ printf "%.1f %.0f\n", $1, $2 / 1000 }')

# ---- central + ingest streamer --------------------------------------------------------------
"$build/central/central" --data-dir="$work/db" --http-listen=127.0.0.1:0 \
  --grpc-listen=127.0.0.1:0 >"$work/central.out" 2>"$work/central.log" &
pids+=($!)
central_http=$(ready "$work/central.out" http)
central_grpc=$(ready "$work/central.out" grpc)
env ${STREAMER_ENV:-} "$build/streamer/streamer" --central="$central_grpc" \
  --cluster-token-file="$work/db/cluster-token" --node-id=ingest-1 --role=ingest \
  --hostname=127.0.0.1 --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 \
  --http-threads="$threads" "${shed_flags[@]}" "${input_flags[@]}" \
  >"$work/streamer.out" 2>"$work/streamer.log" &
streamer_pid=$!
pids+=($streamer_pid)
viewer=$(ready "$work/streamer.out" http)
publish=$(ready "$work/streamer.out" publish)
[ "$input" = rtmp ] && rtmp=$(ready "$work/streamer.out" rtmp)

stream_json='{"placement":{"streamers":["ingest-1"]},"inputs":["'"$input_url"'"],"segment_ms":2000,
"part_ms":500}'
placed=""
for _ in $(seq 1 50); do
  if curl -fsS -X PUT "http://$central_http/central/api-v4/streams/p7" -d "$stream_json" \
    >/dev/null 2>>"$work/put.err"; then placed=yes; break; fi
  sleep 0.2
done
[ -n "$placed" ] || die "could not create the stream: $(tail -n2 "$work/put.err")"
applied=""
for _ in $(seq 1 100); do
  if curl -fsS "http://$central_http/central/api-v4/streamers/ingest-1" 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["status"]["report"]
sys.exit(0 if any(s["name"]=="p7" for s in r.get("streams",[])) else 1)' 2>/dev/null; then
    applied=yes; break
  fi
  sleep 0.1
done
[ -n "$applied" ] || die "the streamer never reported stream p7"

# Watches the TS and LL-HLS media playlists through the push (every POLL s: the ingest store
# keeps only the newest 18 segments) and collects every segment ever listed. Exits once
# $work/pushed exists and both playlists have stayed the same for max(0.5, 2 × POLL) s;
# prints JSON.
cat >"$work/watch.py" <<'PY'
import http.client, json, os, re, sys, time
viewer, flag, every = sys.argv[1], sys.argv[2], float(sys.argv[3])
host, port = viewer.rsplit(":", 1)
conn = None
def get(path):  # over one kept-alive connection (a new one only after an error)
    global conn
    try:
        if conn is None:
            conn = http.client.HTTPConnection(host, int(port), timeout=2)
        conn.request("GET", path)
        r = conn.getresponse()
        body = r.read().decode()
        return body if r.status == 200 else ""
    except Exception:
        if conn is not None:
            conn.close()
        conn = None
        return ""
seen = {"ts": {}, "ll": {}}
last, stable_since = None, None
while True:
    ts, ll = get("/p7/v1/index.m3u8"), get("/p7/v1/index.ll.m3u8")
    for kind, text in (("ts", ts), ("ll", ll)):
        for d, msn in re.findall(r"#EXTINF:([0-9.]+),\n(\d+)\.(?:ts|m4s)", text):
            seen[kind][int(msn)] = float(d)
    now = time.monotonic()
    if (ts, ll) != last:
        last, stable_since = (ts, ll), now
    if os.path.exists(flag) and now - stable_since >= max(0.5, 2 * every):
        break
    time.sleep(every)
# The open segment at the end: its parts listed after the last complete segment.
tail = ll.rsplit("#EXTINF", 1)[-1]
open_parts = [float(x) for x in re.findall(r"#EXT-X-PART:DURATION=([0-9.]+)", tail)]
out = {}
for kind in ("ts", "ll"):
    msns = sorted(seen[kind])
    out[kind] = {"n": len(msns), "s": round(sum(seen[kind].values()), 3),
                 "first": msns[0] if msns else None, "last": msns[-1] if msns else None,
                 "contiguous": bool(msns) and msns[-1] - msns[0] + 1 == len(msns)}
out["open_parts"] = len(open_parts)
out["open_s"] = round(sum(open_parts), 3)
out["parts_listed"] = ll.count("#EXT-X-PART:")
print(json.dumps(out))
PY

# ---- streamer: idle baseline, then the push --------------------------------------------------
# The idle rate from the threads' run time in nanoseconds (bench/lib/origin.sh's idle_rate).
idle_rate=$(idle_rate "$streamer_pid")

# Polling interval: 0.1 s for a full-speed push (about one segment per 100 ms), 2 s in real
# time (one segment per 2 s; the store keeps 18, so a segment stays listed ~36 s): its
# requests are streamer CPU, counted. (Until 2026-12-06 every 0.5 s with a new connection per
# request: ~5 % of the streamer's profile was this watcher.)
poll=2; [ "$pace" = full ] && poll=0.1
python3 "$work/watch.py" "$viewer" "$work/pushed" "$poll" >"$work/watch.json" &
watch_pid=$!
pids+=($watch_pid)
perf_pid=""
if [ -n "$perf_out" ]; then
  perf record ${PERF_ARGS:--g} -q -p "$streamer_pid" -o "$perf_out" 2>"$work/perf.err" &
  perf_pid=$!
  pids+=($perf_pid)
fi
c0=$(cpu_s "$streamer_pid"); t0=$(date +%s.%N)
if [ "$input" = rtmp ]; then
  feeder_cpu=$(run_cpu "${ff[@]}" "${feed_rate[@]}" -i "$src" -c copy -f flv "rtmp://$rtmp/live/p7")
else
  feeder_cpu=$(run_cpu "${ff[@]}" "${feed_rate[@]}" -i "$src" -c copy -f mpegts -method PUT \
    "http://$publish/p7/publish")
fi
t_push=$(date +%s.%N)
touch "$work/pushed"
# Done once the playlists stop changing (bounded by watch.py's own loop; 30 s at most here).
for _ in $(seq 1 300); do kill -0 "$watch_pid" 2>/dev/null || break; sleep 0.1; done
c1=$(cpu_s "$streamer_pid"); t1=$(date +%s.%N)
if [ -n "$perf_pid" ]; then
  kill -INT "$perf_pid" 2>/dev/null || true
  wait "$perf_pid" 2>/dev/null || true
  echo "perf data: $perf_out ($(tail -n1 "$work/perf.err" 2>/dev/null))" >&2
fi
refused=$(grep -c 'event=local_publish_refused' "$work/streamer.log" || true)
kill -0 "$watch_pid" 2>/dev/null && die "the playlists never settled after the push"
watch=$(cat "$work/watch.json")
# Segments the segmenter dropped (the first one lacks audio when AAC starts after the first
# keyframe): they were processed but not published.
dropped=$(grep -c 'event=segment_dropped' "$work/streamer.log" || true)
mpd_code=$(curl -s -o "$work/index.mpd" -w '%{http_code}' "http://$viewer/p7/index.mpd")

# ---- ffmpeg: HLS-TS and fMP4 HLS, -c copy ----------------------------------------------------
# Each packager runs FF_RUNS times (default 3; a second each) and counts with its median: one
# run's figure moved by ±10 % between runs of the same command on this VM.
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ff_ts_runs=""; ff_fmp4_runs=""
for _ in $(seq 1 "${FF_RUNS:-3}"); do
  rm -rf "$work/ff_ts" "$work/ff_fmp4"
  mkdir -p "$work/ff_ts" "$work/ff_fmp4"
  ff_ts_runs+=" $(run_cpu "${ff[@]}" -i "$src" -c copy -f hls -hls_time 2 -hls_list_size 0 \
    -hls_segment_filename "$work/ff_ts/%d.ts" "$work/ff_ts/index.m3u8")"
  ff_fmp4_runs+=" $(run_cpu "${ff[@]}" -i "$src" -c copy -bsf:a aac_adtstoasc -f hls -hls_time 2 \
    -hls_list_size 0 -hls_segment_type fmp4 -hls_fmp4_init_filename init.mp4 \
    -hls_segment_filename "$work/ff_fmp4/%d.m4s" "$work/ff_fmp4/index.m3u8")"
done
ff_ts_cpu=$(echo "$ff_ts_runs" | median)
ff_fmp4_cpu=$(echo "$ff_fmp4_runs" | median)
echo "ffmpeg runs (CPU-s): HLS-TS${ff_ts_runs}; fMP4 HLS${ff_fmp4_runs}" >&2
ff_ts_n=$(grep -c '^#EXTINF' "$work/ff_ts/index.m3u8")
ff_fmp4_n=$(grep -c '^#EXTINF' "$work/ff_fmp4/index.m3u8")

# ---- ffmpeg from the same input: one listener, both packagings, fed as the streamer was ------
# P-7 reads "from the same input": the streamer received the push over a socket (RTMP, or an
# HTTP PUT) in real time, which costs it the socket reads, their wake-ups and, on loopback, the
# acknowledgements' processing; ffmpeg reading a file pays none of that. So ffmpeg also listens
# (`-listen 1`, RTMP or HTTP PUT as INPUT says) and packages HLS-TS and fMP4 HLS in ONE process
# (its demuxing counted once, as the streamer's is) while the same feeder command pushes the
# same file in real time. CPU-seconds from wait4() of the listener; SAME_RUNS times (default 1,
# each takes the source's duration; 0 skips it).
wait_listen() {  # wait_listen PORT: until something listens on 127.0.0.1:PORT (5 s at most)
  for _ in $(seq 1 100); do
    ss -Hltn "sport = :$1" | grep -q . && return 0
    sleep 0.05
  done
  die "nothing listens on port $1"
}
same_runs=""
for _ in $(seq 1 "${SAME_RUNS:-1}"); do
  rm -rf "$work/ff_same"
  mkdir -p "$work/ff_same/ts" "$work/ff_same/fmp4"
  port=$(free_port)
  if [ "$input" = rtmp ]; then
    listen_in=(-listen 1 -i "rtmp://127.0.0.1:$port/live/p7")
    push_out=(-f flv "rtmp://127.0.0.1:$port/live/p7")
  else
    listen_in=(-listen 1 -method PUT -i "http://127.0.0.1:$port/p7/publish")
    push_out=(-f mpegts -method PUT "http://127.0.0.1:$port/p7/publish")
  fi
  RUN_LIMIT_S=$((${src_dur%.*} + 60)) run_cpu "${ff[@]}" "${listen_in[@]}" \
    -map 0 -c copy -f hls -hls_time 2 -hls_list_size 0 \
    -hls_segment_filename "$work/ff_same/ts/%d.ts" "$work/ff_same/ts/index.m3u8" \
    -map 0 -c copy -bsf:a aac_adtstoasc -f hls -hls_time 2 -hls_list_size 0 \
    -hls_segment_type fmp4 -hls_fmp4_init_filename init.mp4 \
    -hls_segment_filename "$work/ff_same/fmp4/%d.m4s" "$work/ff_same/fmp4/index.m3u8" \
    >"$work/ff_same.cpu" &
  listener=$!
  pids+=($listener)
  wait_listen "$port"
  "${ff[@]}" "${feed_rate[@]}" -i "$src" -c copy "${push_out[@]}"
  wait "$listener" || die "the listening ffmpeg failed"
  same_runs+=" $(cat "$work/ff_same.cpu")"
done
ff_same_cpu=0
ff_same_n=0
if [ -n "$same_runs" ]; then
  ff_same_cpu=$(echo "$same_runs" | median)
  echo "ffmpeg from the same input (CPU-s):${same_runs}" >&2
  ff_same_n=$(( $(grep -c '^#EXTINF' "$work/ff_same/ts/index.m3u8") + \
    $(grep -c '^#EXTINF' "$work/ff_same/fmp4/index.m3u8") ))
fi

python3 - "$src_dur" "$src_kbps" "$c0" "$c1" "$t0" "$t1" "$t_push" "$idle_rate" "$feeder_cpu" \
  "$watch" "$dropped" "$mpd_code" "$ff_ts_cpu" "$ff_fmp4_cpu" "$ff_ts_n" "$ff_fmp4_n" \
  "$refused" "$pace" "$input" "${ff_same_cpu:-0}" "$ff_same_n" <<'PY'
import json, sys
a = sys.argv[1:]
src_dur, src_kbps = float(a[0]), a[1]
c0, c1, t0, t1, t_push, idle_rate, feeder = map(float, a[2:9])
w, dropped, mpd = json.loads(a[9]), int(a[10]), a[11]
ff_ts, ff_fmp4 = float(a[12]), float(a[13])
ff_ts_n, ff_fmp4_n = int(a[14]), int(a[15])
refused, pace, feed_input = int(a[16]), a[17], a[18]
ff_same, ff_same_n = float(a[19]), int(a[20])
raw = c1 - c0
idle = idle_rate * (t1 - t0)
streamer = max(raw - idle, 0.0)
ffmpeg = ff_ts + ff_fmp4
ts, ll = w["ts"], w["ll"]
# Timeline the streamer covered: dropped segments (2 s each) + complete segments + the open
# segment's parts.
covered = dropped * 2.0 + ll["s"] + w["open_s"]
complete = (ts["contiguous"] and ll["contiguous"] and ts["n"] == ll["n"]
            and covered >= src_dur - 1.0 and w["parts_listed"] > 0 and mpd == "200"
            and refused == 0)
print(f"\nP-7 packaging CPU, {src_dur:.1f} s source at {src_kbps} kbit/s (H.264 720p25 1 s GOP + AAC)")
print(f"streamer (HLS-TS + LL-HLS + DASH): {streamer:7.3f} CPU-s "
      f"(raw {raw:.3f} over {t1 - t0:.1f} s wall, minus idle {idle:.3f}); push took {t_push - t0:.1f} s")
print(f"  packaged: TS {ts['n']} segments = {ts['s']:.1f} s (msn {ts['first']}..{ts['last']}, "
      f"contiguous {ts['contiguous']}); fMP4 {ll['n']} segments = {ll['s']:.1f} s; "
      f"open last segment {w['open_s']:.2f} s in {w['open_parts']} parts; "
      f"{dropped} dropped (no audio yet); {covered:.1f} s of {src_dur:.1f} s covered; "
      f"{w['parts_listed']} parts listed at the end; MPD HTTP {mpd}")
print(f"  input {feed_input}; feed pace {pace}; objects the store refused to the local packager: {refused}")
print(f"  feeder ffmpeg (-c copy, {'FLV over RTMP' if feed_input == 'rtmp' else 'MPEG-TS PUT'}, not counted): {feeder:.3f} CPU-s")
print(f"ffmpeg -c copy HLS-TS:             {ff_ts:7.3f} CPU-s ({ff_ts_n} segments)")
print(f"ffmpeg -c copy fMP4 HLS:           {ff_fmp4:7.3f} CPU-s ({ff_fmp4_n} segments)")
print(f"ffmpeg total:                      {ffmpeg:7.3f} CPU-s")
ratio = streamer / ffmpeg if ffmpeg > 0 else float("inf")
per_core = (src_dur / streamer) * (float(src_kbps) / 5000) if streamer > 0 else float("inf")
print(f"ratio streamer / ffmpeg: {ratio:.3f} (bar ≤ 0.5) "
      f"{'PASS' if ratio <= 0.5 and complete else 'FAIL'}"
      f"{'' if complete else ' (packaging incomplete)'}")
if ff_same > 0:
    print(f"ffmpeg from the same input ({'RTMP' if feed_input == 'rtmp' else 'HTTP PUT'} listener, "
          f"both packagings in one process, pushed in real time): {ff_same:.3f} CPU-s "
          f"({ff_same_n} segments)")
    print(f"ratio streamer / ffmpeg from the same input: {streamer / ff_same:.3f} (bar ≤ 0.5)")
print(f"≈ {per_core:.0f} streams of 5 Mbit/s per core at this cost (bar ≥ 100)")
PY
