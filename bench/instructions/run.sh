#!/usr/bin/env bash
# Instructions per answer (P-2, P-5), counted by valgrind's callgrind: user-space instructions
# executed by the server while wrk sends it requests, divided by the requests wrk completed. A
# count, not a time: it does not move with this machine's scheduling or the other process on
# its two cores (req/s ratios here move by ±15 % from run to run), so a change to the request
# path shows its effect in one run. It leaves out the kernel's work (system calls, loopback)
# and how fast the instructions run (cache misses, branches); read it beside the req/s
# benchmarks, not instead of them.
#
# Cases, each server alone under callgrind (instrumentation switched on only for the measured
# window, after a 3 s warm-up; `wrk -t1 -c10 -dDURATION`):
#   streamer 404 + TTL  an origin streamer asked for future segments (bench/origin_404's case)
#   streamer 410        the same origin asked for segments before its published one (its 410s)
#   central 302         central's redirect of a viewer to a node (bench/redirect's case)
#   nginx 404           nginx `return 404`, one worker, no master (the reference)
# Prints Ir per answer for each and the ratio to nginx's. CALLGRIND_OUT=DIR keeps the profiles
# (callgrind_annotate FILE reads one; --inclusive=yes for the call tree). DURATION (default 5).
# Loopback only; every process started is stopped on exit. About 2 minutes.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build_real="${BUILD_DIR:-$root/build}"
duration="${DURATION:-5}"
command -v valgrind >/dev/null || { echo "valgrind is missing (tools/bootstrap installs it)" >&2; exit 1; }
# The helpers start "$build/streamer/streamer" and "$build/central/central": wrappers that run
# the real binaries under callgrind stand in for them.
wrap="$(mktemp -d)"
out="${CALLGRIND_OUT:-$wrap/out}"
mkdir -p "$out" "$wrap/streamer" "$wrap/central"
for bin in streamer central; do
  cat >"$wrap/$bin/$bin" <<SH
#!/usr/bin/env bash
echo \$\$ >"$wrap/$bin.pid"  # the exec keeps the PID: valgrind's
exec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/$bin.%p" \
  "$build_real/$bin/$bin" "\$@"
SH
  chmod +x "$wrap/$bin/$bin"
done
build="$wrap"
threads=2
source "$root/bench/lib/origin.sh"
trap 'cleanup; rm -rf "$wrap"' EXIT

