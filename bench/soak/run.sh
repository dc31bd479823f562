#!/usr/bin/env bash
# R-8: the soak. One central and three streamers on loopback run for SOAK_S seconds (default
# 3600) under a steady load with random source cuts; every 10 s the RSS and open file
# descriptors of each Meshwork process go into a CSV. At the end it prints, per process, the
# RSS and fd count at the end of the warm-up (WARMUP_S; default the archive's depth DVR_DEPTH_S,
# at most a quarter of the run: from then on the archive holds its full depth and retention
# runs, so every bounded structure has reached its steady size) and
# at the end, the growth and the maximum (bars: RSS growth ≤ 5 % after warm-up, no fd growth),
# and every error that the source cuts do not explain. Exits 1 if central or a streamer died
# (or the set-up failed), 130 when interrupted, 0 otherwise; the bars are printed as verdicts,
# not exit codes.
#
# The cluster (all in zone "local", 127.0.0.0/8):
#   ingest-1  packages stream s1 (ffmpeg test source pushed over HTTP), records it (dvr,
#             both protocols, depth DVR_DEPTH_S so retention runs during a long soak);
#   ingest-2  packages stream s2 (a second ffmpeg test source);
#   edge-1    holds no stream; its viewers of s1 make it relay s1 from ingest-1 (S-19), and
#             archive reads through it go upstream (ArchiveProxy).
# Load:
#   - VIEWERS (default 200) simulated LL-HLS viewers (tests/tools/viewer_sim): 30 % read s1 on
#     ingest-1, 35 % s1 through edge-1, 35 % s2 on ingest-2. viewer_sim reports only when it
#     ends and a viewer gives up at its first error, so each group runs in rounds of ROUND_S
#     (default 20) seconds, one result per round;
#   - every ARCHIVE_EVERY_S (default 15) s, archive reads of s1 (HLS-TS and CMAF VOD
#     playlists, segments, a Range read, the DASH MPD) on ingest-1 and through edge-1, plus
#     central's redirects of both streams (soak.py archive);
#   - source cuts: every 30–90 s (random) one ffmpeg source, picked at random, is killed
#     (SIGKILL or SIGTERM, at random) for 5–20 s and then started again.
# An error is "explained by a cut" when the viewer round or archive read overlaps a cut of its
# stream, from the kill until CUT_GRACE_S (default 15) s after the restart; such errors are
# counted apart. Log lines of level error, sanitizer reports and crash messages in any
# process's log are listed (those inside a cut window marked so).
#
#   bench/soak/run.sh                      1 h
#   SOAK_S=600 bench/soak/run.sh           10 min
#
# Caches that fill by design and show as growth until they reach their bounds: a streamer
# keeps archived files open (counted apart in the fd figures; ARCHIVE_OPEN_FILES, default 64
# here — the streamer's own default is 256), and the edge keeps what it fetched for archive
# requests in memory (EDGE_ARCHIVE_CACHE_MIB, default 4 here, 256 in the streamer; its fetched
# bytes, from /metrics, are printed beside its RSS growth). The soak's bounds are smaller than
# the defaults so that they are reached within the warm-up: what R-8 looks for is growth that
# has no bound.
# Settings: SOAK_S, WARMUP_S, ARCHIVE_OPEN_FILES, EDGE_ARCHIVE_CACHE_MIB, VIEWERS, ROUND_S, ARCHIVE_EVERY_S, CUT_GRACE_S, DVR_DEPTH_S (600),
# SOAK_SEED (random seed of the cuts; printed), RESULTS_DIR (default
# /tmp/meshwork-soak-<timestamp>: CSV of samples, every log, cuts, viewer rounds, the summary),
# SHED=on (keep the streamers' CPU shedding; by default its DVR threshold is out of reach, as
# archive reads on a shared 2-core host would otherwise be shed with 503s), BUILD_DIR
# (default <repo>/build; built with the plain RelWithDebInfo configuration if a binary is
# missing, SKIP_BUILD=1 to refuse instead). Not run in CI. Loopback only, ports chosen by the
# kernel; everything started is stopped on exit, Ctrl-C included (then the summary covers
# the run so far).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/bench/soak"
build="${BUILD_DIR:-$root/build}"
soak_s="${SOAK_S:-3600}"
viewers="${VIEWERS:-200}"
round_s="${ROUND_S:-20}"
archive_every="${ARCHIVE_EVERY_S:-15}"
cut_grace="${CUT_GRACE_S:-15}"
dvr_depth="${DVR_DEPTH_S:-600}"
seed="${SOAK_SEED:-$((($(date +%s) ^ $$) & 32767))}"
results="${RESULTS_DIR:-/tmp/meshwork-soak-$(date +%Y%m%d-%H%M%S)}"
sim="${VIEWER_SIM:-$build/tests/viewer_sim}"
RANDOM=$seed

