#!/usr/bin/env bash
# P-3: one origin streamer serving live segments and media playlists from memory, against nginx
# serving the very same bytes from files (page cache), side by side in one run, for both kinds
# of stream the one OriginStore holds:
#
#   published  stream `live`, objects PUT by a packager to /live/v1/{msn}.ts on the publish
#              listener (pipeline `a`, 2 s segments, live window LIVE_WINDOW, default 13 so the
#              media playlist, with a program date-time per segment, is about 1 KiB): a 1 MiB segment at msn producing−2, a 2.5 MiB
#              one at producing−3, 1500-byte ones for the rest of the window.
#   local      streams `loc1` and `loc25` (input publish://, 2 s segments) packaged by the
#              streamer itself from `ffmpeg -re -i SRC -c copy -f mpegts -method PUT
#              http://PUBLISH/{stream}/publish` (real time: the store refuses segments more
#              than 3 segments ahead of the template; live window 20). SRC: PUSH_SECONDS
#              (default 24, so loc1's media playlist lists ~10 segments, ~1 KiB) s of
#              testsrc2 720p25, x264 ultrafast CBR, 1 s GOP, AAC 128 kbit/s, MPEG-TS, encoded
#              once per run; 3.95 Mbit/s of video gives ~1 MiB 2 s segments, 10.25 Mbit/s
#              ~2.5 MiB. A complete segment from the middle of each HLS-TS playlist is served
#              (its exact size is printed), and loc1's media playlist.
#
# Every object the streamer serves is fetched once with curl, saved under the nginx root at
# the same path and compared byte for byte with what nginx then serves.
#
# Load: wrk -t${WRK_THREADS:-1} -c${CONNECTIONS:-100} -dDURATION (default 10 s) per case and
# server, HTTP/1.1 keep-alive; the streamer runs THREADS (default 2) HTTP threads, nginx
# THREADS worker processes. Nothing newer is published during the measurements, so every object
# stays in the window (checked with curl at the end). Prints req/s and MiB/s of each server,
# non-2xx answers, and the streamer/nginx ratios. Bars: segments ≥ 0.9 × nginx, playlists
# ≥ 0.8 × nginx (req/s and bytes/s).
#
# SHED (default off): see bench/lib/origin.sh. KEEP_WORK=1 keeps the work directory.
# Loopback only; every process it starts is stopped on exit; ~2.7 min with the defaults
# (6 cases × 2 × DURATION + ~40 s of set-up: encode, the real-time push). Uses the binaries in BUILD_DIR (default
# <repo>/build), /usr/sbin/nginx (NGINX), ffmpeg and wrk from PATH.
# PERF=FILE records the streamer (`perf record`, PERF_FREQ default 999 Hz, PERF_ARGS default -g)
# during the case whose name starts with PERF_CASE (default "published 1 MiB"); that case's
# figure then includes perf's cost.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-10}"
window="${LIVE_WINDOW:-13}"
push_s="${PUSH_SECONDS:-24}"
source "$root/bench/lib/origin.sh"
www="$work/www"

# ---- the local sources (encoded while nothing is measured) ---------------------------------
ff=(ffmpeg -hide_banner -loglevel error -nostdin -y)
encode() {  # encode FILE VIDEO_KBPS
  "${ff[@]}" -f lavfi -i "testsrc2=size=1280x720:rate=25" \
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -t "$push_s" \
    -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 25 -keyint_min 25 -sc_threshold 0 \
    -b:v "${2}k" -minrate "${2}k" -maxrate "${2}k" -bufsize "$(($2 / 2))k" \
    -x264-params nal-hrd=cbr -c:a aac -b:a 128k -ac 2 -f mpegts "$1"
}
echo "encoding two ${push_s} s sources (3.95 and 10.25 Mbit/s)…" >&2
encode "$work/src1.ts" 3950 &
enc1=$!
encode "$work/src25.ts" 10250
wait "$enc1" || die "encoding src1.ts failed"

# ---- central + one origin streamer ---------------------------------------------------------
start_central
start_streamer origin origin-1

# ---- local streams: push both in real time, in parallel ------------------------------------
local_json='{"placement":{"streamers":["origin-1"]},"inputs":["publish://"],"segment_ms":2000,"live_window":20}'
put_stream loc1 "$local_json"
put_stream loc25 "$local_json"
push_ok=""
for _ in $(seq 1 100); do  # the streamer takes a push once central's config reached it
  if grep -q 'event=stream_started stream=loc25' "$work/streamer.log" 2>/dev/null &&
    grep -q 'event=stream_started stream=loc1' "$work/streamer.log"; then push_ok=yes; break; fi
  sleep 0.1
