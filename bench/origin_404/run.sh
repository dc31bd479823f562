#!/usr/bin/env bash
# P-5: a 404/410 storm on a live origin against nginx answering a static 404, side by side.
#
# Set-up: central and one streamer (--role=origin, --http-threads=THREADS, one publish
# thread); stream `live` placed on it (2 s segments, live window 6, pipeline `a`,
# availability start 60 s ago); init.mp4 and one small segment (msn producing−1) published,
# so the rendition's first msn is producing−1.
#
# Phases, each wrk -t1 -c100 -dDURATION (default 10 s), HTTP/1.1 keep-alive, a Lua script
# cycling through the msns:
#   future  /live/v1/{F … F+997}.ts with F = producing+3 plus a margin for the time the phase
#           takes, so every one stays beyond the next due segment → 404 with a TTL (L-8);
#   gone    /live/v1/{0 … first−1}.ts, before the first published msn → 410 (L-9);
#   nginx   the same future paths on nginx with `location / { return 404; }`.
# ROUNDS (default 3) rounds of the three phases, the order reversed from one round to the
# next (this machine's speed drifts by ±15 % between two consecutive runs of the same server,
# so one set of phases is a poor sample of the ratios); each round's rows are printed, the
# ratios are the medians over the rounds. The answers are spot-checked with curl before and
# after. Bar: each ≥ 0.8 × nginx's req/s.
# Each row also gives the server's CPU per answer (user + system from /proc) and its system
# calls per answer (`perf stat -e raw_syscalls:sys_enter` over the run; "-" without perf).
# meshwork_origin_index_lookups_total is read from the streamer's /metrics before and after
# its two phases: the difference must be 0 (the answers come from metadata alone); one GET of
# the published segment afterwards checks that the counter does count.
#
# SHED (default off): CPU shedding (L-16) samples the whole host's CPU, which includes wrk's
# own core here, so by default its thresholds are set out of reach (101 %) to measure the
# 404/410 path rather than 503s; SHED=on keeps the node's defaults.
# Loopback only; every process it starts is stopped on exit. Uses the binaries in BUILD_DIR
# (default <repo>/build) and /usr/sbin/nginx, wrk from PATH.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
duration="${DURATION:-10}"
rounds="${ROUNDS:-3}"
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "ROUNDS must be a positive integer" >&2; exit 2; }
nginx_bin="${NGINX:-/usr/sbin/nginx}"
source "$root/bench/lib/origin.sh"
start_origin 6

# ---- one published segment; the msn ranges -------------------------------------------------
producing=$(( ($(now_ms) - start) / 2000 ))
first=$((producing - 1))
head -c 1500 /dev/urandom >"$work/small.ts"
code=$(put "/live/v1/$first.ts" "$work/small.ts")
[ "$code" = 201 ] || die "PUT /live/v1/$first.ts answered $code"
# `producing` advances by one every 2 s: start far enough ahead that the lowest future msn is
# still beyond the next due one at the end of every round (and of the spot check after them).
future_lo=$((producing + 3 + (3 * rounds * (duration + 3) + 9) / 2))  # 3 s a phase to start
future_hi=$((future_lo + 997))
gone_lo=0
gone_hi=$((first - 1))

cycle_script "$work/future.lua" "$future_lo" "$future_hi"
cycle_script "$work/gone.lua" "$gone_lo" "$gone_hi"

status_of() { curl -s -o /dev/null -w '%{http_code}' "$1"; }
spot_check() {  # spot_check WHEN — the first and last msn of each range answer 404 / 410
  local m c
  for m in "$future_lo" "$future_hi"; do
    c=$(status_of "http://$viewer/live/v1/$m.ts")
    [ "$c" = 404 ] || die "$1: GET /live/v1/$m.ts (future) answered $c, not 404"
  done
  for m in "$gone_lo" "$gone_hi"; do
    c=$(status_of "http://$viewer/live/v1/$m.ts")
    [ "$c" = 410 ] || die "$1: GET /live/v1/$m.ts (never existed) answered $c, not 410"
  done
}
spot_check before
curl -s -D - -o /dev/null "http://$viewer/live/v1/$future_lo.ts" |
  grep -qi '^X-Cache-TTL-Ms:' || die "a future object's 404 carries no X-Cache-TTL-Ms"