die() { echo "soak: $*" >&2; exit 1; }
[ "$soak_s" -ge 60 ] 2>/dev/null || die "SOAK_S must be a number of seconds ≥ 60"
[ "$viewers" -ge 3 ] 2>/dev/null || die "VIEWERS must be ≥ 3"
command -v ffmpeg >/dev/null || die "ffmpeg is missing (tools/bootstrap installs it)"
command -v curl >/dev/null || die "curl is missing"

if [ ! -x "$build/central/central" ] || [ ! -x "$build/streamer/streamer" ] || [ ! -x "$sim" ]; then
  [ "${SKIP_BUILD:-0}" != 1 ] || die "missing binaries in $build (SKIP_BUILD=1)"
  echo "soak: building central, streamer and viewer_sim in $build"
  export CCACHE_DIR="${CCACHE_DIR:-$HOME/.ccache}" CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" \
    CCACHE_NOHASHDIR=1
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  ninja -C "$build" -j"${JOBS:-2}" central streamer viewer_sim
fi

[ ! -e "$results" ] || [ -z "$(ls -A "$results")" ] || die "$results is not empty"
mkdir -p "$results"
results="$(cd "$results" && pwd)"
work="$results/work"  # central's data dir, the archive, the API token
mkdir -p "$work"
: >"$results/events.tsv"     # epoch  kind  detail — things that went wrong outside the nodes
: >"$results/cuts.tsv"       # stream  signal  start_epoch  end_epoch
: >"$results/viewers.tsv"    # group  stream  start_epoch  end_epoch  rc  RESULT-json
event() { printf '%s\t%s\t%s\n' "$(date +%s.%N)" "$1" "$2" >>"$results/events.tsv"; }

# --- process bookkeeping and clean-up --------------------------------------------------------
node_pids=()     # central and streamers, in start order
node_names=()
loop_pids=()     # viewer rounds, archive reader, sampler
declare -A ff_pid=()
interrupted=0
cleanup() {  # the load first, then the streamers, then central (so they leave it cleanly)
  trap - EXIT INT TERM
  local p i
  for p in "${loop_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${ff_pid[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${node_pids[@]:1}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${node_pids[@]:1}"; do
    for i in $(seq 1 50); do alive "$p" || break; sleep 0.1; done
  done
  [ "${#node_pids[@]}" = 0 ] || kill -TERM "${node_pids[0]}" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'interrupted=1' INT TERM

alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# shellcheck source=../lib/ready.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/ready.sh"

# --- central and three streamers -------------------------------------------------------------
(umask 077 && head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n' >"$work/api-token" &&
  echo >>"$work/api-token")
auth="Authorization: Bearer $(head -n1 "$work/api-token")"
publish_token=$(head -c 24 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')

"$build/central/central" --data-dir="$work/central-db" --http-listen=127.0.0.1:0 \
  --grpc-listen=127.0.0.1:0 --api-token-file="$work/api-token" \
  >"$results/central.out" 2>"$results/central.log" &
node_pids+=($!); node_names+=(central)
central_http=$(ready "$results/central.out" http)
central_grpc=$(ready "$results/central.out" grpc)
api="http://$central_http/central/api-v4"

shed_flags=()
[ "${SHED:-off}" = on ] || shed_flags=(--shed-dvr-cpu=101)
declare -A node_http=() node_publish=()
for entry in ingest-1:ingest ingest-2:ingest edge-1:edge; do
  id="${entry%%:*}"
  "$build/streamer/streamer" --central="$central_grpc" \
    --cluster-token-file="$work/central-db/cluster-token" --node-id="$id" --role="${entry##*:}" \
    --hostname=127.0.0.1 --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 \
    --archive-open-files="${ARCHIVE_OPEN_FILES:-64}" \
    --edge-archive-cache-bytes=$((${EDGE_ARCHIVE_CACHE_MIB:-4} << 20)) \
    "${shed_flags[@]}" >"$results/$id.out" 2>"$results/$id.log" &
  node_pids+=($!); node_names+=("$id")
  node_http[$id]=$(ready "$results/$id.out" http)
  node_publish[$id]=$(ready "$results/$id.out" publish)
done

call() {  # call METHOD PATH JSON — the admin API, retried while nodes come online (≤ 10 s)
  local i
  for i in $(seq 1 50); do
    curl -fsS -X "$1" "$api/$2" -H "$auth" -H 'Content-Type: application/json' -d "$3" \
      >/dev/null 2>>"$results/api.err" && return 0
    sleep 0.2
  done
  die "$1 $2 failed: $(tail -n2 "$results/api.err")"
}
call PUT zones/local '{"routes": ["127.0.0.0/8", "::1/128"]}'
for id in ingest-1 ingest-2 edge-1; do call PATCH "streamers/$id" '{"zone": "local"}'; done
call PUT streams/s1 '{"placement": {"streamers": ["ingest-1"]}, "inputs": ["publish://"],
  "publish_tokens": ["'"$publish_token"'"],
  "dvr": {"root": "'"$work/dvr"'", "depth_s": '"$dvr_depth"', "protocols": ["ts", "fmp4"]}}'
call PUT streams/s2 '{"placement": {"streamers": ["ingest-2"]}, "inputs": ["publish://"],
  "publish_tokens": ["'"$publish_token"'"]}'