done
[ -n "$push_ok" ] || die "the streamer never started the local streams"
echo "pushing loc1 and loc25 for ${push_s} s (real time)…" >&2
"${ff[@]}" -re -i "$work/src1.ts" -c copy -f mpegts -method PUT "http://$publish/loc1/publish" &
push1=$!
"${ff[@]}" -re -i "$work/src25.ts" -c copy -f mpegts -method PUT "http://$publish/loc25/publish" &
push25=$!
pids+=($push1 $push25)

# ---- published stream (while the pushes run) -----------------------------------------------
start_published_stream live "$window"
producing=$(( ($(now_ms) - start) / 2000 ))
mkdir -p "$www/live/v1"
head -c $((1 << 20)) /dev/urandom >"$work/pub1.ts"
head -c $((5 << 19)) /dev/urandom >"$work/pub25.ts"
head -c 1500 /dev/urandom >"$work/small.ts"
for msn in $(seq $((producing - window - 1)) $((producing - 1))); do
  file="$work/small.ts"
  [ "$msn" = $((producing - 2)) ] && file="$work/pub1.ts"
  [ "$msn" = $((producing - 3)) ] && file="$work/pub25.ts"
  code=$(put "/live/v1/$msn.ts" "$file")
  [ "$code" = 201 ] || die "PUT /live/v1/$msn.ts answered $code"
done
pub1_path="/live/v1/$((producing - 2)).ts"
pub25_path="/live/v1/$((producing - 3)).ts"

wait "$push1" || die "the loc1 push failed"
wait "$push25" || die "the loc25 push failed"
# The last segment closes on the input timeout; wait until both playlists stay the same.
settled=""
prev=""
for _ in $(seq 1 60); do
  cur=$(curl -fsS "http://$viewer/loc1/v1/index.m3u8" 2>/dev/null || true)\
$(curl -fsS "http://$viewer/loc25/v1/index.m3u8" 2>/dev/null || true)
  if [ -n "$cur" ] && [ "$cur" = "$prev" ]; then settled=yes; break; fi
  prev="$cur"
  sleep 0.5
done
[ -n "$settled" ] || die "the local playlists never settled"

