#!/usr/bin/env bash
# run_fuzz.sh TARGET SECONDS SEED_CORPUS SCRATCH_CORPUS — a time-boxed libFuzzer run that
# fails on any crash, leak or timeout and prints the execution count.
set -euo pipefail
target="$1"; seconds="$2"; seeds="$3"; scratch="$4"
mkdir -p "$scratch"
log="$scratch.log"
if ! "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$scratch-" "$scratch" "$seeds" >"$log" 2>&1; then
  tail -n 60 "$log"
  echo "fuzz target $(basename "$target") FAILED"
  exit 1
fi
runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo '?')
echo "fuzz target $(basename "$target"): ${runs} executions in ${seconds}s, no crash"