# ---- nginx: a static 404 -------------------------------------------------------------------
nginx_port=$(free_port)
chmod a+rx "$work"  # as root, nginx's workers run as nobody
cat >"$work/nginx.conf" <<NGINX
worker_processes $threads;
daemon off;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 4096; }
http {
  access_log off;
  log_not_found off;
  client_body_temp_path $work/client_body;
  proxy_temp_path $work/proxy;
  fastcgi_temp_path $work/fastcgi;
  uwsgi_temp_path $work/uwsgi;
  scgi_temp_path $work/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$nginx_port;
    location / { return 404; }
  }
}
NGINX
"$nginx_bin" -p "$work/" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
nginx_pid=$!
pids+=($nginx_pid)
for _ in $(seq 1 50); do
  [ "$(status_of "http://127.0.0.1:$nginx_port/live/v1/$future_lo.ts")" = 404 ] && break
  sleep 0.1
done

# ---- measurements --------------------------------------------------------------------------
lookups() {  # the streamer's meshwork_origin_index_lookups_total (summed over label sets)
  curl -fsS "http://$viewer/metrics" |
    awk '$1 ~ /^meshwork_origin_index_lookups_total(\{|$)/ { s += $2; seen = 1 }
         END { if (seen) printf "%.0f\n", s; else print "missing" }'
}
# CPU ticks (user + system) of PIDs together, from /proc.
cpu_ticks() { for p in "$@"; do awk '{ print $14 + $15 }' "/proc/$p/stat"; done | awk '{ s += $1 } END { print s + 0 }'; }
# measure URL SCRIPT PIDS → "req/s non-2xx/3xx-answers socket-errors µs-CPU-per-answer": PIDS
# (quoted, space-separated) are the server's processes whose CPU is divided by the answers.
# PERF=FILE records the first of them during the first round's future phase (PERF_FREQ,
# default 999 Hz; PERF_ARGS, default -g, e.g. "--call-graph dwarf,16384").
measure() {
  local t0 t1 stat_pid=
  t0=$(cpu_ticks $3)
  # System calls of the server during the run (perf's tracepoint count; "-" without perf or
  # its permission), divided by the answers below.
  : >"$work/syscalls.txt"
  if command -v perf >/dev/null; then
    perf stat -x, -e raw_syscalls:sys_enter -p "$(echo $3 | tr ' ' ',')" -o "$work/syscalls.txt" \
      -- sleep "$duration" >/dev/null 2>&1 &
    stat_pid=$!
  fi
  if [ -n "${PERF:-}" ] && [ "$2" = "$work/future.lua" ] && [ "$1" = "http://$viewer/" ] &&
    [ ! -e "$work/perf.done" ]; then
    touch "$work/perf.done"
    perf record -F "${PERF_FREQ:-999}" ${PERF_ARGS:--g} -q -p "${3%% *}" -o "$PERF" -- sleep "$duration" \
      2>"$work/perf.err" &
  fi
  wrk -t1 -c100 -d"${duration}s" -s "$2" "$1" >"$work/wrk.txt" 2>&1 || true
  t1=$(cpu_ticks $3)
  if [ -n "$stat_pid" ]; then wait "$stat_pid" || true; fi
  local calls
  calls=$(awk -F, '/raw_syscalls:sys_enter/ && $1 ~ /^[0-9]+$/ { print $1 }' "$work/syscalls.txt")
  awk -v ticks=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v calls="${calls:--}" '
    /requests in/ { total = $1 }
    /Requests\/sec/ { rps = $2 }
    /Non-2xx/ { non = $NF }
    /Socket errors/ { gsub(/,/, ""); errs = $4 + $6 + $8 + $10 }
    END { printf "%s %d %d %d %.2f %s\n", rps, non, total, errs,
                 total ? ticks / hz * 1e6 / total : 0,
                 (calls == "-" || !total) ? "-" : sprintf("%.2f", calls / total) }' "$work/wrk.txt"
}
before=$(lookups)
nginx_pids="$nginx_pid $(pgrep -P "$nginx_pid" | tr '\n' ' ')"
rows=()
for round in $(seq 1 "$rounds"); do
  if [ $((round % 2)) = 1 ]; then order=(future gone nginx); else order=(nginx gone future); fi
  for phase in "${order[@]}"; do
    case $phase in
      future) read -r f_rps f_non f_total f_err f_cpu f_sys < <(measure "http://$viewer/" "$work/future.lua" "$streamer_pid") ;;
      gone) read -r g_rps g_non g_total g_err g_cpu g_sys < <(measure "http://$viewer/" "$work/gone.lua" "$streamer_pid") ;;
      nginx) read -r n_rps n_non n_total n_err n_cpu n_sys < <(measure "http://127.0.0.1:$nginx_port/" "$work/future.lua" "$nginx_pids") ;;
    esac
  done
  rows+=("$round $f_rps $f_non $f_total $f_err $f_cpu $f_sys $g_rps $g_non $g_total $g_err $g_cpu $g_sys $n_rps $n_non $n_total $n_err $n_cpu $n_sys")