# --- sources ---------------------------------------------------------------------------------
declare -A ingest_of=([s1]=ingest-1 [s2]=ingest-2) tone=([s1]=440 [s2]=660)
start_source() {  # start_source STREAM — a live 320x180 test source pushed to its ingest node
  local s="$1"
  ffmpeg -nostdin -hide_banner -loglevel error -re \
    -f lavfi -i "testsrc2=size=320x180:rate=25" \
    -f lavfi -i "sine=frequency=${tone[$s]}:sample_rate=48000" \
    -c:v libx264 -preset ultrafast -tune zerolatency -g 50 -keyint_min 50 -sc_threshold 0 \
    -pix_fmt yuv420p -b:v 250k -c:a aac -b:a 64k \
    -headers "Authorization: Bearer $publish_token"$'\r\n' \
    -f mpegts -method PUT "http://${node_publish[${ingest_of[$s]}]}/$s/publish" \
    >>"$results/ffmpeg-$s.log" 2>&1 &
  ff_pid[$s]=$!
}
stop_source() {  # stop_source STREAM SIGNAL — the cut; SIGKILL if SIGTERM takes over 3 s
  local p="${ff_pid[$1]}"
  kill -"$2" "$p" 2>/dev/null || true
  for _ in $(seq 1 30); do alive "$p" || break; sleep 0.1; done
  kill -KILL "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
}
# The stream objects reach the nodes over the control channel: push once they answer 401 to a
# publish without the token (the stream exists there), or after 10 s at most.
for s in s1 s2; do
  pub="${node_publish[${ingest_of[$s]}]}"
  for _ in $(seq 1 50); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary '' "http://$pub/$s/publish")
    [ "$code" = 401 ] && break
    sleep 0.2
  done
  start_source "$s"
done
wait_playlist() {  # wait_playlist HOST:PORT STREAM SECONDS
  local i
  for i in $(seq 1 $(($3 * 5))); do
    curl -fsS -o /dev/null --max-time 10 "http://$1/$2/v1/index.ll.m3u8" 2>/dev/null && return 0
    sleep 0.2
  done
  return 1
}
wait_playlist "${node_http[ingest-1]}" s1 20 || die "s1 did not start on ingest-1; see $results"
wait_playlist "${node_http[ingest-2]}" s2 20 || die "s2 did not start on ingest-2; see $results"
# The first request to the edge starts its relay and waits for the first relayed segment.
wait_playlist "${node_http[edge-1]}" s1 30 || die "edge-1 does not relay s1; see $results/edge-1.log"
record_start=$(date +%s)