# A complete segment from the middle of a local HLS-TS playlist.
middle_segment() {  # middle_segment STREAM → /STREAM/v1/MSN.ts
  curl -fsS "http://$viewer/$1/v1/index.m3u8" | python3 -c '
import re, sys
text = sys.stdin.read()
segs = re.findall(r"^(\d+)\.ts(?:\?\S*)?$", text, re.M)
if len(segs) < 2: sys.exit("too few segments listed: %d in\n%s" % (len(segs), text))
print("/'"$1"'/v1/%s.ts" % segs[len(segs) // 2])'
}
loc1_path=$(middle_segment loc1) || die "loc1: no complete segment"
loc25_path=$(middle_segment loc25) || die "loc25: no complete segment"

# ---- the same bytes as files for nginx ------------------------------------------------------
save() {  # save PATH: what the streamer serves at PATH → $www/PATH; prints its size
  mkdir -p "$(dirname "$www$1")"
  curl -fsS -o "$www$1" "http://$viewer$1" || die "GET $1 failed"
  stat -c %s "$www$1"
}
save "$pub1_path" >/dev/null
save "$pub25_path" >/dev/null
cmp -s "$www$pub1_path" "$work/pub1.ts" || die "GET $pub1_path: other bytes than published"
cmp -s "$www$pub25_path" "$work/pub25.ts" || die "GET $pub25_path: other bytes than published"
save "$loc1_path" >/dev/null
save "$loc25_path" >/dev/null
save /live/v1/index.m3u8 >/dev/null
save /loc1/v1/index.m3u8 >/dev/null
start_nginx_files "$www"

# case: NAME BAR PATH
cases=(
  "published 1 MiB segment|0.9|$pub1_path"
  "published 2.5 MiB segment|0.9|$pub25_path"
  "local ~1 MiB segment|0.9|$loc1_path"
  "local ~2.5 MiB segment|0.9|$loc25_path"
  "published playlist|0.8|/live/v1/index.m3u8"
  "local playlist|0.8|/loc1/v1/index.m3u8"
)
for c in "${cases[@]}"; do  # same bytes on both sides; both files into the page cache
  p="${c##*|}"
  curl -fsS -o "$work/n.bin" "http://127.0.0.1:$nginx_port$p" || die "nginx: GET $p failed"
  cmp -s "$work/n.bin" "$www$p" || die "nginx serves other bytes at $p"
done

# ---- measurements --------------------------------------------------------------------------
# A warm-up of WARMUP seconds (default 2, not counted) for each server on the first case: the
# first measured run used to be the streamer's, right after the set-up, and read 10–20 % low
# against the same bytes measured later (published 1 MiB vs local ~1 MiB). The order of the
# two servers also alternates from case to case, so neither always goes first.
warmup="${WARMUP:-2}"
if [ "$warmup" != 0 ]; then
  first="${cases[0]##*|}"
  for url in "http://$viewer$first" "http://127.0.0.1:$nginx_port$first"; do
    wrk -t"${WRK_THREADS:-1}" -c"${CONNECTIONS:-100}" -d"${warmup}s" "$url" >/dev/null 2>&1 || true
  done
fi
: >"$work/results"
i=0
for c in "${cases[@]}"; do
  name="${c%%|*}"; rest="${c#*|}"; bar="${rest%%|*}"; p="${rest#*|}"
  echo "measuring: $name ($p)…" >&2
  perf_pid=
  if [ -n "${PERF:-}" ] && [[ "$name" == "${PERF_CASE:-published 1 MiB}"* ]]; then
    perf record -F "${PERF_FREQ:-999}" ${PERF_ARGS:--g} -q -p "$streamer_pid" -o "$PERF" \
      -- sleep "$duration" 2>"$work/perf.err" &
    perf_pid=$!
  fi
  if [ $((i % 2)) = 1 ] && [ -z "$perf_pid" ]; then
    read -r n_rps n_mbs n_bad < <(wrk_get "http://127.0.0.1:$nginx_port$p")
    read -r s_rps s_mbs s_bad < <(wrk_get "http://$viewer$p")
  else
    read -r s_rps s_mbs s_bad < <(wrk_get "http://$viewer$p")
    if [ -n "$perf_pid" ]; then wait "$perf_pid" || true; fi
    read -r n_rps n_mbs n_bad < <(wrk_get "http://127.0.0.1:$nginx_port$p")
  fi
  i=$((i + 1))
  end_code=$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer$p")
  echo "$name|$bar|$p|$(stat -c %s "$www$p")|$s_rps|$s_mbs|$s_bad|$n_rps|$n_mbs|$n_bad|$end_code" \
    >>"$work/results"
done

printf '\nP-3 origin serving, wrk -t%s -c%s -d%ss per case and server, %s streamer HTTP threads / nginx workers, CPU shedding %s\n' \
  "${WRK_THREADS:-1}" "${CONNECTIONS:-100}" "$duration" "$threads" "${SHED:-off}"
python3 - "$work/results" <<'PY'
import sys
rows = [l.rstrip("\n").split("|") for l in open(sys.argv[1])]
print(f"{'case':<27} {'bytes':>8} {'server':<9} {'req/s':>9} {'MiB/s':>8} {'non-2xx':>7}"
      f" {'ratio req/s':>11} {'ratio MiB/s':>11} {'bar':>5}")
fails = 0
for name, bar, path, size, srps, smbs, sbad, nrps, nmbs, nbad, end in rows:
    srps, smbs, nrps, nmbs, bar = float(srps), float(smbs), float(nrps), float(nmbs), float(bar)
    r = srps / nrps if nrps else float("inf")
    b = smbs / nmbs if nmbs else float("inf")
    ok = r >= bar and b >= bar and sbad == "0" and end == "200"
    fails += not ok
    print(f"{name:<27} {int(size):>8} {'streamer':<9} {srps:>9.0f} {smbs:>8.1f} {sbad:>7}"
          f" {r:>11.2f} {b:>11.2f} {'≥' + str(bar):>5} {'PASS' if ok else 'FAIL'}")
    print(f"{'':<27} {'':>8} {'nginx':<9} {nrps:>9.0f} {nmbs:>8.1f} {nbad:>7}")
    if end != "200":
        print(f"  warning: {path} answered {end} after its run")
print(f"{len(rows) - fails} of {len(rows)} cases pass")
PY
