#!/usr/bin/env bash
# P-7 for RTMP input beside TS input: one source, then bench/packaging_cpu/run.sh twice on it
# (INPUT=ts: MPEG-TS over HTTP push; INPUT=rtmp: FLV over RTMP), each with its own ffmpeg
# reference in the same run; the two summaries are printed together at the end.
# Environment: as run.sh (DURATION, BUILD_DIR, THREADS). About 5.5 min.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
duration="${DURATION:-60}"
echo "encoding the ${duration} s source once…" >&2
ffmpeg -hide_banner -loglevel error -nostdin -y -f lavfi -i "testsrc2=size=1280x720:rate=25" \
  -f lavfi -i "sine=frequency=440:sample_rate=48000" -t "$duration" \
  -c:v libx264 -preset ultrafast -pix_fmt yuv420p -g 25 -keyint_min 25 -sc_threshold 0 \
  -b:v 9800k -minrate 9800k -maxrate 9800k -bufsize 4900k -x264-params nal-hrd=cbr \
  -c:a aac -b:a 128k -ac 2 -f mpegts "$work/source.ts"
for input in ts rtmp; do
  SOURCE="$work/source.ts" INPUT="$input" bash "$here/run.sh" | tee "$work/$input.txt"
done
echo
echo "== P-7 side by side (streamer CPU-s / ffmpeg CPU-s, same source)"
for input in ts rtmp; do
  printf "%-5s %s | %s\n" "$input" "$(sed -n 's/^streamer (HLS-TS + LL-HLS + DASH): *\([0-9.]*\).*/\1 CPU-s/p' "$work/$input.txt")" \
    "$(grep '^ratio' "$work/$input.txt" | paste -sd'|')"
done