done
after=$(lookups)
spot_check after
# The counter is live: one read of the published segment is a lookup.
[ "$(status_of "http://$viewer/live/v1/$first.ts")" = 200 ] || die "the published segment is gone"
probe=$(lookups)

printf '\nP-5 404/410 storm, wrk -t1 -c100 -d%ss, %s threads / workers each, CPU shedding %s, %s rounds\n' \
  "$duration" "$threads" "${SHED:-off}" "$rounds"
printf 'future msns %s…%s (404 + TTL), never-existing msns %s…%s (410)\n' \
  "$future_lo" "$future_hi" "$gone_lo" "$gone_hi"
printf '%s\n' "${rows[@]}" >"$work/rows.txt"
python3 - "$work/rows.txt" "$before" "$after" "$probe" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
before, after, probe = sys.argv[2:5]
names = ["streamer 404 future", "streamer 410 gone", "nginx static 404"]
print(f"{'round':<6} {'answers':<20} {'req/s':>10} {'requests':>10} {'non-2xx':>10} {'sock.err':>8} "
      f"{'µs CPU/answer':>14} {'syscalls/answer':>15}")
complete = True
for row in rows:
    for i, name in enumerate(names):
        rps, non, total, err, cpu, calls = row[1 + 6 * i: 7 + 6 * i]
        complete = complete and non == total
        print(f"{row[0]:<6} {name:<20} {float(rps):>10.0f} {total:>10} {non:>10} {err:>8} "
              f"{float(cpu):>14.2f} {calls:>15}")
for i, name in enumerate(names[:2]):
    ratios = [float(r[1 + 6 * i]) / float(r[13]) for r in rows]
    m = statistics.median(ratios)
    ok = m >= 0.8 and complete
    print(f"{name}: streamer/nginx req/s {m:.2f} (median of rounds "
          f"{', '.join(f'{x:.2f}' for x in ratios)}; bar ≥ 0.80) {'PASS' if ok else 'FAIL'}")
if "missing" in (before, after, probe):
    print("index lookups: meshwork_origin_index_lookups_total missing from /metrics FAIL")
else:
    d = int(after) - int(before)
    print(f"index lookups during the storm: {before} → {after}, difference {d} (bar 0) "
          f"{'PASS' if d == 0 else 'FAIL'}")
    if int(probe) <= int(after):
        print("warning: a GET of the published segment did not move the lookup counter")
PY
