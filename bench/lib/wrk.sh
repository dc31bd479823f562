# Shared by the request-rate benchmarks (redirect, steering): sourced, not run.
#
# wrk_measure URL CONNECTIONS DURATION OUT → prints "req/s p99_ms" (wrk -t1, keep-alive; the
# wrk report is left in OUT). Answers that are neither 2xx nor 3xx are reported on stderr.
wrk_measure() {
  wrk -t1 -c"$2" -d"$3s" --latency "$1" > "$4"
  local rps p99
  rps=$(awk '/Requests\/sec/ {print $2}' "$4")
  p99=$(awk '$1 == "99%" {v=$2; if (v ~ /us$/) {sub(/us/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms/,"",v)} else if (v ~ /s$/) {sub(/s/,"",v); v=v*1000}; print v}' "$4")
  if grep -q "Non-2xx or 3xx" "$4"; then echo "$1: $(grep "Non-2xx" "$4")" >&2; fi
  echo "$rps $p99"
}