# measure PID URL [LUA] → Ir per answer: warm-up, then wrk with instrumentation on, a dump.
measure() {
  local pid="$1" url="$2" script=()
  [ -n "${3:-}" ] && script=(-s "$3")
  wrk -t1 -c10 -d3s "${script[@]}" "$url" >/dev/null
  callgrind_control -i on "$pid" >/dev/null
  wrk -t1 -c10 -d"${duration}s" "${script[@]}" "$url" >"$work/wrk.txt"
  callgrind_control -i off "$pid" >/dev/null
  local before
  before=$(ls "$out" | wc -l)
  callgrind_control -d "$pid" >/dev/null
  local requests file total
  requests=$(awk '/requests in/ { print $1 }' "$work/wrk.txt")
  for _ in $(seq 1 50); do [ "$(ls "$out" | wc -l)" -gt "$before" ] && break; sleep 0.1; done
  file=$(ls -t "$out"/* | head -1)
  total=$(callgrind_annotate "$file" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
  [ -n "$requests" ] && [ "$requests" -gt 0 ] && [ -n "$total" ] || die "no count for $url"
  echo $((total / requests)) "$requests"
}
valgrind_pid() {  # valgrind_pid streamer|central|nginx
  if [ -f "$wrap/$1.pid" ]; then cat "$wrap/$1.pid"; else echo "$nginx_vg_pid"; fi
}

# ---- streamer: 404 + TTL for future segments ---------------------------------------------------
start_origin 6
producing=$(( ($(now_ms) - start) / 2000 ))
head -c 1500 /dev/urandom >"$work/small.ts"
[ "$(put "/live/v1/$((producing - 1)).ts" "$work/small.ts")" = 201 ] || die "PUT of a segment failed"
lo=$((producing + 30))
cycle_script "$work/future.lua" "$lo" $((lo + 899))
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer/live/v1/$lo.ts")" = 404 ] ||
  die "a future segment is not a 404"
read -r s_ir s_n < <(measure "$(valgrind_pid streamer)" "http://$viewer/" "$work/future.lua")
# 410: the msns before the published one never existed (L-9).
cycle_script "$work/gone.lua" 0 $((producing - 2))
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://$viewer/live/v1/0.ts")" = 410 ] ||
  die "a never-existing segment is not a 410"
read -r g_ir g_n < <(measure "$(valgrind_pid streamer)" "http://$viewer/" "$work/gone.lua")

# ---- central: 302 to the node holding the stream ------------------------------------------------
# Viewers are sent to ingest and edge nodes: one ingest node (not under callgrind) holds ch1.
"$build_real/streamer/streamer" --central="$central_grpc" \
  --cluster-token-file="$work/db/cluster-token" --node-id=ingest-1 --role=ingest \
  --hostname=127.0.0.1 --listen=127.0.0.1:0 --publish-listen=127.0.0.1:0 \
  >"$work/ingest.out" 2>"$work/ingest.log" &
pids+=($!)
ready "$work/ingest.out" http >/dev/null
put_stream ch1 '{"placement":{"streamers":["ingest-1"]}}'
code=""
for _ in $(seq 1 100); do
  code=$(curl -s -o /dev/null -w '%{http_code}' "http://$central_http/ch1/index.m3u8")
  [ "$code" = 302 ] && break
  sleep 0.1
done
[ "$code" = 302 ] || die "central does not redirect (last answer $code)"
read -r c_ir c_n < <(measure "$(valgrind_pid central)" "http://$central_http/ch1/index.m3u8")

# ---- nginx: return 404 -------------------------------------------------------------------------
nginx_port=$(free_port)
chmod a+rx "$work"
{ nginx_preamble 4096; cat <<NGINX
  log_not_found off;
  server {
    listen 127.0.0.1:$nginx_port;
    location / { return 404; }
  }
}
NGINX
} | sed -e 's/^worker_processes .*/worker_processes 1;\nmaster_process off;/' >"$work/nginx.conf"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/nginx.%p" \
  "${NGINX:-/usr/sbin/nginx}" -p "$work/" -c "$work/nginx.conf" -e "$work/nginx-error.log" \
  2>"$work/nginx-valgrind.log" &
nginx_vg_pid=$!
pids+=($nginx_vg_pid)
for _ in $(seq 1 100); do
  curl -s -o /dev/null "http://127.0.0.1:$nginx_port/x" && break
  sleep 0.1
done
read -r n_ir n_n < <(measure "$(valgrind_pid nginx)" "http://127.0.0.1:$nginx_port/" "$work/future.lua")

printf '\nInstructions per answer (callgrind, user space only; wrk -t1 -c10 -d%ss)\n' "$duration"
printf '%-22s %10s %10s %8s\n' case 'Ir/answer' answers 'x nginx'
awk -v s="$s_ir" -v sn="$s_n" -v g="$g_ir" -v gn="$g_n" -v c="$c_ir" -v cn="$c_n" -v n="$n_ir" \
  -v nn="$n_n" 'BEGIN {
  printf "%-22s %10d %10d %8.2f\n", "streamer 404 + TTL", s, sn, s / n
  printf "%-22s %10d %10d %8.2f\n", "streamer 410", g, gn, g / n
  printf "%-22s %10d %10d %8.2f\n", "central 302", c, cn, c / n
  printf "%-22s %10d %10d %8.2f\n", "nginx 404 (reference)", n, nn, 1
}'
[ -n "${CALLGRIND_OUT:-}" ] && echo "profiles kept in $out" >&2
exit 0