# --- the soak --------------------------------------------------------------------------------
started=$(date +%s.%N)
t0=${started%.*}
end_at=$((t0 + soak_s))
load_end=$((end_at + 3))  # the viewers outlive the last sample by a little
warmup="${WARMUP_S:-$((dvr_depth < soak_s / 4 ? dvr_depth : soak_s / 4))}"
n1=$((viewers * 30 / 100)); n2=$((viewers * 35 / 100)); n3=$((viewers - n1 - n2))
cat >"$results/run.json" <<EOF
{"t0": $t0, "started": $started, "end_at": $end_at, "warmup_s": $warmup, "soak_s": $soak_s, "seed": $seed,
 "viewers": $viewers, "round_s": $round_s, "cut_grace_s": $cut_grace,
 "central_http": "$central_http", "nodes": {"ingest-1": "${node_http[ingest-1]}",
 "ingest-2": "${node_http[ingest-2]}", "edge-1": "${node_http[edge-1]}"},
 "groups": {"s1@ingest-1": $n1, "s1@edge-1": $n2, "s2@ingest-2": $n3}}
EOF
echo "R-8 soak: ${soak_s} s (warm-up ${warmup} s), $viewers viewers (s1@ingest-1 $n1, s1@edge-1 $n2," \
  "s2@ingest-2 $n3), seed $seed"
echo "  results: $results   central: http://$central_http"

sample_args=()
for i in "${!node_pids[@]}"; do sample_args+=(--pid "${node_names[$i]}=${node_pids[$i]}"); done
python3 "$here/soak.py" sample --out "$results/samples.csv" --start "$t0" --until "$end_at" \
  --interval 10 --dvr-root "$work/dvr" --metrics "edge-1=${node_http[edge-1]}" \
  "${sample_args[@]}" 2>>"$results/sampler.err" &
loop_pids+=($!)

viewer_rounds() {  # viewer_rounds GROUP HOST:PORT STREAM COUNT — viewer_sim, round after round
  local group="$1" target="$2" stream="$3" n="$4" child="" left secs start rc result
  trap '[ -z "$child" ] || kill -TERM "$child" 2>/dev/null; exit 0' TERM
  while :; do
    left=$((load_end - $(date +%s)))
    [ "$left" -ge 3 ] || break
    secs=$round_s
    [ $((left - round_s)) -ge $((round_s / 2)) ] || secs=$left
    start=$(date +%s.%N)
    "$sim" --target "$target" --path "/$stream/v1/index.ll.m3u8" --viewers "$n" \
      --seconds "$secs" >"$results/sim-$group.txt" 2>&1 &
    child=$!
    rc=0
    wait "$child" || rc=$?
    child=""
    result=$(grep -m1 '^RESULT ' "$results/sim-$group.txt" | sed 's/^RESULT //' || true)
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$group" "$stream" "$start" "$(date +%s.%N)" "$rc" \
      "${result:-null}" >>"$results/viewers.tsv"
    if [ "$rc" != 0 ] || [ -z "$result" ]; then
      event viewer_sim "$group exit $rc: $(tail -n2 "$results/sim-$group.txt" | tr '\n\t' '  ')"
      sleep 1
    elif [ $(($(date +%s) - ${start%.*})) -lt 2 ]; then
      sleep 1  # every viewer gave up at once (a cut): do not spin
    fi
  done
}
viewer_rounds s1@ingest-1 "${node_http[ingest-1]}" s1 "$n1" &
loop_pids+=($!)
viewer_rounds s1@edge-1 "${node_http[edge-1]}" s1 "$n2" &
loop_pids+=($!)
viewer_rounds s2@ingest-2 "${node_http[ingest-2]}" s2 "$n3" &
loop_pids+=($!)

python3 "$here/soak.py" archive --out "$results/archive.tsv" --until "$end_at" \
  --every "$archive_every" --stream s1 --since "$record_start" \
  --node "ingest-1=${node_http[ingest-1]}" --node "edge-1=${node_http[edge-1]}" \
  --central "$central_http" --redirect s1 --redirect s2 2>>"$results/archive.err" &
loop_pids+=($!)

