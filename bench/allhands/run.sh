#!/usr/bin/env bash
# P-16 at full size: the all-hands of seed 002 — an ingest node and an origin in zone `dc`,
# two office zones with two edges each, 500 simulated viewers per office (LL-HLS, HLS-TS and
# DASH mixed, tests/tools/viewer_sim --mix) from a cold start, hls.js behind one edge — with
# every byte entering each office counted against the reference: one copy of the stream, the
# origin's own complete segments over the same measured time, in the same run.
#
# It runs the integration test "P-16 S-25 S-26 all-hands…" from an uninstrumented build,
# where that test takes 500 viewers per office (the ASan build under tools/test takes 100).
# Prints the test's two result lines: bytes published, sent and taken, hls.js's latency, and
# the bytes entering each office per copy of the stream (bar: ≤ 1.05), and fails when any
# viewer got an error. About 1 minute after the build.
#
#   bench/allhands/run.sh            (BUILD_DIR, default build/; JOBS for the build, 2)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
ninja -C "$build" -j"${JOBS:-2}" central streamer viewer_sim integration_tests >/dev/null
cd "$build/tests"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
status=0
./integration_tests "P-16 S-25 S-26 all-hands*" >"$out" 2>&1 || status=$?
grep -E '^P-16 (all-hands|S-25)' "$out" || true
if [ "$status" -ne 0 ]; then
  grep -E -A12 'FAILED' "$out" | head -60
  echo "allhands: the run failed (exit $status)"
fi
grep -E '^(All tests passed|test cases:)' "$out" || true
exit "$status"