# The cuts, and a watch on every process, about once a second until the end (cut times in ms).
streams=(s1 s2) signals=(KILL TERM)
next_cut=$(((t0 + 30 + RANDOM % 61) * 1000))
cut_stream="" cut_end=0 cut_start="" cut_signal=""
died=0
while [ "$interrupted" = 0 ]; do
  now_ms=$(date +%s%3N)
  now=$((now_ms / 1000))
  for i in "${!node_pids[@]}"; do
    if ! alive "${node_pids[$i]}"; then
      event died "${node_names[$i]} (pid ${node_pids[$i]})"
      echo "soak: ${node_names[$i]} died at +$((now - t0)) s; stopping" >&2
      died=1
    fi
  done
  [ "$died" = 0 ] || break
  for s in s1 s2; do  # a source that stopped by itself (not cut) is an error; start it again
    if [ "$s" != "$cut_stream" ] && ! alive "${ff_pid[$s]}"; then
      wait "${ff_pid[$s]}" 2>/dev/null && rc=0 || rc=$?
      event ffmpeg_exit "$s exit $rc: $(tail -n2 "$results/ffmpeg-$s.log" | tr '\n\t' '  ')"
      start_source "$s"
    fi
  done
  if [ -n "$cut_stream" ] && [ "$now_ms" -ge "$cut_end" ]; then
    start_source "$cut_stream"
    printf '%s\t%s\t%s\t%s\n' "$cut_stream" "$cut_signal" "$cut_start" "$(date +%s.%N)" \
      >>"$results/cuts.tsv"
    cut_stream=""
  fi
  [ "$now" -lt "$end_at" ] || break
  # A cut starts only if it and its recovery fit before the end.
  if [ -z "$cut_stream" ] && [ "$now_ms" -ge "$next_cut" ] &&
    [ $((now + 20 + cut_grace)) -lt "$end_at" ]; then
    cut_stream=${streams[RANDOM % 2]}
    cut_signal=${signals[RANDOM % 2]}
    cut_start=$(date +%s.%N)
    cut_end=$((now_ms + 5000 + RANDOM % 15001))
    stop_source "$cut_stream" "$cut_signal" 2>/dev/null  # (no "Killed" job notice)
    next_cut=$((now_ms + (30 + RANDOM % 61) * 1000))
  fi
  # Sleep a second, or until the cut's end if that comes first.
  nap=1000
  [ -z "$cut_stream" ] || [ $((cut_end - $(date +%s%3N))) -ge "$nap" ] ||
    nap=$((cut_end - $(date +%s%3N)))
  [ "$nap" -le 0 ] || sleep "$((nap / 1000)).$(printf '%03d' $((nap % 1000)))"
done
if [ -n "$cut_stream" ]; then  # interrupted or stopped during a cut: close its record
  printf '%s\t%s\t%s\t%s\n' "$cut_stream" "$cut_signal" "$cut_start" "$(date +%s.%N)" \
    >>"$results/cuts.tsv"
fi

# The normal end: the sampler has taken its last sample at end_at; the viewer rounds end on
# their own just after it (their last results are kept). Interrupted or a death: stop now.
if [ "$interrupted" = 0 ] && [ "$died" = 0 ]; then
  for p in "${loop_pids[@]}"; do
    for _ in $(seq 1 300); do alive "$p" || break; [ "$interrupted" = 0 ] || break; sleep 0.1; done
  done
else
  python3 "$here/soak.py" sample --out "$results/samples.csv" --start "$t0" --once \
    --dvr-root "$work/dvr" \
    "${sample_args[@]}" 2>>"$results/sampler.err" || true
fi
for i in "${!node_pids[@]}"; do  # (a Ctrl-C reaches the nodes too: no verdict then)
  if [ "$died" = 0 ] && [ "$interrupted" = 0 ] && ! alive "${node_pids[$i]}"; then
    event died "${node_names[$i]} (pid ${node_pids[$i]})"; died=1
  fi
done
[ "$interrupted" = 0 ] || event interrupted "after $(($(date +%s) - t0)) s"
event teardown ""
cleanup
trap 'interrupted=1' INT TERM
trap - EXIT
echo
rc=0
python3 "$here/soak.py" summary --results "$results" | tee "$results/summary.txt" || rc=$?
[ "$died" = 0 ] || rc=1
[ "$rc" != 0 ] || [ "$interrupted" = 0 ] || rc=130
exit "$rc"
